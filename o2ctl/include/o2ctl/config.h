// o2lnd's configuration file (/etc/o2lnd.conf), as LNet sites keep
// theirs (`lnetctl export > /etc/lnet.conf`, `lnetctl import`): YAML with
// the networks and their interfaces, the routes, and o2lnd's tunables.
//
//   net:
//       - net type: o2ib0
//         local NI(s):
//           - interfaces:
//                 0: eth0
//   route:
//       - net: o2ib1
//         gateway: 192.168.1.3@o2ib0
//         hop: 1
//         priority: 0
//   tunables:
//       peer_credits: 16
//
// lnetctl's own export reads too: its `lo` net, the per-NI status, NIDs
// and LND tunables, and the sections o2lnd has no use for (peer, global,
// numa, discovery, ...) are skipped, each named in Config::skipped.
// Pure functions: parse() checks everything it can without the module.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2lnd/result.h"

namespace o2ctl::config {

// One NI: a network over an interface.
struct NetIf {
  std::string net;    // "o2ib0"
  std::string iface;  // "eth0"
  bool operator==(const NetIf&) const = default;
};

// One route to a remote network, as the routes= parameter has it.
struct Route {
  std::string net;      // the remote network, "o2ib1"
  std::string gateway;  // its gateway's NID, on a configured network
  int hops = -1;        // -1: not given (the module takes 1)
  std::uint32_t priority = 0;
  bool operator==(const Route&) const = default;
};

struct Config {
  std::vector<NetIf> nets;
  std::vector<Route> routes;
  // o2lnd's tunables (module parameters other than networks and routes),
  // name and decimal value, in the file's order.
  std::vector<std::pair<std::string, std::string>> tunables;
  // What an lnetctl export holds that o2lnd does not take ("section
  // 'peer'", "line 12: lnd tunables of 192.168.1.2@o2ib"), for a note.
  std::vector<std::string> skipped;
};

// The tunables o2lnd takes (its module parameters but networks= and
// routes=), in the order `o2ctl export` prints them.
std::span<const std::string_view> tunable_names();

// Parses and checks a configuration; an Error (EINVAL) names the line and
// what is wrong.  Nothing is applied.
o2lnd::Result<Config> parse(std::string_view text);

// The configuration as YAML, in the form parse() reads back the same.
std::string to_yaml(const Config& config);

// The module parameters that load o2lnd with `config`, one per element:
// networks="o2ib0(eth0) o2ib1(eth1,eth2)", routes="o2ib1 1
// 192.168.1.3@o2ib0:0", then each tunable (name=value).  Joined with
// spaces they are an `options o2lnd ...` line of modprobe.d(5).
std::vector<std::string> module_options(const Config& config);

}  // namespace o2ctl::config
