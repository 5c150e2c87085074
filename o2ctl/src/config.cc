// o2lnd's configuration file: parse and check, print, and the module
// parameters it stands for (config.h).
#include "o2ctl/config.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl::config {
namespace {

// The module's parameters but networks= and routes= (module/params.c,
// module/lnet/router.c); a unit test compares this list with the sources.
constexpr std::array<std::string_view, 24> kTunables = {
    "forwarding",
    "service",
    "peer_credits",
    "peer_credits_hiw",
    "concurrent_sends",
    "ntx",
    "credits",
    "keepalive",
    "cksum",
    "timeout",
    "conns_per_peer",
    "lnet_transaction_timeout",
    "retry_count",
    "ack_timeout",
    "reg_pairs",
    "lnet_peer_discovery_disabled",
    "health_sensitivity",
    "tiny_router_buffers",
    "small_router_buffers",
    "large_router_buffers",
    "peer_buffer_credits",
    "router_timeout",
    "alive_router_check_interval",
    "router_ping_timeout",
};

// lnetctl export's sections that configure what o2lnd does not have or
// does by itself: skipped, with a note.
constexpr std::array<std::string_view, 8> kLnetctlSections = {
    "peer", "global", "numa", "discovery", "udsp", "buffers", "max_intf", "response_tracking",
};

o2lnd::Error error_at(const YAML::Node& node, const std::string& what) {
  return o2lnd::Error{EINVAL, "line " + std::to_string(node.Mark().line + 1) + ": " + what};
}

std::string scalar(const YAML::Node& node) { return node.IsScalar() ? node.Scalar() : ""; }

// "o2ib", "o2ib0", "o2ib12" -> "o2ib0", "o2ib12"; else an Error.
o2lnd::Result<std::string> o2ib_net(const YAML::Node& node, std::string_view what) {
  const std::string text = scalar(node);
  if (text.empty()) {
    return error_at(node, std::string(what) + " must be a network name, e.g. o2ib0");
  }
  auto nid = o2lnd::Nid::parse("1.1.1.1@" + text);
  if (!nid) {
    return error_at(node, std::string(what) + " '" + text + "' is not a network name");
  }
  if (nid->type() != static_cast<std::uint16_t>(o2lnd::NetType::kO2ib)) {
    return error_at(node, std::string(what) + " '" + text + "': o2lnd drives o2ib networks only");
  }
  return o2lnd::net_name(nid->net());
}

o2lnd::Result<std::int64_t> integer(const YAML::Node& node, std::string_view what, std::int64_t min,
                                    std::int64_t max) {
  const std::string text = scalar(node);
  std::int64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v < min || v > max) {
    return error_at(node, std::string(what) + " must be an integer in " + std::to_string(min) +
                              ".." + std::to_string(max) + ", not '" + text + "'");
  }
  return v;
}

// An interface name the networks= parameter can carry.
bool iface_ok(std::string_view name) {
  return !name.empty() && name.size() < 16 && std::ranges::none_of(name, [](char c) {
    return c <= ' ' || c == ',' || c == '(' || c == ')' || c == '"' || c == '/' || c == ':' ||
           c == ';' || c > '~';
  });
}

// The forwarding parameter's value: "enabled" or "disabled" (1 or 0, as
// lnetctl's routing: enable: has it).
o2lnd::Result<std::string> forwarding(const YAML::Node& node) {
  const std::string v = scalar(node);
  if (v == "enabled" || v == "1") {
    return std::string("enabled");
  }
  if (v == "disabled" || v == "0") {
    return std::string("disabled");
  }
  return error_at(node, "forwarding must be enabled or disabled, not '" + v + "'");
}

o2lnd::Result<bool> parse_nets(const YAML::Node& nets, Config& out) {
  if (!nets.IsSequence()) {
    return error_at(nets, "net must be a list of networks");
  }
  for (const auto& n : nets) {
    if (!n.IsMap()) {
      return error_at(n, "each net must be a map with 'net type' and 'local NI(s)'");
    }
    const YAML::Node type = n["net type"];
    if (!type) {
      return error_at(n, "a net without 'net type'");
    }
    if (scalar(type) == "lo") {
      continue;  // lnetctl's loopback net: o2lnd's is implicit
    }
    auto net = o2ib_net(type, "net type");
    if (!net) {
      return net.error();
    }
    const YAML::Node nis = n["local NI(s)"];
    if (!nis || !nis.IsSequence() || nis.size() == 0) {
      return error_at(n, "net " + *net + " has no 'local NI(s)' list");
    }
    for (const auto& ni : nis) {
      const YAML::Node ifs = ni.IsMap() ? ni["interfaces"] : YAML::Node();
      if (!ifs || !(ifs.IsMap() || ifs.IsSequence()) || ifs.size() == 0) {
        return error_at(ni, "an NI of " + *net + " without 'interfaces'");
      }
      if (ifs.size() != 1) {
        return error_at(ifs, "an NI of " + *net + " has " + std::to_string(ifs.size()) +
                                 " interfaces: o2lnd takes one per NI (list them as NIs)");
      }
      const YAML::Node name = ifs.IsMap() ? ifs.begin()->second : ifs[0];
      if (!iface_ok(scalar(name))) {
        return error_at(name, "'" + scalar(name) + "' is not an interface name");
      }
      NetIf nif{*net, scalar(name)};
      if (std::ranges::find(out.nets, nif) != out.nets.end()) {
        return error_at(name, *net + " on " + nif.iface + " is listed twice");
      }
      out.nets.push_back(nif);
      for (const auto& kv : ni) {
        const std::string key = kv.first.Scalar();
        if (key == "tunables" || key == "lnd tunables" || key == "CPT") {
          out.skipped.push_back("line " + std::to_string(kv.first.Mark().line + 1) + ": " + key +
                                " of " + *net + " on " + nif.iface +
                                " (o2lnd's tunables are module-wide: the 'tunables' section)");
        }
      }
    }
  }
  return true;
}

o2lnd::Result<bool> parse_routes(const YAML::Node& routes, Config& out) {
  if (!routes.IsSequence()) {
    return error_at(routes, "route must be a list of routes");
  }
  for (const auto& r : routes) {
    if (!r.IsMap() || !r["net"] || !r["gateway"]) {
      return error_at(r, "a route needs 'net' and 'gateway'");
    }
    auto net = o2ib_net(r["net"], "route net");
    if (!net) {
      return net.error();
    }
    auto gw = o2lnd::Nid::parse(scalar(r["gateway"]));
    if (!gw) {
      return error_at(r["gateway"],
                      "gateway '" + scalar(r["gateway"]) + "' is not a NID: " + gw.error().message);
    }
    if (gw->type() != static_cast<std::uint16_t>(o2lnd::NetType::kO2ib)) {
      return error_at(r["gateway"], "gateway " + gw->str() + " is not on an o2ib network");
    }
    Route route{*net, gw->str()};
    if (r["hop"]) {
      auto hops = integer(r["hop"], "hop", -1, 255);
      if (!hops) {
        return hops.error();
      }
      if (*hops == 0) {
        return error_at(r["hop"], "hop must be -1 (not given) or 1..255");
      }
      route.hops = static_cast<int>(*hops);
    }
    if (r["priority"]) {
      auto prio = integer(r["priority"], "priority", 0, 0x7fffffff);
      if (!prio) {
        return prio.error();
      }
      route.priority = static_cast<std::uint32_t>(*prio);
    }
    const bool twice = std::ranges::any_of(out.routes, [&](const Route& o) {
      return o.net == route.net && o.gateway == route.gateway;
    });
    if (twice) {
      return error_at(r,
                      "the route to " + route.net + " via " + route.gateway + " is listed twice");
    }
    out.routes.push_back(route);
  }
  return true;
}

o2lnd::Result<bool> parse_tunables(const YAML::Node& tunables, Config& out) {
  if (!tunables.IsMap()) {
    return error_at(tunables, "tunables must be a map of name: value");
  }
  for (const auto& kv : tunables) {
    const std::string name = kv.first.Scalar();
    if (std::ranges::find(kTunables, name) == kTunables.end()) {
      return error_at(kv.first, "unknown tunable '" + name + "'");
    }
    if (std::ranges::any_of(out.tunables, [&](const auto& t) { return t.first == name; })) {
      return error_at(kv.first, "tunable '" + name + "' is set twice");
    }
    if (name == "forwarding") {
      auto on = forwarding(kv.second);
      if (!on) {
        return on.error();
      }
      out.tunables.emplace_back(name, *on);
      continue;
    }
    // the module checks each one's range at load (some take -1: auto)
    auto v = integer(kv.second, name, INT32_MIN, INT32_MAX);
    if (!v) {
      return v.error();
    }
    out.tunables.emplace_back(name, std::to_string(*v));
  }
  return true;
}

// lnetctl's `routing: {enable: 1}`: forwarding on (a router).
o2lnd::Result<bool> parse_routing(const YAML::Node& routing, Config& out) {
  if (!routing.IsMap() || !routing["enable"]) {
    return error_at(routing, "routing must be a map with 'enable: 0|1'");
  }
  auto on = forwarding(routing["enable"]);
  if (!on) {
    return on.error();
  }
  if (std::ranges::none_of(out.tunables, [](const auto& t) { return t.first == "forwarding"; })) {
    out.tunables.emplace_back("forwarding", *on);
  }
  return true;
}

// What parse() checks across sections: every route's gateway on a
// configured network, no route to a configured network.
o2lnd::Result<bool> check_routes(const YAML::Node& routes, const Config& c) {
  std::set<std::string> local;
  for (const auto& n : c.nets) {
    local.insert(n.net);
  }
  for (std::size_t i = 0; i < c.routes.size(); i++) {
    const Route& r = c.routes[i];
    const std::string gw_net = r.gateway.substr(r.gateway.find('@') + 1);
    if (local.count(r.net) != 0) {
      return error_at(routes[i], "a route to " + r.net + ", which is a configured network");
    }
    if (local.count(gw_net) == 0) {
      return error_at(routes[i], "gateway " + r.gateway + " is not on a configured network");
    }
  }
  return true;
}

}  // namespace

std::span<const std::string_view> tunable_names() { return kTunables; }

o2lnd::Result<Config> parse(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return o2lnd::Error{EINVAL, "line " + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg};
  }
  if (!root.IsMap()) {
    return o2lnd::Error{EINVAL,
                        "not a configuration: the file must be a YAML map with a "
                        "'net' section"};
  }
  Config c;
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      o2lnd::Result<bool> ok = true;
      if (key == "net") {
        ok = parse_nets(kv.second, c);
      } else if (key == "route") {
        ok = parse_routes(kv.second, c);
      } else if (key == "tunables") {
        ok = parse_tunables(kv.second, c);
      } else if (key == "routing") {
        ok = parse_routing(kv.second, c);
      } else if (std::ranges::find(kLnetctlSections, key) != kLnetctlSections.end()) {
        c.skipped.push_back("section '" + key + "' (lnetctl's; o2lnd has no use for it)");
      } else {
        return error_at(kv.first, "unknown section '" + key +
                                      "' (o2lnd takes net, route, "
                                      "routing and tunables)");
      }
      if (!ok) {
        return ok.error();
      }
    }
    if (c.nets.empty()) {
      return o2lnd::Error{EINVAL, "no o2ib network: the 'net' section must list one"};
    }
    if (root["route"]) {
      auto ok = check_routes(root["route"], c);
      if (!ok) {
        return ok.error();
      }
    }
  } catch (const YAML::Exception& e) {
    return o2lnd::Error{EINVAL, "line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  return c;
}

std::string to_yaml(const Config& config) {
  std::ostringstream o;
  o << "net:\n";
  for (const auto& n : config.nets) {
    o << "    - net type: " << n.net << "\n"
      << "      local NI(s):\n"
      << "        - interfaces:\n"
      << "              0: " << n.iface << "\n";
  }
  if (!config.routes.empty()) {
    o << "route:\n";
    for (const auto& r : config.routes) {
      o << "    - net: " << r.net << "\n"
        << "      gateway: " << r.gateway << "\n"
        << "      hop: " << r.hops << "\n"
        << "      priority: " << r.priority << "\n";
    }
  }
  if (!config.tunables.empty()) {
    o << "tunables:\n";
    for (const auto& [name, value] : config.tunables) {
      o << "    " << name << ": " << value << "\n";
    }
  }
  return o.str();
}

std::vector<std::string> module_options(const Config& config) {
  // networks: each network once, its interfaces in the file's order
  std::vector<std::pair<std::string, std::vector<std::string>>> nets;
  for (const auto& n : config.nets) {
    auto it = std::ranges::find_if(nets, [&](const auto& e) { return e.first == n.net; });
    if (it == nets.end()) {
      nets.push_back({n.net, {n.iface}});
    } else {
      it->second.push_back(n.iface);
    }
  }
  std::string networks;
  for (const auto& [net, ifs] : nets) {
    networks += (networks.empty() ? "" : " ") + net + "(";
    for (std::size_t i = 0; i < ifs.size(); i++) {
      networks += (i != 0 ? "," : "") + ifs[i];
    }
    networks += ")";
  }
  std::vector<std::string> opts{"networks=\"" + networks + "\""};
  if (!config.routes.empty()) {
    std::string routes;
    for (const auto& r : config.routes) {
      routes += (routes.empty() ? "" : "; ") + r.net + " " +
                (r.hops > 0 ? std::to_string(r.hops) + " " : "") + r.gateway + ":" +
                std::to_string(r.priority);
    }
    opts.push_back("routes=\"" + routes + "\"");
  }
  for (const auto& [name, value] : config.tunables) {
    std::string opt = name;
    opt += '=';
    opt += value;
    opts.push_back(std::move(opt));
  }
  return opts;
}

}  // namespace o2ctl::config
