// The kernel's side of include/uapi/o2lnd.h, checked with raw ioctls:
// VERSION, PING and NET_SHOW (see abi_v2_test.cc for the ABI 2 commands).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
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

o2lnd_ioc_ping valid_ping(std::uint64_t nid = kNowhere) {
  auto a = make_arg<o2lnd_ioc_ping>();
  a.nid = nid;
  a.src_nid = O2LND_NID_ANY;
  a.timeout_ms = 1;
  a.max_ids = O2LND_PING_MAX_IDS;
  return a;
}

// ---- VERSION ------------------------------------------------------------------

TEST_F(AbiTest, VersionReportsThisAbiWithZeroPadAndCleanString) {
  auto a = make_arg<o2lnd_ioc_version>();
  std::memset(&a.abi_version, kPattern, sizeof(a) - sizeof(a.hdr));
  ASSERT_EQ(call(O2LND_IOC_VERSION, &a), 0);
  EXPECT_EQ(a.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(a.pad, 0U);
  EXPECT_GT(::strnlen(a.module_version, sizeof(a.module_version)), 0U);
  EXPECT_TRUE(clean_string(a.module_version)) << "module_version";
}

TEST_F(AbiTest, VersionWorksWithAnyAbiVersion) {
  for (std::uint32_t abi : {0U, O2LND_ABI_VERSION + 1U, 0xffffffffU}) {
    auto a = make_arg<o2lnd_ioc_version>();
    a.hdr.abi_version = abi;
    EXPECT_EQ(call(O2LND_IOC_VERSION, &a), 0) << "abi_version " << abi;
    EXPECT_EQ(a.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  }
}

TEST_F(AbiTest, VersionChecksOnlyTheSize) {
  auto a = make_arg<o2lnd_ioc_version>();
  a.hdr.flags = 1;
  a.hdr.reserved = 1;
  EXPECT_EQ(call(O2LND_IOC_VERSION, &a), 0);
}

TEST_F(AbiTest, VersionWithWrongSizeIsEinval) {
  for (std::uint32_t size : {std::uint32_t{sizeof(o2lnd_ioc_version) - 1},
                             std::uint32_t{sizeof(o2lnd_ioc_version) + 1}, std::uint32_t{0}}) {
    auto a = make_arg<o2lnd_ioc_version>();
    a.hdr.size = size;
    expect_refused(O2LND_IOC_VERSION, a, EINVAL, "size " + std::to_string(size));
  }
}

TEST_F(AbiTest, VersionWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_VERSION, make_arg<o2lnd_ioc_version>(), true);
}

// ---- unknown commands --------------------------------------------------------

TEST_F(AbiTest, UnknownCommandIsEnotty) {
  // Since ABI 6 only the type and number name a command (its encoded size
  // and direction do not: abi_v6_test.cc).
  auto a = make_arg<o2lnd_ioc_version>();
  for (unsigned long cmd : {
           static_cast<unsigned long>(_IOWR(O2LND_IOC_MAGIC, 0, o2lnd_ioc_version)),
           static_cast<unsigned long>(_IOWR(O2LND_IOC_MAGIC, 99, o2lnd_ioc_version)),
           static_cast<unsigned long>(_IOWR(O2LND_IOC_MAGIC + 1, 1, o2lnd_ioc_version)),
           static_cast<unsigned long>(_IO(O2LND_IOC_MAGIC + 1, 1)),
       }) {
    expect_refused(cmd, a, ENOTTY, "unknown command");
  }
}

TEST_F(AbiTest, CommandWithOtherEncodedSizeIsTheSameCommand) {
  // ABI 6: a grown struct keeps its command; hdr.size says its size.
  std::array<unsigned char, sizeof(o2lnd_ioc_version) + 8> buf{};
  auto a = make_arg<o2lnd_ioc_version>();
  std::memcpy(buf.data(), &a, sizeof(a));
  unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, O2LND_IOC_MAGIC, 1, sizeof(buf));
  EXPECT_EQ(call(cmd, buf.data()), 0) << errno_name(errno);
}

// ---- PING -------------------------------------------------------------------

TEST_F(AbiTest, PingHeaderRules) { check_header_rules(O2LND_IOC_PING, valid_ping()); }

TEST_F(AbiTest, PingWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_PING, valid_ping(), false);
}

TEST_F(AbiTest, PingOfNidAnyIsEinval) {
  expect_refused(O2LND_IOC_PING, valid_ping(O2LND_NID_ANY), EINVAL, "nid NID_ANY");
}

TEST_F(AbiTest, PingOfLoopbackIsEinval) {
  expect_refused(O2LND_IOC_PING, valid_ping(O2LND_LO_NID), EINVAL, "nid 0@lo");
}

TEST_F(AbiTest, PingOfNonO2ibNidIsEinval) {
  expect_refused(O2LND_IOC_PING, valid_ping(kTcpNid), EINVAL, "nid 192.168.1.2@tcp0");
  expect_refused(O2LND_IOC_PING, valid_ping(Nid::from_parts(7, 0, 0xc0a80102).raw()), EINVAL,
                 "a NID of lnd type 7");
}

TEST_F(AbiTest, PingTimeoutAboveMaxIsEinval) {
  for (std::uint32_t t : {std::uint32_t{O2LND_PING_TIMEOUT_MAX_MS + 1}, 0xffffffffU}) {
    auto a = valid_ping();
    a.timeout_ms = t;
    expect_refused(O2LND_IOC_PING, a, EINVAL, "timeout_ms " + std::to_string(t));
  }
}

TEST_F(AbiTest, PingMaxIdsOutOfRangeIsEinval) {
  for (std::uint32_t n : {0U, std::uint32_t{O2LND_PING_MAX_IDS + 1}, 0xffffffffU}) {
    auto a = valid_ping();
    a.max_ids = n;
    expect_refused(O2LND_IOC_PING, a, EINVAL, "max_ids " + std::to_string(n));
  }
}

// ---- NET_SHOW ---------------------------------------------------------------

TEST_F(AbiTest, NetShowHeaderRules) {
  check_header_rules(O2LND_IOC_NET_SHOW, make_arg<o2lnd_ioc_net>());
}

TEST_F(AbiTest, NetShowWithBadPointerIsEfault) {
  check_bad_pointers(O2LND_IOC_NET_SHOW, make_arg<o2lnd_ioc_net>(), true);
}

TEST_F(AbiTest, NetShowPastTheEndIsEnoent) {
  std::uint32_t count = net_count();
  ASSERT_GT(count, 0U) << "no NI at index 0";
  for (std::uint32_t index : {count, count + 1, 0xffffffffU}) {
    auto a = make_arg<o2lnd_ioc_net>();
    a.index = index;
    expect_refused(O2LND_IOC_NET_SHOW, a, ENOENT, "index " + std::to_string(index));
  }
}

TEST_F(AbiTest, NetShowIgnoresGarbageInOutputFields) {
  auto a = make_arg<o2lnd_ioc_net>();
  std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_net, count));
  a.index = 0;
  ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &a), 0) << "output fields are not inputs";
  EXPECT_EQ(a.pad, 0U);
  EXPECT_EQ(a.pad2, 0U);
  EXPECT_FALSE(all_bytes(a, offsetof(o2lnd_ioc_net, tx_credits), sizeof(a), kPattern))
      << "the ABI 3 fields were not written";
}

TEST_F(AbiTest, EveryNiReadsBackClean) {
  std::uint32_t count = net_count();
  ASSERT_GT(count, 0U);
  bool have_lo = false;
  for (std::uint32_t i = 0; i < count; ++i) {
    SCOPED_TRACE("NI " + std::to_string(i));
    auto a = make_arg<o2lnd_ioc_net>();
    std::memset(&a.count, kPattern, sizeof(a) - offsetof(o2lnd_ioc_net, count));
    a.index = i;
    ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &a), 0);
    EXPECT_EQ(a.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
    EXPECT_EQ(a.hdr.size, sizeof(a));
    EXPECT_EQ(a.hdr.flags, 0U);
    EXPECT_EQ(a.hdr.reserved, 0U);
    EXPECT_EQ(a.index, i);
    EXPECT_EQ(a.count, count) << "the NI count changed while nothing was configured";
    EXPECT_NE(a.nid, O2LND_NID_ANY);
    EXPECT_TRUE(a.status == O2LND_NI_STATUS_UP || a.status == O2LND_NI_STATUS_DOWN)
        << "status 0x" << std::hex << a.status;
    EXPECT_EQ(a.pad, 0U);
    EXPECT_EQ(a.pad2, 0U);
    EXPECT_TRUE(clean_string(a.net)) << "net";
    EXPECT_TRUE(clean_string(a.ifname)) << "ifname";
    EXPECT_TRUE(clean_string(a.devname)) << "devname";
    Nid nid(a.nid);
    EXPECT_EQ(std::string(a.net), net_name(nid.net())) << "net name of " << nid.str();
    if (nid == Nid::loopback()) {
      have_lo = true;
    } else {
      EXPECT_EQ(nid.type(), O2LND_NET_TYPE_O2IB) << nid.str();
      EXPECT_GT(::strnlen(a.ifname, sizeof(a.ifname)), 0U) << nid.str() << " has no interface";
      EXPECT_GT(a.peer_credits, 0U);
      EXPECT_GT(a.credits, 0U);
      EXPECT_GT(a.timeout_s, 0U);
      EXPECT_GT(a.max_msg_size, 0U);
      EXPECT_LE(a.nconns_established, a.nconns);
      // ABI 3: credits, txs and tunables.
      EXPECT_LE(a.tx_credits, static_cast<std::int32_t>(a.credits));
      EXPECT_LE(a.tx_credits_min, a.tx_credits) << "min is the lowest tx_credits ever reached";
      if (a.tx_credits >= 0) {
        EXPECT_EQ(a.tx_queued, 0U) << "messages wait only when no credit is left";
      }
      EXPECT_GT(a.ntx, 0U);
      EXPECT_LE(a.tx_live, a.ntx);
      EXPECT_GT(a.peer_credits_hiw, 0U);
      EXPECT_LE(a.peer_credits_hiw, a.peer_credits);
      EXPECT_GT(a.concurrent_sends, 0U);
    }
    // Every ABI 3 output field was written (none is left as the pattern).
    for (std::uint32_t v :
         {static_cast<std::uint32_t>(a.tx_credits), static_cast<std::uint32_t>(a.tx_credits_min),
          a.tx_queued, a.ntx, a.tx_live, a.peer_credits_hiw, a.concurrent_sends, a.keepalive_s}) {
      EXPECT_NE(v, 0xa5a5a5a5U) << "an ABI 3 field of NI " << nid.str() << " was not written";
    }
    for (std::uint64_t v : {a.tx_timeouts, a.tx_no_credit_drops, a.keepalives, a.early_replies}) {
      EXPECT_NE(v, 0xa5a5a5a5a5a5a5a5ULL)
          << "an ABI 3 counter of NI " << nid.str() << " was not written";
    }
    if (nid == Nid::loopback()) {
      EXPECT_EQ(a.tx_queued, 0U) << "0@lo has zero counters";
      EXPECT_EQ(a.tx_timeouts, 0U);
      EXPECT_EQ(a.tx_no_credit_drops, 0U);
      EXPECT_EQ(a.keepalives, 0U);
      EXPECT_EQ(a.early_replies, 0U);
    }
  }
  EXPECT_TRUE(have_lo) << "LNet always has 0@lo";
}

// ---- the library against the real module ------------------------------------

TEST(Library, OpensTheModuleAndListsItsNis) {
  auto dev = Device::open(settings().device, "o2lnd_guest_abi_tests");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  auto nis = dev->nets();
  ASSERT_TRUE(nis.ok()) << nis.error().message;
  EXPECT_FALSE(nis->empty());
}

// ---- pings that need a network -------------------------------------------------

TEST_F(AbiTest, PingOfPeerReturnsItsNids) {
  if (settings().peer_nid.empty()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  auto a = valid_ping(peer->raw());
  a.timeout_ms = 10000;
  // Output fields are not inputs: garbage there must not matter.
  std::memset(&a.pid, kPattern, sizeof(a) - offsetof(o2lnd_ioc_ping, pid));
  ASSERT_EQ(call(O2LND_IOC_PING, &a), 0) << errno_name(errno);
  EXPECT_EQ(a.pid, static_cast<std::uint32_t>(O2LND_PID_LUSTRE));
  ASSERT_GE(a.n_ids, 2U) << "0@lo and at least the NID pinged";
  EXPECT_GT(a.rtt_ns, 0U);
  EXPECT_LT(a.rtt_ns, 10ULL * 1000 * 1000 * 1000);
  std::uint32_t valid = std::min<std::uint32_t>(a.n_ids, a.max_ids);
  EXPECT_EQ(a.ids[0].nid, O2LND_LO_NID);
  bool found = false;
  for (std::uint32_t i = 0; i < valid; ++i) {
    found = found || a.ids[i].nid == peer->raw();
    EXPECT_EQ(a.ids[i].pad, 0U) << "ids[" << i << "]";
    // 0@lo's status is the sequence number of the peer's ping info when
    // it does discovery (LNet 2.11+, o2lnd): any value
    EXPECT_TRUE(i == 0 || a.ids[i].status == O2LND_NI_STATUS_UP ||
                a.ids[i].status == O2LND_NI_STATUS_DOWN || a.ids[i].status == 0)
        << "ids[" << i << "].status " << a.ids[i].status;
  }
  EXPECT_TRUE(found) << peer->str() << " is not among the NIDs it reported";
}

TEST_F(AbiTest, PingOfPeerWithMaxIds1StillCountsAllNids) {
  if (settings().peer_nid.empty()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  auto a = valid_ping(peer->raw());
  a.timeout_ms = 10000;
  a.max_ids = 1;
  ASSERT_EQ(call(O2LND_IOC_PING, &a), 0) << errno_name(errno);
  EXPECT_GE(a.n_ids, 2U);
  EXPECT_EQ(a.ids[0].nid, O2LND_LO_NID);
}

TEST(Library, PingOfPeerThroughTheLibrary) {
  if (settings().peer_nid.empty()) {
    GTEST_SKIP() << "no peer: pass --peer-nid=NID or O2LND_PEER_NID";
  }
  auto peer = Nid::parse(settings().peer_nid);
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  auto dev = Device::open(settings().device, "o2lnd_guest_abi_tests");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  auto r = dev->ping(*peer, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->rtt.count(), 0);
  ASSERT_FALSE(r->ids.empty());
  EXPECT_EQ(r->ids[0].nid, Nid::loopback());
}

TEST_F(AbiTest, PingOfUnownedAddressTimesOut) {
  if (settings().unowned_nid.empty()) {
    GTEST_SKIP() << "no unowned NID: pass --unowned-nid=NID or O2LND_UNOWNED_NID";
  }
  auto nid = Nid::parse(settings().unowned_nid);
  ASSERT_TRUE(nid.ok()) << nid.error().message;
  auto a = valid_ping(nid->raw());
  a.timeout_ms = 1000;
  auto start = std::chrono::steady_clock::now();
  int rc = call(O2LND_IOC_PING, &a);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(rc, ETIMEDOUT) << "got " << errno_name(rc);
  EXPECT_LT(elapsed, std::chrono::seconds(6)) << "a 1 s ping must give up promptly";
}

TEST_F(AbiTest, PingOfOwnNidsSucceeds) {
  if (!settings().ping_self) {
    GTEST_SKIP() << "opt-in: --ping-self or O2LND_PING_SELF=1";
  }
  std::uint32_t count = net_count();
  for (std::uint32_t i = 0; i < count; ++i) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.index = i;
    ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &n), 0);
    if (Nid(n.nid).type() != O2LND_NET_TYPE_O2IB || n.status != O2LND_NI_STATUS_UP) {
      continue;
    }
    auto a = valid_ping(n.nid);
    a.timeout_ms = 10000;
    EXPECT_EQ(call(O2LND_IOC_PING, &a), 0)
        << "ping of own " << Nid(n.nid).str() << ": " << errno_name(errno);
  }
}

}  // namespace
}  // namespace o2lnd::guest
