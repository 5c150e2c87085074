// The counters of the uapi, from its lists (include/uapi/o2lnd_counters.h):
// their C++ fields, what each is (CounterInfo), and a visitor over the
// counters of a uapi reply or of the library's struct (same field names).
// A counter added to a list appears in NetInfo/PeerInfo/..., in decode(),
// in o2ctl's YAML and in the man page test without touching this library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <type_traits>

#include "o2lnd/uapi.h"

namespace o2lnd {

// The C++ type of a counter of uapi type T (__u64, __u32).
template <typename T>
using counter_t =
    std::conditional_t<sizeof(T) == sizeof(std::uint64_t), std::uint64_t, std::uint32_t>;

struct CounterInfo {
  std::string_view name;  // the uapi field, "tx_no_credit_drops"
  std::string_view view;  // where o2ctl prints it: "stats", "lnd", "verbose", "traffic", "show"
  std::string_view key;   // its YAML key, "queue_full_drops"
  std::string_view doc;   // what it counts
};

}  // namespace o2lnd

// A list entry as a member of the library's structs.
#define O2LND_CXX_COUNTER(type, name, view, key, doc) ::o2lnd::counter_t<type> name = 0;
// A list entry as a CounterInfo (an initializer).
#define O2LND_CXX_COUNTER_INFO(type, name, view, key, doc) \
  ::o2lnd::CounterInfo{#name, #view, key, doc},
// A list entry as a call f(info, value) on object x.
#define O2LND_CXX_COUNTER_VISIT(type, name, view, key, doc) \
  f(::o2lnd::CounterInfo{#name, #view, key, doc}, static_cast<std::uint64_t>(x.name));
// A list entry copied from reply to out.
#define O2LND_CXX_COUNTER_COPY(type, name, view, key, doc) out.name = reply.name;

namespace o2lnd {

inline constexpr std::array kNiCounters = {O2LND_NI_COUNTERS(O2LND_CXX_COUNTER_INFO)};
inline constexpr std::array kPeerCounters = {O2LND_PEER_COUNTERS(O2LND_CXX_COUNTER_INFO)};
inline constexpr std::array kConnCounters = {O2LND_CONN_COUNTERS(O2LND_CXX_COUNTER_INFO)};
inline constexpr std::array kRouteCounters = {O2LND_ROUTE_COUNTERS(O2LND_CXX_COUNTER_INFO)};
inline constexpr std::array kRoutingCounters = {O2LND_ROUTING_COUNTERS(O2LND_CXX_COUNTER_INFO)};

// A visitor's callback as a type (to name an instantiation:
// visit_ni_counters<NetInfo, CounterSinkRef>).
using CounterSinkRef = const std::function<void(const CounterInfo&, std::uint64_t)>&;

// f(const CounterInfo&, std::uint64_t) for every counter of x, in list
// order.  x: an o2lnd_ioc_net or a NetInfo (and so on for the others).
template <typename T, typename F>
void visit_ni_counters(const T& x, F&& f) {
  O2LND_NI_COUNTERS(O2LND_CXX_COUNTER_VISIT)
}
template <typename T, typename F>
void visit_peer_counters(const T& x, F&& f) {
  O2LND_PEER_COUNTERS(O2LND_CXX_COUNTER_VISIT)
}
template <typename T, typename F>
void visit_conn_counters(const T& x, F&& f) {
  O2LND_CONN_COUNTERS(O2LND_CXX_COUNTER_VISIT)
}
template <typename T, typename F>
void visit_route_counters(const T& x, F&& f) {
  O2LND_ROUTE_COUNTERS(O2LND_CXX_COUNTER_VISIT)
}
template <typename T, typename F>
void visit_routing_counters(const T& x, F&& f) {
  O2LND_ROUTING_COUNTERS(O2LND_CXX_COUNTER_VISIT)
}

// The wire layout the lists generate is ABI 5's (old userspace keeps
// working): the first counter of each list where it was, no struct below
// its VER0 size (structs only grow at their end).
static_assert(sizeof(o2lnd_ioc_version) == O2LND_IOC_VERSION_SIZE_VER1);
static_assert(offsetof(o2lnd_ioc_version, abi_version_min) == O2LND_IOC_VERSION_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_ping) >= O2LND_IOC_PING_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_net) >= O2LND_IOC_NET_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_peer) >= O2LND_IOC_PEER_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_conn) >= O2LND_IOC_CONN_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_peer_close) >= O2LND_IOC_PEER_CLOSE_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_fault) >= O2LND_IOC_FAULT_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_brw) >= O2LND_IOC_BRW_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_route) >= O2LND_IOC_ROUTE_SIZE_VER0);
static_assert(sizeof(o2lnd_ioc_routing) >= O2LND_IOC_ROUTING_SIZE_VER0);
static_assert(offsetof(o2lnd_ioc_net, send_count) == 176);
static_assert(offsetof(o2lnd_ioc_net, tx_timeouts) == 288);
static_assert(offsetof(o2lnd_ioc_net, rdma_bytes) == 352);
static_assert(offsetof(o2lnd_ioc_peer, races_received) == 80);
static_assert(offsetof(o2lnd_ioc_peer, stale_closes) == 124);
static_assert(offsetof(o2lnd_ioc_peer, send_count) == 136);
static_assert(offsetof(o2lnd_ioc_peer, tx_timeouts) == 216);
static_assert(offsetof(o2lnd_ioc_conn, keepalives) == 132);
static_assert(offsetof(o2lnd_ioc_route, sent) == 48);
static_assert(offsetof(o2lnd_ioc_routing, forwarded) == 112);

}  // namespace o2lnd
