// o2ctl ping, discover: an LNet ping of a NID, and a discovery of a peer.

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/nid.h"

namespace o2ctl::cmd {
namespace {

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

}  // namespace

constinit const Command kPingCommand = {
    "ping",
    "NID [TIMEOUT] [--timeout S] [--source NID]",
    "LNet ping of NID; prints the target's NIDs like 'lctl ping'",
    "Prints one line PID-NID for each NID the target reports (the first is\n"
    "12345-0@lo).  On failure prints 'failed to ping NID: ERROR' and exits 1.\n"
    "\n"
    "  -t, --timeout S   seconds to wait for the reply (fractions allowed, e.g.\n"
    "                    0.5; at most 600).  TIMEOUT as a second argument is\n"
    "                    the same, as in 'lctl ping NID TIMEOUT'.  Default: the\n"
    "                    module's (5 s).\n"
    "  -s, --source NID  the local NID to send from (default: the module picks)\n",
    kPingOptions,
    run_ping};

constinit const Command kDiscoverCommand = {
    "discover",
    "NID [--timeout S]",
    "discover a peer's NIDs, like 'lnetctl discover'",
    "Pings NID, learns the peer's NIDs from the reply and, when the peer does\n"
    "discovery, pushes our NIDs to it and waits for its ACK.  Prints the peer\n"
    "as 'peer list' does, under 'discover:'.  On failure prints 'failed to\n"
    "discover NID: ERROR' and exits 1.  Needs CAP_NET_ADMIN.\n"
    "\n"
    "  -t, --timeout S   seconds to wait for the reply and for the ACK each\n"
    "                    (default: the module's ping timeout, 5 s)\n",
    kDiscoverOptions,
    run_discover};

}  // namespace o2ctl::cmd
