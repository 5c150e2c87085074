// The ABI 4 additions of include/uapi/o2lnd.h against the real module:
// O2LND_IOC_BRW (bulk RPCs of the selftest service) and the bulk fields at
// the end of o2lnd_ioc_net.
//
// Refused calls name kNowhere (192.0.2.1@o2ib0) or a network nobody has,
// so they never start traffic even when a check is missing.  The
// positive transfers need --peer-nid.
#include <sys/ioctl.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "abi_fixture.h"
#include "guest_env.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/uapi.h"

namespace o2lnd::guest {
namespace {

// 192.168.1.2@o2ib9: a network no NI of the module is on.
constexpr std::uint64_t kOtherNet = 0x00050009c0a80102ULL;

o2lnd_ioc_brw valid_brw(std::uint64_t nid = kNowhere) {
  auto a = make_arg<o2lnd_ioc_brw>();
  a.nid = nid;
  a.src_nid = O2LND_NID_ANY;
  a.op = O2LND_BRW_WRITE;
  a.size = 4096;
  a.timeout_ms = 1000;
  return a;
}

using BrwAbiTest = AbiTest;

TEST_F(BrwAbiTest, BrwHeaderRules) { check_header_rules(O2LND_IOC_BRW, valid_brw()); }

TEST_F(BrwAbiTest, BrwWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_BRW, valid_brw(), false);
}

TEST_F(BrwAbiTest, BrwWithAnUnknownOpIsEinval) {
  for (std::uint32_t op : {0U, 3U, 0xffffffffU}) {
    auto a = valid_brw();
    a.op = op;
    expect_refused(O2LND_IOC_BRW, a, EINVAL, "op " + std::to_string(op));
  }
}

TEST_F(BrwAbiTest, BrwAboveTheMaxSizeIsEinval) {
  for (std::uint32_t size : {std::uint32_t{O2LND_BRW_MAX_SIZE + 1}, 0xffffffffU}) {
    for (std::uint32_t op : {std::uint32_t{O2LND_BRW_WRITE}, std::uint32_t{O2LND_BRW_READ}}) {
      auto a = valid_brw();
      a.op = op;
      a.size = size;
      expect_refused(O2LND_IOC_BRW, a, EINVAL,
                     "op " + std::to_string(op) + " size " + std::to_string(size));
    }
  }
}

TEST_F(BrwAbiTest, BrwWithAnUnknownFlagIsEinval) {
  // 0x2 is O2LND_BRW_F_ACK since ABI 11: the first unknown bit is 0x4
  for (std::uint32_t flags : {0x4U, 0x80000000U, 0xffffffffU}) {
    auto a = valid_brw();
    a.flags = flags;
    expect_refused(O2LND_IOC_BRW, a, EINVAL, "flags " + std::to_string(flags));
  }
}

TEST_F(BrwAbiTest, BrwWithNonzeroPadIsEinval) {
  for (std::uint32_t pad : {1U, 0x80000000U}) {
    auto a = valid_brw();
    a.pad = pad;
    expect_refused(O2LND_IOC_BRW, a, EINVAL, "pad " + std::to_string(pad));
  }
}

TEST_F(BrwAbiTest, BrwWithNonzeroPad2IsEinval) {
  for (std::uint32_t pad : {1U, 0x80000000U}) {
    auto a = valid_brw();
    a.pad2 = pad;
    expect_refused(O2LND_IOC_BRW, a, EINVAL, "pad2 " + std::to_string(pad));
  }
}

TEST_F(BrwAbiTest, BrwTimeoutAboveMaxIsEinval) {
  for (std::uint32_t t : {std::uint32_t{O2LND_PING_TIMEOUT_MAX_MS + 1}, 0xffffffffU}) {
    auto a = valid_brw();
    a.timeout_ms = t;
    expect_refused(O2LND_IOC_BRW, a, EINVAL, "timeout_ms " + std::to_string(t));
  }
}

TEST_F(BrwAbiTest, BrwOfANonO2ibNidIsEinval) {
  expect_refused(O2LND_IOC_BRW, valid_brw(kTcpNid), EINVAL, "nid 192.168.1.2@tcp0");
  expect_refused(O2LND_IOC_BRW, valid_brw(O2LND_LO_NID), EINVAL, "nid 0@lo");
  expect_refused(O2LND_IOC_BRW, valid_brw(O2LND_NID_ANY), EINVAL, "nid NID_ANY");
  expect_refused(O2LND_IOC_BRW, valid_brw(Nid::from_parts(7, 0, 0xc0a80102).raw()), EINVAL,
                 "a NID of lnd type 7");
}

TEST_F(BrwAbiTest, BrwToANetWithoutAnNiIsEhostunreach) {
  for (std::uint32_t op : {std::uint32_t{O2LND_BRW_WRITE}, std::uint32_t{O2LND_BRW_READ}}) {
    auto a = valid_brw(kOtherNet);
    a.op = op;
    a.size = O2LND_BRW_MAX_SIZE;
    a.flags = O2LND_BRW_F_CHECK;
    EXPECT_EQ(call(O2LND_IOC_BRW, &a), EHOSTUNREACH)
        << "op " << op << ": " << errno_name(errno) << " for 192.168.1.2@o2ib9";
  }
}

TEST_F(BrwAbiTest, NetShowHasTheBulkFields) {
  std::uint32_t n = net_count();
  ASSERT_GE(n, 2U) << "0@lo and at least one o2ib NI";
  for (std::uint32_t i = 0; i < n; ++i) {
    auto a = make_arg<o2lnd_ioc_net>();
    a.index = i;
    ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &a), 0) << "NI " << i << ": " << errno_name(errno);
    if (Nid(a.nid).type() != O2LND_NET_TYPE_O2IB) {
      continue;
    }
    SCOPED_TRACE(Nid(a.nid).str());
    EXPECT_GT(a.max_immediate, 0U);
    EXPECT_LE(a.max_immediate, a.max_msg_size) << "inline payload larger than a message";
    EXPECT_GT(a.max_frags, 0U);
    EXPECT_LE(a.max_frags, 257U);  // o2iblnd: LNET_MAX_IOV + 1
    EXPECT_GT(a.mr_max_pages, 0U);
    EXPECT_LE(a.mr_pool_used, a.mr_pool_size);
    EXPECT_TRUE(a.cksum == 0 || a.cksum == 1) << a.cksum;
  }
}

// ---- transfers that need a peer -------------------------------------------------

TEST_F(BrwAbiTest, BrwOfPeerMovesSmallAndLargePayloadsBothWays) {
  if (settings().peer_nid.empty()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  for (std::uint32_t op : {std::uint32_t{O2LND_BRW_WRITE}, std::uint32_t{O2LND_BRW_READ}}) {
    for (std::uint32_t size : {0U, 1U, std::uint32_t{O2LND_BRW_MAX_SIZE}}) {
      SCOPED_TRACE("op " + std::to_string(op) + " size " + std::to_string(size));
      auto a = valid_brw(peer->raw());
      a.op = op;
      a.size = size;
      a.flags = O2LND_BRW_F_CHECK;
      a.seed = 1234 + size;
      a.timeout_ms = 30000;
      // Output fields are not inputs: garbage there must not matter.
      a.rtt_ns = 0xa5a5a5a5a5a5a5a5ULL;
      a.rdma = 0xa5a5a5a5U;
      ASSERT_EQ(call(O2LND_IOC_BRW, &a), 0) << errno_name(errno);
      EXPECT_GT(a.rtt_ns, 0U);
      EXPECT_LT(a.rtt_ns, 30ULL * 1000 * 1000 * 1000);
      EXPECT_EQ(a.rdma, size == O2LND_BRW_MAX_SIZE ? 1U : 0U);
      EXPECT_EQ(a.pad, 0U);
      EXPECT_EQ(a.messages, 2U) << "a checked RPC: PUT + ACK, or GET + REPLY";
    }
  }
}

// ABI 11: an unchecked write is the PUT alone (LNET_NOACK_REQ), one with
// O2LND_BRW_F_ACK the PUT and its ACK; the reply says which, inline and
// by RDMA.
TEST_F(BrwAbiTest, BrwSaysHowManyLnetMessagesItTook) {
  if (settings().peer_nid.empty()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  for (std::uint32_t size : {1U, std::uint32_t{O2LND_BRW_MAX_SIZE}}) {
    for (std::uint32_t flags : {0U, std::uint32_t{O2LND_BRW_F_ACK}}) {
      SCOPED_TRACE("size " + std::to_string(size) + " flags " + std::to_string(flags));
      auto a = valid_brw(peer->raw());
      a.size = size;
      a.flags = flags;
      a.timeout_ms = 30000;
      a.messages = 0xa5a5a5a5U;  // an output: garbage there must not matter
      ASSERT_EQ(call(O2LND_IOC_BRW, &a), 0) << errno_name(errno);
      EXPECT_EQ(a.messages, flags == 0 ? 1U : 2U);
      EXPECT_EQ(a.pad2, 0U);
    }
  }
}

}  // namespace
}  // namespace o2lnd::guest
