// Device: the o2lnd char device, typed.  Every call fills the ioctl header
// (abi_version = O2LND_ABI_VERSION, size = sizeof the struct, flags and
// reserved 0) and zeroes every other input byte.  The counters of NetInfo,
// PeerInfo, ConnInfo, RouteInfo and RoutingInfo are generated from the
// uapi's lists (o2lnd/counters.h), under their uapi names.
#pragma once

#include <linux/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/counters.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"
#include "o2lnd/uapi.h"

namespace o2lnd {

inline constexpr std::string_view kDefaultDevicePath = "/dev/o2lnd";
inline constexpr std::uint32_t kAbiVersion = O2LND_ABI_VERSION;

struct VersionInfo {
  std::uint32_t abi_version = 0;  // the module's
  std::string module_version;
  // The oldest ABI the module accepts (ABI 6); an ABI 5 module accepts only
  // its own, so this is abi_version when its reply did not have it.
  std::uint32_t abi_version_min = 0;

  // Whether the module accepts callers built for ABI `abi`.
  [[nodiscard]] bool accepts(std::uint32_t abi) const {
    return abi >= abi_version_min && abi <= abi_version;
  }
};

// An NI status word as the module reports it: "up", "down", or "unknown".
std::string_view status_name(std::uint32_t status);

struct PingId {
  Nid nid;
  std::uint32_t status = 0;  // O2LND_NI_STATUS_UP/_DOWN, 0 if not reported
  bool operator==(const PingId&) const = default;
};

struct PingResult {
  std::uint32_t pid = 0;
  // How many NIDs the target reported; may exceed ids.size() when the
  // target has more NIDs than were asked for (see truncated()).
  std::uint32_t n_ids = 0;
  std::vector<PingId> ids;  // min(n_ids, max_ids) entries; the first is 0@lo
  std::chrono::nanoseconds rtt{0};

  [[nodiscard]] bool truncated() const { return n_ids > ids.size(); }
};

// One local NI (O2LND_IOC_NET_SHOW).
struct NetInfo {
  std::uint32_t index = 0;
  std::uint32_t count = 0;  // NIs the module had when this one was read
  Nid nid;
  std::uint32_t status = 0;
  std::string net;      // "o2ib0"
  std::string ifname;   // "eth0", "" for lo
  std::string devname;  // "rxe0", "" until resolved
  std::uint64_t incarnation = 0;
  std::uint32_t peer_credits = 0;
  std::uint32_t credits = 0;
  std::uint32_t timeout_s = 0;
  std::uint32_t max_msg_size = 0;
  std::uint32_t npeers = 0;
  std::uint32_t nconns = 0;
  std::uint32_t nconns_established = 0;
  // Every counter of O2LND_NI_COUNTERS (send_count, ..., tx_no_credit_drops,
  // ..., bulk_errors).
  O2LND_NI_COUNTERS(O2LND_CXX_COUNTER)
  // NI tx credits (ABI 3): `credits` when idle; below 0, that many
  // messages wait for one.
  std::int32_t tx_credits = 0;
  std::int32_t tx_credits_min = 0;     // the lowest tx_credits ever reached
  std::uint32_t tx_queued = 0;         // messages waiting for an NI tx credit
  std::uint32_t ntx = 0;               // tunable: txs alive at most
  std::uint32_t tx_live = 0;           // txs alive now
  std::uint32_t peer_credits_hiw = 0;  // tunable: credits owed before a NOOP
  std::uint32_t concurrent_sends = 0;  // tunable: Sends in flight per connection
  std::uint32_t keepalive_s = 0;       // tunable: idle s before a keepalive (0: off)
  // Bulk transfers (ABI 4).
  std::uint32_t max_immediate = 0;  // largest payload sent inline; larger ones go by RDMA
  std::uint32_t max_frags = 0;      // RDMA fragments offered at connect
  std::uint32_t mr_pool_size = 0;   // fast-registration MRs of the NI's device
  std::uint32_t mr_pool_used = 0;   // of them, in use
  std::uint32_t mr_max_pages = 0;   // pages one MR maps
  std::uint32_t cksum = 0;          // tunable: message checksums on (1) or off (0)
  std::uint64_t mr_recovered = 0;   // MRs replaced after a failed invalidation
  std::uint32_t health = 0;         // LNet health, 0..O2LND_HEALTH_MAX (ABI 7)

  [[nodiscard]] bool up() const { return status == O2LND_NI_STATUS_UP; }
};

// One NID of an LNet peer.
struct PeerNid {
  Nid nid;
  std::uint32_t status = 0;  // O2LND_NI_STATUS_UP/_DOWN as the peer said
  std::uint32_t health = 0;  // 0..O2LND_HEALTH_MAX
  std::uint64_t selected = 0;
  std::uint64_t failures = 0;
  bool operator==(const PeerNid&) const = default;
};

// An LNet peer: one node, all its NIDs, as discovery learned them
// (O2LND_IOC_LPEER_SHOW, O2LND_IOC_DISCOVER).
struct LnetPeer {
  std::uint32_t index = 0;
  std::uint32_t count = 0;  // LNet peers known when this one was read
  Nid primary;
  std::uint32_t flags = 0;     // O2LND_LPEER_F_*
  std::uint32_t features = 0;  // its LNet ping feature bits
  std::uint32_t seqno = 0;     // of its ping info
  std::uint32_t n_nids = 0;    // NIDs it listed; nids holds at most 16
  std::vector<PeerNid> nids;   // primary first

  [[nodiscard]] bool multi_rail() const { return (flags & O2LND_LPEER_F_MULTI_RAIL) != 0; }
  [[nodiscard]] bool pushed() const { return (flags & O2LND_LPEER_F_PUSHED) != 0; }
  [[nodiscard]] bool pushed_to_us() const { return (flags & O2LND_LPEER_F_PUSHED_TO_US) != 0; }
};

// One peer of an NI (O2LND_IOC_PEER_SHOW).
struct PeerInfo {
  std::uint32_t ni_index = 0;
  Nid local_nid;  // the NI's NID (filled by peers(); peer_show() leaves it 0)
  std::uint32_t index = 0;
  std::uint32_t count = 0;  // peers the NI had when this one was read
  std::uint32_t state = 0;  // O2LND_PEER_*
  Nid nid;
  std::uint64_t incarnation = 0;
  std::array<std::uint32_t, O2LND_CONN_NSTATES> conns{};  // by O2LND_CONN_*
  // Every counter of O2LND_PEER_COUNTERS (races_received, ..., send_count,
  // ..., tx_timeouts).
  O2LND_PEER_COUNTERS(O2LND_CXX_COUNTER)
  std::int32_t last_error = 0;    // negative errno, 0 if none
  std::uint32_t last_reject = 0;  // O2LND_REJECT_*, 0 if none
  std::uint32_t next_retry_ms = 0;
  std::uint32_t backoff_ms = 0;
  std::uint32_t tx_queued = 0;
  // Credits and health (ABI 3).
  std::int32_t tx_credits = 0;  // available now; below 0, that many wait
  std::uint32_t tx_credits_max = 0;
  std::int32_t tx_credits_min = 0;
  std::uint32_t credit_queued = 0;         // messages waiting for a peer tx credit
  std::uint32_t health = O2LND_HEALTH_UP;  // O2LND_HEALTH_*
  std::uint32_t failures = 0;              // in a row
  std::uint32_t downs = 0;                 // times marked down
  std::uint32_t alive_ms = kAliveNever;    // ms since last heard from
  // Router buffer credits of the peer on a router (ABI 5): rtr_credits_max
  // (peer_buffer_credits) when idle; below 0, that many of its messages
  // wait for one.
  std::int32_t rtr_credits = 0;
  std::uint32_t rtr_credits_max = 0;
  std::int32_t rtr_credits_min = 0;  // the lowest rtr_credits ever reached
  std::uint32_t rtr_queued = 0;      // its messages waiting for a router buffer

  // alive_ms of a peer never heard from.
  static constexpr std::uint32_t kAliveNever = ~std::uint32_t{0};
  [[nodiscard]] bool never_alive() const { return alive_ms == kAliveNever; }
  [[nodiscard]] bool down() const { return health == O2LND_HEALTH_DOWN; }

  // INIT + ACTIVE_CONNECT + PASSIVE_WAIT.
  [[nodiscard]] std::uint32_t conns_connecting() const {
    return conns[O2LND_CONN_INIT] + conns[O2LND_CONN_ACTIVE_CONNECT] +
           conns[O2LND_CONN_PASSIVE_WAIT];
  }
};

// One connection of an NI (O2LND_IOC_CONN_SHOW).
struct ConnInfo {
  std::uint32_t ni_index = 0;
  Nid local_nid;  // the NI's NID (filled by conns(); conn_show() leaves it 0)
  std::uint32_t index = 0;
  std::uint32_t count = 0;
  std::uint32_t state = 0;  // O2LND_CONN_*
  Nid peer_nid;
  std::uint64_t peer_stamp = 0;
  std::uint32_t phase = 0;  // O2LND_PHASE_*
  bool active = false;
  std::uint32_t age_ms = 0;
  std::uint32_t deadline_ms = 0;
  std::uint32_t queue_depth = 0;
  std::uint32_t max_frags = 0;
  std::int32_t credits = 0;
  std::int32_t outstanding = 0;
  std::uint32_t nposted = 0;
  std::uint32_t tx_queued = 0;
  std::int32_t error = 0;
  std::uint32_t qp_num = 0;
  std::uint32_t nrx = 0;
  // ABI 3.
  std::int32_t reserved_credits = 0;   // for PUT_REQ/GET_REQ replies sent without a credit
  std::uint32_t concurrent_sends = 0;  // cap on nposted
  std::uint32_t sq_size = 0;           // send-queue slots of the QP
  std::uint32_t sq_free = 0;
  std::uint32_t noops_posted = 0;         // NOOPs posted, not completed (at most 2)
  std::uint32_t noops_queued = 0;         // NOOPs and credit-less messages waiting
  std::uint32_t idle_ms = 0;              // since the last Send was posted
  O2LND_CONN_COUNTERS(O2LND_CXX_COUNTER)  // keepalives
  // ABI 10.
  std::uint32_t comp_vector = 0;   // its CQ's completion vector
  std::uint32_t comp_vectors = 0;  // its device's (0: no QP, or an older module)
};

// One route (O2LND_IOC_ROUTE_SHOW).
struct RouteInfo {
  std::uint32_t index = 0;
  std::uint32_t count = 0;                 // routes configured when this one was read
  std::uint32_t net = 0;                   // the remote network (high 32 bits of its NIDs)
  std::uint32_t hops = 0;                  // 1 unless given
  Nid gateway;                             // on a local network
  std::uint32_t priority = 0;              // 0 highest
  std::uint32_t gw_health = 0;             // O2LND_HEALTH_* of the gateway peer
  O2LND_ROUTE_COUNTERS(O2LND_CXX_COUNTER)  // sent, dropped

  [[nodiscard]] bool up() const { return gw_health == O2LND_HEALTH_UP; }
};

// One router buffer pool (O2LND_RTR_TINY, _SMALL, _LARGE).
struct RtrPool {
  std::uint32_t nbuffers = 0;     // its credits when idle
  std::uint32_t buffer_size = 0;  // payload bytes one buffer holds
  std::int32_t credits = 0;       // available now; below 0, that many wait
  std::int32_t min_credits = 0;   // the lowest credits ever reached
  std::uint64_t taken = 0;        // buffers handed out since load
};

// The router's state (O2LND_IOC_ROUTING_SHOW).
struct RoutingInfo {
  bool forwarding = false;  // forwards between its networks
  std::uint32_t peer_buffer_credits = 0;
  std::uint32_t router_timeout_s = 0;
  std::uint32_t waiting = 0;      // messages waiting now (for a peer or a pool credit)
  std::uint32_t waiting_max = 0;  // the most ever waiting at once
  std::uint32_t held_rx = 0;      // receive buffers held by waiting messages
  std::array<RtrPool, O2LND_RTR_NPOOLS> pools{};  // by O2LND_RTR_*
  O2LND_ROUTING_COUNTERS(O2LND_CXX_COUNTER)       // forwarded, ..., dropped_error
};

// One bulk RPC of the selftest service (O2LND_IOC_BRW).
struct BrwRequest {
  Nid nid;
  std::optional<Nid> source;             // the local NID to send from (any when empty)
  std::uint32_t op = O2LND_BRW_WRITE;    // O2LND_BRW_WRITE or O2LND_BRW_READ
  std::uint32_t size = 0;                // 0..O2LND_BRW_MAX_SIZE bytes
  std::chrono::milliseconds timeout{0};  // 0: the module's default
  bool check = false;                    // O2LND_BRW_F_CHECK: fill and verify a pattern
  bool ack = false;                      // O2LND_BRW_F_ACK: a write asks for the LNet ACK
  std::uint64_t seed = 0;                // the pattern's seed
};

struct BrwResult {
  std::chrono::nanoseconds rtt{0};
  bool rdma = false;  // the payload went by RDMA (else inline)
  // ABI 11: LNet messages of its last attempt: 2 (GET + REPLY, PUT + ACK),
  // 1 (a PUT that asked for no ACK); 0 from an older module
  std::uint32_t messages = 0;
};

// "write" / "read" for O2LND_BRW_WRITE / _READ ("unknown(N)" otherwise).
std::string brw_op_name(std::uint32_t op);

// A fault rule (O2LND_IOC_FAULT_*).  The defaults are "any peer, any local
// NI, no limit, always".
struct FaultRule {
  std::uint32_t id = 0;    // set by the module
  std::uint32_t kind = 0;  // O2LND_FAULT_*
  std::uint32_t arg = 0;   // event, phase, reason or message type
  Nid peer = Nid::any();
  Nid local = Nid::any();
  std::uint32_t count = 0;                              // 0: no limit
  std::uint32_t probability = O2LND_FAULT_PROB_ALWAYS;  // per million
  std::uint32_t delay_ms = 0;
  std::uint32_t queue_depth = 0;
  std::uint32_t max_frags = 0;
  std::uint32_t fired = 0;  // LIST only

  bool operator==(const FaultRule&) const = default;
};

// The NameKind of a fault kind's arg (CM event, phase, reject reason,
// message type), or nullopt for a kind without an arg (SEND_DELAY) or an
// unknown kind.
std::optional<NameKind> fault_arg_kind(std::uint32_t kind);
// The rule's arg by name: "connect_request", "route", "conn_stale", "any";
// "none" for a kind without one.
std::string fault_arg_name(const FaultRule& rule);
// Whether the kind takes delay_ms (CM_DELAY, SEND_DELAY).
bool fault_has_delay(std::uint32_t kind);
// Checks a rule as the module does before FAULT_ADD: kind, arg for the
// kind (CM events but DEVICE_REMOVAL), probability 1..
// O2LND_FAULT_PROB_ALWAYS, delay_ms 1..O2LND_FAULT_MAX_DELAY_MS for a kind
// with a delay and 0 otherwise, queue_depth (0 or 2..255) and max_frags
// (0..257) only for REJECT, peer and local o2ib NIDs or any.  EINVAL with
// the reason.
Result<std::monostate> validate(const FaultRule& rule);

// Decoders of kernel replies (public so tests can feed them odd replies).
VersionInfo decode(const o2lnd_ioc_version& reply);
PingResult decode(const o2lnd_ioc_ping& reply);
NetInfo decode(const o2lnd_ioc_net& reply);
PeerInfo decode(const o2lnd_ioc_peer& reply);
ConnInfo decode(const o2lnd_ioc_conn& reply);
FaultRule decode(const o2lnd_ioc_fault& reply);
BrwResult decode(const o2lnd_ioc_brw& reply);
RouteInfo decode(const o2lnd_ioc_route& reply);
RoutingInfo decode(const o2lnd_ioc_routing& reply);
LnetPeer decode(const o2lnd_ioc_lpeer& reply);

// A zeroed ioctl argument with its header filled for this ABI.
template <typename T>
T make_arg() {
  T arg{};
  arg.hdr.abi_version = O2LND_ABI_VERSION;
  arg.hdr.size = sizeof(T);
  return arg;
}

class Device {
 public:
  // Opens the device and checks the module's ABI (see attach()).  `client`
  // names the program in the ABI mismatch message ("o2ctl").
  static Result<Device> open(std::string_view path = kDefaultDevicePath,
                             std::string_view client = "libo2lnd");

  // Takes over `backend` and asks the module its ABI (O2LND_IOC_VERSION).
  // Fails with EPROTO when the module does not accept this ABI (it accepts
  // abi_version_min..abi_version):
  //   "o2lnd module ABI 5, o2ctl speaks ABI 6: upgrade o2ctl or load a
  //    matching module"
  static Result<Device> attach(std::unique_ptr<Backend> backend,
                               std::string_view client = "libo2lnd");

  // Asks the module again (O2LND_IOC_VERSION).  A module older than ABI 6
  // refuses the larger struct (EINVAL): asked again with the ABI 5 one.
  Result<VersionInfo> version();
  // What the module said when the device was opened.
  [[nodiscard]] const VersionInfo& module_info() const { return info_; }

  // LNet ping of `nid`.  timeout 0 lets the module apply its default
  // (O2LND_PING_TIMEOUT_DEFAULT_MS); at most O2LND_PING_TIMEOUT_MAX_MS.
  // `source`: the local NID to send from (any when empty).  `max_ids`:
  // 1..O2LND_PING_MAX_IDS NIDs to return.  On failure errnum is the
  // module's (ETIMEDOUT, EHOSTUNREACH, ECONNREFUSED, ...), the message
  // "failed to ping NID: STRERROR".  Only reads the Device, so several
  // threads may ping through one Device when its Backend's ioctl is
  // thread-safe (FdBackend's is: one ioctl(2) per call).
  Result<PingResult> ping(Nid nid, std::chrono::milliseconds timeout = {},
                          std::optional<Nid> source = std::nullopt,
                          std::uint32_t max_ids = O2LND_PING_MAX_IDS);

  // One bulk RPC (O2LND_IOC_BRW): a write PUTs req.size bytes to the peer,
  // a read GETs them from it; with req.check both ends fill and verify a
  // pattern of req.seed.  Checked first as the module does (EINVAL without
  // calling it: op, size, timeout, an o2ib target).  On failure errnum is
  // the module's (EBADMSG: the pattern did not verify; ETIMEDOUT,
  // EHOSTUNREACH, ...), the message "failed to brw write NID: STRERROR".
  // Thread-safe like ping().
  Result<BrwResult> brw(const BrwRequest& req);

  // One local NI by index; ENOENT past the last.
  Result<NetInfo> net(std::uint32_t index);
  // All local NIs: NET_SHOW from index 0 until ENOENT.  Any other error
  // is returned as is.
  Result<std::vector<NetInfo>> nets();

  // One peer of NI `ni_index` (1.., as in net()); ENOENT past the last, or
  // for NI 0 (0@lo) or an NI that does not exist.
  Result<PeerInfo> peer_show(std::uint32_t ni_index, std::uint32_t index);
  // Every peer of every o2ib NI: the NIs of nets() (0@lo skipped), and on
  // each PEER_SHOW from index 0 until ENOENT.  local_nid is set.
  Result<std::vector<PeerInfo>> peers();

  // One connection of NI `ni_index`; ENOENT past the last.
  Result<ConnInfo> conn_show(std::uint32_t ni_index, std::uint32_t index);
  // Every connection of every o2ib NI, as peers().
  Result<std::vector<ConnInfo>> conns();

  // One route by index (ROUTE_SHOW); ENOENT past the last.
  Result<RouteInfo> route_show(std::uint32_t index);
  // Every route: ROUTE_SHOW from index 0 until ENOENT (none: empty).  Any
  // other error is returned as is.
  Result<std::vector<RouteInfo>> routes();
  // The router's state and buffer pools (ROUTING_SHOW).
  Result<RoutingInfo> routing();

  // One LNet peer by index; ENOENT past the last.
  Result<LnetPeer> lpeer_show(std::uint32_t index);
  // The LNet peer that lists `nid`; ENOENT when none does.
  Result<LnetPeer> lpeer_of(Nid nid);
  // Every LNet peer: LPEER_SHOW from index 0 until ENOENT.
  Result<std::vector<LnetPeer>> lpeers();
  // Discovers the peer of `nid` as `lnetctl discover` does: pings it,
  // learns its NIDs, pushes ours when it does discovery.  EINVAL (not an
  // o2ib NID, timeout out of range) without calling the module; EPERM
  // without CAP_NET_ADMIN; the ping's or the push's errno.
  Result<LnetPeer> discover(Nid nid, std::chrono::milliseconds timeout);

  // Closes every connection to `nid` (on NI `local`, or on every NI) and
  // cancels its reconnect; returns how many were closed.  ENOENT when no NI
  // knows the peer, EPERM without CAP_NET_ADMIN.
  Result<std::uint32_t> peer_close(Nid nid, std::optional<Nid> local = std::nullopt);

  // Adds an NI on network `net` ("o2ibN") over interface `ifname` at run
  // time, as `lnetctl net add`; returns its NID.  EINVAL for a name that
  // cannot fit (checked here first) or that the module refuses; ENODEV or
  // EADDRNOTAVAIL (no such interface, no IPv4 address, no RDMA device);
  // EEXIST; ENOSPC (the module's NI limit); EPERM without CAP_NET_ADMIN.
  Result<Nid> net_add(std::string_view net, std::string_view ifname);
  // Deletes the NI of `net` over `ifname`, or every NI of `net` when
  // `ifname` is empty, as `lnetctl net del`: its connections are closed and
  // freed before this returns.  Returns how many NIs were deleted; ENOENT
  // when none matches.
  Result<std::uint32_t> net_del(std::string_view net, std::string_view ifname = {});

  // Adds a fault rule (validate()d first; EINVAL without calling the
  // module); returns its id.  ENOSPC past O2LND_FAULT_MAX_RULES.
  Result<std::uint32_t> fault_add(const FaultRule& rule);
  // Deletes rule `id` (> 0); ENOENT for an unknown id.
  Result<std::monostate> fault_del(std::uint32_t id);
  // Deletes every rule.
  Result<std::monostate> fault_del_all();
  // Every rule: FAULT_LIST from index 0 until ENOENT.
  Result<std::vector<FaultRule>> fault_list();

 private:
  Device(std::unique_ptr<Backend> backend, std::string client)
      : backend_(std::move(backend)), client_(std::move(client)) {}

  std::unique_ptr<Backend> backend_;
  std::string client_;
  VersionInfo info_;
};

}  // namespace o2lnd
