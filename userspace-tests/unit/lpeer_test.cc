// ABI 7 LNet peers against the fake kernel: libo2lnd's LPEER_SHOW and
// DISCOVER wrappers, o2ctl's `peer list` and `discover` (lnetctl-shaped
// YAML through the schema, errors), and the NI health of `net show -v`.
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "o2ctl/format.h"
#include "o2ctl_fixture.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2lnd::Nid;
using o2lnd::testing::make_ni;

constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0
constexpr std::uint64_t kRail0 = 0x00050000c0a80102ULL;  // 192.168.1.2@o2ib0
constexpr std::uint64_t kRail1 = 0x00050000c0a80202ULL;  // 192.168.2.2@o2ib0
constexpr std::uint64_t kOther = 0x00050000c0a80103ULL;  // 192.168.1.3@o2ib0

// A Multi-Rail peer with two NIDs, the second down and unhealthy.
o2lnd_ioc_lpeer two_rail_peer() {
  o2lnd_ioc_lpeer p{};
  p.primary_nid = kRail0;
  p.flags = O2LND_LPEER_F_MULTI_RAIL | O2LND_LPEER_F_PUSHED;
  p.features = O2LND_PING_FEAT_BASE | O2LND_PING_FEAT_NI_STATUS | O2LND_PING_FEAT_MULTI_RAIL |
               O2LND_PING_FEAT_DISCOVERY;
  p.seqno = 3;
  p.n_nids = 2;
  p.nids[0] = {kRail0, O2LND_NI_STATUS_UP, 1000, 7, 0};
  p.nids[1] = {kRail1, O2LND_NI_STATUS_DOWN, 300, 2, 7};
  return p;
}

// A peer that is not Multi-Rail (an old LNet): one NID, no discovery.
o2lnd_ioc_lpeer single_peer() {
  o2lnd_ioc_lpeer p{};
  p.primary_nid = kOther;
  p.features = O2LND_PING_FEAT_BASE | O2LND_PING_FEAT_NI_STATUS | O2LND_PING_FEAT_RTE_DISABLED;
  p.n_nids = 1;
  p.nids[0] = {kOther, O2LND_NI_STATUS_UP, 1000, 0, 0};
  return p;
}

class LnetPeerTest : public test_support::O2ctlTest {
 protected:
  void SetUp() override {
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  }
};

TEST_F(LnetPeerTest, LpeersWalksUntilEnoentAndDecodesEveryNid) {
  kernel_->lpeers = {two_rail_peer(), single_peer()};
  auto dev = attach_ok();
  auto peers = dev.lpeers();
  ASSERT_TRUE(peers.ok()) << peers.error().message;
  ASSERT_EQ(peers->size(), 2U);
  const auto& p = (*peers)[0];
  EXPECT_EQ(p.count, 2U);
  EXPECT_EQ(p.primary, Nid(kRail0));
  EXPECT_TRUE(p.multi_rail());
  EXPECT_TRUE(p.pushed());
  EXPECT_FALSE(p.pushed_to_us());
  EXPECT_EQ(p.seqno, 3U);
  ASSERT_EQ(p.nids.size(), 2U);
  EXPECT_EQ(p.nids[1], (o2lnd::PeerNid{Nid(kRail1), O2LND_NI_STATUS_DOWN, 300, 2, 7}));
  EXPECT_FALSE((*peers)[1].multi_rail());
  EXPECT_EQ(kernel_->count(O2LND_IOC_LPEER_SHOW), 3U) << "two peers and the ENOENT that ends them";
}

TEST_F(LnetPeerTest, LpeerOfFindsThePeerByAnyOfItsNids) {
  kernel_->lpeers = {single_peer(), two_rail_peer()};
  auto dev = attach_ok();
  auto p = dev.lpeer_of(Nid(kRail1));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->primary, Nid(kRail0));
  auto sent = kernel_->last<o2lnd_ioc_lpeer>(O2LND_IOC_LPEER_SHOW);
  EXPECT_EQ(sent.nid, kRail1);
  EXPECT_EQ(sent.timeout_ms, 0U);
  auto none = dev.lpeer_of(Nid(0x00050000c0a809ffULL));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().errnum, ENOENT);
}

TEST_F(LnetPeerTest, MoreNidsThanTheStructHoldsAreCountedNotRead) {
  auto p = two_rail_peer();
  p.n_nids = 40;
  for (std::uint32_t i = 0; i < O2LND_PEER_MAX_NIDS; ++i) {
    p.nids[i] = {kRail0 + i, O2LND_NI_STATUS_UP, 1000, 0, 0};
  }
  auto d = o2lnd::decode(p);
  EXPECT_EQ(d.n_nids, 40U);
  EXPECT_EQ(d.nids.size(), std::size_t{O2LND_PEER_MAX_NIDS});
}

TEST_F(LnetPeerTest, DiscoverSendsTheNidAndTimeoutAndDecodesThePeer) {
  kernel_->on_discover = [](o2lnd_ioc_lpeer& d) {
    auto want = two_rail_peer();
    want.hdr = d.hdr;
    want.nid = d.nid;
    want.timeout_ms = d.timeout_ms;
    d = want;
    return 0;
  };
  auto dev = attach_ok();
  auto p = dev.discover(Nid(kRail0), std::chrono::milliseconds(2500));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nids.size(), 2U);
  auto sent = kernel_->last<o2lnd_ioc_lpeer>(O2LND_IOC_DISCOVER);
  EXPECT_EQ(sent.nid, kRail0);
  EXPECT_EQ(sent.timeout_ms, 2500U);
  EXPECT_EQ(sent.index, 0U);
}

TEST_F(LnetPeerTest, DiscoverRefusesWhatTheModuleWouldWithoutCallingIt) {
  auto dev = attach_ok();
  for (auto nid : {Nid::any(), Nid::loopback(), Nid(0x00020000c0a80101ULL) /* tcp */}) {
    auto r = dev.discover(nid, std::chrono::milliseconds(0));
    ASSERT_FALSE(r.ok()) << nid.str();
    EXPECT_EQ(r.error().errnum, EINVAL) << nid.str();
  }
  auto r = dev.discover(Nid(kRail0), std::chrono::milliseconds(O2LND_PING_TIMEOUT_MAX_MS + 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_EQ(kernel_->count(O2LND_IOC_DISCOVER), 0U);
}

TEST_F(LnetPeerTest, PeerListIsLnetctlShapedYaml) {
  kernel_->lpeers = {two_rail_peer(), single_peer()};
  std::string yaml = output({"peer", "list"});
  auto shape = o2ctl_yaml::lnet_peers(yaml, "peer");
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(shape.entries, 2U);
  EXPECT_EQ(shape.nested, 3U);
  auto doc = YAML::Load(yaml)["peer"];
  EXPECT_EQ(doc[0]["primary nid"].as<std::string>(), "192.168.1.2@o2ib0");
  EXPECT_TRUE(doc[0]["Multi-Rail"].as<bool>());
  EXPECT_FALSE(doc[1]["Multi-Rail"].as<bool>());
  EXPECT_FALSE(doc[1]["discovery"].as<bool>());
  EXPECT_TRUE(doc[0]["routing"].as<bool>()) << "no RTE_DISABLED in its ping info";
  EXPECT_FALSE(doc[1]["routing"].as<bool>()) << "RTE_DISABLED in its ping info";
  EXPECT_EQ(doc[0]["peer ni"][1]["nid"].as<std::string>(), "192.168.2.2@o2ib0");
  EXPECT_EQ(doc[0]["peer ni"][1]["state"].as<std::string>(), "down");
  EXPECT_EQ(doc[0]["peer ni"][1]["health value"].as<int>(), 300);
  EXPECT_EQ(doc[0]["peer ni"][1]["failures"].as<int>(), 7);
}

TEST_F(LnetPeerTest, PeerListOfOneNidShowsItsPeerOrNothing) {
  kernel_->lpeers = {single_peer(), two_rail_peer()};
  std::string yaml = output({"peer", "list", "192.168.2.2@o2ib0"});
  auto doc = YAML::Load(yaml)["peer"];
  ASSERT_EQ(doc.size(), 1U) << yaml;
  EXPECT_EQ(doc[0]["primary nid"].as<std::string>(), "192.168.1.2@o2ib0");
  EXPECT_EQ(output({"peer", "list", "10.0.0.9@o2ib0"}), "peer: []\n");
  kernel_->lpeers.clear();
  EXPECT_EQ(output({"peer", "list"}), "peer: []\n");
  EXPECT_EQ(o2ctl({"peer", "list", "not-a-nid"}), kExitUsage);
  EXPECT_EQ(o2ctl({"peer", "list", "192.168.1.2@o2ib0", "192.168.1.3@o2ib0"}), kExitUsage);
}

TEST_F(LnetPeerTest, DiscoverPrintsThePeerOrTheReasonItFailed) {
  kernel_->on_discover = [](o2lnd_ioc_lpeer& d) {
    auto want = two_rail_peer();
    want.hdr = d.hdr;
    d = want;
    return 0;
  };
  std::string yaml = output({"discover", "192.168.1.2@o2ib0", "--timeout", "2"});
  auto shape = o2ctl_yaml::lnet_peers(yaml, "discover");
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(kernel_->last<o2lnd_ioc_lpeer>(O2LND_IOC_DISCOVER).timeout_ms, 2000U);
  kernel_->on_discover = [](o2lnd_ioc_lpeer&) { return ETIMEDOUT; };
  EXPECT_EQ(o2ctl({"discover", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: failed to discover 192.168.1.2@o2ib0: Connection timed out\n");
  kernel_->fail[O2LND_IOC_DISCOVER] = EPERM;
  EXPECT_EQ(o2ctl({"discover", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: discover: permission denied (needs CAP_NET_ADMIN)\n");
  EXPECT_EQ(o2ctl({"discover"}), kExitUsage);
  EXPECT_EQ(o2ctl({"discover", "192.168.1.2@o2ib0", "--timeout", "x"}), kExitUsage);
}

TEST_F(LnetPeerTest, NetShowVerboseCarriesTheNiHealth) {
  kernel_->nis[1].health = 700;
  std::string yaml = output({"net", "show", "-v"});
  auto doc = YAML::Load(yaml)["net"];
  EXPECT_EQ(doc[1]["local NI(s)"][0]["health stats"]["health value"].as<int>(), 700) << yaml;
}

}  // namespace
}  // namespace o2ctl
