// The ABI 7 additions of include/uapi/o2lnd.h against the real module:
// O2LND_IOC_LPEER_SHOW and O2LND_IOC_DISCOVER (LNet peers with several
// NIDs, discovery and push) and the health of NET_SHOW; and ABI 8's
// resend_count at the end of NET_SHOW.  Discovering the
// node's own NIDs (with --ping-self) goes the whole way on one node: the
// ping's REPLY teaches the NIDs, the push to ourselves is ACKed.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
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

o2lnd_ioc_lpeer lpeer_arg(std::uint64_t nid, std::uint32_t index = 0) {
  auto a = make_arg<o2lnd_ioc_lpeer>();
  a.nid = nid;
  a.index = index;
  return a;
}

class LnetPeerAbiTest : public AbiTest {
 protected:
  // The NIDs of this node's o2ib NIs that are up.
  [[nodiscard]] std::vector<std::uint64_t> own_nids() const {
    std::vector<std::uint64_t> out;
    for (std::uint32_t i = 0; i < net_count(); ++i) {
      auto n = make_arg<o2lnd_ioc_net>();
      n.index = i;
      if (call(O2LND_IOC_NET_SHOW, &n) == 0 && Nid(n.nid).type() == O2LND_NET_TYPE_O2IB &&
          n.status == O2LND_NI_STATUS_UP) {
        out.push_back(n.nid);
      }
    }
    return out;
  }
};

TEST_F(LnetPeerAbiTest, LpeerShowHeaderRules) {
  check_header_rules(O2LND_IOC_LPEER_SHOW, lpeer_arg(O2LND_NID_ANY));
}

TEST_F(LnetPeerAbiTest, LpeerShowWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_LPEER_SHOW, lpeer_arg(O2LND_NID_ANY), true);
}

TEST_F(LnetPeerAbiTest, LpeerShowRefusesDiscoverInputs) {
  auto a = lpeer_arg(O2LND_NID_ANY);
  a.timeout_ms = 1;
  expect_refused(O2LND_IOC_LPEER_SHOW, a, EINVAL, "a timeout (a DISCOVER input)");
  a = lpeer_arg(O2LND_NID_ANY);
  a.pad = 1;
  expect_refused(O2LND_IOC_LPEER_SHOW, a, EINVAL, "nonzero pad");
}

TEST_F(LnetPeerAbiTest, LpeerShowOfNoPeerIsEnoent) {
  expect_refused(O2LND_IOC_LPEER_SHOW, lpeer_arg(O2LND_NID_ANY, 1U << 30), ENOENT,
                 "an index past the last peer");
  expect_refused(O2LND_IOC_LPEER_SHOW, lpeer_arg(0x000500000a0909feULL), ENOENT,
                 "a NID no peer lists");
}

TEST_F(LnetPeerAbiTest, DiscoverHeaderRules) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "DISCOVER needs CAP_NET_ADMIN";
  }
  check_header_rules(O2LND_IOC_DISCOVER, lpeer_arg(0x000500000a0909feULL));
}

TEST_F(LnetPeerAbiTest, DiscoverRefusesWhatIsNoTarget) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "DISCOVER needs CAP_NET_ADMIN";
  }
  for (std::uint64_t nid : {std::uint64_t{O2LND_NID_ANY}, std::uint64_t{O2LND_LO_NID},
                            std::uint64_t{0x00020000c0a80101ULL} /* tcp */}) {
    expect_refused(O2LND_IOC_DISCOVER, lpeer_arg(nid), EINVAL, "NID " + Nid(nid).str());
  }
  auto a = lpeer_arg(0x000500000a0909feULL);
  a.timeout_ms = O2LND_PING_TIMEOUT_MAX_MS + 1;
  expect_refused(O2LND_IOC_DISCOVER, a, EINVAL, "a timeout above the maximum");
  a = lpeer_arg(0x000500000a0909feULL, 1);
  expect_refused(O2LND_IOC_DISCOVER, a, EINVAL, "an index (an LPEER_SHOW input)");
  a = lpeer_arg(0x000500000a0909feULL);
  a.pad = 7;
  expect_refused(O2LND_IOC_DISCOVER, a, EINVAL, "nonzero pad");
  // a network no NI and no route reaches
  expect_refused(O2LND_IOC_DISCOVER, lpeer_arg(0x000509090a0909feULL), EHOSTUNREACH,
                 "a NID on no local network");
}

TEST_F(LnetPeerAbiTest, EveryNiReportsItsHealth) {
  for (std::uint32_t i = 0; i < net_count(); ++i) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.index = i;
    ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &n), 0);
    EXPECT_LE(n.health, std::uint32_t{O2LND_HEALTH_MAX}) << Nid(n.nid).str();
    EXPECT_EQ(n.pad3, 0U);
    if (n.status == O2LND_NI_STATUS_UP) {
      EXPECT_GT(n.health, 0U) << Nid(n.nid).str() << " is up with health 0";
    }
  }
}

TEST_F(LnetPeerAbiTest, Abi7NetShowEndsBeforeAbi8ResendCount) {
  if (net_count() == 0) GTEST_SKIP() << "no NI";
  // an ABI 7 caller's struct, followed by bytes it does not own
  constexpr unsigned char kTail = 0x5a;
  auto n = make_arg<o2lnd_ioc_net>();
  n.hdr.abi_version = 7;
  n.hdr.size = O2LND_IOC_NET_SIZE_VER1;
  std::vector<unsigned char> b(sizeof(n), kTail);
  std::memcpy(b.data(), &n, O2LND_IOC_NET_SIZE_VER1);
  ASSERT_EQ(call(O2LND_IOC_NET_SHOW, b.data()), 0) << errno_name(errno);
  o2lnd_ioc_net out{};
  std::memcpy(&out, b.data(), O2LND_IOC_NET_SIZE_VER1);
  EXPECT_EQ(out.hdr.size, std::uint32_t{O2LND_IOC_NET_SIZE_VER1});
  EXPECT_TRUE(std::all_of(b.begin() + O2LND_IOC_NET_SIZE_VER1, b.end(), [](unsigned char x) {
    return x == kTail;
  })) << "the module wrote resend_count past an ABI 7 caller's struct";
  // the ABI 8 struct gets all of it
  auto full = make_arg<o2lnd_ioc_net>();
  full.resend_count = 0;
  ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &full), 0) << errno_name(errno);
  EXPECT_EQ(full.hdr.size, std::uint32_t{sizeof(o2lnd_ioc_net)});
  EXPECT_EQ(offsetof(o2lnd_ioc_net, resend_count), std::size_t{O2LND_IOC_NET_SIZE_VER1});
}

TEST_F(LnetPeerAbiTest, DiscoveringOurselfLearnsOurNidsAndAcksOurPush) {
  if (!settings().ping_self || ::geteuid() != 0) {
    GTEST_SKIP() << "opt-in: --ping-self or O2LND_PING_SELF=1, as root";
  }
  auto own = own_nids();
  ASSERT_FALSE(own.empty()) << "no o2ib NI is up";
  auto a = lpeer_arg(own[0]);
  a.timeout_ms = 10000;
  ASSERT_EQ(call(O2LND_IOC_DISCOVER, &a), 0) << errno_name(errno);
  EXPECT_EQ(a.nid, own[0]) << "the input reads back";
  EXPECT_EQ(a.primary_nid, own[0]);
  EXPECT_EQ(a.n_nids, own.size());
  EXPECT_NE(a.flags & O2LND_LPEER_F_MULTI_RAIL, 0U);
  EXPECT_NE(a.flags & O2LND_LPEER_F_PUSHED, 0U) << "our own push was not ACKed";
  EXPECT_NE(a.flags & O2LND_LPEER_F_PUSHED_TO_US, 0U) << "the push did not reach us";
  EXPECT_NE(a.features & O2LND_PING_FEAT_DISCOVERY, 0U);
  EXPECT_NE(a.features & O2LND_PING_FEAT_MULTI_RAIL, 0U);
  EXPECT_NE(a.features & O2LND_PING_FEAT_NI_STATUS, 0U);
  EXPECT_GE(a.seqno, 1U);
  for (std::uint32_t i = 0; i < a.n_nids && i < O2LND_PEER_MAX_NIDS; ++i) {
    EXPECT_EQ(a.nids[i].nid, own[i]);
    EXPECT_EQ(a.nids[i].status, std::uint32_t{O2LND_NI_STATUS_UP});
    EXPECT_EQ(a.nids[i].health, std::uint32_t{O2LND_HEALTH_MAX});
  }
  EXPECT_TRUE(
      all_bytes(a, offsetof(o2lnd_ioc_lpeer, nids) + a.n_nids * sizeof(a.nids[0]), sizeof(a), 0))
      << "bytes after the last NID";
  // the same peer, by index and by every NID
  bool found = false;
  for (std::uint32_t i = 0; i < a.count; ++i) {
    auto s = lpeer_arg(O2LND_NID_ANY, i);
    ASSERT_EQ(call(O2LND_IOC_LPEER_SHOW, &s), 0) << i;
    found = found || s.primary_nid == own[0];
  }
  EXPECT_TRUE(found) << "LPEER_SHOW by index does not list it";
  for (auto nid : own) {
    auto s = lpeer_arg(nid);
    ASSERT_EQ(call(O2LND_IOC_LPEER_SHOW, &s), 0) << Nid(nid).str();
    EXPECT_EQ(s.primary_nid, own[0]);
  }
}

}  // namespace
}  // namespace o2lnd::guest
