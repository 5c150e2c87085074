// The ABI 2 commands of include/uapi/o2lnd.h against the real module:
// PEER_SHOW, CONN_SHOW, PEER_CLOSE and FAULT_ADD / _DEL / _LIST, with the
// fields ABI 3 added to PEER_SHOW and CONN_SHOW (credits, health, send
// queue, NOOPs).
//
// Fault rules made here only ever name kNowhere (192.0.2.1@o2ib0) as their
// peer, so they cannot disturb real traffic, and every fault test starts
// and ends by deleting every rule.
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
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

constexpr std::uint32_t kNoSuchRule = 0xfffffff0U;

o2lnd_ioc_peer peer_arg(std::uint32_t ni_index, std::uint32_t index) {
  auto a = make_arg<o2lnd_ioc_peer>();
  a.ni_index = ni_index;
  a.index = index;
  return a;
}

o2lnd_ioc_conn conn_arg(std::uint32_t ni_index, std::uint32_t index) {
  auto a = make_arg<o2lnd_ioc_conn>();
  a.ni_index = ni_index;
  a.index = index;
  return a;
}

o2lnd_ioc_peer_close close_arg(std::uint64_t nid) {
  auto a = make_arg<o2lnd_ioc_peer_close>();
  a.nid = nid;
  a.local_nid = O2LND_NID_ANY;
  return a;
}

// A rule that never fires: it only applies to kNowhere.
o2lnd_ioc_fault harmless_rule(std::uint32_t kind = O2LND_FAULT_MSG_DROP, std::uint32_t arg = 0) {
  auto a = make_arg<o2lnd_ioc_fault>();
  a.kind = kind;
  a.arg = arg;
  a.peer_nid = kNowhere;
  a.local_nid = O2LND_NID_ANY;
  a.probability = O2LND_FAULT_PROB_ALWAYS;
  if (kind == O2LND_FAULT_CM_DELAY || kind == O2LND_FAULT_SEND_DELAY) {
    a.delay_ms = 1;
  }
  return a;
}

o2lnd_ioc_fault del_arg(std::uint32_t id) {
  auto a = make_arg<o2lnd_ioc_fault>();
  a.id = id;
  return a;
}

// The rules as FAULT_LIST reports them, compared without their counters.
struct ListedRule {
  std::uint32_t id;
  std::uint32_t kind;
  std::uint32_t arg;
  std::uint64_t peer_nid;
  std::uint64_t local_nid;
  std::uint32_t count;
  std::uint32_t probability;
  std::uint32_t delay_ms;
  std::uint32_t queue_depth;
  std::uint32_t max_frags;
  bool operator==(const ListedRule&) const = default;
};

class AbiV2Test : public AbiTest {
 protected:
  // NI indexes of the o2ib NIs (1..).
  [[nodiscard]] std::vector<std::uint32_t> o2ib_nis() const {
    std::vector<std::uint32_t> out;
    std::uint32_t count = net_count();
    for (std::uint32_t i = 1; i < count; ++i) {
      out.push_back(i);
    }
    return out;
  }

  // Pings the --peer-nid so that both ends have a peer and a connection;
  // false when no peer was given.
  bool make_traffic() {
    if (settings().peer_nid.empty()) {
      return false;
    }
    auto peer = Nid::parse(settings().peer_nid);
    EXPECT_TRUE(peer.ok()) << settings().peer_nid;
    auto a = make_arg<o2lnd_ioc_ping>();
    a.nid = peer->raw();
    a.src_nid = O2LND_NID_ANY;
    a.timeout_ms = 10000;
    a.max_ids = O2LND_PING_MAX_IDS;
    EXPECT_EQ(call(O2LND_IOC_PING, &a), 0)
        << "ping of " << peer->str() << ": " << errno_name(errno);
    return true;
  }

  std::vector<ListedRule> list_rules() {
    std::vector<ListedRule> rules;
    for (std::uint32_t index = 0; index <= O2LND_FAULT_MAX_RULES + 1; ++index) {
      auto a = make_arg<o2lnd_ioc_fault>();
      a.index = index;
      int rc = call(O2LND_IOC_FAULT_LIST, &a);
      if (rc == ENOENT) {
        return rules;
      }
      EXPECT_EQ(rc, 0) << "FAULT_LIST of index " << index << ": " << errno_name(rc);
      if (rc != 0) {
        return rules;
      }
      rules.push_back(ListedRule{a.id, a.kind, a.arg, a.peer_nid, a.local_nid, a.count,
                                 a.probability, a.delay_ms, a.queue_depth, a.max_frags});
    }
    ADD_FAILURE() << "FAULT_LIST does not end after " << O2LND_FAULT_MAX_RULES << " rules";
    return rules;
  }

  void delete_all_rules() {
    auto a = del_arg(0);
    EXPECT_EQ(call(O2LND_IOC_FAULT_DEL, &a), 0) << "FAULT_DEL of every rule: " << errno_name(errno);
  }

  // ADD, expecting success; the new id.
  std::uint32_t add_rule(o2lnd_ioc_fault a) {
    int rc = call(O2LND_IOC_FAULT_ADD, &a);
    EXPECT_EQ(rc, 0) << "FAULT_ADD: " << errno_name(rc);
    return rc == 0 ? a.id : 0;
  }

  // `arg` refused with `want`, the buffer unchanged and no rule added or
  // removed.
  template <typename T>
  void expect_refused_no_change(unsigned long cmd, const T& arg, int want,
                                const std::string& what) {
    auto before = list_rules();
    expect_refused(cmd, arg, want, what);
    EXPECT_EQ(list_rules(), before)
        << cmd_name(cmd) << " with " << what << ": a refused call changed the rule table";
  }
};

class FaultAbiTest : public AbiV2Test {
 protected:
  void SetUp() override {
    AbiV2Test::SetUp();
    if (fd_ >= 0) {
      delete_all_rules();
    }
  }
  void TearDown() override {
    if (fd_ >= 0) {
      delete_all_rules();
    }
    AbiV2Test::TearDown();
  }
};

// ---- PEER_SHOW ---------------------------------------------------------------------

TEST_F(AbiV2Test, PeerShowHeaderRules) { check_header_rules(O2LND_IOC_PEER_SHOW, peer_arg(1, 0)); }

TEST_F(AbiV2Test, PeerShowWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_PEER_SHOW, peer_arg(1, 0), false);
}

TEST_F(AbiV2Test, PeerShowOfLoopbackOrMissingNiIsEnoent) {
  std::uint32_t count = net_count();
  ASSERT_GT(count, 0U);
  for (std::uint32_t ni : {0U, count, count + 1, 0xffffffffU}) {
    expect_refused(O2LND_IOC_PEER_SHOW, peer_arg(ni, 0), ENOENT, "ni_index " + std::to_string(ni));
  }
}

TEST_F(AbiV2Test, PeerShowPastTheLastPeerIsEnoent) {
  make_traffic();
  for (std::uint32_t ni : o2ib_nis()) {
    auto a = peer_arg(ni, 0);
    std::uint32_t count = call(O2LND_IOC_PEER_SHOW, &a) == 0 ? a.count : 0;
    for (std::uint32_t index : {count, count + 1, 0xffffffffU}) {
      expect_refused(O2LND_IOC_PEER_SHOW, peer_arg(ni, index), ENOENT,
                     "NI " + std::to_string(ni) + " index " + std::to_string(index));
    }
  }
}

TEST_F(AbiV2Test, EveryPeerReadsBackClean) {
  bool traffic = make_traffic();
  bool found = false;
  Nid want = traffic ? *Nid::parse(settings().peer_nid) : Nid();
  for (std::uint32_t ni : o2ib_nis()) {
    for (std::uint32_t index = 0;; ++index) {
      SCOPED_TRACE("NI " + std::to_string(ni) + " peer " + std::to_string(index));
      auto a = peer_arg(ni, index);
      int rc = call(O2LND_IOC_PEER_SHOW, &a);
      if (rc == ENOENT) {
        break;
      }
      ASSERT_EQ(rc, 0) << errno_name(rc);
      ASSERT_LT(index, 100000U) << "PEER_SHOW does not end";
      EXPECT_EQ(a.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
      EXPECT_EQ(a.hdr.size, sizeof(a));
      EXPECT_EQ(a.hdr.flags, 0U);
      EXPECT_EQ(a.hdr.reserved, 0U);
      EXPECT_EQ(a.ni_index, ni);
      EXPECT_EQ(a.index, index);
      EXPECT_GT(a.count, index);
      EXPECT_LT(a.state, static_cast<std::uint32_t>(O2LND_PEER_NSTATES));
      EXPECT_EQ(Nid(a.nid).type(), O2LND_NET_TYPE_O2IB) << Nid(a.nid).str();
      EXPECT_EQ(a.conns[6], 0U) << "conns[6] is past O2LND_CONN_NSTATES";
      EXPECT_EQ(a.conns[7], 0U) << "conns[7] is past O2LND_CONN_NSTATES";
      EXPECT_EQ(a.pad, 0U);
      EXPECT_LE(a.last_error, 0) << "a negative errno or 0";
      EXPECT_LE(a.last_reject, static_cast<std::uint32_t>(O2LND_REJECT_MAX));
      EXPECT_LE(a.races_received, a.rejects_received);
      EXPECT_LE(a.races_sent, a.rejects_sent);
      EXPECT_LE(a.connect_failures, a.connects);
      if (a.state == O2LND_PEER_ESTABLISHED) {
        EXPECT_GT(a.conns[O2LND_CONN_ESTABLISHED], 0U) << "ESTABLISHED: at least one connection";
      }
      // ABI 3: credits and health.
      EXPECT_LE(a.tx_credits, static_cast<std::int32_t>(a.tx_credits_max));
      EXPECT_LE(a.tx_credits_min, a.tx_credits) << "min is the lowest tx_credits ever reached";
      if (a.tx_credits >= 0) {
        EXPECT_EQ(a.credit_queued, 0U) << "messages wait only when no credit is left";
      }
      EXPECT_TRUE(a.health == O2LND_HEALTH_UP || a.health == O2LND_HEALTH_DOWN)
          << "health " << a.health;
      if (a.health == O2LND_HEALTH_UP) {
        EXPECT_LT(a.failures, static_cast<std::uint32_t>(O2LND_PEER_DOWN_FAILURES))
            << "a peer with that many failures in a row is down";
      } else {
        EXPECT_GE(a.downs, 1U) << "a down peer was marked down at least once";
      }
      if (Nid(a.nid) == want) {
        found = true;
        EXPECT_EQ(a.health, static_cast<std::uint32_t>(O2LND_HEALTH_UP)) << "it just answered";
        EXPECT_EQ(a.failures, 0U) << "it just answered";
        EXPECT_NE(a.alive_ms, ~0U) << "it was heard from";
        EXPECT_LT(a.alive_ms, 600000U) << "it was heard from during this test";
        EXPECT_GT(a.tx_credits_max, 0U);
        EXPECT_EQ(a.state, static_cast<std::uint32_t>(O2LND_PEER_ESTABLISHED));
        EXPECT_GE(a.conns[O2LND_CONN_ESTABLISHED], 1U);
        EXPECT_GE(a.connects, 1U) << "we pinged it, so we connected to it";
        EXPECT_NE(a.incarnation, 0U) << "an established peer's incarnation is known";
      }
    }
  }
  if (traffic) {
    EXPECT_TRUE(found) << settings().peer_nid << " was pinged but no NI lists it";
  }
}

// Like NET_SHOW (NetShowIgnoresGarbageInOutputFields): the header makes
// only flags, reserved and input pads must-be-zero, so garbage in output
// fields must not turn a call into EINVAL.
TEST_F(AbiV2Test, PeerShowOutputFieldsAreNotInputs) {
  make_traffic();
  for (std::uint32_t ni : o2ib_nis()) {
    auto a = peer_arg(ni, 0);
    std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_peer, count));
    int rc = call(O2LND_IOC_PEER_SHOW, &a);
    EXPECT_TRUE(rc == 0 || rc == ENOENT) << "NI " << ni << ": " << errno_name(rc);
    if (rc == 0) {
      EXPECT_EQ(a.pad, 0U);
      EXPECT_EQ(a.conns[7], 0U);
      EXPECT_TRUE(a.health == O2LND_HEALTH_UP || a.health == O2LND_HEALTH_DOWN)
          << "health 0x" << std::hex << a.health << ": the ABI 3 fields were not written";
      for (std::uint32_t v :
           {static_cast<std::uint32_t>(a.tx_credits), a.tx_credits_max,
            static_cast<std::uint32_t>(a.tx_credits_min), a.credit_queued, a.failures, a.downs}) {
        EXPECT_NE(v, 0xa5a5a5a5U) << "an ABI 3 field was not written";
      }
      EXPECT_NE(a.tx_timeouts, 0xa5a5a5a5a5a5a5a5ULL) << "tx_timeouts was not written";
    }
  }
}

// ---- CONN_SHOW ---------------------------------------------------------------------

TEST_F(AbiV2Test, ConnShowHeaderRules) { check_header_rules(O2LND_IOC_CONN_SHOW, conn_arg(1, 0)); }

TEST_F(AbiV2Test, ConnShowWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_CONN_SHOW, conn_arg(1, 0), false);
}

TEST_F(AbiV2Test, ConnShowOfLoopbackOrMissingNiIsEnoent) {
  std::uint32_t count = net_count();
  for (std::uint32_t ni : {0U, count, count + 1, 0xffffffffU}) {
    expect_refused(O2LND_IOC_CONN_SHOW, conn_arg(ni, 0), ENOENT, "ni_index " + std::to_string(ni));
  }
}

TEST_F(AbiV2Test, ConnShowPastTheLastConnectionIsEnoent) {
  make_traffic();
  for (std::uint32_t ni : o2ib_nis()) {
    auto a = conn_arg(ni, 0);
    std::uint32_t count = call(O2LND_IOC_CONN_SHOW, &a) == 0 ? a.count : 0;
    for (std::uint32_t index : {count + 1000, 0xffffffffU}) {
      expect_refused(O2LND_IOC_CONN_SHOW, conn_arg(ni, index), ENOENT,
                     "NI " + std::to_string(ni) + " index " + std::to_string(index));
    }
  }
}

TEST_F(AbiV2Test, EveryConnectionReadsBackClean) {
  bool traffic = make_traffic();
  bool found = false;
  Nid want = traffic ? *Nid::parse(settings().peer_nid) : Nid();
  for (std::uint32_t ni : o2ib_nis()) {
    for (std::uint32_t index = 0;; ++index) {
      SCOPED_TRACE("NI " + std::to_string(ni) + " conn " + std::to_string(index));
      auto a = conn_arg(ni, index);
      int rc = call(O2LND_IOC_CONN_SHOW, &a);
      if (rc == ENOENT) {
        break;
      }
      ASSERT_EQ(rc, 0) << errno_name(rc);
      ASSERT_LT(index, 100000U) << "CONN_SHOW does not end";
      EXPECT_EQ(a.hdr.size, sizeof(a));
      EXPECT_EQ(a.hdr.flags, 0U);
      EXPECT_EQ(a.hdr.reserved, 0U);
      EXPECT_EQ(a.ni_index, ni);
      EXPECT_EQ(a.index, index);
      EXPECT_LT(a.state, static_cast<std::uint32_t>(O2LND_CONN_NSTATES));
      EXPECT_LE(a.phase, static_cast<std::uint32_t>(O2LND_PHASE_CONNECT));
      EXPECT_TRUE(a.active == 0 || a.active == 1) << "active " << a.active;
      EXPECT_EQ(a.pad, 0U);
      EXPECT_LE(a.error, 0) << "a negative errno or 0";
      EXPECT_EQ(Nid(a.peer_nid).type(), O2LND_NET_TYPE_O2IB) << Nid(a.peer_nid).str();
      if (a.state == O2LND_CONN_ESTABLISHED) {
        EXPECT_EQ(a.phase, static_cast<std::uint32_t>(O2LND_PHASE_NONE));
        EXPECT_EQ(a.deadline_ms, 0U) << "no phase deadline runs on an established connection";
        EXPECT_GT(a.queue_depth, 0U);
        EXPECT_GT(a.max_frags, 0U);
        EXPECT_NE(a.qp_num, 0U);
        EXPECT_GT(a.nrx, 0U);
        EXPECT_NE(a.peer_stamp, 0U);
        EXPECT_EQ(a.error, 0);
        EXPECT_LE(a.credits, static_cast<std::int32_t>(a.queue_depth));
        // ABI 3: Sends in flight, send queue and NOOPs.
        EXPECT_GT(a.concurrent_sends, 0U);
        EXPECT_LE(a.nposted, a.concurrent_sends) << "concurrent_sends caps the Sends in flight";
        EXPECT_GT(a.sq_size, 0U);
        EXPECT_LE(a.sq_free, a.sq_size);
        EXPECT_LE(a.noops_posted, 2U) << "at most 2 NOOPs posted";
      }
      if (a.state == O2LND_CONN_ZOMBIE) {
        EXPECT_EQ(a.qp_num, 0U) << "a zombie's QP is destroyed";
      }
      found = found || (Nid(a.peer_nid) == want && a.state == O2LND_CONN_ESTABLISHED);
    }
  }
  if (traffic) {
    EXPECT_TRUE(found) << settings().peer_nid << " was pinged but has no established connection";
  }
}

TEST_F(AbiV2Test, ConnShowOutputFieldsAreNotInputs) {
  make_traffic();
  for (std::uint32_t ni : o2ib_nis()) {
    auto a = conn_arg(ni, 0);
    std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_conn, count));
    int rc = call(O2LND_IOC_CONN_SHOW, &a);
    EXPECT_TRUE(rc == 0 || rc == ENOENT) << "NI " << ni << ": " << errno_name(rc);
    if (rc == 0) {
      EXPECT_EQ(a.pad, 0U);
      for (std::uint32_t v :
           {static_cast<std::uint32_t>(a.reserved_credits), a.concurrent_sends, a.sq_size,
            a.sq_free, a.noops_posted, a.noops_queued, a.idle_ms, a.keepalives}) {
        EXPECT_NE(v, 0xa5a5a5a5U) << "an ABI 3 field was not written";
      }
    }
  }
}

// ---- PEER_CLOSE --------------------------------------------------------------------

TEST_F(AbiV2Test, PeerCloseHeaderRules) {
  check_header_rules(O2LND_IOC_PEER_CLOSE, close_arg(kNowhere));
}

TEST_F(AbiV2Test, PeerCloseWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_PEER_CLOSE, close_arg(kNowhere), false);
}

TEST_F(AbiV2Test, PeerCloseWithNonzeroPadIsEinval) {
  for (std::uint32_t pad : {1U, 0x80000000U}) {
    auto a = close_arg(kNowhere);
    a.pad = pad;
    expect_refused(O2LND_IOC_PEER_CLOSE, a, EINVAL, "pad " + std::to_string(pad));
  }
}

TEST_F(AbiV2Test, PeerCloseOfUnknownPeerIsEnoent) {
  expect_refused(O2LND_IOC_PEER_CLOSE, close_arg(kNowhere), ENOENT, "an unknown peer");
}

TEST_F(AbiV2Test, PeerCloseOutputFieldsAreNotInputs) {
  auto a = close_arg(kNowhere);
  a.closed = 0xa5a5a5a5U;
  expect_refused(O2LND_IOC_PEER_CLOSE, a, ENOENT, "garbage in closed (an output)");
}

TEST_F(AbiV2Test, PeerCloseOfNonPeerNidIsRefused) {
  for (std::uint64_t nid : {std::uint64_t{O2LND_NID_ANY}, std::uint64_t{O2LND_LO_NID}, kTcpNid}) {
    auto a = close_arg(nid);
    std::array<unsigned char, sizeof(a)> before{};
    std::memcpy(before.data(), &a, sizeof(a));
    int rc = call(O2LND_IOC_PEER_CLOSE, &a);
    EXPECT_TRUE(rc == EINVAL || rc == ENOENT)
        << "PEER_CLOSE of " << Nid(nid).str() << ": got " << errno_name(rc);
    EXPECT_EQ(std::memcmp(before.data(), &a, sizeof(a)), 0);
  }
}

TEST_F(AbiV2Test, PeerCloseClosesThePeersConnectionsAndItReconnects) {
  if (!make_traffic()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  auto a = close_arg(peer->raw());
  ASSERT_EQ(call(O2LND_IOC_PEER_CLOSE, &a), 0) << errno_name(errno);
  EXPECT_GE(a.closed, 1U);
  EXPECT_LT(a.closed, 1000U);
  EXPECT_EQ(a.pad, 0U);
  EXPECT_EQ(a.nid, peer->raw());
  // Nothing may be left ESTABLISHED towards it on the NIs that closed.
  for (std::uint32_t ni : o2ib_nis()) {
    for (std::uint32_t index = 0;; ++index) {
      auto c = conn_arg(ni, index);
      if (call(O2LND_IOC_CONN_SHOW, &c) != 0 || index > 100000) {
        break;
      }
      if (c.peer_nid == peer->raw() && c.active == 1) {
        EXPECT_NE(c.state, static_cast<std::uint32_t>(O2LND_CONN_ESTABLISHED))
            << "an active connection to " << peer->str() << " survived PEER_CLOSE";
      }
    }
  }
  // The peer is usable again at once: closing cancels any backoff.
  make_traffic();
}

// ---- FAULT_ADD / _DEL / _LIST --------------------------------------------------------

TEST_F(FaultAbiTest, FaultAddHeaderRules) {
  check_header_rules(O2LND_IOC_FAULT_ADD, harmless_rule());
  EXPECT_TRUE(list_rules().empty()) << "a refused FAULT_ADD added a rule";
}

TEST_F(FaultAbiTest, FaultDelHeaderRules) {
  check_header_rules(O2LND_IOC_FAULT_DEL, del_arg(kNoSuchRule));
}

TEST_F(FaultAbiTest, FaultListHeaderRules) {
  auto a = make_arg<o2lnd_ioc_fault>();
  check_header_rules(O2LND_IOC_FAULT_LIST, a);
}

TEST_F(FaultAbiTest, FaultCommandsWithBadPointerAreEfault) {
  add_rule(harmless_rule());
  auto before = list_rules();
  check_bad_pointers(O2LND_IOC_FAULT_ADD, harmless_rule(), false);
  check_bad_pointers(O2LND_IOC_FAULT_DEL, del_arg(0), false);
  EXPECT_EQ(list_rules(), before) << "a FAULT_ADD or FAULT_DEL that faulted changed the table";
  // LIST of an existing rule into a read-only buffer cannot be answered.
  check_bad_pointers(O2LND_IOC_FAULT_LIST, make_arg<o2lnd_ioc_fault>(), true);
}

TEST_F(FaultAbiTest, FaultAddIntoReadOnlyBufferIsEfaultAndAddsNothing) {
  auto before = list_rules();
  check_bad_pointers(O2LND_IOC_FAULT_ADD, harmless_rule(), true);
  EXPECT_EQ(list_rules(), before) << "FAULT_ADD could not report the id but kept the rule";
}

TEST_F(FaultAbiTest, FaultAddWithNonzeroPadOrIndexIsEinval) {
  auto a = harmless_rule();
  a.pad = 1;
  expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL, "pad 1");
  a = harmless_rule();
  a.index = 1;
  expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL, "index 1 (LIST only)");
  auto d = del_arg(kNoSuchRule);
  d.pad = 1;
  expect_refused_no_change(O2LND_IOC_FAULT_DEL, d, EINVAL, "pad 1");
}

TEST_F(FaultAbiTest, FaultAddWithBadKindIsEinval) {
  for (std::uint32_t kind : {0U, std::uint32_t{O2LND_FAULT_MAX + 1}, 0xffffffffU}) {
    auto a = harmless_rule();
    a.kind = kind;
    expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL, "kind " + std::to_string(kind));
  }
}

TEST_F(FaultAbiTest, FaultAddWithArgOutOfRangeForTheKindIsEinval) {
  struct Case {
    std::uint32_t kind;
    std::uint32_t arg;
  };
  for (auto c : {
           Case{O2LND_FAULT_CM_DROP, O2LND_CM_NEVENTS},
           Case{O2LND_FAULT_CM_DROP, 0xffffffffU},
           Case{O2LND_FAULT_CM_DELAY, O2LND_CM_NEVENTS},
           Case{O2LND_FAULT_STALL, O2LND_PHASE_NONE},
           Case{O2LND_FAULT_STALL, O2LND_PHASE_CONNECT + 1},
           Case{O2LND_FAULT_REJECT, 0},
           Case{O2LND_FAULT_REJECT, O2LND_REJECT_MAX + 1},
           Case{O2LND_FAULT_MSG_DROP, 1},
           Case{O2LND_FAULT_MSG_DROP, 0xcf},
           Case{O2LND_FAULT_MSG_DROP, 0xd8},
           Case{O2LND_FAULT_MSG_CORRUPT, 0xd8},
           Case{O2LND_FAULT_SEND_DELAY, 1},
       }) {
    auto a = harmless_rule(c.kind, 0);
    a.arg = c.arg;
    expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL,
                             "kind " + std::to_string(c.kind) + " arg " + std::to_string(c.arg));
  }
}

TEST_F(FaultAbiTest, FaultAddWithProbabilityOutOfRangeIsEinval) {
  for (std::uint32_t p : {0U, std::uint32_t{O2LND_FAULT_PROB_ALWAYS + 1}, 0xffffffffU}) {
    auto a = harmless_rule();
    a.probability = p;
    expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL, "probability " + std::to_string(p));
  }
}

TEST_F(FaultAbiTest, FaultAddWithBadDelayIsEinval) {
  for (std::uint32_t kind : {O2LND_FAULT_CM_DELAY, O2LND_FAULT_SEND_DELAY}) {
    for (std::uint32_t d : {0U, std::uint32_t{O2LND_FAULT_MAX_DELAY_MS + 1}, 0xffffffffU}) {
      auto a = harmless_rule(kind, kind == O2LND_FAULT_CM_DELAY ? O2LND_CM_ESTABLISHED : 0);
      a.delay_ms = d;
      expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL,
                               "kind " + std::to_string(kind) + " delay_ms " + std::to_string(d));
    }
  }
  for (std::uint32_t kind : {O2LND_FAULT_CM_DROP, O2LND_FAULT_STALL, O2LND_FAULT_REJECT,
                             O2LND_FAULT_MSG_DROP, O2LND_FAULT_MSG_CORRUPT}) {
    auto a = harmless_rule(kind, kind == O2LND_FAULT_STALL    ? O2LND_PHASE_ADDR
                                 : kind == O2LND_FAULT_REJECT ? O2LND_REJECT_FATAL
                                                              : 0);
    a.delay_ms = 1;
    expect_refused_no_change(O2LND_IOC_FAULT_ADD, a, EINVAL,
                             "a delay for kind " + std::to_string(kind));
  }
}

TEST_F(FaultAbiTest, FaultAddAcceptsTheEdgesAndListReadsThemBack) {
  std::vector<o2lnd_ioc_fault> rules;
  auto r = harmless_rule(O2LND_FAULT_CM_DROP, O2LND_CM_TIMEWAIT_EXIT);
  r.probability = 1;
  r.count = 0xffffffffU;
  rules.push_back(r);
  r = harmless_rule(O2LND_FAULT_CM_DELAY, O2LND_CM_ADDR_RESOLVED);
  r.delay_ms = O2LND_FAULT_MAX_DELAY_MS;
  rules.push_back(r);
  rules.push_back(harmless_rule(O2LND_FAULT_STALL, O2LND_PHASE_CONNECT));
  r = harmless_rule(O2LND_FAULT_REJECT, O2LND_REJECT_EARLY);
  r.queue_depth = 4;
  r.max_frags = 32;
  r.local_nid = O2LND_NID_ANY;
  rules.push_back(r);
  rules.push_back(harmless_rule(O2LND_FAULT_MSG_DROP, 0xd7));
  rules.push_back(harmless_rule(O2LND_FAULT_MSG_CORRUPT, 0xd0));
  rules.push_back(harmless_rule(O2LND_FAULT_SEND_DELAY, 0));
  std::set<std::uint32_t> ids;
  for (auto& rule : rules) {
    auto a = rule;
    ASSERT_EQ(call(O2LND_IOC_FAULT_ADD, &a), 0)
        << "kind " << rule.kind << " arg " << rule.arg << ": " << errno_name(errno);
    EXPECT_GT(a.id, 0U);
    EXPECT_TRUE(ids.insert(a.id).second) << "id " << a.id << " given twice";
    rule.id = a.id;
  }
  for (std::uint32_t index = 0; index < rules.size(); ++index) {
    SCOPED_TRACE("rule " + std::to_string(index));
    auto a = make_arg<o2lnd_ioc_fault>();
    a.index = index;
    ASSERT_EQ(call(O2LND_IOC_FAULT_LIST, &a), 0) << errno_name(errno);
    const auto& want = rules[index];
    EXPECT_EQ(a.hdr.size, sizeof(a));
    EXPECT_EQ(a.hdr.flags, 0U);
    EXPECT_EQ(a.hdr.reserved, 0U);
    EXPECT_EQ(a.count_rules, rules.size());
    EXPECT_EQ(a.id, want.id) << "LIST returns the rules in the order they were added";
    EXPECT_EQ(a.kind, want.kind);
    EXPECT_EQ(a.arg, want.arg);
    EXPECT_EQ(a.peer_nid, want.peer_nid);
    EXPECT_EQ(a.local_nid, want.local_nid);
    EXPECT_EQ(a.count, want.count);
    EXPECT_EQ(a.probability, want.probability);
    EXPECT_EQ(a.delay_ms, want.delay_ms);
    EXPECT_EQ(a.queue_depth, want.queue_depth);
    EXPECT_EQ(a.max_frags, want.max_frags);
    EXPECT_EQ(a.fired, 0U) << "it only applies to " << Nid(kNowhere).str();
    EXPECT_EQ(a.pad, 0U);
  }
  auto past = make_arg<o2lnd_ioc_fault>();
  past.index = static_cast<std::uint32_t>(rules.size());
  expect_refused(O2LND_IOC_FAULT_LIST, past, ENOENT, "index past the last rule");
  past.index = 0xffffffffU;
  expect_refused(O2LND_IOC_FAULT_LIST, past, ENOENT, "index 0xffffffff");
}

TEST_F(FaultAbiTest, FaultListOutputFieldsAreNotInputs) {
  auto rule = harmless_rule(O2LND_FAULT_STALL, O2LND_PHASE_ADDR);
  rule.id = add_rule(rule);
  ASSERT_NE(rule.id, 0U);
  auto a = make_arg<o2lnd_ioc_fault>();
  a.index = 0;
  // Every LIST output but pad ("pad: 0"): id, count_rules, kind .. fired.
  std::memset(&a.id, kPattern, sizeof(a.id));
  std::memset(&a.count_rules, kPattern,
              offsetof(o2lnd_ioc_fault, pad) - offsetof(o2lnd_ioc_fault, count_rules));
  int rc = call(O2LND_IOC_FAULT_LIST, &a);
  ASSERT_EQ(rc, 0) << errno_name(rc);
  EXPECT_EQ(a.id, rule.id);
  EXPECT_EQ(a.kind, rule.kind);
  EXPECT_EQ(a.arg, rule.arg);
  EXPECT_EQ(a.count_rules, 1U);
  EXPECT_EQ(a.fired, 0U);
}

TEST_F(FaultAbiTest, FaultListWithNonzeroPadIsEinval) {
  add_rule(harmless_rule());
  auto a = make_arg<o2lnd_ioc_fault>();
  a.pad = 1;
  expect_refused(O2LND_IOC_FAULT_LIST, a, EINVAL, "pad 1");
}

TEST_F(FaultAbiTest, FaultListOfEmptyTableIsEnoent) {
  expect_refused(O2LND_IOC_FAULT_LIST, make_arg<o2lnd_ioc_fault>(), ENOENT, "an empty table");
}

TEST_F(FaultAbiTest, ThirtyThirdRuleIsEnospc) {
  std::set<std::uint32_t> ids;
  for (int i = 0; i < O2LND_FAULT_MAX_RULES; ++i) {
    ids.insert(add_rule(harmless_rule(O2LND_FAULT_MSG_DROP, 0xd0 + (i % 8))));
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(O2LND_FAULT_MAX_RULES));
  EXPECT_FALSE(ids.contains(0U));
  expect_refused_no_change(O2LND_IOC_FAULT_ADD, harmless_rule(), ENOSPC, "a 33rd rule");
  EXPECT_EQ(list_rules().size(), static_cast<std::size_t>(O2LND_FAULT_MAX_RULES));
  // Room again after a delete.
  auto d = del_arg(*ids.begin());
  ASSERT_EQ(call(O2LND_IOC_FAULT_DEL, &d), 0);
  EXPECT_NE(add_rule(harmless_rule()), 0U);
  delete_all_rules();
  EXPECT_TRUE(list_rules().empty());
}

TEST_F(FaultAbiTest, FaultDelOfUnknownIdIsEnoentAndDeletesNothing) {
  std::uint32_t id = add_rule(harmless_rule());
  ASSERT_NE(id, 0U);
  expect_refused_no_change(O2LND_IOC_FAULT_DEL, del_arg(kNoSuchRule), ENOENT, "an unknown id");
  expect_refused_no_change(O2LND_IOC_FAULT_DEL, del_arg(id + 1), ENOENT, "the next id");
  auto d = del_arg(id);
  ASSERT_EQ(call(O2LND_IOC_FAULT_DEL, &d), 0) << errno_name(errno);
  EXPECT_TRUE(list_rules().empty());
  expect_refused(O2LND_IOC_FAULT_DEL, del_arg(id), ENOENT, "a deleted id");
}

TEST_F(FaultAbiTest, FaultDelAllEmptiesTheTableAndIdsAreNotReused) {
  std::uint32_t a = add_rule(harmless_rule());
  std::uint32_t b = add_rule(harmless_rule(O2LND_FAULT_STALL, O2LND_PHASE_ROUTE));
  EXPECT_NE(a, b);
  delete_all_rules();
  EXPECT_TRUE(list_rules().empty());
  delete_all_rules();  // an empty table: still fine
  std::uint32_t c = add_rule(harmless_rule());
  EXPECT_NE(c, a) << "a new rule must not take a deleted rule's id";
  EXPECT_NE(c, b) << "a new rule must not take a deleted rule's id";
}

// ---- CAP_NET_ADMIN -------------------------------------------------------------------

// Runs `body` in a forked child with CAP_NET_ADMIN dropped from its
// effective, permitted and inheritable sets; the child opens the device
// itself.  `body` returns a failure description, "" for success.
template <typename Body>
void in_child_without_cap_net_admin(Body body) {
  std::array<int, 2> pipefd{};
  ASSERT_EQ(::pipe(pipefd.data()), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    std::string result;
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
    if (::syscall(SYS_capget, &hdr, data.data()) != 0) {  // NOLINT(*-vararg)
      result = "capget: " + errno_name(errno);
    } else {
      constexpr std::uint32_t kBit = 1U << CAP_NET_ADMIN;  // CAP_NET_ADMIN < 32
      data[0].effective &= ~kBit;
      data[0].permitted &= ~kBit;
      data[0].inheritable &= ~kBit;
      if (::syscall(SYS_capset, &hdr, data.data()) != 0) {  // NOLINT(*-vararg)
        result = "capset: " + errno_name(errno);
      } else {
        int fd = ::open(settings().device.c_str(), O_RDWR | O_CLOEXEC);  // NOLINT(*-vararg)
        result = fd < 0 ? "open: " + errno_name(errno) : body(fd);
        if (fd >= 0) {
          ::close(fd);
        }
      }
    }
    auto n = ::write(pipefd[1], result.data(), result.size());
    ::_exit(n == static_cast<ssize_t>(result.size()) ? 0 : 3);
  }
  ::close(pipefd[1]);
  std::string out;
  std::array<char, 4096> buf{};
  ssize_t n = 0;
  while ((n = ::read(pipefd[0], buf.data(), buf.size())) > 0) {
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_EQ(out, "") << "without CAP_NET_ADMIN";
}

bool have_cap_net_admin() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
  if (::syscall(SYS_capget, &hdr, data.data()) != 0) {  // NOLINT(*-vararg)
    return false;
  }
  return (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
}

// "" when ioctl(cmd) on fd fails with EPERM.
template <typename T>
std::string expect_eperm(int fd, unsigned long cmd, T arg) {
  int rc = ::ioctl(fd, cmd, &arg) == 0 ? 0 : errno;  // NOLINT(*-vararg)
  if (rc == EPERM) {
    return "";
  }
  return cmd_name(cmd) + ": expected " + errno_name(EPERM) + ", got " + errno_name(rc) + "\n";
}

TEST_F(FaultAbiTest, FaultCommandsAndPeerCloseNeedCapNetAdmin) {
  if (!have_cap_net_admin()) {
    GTEST_SKIP() << "runs unprivileged: cannot check that dropping CAP_NET_ADMIN matters";
  }
  std::uint32_t id = add_rule(harmless_rule());
  ASSERT_NE(id, 0U);
  auto before = list_rules();
  std::string peer = settings().peer_nid;
  in_child_without_cap_net_admin([id, peer](int fd) {
    std::string failures;
    failures += expect_eperm(fd, O2LND_IOC_FAULT_ADD, harmless_rule());
    failures += expect_eperm(fd, O2LND_IOC_FAULT_DEL, del_arg(id));
    failures += expect_eperm(fd, O2LND_IOC_FAULT_DEL, del_arg(0));
    failures += expect_eperm(fd, O2LND_IOC_FAULT_LIST, make_arg<o2lnd_ioc_fault>());
    failures += expect_eperm(fd, O2LND_IOC_PEER_CLOSE, close_arg(kNowhere));
    if (!peer.empty()) {
      failures += expect_eperm(fd, O2LND_IOC_PEER_CLOSE, close_arg(Nid::parse(peer)->raw()));
    }
    // Showing needs no privilege.
    auto p = peer_arg(1, 0);
    int rc = ::ioctl(fd, O2LND_IOC_PEER_SHOW, &p) == 0 ? 0 : errno;  // NOLINT(*-vararg)
    if (rc == EPERM) {
      failures += "PEER_SHOW needs no CAP_NET_ADMIN\n";
    }
    auto c = conn_arg(1, 0);
    rc = ::ioctl(fd, O2LND_IOC_CONN_SHOW, &c) == 0 ? 0 : errno;  // NOLINT(*-vararg)
    if (rc == EPERM) {
      failures += "CONN_SHOW needs no CAP_NET_ADMIN\n";
    }
    return failures;
  });
  EXPECT_EQ(list_rules(), before) << "a refused call changed the rule table";
}

// ---- the library against the real module --------------------------------------------

TEST(LibraryV2, ListsPeersAndConnections) {
  auto dev = Device::open(settings().device, "o2lnd_guest_abi_tests");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  if (!settings().peer_nid.empty()) {
    auto peer = Nid::parse(settings().peer_nid);
    ASSERT_TRUE(dev->ping(*peer, std::chrono::seconds(10)).ok());
  }
  auto peers = dev->peers();
  ASSERT_TRUE(peers.ok()) << peers.error().message;
  auto conns = dev->conns();
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  for (const auto& p : *peers) {
    EXPECT_NE(p.local_nid, Nid::loopback());
  }
  if (!settings().peer_nid.empty()) {
    EXPECT_FALSE(peers->empty());
    EXPECT_FALSE(conns->empty());
  }
}

TEST(LibraryV2, FaultRuleRoundTrip) {
  auto dev = Device::open(settings().device, "o2lnd_guest_abi_tests");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  ASSERT_TRUE(dev->fault_del_all().ok());
  FaultRule r;
  r.kind = O2LND_FAULT_CM_DELAY;
  r.arg = O2LND_CM_CONNECT_RESPONSE;
  r.peer = Nid(kNowhere);
  r.count = 5;
  r.probability = 250000;
  r.delay_ms = 100;
  auto id = dev->fault_add(r);
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto rules = dev->fault_list();
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  ASSERT_EQ(rules->size(), 1U);
  r.id = *id;
  EXPECT_EQ(rules->front(), r);
  ASSERT_TRUE(dev->fault_del(*id).ok());
  auto again = dev->fault_del(*id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().errnum, ENOENT);
  EXPECT_TRUE(dev->fault_list()->empty());
}

}  // namespace
}  // namespace o2lnd::guest
