#include "o2lnd/device.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2lnd {
namespace {

// A fixed-size char field of a reply; the kernel NUL-terminates it, but a
// field without a NUL is read up to its end.
template <std::size_t N>
std::string field(const char (&chars)[N]) {  // NOLINT(*-avoid-c-arrays)
  return {chars, ::strnlen(chars, N)};
}

// Guards the NET_SHOW loop against a module that never says ENOENT.
constexpr std::uint32_t kMaxNets = 1U << 16;
// The same for PEER_SHOW, CONN_SHOW (per NI), ROUTE_SHOW and FAULT_LIST.
constexpr std::uint32_t kMaxItems = 1U << 20;

Error ioctl_error(int err, const std::string& what) {
  return Error{err, what + ": " + std::strerror(err)};
}

Error invalid(std::string why) { return Error{EINVAL, std::move(why)}; }

// What a REJECT rule may advertise (o2iblnd's limits: peer_credits 2..255,
// at most 257 fragments: LNET_MAX_IOV + 1).
constexpr std::uint32_t kMinQueueDepth = 2;
constexpr std::uint32_t kMaxQueueDepth = 255;
constexpr std::uint32_t kMaxFrags = 257;

// Calls `show(index)` for index 0.. until ENOENT (at most `max` items).
template <typename T, typename Show>
Result<std::vector<T>> walk(Show show, std::uint32_t max, std::string_view what) {
  std::vector<T> items;
  for (std::uint32_t index = 0; index < max; ++index) {
    Result<T> item = show(index);
    if (!item) {
      if (item.error().errnum == ENOENT) {
        return items;
      }
      return item.error();
    }
    items.push_back(std::move(*item));
  }
  return Error{EPROTO, std::string(what) + ": no end after " + std::to_string(max) + " entries"};
}

// Calls `show(ni_index, index)` for index 0.. on every o2ib NI of `nis`
// until ENOENT, and sets each item's local_nid.
template <typename T, typename Show>
Result<std::vector<T>> collect(const std::vector<NetInfo>& nis, Show show, std::string_view what) {
  std::vector<T> items;
  for (const auto& ni : nis) {
    if (ni.index == 0 || ni.nid == Nid::loopback()) {
      continue;
    }
    std::uint32_t index = 0;
    for (; index < kMaxItems; ++index) {
      Result<T> item = show(ni.index, index);
      if (!item) {
        if (item.error().errnum == ENOENT) {
          break;
        }
        return item.error();
      }
      item->local_nid = ni.nid;
      items.push_back(std::move(*item));
    }
    if (index == kMaxItems) {
      return Error{EPROTO, std::string(what) + ": no end after " + std::to_string(kMaxItems) +
                               " entries on NI " + std::to_string(ni.index)};
    }
  }
  return items;
}

}  // namespace

std::optional<NameKind> fault_arg_kind(std::uint32_t kind) {
  switch (kind) {
    case O2LND_FAULT_CM_DROP:
    case O2LND_FAULT_CM_DELAY:
      return NameKind::kCmEvent;
    case O2LND_FAULT_STALL:
      return NameKind::kPhase;
    case O2LND_FAULT_REJECT:
      return NameKind::kRejectReason;
    case O2LND_FAULT_MSG_DROP:
    case O2LND_FAULT_MSG_CORRUPT:
      return NameKind::kMsgType;
    default:
      return std::nullopt;
  }
}

std::string fault_arg_name(const FaultRule& rule) {
  auto kind = fault_arg_kind(rule.kind);
  if (rule.kind == O2LND_FAULT_POST_FAIL) {
    return std::to_string(rule.arg);  // a work request's index: 0 is one
  }
  if (!kind) {
    return rule.arg == 0 ? std::string("none") : std::to_string(rule.arg);
  }
  return name_of(*kind, rule.arg);
}

bool fault_has_delay(std::uint32_t kind) {
  return kind == O2LND_FAULT_CM_DELAY || kind == O2LND_FAULT_SEND_DELAY;
}

Result<std::monostate> validate(const FaultRule& rule) {
  if (rule.kind < 1 || rule.kind > O2LND_FAULT_MAX) {
    return invalid("unknown fault kind " + std::to_string(rule.kind));
  }
  std::string kind = fault_kind_name(rule.kind);
  auto arg_kind = fault_arg_kind(rule.kind);
  if (arg_kind) {
    bool bad = name_of(*arg_kind, rule.arg).starts_with("unknown(") ||
               (rule.kind == O2LND_FAULT_STALL && rule.arg == O2LND_PHASE_NONE);
    if (bad) {
      return invalid(kind + ": " + std::string(kind_noun(*arg_kind)) + " " +
                     std::to_string(rule.arg) + " out of range");
    }
    if (*arg_kind == NameKind::kCmEvent && rule.arg == O2LND_CM_DEVICE_REMOVAL) {
      return invalid(kind + ": device_removal cannot be dropped or delayed (the RDMA device " +
                     "would wait for o2lnd)");
    }
  } else if (rule.kind == O2LND_FAULT_POST_FAIL) {
    if (rule.arg > O2LND_FAULT_POST_FAIL_MAX_ARG) {
      return invalid(kind + ": work request " + std::to_string(rule.arg) + " out of range (0.." +
                     std::to_string(O2LND_FAULT_POST_FAIL_MAX_ARG) + ")");
    }
  } else if (rule.arg != 0) {
    return invalid(kind + " takes no argument (got " + std::to_string(rule.arg) + ")");
  }
  if (rule.probability < 1 || rule.probability > O2LND_FAULT_PROB_ALWAYS) {
    return invalid("probability " + std::to_string(rule.probability) +
                   " per million out of range (1..1000000)");
  }
  if (fault_has_delay(rule.kind)) {
    if (rule.delay_ms < 1 || rule.delay_ms > O2LND_FAULT_MAX_DELAY_MS) {
      return invalid(kind + ": delay " + std::to_string(rule.delay_ms) + " ms out of range (1.." +
                     std::to_string(O2LND_FAULT_MAX_DELAY_MS) + ")");
    }
  } else if (rule.delay_ms != 0) {
    return invalid(kind + " takes no delay");
  }
  if (rule.kind != O2LND_FAULT_REJECT && (rule.queue_depth != 0 || rule.max_frags != 0)) {
    return invalid(kind + ": queue depth and fragments apply to reject rules only");
  }
  if (rule.queue_depth != 0 &&
      (rule.queue_depth < kMinQueueDepth || rule.queue_depth > kMaxQueueDepth)) {
    return invalid("queue depth " + std::to_string(rule.queue_depth) + " out of range (2..255)");
  }
  if (rule.max_frags > kMaxFrags) {
    return invalid("fragments " + std::to_string(rule.max_frags) + " out of range (0..257)");
  }
  for (auto [what, nid] : {std::pair{"peer", rule.peer}, std::pair{"local", rule.local}}) {
    if (!nid.is_any() && nid.type() != O2LND_NET_TYPE_O2IB) {
      return invalid(std::string(what) + " NID " + nid.str() + " is not an o2ib NID");
    }
  }
  return std::monostate{};
}

std::string_view status_name(std::uint32_t status) {
  switch (status) {
    case O2LND_NI_STATUS_UP:
      return "up";
    case O2LND_NI_STATUS_DOWN:
      return "down";
    default:
      return "unknown";
  }
}

VersionInfo decode(const o2lnd_ioc_version& reply) {
  // An ABI 5 module's reply ends before abi_version_min (hdr.size says so).
  bool has_min = reply.hdr.size >=
                 offsetof(o2lnd_ioc_version, abi_version_min) + sizeof(reply.abi_version_min);
  std::uint32_t min = has_min ? reply.abi_version_min : reply.abi_version;
  return VersionInfo{reply.abi_version, field(reply.module_version), min};
}

PingResult decode(const o2lnd_ioc_ping& reply) {
  PingResult result;
  result.pid = reply.pid;
  result.n_ids = reply.n_ids;
  result.rtt = std::chrono::nanoseconds(reply.rtt_ns);
  std::uint32_t valid = std::min({reply.n_ids, reply.max_ids, std::uint32_t{O2LND_PING_MAX_IDS}});
  result.ids.reserve(valid);
  for (std::uint32_t i = 0; i < valid; ++i) {
    result.ids.push_back(PingId{Nid(reply.ids[i].nid), reply.ids[i].status});
  }
  return result;
}

NetInfo decode(const o2lnd_ioc_net& reply) {
  NetInfo out;
  out.index = reply.index;
  out.count = reply.count;
  out.nid = Nid(reply.nid);
  out.status = reply.status;
  out.net = field(reply.net);
  out.ifname = field(reply.ifname);
  out.devname = field(reply.devname);
  out.incarnation = reply.incarnation;
  out.peer_credits = reply.peer_credits;
  out.credits = reply.credits;
  out.timeout_s = reply.timeout_s;
  out.max_msg_size = reply.max_msg_size;
  out.npeers = reply.npeers;
  out.nconns = reply.nconns;
  out.nconns_established = reply.nconns_established;
  out.tx_credits = reply.tx_credits;
  out.tx_credits_min = reply.tx_credits_min;
  out.tx_queued = reply.tx_queued;
  out.ntx = reply.ntx;
  out.tx_live = reply.tx_live;
  out.peer_credits_hiw = reply.peer_credits_hiw;
  out.concurrent_sends = reply.concurrent_sends;
  out.keepalive_s = reply.keepalive_s;
  out.max_immediate = reply.max_immediate;
  out.max_frags = reply.max_frags;
  out.mr_pool_size = reply.mr_pool_size;
  out.mr_pool_used = reply.mr_pool_used;
  out.mr_max_pages = reply.mr_max_pages;
  out.cksum = reply.cksum;
  out.mr_recovered = reply.mr_recovered;
  out.health = reply.health;
  O2LND_NI_COUNTERS(O2LND_CXX_COUNTER_COPY)
  return out;
}

PeerInfo decode(const o2lnd_ioc_peer& reply) {
  PeerInfo out;
  out.ni_index = reply.ni_index;
  out.index = reply.index;
  out.count = reply.count;
  out.state = reply.state;
  out.nid = Nid(reply.nid);
  out.incarnation = reply.incarnation;
  std::copy_n(std::begin(reply.conns), out.conns.size(), out.conns.begin());
  out.last_error = reply.last_error;
  out.last_reject = reply.last_reject;
  out.next_retry_ms = reply.next_retry_ms;
  out.backoff_ms = reply.backoff_ms;
  out.tx_queued = reply.tx_queued;
  out.tx_credits = reply.tx_credits;
  out.tx_credits_max = reply.tx_credits_max;
  out.tx_credits_min = reply.tx_credits_min;
  out.credit_queued = reply.credit_queued;
  out.health = reply.health;
  out.failures = reply.failures;
  out.downs = reply.downs;
  out.alive_ms = reply.alive_ms;
  out.rtr_credits = reply.rtr_credits;
  out.rtr_credits_max = reply.rtr_credits_max;
  out.rtr_credits_min = reply.rtr_credits_min;
  out.rtr_queued = reply.rtr_queued;
  O2LND_PEER_COUNTERS(O2LND_CXX_COUNTER_COPY)
  return out;
}

ConnInfo decode(const o2lnd_ioc_conn& reply) {
  ConnInfo out;
  out.ni_index = reply.ni_index;
  out.index = reply.index;
  out.count = reply.count;
  out.state = reply.state;
  out.peer_nid = Nid(reply.peer_nid);
  out.peer_stamp = reply.peer_stamp;
  out.phase = reply.phase;
  out.active = reply.active != 0;
  out.age_ms = reply.age_ms;
  out.deadline_ms = reply.deadline_ms;
  out.queue_depth = reply.queue_depth;
  out.max_frags = reply.max_frags;
  out.credits = reply.credits;
  out.outstanding = reply.outstanding;
  out.nposted = reply.nposted;
  out.tx_queued = reply.tx_queued;
  out.error = reply.error;
  out.qp_num = reply.qp_num;
  out.nrx = reply.nrx;
  out.reserved_credits = reply.reserved_credits;
  out.concurrent_sends = reply.concurrent_sends;
  out.sq_size = reply.sq_size;
  out.sq_free = reply.sq_free;
  out.noops_posted = reply.noops_posted;
  out.noops_queued = reply.noops_queued;
  out.idle_ms = reply.idle_ms;
  O2LND_CONN_COUNTERS(O2LND_CXX_COUNTER_COPY)
  out.comp_vector = reply.comp_vector;
  out.comp_vectors = reply.comp_vectors;
  return out;
}

FaultRule decode(const o2lnd_ioc_fault& reply) {
  FaultRule r;
  r.id = reply.id;
  r.kind = reply.kind;
  r.arg = reply.arg;
  r.peer = Nid(reply.peer_nid);
  r.local = Nid(reply.local_nid);
  r.count = reply.count;
  r.probability = reply.probability;
  r.delay_ms = reply.delay_ms;
  r.queue_depth = reply.queue_depth;
  r.max_frags = reply.max_frags;
  r.fired = reply.fired;
  return r;
}

BrwResult decode(const o2lnd_ioc_brw& reply) {
  return BrwResult{std::chrono::nanoseconds(reply.rtt_ns), reply.rdma != 0, reply.messages};
}

RouteInfo decode(const o2lnd_ioc_route& reply) {
  RouteInfo r;
  r.index = reply.index;
  r.count = reply.count;
  r.net = reply.net;
  r.hops = reply.hops;
  r.gateway = Nid(reply.gateway);
  r.priority = reply.priority;
  r.gw_health = reply.gw_health;
  RouteInfo& out = r;
  O2LND_ROUTE_COUNTERS(O2LND_CXX_COUNTER_COPY)
  return r;
}

RoutingInfo decode(const o2lnd_ioc_routing& reply) {
  RoutingInfo r;
  r.forwarding = reply.forwarding != 0;
  r.peer_buffer_credits = reply.peer_buffer_credits;
  r.router_timeout_s = reply.router_timeout_s;
  r.waiting = reply.waiting;
  r.waiting_max = reply.waiting_max;
  r.held_rx = reply.held_rx;
  for (std::size_t i = 0; i < r.pools.size(); ++i) {
    const auto& in = reply.pools[i];  // NOLINT(*-constant-array-index)
    r.pools[i] = RtrPool{in.nbuffers, in.buffer_size, in.credits, in.min_credits, in.taken};
  }
  RoutingInfo& out = r;
  O2LND_ROUTING_COUNTERS(O2LND_CXX_COUNTER_COPY)
  return r;
}

std::string brw_op_name(std::uint32_t op) {
  switch (op) {
    case O2LND_BRW_WRITE:
      return "write";
    case O2LND_BRW_READ:
      return "read";
    default:
      return "unknown(" + std::to_string(op) + ")";
  }
}

Result<Device> Device::open(std::string_view path, std::string_view client) {
  auto backend = FdBackend::open(std::string(path));
  if (!backend) {
    return backend.error();
  }
  return attach(std::move(*backend), client);
}

Result<Device> Device::attach(std::unique_ptr<Backend> backend, std::string_view client) {
  Device dev(std::move(backend), std::string(client));
  auto info = dev.version();
  if (!info) {
    return info.error();
  }
  if (!info->accepts(O2LND_ABI_VERSION)) {
    return Error{EPROTO, "o2lnd module ABI " + std::to_string(info->abi_version) + ", " +
                             dev.client_ + " speaks ABI " + std::to_string(O2LND_ABI_VERSION) +
                             ": upgrade " + dev.client_ + " or load a matching module"};
  }
  dev.info_ = std::move(*info);
  return dev;
}

Result<VersionInfo> Device::version() {
  auto arg = make_arg<o2lnd_ioc_version>();
  int err = backend_->ioctl(O2LND_IOC_VERSION, &arg);
  if (err == EINVAL) {
    // A module before ABI 6 takes only the struct of its own size.
    arg = make_arg<o2lnd_ioc_version>();
    arg.hdr.size = O2LND_IOC_VERSION_SIZE_VER0;
    err = backend_->ioctl(O2LND_IOC_VERSION, &arg);
  }
  if (err != 0) {
    std::string message = "O2LND_IOC_VERSION on " + backend_->name() + ": " + std::strerror(err);
    if (err == ENOTTY || err == EINVAL) {
      message += " (is " + backend_->name() + " an o2lnd device?)";
    }
    return Error{err, std::move(message)};
  }
  return decode(arg);
}

Result<PingResult> Device::ping(Nid nid, std::chrono::milliseconds timeout,
                                std::optional<Nid> source, std::uint32_t max_ids) {
  auto fail = [&](int err, const std::string& why) {
    return Error{err, "failed to ping " + nid.str() + ": " + why};
  };
  if (nid.is_any()) {
    return fail(EINVAL, "LNET_NID_ANY is not a target");
  }
  if (timeout.count() < 0 || timeout.count() > O2LND_PING_TIMEOUT_MAX_MS) {
    return fail(EINVAL, "timeout " + std::to_string(timeout.count()) + " ms out of range (0.." +
                            std::to_string(O2LND_PING_TIMEOUT_MAX_MS) + ")");
  }
  if (max_ids < 1 || max_ids > O2LND_PING_MAX_IDS) {
    return fail(EINVAL, "max_ids " + std::to_string(max_ids) + " out of range (1.." +
                            std::to_string(O2LND_PING_MAX_IDS) + ")");
  }
  auto arg = make_arg<o2lnd_ioc_ping>();
  arg.nid = nid.raw();
  arg.src_nid = source ? source->raw() : O2LND_NID_ANY;
  arg.timeout_ms = static_cast<std::uint32_t>(timeout.count());
  arg.max_ids = max_ids;
  if (int err = backend_->ioctl(O2LND_IOC_PING, &arg); err != 0) {
    return fail(err, std::strerror(err));
  }
  // Trust our own max_ids, not the one in the reply.
  arg.max_ids = max_ids;
  return decode(arg);
}

Result<BrwResult> Device::brw(const BrwRequest& req) {
  auto fail = [&](int err, const std::string& why) {
    return Error{err, "failed to brw " + brw_op_name(req.op) + " " + req.nid.str() + ": " + why};
  };
  if (req.op != O2LND_BRW_WRITE && req.op != O2LND_BRW_READ) {
    return fail(EINVAL, "unknown operation " + std::to_string(req.op));
  }
  if (req.nid.is_any() || req.nid.type() != O2LND_NET_TYPE_O2IB) {
    return fail(EINVAL, "not an o2ib NID");
  }
  if (req.size > O2LND_BRW_MAX_SIZE) {
    return fail(EINVAL, "size " + std::to_string(req.size) + " out of range (0.." +
                            std::to_string(O2LND_BRW_MAX_SIZE) + ")");
  }
  if (req.timeout.count() < 0 || req.timeout.count() > O2LND_PING_TIMEOUT_MAX_MS) {
    return fail(EINVAL, "timeout " + std::to_string(req.timeout.count()) + " ms out of range (0.." +
                            std::to_string(O2LND_PING_TIMEOUT_MAX_MS) + ")");
  }
  auto arg = make_arg<o2lnd_ioc_brw>();
  arg.nid = req.nid.raw();
  arg.src_nid = req.source ? req.source->raw() : O2LND_NID_ANY;
  arg.op = req.op;
  arg.size = req.size;
  arg.timeout_ms = static_cast<std::uint32_t>(req.timeout.count());
  arg.flags = (req.check ? O2LND_BRW_F_CHECK : 0U) | (req.ack ? O2LND_BRW_F_ACK : 0U);
  arg.seed = req.seed;
  if (int err = backend_->ioctl(O2LND_IOC_BRW, &arg); err != 0) {
    return fail(err, std::strerror(err));
  }
  return decode(arg);
}

Result<NetInfo> Device::net(std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_net>();
  arg.index = index;
  if (int err = backend_->ioctl(O2LND_IOC_NET_SHOW, &arg); err != 0) {
    return Error{err,
                 "O2LND_IOC_NET_SHOW of NI " + std::to_string(index) + ": " + std::strerror(err)};
  }
  auto ni = decode(arg);
  ni.index = index;
  return ni;
}

Result<std::vector<NetInfo>> Device::nets() {
  return walk<NetInfo>([this](std::uint32_t i) { return net(i); }, kMaxNets, "O2LND_IOC_NET_SHOW");
}

Result<PeerInfo> Device::peer_show(std::uint32_t ni_index, std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_peer>();
  arg.ni_index = ni_index;
  arg.index = index;
  if (int err = backend_->ioctl(O2LND_IOC_PEER_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_PEER_SHOW of peer " + std::to_string(index) + " on NI " +
                                std::to_string(ni_index));
  }
  auto peer = decode(arg);
  peer.ni_index = ni_index;
  peer.index = index;
  return peer;
}

Result<std::vector<PeerInfo>> Device::peers() {
  auto nis = nets();
  if (!nis) {
    return nis.error();
  }
  return collect<PeerInfo>(
      *nis, [this](std::uint32_t ni, std::uint32_t i) { return peer_show(ni, i); },
      "O2LND_IOC_PEER_SHOW");
}

Result<ConnInfo> Device::conn_show(std::uint32_t ni_index, std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_conn>();
  arg.ni_index = ni_index;
  arg.index = index;
  if (int err = backend_->ioctl(O2LND_IOC_CONN_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_CONN_SHOW of connection " + std::to_string(index) +
                                " on NI " + std::to_string(ni_index));
  }
  auto conn = decode(arg);
  conn.ni_index = ni_index;
  conn.index = index;
  return conn;
}

Result<std::vector<ConnInfo>> Device::conns() {
  auto nis = nets();
  if (!nis) {
    return nis.error();
  }
  return collect<ConnInfo>(
      *nis, [this](std::uint32_t ni, std::uint32_t i) { return conn_show(ni, i); },
      "O2LND_IOC_CONN_SHOW");
}

Result<RouteInfo> Device::route_show(std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_route>();
  arg.index = index;
  if (int err = backend_->ioctl(O2LND_IOC_ROUTE_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_ROUTE_SHOW of route " + std::to_string(index));
  }
  auto route = decode(arg);
  route.index = index;
  return route;
}

Result<std::vector<RouteInfo>> Device::routes() {
  return walk<RouteInfo>([this](std::uint32_t i) { return route_show(i); }, kMaxItems,
                         "O2LND_IOC_ROUTE_SHOW");
}

Result<RoutingInfo> Device::routing() {
  auto arg = make_arg<o2lnd_ioc_routing>();
  if (int err = backend_->ioctl(O2LND_IOC_ROUTING_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_ROUTING_SHOW");
  }
  return decode(arg);
}

LnetPeer decode(const o2lnd_ioc_lpeer& reply) {
  LnetPeer out;
  out.index = reply.index;
  out.count = reply.count;
  out.primary = Nid(reply.primary_nid);
  out.flags = reply.flags;
  out.features = reply.features;
  out.seqno = reply.seqno;
  out.n_nids = reply.n_nids;
  const std::uint32_t n = std::min<std::uint32_t>(reply.n_nids, O2LND_PEER_MAX_NIDS);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto& e = reply.nids[i];
    out.nids.push_back(PeerNid{Nid(e.nid), e.status, e.health, e.selected, e.failures});
  }
  return out;
}

Result<LnetPeer> Device::lpeer_show(std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_lpeer>();
  arg.index = index;
  arg.nid = O2LND_NID_ANY;
  if (int err = backend_->ioctl(O2LND_IOC_LPEER_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_LPEER_SHOW of peer " + std::to_string(index));
  }
  auto p = decode(arg);
  p.index = index;
  return p;
}

Result<LnetPeer> Device::lpeer_of(Nid nid) {
  auto arg = make_arg<o2lnd_ioc_lpeer>();
  arg.nid = nid.raw();
  if (int err = backend_->ioctl(O2LND_IOC_LPEER_SHOW, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_LPEER_SHOW of " + nid.str());
  }
  return decode(arg);
}

Result<std::vector<LnetPeer>> Device::lpeers() {
  return walk<LnetPeer>([this](std::uint32_t i) { return lpeer_show(i); }, kMaxItems,
                        "O2LND_IOC_LPEER_SHOW");
}

Result<LnetPeer> Device::discover(Nid nid, std::chrono::milliseconds timeout) {
  auto fail = [&](int err, const std::string& why) {
    return Error{err, "failed to discover " + nid.str() + ": " + why};
  };
  if (nid.is_any() || nid.type() != O2LND_NET_TYPE_O2IB) {
    return fail(EINVAL, "not an o2ib NID");
  }
  if (timeout.count() < 0 || timeout.count() > O2LND_PING_TIMEOUT_MAX_MS) {
    return fail(EINVAL, "timeout " + std::to_string(timeout.count()) + " ms out of range (0.." +
                            std::to_string(O2LND_PING_TIMEOUT_MAX_MS) + ")");
  }
  auto arg = make_arg<o2lnd_ioc_lpeer>();
  arg.nid = nid.raw();
  arg.timeout_ms = static_cast<std::uint32_t>(timeout.count());
  if (int err = backend_->ioctl(O2LND_IOC_DISCOVER, &arg); err != 0) {
    return fail(err, std::strerror(err));
  }
  return decode(arg);
}

Result<std::uint32_t> Device::peer_close(Nid nid, std::optional<Nid> local) {
  if (nid.is_any()) {
    return invalid("LNET_NID_ANY is not a peer");
  }
  auto arg = make_arg<o2lnd_ioc_peer_close>();
  arg.nid = nid.raw();
  arg.local_nid = local ? local->raw() : O2LND_NID_ANY;
  if (int err = backend_->ioctl(O2LND_IOC_PEER_CLOSE, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_PEER_CLOSE of " + nid.str());
  }
  return std::uint32_t{arg.closed};
}

namespace {

// The NET_ADD/NET_DEL argument of `net` and `ifname`, or why they cannot be.
Result<o2lnd_ioc_net_cfg> net_cfg_arg(std::string_view net, std::string_view ifname,
                                      bool if_required) {
  constexpr std::size_t kIfNameMax = 15;  // IFNAMSIZ - 1
  if (net.empty() || net.size() >= O2LND_NAME_LEN) {
    return invalid("network name '" + std::string(net) + "' is empty or too long");
  }
  if ((if_required && ifname.empty()) || ifname.size() > kIfNameMax) {
    return invalid("interface name '" + std::string(ifname) + "' is empty or too long");
  }
  auto arg = make_arg<o2lnd_ioc_net_cfg>();
  std::memcpy(arg.net, net.data(), net.size());
  std::memcpy(arg.ifname, ifname.data(), ifname.size());
  return arg;
}

}  // namespace

Result<Nid> Device::net_add(std::string_view net, std::string_view ifname) {
  auto arg = net_cfg_arg(net, ifname, true);
  if (!arg) {
    return arg.error();
  }
  if (int err = backend_->ioctl(O2LND_IOC_NET_ADD, &*arg); err != 0) {
    return ioctl_error(
        err, "O2LND_IOC_NET_ADD of " + std::string(net) + "(" + std::string(ifname) + ")");
  }
  return Nid(arg->nid);
}

Result<std::uint32_t> Device::net_del(std::string_view net, std::string_view ifname) {
  auto arg = net_cfg_arg(net, ifname, false);
  if (!arg) {
    return arg.error();
  }
  if (int err = backend_->ioctl(O2LND_IOC_NET_DEL, &*arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_NET_DEL of " + std::string(net) +
                                (ifname.empty() ? "" : "(" + std::string(ifname) + ")"));
  }
  return std::uint32_t{arg->count};
}

Result<std::uint32_t> Device::fault_add(const FaultRule& rule) {
  if (auto ok = validate(rule); !ok) {
    return ok.error();
  }
  auto arg = make_arg<o2lnd_ioc_fault>();
  arg.kind = rule.kind;
  arg.arg = rule.arg;
  arg.peer_nid = rule.peer.raw();
  arg.local_nid = rule.local.raw();
  arg.count = rule.count;
  arg.probability = rule.probability;
  arg.delay_ms = rule.delay_ms;
  arg.queue_depth = rule.queue_depth;
  arg.max_frags = rule.max_frags;
  if (int err = backend_->ioctl(O2LND_IOC_FAULT_ADD, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_FAULT_ADD");
  }
  return std::uint32_t{arg.id};
}

Result<std::monostate> Device::fault_del(std::uint32_t id) {
  if (id == 0) {
    return invalid("fault rule id 0 (use fault_del_all())");
  }
  auto arg = make_arg<o2lnd_ioc_fault>();
  arg.id = id;
  if (int err = backend_->ioctl(O2LND_IOC_FAULT_DEL, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_FAULT_DEL of rule " + std::to_string(id));
  }
  return std::monostate{};
}

Result<std::monostate> Device::fault_del_all() {
  auto arg = make_arg<o2lnd_ioc_fault>();
  arg.id = 0;
  if (int err = backend_->ioctl(O2LND_IOC_FAULT_DEL, &arg); err != 0) {
    return ioctl_error(err, "O2LND_IOC_FAULT_DEL of every rule");
  }
  return std::monostate{};
}

Result<std::vector<FaultRule>> Device::fault_list() {
  auto rule = [this](std::uint32_t index) -> Result<FaultRule> {
    auto arg = make_arg<o2lnd_ioc_fault>();
    arg.index = index;
    if (int err = backend_->ioctl(O2LND_IOC_FAULT_LIST, &arg); err != 0) {
      return ioctl_error(err, "O2LND_IOC_FAULT_LIST of rule " + std::to_string(index));
    }
    return decode(arg);
  };
  return walk<FaultRule>(rule, kMaxItems, "O2LND_IOC_FAULT_LIST");
}

}  // namespace o2lnd
