#include "o2ctl/format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2lnd/counters.h"
#include "o2lnd/device.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"

namespace o2ctl {
namespace {

bool plain_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
         c == '/' || c == '@';
}

// Words that YAML 1.1 loaders read as booleans or null.
bool yaml_keyword(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 11> kWords = {"y",    "n",     "yes",  "no",  "on", "off",
                                                       "true", "false", "null", "nan", "inf"};
  return std::find(kWords.begin(), kWords.end(), lower) != kWords.end();
}

class Yaml {
 public:
  void line(int indent, std::string_view text) {
    out_.append(static_cast<std::size_t>(indent), ' ');
    out_ += text;
    out_ += '\n';
  }
  void kv(int indent, std::string_view key, std::string_view value) {
    line(indent, std::string(key) + ": " + yaml_scalar(value));
  }
  void kv(int indent, std::string_view key, std::uint64_t value) {
    line(indent, std::string(key) + ": " + std::to_string(value));
  }
  void kv(int indent, std::string_view key, std::uint32_t value) {
    kv(indent, key, std::uint64_t{value});
  }
  void kv(int indent, std::string_view key, std::int32_t value) {
    line(indent, std::string(key) + ": " + std::to_string(value));
  }
  void kv(int indent, std::string_view key, bool value) {
    line(indent, std::string(key) + ": " + (value ? "true" : "false"));
  }
  // A value that is already valid YAML (a number as text).
  void raw(int indent, std::string_view key, std::string_view value) {
    line(indent, std::string(key) + ": " + std::string(value));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

using CounterSink = o2lnd::CounterSinkRef;

// Every counter of `x` whose list entry has view `view`, under its key, in
// list order (o2lnd/counters.h).
template <typename T>
void counters(Yaml& y, int indent, const T& x, std::string_view view,
              void (*visit)(const T&, CounterSink)) {
  visit(x, [&](const o2lnd::CounterInfo& c, std::uint64_t v) {
    if (c.view == view) {
      y.kv(indent, c.key, v);
    }
  });
}

// Indents of `lnetctl net show`.
constexpr int kNetItem = 4;      // "    - net type: o2ib0"
constexpr int kNetField = 6;     // "      local NI(s):"
constexpr int kNiItem = 8;       // "        - nid: ..."
constexpr int kNiField = 10;     // "          status: up"
constexpr int kNiSubField = 14;  // "              0: eth0"
constexpr int kNiSubSub = 18;    // "                  size: 64" (bulk.mr_pool)

void format_ni(Yaml& y, const o2lnd::NetInfo& ni, bool verbose) {
  y.line(kNiItem, "- nid: " + yaml_scalar(ni.nid.str()));
  y.kv(kNiField, "status", o2lnd::status_name(ni.status));
  if (!ni.ifname.empty()) {
    y.line(kNiField, "interfaces:");
    y.kv(kNiSubField, "0", ni.ifname);
  }
  if (!verbose) {
    return;
  }
  y.line(kNiField, "statistics:");
  counters(y, kNiSubField, ni, "stats", o2lnd::visit_ni_counters<o2lnd::NetInfo, CounterSink>);
  y.line(kNiField, "health stats:");
  y.kv(kNiSubField, "health value", ni.health);
  y.line(kNiField, "tunables:");
  y.kv(kNiSubField, "peer_timeout", ni.timeout_s);
  y.kv(kNiSubField, "peer_credits", ni.peer_credits);
  y.kv(kNiSubField, "credits", ni.credits);
  y.kv(kNiSubField, "max_msg_size", ni.max_msg_size);
  y.kv(kNiSubField, "peercredits_hiw", ni.peer_credits_hiw);
  y.kv(kNiSubField, "concurrent_sends", ni.concurrent_sends);
  y.kv(kNiSubField, "ntx", ni.ntx);
  y.kv(kNiSubField, "keepalive", ni.keepalive_s);
  y.line(kNiField, "tx_credits:");
  y.kv(kNiSubField, "max", ni.credits);
  y.kv(kNiSubField, "available", ni.tx_credits);
  y.kv(kNiSubField, "min", ni.tx_credits_min);
  y.kv(kNiSubField, "queued", ni.tx_queued);
  y.line(kNiField, "bulk:");
  y.kv(kNiSubField, "max_immediate", ni.max_immediate);
  y.kv(kNiSubField, "max_frags", ni.max_frags);
  y.kv(kNiSubField, "cksum", ni.cksum);
  y.line(kNiSubField, "mr_pool:");
  y.kv(kNiSubSub, "size", ni.mr_pool_size);
  y.kv(kNiSubSub, "used", ni.mr_pool_used);
  y.kv(kNiSubSub, "max_pages", ni.mr_max_pages);
  y.kv(kNiSubSub, "recovered", ni.mr_recovered);
  y.line(kNiField, "lnd details:");
  if (!ni.devname.empty()) {
    y.kv(kNiSubField, "rdma device", ni.devname);
  }
  y.kv(kNiSubField, "incarnation", ni.incarnation);
  y.kv(kNiSubField, "peers", ni.npeers);
  y.kv(kNiSubField, "connections", ni.nconns);
  y.kv(kNiSubField, "established", ni.nconns_established);
  counters(y, kNiSubField, ni, "lnd", o2lnd::visit_ni_counters<o2lnd::NetInfo, CounterSink>);
  y.kv(kNiSubField, "tx_live", ni.tx_live);
}

// Indents of the peer, conn and fault lists.
constexpr int kListItem = 4;   // "    - nid: ..."
constexpr int kListField = 6;  // "      state: established"

std::string nid_or_any(o2lnd::Nid nid) { return nid.is_any() ? "any" : nid.str(); }

// Indents of `o2ctl stats`.
constexpr int kStatItem = 4;        // "    - nid: ..."
constexpr int kStatField = 6;       // "      send count: 1"
constexpr int kStatPeerItem = 10;   // "          - nid: ..."
constexpr int kStatPeerField = 12;  // "            send count: 1"

struct Traffic {
  std::uint64_t send_count, recv_count, drop_count, error_count, send_bytes, recv_bytes;
  std::uint64_t tx_timeouts;
};

template <typename T>
Traffic traffic(const T& x) {
  return {x.send_count, x.recv_count, x.drop_count, x.error_count,
          x.send_bytes, x.recv_bytes, x.tx_timeouts};
}

void format_traffic(Yaml& y, int indent, const Traffic& t) {
  y.kv(indent, "send count", t.send_count);
  y.kv(indent, "recv count", t.recv_count);
  y.kv(indent, "drop count", t.drop_count);
  y.kv(indent, "error count", t.error_count);
  y.kv(indent, "send bytes", t.send_bytes);
  y.kv(indent, "recv bytes", t.recv_bytes);
  y.kv(indent, "tx timeouts", t.tx_timeouts);
}

// The NI-only counters of `o2ctl stats`.
void format_ni_counters(Yaml& y, int indent, const o2lnd::NetInfo& ni) {
  y.kv(indent, "queue full drops", ni.tx_no_credit_drops);
  y.kv(indent, "keepalives", ni.keepalives);
  y.kv(indent, "early replies", ni.early_replies);
}

// Aligned columns: Table t({"NID", "SENT"}, {false, true}); t.row({...}).
class Table {
 public:
  Table(std::vector<std::string> header, std::vector<bool> right)
      : right_(std::move(right)), width_(header.size(), 0) {
    row(std::move(header));
  }
  void row(std::vector<std::string> cells) {
    for (std::size_t i = 0; i < cells.size() && i < width_.size(); ++i) {
      width_[i] = std::max(width_[i], cells[i].size());
    }
    rows_.push_back(std::move(cells));
  }
  [[nodiscard]] std::string str() const {
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t i = 0; i < r.size() && i < width_.size(); ++i) {
        std::size_t pad = width_[i] - r[i].size();
        bool last = i + 1 == r.size();
        if (i > 0) {
          line += "  ";
        }
        if (right_[i]) {
          line.append(pad, ' ');
          line += r[i];
        } else {
          line += r[i];
          if (!last) {
            line.append(pad, ' ');
          }
        }
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::size_t> width_;
  std::vector<std::vector<std::string>> rows_;
};

std::string dash_if_empty(const std::string& s) { return s.empty() ? "-" : s; }

template <typename T>
std::string num(T v) {
  return std::to_string(v);
}

void traffic_cells(std::vector<std::string>& cells, const Traffic& t) {
  for (std::uint64_t v : {t.send_count, t.recv_count, t.drop_count, t.error_count, t.send_bytes,
                          t.recv_bytes, t.tx_timeouts}) {
    cells.push_back(num(v));
  }
}

// "available/max".
std::string ratio(std::int64_t a, std::int64_t b) { return num(a) + "/" + num(b); }

// alive ms, or "never".
std::string alive(const o2lnd::PeerInfo& p) { return p.never_alive() ? "never" : num(p.alive_ms); }

// A route's gateway health: "up" or "down" ("unknown(N)" otherwise).
std::string route_state(const o2lnd::RouteInfo& r) { return o2lnd::health_name(r.gw_health); }

std::string forwarding(const o2lnd::RoutingInfo& r) {
  return r.forwarding ? "enabled" : "disabled";
}

// Indents of `o2ctl routing show`.
constexpr int kRoutingField = 4;       // "    forwarding: enabled"
constexpr int kRoutingPool = 8;        // "        - pool: tiny"
constexpr int kRoutingPoolField = 10;  // "          size: 0"

}  // namespace

std::string yaml_scalar(std::string_view text) {
  bool plain = !text.empty() && std::all_of(text.begin(), text.end(), plain_char) &&
               text.front() != '-' && text.front() != '.' && !yaml_keyword(text) &&
               // Anything starting with a digit may read as a number unless
               // it has an '@' (a NID) in it.
               (std::isdigit(static_cast<unsigned char>(text.front())) == 0 ||
                text.find('@') != std::string_view::npos);
  if (plain) {
    return std::string(text);
  }
  std::string quoted = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (u < 0x20 || u == 0x7f) {
      constexpr std::string_view kHex = "0123456789abcdef";
      quoted += "\\x";
      quoted += kHex[u >> 4];
      quoted += kHex[u & 0xf];
    } else {
      quoted += c;
    }
  }
  quoted += '"';
  return quoted;
}

std::string format_ping(const o2lnd::PingResult& result) {
  std::string out;
  for (const auto& id : result.ids) {
    out += std::to_string(result.pid) + "-" + id.nid.str() + "\n";
  }
  return out;
}

std::string format_net_show(const std::vector<o2lnd::NetInfo>& nis, bool verbose) {
  if (nis.empty()) {
    return "net: []\n";
  }
  std::vector<std::string> nets;
  for (const auto& ni : nis) {
    if (std::find(nets.begin(), nets.end(), ni.net) == nets.end()) {
      nets.push_back(ni.net);
    }
  }
  Yaml y;
  y.line(0, "net:");
  for (const auto& net : nets) {
    y.line(kNetItem, "- net type: " + yaml_scalar(net));
    y.line(kNetField, "local NI(s):");
    for (const auto& ni : nis) {
      if (ni.net == net) {
        format_ni(y, ni, verbose);
      }
    }
  }
  return y.take();
}

std::string format_version(std::string_view tool_version, const o2lnd::VersionInfo* module) {
  Yaml y;
  y.kv(0, "o2ctl version", tool_version);
  y.kv(0, "o2ctl abi", std::uint64_t{o2lnd::kAbiVersion});
  if (module != nullptr) {
    y.kv(0, "module version", module->module_version);
    y.kv(0, "module abi", std::uint64_t{module->abi_version});
  }
  return y.take();
}

std::string format_peer_show(const std::vector<o2lnd::PeerInfo>& peers, bool verbose) {
  if (peers.empty()) {
    return "peer: []\n";
  }
  Yaml y;
  y.line(0, "peer:");
  for (const auto& p : peers) {
    y.line(kListItem, "- nid: " + yaml_scalar(p.nid.str()));
    y.kv(kListField, "local nid", p.local_nid.str());
    y.kv(kListField, "state", o2lnd::peer_state_name(p.state));
    y.kv(kListField, "conns connecting", p.conns_connecting());
    y.kv(kListField, "conns established", p.conns[O2LND_CONN_ESTABLISHED]);
    y.kv(kListField, "conns closing", p.conns[O2LND_CONN_CLOSING]);
    y.kv(kListField, "conns zombie", p.conns[O2LND_CONN_ZOMBIE]);
    y.kv(kListField, "tx queued", p.tx_queued);
    y.kv(kListField, "next retry ms", p.next_retry_ms);
    y.kv(kListField, "tx credits", p.tx_credits);
    y.kv(kListField, "tx credits max", p.tx_credits_max);
    y.kv(kListField, "tx credits min", p.tx_credits_min);
    y.kv(kListField, "credit queued", p.credit_queued);
    y.kv(kListField, "router credits", p.rtr_credits);
    y.kv(kListField, "router credits max", p.rtr_credits_max);
    y.kv(kListField, "router credits min", p.rtr_credits_min);
    y.kv(kListField, "router queued", p.rtr_queued);
    y.kv(kListField, "health", o2lnd::health_name(p.health));
    if (!verbose) {
      continue;
    }
    y.kv(kListField, "incarnation", p.incarnation);
    y.kv(kListField, "last reject", o2lnd::reject_reason_name(p.last_reject));
    y.kv(kListField, "last error", p.last_error);
    y.kv(kListField, "backoff ms", p.backoff_ms);
    y.kv(kListField, "failures", p.failures);
    y.kv(kListField, "downs", p.downs);
    y.raw(kListField, "alive ms", alive(p));
    counters(y, kListField, p, "verbose", o2lnd::visit_peer_counters<o2lnd::PeerInfo, CounterSink>);
  }
  return y.take();
}

std::string format_lnet_peers(const std::vector<o2lnd::LnetPeer>& peers, std::string_view top) {
  if (peers.empty()) {
    return std::string(top) + ": []\n";
  }
  // the indents of `lnetctl peer show -v`
  constexpr int kPeerItem = 4;
  constexpr int kPeerField = 6;
  constexpr int kPeerNiItem = 8;
  constexpr int kPeerNiField = 10;
  Yaml y;
  y.line(0, std::string(top) + ":");
  for (const auto& p : peers) {
    y.line(kPeerItem, "- primary nid: " + yaml_scalar(p.primary.str()));
    y.kv(kPeerField, "Multi-Rail", p.multi_rail());
    y.kv(kPeerField, "discovery", (p.features & O2LND_PING_FEAT_DISCOVERY) != 0);
    // LNet's RTE_DISABLED: the peer does not forward (LNet sets it whenever
    // routing is off; a gateway that says so is not used as one)
    y.kv(kPeerField, "routing", (p.features & O2LND_PING_FEAT_RTE_DISABLED) == 0);
    y.kv(kPeerField, "pushed", p.pushed());
    y.kv(kPeerField, "pushed to us", p.pushed_to_us());
    y.kv(kPeerField, "seqno", p.seqno);
    y.kv(kPeerField, "nids", p.n_nids);
    y.line(kPeerField, "peer ni:");
    for (const auto& n : p.nids) {
      y.line(kPeerNiItem, "- nid: " + yaml_scalar(n.nid.str()));
      y.kv(kPeerNiField, "state", o2lnd::status_name(n.status));
      y.kv(kPeerNiField, "health value", n.health);
      y.kv(kPeerNiField, "selected", n.selected);
      y.kv(kPeerNiField, "failures", n.failures);
    }
  }
  return y.take();
}

std::string format_route_show(const std::vector<o2lnd::RouteInfo>& routes) {
  if (routes.empty()) {
    return "route: []\n";
  }
  Yaml y;
  y.line(0, "route:");
  for (const auto& r : routes) {
    y.line(kListItem, "- net: " + yaml_scalar(o2lnd::net_name(r.net)));
    y.kv(kListField, "gateway", r.gateway.str());
    y.kv(kListField, "hop", r.hops);
    y.kv(kListField, "priority", r.priority);
    y.kv(kListField, "state", route_state(r));
    counters(y, kListField, r, "show", o2lnd::visit_route_counters<o2lnd::RouteInfo, CounterSink>);
  }
  return y.take();
}

std::string format_routing_show(const o2lnd::RoutingInfo& r) {
  Yaml y;
  y.line(0, "routing:");
  y.kv(kRoutingField, "forwarding", forwarding(r));
  y.kv(kRoutingField, "peer buffer credits", r.peer_buffer_credits);
  y.kv(kRoutingField, "router timeout", r.router_timeout_s);
  y.kv(kRoutingField, "waiting", r.waiting);
  y.kv(kRoutingField, "waiting max", r.waiting_max);
  y.kv(kRoutingField, "held rx", r.held_rx);
  counters(y, kRoutingField, r, "show",
           o2lnd::visit_routing_counters<o2lnd::RoutingInfo, CounterSink>);
  y.line(kRoutingField, "buffers:");
  for (std::uint32_t i = 0; i < r.pools.size(); ++i) {
    const auto& p = r.pools.at(i);
    y.line(kRoutingPool, "- pool: " + yaml_scalar(o2lnd::rtr_pool_name(i)));
    y.kv(kRoutingPoolField, "size", p.buffer_size);
    y.kv(kRoutingPoolField, "nbuffers", p.nbuffers);
    y.kv(kRoutingPoolField, "credits", p.credits);
    y.kv(kRoutingPoolField, "min credits", p.min_credits);
    y.kv(kRoutingPoolField, "taken", p.taken);
  }
  return y.take();
}

std::string format_conn_show(const std::vector<o2lnd::ConnInfo>& conns) {
  if (conns.empty()) {
    return "conn: []\n";
  }
  Yaml y;
  y.line(0, "conn:");
  for (const auto& c : conns) {
    y.line(kListItem, "- peer: " + yaml_scalar(c.peer_nid.str()));
    y.kv(kListField, "local nid", c.local_nid.str());
    y.kv(kListField, "state", o2lnd::conn_state_name(c.state));
    y.kv(kListField, "phase", o2lnd::phase_name(c.phase));
    y.kv(kListField, "active", c.active);
    y.kv(kListField, "age ms", c.age_ms);
    y.kv(kListField, "deadline ms", c.deadline_ms);
    y.kv(kListField, "queue depth", c.queue_depth);
    y.kv(kListField, "max frags", c.max_frags);
    y.kv(kListField, "credits", c.credits);
    y.kv(kListField, "outstanding", c.outstanding);
    y.kv(kListField, "posted", c.nposted);
    y.kv(kListField, "tx queued", c.tx_queued);
    y.kv(kListField, "error", c.error);
    y.kv(kListField, "qp", c.qp_num);
    y.kv(kListField, "rx buffers", c.nrx);
    y.kv(kListField, "reserved credits", c.reserved_credits);
    y.kv(kListField, "concurrent sends", c.concurrent_sends);
    y.kv(kListField, "sq size", c.sq_size);
    y.kv(kListField, "sq free", c.sq_free);
    y.kv(kListField, "noops posted", c.noops_posted);
    y.kv(kListField, "noops queued", c.noops_queued);
    y.kv(kListField, "idle ms", c.idle_ms);
    counters(y, kListField, c, "show", o2lnd::visit_conn_counters<o2lnd::ConnInfo, CounterSink>);
    y.kv(kListField, "comp vector", c.comp_vector);
    y.kv(kListField, "comp vectors", c.comp_vectors);
  }
  return y.take();
}

std::string format_stats(const std::vector<o2lnd::NetInfo>& nis,
                         const std::vector<o2lnd::PeerInfo>& peers, bool with_peers) {
  if (nis.empty()) {
    return "statistics: []\n";
  }
  Yaml y;
  y.line(0, "statistics:");
  for (const auto& ni : nis) {
    y.line(kStatItem, "- nid: " + yaml_scalar(ni.nid.str()));
    format_traffic(y, kStatField, traffic(ni));
    format_ni_counters(y, kStatField, ni);
    if (!with_peers) {
      continue;
    }
    bool any = false;
    for (const auto& p : peers) {
      if (p.local_nid != ni.nid) {
        continue;
      }
      if (!any) {
        y.line(kStatField, "peers:");
        any = true;
      }
      y.line(kStatPeerItem, "- nid: " + yaml_scalar(p.nid.str()));
      format_traffic(y, kStatPeerField, traffic(p));
    }
    if (!any) {
      y.line(kStatField, "peers: []");
    }
  }
  return y.take();
}

std::string table_net_show(const std::vector<o2lnd::NetInfo>& nis) {
  Table t({"NET", "NID", "STATUS", "IFACE", "DEVICE", "PEERS", "CONNS", "EST", "CRED", "MIN", "Q",
           "TXS", "MRS"},
          {false, false, false, false, false, true, true, true, true, true, true, true, true});
  for (const auto& ni : nis) {
    t.row({dash_if_empty(ni.net), ni.nid.str(), std::string(o2lnd::status_name(ni.status)),
           dash_if_empty(ni.ifname), dash_if_empty(ni.devname), num(ni.npeers), num(ni.nconns),
           num(ni.nconns_established), ratio(ni.tx_credits, ni.credits), num(ni.tx_credits_min),
           num(ni.tx_queued), ratio(ni.tx_live, ni.ntx), ratio(ni.mr_pool_used, ni.mr_pool_size)});
  }
  return t.str();
}

std::string table_peer_show(const std::vector<o2lnd::PeerInfo>& peers, bool verbose) {
  std::vector<std::string> header = {"NID",      "LOCAL", "STATE", "CONNS", "TXQ",
                                     "RETRY_MS", "CRED",  "MIN",   "Q",     "HEALTH"};
  std::vector<bool> right = {false, false, false, false, true, true, true, true, true, false};
  if (verbose) {
    header.insert(header.end(), {"RTR", "RMIN", "RQ"});
    right.insert(right.end(), {true, true, true});
  }
  Table t(std::move(header), std::move(right));
  for (const auto& p : peers) {
    std::string conns = num(p.conns_connecting()) + "/" + num(p.conns[O2LND_CONN_ESTABLISHED]) +
                        "/" + num(p.conns[O2LND_CONN_CLOSING]) + "/" +
                        num(p.conns[O2LND_CONN_ZOMBIE]);
    std::vector<std::string> cells = {p.nid.str(),
                                      p.local_nid.str(),
                                      o2lnd::peer_state_name(p.state),
                                      conns,
                                      num(p.tx_queued),
                                      num(p.next_retry_ms),
                                      ratio(p.tx_credits, p.tx_credits_max),
                                      num(p.tx_credits_min),
                                      num(p.credit_queued),
                                      o2lnd::health_name(p.health)};
    if (verbose) {
      cells.insert(cells.end(), {ratio(p.rtr_credits, p.rtr_credits_max), num(p.rtr_credits_min),
                                 num(p.rtr_queued)});
    }
    t.row(std::move(cells));
  }
  return t.str();
}

std::string table_route_show(const std::vector<o2lnd::RouteInfo>& routes) {
  Table t({"NET", "GATEWAY", "HOP", "PRIO", "STATE", "SENT", "DROPPED"},
          {false, false, true, true, false, true, true});
  for (const auto& r : routes) {
    t.row({o2lnd::net_name(r.net), r.gateway.str(), num(r.hops), num(r.priority), route_state(r),
           num(r.sent), num(r.dropped)});
  }
  return t.str();
}

std::string table_routing_show(const o2lnd::RoutingInfo& r) {
  Table state({"FORWARDING", "PEER_CRED", "TIMEOUT", "WAIT", "WAIT_MAX", "HELD_RX", "FWD",
               "FWD_BYTES", "NO_ROUTE", "DOWN", "TMO", "CLOSED", "ERR"},
              {false, true, true, true, true, true, true, true, true, true, true, true, true});
  state.row({forwarding(r), num(r.peer_buffer_credits), num(r.router_timeout_s), num(r.waiting),
             num(r.waiting_max), num(r.held_rx), num(r.forwarded), num(r.forwarded_bytes),
             num(r.dropped_no_route), num(r.dropped_down), num(r.dropped_timeout),
             num(r.dropped_closed), num(r.dropped_error)});
  Table pools({"POOL", "SIZE", "CRED", "MIN", "TAKEN"}, {false, true, true, true, true});
  for (std::uint32_t i = 0; i < r.pools.size(); ++i) {
    const auto& p = r.pools.at(i);
    pools.row({o2lnd::rtr_pool_name(i), num(p.buffer_size), ratio(p.credits, p.nbuffers),
               num(p.min_credits), num(p.taken)});
  }
  return state.str() + "\n" + pools.str();
}

std::string table_conn_show(const std::vector<o2lnd::ConnInfo>& conns) {
  Table t({"PEER", "LOCAL", "STATE", "PHASE", "ACT", "AGE_MS", "QD", "CRED", "OUT", "POSTED", "QP",
           "RSV", "SENDS", "SQ", "NOOPS", "IDLE_MS"},
          {false, false, false, false, false, true, true, true, true, true, true, true, true, true,
           true, true});
  for (const auto& c : conns) {
    t.row({c.peer_nid.str(), c.local_nid.str(), o2lnd::conn_state_name(c.state),
           o2lnd::phase_name(c.phase), c.active ? "yes" : "no", num(c.age_ms), num(c.queue_depth),
           num(c.credits), num(c.outstanding), num(c.nposted), num(c.qp_num),
           num(c.reserved_credits), ratio(c.nposted, c.concurrent_sends),
           ratio(c.sq_free, c.sq_size), ratio(c.noops_posted, c.noops_queued), num(c.idle_ms)});
  }
  return t.str();
}

std::string table_fault_list(const std::vector<o2lnd::FaultRule>& rules) {
  Table t({"ID", "KIND", "ARG", "PEER", "LOCAL", "COUNT", "PROB", "DELAY_MS", "FIRED"},
          {true, false, false, false, false, true, true, true, true});
  for (const auto& r : rules) {
    t.row({num(r.id), o2lnd::fault_kind_name(r.kind), o2lnd::fault_arg_name(r), nid_or_any(r.peer),
           nid_or_any(r.local), num(r.count), format_probability(r.probability), num(r.delay_ms),
           num(r.fired)});
  }
  return t.str();
}

std::string table_stats(const std::vector<o2lnd::NetInfo>& nis,
                        const std::vector<o2lnd::PeerInfo>& peers, bool with_peers) {
  std::vector<std::string> header = {"NID"};
  std::vector<bool> right = {false};
  if (with_peers) {
    header.emplace_back("LOCAL");
    right.push_back(false);
  }
  for (const char* h :
       {"SENT", "RECV", "DROP", "ERR", "BYTES_OUT", "BYTES_IN", "TMO", "QFULL", "KA", "EARLY"}) {
    header.emplace_back(h);
    right.push_back(true);
  }
  Table t(std::move(header), std::move(right));
  for (const auto& ni : nis) {
    std::vector<std::string> cells = {ni.nid.str()};
    if (with_peers) {
      cells.emplace_back("-");
    }
    traffic_cells(cells, traffic(ni));
    cells.push_back(num(ni.tx_no_credit_drops));
    cells.push_back(num(ni.keepalives));
    cells.push_back(num(ni.early_replies));
    t.row(std::move(cells));
    if (!with_peers) {
      continue;
    }
    for (const auto& p : peers) {
      if (p.local_nid == ni.nid) {
        std::vector<std::string> pc = {p.nid.str(), ni.nid.str()};
        traffic_cells(pc, traffic(p));
        pc.insert(pc.end(), {"-", "-", "-"});  // NI-only counters
        t.row(std::move(pc));
      }
    }
  }
  return t.str();
}

std::string format_probability(std::uint32_t per_million) {
  std::string out = std::to_string(per_million / O2LND_FAULT_PROB_ALWAYS);
  std::uint32_t frac = per_million % O2LND_FAULT_PROB_ALWAYS;
  if (frac == 0) {
    return out;
  }
  std::string digits = std::to_string(frac);
  digits.insert(0, 6 - digits.size(), '0');
  while (digits.back() == '0') {
    digits.pop_back();
  }
  return out + "." + digits;
}

std::string format_fault_list(const std::vector<o2lnd::FaultRule>& rules) {
  if (rules.empty()) {
    return "fault: []\n";
  }
  Yaml y;
  y.line(0, "fault:");
  for (const auto& r : rules) {
    y.line(kListItem, "- id: " + std::to_string(r.id));
    y.kv(kListField, "kind", o2lnd::fault_kind_name(r.kind));
    if (r.kind == O2LND_FAULT_POST_FAIL) {
      y.kv(kListField, "arg", r.arg);  // a work request: a number
    } else {
      y.kv(kListField, "arg", o2lnd::fault_arg_name(r));
    }
    y.kv(kListField, "peer", nid_or_any(r.peer));
    y.kv(kListField, "local", nid_or_any(r.local));
    y.kv(kListField, "count", r.count);
    y.raw(kListField, "probability", format_probability(r.probability));
    y.kv(kListField, "delay ms", r.delay_ms);
    y.kv(kListField, "fired", r.fired);
  }
  return y.take();
}

}  // namespace o2ctl
