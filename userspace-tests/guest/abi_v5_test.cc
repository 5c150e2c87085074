// The ABI 5 additions of include/uapi/o2lnd.h against the real module:
// O2LND_IOC_ROUTE_SHOW, O2LND_IOC_ROUTING_SHOW and the router credit fields
// at the end of o2lnd_ioc_peer; and that a caller of ABI 4 is refused by
// every command but VERSION.
//
// The tests run on a node loaded without routes= and without
// forwarding=enabled (the test bed's default), except where they say they
// read whatever routes there are.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "abi_fixture.h"
#include "guest_env.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/uapi.h"

namespace o2lnd::guest {
namespace {

o2lnd_ioc_route route_arg(std::uint32_t index) {
  auto a = make_arg<o2lnd_ioc_route>();
  a.index = index;
  return a;
}

class RoutingAbiTest : public AbiTest {
 protected:
  // Routes configured (0 when ROUTE_SHOW of index 0 is ENOENT).
  [[nodiscard]] std::uint32_t route_count() const {
    auto a = route_arg(0);
    return call(O2LND_IOC_ROUTE_SHOW, &a) == 0 ? a.count : 0;
  }
};

// ---- ABI 4 callers ---------------------------------------------------------------

TEST_F(RoutingAbiTest, EveryCommandButVersionRefusesAnAbi4CallerWithEproto) {
  constexpr std::uint32_t kAbi4 = 4;  // what callers built before routing speak
  auto old = [](auto a) {
    a.hdr.abi_version = kAbi4;
    return a;
  };
  auto ping = make_arg<o2lnd_ioc_ping>();
  ping.nid = kNowhere;
  ping.src_nid = O2LND_NID_ANY;
  ping.max_ids = 1;
  auto brw = make_arg<o2lnd_ioc_brw>();
  brw.nid = kNowhere;
  brw.src_nid = O2LND_NID_ANY;
  brw.op = O2LND_BRW_WRITE;
  auto close = make_arg<o2lnd_ioc_peer_close>();
  close.nid = kNowhere;
  close.local_nid = O2LND_NID_ANY;
  auto fault = make_arg<o2lnd_ioc_fault>();
  fault.kind = O2LND_FAULT_MSG_DROP;
  fault.peer_nid = kNowhere;
  fault.local_nid = O2LND_NID_ANY;
  fault.probability = O2LND_FAULT_PROB_ALWAYS;
  auto peer = make_arg<o2lnd_ioc_peer>();
  peer.ni_index = 1;
  auto conn = make_arg<o2lnd_ioc_conn>();
  conn.ni_index = 1;
  expect_refused(O2LND_IOC_PING, old(ping), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_BRW, old(brw), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_NET_SHOW, old(make_arg<o2lnd_ioc_net>()), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_PEER_SHOW, old(peer), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_CONN_SHOW, old(conn), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_ROUTE_SHOW, old(route_arg(0)), EPROTO, "abi_version 4");
  expect_refused(O2LND_IOC_ROUTING_SHOW, old(make_arg<o2lnd_ioc_routing>()), EPROTO,
                 "abi_version 4");
  // The admin commands check CAP_NET_ADMIN first; as root they get EPROTO.
  if (::geteuid() == 0) {
    expect_refused(O2LND_IOC_PEER_CLOSE, old(close), EPROTO, "abi_version 4");
    expect_refused(O2LND_IOC_FAULT_ADD, old(fault), EPROTO, "abi_version 4");
    expect_refused(O2LND_IOC_FAULT_DEL, old(make_arg<o2lnd_ioc_fault>()), EPROTO, "abi_version 4");
    expect_refused(O2LND_IOC_FAULT_LIST, old(make_arg<o2lnd_ioc_fault>()), EPROTO, "abi_version 4");
  }
}

TEST_F(RoutingAbiTest, VersionAnswersAnAbi4CallerWithTheCurrentAbi) {
  auto a = make_arg<o2lnd_ioc_version>();
  a.hdr.abi_version = 4;
  ASSERT_EQ(call(O2LND_IOC_VERSION, &a), 0) << errno_name(errno);
  EXPECT_EQ(a.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_GE(a.abi_version, 5U) << "ROUTE_SHOW and ROUTING_SHOW came with ABI 5";
}

TEST_F(RoutingAbiTest, TheNumbersAfterNetDelAreEnotty) {
  // (ROUTING_SHOW's number with another direction or size is ROUTING_SHOW
  // since ABI 6: abi_v6_test.cc.)
  auto a = make_arg<o2lnd_ioc_routing>();
  for (unsigned long cmd : {
           static_cast<unsigned long>(_IOWR(O2LND_IOC_MAGIC, 17, o2lnd_ioc_routing)),
           static_cast<unsigned long>(_IOWR(O2LND_IOC_MAGIC, 18, o2lnd_ioc_routing)),
       }) {
    expect_refused(cmd, a, ENOTTY, "an unknown command");
  }
}

// ---- ROUTE_SHOW ------------------------------------------------------------------

TEST_F(RoutingAbiTest, RouteShowHeaderRules) {
  check_header_rules(O2LND_IOC_ROUTE_SHOW, route_arg(0));
}

TEST_F(RoutingAbiTest, RouteShowWithBadPointerIsEfault) {
  // Not read-only: without routes index 0 is ENOENT before anything is
  // written back.
  check_bad_pointers(O2LND_IOC_ROUTE_SHOW, route_arg(0), false);
}

TEST_F(RoutingAbiTest, RouteShowWithoutRoutesIsEnoentAtIndexZero) {
  if (std::uint32_t n = route_count(); n != 0) {
    GTEST_SKIP() << "this node has " << n << " routes (loaded with routes=)";
  }
  expect_refused(O2LND_IOC_ROUTE_SHOW, route_arg(0), ENOENT, "index 0 and no routes");
  // Garbage in the output fields does not change that.
  auto a = route_arg(0);
  std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_route, count));
  expect_refused(O2LND_IOC_ROUTE_SHOW, a, ENOENT, "index 0, no routes, garbage outputs");
}

TEST_F(RoutingAbiTest, RouteShowPastTheLastRouteIsEnoent) {
  std::uint32_t count = route_count();
  for (std::uint32_t index : {count, count + 1, 0x7fffffffU, 0xffffffffU}) {
    expect_refused(O2LND_IOC_ROUTE_SHOW, route_arg(index), ENOENT,
                   "index " + std::to_string(index) + " of " + std::to_string(count));
  }
}

TEST_F(RoutingAbiTest, EveryRouteReadsBackClean) {
  std::uint32_t count = route_count();
  if (count == 0) {
    GTEST_SKIP() << "no routes on this node";
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    SCOPED_TRACE("route " + std::to_string(i));
    auto a = route_arg(i);
    std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_route, count));
    ASSERT_EQ(call(O2LND_IOC_ROUTE_SHOW, &a), 0) << errno_name(errno);
    EXPECT_EQ(a.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
    EXPECT_EQ(a.hdr.size, sizeof(a));
    EXPECT_EQ(a.hdr.flags, 0U);
    EXPECT_EQ(a.hdr.reserved, 0U);
    EXPECT_EQ(a.index, i);
    EXPECT_EQ(a.count, count) << "the route count changed while nothing was configured";
    EXPECT_GE(a.hops, 1U);
    EXPECT_TRUE(a.gw_health == O2LND_HEALTH_UP || a.gw_health == O2LND_HEALTH_DOWN)
        << "gw_health 0x" << std::hex << a.gw_health;
    Nid gw(a.gateway);
    EXPECT_EQ(gw.type(), O2LND_NET_TYPE_O2IB) << gw.str();
    EXPECT_NE(a.net, gw.net()) << "a route to the gateway's own network";
    EXPECT_FALSE(net_name(a.net).starts_with("<")) << "net 0x" << std::hex << a.net;
    EXPECT_NE(a.sent, 0xa5a5a5a5a5a5a5a5ULL) << "sent was not written";
    EXPECT_NE(a.dropped, 0xa5a5a5a5a5a5a5a5ULL) << "dropped was not written";
  }
}

// ---- ROUTING_SHOW ----------------------------------------------------------------

TEST_F(RoutingAbiTest, RoutingShowHeaderRules) {
  check_header_rules(O2LND_IOC_ROUTING_SHOW, make_arg<o2lnd_ioc_routing>());
}

TEST_F(RoutingAbiTest, RoutingShowWithBadPointerIsEfault) {
  // It always answers, so a read-only argument is EFAULT too.
  check_bad_pointers(O2LND_IOC_ROUTING_SHOW, make_arg<o2lnd_ioc_routing>(), true);
}

TEST_F(RoutingAbiTest, RoutingShowOfAnIdleNonRouterHasFullPools) {
  auto a = make_arg<o2lnd_ioc_routing>();
  // Every field but the header is an output: garbage there must not matter.
  std::memset(&a.forwarding, kPattern, sizeof(a) - sizeof(a.hdr));
  ASSERT_EQ(call(O2LND_IOC_ROUTING_SHOW, &a), 0) << errno_name(errno);
  EXPECT_EQ(a.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(a.hdr.size, sizeof(a));
  EXPECT_EQ(a.hdr.flags, 0U);
  EXPECT_EQ(a.hdr.reserved, 0U);
  EXPECT_EQ(a.forwarding, 0U) << "the test bed loads the module without forwarding=enabled";
  EXPECT_EQ(a.waiting, 0U) << "nothing is forwarded, so nothing waits";
  EXPECT_EQ(a.held_rx, 0U);
  EXPECT_LE(a.waiting, a.waiting_max);
  EXPECT_NE(a.peer_buffer_credits, 0xa5a5a5a5U) << "peer_buffer_credits was not written";
  EXPECT_NE(a.router_timeout_s, 0xa5a5a5a5U) << "router_timeout_s was not written";
  const long page = ::sysconf(_SC_PAGESIZE);
  for (std::uint32_t i = 0; i < O2LND_RTR_NPOOLS; ++i) {
    const auto& p = a.pools[i];  // NOLINT(*-constant-array-index)
    SCOPED_TRACE("pool " + std::to_string(i));
    EXPECT_EQ(p.credits, static_cast<std::int32_t>(p.nbuffers)) << "an idle pool is full";
    EXPECT_LE(p.min_credits, p.credits) << "min is the lowest credits ever reached";
    EXPECT_NE(p.nbuffers, 0xa5a5a5a5U) << "nbuffers was not written";
    EXPECT_NE(p.taken, 0xa5a5a5a5a5a5a5a5ULL) << "taken was not written";
  }
  EXPECT_EQ(a.pools[O2LND_RTR_TINY].buffer_size, 0U) << "tiny buffers carry no payload";
  EXPECT_LE(a.pools[O2LND_RTR_SMALL].buffer_size, static_cast<std::uint32_t>(page));
  EXPECT_LE(a.pools[O2LND_RTR_LARGE].buffer_size, 1U << 20);
  EXPECT_EQ(a.forwarded, 0U) << "a node that does not forward forwarded nothing";
  EXPECT_EQ(a.forwarded_bytes, 0U);
  for (std::uint64_t v :
       {a.dropped_no_route, a.dropped_down, a.dropped_timeout, a.dropped_closed, a.dropped_error}) {
    EXPECT_NE(v, 0xa5a5a5a5a5a5a5a5ULL) << "a drop counter was not written";
  }
  EXPECT_EQ(a.dropped_timeout, 0U) << "nothing ever waited";
  EXPECT_EQ(a.dropped_closed, 0U) << "nothing ever waited";
}

// ---- PEER_SHOW: router credits ---------------------------------------------------

TEST_F(RoutingAbiTest, EveryPeerHasConsistentRouterCredits) {
  std::uint32_t nis = net_count();
  for (std::uint32_t ni = 1; ni < nis; ++ni) {
    for (std::uint32_t index = 0;; ++index) {
      SCOPED_TRACE("NI " + std::to_string(ni) + " peer " + std::to_string(index));
      auto a = make_arg<o2lnd_ioc_peer>();
      a.ni_index = ni;
      a.index = index;
      std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_peer, count));
      int rc = call(O2LND_IOC_PEER_SHOW, &a);
      if (rc == ENOENT) {
        break;
      }
      ASSERT_EQ(rc, 0) << errno_name(rc);
      ASSERT_LT(index, 100000U) << "PEER_SHOW does not end";
      for (std::uint32_t v : {static_cast<std::uint32_t>(a.rtr_credits), a.rtr_credits_max,
                              static_cast<std::uint32_t>(a.rtr_credits_min), a.rtr_queued}) {
        EXPECT_NE(v, 0xa5a5a5a5U) << "an ABI 5 field was not written";
      }
      EXPECT_LE(a.rtr_credits, static_cast<std::int32_t>(a.rtr_credits_max));
      EXPECT_LE(a.rtr_credits_min, a.rtr_credits) << "min is the lowest rtr_credits reached";
      if (a.rtr_credits >= 0) {
        EXPECT_EQ(a.rtr_queued, 0U) << "messages wait only when no router credit is left";
      }
      EXPECT_EQ(a.rtr_queued, 0U) << "a node that does not forward queues nothing";
    }
  }
}

// ---- the library against the real module -----------------------------------------

TEST(LibraryV5, RoutesAndRoutingThroughTheLibrary) {
  auto dev = Device::open(settings().device, "o2lnd_guest_abi_tests");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  auto routes = dev->routes();
  ASSERT_TRUE(routes.ok()) << routes.error().message;
  for (const auto& r : *routes) {
    EXPECT_EQ(r.count, routes->size());
  }
  auto routing = dev->routing();
  ASSERT_TRUE(routing.ok()) << routing.error().message;
  for (const auto& p : routing->pools) {
    EXPECT_LE(p.credits, static_cast<std::int32_t>(p.nbuffers));
  }
}

}  // namespace
}  // namespace o2lnd::guest
