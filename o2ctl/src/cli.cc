#include "o2ctl/cli.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2ctl/format.h"
#include "o2ctl/selftest.h"
#include "o2lnd/device.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2ctl {
namespace {

using Args = std::span<const std::string_view>;

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

void usage_hint(Env& env, std::string_view command) {
  env.err << "Try 'o2ctl " << command << (command.empty() ? "" : " ") << "--help'.\n";
}

// Opens the device and checks its ABI; prints the error and returns nullopt
// on failure.
std::optional<o2lnd::Device> open_device(Env& env) {
  auto backend = env.open_backend(env.device_path);
  if (!backend) {
    env.err << "o2ctl: " << backend.error().message << "\n";
    return std::nullopt;
  }
  auto dev = o2lnd::Device::attach(std::move(*backend), "o2ctl");
  if (!dev) {
    env.err << "o2ctl: " << dev.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*dev);
}

std::optional<o2lnd::Nid> parse_nid_arg(Env& env, std::string_view text) {
  auto nid = o2lnd::Nid::parse(text);
  if (!nid) {
    env.err << "o2ctl: invalid NID '" << text << "': " << nid.error().message << "\n";
    return std::nullopt;
  }
  return *nid;
}

// --- ping -----------------------------------------------------------------

constexpr Option kPingOptions[] = {
    {"--timeout", "-t", true},
    {"--source", "-s", true},
};

int run_ping(Env& env, const std::map<std::string_view, std::string_view>& opts,
             const std::vector<std::string_view>& positional) {
  if (positional.empty() || positional.size() > 2) {
    env.err << "o2ctl ping: expected NID [TIMEOUT]\n";
    usage_hint(env, "ping");
    return kExitUsage;
  }
  auto nid = parse_nid_arg(env, positional[0]);
  if (!nid) {
    return kExitUsage;
  }
  std::optional<std::string_view> timeout_text;
  if (positional.size() == 2) {
    timeout_text = positional[1];  // lctl ping NID [timeout]
  }
  if (auto it = opts.find("--timeout"); it != opts.end()) {
    if (timeout_text) {
      env.err << "o2ctl ping: timeout given twice\n";
      return kExitUsage;
    }
    timeout_text = it->second;
  }
  std::chrono::milliseconds timeout{0};  // the module's default
  if (timeout_text) {
    auto t = parse_timeout(*timeout_text);
    if (!t) {
      env.err << "o2ctl: invalid timeout '" << *timeout_text << "': " << t.error().message << "\n";
      return kExitUsage;
    }
    timeout = *t;
  }
  std::optional<o2lnd::Nid> source;
  if (auto it = opts.find("--source"); it != opts.end()) {
    source = parse_nid_arg(env, it->second);
    if (!source) {
      return kExitUsage;
    }
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto result = dev->ping(*nid, timeout, source);
  if (!result) {
    env.err << "failed to ping " << positional[0] << ": " << std::strerror(result.error().errnum)
            << "\n";
    return kExitFailure;
  }
  env.out << format_ping(*result);
  if (result->truncated()) {
    env.err << "o2ctl: " << positional[0] << " reported " << result->n_ids << " NIDs, showing "
            << result->ids.size() << "\n";
  }
  return kExitOk;
}

// --- errors of the newer commands ------------------------------------------

using Opts = std::map<std::string_view, std::string_view>;
using Positional = std::vector<std::string_view>;

// Prints "o2ctl: COMMAND: WHY" for a failed kernel call: the errnos that
// have one cause get that cause, the others the library's message.
int kernel_failure(Env& env, std::string_view command, const o2lnd::Device& dev,
                   const o2lnd::Error& e) {
  env.err << "o2ctl: " << command << ": ";
  switch (e.errnum) {
    case EPERM:
    case EACCES:
      env.err << "permission denied (needs CAP_NET_ADMIN)";
      break;
    case ENOTTY:
      env.err << "the o2lnd module does not know this command (module too old for o2ctl ABI "
              << o2lnd::kAbiVersion << "; load a matching module)";
      break;
    case EPROTO:
      env.err << "ABI mismatch: module ABI " << dev.module_info().abi_version << ", o2ctl ABI "
              << o2lnd::kAbiVersion << " (" << e.message << ")";
      break;
    default:
      env.err << e.message;
      break;
  }
  env.err << "\n";
  return kExitFailure;
}

int usage_error(Env& env, std::string_view command, const std::string& why) {
  env.err << "o2ctl " << command << ": " << why << "\n";
  usage_hint(env, command);
  return kExitUsage;
}

std::optional<o2lnd::Nid> nid_option(Env& env, const Opts& opts, std::string_view name, bool& bad) {
  auto it = opts.find(name);
  if (it == opts.end()) {
    return std::nullopt;
  }
  auto nid = parse_nid_arg(env, it->second);
  bad = !nid;
  return nid;
}

// Parses option `name` as a number in min..max into `out` (left as is
// when the option is not given); false after a usage error.
bool uint_option(Env& env, std::string_view command, const Opts& opts, std::string_view name,
                 std::uint32_t min, std::uint32_t max, std::uint32_t& out) {
  auto it = opts.find(name);
  if (it == opts.end()) {
    return true;
  }
  auto v = parse_uint(it->second, min, max);
  if (!v) {
    env.err << "o2ctl " << command << ": invalid " << name << " '" << it->second
            << "': " << v.error().message << "\n";
    usage_hint(env, command);
    return false;
  }
  out = *v;
  return true;
}

// --- the list commands: net show, peer show, conn show, stats ---------------

// -v, --net NET, -t: the options of net show, peer show and stats.
constexpr Option kListOptions[] = {
    {"--verbose", "-v", false},
    {"--net", "", true},
    {"--table", "-t", false},
};

// conn show: the peer is an option, and there is no -v.
constexpr Option kConnShowOptions[] = {
    {"--peer", "", true},
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
                                        const Positional& positional, PeerArg from) {
  std::size_t max_positional = from == PeerArg::kPositional ? 1 : 0;
  if (positional.size() > max_positional) {
    usage_error(env, command,
                "unexpected argument '" + std::string(positional[max_positional]) + "'");
    return std::nullopt;
  }
  ListArgs args;
  if (from == PeerArg::kPositional && !positional.empty()) {
    args.peer = parse_nid_arg(env, positional[0]);
    if (!args.peer) {
      return std::nullopt;
    }
  }
  if (from == PeerArg::kOption) {
    bool bad = false;
    args.peer = nid_option(env, opts, "--peer", bad);
    if (bad) {
      return std::nullopt;
    }
  }
  return args;
}

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

std::optional<Listing> open_listing(Env& env, std::string_view command, const Opts& opts) {
  auto dev = open_device(env);
  if (!dev) {
    return std::nullopt;
  }
  auto nis = dev->nets();
  if (!nis) {
    kernel_failure(env, command, *dev, nis.error());
    return std::nullopt;
  }
  if (auto it = opts.find("--net"); it != opts.end()) {
    std::string_view want = it->second;
    std::erase_if(*nis, [want](const o2lnd::NetInfo& ni) { return ni.net != want; });
    if (nis->empty()) {
      env.err << "o2ctl: no local NI on network '" << want << "'\n";
      return std::nullopt;
    }
  }
  return Listing{std::move(*dev), std::move(*nis)};
}

o2lnd::Nid remote_nid(const o2lnd::PeerInfo& p) { return p.nid; }
o2lnd::Nid remote_nid(const o2lnd::ConnInfo& c) { return c.peer_nid; }

// Keeps the entries of `items` (peers or connections) of the listed NIs,
// and of `peer` when set.
template <typename T>
void keep(std::vector<T>& items, const Listing& listing, const ListArgs& args) {
  std::erase_if(items, [&](const T& item) {
    return !listing.on_nis(item.local_nid) || (args.peer && remote_nid(item) != *args.peer);
  });
}

int run_net_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "net show";
  if (!parse_list_args(env, kCmd, opts, positional, PeerArg::kNone)) {
    return kExitUsage;
  }
  auto listing = open_listing(env, kCmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  const auto& nis = listing->nis;
  env.out << (opts.contains("--table") ? table_net_show(nis)
                                       : format_net_show(nis, opts.contains("--verbose")));
  return kExitOk;
}

// `peer show` and `conn show`: parse, open, fetch the items (`fetch` on
// the device), filter them and print them (`render(items)`).
template <typename Fetch, typename Render>
int run_item_list(Env& env, std::string_view cmd, const Opts& opts, const Positional& positional,
                  PeerArg peer_arg, Fetch fetch, Render render) {
  auto args = parse_list_args(env, cmd, opts, positional, peer_arg);
  if (!args) {
    return kExitUsage;
  }
  auto listing = open_listing(env, cmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  auto items = fetch(listing->dev);
  if (!items) {
    return kernel_failure(env, cmd, listing->dev, items.error());
  }
  keep(*items, *listing, *args);
  env.out << render(*items);
  return kExitOk;
}

int run_peer_show(Env& env, const Opts& opts, const Positional& positional) {
  const bool table = opts.contains("--table");
  const bool verbose = opts.contains("--verbose");
  return run_item_list(
      env, "peer show", opts, positional, PeerArg::kPositional,
      [](o2lnd::Device& dev) { return dev.peers(); },
      [&](const std::vector<o2lnd::PeerInfo>& peers) {
        return table ? table_peer_show(peers, verbose) : format_peer_show(peers, verbose);
      });
}

int run_conn_show(Env& env, const Opts& opts, const Positional& positional) {
  const bool table = opts.contains("--table");
  return run_item_list(
      env, "conn show", opts, positional, PeerArg::kOption,
      [](o2lnd::Device& dev) { return dev.conns(); },
      [&](const std::vector<o2lnd::ConnInfo>& conns) {
        return table ? table_conn_show(conns) : format_conn_show(conns);
      });
}

// --- route show, routing show ------------------------------------------------

constexpr Option kRouteShowOptions[] = {
    {"--net", "", true},
    {"--table", "-t", false},
};

constexpr Option kTableOption[] = {
    {"--table", "-t", false},
};

int run_route_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "route show";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto routes = dev->routes();
  if (!routes) {
    return kernel_failure(env, kCmd, *dev, routes.error());
  }
  if (auto it = opts.find("--net"); it != opts.end()) {
    std::string_view want = it->second;
    std::erase_if(*routes,
                  [want](const o2lnd::RouteInfo& r) { return o2lnd::net_name(r.net) != want; });
  }
  env.out << (opts.contains("--table") ? table_route_show(*routes) : format_route_show(*routes));
  return kExitOk;
}

int run_routing_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "routing show";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto routing = dev->routing();
  if (!routing) {
    return kernel_failure(env, kCmd, *dev, routing.error());
  }
  env.out << (opts.contains("--table") ? table_routing_show(*routing)
                                       : format_routing_show(*routing));
  return kExitOk;
}

int run_stats(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "stats";
  auto args = parse_list_args(env, kCmd, opts, positional, PeerArg::kPositional);
  if (!args) {
    return kExitUsage;
  }
  auto listing = open_listing(env, kCmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  bool with_peers = args->peer.has_value() || opts.contains("--verbose");
  std::vector<o2lnd::PeerInfo> peers;
  if (with_peers) {
    auto all = listing->dev.peers();
    if (!all) {
      return kernel_failure(env, kCmd, listing->dev, all.error());
    }
    peers = std::move(*all);
    keep(peers, *listing, *args);
  }
  const auto& nis = listing->nis;
  env.out << (opts.contains("--table") ? table_stats(nis, peers, with_peers)
                                       : format_stats(nis, peers, with_peers));
  return kExitOk;
}

// --- peer close -------------------------------------------------------------

constexpr Option kPeerCloseOptions[] = {
    {"--source", "-s", true},
};

int run_peer_close(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "peer close";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, "expected NID");
  }
  auto nid = parse_nid_arg(env, positional[0]);
  if (!nid) {
    return kExitUsage;
  }
  bool bad = false;
  auto source = nid_option(env, opts, "--source", bad);
  if (bad) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto closed = dev->peer_close(*nid, source);
  if (!closed) {
    if (closed.error().errnum == ENOENT) {
      env.err << "o2ctl: " << kCmd << ": no peer " << nid->str()
              << (source ? " on " + source->str() : std::string()) << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, kCmd, *dev, closed.error());
  }
  env.out << "closed " << *closed << " connections to " << nid->str() << "\n";
  return kExitOk;
}

// --- net add, net del --------------------------------------------------------

constexpr Option kNetCfgOptions[] = {
    {"--net", "-n", true},
    {"--if", "-i", true},
};

int run_net_cfg(Env& env, const Opts& opts, const Positional& positional, bool add) {
  const std::string_view cmd = add ? "net add" : "net del";
  if (!positional.empty()) {
    return usage_error(env, cmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto net = opts.find("--net");
  if (net == opts.end()) {
    return usage_error(env, cmd, "expected --net NET");
  }
  auto itf = opts.find("--if");
  if (add && itf == opts.end()) {
    return usage_error(env, cmd, "expected --if INTERFACE");
  }
  const std::string ifname = itf == opts.end() ? std::string() : std::string(itf->second);
  const std::string what =
      std::string(net->second) + (ifname.empty() ? std::string() : "(" + ifname + ")");
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  if (add) {
    auto nid = dev->net_add(net->second, ifname);
    if (!nid) {
      switch (nid.error().errnum) {
        case EEXIST:
          env.err << "o2ctl: net add: " << what << " exists\n";
          return kExitFailure;
        case ENODEV:
        case EADDRNOTAVAIL:
          env.err << "o2ctl: net add: " << what
                  << ": no such interface, or it has no IPv4 address or no RDMA device ("
                  << nid.error().message << ")\n";
          return kExitFailure;
        default:
          return kernel_failure(env, cmd, *dev, nid.error());
      }
    }
    env.out << "added " << nid->str() << " on " << ifname << "\n";
    return kExitOk;
  }
  auto n = dev->net_del(net->second, ifname);
  if (!n) {
    if (n.error().errnum == ENOENT) {
      env.err << "o2ctl: net del: no NI of " << what << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, cmd, *dev, n.error());
  }
  env.out << "deleted " << *n << (*n == 1 ? " NI" : " NIs") << " of " << what << "\n";
  return kExitOk;
}

int run_net_add(Env& env, const Opts& opts, const Positional& positional) {
  return run_net_cfg(env, opts, positional, true);
}

int run_net_del(Env& env, const Opts& opts, const Positional& positional) {
  return run_net_cfg(env, opts, positional, false);
}

// --- discover, peer list ---------------------------------------------------

constexpr Option kDiscoverOptions[] = {
    {"--timeout", "-t", true},
};

int run_discover(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "discover";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, "expected NID");
  }
  auto nid = parse_nid_arg(env, positional[0]);
  if (!nid) {
    return kExitUsage;
  }
  std::chrono::milliseconds timeout{0};  // the module's default
  if (auto it = opts.find("--timeout"); it != opts.end()) {
    auto t = parse_timeout(it->second);
    if (!t) {
      env.err << "o2ctl: invalid timeout '" << it->second << "': " << t.error().message << "\n";
      return kExitUsage;
    }
    timeout = *t;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto peer = dev->discover(*nid, timeout);
  if (!peer) {
    const int e = peer.error().errnum;
    if (e == EPERM || e == EACCES || e == ENOTTY || e == EPROTO) {
      return kernel_failure(env, kCmd, *dev, peer.error());
    }
    env.err << "o2ctl: " << peer.error().message << "\n";
    return kExitFailure;
  }
  env.out << format_lnet_peers({*peer}, "discover");
  return kExitOk;
}

int run_peer_list(Env& env, const Opts& /*opts*/, const Positional& positional) {
  constexpr std::string_view kCmd = "peer list";
  if (positional.size() > 1) {
    return usage_error(env, kCmd, "expected at most one NID");
  }
  std::optional<o2lnd::Nid> nid;
  if (!positional.empty()) {
    nid = parse_nid_arg(env, positional[0]);
    if (!nid) {
      return kExitUsage;
    }
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  std::vector<o2lnd::LnetPeer> peers;
  if (nid) {
    auto p = dev->lpeer_of(*nid);
    if (!p && p.error().errnum != ENOENT) {
      return kernel_failure(env, kCmd, *dev, p.error());
    }
    if (p) {
      peers.push_back(std::move(*p));
    }
  } else {
    auto all = dev->lpeers();
    if (!all) {
      return kernel_failure(env, kCmd, *dev, all.error());
    }
    peers = std::move(*all);
  }
  env.out << format_lnet_peers(peers, "peer");
  return kExitOk;
}

// --- fault add / del / list -------------------------------------------------

constexpr Option kFaultAddOptions[] = {
    {"--peer", "", true},  {"--local", "", true},       {"--count", "", true}, {"--prob", "", true},
    {"--delay", "", true}, {"--queue-depth", "", true}, {"--frags", "", true},
};

// What a reject may advertise (o2iblnd: peer_credits 2..255, 257 fragments).
constexpr std::uint32_t kMaxQueueDepth = 255;
constexpr std::uint32_t kMaxFrags = 257;

// What the ARG of a kind is called in usage messages.
std::string_view arg_word(o2lnd::NameKind kind) {
  switch (kind) {
    case o2lnd::NameKind::kCmEvent:
      return "EVENT";
    case o2lnd::NameKind::kPhase:
      return "PHASE";
    case o2lnd::NameKind::kRejectReason:
      return "REASON";
    case o2lnd::NameKind::kMsgType:
      return "TYPE";
    default:
      return "ARG";
  }
}

int run_fault_add(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "fault add";
  if (positional.empty()) {
    return usage_error(env, kCmd, "expected KIND [ARG]");
  }
  o2lnd::FaultRule rule;
  auto kind = o2lnd::parse_name(o2lnd::NameKind::kFaultKind, positional[0]);
  if (!kind) {
    return usage_error(env, kCmd, kind.error().message);
  }
  rule.kind = *kind;
  std::string kind_name = o2lnd::fault_kind_name(rule.kind);
  auto arg_kind = o2lnd::fault_arg_kind(rule.kind);
  const bool wr_arg = rule.kind == O2LND_FAULT_POST_FAIL;  // a number, not a name
  std::size_t want_positional = arg_kind || wr_arg ? 2 : 1;
  if (positional.size() < want_positional) {
    return usage_error(
        env, kCmd,
        kind_name + " needs " +
            std::string(wr_arg ? "WR (a work request, from 0)" : arg_word(*arg_kind)));
  }
  if (positional.size() > want_positional) {
    return usage_error(env, kCmd,
                       "unexpected argument '" + std::string(positional[want_positional]) + "'");
  }
  if (arg_kind) {
    auto arg = o2lnd::parse_name(*arg_kind, positional[1]);
    if (!arg || (rule.kind == O2LND_FAULT_STALL && *arg == O2LND_PHASE_NONE)) {
      std::string why =
          arg ? "stall needs a phase: addr, route or connect (not 'none')" : arg.error().message;
      return usage_error(env, kCmd, why);
    }
    rule.arg = *arg;
  }
  if (wr_arg) {
    auto wr = parse_uint(positional[1], 0, O2LND_FAULT_POST_FAIL_MAX_ARG);
    if (!wr) {
      return usage_error(env, kCmd,
                         "invalid WR '" + std::string(positional[1]) + "': " + wr.error().message);
    }
    rule.arg = *wr;
  }
  bool bad = false;
  if (auto nid = nid_option(env, opts, "--peer", bad); nid) {
    rule.peer = *nid;
  }
  if (bad) {
    return kExitUsage;
  }
  if (auto nid = nid_option(env, opts, "--local", bad); nid) {
    rule.local = *nid;
  }
  if (bad) {
    return kExitUsage;
  }
  if (auto it = opts.find("--prob"); it != opts.end()) {
    auto p = parse_probability(it->second);
    if (!p) {
      env.err << "o2ctl fault add: invalid --prob '" << it->second << "': " << p.error().message
              << "\n";
      return kExitUsage;
    }
    rule.probability = *p;
  }
  if (!uint_option(env, kCmd, opts, "--count", 0, UINT32_MAX, rule.count)) {
    return kExitUsage;
  }
  bool has_delay = o2lnd::fault_has_delay(rule.kind);
  if (has_delay && !opts.contains("--delay")) {
    return usage_error(env, kCmd, kind_name + " needs --delay MS");
  }
  if (!has_delay && opts.contains("--delay")) {
    return usage_error(env, kCmd, "--delay applies only to cm-delay and send-delay");
  }
  if (!uint_option(env, kCmd, opts, "--delay", 1, O2LND_FAULT_MAX_DELAY_MS, rule.delay_ms)) {
    return kExitUsage;
  }
  if (rule.kind != O2LND_FAULT_REJECT &&
      (opts.contains("--queue-depth") || opts.contains("--frags"))) {
    return usage_error(env, kCmd, "--queue-depth and --frags apply only to reject");
  }
  if (!uint_option(env, kCmd, opts, "--queue-depth", 0, kMaxQueueDepth, rule.queue_depth) ||
      !uint_option(env, kCmd, opts, "--frags", 0, kMaxFrags, rule.max_frags)) {
    return kExitUsage;
  }
  if (auto ok = o2lnd::validate(rule); !ok) {
    return usage_error(env, kCmd, ok.error().message);
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto id = dev->fault_add(rule);
  if (!id) {
    switch (id.error().errnum) {
      case ENOSPC:
        env.err << "o2ctl: " << kCmd << ": too many fault rules (at most " << O2LND_FAULT_MAX_RULES
                << ")\n";
        return kExitFailure;
      case EINVAL:
        env.err << "o2ctl: " << kCmd << ": the module refused the rule: " << id.error().message
                << "\n";
        return kExitFailure;
      default:
        return kernel_failure(env, kCmd, *dev, id.error());
    }
  }
  env.out << "fault " << *id << " added\n";
  return kExitOk;
}

bool is_all(std::string_view text) {
  return text.size() == 3 && std::tolower(static_cast<unsigned char>(text[0])) == 'a' &&
         std::tolower(static_cast<unsigned char>(text[1])) == 'l' &&
         std::tolower(static_cast<unsigned char>(text[2])) == 'l';
}

int run_fault_del(Env& env, const Opts& /*opts*/, const Positional& positional) {
  constexpr std::string_view kCmd = "fault del";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, "expected ID or 'all'");
  }
  bool all = is_all(positional[0]);
  std::uint32_t id = 0;
  if (!all) {
    auto v = parse_uint(positional[0], 1, UINT32_MAX);
    if (!v) {
      return usage_error(env, kCmd,
                         "invalid rule id '" + std::string(positional[0]) +
                             "': " + v.error().message + " (expected a rule id or 'all')");
    }
    id = *v;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto done = all ? dev->fault_del_all() : dev->fault_del(id);
  if (!done) {
    if (done.error().errnum == ENOENT && !all) {
      env.err << "o2ctl: " << kCmd << ": no fault rule " << id << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, kCmd, *dev, done.error());
  }
  if (all) {
    env.out << "all faults deleted\n";
  } else {
    env.out << "fault " << id << " deleted\n";
  }
  return kExitOk;
}

constexpr Option kFaultListOptions[] = {
    {"--table", "-t", false},
};

int run_fault_list(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "fault list";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto rules = dev->fault_list();
  if (!rules) {
    return kernel_failure(env, kCmd, *dev, rules.error());
  }
  env.out << (opts.contains("--table") ? table_fault_list(*rules) : format_fault_list(*rules));
  return kExitOk;
}

// --- selftest ---------------------------------------------------------------
// Modes are commands of the "selftest" group: "o2ctl selftest" lists them
// (ping, brw), and an unknown one is a usage error that lists them.  Both
// share the options below, the workers (selftest::run_rpcs) and the report.

constexpr Option kSelftestPingOptions[] = {
    {"--from", "", true},  {"--concurrency", "", true}, {"--duration", "", true},
    {"--count", "", true}, {"--timeout", "", true},     {"--yaml", "-y", false},
};

constexpr Option kSelftestBrwOptions[] = {
    {"--from", "", true},  {"--concurrency", "", true}, {"--duration", "", true},
    {"--count", "", true}, {"--timeout", "", true},     {"--yaml", "-y", false},
    {"--size", "", true},  {"--check", "", false},      {"--seed", "", true},
    {"--ack", "", false},
};

// The NIDs and the options common to every mode, into `config`; false after
// a usage error.
bool parse_selftest_common(Env& env, std::string_view cmd, const Opts& opts,
                           std::span<const std::string_view> nids, selftest::RunConfig& config) {
  namespace st = selftest;
  if (nids.empty()) {
    usage_error(env, cmd, "expected at least one NID");
    return false;
  }
  for (std::string_view text : nids) {
    auto nid = parse_nid_arg(env, text);
    if (!nid) {
      return false;
    }
    config.peers.push_back(*nid);
  }
  bool bad = false;
  config.source = nid_option(env, opts, "--from", bad);
  if (bad) {
    return false;
  }
  if (!uint_option(env, cmd, opts, "--concurrency", st::kMinConcurrency, st::kMaxConcurrency,
                   config.concurrency)) {
    return false;
  }
  if (opts.contains("--duration") && opts.contains("--count")) {
    usage_error(env, cmd, "--duration and --count exclude each other");
    return false;
  }
  if (auto it = opts.find("--duration"); it != opts.end()) {
    auto d = parse_seconds(it->second, st::kMinDuration, st::kMaxDuration);
    if (!d) {
      usage_error(env, cmd,
                  "invalid --duration '" + std::string(it->second) + "': " + d.error().message);
      return false;
    }
    config.duration = *d;
  }
  if (opts.contains("--count")) {
    std::uint32_t count = 0;
    if (!uint_option(env, cmd, opts, "--count", 1, UINT32_MAX, count)) {
      return false;
    }
    config.count = count;
  }
  std::uint32_t timeout_ms = 0;
  if (!uint_option(env, cmd, opts, "--timeout", 1, O2LND_PING_TIMEOUT_MAX_MS, timeout_ms)) {
    return false;
  }
  config.timeout = std::chrono::milliseconds(timeout_ms);
  return true;
}

// Runs the RPCs and prints the report; exit 0 when every RPC succeeded.
int run_selftest(Env& env, std::string_view cmd, const Opts& opts,
                 const selftest::RunConfig& config, const selftest::RpcFn& rpc) {
  namespace st = selftest;
  st::PingReport report = st::run_rpcs(config, rpc);
  env.out << (opts.contains("--yaml") ? st::format_yaml(report) : st::format_text(report));
  if (report.fatal_errnum != 0) {
    env.err << "o2ctl: " << cmd << ": stopped: " << (config.brw ? "brw" : "ping") << " of "
            << report.fatal_peer.str() << " failed with " << std::strerror(report.fatal_errnum)
            << ", which no retry can cure\n";
  }
  if (report.not_sent != 0) {
    env.err << "o2ctl: " << cmd << ": " << report.not_sent
            << " attempts were not sent: the local NI was down (Network is down)\n";
  }
  return report.errors.total == 0 && report.not_sent == 0 ? kExitOk : kExitFailure;
}

int run_selftest_ping(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "selftest ping";
  namespace st = selftest;
  st::RunConfig config;
  if (!parse_selftest_common(env, kCmd, opts, positional, config)) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto ping = [&dev = *dev, &config](o2lnd::Nid nid, std::uint64_t /*ticket*/) {
    // One NID back is enough: the reply is not shown.
    auto r = dev.ping(nid, config.timeout, config.source, 1);
    return r ? st::RpcOutcome{0, r->rtt} : st::RpcOutcome{r.error().errnum, {}};
  };
  return run_selftest(env, kCmd, opts, config, ping);
}

int run_selftest_brw(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "selftest brw";
  namespace st = selftest;
  if (positional.empty()) {
    return usage_error(env, kCmd, "expected write or read, then at least one NID");
  }
  st::BrwParams brw;
  if (positional[0] == "write") {
    brw.op = O2LND_BRW_WRITE;
  } else if (positional[0] == "read") {
    brw.op = O2LND_BRW_READ;
  } else {
    return usage_error(
        env, kCmd,
        "unknown operation '" + std::string(positional[0]) + "' (expected write or read)");
  }
  auto size_it = opts.find("--size");
  if (size_it == opts.end()) {
    return usage_error(env, kCmd, "--size is required");
  }
  auto size = st::parse_size(size_it->second);
  if (!size) {
    return usage_error(
        env, kCmd,
        "invalid --size '" + std::string(size_it->second) + "': " + size.error().message);
  }
  brw.size = *size;
  brw.check = opts.contains("--check");
  brw.ack = opts.contains("--ack");
  if (brw.ack && brw.op != O2LND_BRW_WRITE) {
    return usage_error(env, kCmd, "--ack applies to write only (a read's answer is its data)");
  }
  if (auto it = opts.find("--seed"); it != opts.end()) {
    std::uint64_t seed = 0;
    bool ok = !it->second.empty() && it->second.size() <= 19;
    for (char c : it->second) {
      ok = ok && c >= '0' && c <= '9';
      seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok) {
      return usage_error(env, kCmd,
                         "invalid --seed '" + std::string(it->second) +
                             "': not a number (0..9999999999999999999)");
    }
    brw.seed = seed;
  }
  st::RunConfig config;
  config.brw = brw;
  if (!parse_selftest_common(env, kCmd, opts, std::span(positional).subspan(1), config)) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto rpc = [&dev = *dev, &config, brw](o2lnd::Nid nid, std::uint64_t ticket) {
    o2lnd::BrwRequest req;
    req.nid = nid;
    req.source = config.source;
    req.op = brw.op;
    req.size = brw.size;
    req.timeout = config.timeout;
    req.check = brw.check;
    req.ack = brw.ack;
    req.seed = brw.seed + ticket;
    auto r = dev.brw(req);
    // an older module (ABI < 11) does not say: its writes all asked for an ACK
    return r ? st::RpcOutcome{0, r->rtt, r->rdma, r->messages != 0 ? r->messages : 2}
             : st::RpcOutcome{r.error().errnum, {}};
  };
  return run_selftest(env, kCmd, opts, config, rpc);
}

// --- version --------------------------------------------------------------

int run_version(Env& env, const std::map<std::string_view, std::string_view>& /*opts*/,
                const std::vector<std::string_view>& positional) {
  if (!positional.empty()) {
    env.err << "o2ctl version: unexpected argument '" << positional[0] << "'\n";
    return kExitUsage;
  }
  // Not Device::open: this must report a module of another ABI, not refuse it.
  auto backend = env.open_backend(env.device_path);
  if (!backend) {
    env.out << format_version(env.tool_version, nullptr);
    env.err << "o2ctl: " << backend.error().message << "\n";
    return kExitFailure;
  }
  auto arg = o2lnd::make_arg<o2lnd_ioc_version>();
  if (int err = (*backend)->ioctl(O2LND_IOC_VERSION, &arg); err != 0) {
    env.out << format_version(env.tool_version, nullptr);
    env.err << "o2ctl: O2LND_IOC_VERSION on " << env.device_path << ": " << std::strerror(err)
            << "\n";
    return kExitFailure;
  }
  auto info = o2lnd::decode(arg);
  env.out << format_version(env.tool_version, &info);
  if (!info.accepts(o2lnd::kAbiVersion)) {
    env.err << "o2ctl: o2lnd module ABI " << info.abi_version << ", o2ctl speaks ABI "
            << o2lnd::kAbiVersion << ": upgrade o2ctl or load a matching module\n";
    return kExitFailure;
  }
  return kExitOk;
}

// --- the table ------------------------------------------------------------
// To add a command ("peer show", "conn show", "route show", "stats",
// "selftest"): write run_X and add a row.  Multi-word names make groups:
// "o2ctl peer" then lists the "peer ..." commands.

constexpr Command kCommands[] = {
    {"ping", "NID [TIMEOUT] [--timeout S] [--source NID]",
     "LNet ping of NID; prints the target's NIDs like 'lctl ping'",
     "Prints one line PID-NID for each NID the target reports (the first is\n"
     "12345-0@lo).  On failure prints 'failed to ping NID: ERROR' and exits 1.\n"
     "\n"
     "  -t, --timeout S   seconds to wait for the reply (fractions allowed, e.g.\n"
     "                    0.5; at most 600).  TIMEOUT as a second argument is\n"
     "                    the same, as in 'lctl ping NID TIMEOUT'.  Default: the\n"
     "                    module's (5 s).\n"
     "  -s, --source NID  the local NID to send from (default: the module picks)\n",
     kPingOptions, run_ping},
    {"net show", "[-v] [--net NET] [-t]", "local NIs as YAML, like 'lnetctl net show'",
     "  -v, --verbose     add statistics (incl. tx_timeouts, queue_full_drops,\n"
     "                    keepalives, early_replies, rdma_bytes, bulk_errors),\n"
     "                    health stats (health value: LNet Health, 0..1000),\n"
     "                    tunables (incl. peercredits_hiw, concurrent_sends,\n"
     "                    ntx, keepalive), tx_credits (max, available, min,\n"
     "                    queued), bulk (max_immediate, max_frags, cksum,\n"
     "                    mr_pool: size, used, max_pages, recovered) and RDMA\n"
     "                    details (incl. tx_live)\n"
     "      --net NET     only the NIs of network NET (e.g. o2ib0)\n"
     "  -t, --table       a table instead of YAML, one row per NI: NET NID STATUS\n"
     "                    IFACE DEVICE PEERS CONNS EST CRED (tx credits\n"
     "                    available/max) MIN Q (waiting for a credit) TXS\n"
     "                    (txs live/ntx) MRS (MR pool used/size)\n",
     kListOptions, run_net_show},
    {"net add", "--net NET --if INTERFACE", "add a network or an interface, like 'lnetctl net add'",
     "Adds an NI of network NET (o2ibN) on INTERFACE without a reload: it\n"
     "listens on the interface's IPv4 address and is up at once, and the peers\n"
     "that discovered us learn it (a push).  Prints 'added NID on INTERFACE'.\n"
     "Exits 1 when the NI exists, the interface does not exist or has no IPv4\n"
     "address or RDMA device, or the module has its maximum of NIs.  Needs\n"
     "CAP_NET_ADMIN.\n"
     "\n"
     "  -n, --net NET     the network, e.g. o2ib1\n"
     "  -i, --if INTERFACE the interface, e.g. eth1\n",
     kNetCfgOptions, run_net_add},
    {"net del", "--net NET [--if INTERFACE]",
     "delete a network or an interface, like 'lnetctl net del'",
     "Deletes the NI of NET on INTERFACE, or every NI of NET without --if,\n"
     "without a reload: it goes down at once, its connections are closed and\n"
     "freed, the messages waiting on it fail and its peers are forgotten before\n"
     "the command returns; the peers that discovered us learn it (a push).\n"
     "Prints 'deleted N NIs of NET'.  Exits 1 when no NI matches.  Needs\n"
     "CAP_NET_ADMIN.\n"
     "\n"
     "  -n, --net NET     the network\n"
     "  -i, --if INTERFACE only the NI on this interface\n",
     kNetCfgOptions, run_net_del},
    {"peer show", "[NID] [--net NET] [-v] [-t]", "peers of the local NIs as YAML",
     "Lists every peer of every o2ib NI (one entry per NI that knows it):\n"
     "nid, local nid, state (idle, connecting, established, backoff), its\n"
     "connections by state (connecting = init + active_connect + passive_wait,\n"
     "established, closing, zombie), tx queued, next retry ms, tx credits (now;\n"
     "below 0, that many wait), tx credits max, tx credits min, credit queued,\n"
     "router credits (router buffers the peer may still hold on this router;\n"
     "below 0, that many of its messages wait), router credits max, router\n"
     "credits min, router queued and health (up, down).  Prints 'peer: []'\n"
     "when there is none, also when NID is unknown.\n"
     "\n"
     "  NID               only this peer (on every NI that knows it)\n"
     "      --net NET     only the peers of the NIs of network NET (e.g. o2ib0)\n"
     "  -v, --verbose     add incarnation, races received/sent, connects,\n"
     "                    connect failures, rejects sent/received, last reject,\n"
     "                    last error, backoff ms, stale closes, phase timeouts,\n"
     "                    failures, downs, alive ms ('never' if never heard\n"
     "                    from), tx timeouts\n"
     "  -t, --table       a table instead of YAML, one row per peer: NID LOCAL\n"
     "                    STATE CONNS (connecting/established/closing/zombie)\n"
     "                    TXQ RETRY_MS CRED (tx credits available/max) MIN Q\n"
     "                    (credit queued) HEALTH; with -v also RTR (router\n"
     "                    credits available/max) RMIN RQ (router queued)\n",
     kListOptions, run_peer_show},
    {"peer list",
     "[NID]",
     "LNet peers with all their NIDs, like 'lnetctl peer show -v'",
     "Lists every LNet peer o2lnd learned, one entry per node (a ping's reply,\n"
     "a discovery or a push teaches its NIDs): primary nid, Multi-Rail (true\n"
     "when its ping info says so), discovery (it answers discovery), pushed\n"
     "(it ACKed our push), pushed to us (it pushed its NIDs to us), seqno (of\n"
     "its ping info), nids (how many it listed), and under 'peer ni' each NID\n"
     "with its state (up or down, as the peer reported it), health value (LNet\n"
     "Health, 0..1000: failures blamed on the NID lower it by\n"
     "health_sensitivity, successes raise it), selected (messages Multi-Rail\n"
     "sent to it) and failures.  Prints 'peer: []' when there is none, also\n"
     "when no peer lists NID.\n"
     "\n"
     "  NID               only the peer that lists this NID\n",
     {},
     run_peer_list},
    {"discover", "NID [--timeout S]", "discover a peer's NIDs, like 'lnetctl discover'",
     "Pings NID, learns the peer's NIDs from the reply and, when the peer does\n"
     "discovery, pushes our NIDs to it and waits for its ACK.  Prints the peer\n"
     "as 'peer list' does, under 'discover:'.  On failure prints 'failed to\n"
     "discover NID: ERROR' and exits 1.  Needs CAP_NET_ADMIN.\n"
     "\n"
     "  -t, --timeout S   seconds to wait for the reply and for the ACK each\n"
     "                    (default: the module's ping timeout, 5 s)\n",
     kDiscoverOptions, run_discover},
    {"peer close", "NID [--source NID]", "close every connection to a peer",
     "Closes every connection to NID (as if it had failed with ECONNABORTED) and\n"
     "cancels a scheduled reconnect and its backoff.  Prints 'closed N\n"
     "connections to NID'.  Exits 1 when no NI knows the peer.  Needs\n"
     "CAP_NET_ADMIN.\n"
     "\n"
     "  -s, --source NID  only on the local NI with this NID (default: every NI)\n",
     kPeerCloseOptions, run_peer_close},
    {"conn show", "[--peer NID] [--net NET] [-t]", "connections of the local NIs as YAML",
     "Lists every connection of every o2ib NI, in any state: peer, local nid,\n"
     "state (init, active_connect, passive_wait, established, closing, zombie),\n"
     "phase (none, addr, route, connect), active, age ms, deadline ms, queue\n"
     "depth, max frags, credits, outstanding (owed to the peer), posted, tx\n"
     "queued, error, qp, rx buffers, reserved credits, concurrent sends (the cap\n"
     "on posted), sq size, sq free, noops posted, noops queued, idle ms,\n"
     "keepalives.  Prints 'conn: []' when there is none.\n"
     "\n"
     "      --peer NID    only the connections to this peer\n"
     "      --net NET     only the connections of the NIs of network NET\n"
     "  -t, --table       a table instead of YAML, one row per connection: PEER\n"
     "                    LOCAL STATE PHASE ACT AGE_MS QD (queue depth) CRED\n"
     "                    (credits) OUT (outstanding) POSTED QP RSV (reserved\n"
     "                    credits) SENDS (posted/concurrent sends) SQ\n"
     "                    (free/size) NOOPS (posted/queued) IDLE_MS\n",
     kConnShowOptions, run_conn_show},
    {"route show", "[--net NET] [-t]", "routes to remote networks as YAML",
     "Lists the routes configured (module parameter routes=), like 'lnetctl\n"
     "route show -v': net (the remote network), gateway (its NID, on a local\n"
     "network), hop, priority (0 highest), state (up or down: down while the\n"
     "gateway peer is down, its last check got no answer, or its ping info\n"
     "said it does not forward or has no NI up on the route's network; up\n"
     "while it was never tried), sent (messages sent through the route),\n"
     "dropped (dropped because its gateway was down).  Prints 'route: []'\n"
     "when there is none.\n"
     "\n"
     "      --net NET     only the routes to network NET (e.g. o2ib1)\n"
     "  -t, --table       a table instead of YAML, one row per route: NET GATEWAY\n"
     "                    HOP PRIO STATE SENT DROPPED\n",
     kRouteShowOptions, run_route_show},
    {"routing show", "[-t]", "the router's state and buffer pools as YAML",
     "Prints 'routing:' like 'lnetctl routing show': forwarding (enabled or\n"
     "disabled: module parameter forwarding=), peer buffer credits (router\n"
     "buffers one peer may hold), router timeout (seconds a message may wait\n"
     "for a router buffer), waiting (messages waiting now), waiting max,\n"
     "held rx (receive buffers held by waiting messages), forwarded,\n"
     "forwarded bytes, dropped no route, dropped down, dropped timeout,\n"
     "dropped closed, dropped error, and 'buffers:', one entry per pool\n"
     "(pool: tiny, small, large; size: payload bytes per buffer, nbuffers,\n"
     "credits (now; below 0, that many wait), min credits, taken).\n"
     "\n"
     "  -t, --table       tables instead of YAML: one row of FORWARDING\n"
     "                    PEER_CRED TIMEOUT WAIT WAIT_MAX HELD_RX FWD\n"
     "                    FWD_BYTES NO_ROUTE DOWN TMO CLOSED ERR, an empty line,\n"
     "                    then one row per pool: POOL SIZE CRED\n"
     "                    (credits/nbuffers) MIN TAKEN\n",
     kTableOption, run_routing_show},
    {"fault add",
     "KIND [ARG] [--peer NID] [--local NID] [--count N] [--prob P] [--delay MS] "
     "[--queue-depth N] [--frags N]",
     "add a fault injection rule",
     "Adds a rule to the module's fault injection table and prints 'fault ID\n"
     "added'.  Needs CAP_NET_ADMIN; at most 32 rules.  KIND and its ARG:\n"
     "\n"
     "  cm-drop EVENT      ignore rdma_cm event EVENT (connect_request: park the\n"
     "                     request unanswered until its deadline)\n"
     "  cm-delay EVENT     handle EVENT --delay MS later\n"
     "  stall PHASE        ignore the events ending connect phase PHASE (addr,\n"
     "                     route or connect): a stuck connect\n"
     "  reject REASON      reject connect requests with REASON, advertising\n"
     "                     --queue-depth and --frags (default: our own values)\n"
     "  msg-drop TYPE      drop received messages of TYPE (credits still count)\n"
     "  msg-corrupt TYPE   flip a byte of received messages of TYPE\n"
     "  send-delay         handle Send completions --delay MS late\n"
     "  inv-fail           take the local invalidation of a fast-registration MR\n"
     "                     as failed: the MR is destroyed and replaced (net show\n"
     "                     -v: bulk.mr_pool.recovered)\n"
     "  post-fail WR       refuse a chain of more than WR work requests posted on a\n"
     "                     connection (a message with its REG_MR and RDMA WRITEs,\n"
     "                     and the messages queued behind it) at its work request\n"
     "                     WR (from 0, 0..255), as a full send queue: those before\n"
     "                     it are posted, the rest fail and the connection closes\n"
     "\n"
     "EVENT: addr_resolved addr_error route_resolved route_error connect_request\n"
     "  connect_response connect_error unreachable rejected established\n"
     "  disconnected device_removal multicast_join multicast_error addr_change\n"
     "  timewait_exit\n"
     "REASON: conn_race no_resources fatal conn_uncompat conn_stale rdma_frags\n"
     "  msg_queue_size invalid_srv_id early\n"
     "TYPE: any noop immediate put_req put_nak put_ack put_done get_req get_done\n"
     "Names are case-insensitive; '-' and '_' are the same.\n"
     "\n"
     "      --peer NID        only for this remote NID (default: any)\n"
     "      --local NID       only on the local NI with this NID (default: any)\n"
     "      --count N         fire N times, then retire (default 0: no limit)\n"
     "      --prob P          chance of firing per match, 0 < P <= 1 (default 1)\n"
     "      --delay MS        cm-delay, send-delay: 1..10000 ms (required)\n"
     "      --queue-depth N   reject: queue depth advertised, 2..255 (0: ours)\n"
     "      --frags N         reject: fragments advertised, 1..257 (0: ours)\n"
     "\n"
     "device_removal cannot be dropped or delayed.\n",
     kFaultAddOptions, run_fault_add},
    {"fault del",
     "ID|all",
     "delete a fault injection rule, or all of them",
     "Prints 'fault ID deleted' or 'all faults deleted'.  Exits 1 for an unknown\n"
     "ID.  Needs CAP_NET_ADMIN.\n",
     {},
     run_fault_del},
    {"fault list", "[-t]", "fault injection rules as YAML",
     "Lists the rules: id, kind, arg, peer, local (a NID or any), count,\n"
     "probability (a fraction), delay ms, fired.  Prints 'fault: []' when there\n"
     "is none.  Needs CAP_NET_ADMIN.\n"
     "\n"
     "  -t, --table       a table instead of YAML, one row per rule: ID KIND ARG\n"
     "                    PEER LOCAL COUNT PROB DELAY_MS FIRED\n",
     kFaultListOptions, run_fault_list},
    {"stats", "[NID] [--net NET] [-v] [-t]",
     "traffic statistics of the local NIs and peers as YAML",
     "Prints, like 'lnetctl stats show', 'statistics:' and one entry per local\n"
     "NI (0@lo included): nid, send count, recv count, drop count, error count,\n"
     "send bytes, recv bytes, tx timeouts, queue full drops, keepalives, early\n"
     "replies.  With -v or a NID, each NI entry also lists its peers ('peers:',\n"
     "the same keys up to tx timeouts per peer; 'peers: []' when it has none).\n"
     "\n"
     "  NID               list only this peer (implies the peer lists)\n"
     "      --net NET     only the NIs of network NET (e.g. o2ib0)\n"
     "  -v, --verbose     add each NI's peers\n"
     "  -t, --table       a table instead of YAML: NID SENT RECV DROP ERR\n"
     "                    BYTES_OUT BYTES_IN TMO QFULL KA EARLY, one row per\n"
     "                    NI; with peers a LOCAL column ('-' for an NI) and one\n"
     "                    row per peer after the row of its NI\n",
     kListOptions, run_stats},
    {"selftest ping",
     "NID [NID...] [--from NID] [--concurrency N] [--duration S | --count N] [--timeout MS] [-y]",
     "ping load test of peers, like 'lst' (lnet_selftest)",
     "Runs N threads that each ping (LNet GET + REPLY, as 'o2ctl ping') back to\n"
     "back, round-robin over the NIDs, until the duration passed or --count pings\n"
     "were made, then reports: rpcs (pings made, failed ones included), rpc/s,\n"
     "msg/s (2 LNet messages per answered ping), the latency of the answered\n"
     "pings in microseconds (min, p50, p99, max; the module's round-trip time,\n"
     "and the wall time around each ioctl), and the ping errors: expired (timed\n"
     "out), dropped (a local drop: no buffer, no memory, connection aborted, I/O\n"
     "error), refused (connection refused, no route) and other.  Stops at once\n"
     "on an error no retry can cure (invalid argument, permission denied).\n"
     "Exits 0 when every ping was answered, 1 otherwise (the report is printed\n"
     "either way).  See also 'selftest brw'.\n"
     "\n"
     "      --from NID        the local NID to send from (default: the module picks)\n"
     "      --concurrency N   threads pinging at once, 1..256 (default 8)\n"
     "      --duration S      seconds to run, 0.1..3600 (default 10)\n"
     "      --count N         stop after N pings in all (instead of --duration)\n"
     "      --timeout MS      per ping, 1..600000 ms (default: the module's, 5 s)\n"
     "  -y, --yaml            the report as YAML ('selftest:' ...)\n",
     kSelftestPingOptions, run_selftest_ping},
    {"selftest brw",
     "write|read NID [NID...] --size SIZE [--check] [--ack] [--seed N] [--from NID] [--concurrency "
     "N] "
     "[--duration S | --count N] [--timeout MS] [-y]",
     "bulk read/write load test of peers, like lnet_selftest's brw",
     "Runs N threads that each make bulk RPCs back to back, round-robin over the\n"
     "NIDs: a write PUTs SIZE bytes to the peer's selftest service; a read\n"
     "GETs SIZE bytes from it.  A checked or routed write (or one with --ack)\n"
     "asks the service for an LNet ACK with its verdict; any other write is\n"
     "over once the peer's transport has acknowledged it.  Payloads above the NI's\n"
     "max_immediate go by RDMA ('net show -v', bulk).  Reports as 'selftest\n"
     "ping' does, plus MiB/s (answered RPCs x SIZE / 2^20 / s), rdma rpcs (how\n"
     "many went by RDMA) and, among the brw errors, verify (the pattern did not\n"
     "verify at either end: EBADMSG).  Exits 0 when every RPC succeeded.\n"
     "\n"
     "  write|read            PUT to the peer, or GET from it\n"
     "      --size SIZE       bytes per RPC, 0..1M; suffixes K, M, KiB, MiB\n"
     "                        (binary: 64K = 65536) (required)\n"
     "      --check           fill the payload with a pattern and verify it at\n"
     "                        the receiving end\n"
     "      --ack             a write asks for the LNet ACK even unchecked\n"
     "      --seed N          the pattern's seed: RPC number i uses N + i (default 0)\n"
     "      --from NID        the local NID to send from (default: the module picks)\n"
     "      --concurrency N   RPCs in flight, 1..256 (default 8)\n"
     "      --duration S      seconds to run, 0.1..3600 (default 10)\n"
     "      --count N         stop after N RPCs in all (instead of --duration)\n"
     "      --timeout MS      per RPC, 1..600000 ms (default: the module's, 5 s)\n"
     "  -y, --yaml            the report as YAML ('selftest:' with mode brw, op,\n"
     "                        size, check, ack, seed, mib_per_s, rdma_rpcs, ...)\n",
     kSelftestBrwOptions, run_selftest_brw},
    {"version",
     "",
     "versions of o2ctl, its ABI and the o2lnd module",
     "Prints YAML: o2ctl version, o2ctl abi, module version, module abi.\n"
     "Exits 1 when the module cannot be asked or speaks another ABI.\n",
     {},
     run_version},
};

}  // namespace

std::vector<std::string_view> command_names() {
  std::vector<std::string_view> out;
  out.reserve(std::size(kCommands));
  for (const auto& c : kCommands) {
    out.push_back(c.name);
  }
  return out;
}

namespace {

std::vector<std::string_view> words(std::string_view name) {
  std::vector<std::string_view> out;
  while (!name.empty()) {
    auto sp = name.find(' ');
    out.push_back(name.substr(0, sp));
    name = sp == std::string_view::npos ? std::string_view{} : name.substr(sp + 1);
  }
  return out;
}

void print_main_help(std::ostream& os) {
  os << "Usage: o2ctl [--device PATH] COMMAND [ARGS...]\n"
        "\n"
        "Control and inspect the o2lnd LNet network driver (/dev/o2lnd).\n"
        "\n"
        "Commands:\n";
  for (const auto& c : kCommands) {
    std::string head = std::string(c.name);
    os << "  " << head << std::string(head.size() < 15 ? 15 - head.size() : 1, ' ') << c.summary
       << "\n";
  }
  os << "  help [COMMAND]\n"
        "\n"
        "Options:\n"
        "  --device PATH  the o2lnd device (default /dev/o2lnd, or $O2LND_DEVICE)\n"
        "  -h, --help     this help\n"
        "\n"
        "Run 'o2ctl COMMAND --help' for the options of a command.\n"
        "Exit status: 0 success, 1 failure, 2 usage error.\n";
}

void print_command_help(std::ostream& os, const Command& c) {
  os << "Usage: o2ctl " << c.name << (c.usage.empty() ? "" : " ") << c.usage << "\n\n"
     << c.summary << ".\n";
  if (!c.help.empty()) {
    os << "\n" << c.help;
  }
}

// The command whose words start `args`, and how many words it took.
std::pair<const Command*, std::size_t> find_command(Args args) {
  const Command* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& c : kCommands) {
    auto w = words(c.name);
    if (w.size() <= args.size() && w.size() > best_len &&
        std::equal(w.begin(), w.end(), args.begin())) {
      best = &c;
      best_len = w.size();
    }
  }
  return {best, best_len};
}

// Commands of a group ("net" -> "net show").
std::vector<const Command*> group(std::string_view first) {
  std::vector<const Command*> out;
  for (const auto& c : kCommands) {
    auto w = words(c.name);
    if (w.size() > 1 && w[0] == first) {
      out.push_back(&c);
    }
  }
  return out;
}

int run_command(Env& env, const Command& c, Args args) {
  std::map<std::string_view, std::string_view> opts;
  std::vector<std::string_view> positional;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    // "-1@o2ib0" is a (bad) NID, not an option: options start with a letter.
    bool looks_like_option = a.size() >= 2 && a[0] == '-' && (a[1] < '0' || a[1] > '9');
    if (options_done || !looks_like_option) {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      print_command_help(env.out, c);
      return kExitOk;
    }
    std::string_view value;
    bool has_value = false;
    if (auto eq = a.find('='); a.starts_with("--") && eq != std::string_view::npos) {
      value = a.substr(eq + 1);
      has_value = true;
      a = a.substr(0, eq);
    }
    auto opt = std::find_if(c.options.begin(), c.options.end(), [a](const Option& o) {
      return a == o.long_name || (!o.short_name.empty() && a == o.short_name);
    });
    if (opt == c.options.end()) {
      env.err << "o2ctl " << c.name << ": unknown option '" << a << "'\n";
      usage_hint(env, c.name);
      return kExitUsage;
    }
    if (opt->takes_value && !has_value) {
      if (i + 1 >= args.size()) {
        env.err << "o2ctl " << c.name << ": option '" << a << "' needs a value\n";
        usage_hint(env, c.name);
        return kExitUsage;
      }
      value = args[++i];
    } else if (!opt->takes_value && has_value) {
      env.err << "o2ctl " << c.name << ": option '" << a << "' takes no value\n";
      return kExitUsage;
    }
    if (opts.contains(opt->long_name)) {
      env.err << "o2ctl " << c.name << ": option '" << opt->long_name << "' given twice\n";
      return kExitUsage;
    }
    opts[opt->long_name] = value;
  }
  return c.run(env, opts, positional);
}

}  // namespace

namespace {

// "600", "0.1": whole seconds, or with the decimals that are needed.
std::string seconds_text(std::chrono::milliseconds ms) {
  std::string out = std::to_string(ms.count() / 1000);
  if (auto frac = ms.count() % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') {
      digits.pop_back();
    }
    out += "." + digits;
  }
  return out;
}

}  // namespace

o2lnd::Result<std::chrono::milliseconds> parse_seconds(std::string_view text,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  const std::string too_large = "too large (at most " + seconds_text(max) + " seconds)";
  if (text.empty()) {
    return invalid("empty");
  }
  std::uint64_t ms = 0;
  std::size_t i = 0;
  std::size_t int_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++int_digits) {
    if (int_digits >= 9) {
      return invalid(too_large);
    }
    ms = ms * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  ms *= 1000;
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::uint64_t scale = 100;
    std::size_t frac_digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits >= 3) {
        return invalid("more precise than a millisecond");
      }
      ms += static_cast<std::uint64_t>(text[i] - '0') * scale;
      scale /= 10;
    }
    if (frac_digits == 0 && int_digits == 0) {
      return invalid("not a number of seconds");
    }
  } else if (int_digits == 0) {
    return invalid("not a number of seconds");
  }
  if (i != text.size()) {
    return invalid("not a number of seconds (unexpected '" + std::string(text.substr(i)) + "')");
  }
  if (ms == 0 && min.count() <= 1) {
    return invalid("must be more than 0 seconds");
  }
  if (ms < static_cast<std::uint64_t>(min.count())) {
    return invalid("too small (at least " + seconds_text(min) + " seconds)");
  }
  if (ms > static_cast<std::uint64_t>(max.count())) {
    return invalid(too_large);
  }
  return std::chrono::milliseconds(ms);
}

o2lnd::Result<std::chrono::milliseconds> parse_timeout(std::string_view text) {
  return parse_seconds(text, std::chrono::milliseconds(1),
                       std::chrono::milliseconds(O2LND_PING_TIMEOUT_MAX_MS));
}

o2lnd::Result<std::uint32_t> parse_uint(std::string_view text, std::uint32_t min,
                                        std::uint32_t max) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  if (text.empty()) {
    return invalid("empty");
  }
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return invalid("not a number");
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > max) {
      break;
    }
  }
  if (value < min || value > max) {
    return invalid("out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
  }
  return static_cast<std::uint32_t>(value);
}

o2lnd::Result<std::uint32_t> parse_probability(std::string_view text) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((whole.empty() && frac.empty()) || !digits(whole) || !digits(frac)) {
    return invalid("not a fraction (expected 0 < P <= 1, e.g. 0.5)");
  }
  if (frac.size() > 6) {
    return invalid("more precise than one in a million");
  }
  std::uint64_t per_million = 0;
  for (char c : whole) {
    per_million = per_million * 10 + static_cast<std::uint64_t>(c - '0');
    if (per_million > 1) {
      return invalid("more than 1 (expected 0 < P <= 1)");
    }
  }
  per_million *= O2LND_FAULT_PROB_ALWAYS;
  std::uint64_t scale = O2LND_FAULT_PROB_ALWAYS / 10;
  for (char c : frac) {
    per_million += static_cast<std::uint64_t>(c - '0') * scale;
    scale /= 10;
  }
  if (per_million == 0) {
    return invalid("must be more than 0");
  }
  if (per_million > O2LND_FAULT_PROB_ALWAYS) {
    return invalid("more than 1 (expected 0 < P <= 1)");
  }
  return static_cast<std::uint32_t>(per_million);
}

int run(Args args, Env& env) {
  // Global options.
  while (!args.empty() && args[0].starts_with("-")) {
    std::string_view a = args[0];
    if (a == "-h" || a == "--help") {
      print_main_help(env.out);
      return kExitOk;
    }
    if (a == "--version") {
      static constexpr std::string_view kVersion[] = {"version"};
      return run(kVersion, env);
    }
    if (a == "--device" && args.size() < 2) {
      env.err << "o2ctl: option '--device' needs a value\n";
      return kExitUsage;
    }
    if (a == "--device") {
      env.device_path = std::string(args[1]);
      args = args.subspan(2);
      continue;
    }
    if (a.starts_with("--device=")) {
      env.device_path = std::string(a.substr(std::strlen("--device=")));
      args = args.subspan(1);
      continue;
    }
    env.err << "o2ctl: unknown option '" << a << "'\n";
    usage_hint(env, "");
    return kExitUsage;
  }
  if (args.empty()) {
    print_main_help(env.err);
    return kExitUsage;
  }
  if (args[0] == "help") {
    if (args.size() == 1) {
      print_main_help(env.out);
      return kExitOk;
    }
    auto [cmd, n] = find_command(args.subspan(1));
    if (cmd == nullptr || n + 1 != args.size()) {
      env.err << "o2ctl: no command '" << args[1] << (args.size() > 2 ? " ..." : "") << "'\n";
      return kExitUsage;
    }
    print_command_help(env.out, *cmd);
    return kExitOk;
  }
  auto [cmd, n] = find_command(args);
  if (cmd == nullptr) {
    auto members = group(args[0]);
    if (members.empty()) {
      env.err << "o2ctl: unknown command '" << args[0] << "'\n";
      usage_hint(env, "");
      return kExitUsage;
    }
    bool asked_help = args.size() > 1 && (args[1] == "--help" || args[1] == "-h");
    std::ostream& os = asked_help ? env.out : env.err;
    if (!asked_help) {
      os << "o2ctl: '" << args[0] << "' needs a subcommand"
         << (args.size() > 1 ? " (unknown: '" + std::string(args[1]) + "')" : "") << "\n";
    }
    os << "Commands of '" << args[0] << "':\n";
    for (const auto* m : members) {
      os << "  o2ctl " << m->name << (m->usage.empty() ? "" : " ") << m->usage << "\n";
    }
    return asked_help ? kExitOk : kExitUsage;
  }
  return run_command(env, *cmd, args.subspan(n));
}

}  // namespace o2ctl
