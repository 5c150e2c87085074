// o2ctl's commands, internal to o2ctl_core: what cli.cc's table and the
// files of the commands share.  cli.cc parses the command line, finds the
// command in its table (kCommands: the order of `o2ctl --help`) and calls
// its run function with the options and the positional arguments; each
// object's file (ping.cc, net.cc, peer.cc, route.cc, stats.cc, fault.cc,
// selftest_cmd.cc, version.cc, config_cmd.cc) defines its commands: the row of the table
// (usage, summary, help, options) and the run function.  common.cc holds
// the helpers below: the device, errors, NID and number options, and the
// arguments of the list commands.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "o2ctl/cli.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2ctl::cmd {

using Args = std::span<const std::string_view>;
using Opts = std::map<std::string_view, std::string_view>;
using Positional = std::vector<std::string_view>;

// One option of a command: "--timeout" with a value, "-v" without.
struct Option {
  std::string_view long_name;   // "--timeout"
  std::string_view short_name;  // "-t" or ""
  bool takes_value;
};

struct Command {
  std::string_view name;   // words: "net show"
  std::string_view usage;  // after the name: "NID [TIMEOUT] [--timeout S] [--source NID]"
  std::string_view summary;
  std::string_view help;  // the rest of `o2ctl NAME --help`
  std::span<const Option> options;
  int (*run)(Env& env, const std::map<std::string_view, std::string_view>& opts,
             const std::vector<std::string_view>& positional);
};

// The commands, one per row of cli.cc's table; each defined in its
// object's file.
extern const Command kPingCommand;          // ping.cc
extern const Command kDiscoverCommand;      // ping.cc
extern const Command kNetShowCommand;       // net.cc
extern const Command kNetAddCommand;        // net.cc
extern const Command kNetDelCommand;        // net.cc
extern const Command kPeerShowCommand;      // peer.cc
extern const Command kPeerListCommand;      // peer.cc
extern const Command kPeerCloseCommand;     // peer.cc
extern const Command kConnShowCommand;      // peer.cc
extern const Command kRouteShowCommand;     // route.cc
extern const Command kRoutingShowCommand;   // route.cc
extern const Command kFaultAddCommand;      // fault.cc
extern const Command kFaultDelCommand;      // fault.cc
extern const Command kFaultListCommand;     // fault.cc
extern const Command kStatsCommand;         // stats.cc
extern const Command kSelftestPingCommand;  // selftest_cmd.cc
extern const Command kSelftestBrwCommand;   // selftest_cmd.cc
extern const Command kVersionCommand;       // version.cc
extern const Command kExportCommand;        // config_cmd.cc
extern const Command kImportCommand;        // config_cmd.cc

// --- common.cc ----------------------------------------------------------------

// Prints "Try 'o2ctl COMMAND --help'."
void usage_hint(Env& env, std::string_view command);

// Opens the device and checks its ABI; prints the error and returns nullopt
// on failure.
std::optional<o2lnd::Device> open_device(Env& env);

std::optional<o2lnd::Nid> parse_nid_arg(Env& env, std::string_view text);

// Prints "o2ctl: COMMAND: WHY" for a failed kernel call: the errnos that
// have one cause get that cause, the others the library's message.
int kernel_failure(Env& env, std::string_view command, const o2lnd::Device& dev,
                   const o2lnd::Error& e);

int usage_error(Env& env, std::string_view command, const std::string& why);

std::optional<o2lnd::Nid> nid_option(Env& env, const Opts& opts, std::string_view name, bool& bad);

// Parses option `name` as a number in min..max into `out` (left as is
// when the option is not given); false after a usage error.
bool uint_option(Env& env, std::string_view command, const Opts& opts, std::string_view name,
                 std::uint32_t min, std::uint32_t max, std::uint32_t& out);

// --- the list commands: net show, peer show, conn show, stats ---------------

// -v, --net NET, -t: the options of net show, peer show and stats.
inline constexpr Option kListOptions[] = {
    {"--verbose", "-v", false},
    {"--net", "", true},
    {"--table", "-t", false},
};

// Where a list command's one peer comes from.
enum class PeerArg : std::uint8_t {
  kNone,        // net show: no peer, no argument
  kPositional,  // peer show [NID], stats [NID]
  kOption,      // conn show [--peer NID], no argument
};

// The arguments of a list command: the peer it is limited to, if any.
// nullopt after a usage error.
struct ListArgs {
  std::optional<o2lnd::Nid> peer;
};

std::optional<ListArgs> parse_list_args(Env& env, std::string_view command, const Opts& opts,
                                        const Positional& positional, PeerArg from);

// The device and its NIs; with --net NET only that network's (a failure
// when there is none).  nullopt after printing the error.
struct Listing {
  o2lnd::Device dev;
  std::vector<o2lnd::NetInfo> nis;

  [[nodiscard]] bool on_nis(o2lnd::Nid local) const {
    return std::any_of(nis.begin(), nis.end(),
                       [local](const o2lnd::NetInfo& ni) { return ni.nid == local; });
  }
};

std::optional<Listing> open_listing(Env& env, std::string_view command, const Opts& opts);

inline o2lnd::Nid remote_nid(const o2lnd::PeerInfo& p) { return p.nid; }
inline o2lnd::Nid remote_nid(const o2lnd::ConnInfo& c) { return c.peer_nid; }

// Keeps the entries of `items` (peers or connections) of the listed NIs,
// and of `peer` when set.
template <typename T>
void keep(std::vector<T>& items, const Listing& listing, const ListArgs& args) {
  std::erase_if(items, [&](const T& item) {
    return !listing.on_nis(item.local_nid) || (args.peer && remote_nid(item) != *args.peer);
  });
}

}  // namespace o2ctl::cmd
