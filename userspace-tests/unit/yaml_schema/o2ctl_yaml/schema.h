// The structure of o2ctl's YAML, checked with a real YAML parser (yaml-cpp):
// every key of every entry, and the type each value resolves to under the
// YAML core schema (a NID is a string, a count an integer, "active" a
// boolean).  Shared by the host unit tests (fake kernel) and the guest
// integration test (the real module).  Also reads o2ctl's -t tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/counters.h"
#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl_yaml {

// What a value is.  kNumber: an integer or a float (probability).  kNid: a
// string that parses as a canonical NID; kNidOrAny: that or "any".
// kIntOrNever: an integer or "never" (a peer's alive ms).
enum class Kind {
  kInt,
  kNumber,
  kStr,
  kNid,
  kNidOrAny,
  kIntOrNever,
  kBool,
  kNull,
  kMap,
  kSeq,
  kUndefined
};

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kInt:
      return "integer";
    case Kind::kNumber:
      return "number";
    case Kind::kStr:
      return "string";
    case Kind::kNid:
      return "NID";
    case Kind::kNidOrAny:
      return "NID or any";
    case Kind::kIntOrNever:
      return "integer or never";
    case Kind::kBool:
      return "boolean";
    case Kind::kNull:
      return "null";
    case Kind::kMap:
      return "map";
    case Kind::kSeq:
      return "sequence";
    default:
      return "undefined";
  }
}

// How a scalar resolves: quoted scalars are strings; plain ones by the YAML
// 1.2 core schema, plus the YAML 1.1 booleans (yes/no/on/off/y/n) that
// PyYAML and yaml-cpp's as<bool> still take, so such words count as
// booleans and must be quoted to be strings.
inline Kind scalar_kind(const YAML::Node& n) {
  if (n.Tag() == "!") {
    return Kind::kStr;  // quoted: a string whatever it says
  }
  const std::string& s = n.Scalar();
  static const std::regex kIntRe("[-+]?[0-9]+");
  static const std::regex kFloatRe(R"([-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)");
  static const std::regex kBoolRe(
      "(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|"
      "on|On|ON|off|Off|OFF)");
  static const std::regex kNullRe("(~|null|Null|NULL|)");
  static const std::regex kSpecialFloatRe(R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  if (std::regex_match(s, kIntRe)) {
    return Kind::kInt;
  }
  if (std::regex_match(s, kFloatRe) || std::regex_match(s, kSpecialFloatRe)) {
    return Kind::kNumber;
  }
  if (std::regex_match(s, kBoolRe)) {
    return Kind::kBool;
  }
  if (std::regex_match(s, kNullRe)) {
    return Kind::kNull;
  }
  return Kind::kStr;
}

inline Kind node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return Kind::kMap;
    case YAML::NodeType::Sequence:
      return Kind::kSeq;
    case YAML::NodeType::Null:
      return Kind::kNull;
    case YAML::NodeType::Scalar:
      return scalar_kind(n);
    default:
      return Kind::kUndefined;
  }
}

// Whether `n` is of kind `want` (an integer is also a number; a NID is a
// string that round-trips through o2lnd::Nid).
inline bool is_kind(const YAML::Node& n, Kind want) {
  Kind have = node_kind(n);
  switch (want) {
    case Kind::kInt:
      if (have != Kind::kInt) {
        return false;
      }
      // and it converts (int64 or, for large counters, uint64)
      try {
        if (n.Scalar().starts_with("-")) {
          (void)n.as<std::int64_t>();
        } else {
          (void)n.as<std::uint64_t>();
        }
      } catch (const YAML::Exception&) {
        return false;
      }
      return true;
    case Kind::kNumber:
      return have == Kind::kInt || have == Kind::kNumber;
    case Kind::kIntOrNever:
      return (have == Kind::kStr && n.Scalar() == "never") || is_kind(n, Kind::kInt);
    case Kind::kNid:
    case Kind::kNidOrAny: {
      if (have != Kind::kStr) {
        return false;
      }
      const std::string& s = n.Scalar();
      if (want == Kind::kNidOrAny && s == "any") {
        return true;
      }
      auto nid = o2lnd::Nid::parse(s);
      return nid.ok() && nid->str() == s;
    }
    default:
      return have == want;
  }
}

struct Field {
  std::string key;
  Kind kind;
  bool optional = false;
};

// Problems found; empty means the YAML has the expected structure.
class Check {
 public:
  void fail(const std::string& what) { problems_.push_back(what); }
  [[nodiscard]] bool ok() const { return problems_.empty(); }
  [[nodiscard]] std::string str() const {
    std::ostringstream os;
    for (const auto& p : problems_) {
      os << "  - " << p << "\n";
    }
    return os.str();
  }

  // `node` is a map with exactly `fields` (optional ones may be missing),
  // each of its kind, no key twice.
  bool map(const YAML::Node& node, const std::vector<Field>& fields, const std::string& where) {
    if (!node.IsMap()) {
      fail(where + ": not a map");
      return false;
    }
    bool good = true;
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        fail(where + ": a key that is not a scalar");
        good = false;
        continue;
      }
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) {
        fail(msg(where, {": key '", key, "' twice"}));
        good = false;
      }
      const Field* f = nullptr;
      for (const auto& cand : fields) {
        if (cand.key == key) {
          f = &cand;
        }
      }
      if (f == nullptr) {
        fail(msg(where, {": unexpected key '", key, "'"}));
        good = false;
      } else if (!is_kind(kv.second, f->kind)) {
        fail(msg(where, {": '", key, "' is not a ", kind_name(f->kind), " (",
                         kind_name(node_kind(kv.second)), ": '",
                         kv.second.IsScalar() ? kv.second.Scalar() : std::string("..."), "')"}));
        good = false;
      }
    }
    for (const auto& f : fields) {
      if (!f.optional && !seen.contains(f.key)) {
        fail(where + ": no '" + f.key + "'");
        good = false;
      }
    }
    return good;
  }

  // Parses `yaml` (one document); a parse error is a problem.
  YAML::Node load(const std::string& yaml) {
    try {
      return YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      fail(std::string("does not parse: ") + e.what());
      return {};
    }
  }

  // The sequence under top-level `key` of a map that has only that key.
  YAML::Node top_list(const YAML::Node& doc, const std::string& key) {
    if (!map(doc, {{key, Kind::kSeq}}, "document")) {
      return {};
    }
    return doc[key];
  }

 private:
  static std::string msg(const std::string& where, std::initializer_list<std::string_view> parts) {
    std::string out = where;
    for (auto part : parts) {
      out += part;
    }
    return out;
  }

  std::vector<std::string> problems_;
};

// What one o2ctl output held: its entries, and the entries nested in them
// (NIs of `net show`, peers of `stats -v`).
struct Shape {
  Check check;
  std::size_t entries = 0;
  std::size_t nested = 0;
};

// The keys of the counters of a uapi list (o2lnd/counters.h, from
// include/uapi/o2lnd_counters.h) that o2ctl prints under `view`, each an
// integer, appended to `f`: a counter added to a list is expected in the
// YAML without an edit here.
template <std::size_t N>
void add_counters(std::vector<Field>& f, const std::array<o2lnd::CounterInfo, N>& list,
                  std::string_view view) {
  for (const auto& c : list) {
    if (c.view == view) {
      f.push_back({std::string(c.key), Kind::kInt});
    }
  }
}

// The counters of an NI and of a peer in `o2ctl stats`: the peer list's
// traffic view, and its tx timeouts (verbose in `peer show`, traffic here).
inline std::vector<Field> traffic_fields() {
  std::vector<Field> f;
  add_counters(f, o2lnd::kPeerCounters, "traffic");
  f.push_back({"tx timeouts", Kind::kInt});
  return f;
}

// `o2ctl net show [-v]`: entries = networks, nested = NIs.
inline Shape net_show(const std::string& yaml, bool verbose) {
  Shape s;
  auto nets = s.check.top_list(s.check.load(yaml), "net");
  for (std::size_t i = 0; nets && i < nets.size(); ++i) {
    ++s.entries;
    std::string where = "net[" + std::to_string(i) + "]";
    if (!s.check.map(nets[i], {{"net type", Kind::kStr}, {"local NI(s)", Kind::kSeq}}, where)) {
      continue;
    }
    auto nis = nets[i]["local NI(s)"];
    for (std::size_t j = 0; j < nis.size(); ++j) {
      ++s.nested;
      std::string w = where + ".ni[" + std::to_string(j) + "]";
      std::vector<Field> f = {
          {"nid", Kind::kNid}, {"status", Kind::kStr}, {"interfaces", Kind::kMap, true}};
      if (verbose) {
        f.push_back({"statistics", Kind::kMap});
        f.push_back({"health stats", Kind::kMap});
        f.push_back({"tunables", Kind::kMap});
        f.push_back({"tx_credits", Kind::kMap});
        f.push_back({"bulk", Kind::kMap});
        f.push_back({"lnd details", Kind::kMap});
      }
      if (!s.check.map(nis[j], f, w)) {
        continue;
      }
      if (nis[j]["interfaces"]) {
        s.check.map(nis[j]["interfaces"], {{"0", Kind::kStr}}, w + ".interfaces");
      }
      if (!verbose) {
        continue;
      }
      std::vector<Field> stats;
      add_counters(stats, o2lnd::kNiCounters, "stats");
      s.check.map(nis[j]["statistics"], stats, w + ".statistics");
      s.check.map(nis[j]["health stats"], {{"health value", Kind::kInt}}, w + ".health stats");
      s.check.map(nis[j]["tunables"],
                  {{"peer_timeout", Kind::kInt},
                   {"peer_credits", Kind::kInt},
                   {"credits", Kind::kInt},
                   {"max_msg_size", Kind::kInt},
                   {"peercredits_hiw", Kind::kInt},
                   {"concurrent_sends", Kind::kInt},
                   {"ntx", Kind::kInt},
                   {"keepalive", Kind::kInt}},
                  w + ".tunables");
      s.check.map(nis[j]["tx_credits"],
                  {{"max", Kind::kInt},
                   {"available", Kind::kInt},
                   {"min", Kind::kInt},
                   {"queued", Kind::kInt}},
                  w + ".tx_credits");
      if (s.check.map(nis[j]["bulk"],
                      {{"max_immediate", Kind::kInt},
                       {"max_frags", Kind::kInt},
                       {"cksum", Kind::kInt},
                       {"mr_pool", Kind::kMap}},
                      w + ".bulk")) {
        if (s.check.map(nis[j]["bulk"]["mr_pool"],
                        {{"size", Kind::kInt},
                         {"used", Kind::kInt},
                         {"max_pages", Kind::kInt},
                         {"recovered", Kind::kInt}},
                        w + ".bulk.mr_pool")) {
          auto mr = nis[j]["bulk"]["mr_pool"];
          if (mr["used"].as<std::uint64_t>() > mr["size"].as<std::uint64_t>()) {
            s.check.fail(w + ".bulk.mr_pool: more MRs used than the pool has");
          }
        }
      }
      std::vector<Field> lnd = {
          {"rdma device", Kind::kStr, true}, {"incarnation", Kind::kInt}, {"peers", Kind::kInt},
          {"connections", Kind::kInt},       {"established", Kind::kInt}, {"tx_live", Kind::kInt}};
      add_counters(lnd, o2lnd::kNiCounters, "lnd");
      s.check.map(nis[j]["lnd details"], lnd, w + ".lnd details");
    }
  }
  return s;
}

// `o2ctl peer show [-v]`
inline Shape peer_show(const std::string& yaml, bool verbose) {
  Shape s;
  auto peers = s.check.top_list(s.check.load(yaml), "peer");
  std::vector<Field> f = {{"nid", Kind::kNid},
                          {"local nid", Kind::kNid},
                          {"state", Kind::kStr},
                          {"conns connecting", Kind::kInt},
                          {"conns established", Kind::kInt},
                          {"conns closing", Kind::kInt},
                          {"conns zombie", Kind::kInt},
                          {"tx queued", Kind::kInt},
                          {"next retry ms", Kind::kInt},
                          {"tx credits", Kind::kInt},
                          {"tx credits max", Kind::kInt},
                          {"tx credits min", Kind::kInt},
                          {"credit queued", Kind::kInt},
                          {"router credits", Kind::kInt},
                          {"router credits max", Kind::kInt},
                          {"router credits min", Kind::kInt},
                          {"router queued", Kind::kInt},
                          {"health", Kind::kStr}};
  if (verbose) {
    for (const char* k : {"incarnation", "last error", "backoff ms", "failures", "downs"}) {
      f.push_back({k, Kind::kInt});
    }
    add_counters(f, o2lnd::kPeerCounters, "verbose");
    f.push_back({"last reject", Kind::kStr});
    f.push_back({"alive ms", Kind::kIntOrNever});
  }
  for (std::size_t i = 0; peers && i < peers.size(); ++i) {
    ++s.entries;
    s.check.map(peers[i], f, "peer[" + std::to_string(i) + "]");
  }
  return s;
}

// `o2ctl route show`: entries = routes.  Also checks that net names a
// network (o2ib1), that state is up or down and that hop is at least 1.
// `o2ctl peer list` ("peer") and `o2ctl discover` ("discover"): entries =
// LNet peers, nested = their NIDs.
inline Shape lnet_peers(const std::string& yaml, const std::string& top) {
  Shape s;
  auto peers = s.check.top_list(s.check.load(yaml), top);
  for (std::size_t i = 0; peers && i < peers.size(); ++i) {
    ++s.entries;
    std::string where = top + "[" + std::to_string(i) + "]";
    if (!s.check.map(peers[i],
                     {{"primary nid", Kind::kNid},
                      {"Multi-Rail", Kind::kBool},
                      {"discovery", Kind::kBool},
                      {"routing", Kind::kBool},
                      {"pushed", Kind::kBool},
                      {"pushed to us", Kind::kBool},
                      {"seqno", Kind::kInt},
                      {"nids", Kind::kInt},
                      {"peer ni", Kind::kSeq}},
                     where)) {
      continue;
    }
    auto nis = peers[i]["peer ni"];
    for (std::size_t j = 0; j < nis.size(); ++j) {
      ++s.nested;
      s.check.map(nis[j],
                  {{"nid", Kind::kNid},
                   {"state", Kind::kStr},
                   {"health value", Kind::kInt},
                   {"selected", Kind::kInt},
                   {"failures", Kind::kInt}},
                  where + ".peer ni[" + std::to_string(j) + "]");
    }
  }
  return s;
}

inline Shape route_show(const std::string& yaml) {
  Shape s;
  auto routes = s.check.top_list(s.check.load(yaml), "route");
  std::vector<Field> f = {{"net", Kind::kStr},
                          {"gateway", Kind::kNid},
                          {"hop", Kind::kInt},
                          {"priority", Kind::kInt},
                          {"state", Kind::kStr}};
  add_counters(f, o2lnd::kRouteCounters, "show");
  for (std::size_t i = 0; routes && i < routes.size(); ++i) {
    ++s.entries;
    std::string where = "route[" + std::to_string(i) + "]";
    if (!s.check.map(routes[i], f, where)) {
      continue;
    }
    const std::string net = routes[i]["net"].Scalar();
    auto nid = o2lnd::Nid::parse("1.2.3.4@" + net);
    if (!nid.ok() || o2lnd::net_name(nid->net()) != net) {
      s.check.fail(
          std::string(where).append(": net '").append(net).append("' is not a network name"));
    }
    const std::string state = routes[i]["state"].Scalar();
    if (state != "up" && state != "down") {
      s.check.fail(
          std::string(where).append(": state '").append(state).append("' is not up or down"));
    }
    if (routes[i]["hop"].as<std::int64_t>() < 1) {
      s.check.fail(where + ": hop below 1");
    }
  }
  return s;
}

// `o2ctl routing show`: entries = pools (tiny, small, large in that order).
// Also checks forwarding (enabled or disabled) and that no pool has more
// credits than buffers.
inline Shape routing_show(const std::string& yaml) {
  Shape s;
  auto doc = s.check.load(yaml);
  if (!s.check.map(doc, {{"routing", Kind::kMap}}, "document")) {
    return s;
  }
  auto r = doc["routing"];
  std::vector<Field> f = {{"forwarding", Kind::kStr}, {"buffers", Kind::kSeq}};
  for (const char* k :
       {"peer buffer credits", "router timeout", "waiting", "waiting max", "held rx"}) {
    f.push_back({k, Kind::kInt});
  }
  add_counters(f, o2lnd::kRoutingCounters, "show");
  if (!s.check.map(r, f, "routing")) {
    return s;
  }
  const std::string fwd = r["forwarding"].Scalar();
  if (fwd != "enabled" && fwd != "disabled") {
    s.check.fail("routing: forwarding '" + fwd + "' is not enabled or disabled");
  }
  const std::vector<Field> pf = {{"pool", Kind::kStr},        {"size", Kind::kInt},
                                 {"nbuffers", Kind::kInt},    {"credits", Kind::kInt},
                                 {"min credits", Kind::kInt}, {"taken", Kind::kInt}};
  const std::vector<std::string> names = {"tiny", "small", "large"};
  auto pools = r["buffers"];
  if (pools.size() != names.size()) {
    s.check.fail("routing.buffers: " + std::to_string(pools.size()) + " pools, not 3");
  }
  for (std::size_t i = 0; i < pools.size(); ++i) {
    ++s.entries;
    std::string where = "routing.buffers[" + std::to_string(i) + "]";
    if (!s.check.map(pools[i], pf, where)) {
      continue;
    }
    if (i < names.size() && pools[i]["pool"].Scalar() != names[i]) {
      s.check.fail(where + ": pool '" + pools[i]["pool"].Scalar() + "', expected " + names[i]);
    }
    if (pools[i]["credits"].as<std::int64_t>() > pools[i]["nbuffers"].as<std::int64_t>()) {
      s.check.fail(where + ": more credits than buffers");
    }
  }
  return s;
}

// `o2ctl conn show`
inline Shape conn_show(const std::string& yaml) {
  Shape s;
  auto conns = s.check.top_list(s.check.load(yaml), "conn");
  std::vector<Field> f = {{"peer", Kind::kNid},
                          {"local nid", Kind::kNid},
                          {"state", Kind::kStr},
                          {"phase", Kind::kStr},
                          {"active", Kind::kBool}};
  for (const char* k :
       {"age ms", "deadline ms", "queue depth", "max frags", "credits", "outstanding", "posted",
        "tx queued", "error", "qp", "rx buffers", "reserved credits", "concurrent sends", "sq size",
        "sq free", "noops posted", "noops queued", "idle ms"}) {
    f.push_back({k, Kind::kInt});
  }
  add_counters(f, o2lnd::kConnCounters, "show");
  f.push_back({"comp vector", Kind::kInt});   // ABI 10
  f.push_back({"comp vectors", Kind::kInt});  // ABI 10
  for (std::size_t i = 0; conns && i < conns.size(); ++i) {
    ++s.entries;
    s.check.map(conns[i], f, "conn[" + std::to_string(i) + "]");
  }
  return s;
}

// `o2ctl fault list`
inline Shape fault_list(const std::string& yaml) {
  Shape s;
  auto rules = s.check.top_list(s.check.load(yaml), "fault");
  std::vector<Field> f = {{"id", Kind::kInt},
                          {"kind", Kind::kStr},
                          {"arg", Kind::kStr},
                          {"peer", Kind::kNidOrAny},
                          {"local", Kind::kNidOrAny},
                          {"count", Kind::kInt},
                          {"probability", Kind::kNumber},
                          {"delay ms", Kind::kInt},
                          {"fired", Kind::kInt}};
  for (std::size_t i = 0; rules && i < rules.size(); ++i) {
    ++s.entries;
    std::string where = "fault[" + std::to_string(i) + "]";
    if (s.check.map(rules[i], f, where)) {
      auto p = rules[i]["probability"].as<double>();
      if (!(p > 0 && p <= 1)) {
        s.check.fail(where + ": probability " + rules[i]["probability"].Scalar() +
                     " not in (0, 1]");
      }
    }
  }
  return s;
}

// `o2ctl stats [-v|NID]`: entries = NIs, nested = peers.
inline Shape stats(const std::string& yaml, bool with_peers) {
  Shape s;
  auto nis = s.check.top_list(s.check.load(yaml), "statistics");
  for (std::size_t i = 0; nis && i < nis.size(); ++i) {
    ++s.entries;
    std::string where = "statistics[" + std::to_string(i) + "]";
    std::vector<Field> f = traffic_fields();
    f.push_back({"nid", Kind::kNid});
    // NI-only counters.
    for (const char* k : {"queue full drops", "keepalives", "early replies"}) {
      f.push_back({k, Kind::kInt});
    }
    if (with_peers) {
      f.push_back({"peers", Kind::kSeq});
    }
    if (!s.check.map(nis[i], f, where) || !with_peers) {
      continue;
    }
    auto peers = nis[i]["peers"];
    std::vector<Field> pf = traffic_fields();
    pf.push_back({"nid", Kind::kNid});
    for (std::size_t j = 0; j < peers.size(); ++j) {
      ++s.nested;
      s.check.map(peers[j], pf, where + ".peers[" + std::to_string(j) + "]");
    }
  }
  return s;
}

// `o2ctl version` (module keys when it could ask the module)
inline Shape version(const std::string& yaml, bool with_module) {
  Shape s;
  auto doc = s.check.load(yaml);
  s.check.map(doc,
              {{"o2ctl version", Kind::kStr},
               {"o2ctl abi", Kind::kInt},
               {"module version", Kind::kStr, !with_module},
               {"module abi", Kind::kInt, !with_module}},
              "document");
  return s;
}

// `o2ctl selftest ping|brw -y`: entries = peers.  Also checks that the
// latencies are ordered (min <= p50 <= p99 <= max) and that the error
// classes add up to the total.  Mode brw has op, size, check, ack, seed,
// mib_per_s, rdma_rpcs and the error class verify.
inline Shape selftest(const std::string& yaml) {
  Shape s;
  auto doc = s.check.load(yaml);
  if (!s.check.map(doc, {{"selftest", Kind::kMap}}, "document")) {
    return s;
  }
  auto st = doc["selftest"];
  const std::vector<Field> summary = {
      {"min", Kind::kInt}, {"p50", Kind::kInt}, {"p99", Kind::kInt}, {"max", Kind::kInt}};
  const bool brw =
      st.IsMap() && st["mode"] && st["mode"].IsScalar() && st["mode"].Scalar() == "brw";
  if (!s.check.map(st,
                   {{"mode", Kind::kStr},
                    {"op", Kind::kStr, !brw},
                    {"size", Kind::kInt, !brw},
                    {"check", Kind::kBool, !brw},
                    {"ack", Kind::kBool, !brw},
                    {"seed", Kind::kInt, !brw},
                    {"mib_per_s", Kind::kNumber, !brw},
                    {"rdma_rpcs", Kind::kInt, !brw},
                    {"peers", Kind::kSeq},
                    {"source", Kind::kNidOrAny},
                    {"concurrency", Kind::kInt},
                    {"duration_s", Kind::kNumber},
                    {"timeout_ms", Kind::kInt},
                    {"rpcs", Kind::kInt},
                    {"not_sent", Kind::kInt},
                    {"rpc_per_s", Kind::kNumber},
                    {"msg_per_s", Kind::kNumber},
                    {"latency_us", Kind::kMap},
                    {"wall_latency_us", Kind::kMap},
                    {"errors", Kind::kMap}},
                   "selftest")) {
    return s;
  }
  if (st["mode"].Scalar() != "ping" && !brw) {
    s.check.fail("selftest: mode '" + st["mode"].Scalar() + "' is not ping or brw");
  }
  if (!brw &&
      (st["op"] || st["size"] || st["check"] || st["ack"] || st["mib_per_s"] || st["rdma_rpcs"])) {
    s.check.fail("selftest: brw keys in mode ping");
  }
  if (brw && st["op"].Scalar() != "write" && st["op"].Scalar() != "read") {
    s.check.fail("selftest: op '" + st["op"].Scalar() + "' is not write or read");
  }
  for (std::size_t i = 0; i < st["peers"].size(); ++i) {
    ++s.entries;
    if (!is_kind(st["peers"][i], Kind::kNid)) {
      s.check.fail("selftest.peers[" + std::to_string(i) + "]: not a NID");
    }
  }
  for (const char* key : {"latency_us", "wall_latency_us"}) {
    if (s.check.map(st[key], summary, std::string("selftest.") + key)) {
      auto v = [&](const char* k) { return st[key][k].as<std::uint64_t>(); };
      if (!(v("min") <= v("p50") && v("p50") <= v("p99") && v("p99") <= v("max"))) {
        s.check.fail(std::string("selftest.") + key + ": not min <= p50 <= p99 <= max");
      }
    }
  }
  if (s.check.map(st["errors"],
                  {{"total", Kind::kInt},
                   {"expired", Kind::kInt},
                   {"dropped", Kind::kInt},
                   {"refused", Kind::kInt},
                   {"verify", Kind::kInt, !brw},
                   {"other", Kind::kInt}},
                  "selftest.errors")) {
    auto e = [&](const char* k) {
      return st["errors"][k] ? st["errors"][k].as<std::uint64_t>() : std::uint64_t{0};
    };
    if (!brw && st["errors"]["verify"]) {
      s.check.fail("selftest.errors: verify in mode ping");
    }
    if (brw && e("total") + st["rdma_rpcs"].as<std::uint64_t>() > st["rpcs"].as<std::uint64_t>()) {
      s.check.fail("selftest: more rdma_rpcs than answered rpcs");
    }
    if (e("expired") + e("dropped") + e("refused") + e("verify") + e("other") != e("total")) {
      s.check.fail("selftest.errors: the classes do not add up to the total");
    }
    if (e("total") > st["rpcs"].as<std::uint64_t>()) {
      s.check.fail("selftest.errors: more errors than rpcs");
    }
  }
  return s;
}

// An o2ctl -t table: the header's columns and the rows' cells, split on
// blanks (no cell of o2ctl's tables has one).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> problems;  // ragged rows, trailing blanks, ...
};

inline std::vector<std::string> split_blanks(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  for (std::string w; is >> w;) {
    out.push_back(w);
  }
  return out;
}

inline Table parse_table(const std::string& text) {
  Table t;
  std::istringstream is(text);
  bool first = true;
  for (std::string line; std::getline(is, line);) {
    if (!line.empty() && line.back() == ' ') {
      t.problems.push_back("trailing blank: '" + line + "'");
    }
    auto cells = split_blanks(line);
    if (first) {
      t.header = cells;
      first = false;
      continue;
    }
    if (cells.size() != t.header.size()) {
      t.problems.push_back(std::to_string(cells.size()) + " cells, header has " +
                           std::to_string(t.header.size()) + ": '" + line + "'");
    }
    t.rows.push_back(cells);
  }
  if (first) {
    t.problems.emplace_back("no header line");
  }
  if (!text.empty() && text.back() != '\n') {
    t.problems.emplace_back("no newline at the end");
  }
  return t;
}

}  // namespace o2ctl_yaml
