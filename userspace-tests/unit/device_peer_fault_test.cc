// libo2lnd's PEER_SHOW, CONN_SHOW, PEER_CLOSE and FAULT_* wrappers against
// the fake kernel.
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2lnd/backend.h"
#include "o2lnd/device.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"

namespace o2lnd {
namespace {

using testing::FakeBackend;
using testing::FakeKernel;
using testing::make_conn;
using testing::make_ni;
using testing::make_peer;

constexpr std::uint64_t kPeer = 0x00050000c0a80102ULL;    // 192.168.1.2@o2ib0
constexpr std::uint64_t kPeer3 = 0x00050000c0a80103ULL;   // 192.168.1.3@o2ib0
constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;   // 192.168.1.1@o2ib0
constexpr std::uint64_t kLocal1 = 0x00050001c0a80201ULL;  // 192.168.2.1@o2ib1

class DevicePeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0"),
                    make_ni(kLocal1, "o2ib1", "eth1")};
  }
  Device attach_ok() {
    auto dev = Device::attach(std::make_unique<FakeBackend>(kernel_), "o2ctl");
    EXPECT_TRUE(dev.ok()) << dev.error().message;
    return std::move(*dev);
  }
  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
};

// ---- peers -----------------------------------------------------------------------

TEST_F(DevicePeerTest, PeersWalksEveryO2ibNiAndSkipsLoopback) {
  kernel_->peers[0] = {make_peer(kPeer3, O2LND_PEER_IDLE)};  // never asked for
  kernel_->peers[1] = {make_peer(kPeer, O2LND_PEER_ESTABLISHED),
                       make_peer(kPeer3, O2LND_PEER_BACKOFF)};
  kernel_->peers[2] = {make_peer(kPeer, O2LND_PEER_CONNECTING)};
  auto dev = attach_ok();
  auto peers = dev.peers();
  ASSERT_TRUE(peers.ok()) << peers.error().message;
  ASSERT_EQ(peers->size(), 3U);
  EXPECT_EQ((*peers)[0].nid, Nid(kPeer));
  EXPECT_EQ((*peers)[0].local_nid, Nid(kLocal));
  EXPECT_EQ((*peers)[0].ni_index, 1U);
  EXPECT_EQ((*peers)[0].state, static_cast<std::uint32_t>(O2LND_PEER_ESTABLISHED));
  EXPECT_EQ((*peers)[1].nid, Nid(kPeer3));
  EXPECT_EQ((*peers)[1].index, 1U);
  EXPECT_EQ((*peers)[1].count, 2U);
  EXPECT_EQ((*peers)[2].local_nid, Nid(kLocal1));
  EXPECT_EQ((*peers)[2].ni_index, 2U);
  for (const auto& c : kernel_->calls) {
    if (c.cmd == O2LND_IOC_PEER_SHOW) {
      o2lnd_ioc_peer p{};
      std::memcpy(&p, c.bytes.data(), sizeof(p));
      EXPECT_NE(p.ni_index, 0U) << "0@lo has no peers and must not be asked";
    }
  }
  // NI 1: 2 peers + ENOENT; NI 2: 1 peer + ENOENT.
  EXPECT_EQ(kernel_->count(O2LND_IOC_PEER_SHOW), 5U);
}

TEST_F(DevicePeerTest, PeerShowSendsNiIndexAndIndexWithCleanHeader) {
  kernel_->peers[1] = {make_peer(kPeer, O2LND_PEER_ESTABLISHED)};
  auto dev = attach_ok();
  ASSERT_TRUE(dev.peer_show(1, 0).ok());
  auto sent = kernel_->last<o2lnd_ioc_peer>(O2LND_IOC_PEER_SHOW);
  EXPECT_EQ(sent.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_peer));
  EXPECT_EQ(sent.hdr.flags, 0U);
  EXPECT_EQ(sent.ni_index, 1U);
  EXPECT_EQ(sent.index, 0U);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&sent);                      // NOLINT
  EXPECT_TRUE(std::all_of(bytes + offsetof(o2lnd_ioc_peer, count), bytes + sizeof(sent),  // NOLINT
                          [](unsigned char b) { return b == 0; }))
      << "every output field is sent zeroed";
  auto past = dev.peer_show(1, 1);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().errnum, ENOENT);
  EXPECT_EQ(past.error().message,
            "O2LND_IOC_PEER_SHOW of peer 1 on NI 1: No such file or directory");
}

TEST_F(DevicePeerTest, PeersWithNoPeersIsEmpty) {
  auto dev = attach_ok();
  auto peers = dev.peers();
  ASSERT_TRUE(peers.ok());
  EXPECT_TRUE(peers->empty());
}

TEST_F(DevicePeerTest, PeersPassesOtherErrorsOn) {
  kernel_->fail[O2LND_IOC_PEER_SHOW] = ENOTTY;
  auto dev = attach_ok();
  auto peers = dev.peers();
  ASSERT_FALSE(peers.ok());
  EXPECT_EQ(peers.error().errnum, ENOTTY);
}

TEST_F(DevicePeerTest, PeerDecodesEveryField) {
  o2lnd_ioc_peer p = make_peer(kPeer, O2LND_PEER_BACKOFF);
  p.incarnation = 1700000000000000001ULL;
  for (std::uint32_t i = 0; i < 8; ++i) {
    p.conns[i] = i + 1;
  }
  p.races_received = 11;
  p.races_sent = 12;
  p.connects = 13;
  p.connect_failures = 14;
  p.rejects_sent = 15;
  p.rejects_received = 16;
  p.last_error = -ETIMEDOUT;
  p.last_reject = O2LND_REJECT_CONN_STALE;
  p.next_retry_ms = 17;
  p.backoff_ms = 18;
  p.tx_queued = 19;
  p.stale_closes = 20;
  p.phase_timeouts = 21;
  p.send_count = 22;
  p.recv_count = 23;
  p.drop_count = 24;
  p.error_count = 25;
  p.send_bytes = 0x100000000ULL;  // above 32 bits
  p.recv_bytes = UINT64_MAX;
  p.rtr_credits = -4;  // four of its messages wait for a router buffer
  p.rtr_credits_max = 8;
  p.rtr_credits_min = -6;
  p.rtr_queued = 4;
  PeerInfo d = decode(p);
  EXPECT_EQ(d.rtr_credits, -4);
  EXPECT_EQ(d.rtr_credits_max, 8U);
  EXPECT_EQ(d.rtr_credits_min, -6);
  EXPECT_EQ(d.rtr_queued, 4U);
  EXPECT_EQ(d.nid, Nid(kPeer));
  EXPECT_EQ(d.state, static_cast<std::uint32_t>(O2LND_PEER_BACKOFF));
  EXPECT_EQ(d.incarnation, 1700000000000000001ULL);
  EXPECT_EQ(d.conns.size(), static_cast<std::size_t>(O2LND_CONN_NSTATES));
  EXPECT_EQ(d.conns[O2LND_CONN_ZOMBIE], 6U);
  EXPECT_EQ(d.conns_connecting(), 1U + 2U + 3U) << "INIT + ACTIVE_CONNECT + PASSIVE_WAIT";
  EXPECT_EQ(d.races_received, 11U);
  EXPECT_EQ(d.races_sent, 12U);
  EXPECT_EQ(d.connects, 13U);
  EXPECT_EQ(d.connect_failures, 14U);
  EXPECT_EQ(d.rejects_sent, 15U);
  EXPECT_EQ(d.rejects_received, 16U);
  EXPECT_EQ(d.last_error, -ETIMEDOUT);
  EXPECT_EQ(d.last_reject, static_cast<std::uint32_t>(O2LND_REJECT_CONN_STALE));
  EXPECT_EQ(d.next_retry_ms, 17U);
  EXPECT_EQ(d.backoff_ms, 18U);
  EXPECT_EQ(d.tx_queued, 19U);
  EXPECT_EQ(d.stale_closes, 20U);
  EXPECT_EQ(d.phase_timeouts, 21U);
  EXPECT_EQ(d.send_count, 22U);
  EXPECT_EQ(d.recv_count, 23U);
  EXPECT_EQ(d.drop_count, 24U);
  EXPECT_EQ(d.error_count, 25U);
  EXPECT_EQ(d.send_bytes, 0x100000000ULL);
  EXPECT_EQ(d.recv_bytes, UINT64_MAX);
}

// ---- conns -----------------------------------------------------------------------

TEST_F(DevicePeerTest, ConnsWalksEveryO2ibNiWithLocalNid) {
  kernel_->conns[1] = {make_conn(kPeer, O2LND_CONN_ESTABLISHED),
                       make_conn(kPeer, O2LND_CONN_ZOMBIE)};
  kernel_->conns[2] = {make_conn(kPeer3, O2LND_CONN_ACTIVE_CONNECT)};
  auto dev = attach_ok();
  auto conns = dev.conns();
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  ASSERT_EQ(conns->size(), 3U);
  EXPECT_EQ((*conns)[0].local_nid, Nid(kLocal));
  EXPECT_EQ((*conns)[1].state, static_cast<std::uint32_t>(O2LND_CONN_ZOMBIE));
  EXPECT_EQ((*conns)[2].local_nid, Nid(kLocal1));
  EXPECT_EQ((*conns)[2].peer_nid, Nid(kPeer3));
}

TEST_F(DevicePeerTest, ConnDecodesEveryFieldWithSignedCounters) {
  o2lnd_ioc_conn c = make_conn(kPeer, O2LND_CONN_ACTIVE_CONNECT);
  c.peer_stamp = 42;
  c.phase = O2LND_PHASE_ROUTE;
  c.active = 1;
  c.age_ms = 1000;
  c.deadline_ms = 4000;
  c.queue_depth = 8;
  c.max_frags = 256;
  c.credits = -1;
  c.outstanding = -2;
  c.nposted = 3;
  c.tx_queued = 4;
  c.error = -ECONNABORTED;
  c.qp_num = 0x11;
  c.nrx = 16;
  ConnInfo d = decode(c);
  EXPECT_EQ(d.peer_nid, Nid(kPeer));
  EXPECT_EQ(d.peer_stamp, 42U);
  EXPECT_EQ(d.phase, static_cast<std::uint32_t>(O2LND_PHASE_ROUTE));
  EXPECT_TRUE(d.active);
  EXPECT_EQ(d.age_ms, 1000U);
  EXPECT_EQ(d.deadline_ms, 4000U);
  EXPECT_EQ(d.queue_depth, 8U);
  EXPECT_EQ(d.max_frags, 256U);
  EXPECT_EQ(d.credits, -1);
  EXPECT_EQ(d.outstanding, -2);
  EXPECT_EQ(d.nposted, 3U);
  EXPECT_EQ(d.tx_queued, 4U);
  EXPECT_EQ(d.error, -ECONNABORTED);
  EXPECT_EQ(d.qp_num, 0x11U);
  EXPECT_EQ(d.nrx, 16U);
}

// ---- peer close ------------------------------------------------------------------

TEST_F(DevicePeerTest, PeerCloseSendsNidAndAnyLocalAndReturnsClosed) {
  kernel_->peers[1] = {make_peer(kPeer, O2LND_PEER_ESTABLISHED)};
  kernel_->conns[1] = {make_conn(kPeer, O2LND_CONN_ESTABLISHED),
                       make_conn(kPeer, O2LND_CONN_ESTABLISHED),
                       make_conn(kPeer3, O2LND_CONN_ESTABLISHED)};
  auto dev = attach_ok();
  auto closed = dev.peer_close(Nid(kPeer));
  ASSERT_TRUE(closed.ok()) << closed.error().message;
  EXPECT_EQ(*closed, 2U);
  auto sent = kernel_->last<o2lnd_ioc_peer_close>(O2LND_IOC_PEER_CLOSE);
  EXPECT_EQ(sent.nid, kPeer);
  EXPECT_EQ(sent.local_nid, O2LND_NID_ANY);
  EXPECT_EQ(sent.closed, 0U);
  EXPECT_EQ(sent.pad, 0U);
}

TEST_F(DevicePeerTest, PeerCloseSendsTheSourceNid) {
  kernel_->peers[2] = {make_peer(kPeer, O2LND_PEER_ESTABLISHED)};
  auto dev = attach_ok();
  ASSERT_TRUE(dev.peer_close(Nid(kPeer), Nid(kLocal1)).ok());
  EXPECT_EQ(kernel_->last<o2lnd_ioc_peer_close>(O2LND_IOC_PEER_CLOSE).local_nid, kLocal1);
}

TEST_F(DevicePeerTest, PeerCloseOfUnknownPeerIsEnoent) {
  auto dev = attach_ok();
  auto closed = dev.peer_close(Nid(kPeer));
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().errnum, ENOENT);
  EXPECT_EQ(closed.error().message,
            "O2LND_IOC_PEER_CLOSE of 192.168.1.2@o2ib0: No such file or directory");
}

TEST_F(DevicePeerTest, PeerCloseOfNidAnyIsRefusedLocally) {
  auto dev = attach_ok();
  auto closed = dev.peer_close(Nid::any());
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().errnum, EINVAL);
  EXPECT_EQ(kernel_->count(O2LND_IOC_PEER_CLOSE), 0U);
}

// ---- faults ----------------------------------------------------------------------

FaultRule cm_drop(std::uint32_t event) {
  FaultRule r;
  r.kind = O2LND_FAULT_CM_DROP;
  r.arg = event;
  return r;
}

TEST_F(DevicePeerTest, FaultAddSendsEveryFieldAndReturnsTheId) {
  FaultRule r;
  r.kind = O2LND_FAULT_REJECT;
  r.arg = O2LND_REJECT_MSG_QUEUE_SIZE;
  r.peer = Nid(kPeer);
  r.local = Nid(kLocal);
  r.count = 3;
  r.probability = 500000;
  r.queue_depth = 4;
  r.max_frags = 32;
  auto dev = attach_ok();
  auto id = dev.fault_add(r);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, 1U);
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_fault));
  EXPECT_EQ(sent.id, 0U);
  EXPECT_EQ(sent.index, 0U);
  EXPECT_EQ(sent.count_rules, 0U);
  EXPECT_EQ(sent.kind, static_cast<std::uint32_t>(O2LND_FAULT_REJECT));
  EXPECT_EQ(sent.arg, static_cast<std::uint32_t>(O2LND_REJECT_MSG_QUEUE_SIZE));
  EXPECT_EQ(sent.peer_nid, kPeer);
  EXPECT_EQ(sent.local_nid, kLocal);
  EXPECT_EQ(sent.count, 3U);
  EXPECT_EQ(sent.probability, 500000U);
  EXPECT_EQ(sent.delay_ms, 0U);
  EXPECT_EQ(sent.queue_depth, 4U);
  EXPECT_EQ(sent.max_frags, 32U);
  EXPECT_EQ(sent.fired, 0U);
  EXPECT_EQ(sent.pad, 0U);
  EXPECT_EQ(*dev.fault_add(cm_drop(O2LND_CM_CONNECT_REQUEST)), 2U);
}

TEST_F(DevicePeerTest, FaultAddDefaultsToAnyPeerAnyLocalAlwaysNoLimit) {
  auto dev = attach_ok();
  ASSERT_TRUE(dev.fault_add(cm_drop(O2LND_CM_ESTABLISHED)).ok());
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.peer_nid, O2LND_NID_ANY);
  EXPECT_EQ(sent.local_nid, O2LND_NID_ANY);
  EXPECT_EQ(sent.probability, static_cast<std::uint32_t>(O2LND_FAULT_PROB_ALWAYS));
  EXPECT_EQ(sent.count, 0U);
}

TEST_F(DevicePeerTest, FaultAddValidatesLocallyWithoutCallingTheModule) {
  auto dev = attach_ok();
  auto expect_invalid = [&](FaultRule r, const std::string& message) {
    auto id = dev.fault_add(r);
    ASSERT_FALSE(id.ok()) << message;
    EXPECT_EQ(id.error().errnum, EINVAL);
    EXPECT_EQ(id.error().message, message);
  };
  FaultRule r = cm_drop(O2LND_CM_NEVENTS);
  expect_invalid(r, "cm-drop: CM event 16 out of range");
  r = cm_drop(0);
  r.kind = 0;
  expect_invalid(r, "unknown fault kind 0");
  r.kind = O2LND_FAULT_MAX + 1;
  expect_invalid(r, "unknown fault kind " + std::to_string(O2LND_FAULT_MAX + 1));
  r = cm_drop(0);
  r.kind = O2LND_FAULT_POST_FAIL;
  r.arg = O2LND_FAULT_POST_FAIL_MAX_ARG + 1;
  expect_invalid(r, "post-fail: work request 256 out of range (0..255)");
  r = cm_drop(0);
  r.probability = 0;
  expect_invalid(r, "probability 0 per million out of range (1..1000000)");
  r.probability = O2LND_FAULT_PROB_ALWAYS + 1;
  expect_invalid(r, "probability 1000001 per million out of range (1..1000000)");
  r = cm_drop(0);
  r.delay_ms = 5;
  expect_invalid(r, "cm-drop takes no delay");
  r.kind = O2LND_FAULT_CM_DELAY;
  r.delay_ms = 0;
  expect_invalid(r, "cm-delay: delay 0 ms out of range (1..10000)");
  r.delay_ms = O2LND_FAULT_MAX_DELAY_MS + 1;
  expect_invalid(r, "cm-delay: delay 10001 ms out of range (1..10000)");
  r = FaultRule{};
  r.kind = O2LND_FAULT_STALL;
  r.arg = O2LND_PHASE_NONE;
  expect_invalid(r, "stall: connect phase 0 out of range");
  r.arg = O2LND_PHASE_CONNECT + 1;
  expect_invalid(r, "stall: connect phase 4 out of range");
  r = FaultRule{};
  r.kind = O2LND_FAULT_REJECT;
  r.arg = 0;
  expect_invalid(r, "reject: reject reason 0 out of range");
  r.arg = O2LND_REJECT_MAX + 1;
  expect_invalid(r, "reject: reject reason 10 out of range");
  r = FaultRule{};
  r.kind = O2LND_FAULT_MSG_DROP;
  r.arg = 0xcf;
  expect_invalid(r, "msg-drop: message type 207 out of range");
  r.arg = 0xd8;
  expect_invalid(r, "msg-drop: message type 216 out of range");
  r = FaultRule{};
  r.kind = O2LND_FAULT_SEND_DELAY;
  r.delay_ms = 10;
  r.arg = 1;
  expect_invalid(r, "send-delay takes no argument (got 1)");
  r = cm_drop(0);
  r.queue_depth = 4;
  expect_invalid(r, "cm-drop: queue depth and fragments apply to reject rules only");
  EXPECT_EQ(kernel_->count(O2LND_IOC_FAULT_ADD), 0U);
}

TEST_F(DevicePeerTest, FaultAddAcceptsTheEdgesOfEveryRange) {
  auto dev = attach_ok();
  FaultRule r = cm_drop(O2LND_CM_TIMEWAIT_EXIT);
  r.probability = 1;
  EXPECT_TRUE(dev.fault_add(r).ok());
  r = FaultRule{};
  r.kind = O2LND_FAULT_SEND_DELAY;
  r.delay_ms = O2LND_FAULT_MAX_DELAY_MS;
  EXPECT_TRUE(dev.fault_add(r).ok());
  r = FaultRule{};
  r.kind = O2LND_FAULT_MSG_CORRUPT;
  r.arg = 0xd7;
  EXPECT_TRUE(dev.fault_add(r).ok());
  r.arg = 0;
  EXPECT_TRUE(dev.fault_add(r).ok());
  EXPECT_EQ(kernel_->faults.size(), 4U);
}

TEST_F(DevicePeerTest, FaultAddPastTheLimitIsEnospc) {
  auto dev = attach_ok();
  for (int i = 0; i < O2LND_FAULT_MAX_RULES; ++i) {
    ASSERT_TRUE(dev.fault_add(cm_drop(O2LND_CM_ESTABLISHED)).ok()) << i;
  }
  auto id = dev.fault_add(cm_drop(O2LND_CM_ESTABLISHED));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().errnum, ENOSPC);
}

TEST_F(DevicePeerTest, FaultDelSendsTheIdAndDelAllSendsZero) {
  auto dev = attach_ok();
  ASSERT_TRUE(dev.fault_add(cm_drop(1)).ok());
  ASSERT_TRUE(dev.fault_add(cm_drop(2)).ok());
  ASSERT_TRUE(dev.fault_del(1).ok());
  EXPECT_EQ(kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_DEL).id, 1U);
  ASSERT_EQ(kernel_->faults.size(), 1U);
  auto again = dev.fault_del(1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().errnum, ENOENT);
  ASSERT_TRUE(dev.fault_del_all().ok());
  EXPECT_EQ(kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_DEL).id, 0U);
  EXPECT_TRUE(kernel_->faults.empty());
}

TEST_F(DevicePeerTest, FaultDelOfIdZeroIsRefusedLocally) {
  auto dev = attach_ok();
  auto r = dev.fault_del(0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_EQ(kernel_->count(O2LND_IOC_FAULT_DEL), 0U) << "id 0 would delete every rule";
}

TEST_F(DevicePeerTest, FaultListReturnsEveryRuleDecoded) {
  auto dev = attach_ok();
  FaultRule a = cm_drop(O2LND_CM_CONNECT_REQUEST);
  a.peer = Nid(kPeer);
  a.count = 2;
  FaultRule b;
  b.kind = O2LND_FAULT_CM_DELAY;
  b.arg = O2LND_CM_ESTABLISHED;
  b.delay_ms = 250;
  b.probability = 1;
  ASSERT_TRUE(dev.fault_add(a).ok());
  ASSERT_TRUE(dev.fault_add(b).ok());
  kernel_->faults[1].fired = 7;
  auto rules = dev.fault_list();
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  ASSERT_EQ(rules->size(), 2U);
  a.id = 1;
  b.id = 2;
  b.fired = 7;
  EXPECT_EQ((*rules)[0], a);
  EXPECT_EQ((*rules)[1], b);
  EXPECT_EQ(kernel_->count(O2LND_IOC_FAULT_LIST), 3U) << "two rules, then ENOENT";
}

TEST_F(DevicePeerTest, FaultListPassesEpermOn) {
  kernel_->fail[O2LND_IOC_FAULT_LIST] = EPERM;
  auto dev = attach_ok();
  auto rules = dev.fault_list();
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.error().errnum, EPERM);
}

TEST(FaultArgs, NamesOfEveryKindsArg) {
  FaultRule r;
  r.kind = O2LND_FAULT_CM_DELAY;
  r.arg = O2LND_CM_ROUTE_ERROR;
  EXPECT_EQ(fault_arg_name(r), "route_error");
  r.kind = O2LND_FAULT_STALL;
  r.arg = O2LND_PHASE_ADDR;
  EXPECT_EQ(fault_arg_name(r), "addr");
  r.kind = O2LND_FAULT_REJECT;
  r.arg = O2LND_REJECT_NO_RESOURCES;
  EXPECT_EQ(fault_arg_name(r), "no_resources");
  r.kind = O2LND_FAULT_MSG_DROP;
  r.arg = 0;
  EXPECT_EQ(fault_arg_name(r), "any");
  r.kind = O2LND_FAULT_MSG_CORRUPT;
  r.arg = 0xd1;
  EXPECT_EQ(fault_arg_name(r), "immediate");
  r.kind = O2LND_FAULT_SEND_DELAY;
  r.arg = 0;
  EXPECT_EQ(fault_arg_name(r), "none");
  EXPECT_TRUE(fault_has_delay(O2LND_FAULT_CM_DELAY));
  EXPECT_TRUE(fault_has_delay(O2LND_FAULT_SEND_DELAY));
  EXPECT_FALSE(fault_has_delay(O2LND_FAULT_CM_DROP));
  EXPECT_FALSE(fault_arg_kind(O2LND_FAULT_SEND_DELAY).has_value());
}

}  // namespace
}  // namespace o2lnd
