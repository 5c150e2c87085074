#include "o2lnd/device.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2lnd/backend.h"
#include "o2lnd/nid.h"

namespace o2lnd {
namespace {

using std::chrono::milliseconds;
using testing::FakeBackend;
using testing::FakeKernel;
using testing::make_ni;

constexpr std::uint64_t kPeer = 0x00050000c0a80102ULL;   // 192.168.1.2@o2ib0
constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0

class DeviceTest : public ::testing::Test {
 protected:
  Result<Device> attach(std::string_view client = "o2ctl") {
    return Device::attach(std::make_unique<FakeBackend>(kernel_), client);
  }
  Device attach_ok() {
    auto dev = attach();
    EXPECT_TRUE(dev.ok()) << dev.error().message;
    return std::move(*dev);
  }
  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
};

// ---- ABI check on open -------------------------------------------------------

TEST_F(DeviceTest, AcceptsModuleWithSameAbi) {
  auto dev = attach();
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  EXPECT_EQ(dev->module_info().abi_version, kAbiVersion);
  EXPECT_EQ(dev->module_info().module_version, "0.1.0-fake");
  ASSERT_EQ(kernel_->calls.size(), 1U);
  EXPECT_EQ(kernel_->calls[0].cmd, O2LND_IOC_VERSION);
}

TEST_F(DeviceTest, RefusesModuleWithOtherAbi) {
  kernel_->abi = 1;
  auto dev = attach();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, EPROTO);
  EXPECT_EQ(dev.error().message, "o2lnd module ABI 1, o2ctl speaks ABI " +
                                     std::to_string(O2LND_ABI_VERSION) +
                                     ": upgrade o2ctl or load a matching module");
}

TEST_F(DeviceTest, RefusesModuleWithOlderAbiNamingTheClient) {
  kernel_->abi = 0;
  auto dev = attach("o2lnd_guest_abi_tests");
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().message, "o2lnd module ABI 0, o2lnd_guest_abi_tests speaks ABI " +
                                     std::to_string(O2LND_ABI_VERSION) +
                                     ": upgrade "
                                     "o2lnd_guest_abi_tests or load a matching module");
}

TEST_F(DeviceTest, VersionIoctlFailingIsAClearError) {
  kernel_->version_err = ENOTTY;
  auto dev = attach();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, ENOTTY);
  EXPECT_EQ(dev.error().message,
            "O2LND_IOC_VERSION on /dev/o2lnd: Inappropriate ioctl for device (is /dev/o2lnd an "
            "o2lnd device?)");
}

TEST_F(DeviceTest, VersionIoctlFailingWithEioKeepsTheErrno) {
  kernel_->version_err = EIO;
  auto dev = attach();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, EIO);
  EXPECT_NE(dev.error().message.find("Input/output error"), std::string::npos);
}

TEST_F(DeviceTest, ModuleVersionWithoutNulIsCutAtTheField) {
  kernel_->module_version = std::string(O2LND_VERSION_LEN + 10, 'v');
  auto dev = attach_ok();
  EXPECT_EQ(dev.module_info().module_version, std::string(O2LND_VERSION_LEN, 'v'));
}

TEST_F(DeviceTest, VersionAsksTheModuleAgain) {
  auto dev = attach_ok();
  kernel_->module_version = "0.2.0";
  auto v = dev.version();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->module_version, "0.2.0");
  EXPECT_EQ(kernel_->calls.size(), 2U);
}

// ---- the header on every call ------------------------------------------------

TEST_F(DeviceTest, EveryCallFillsTheHeaderForThisAbi) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  kernel_->on_ping = [](o2lnd_ioc_ping& p) {
    p.n_ids = 0;
    return 0;
  };
  auto dev = attach_ok();
  ASSERT_TRUE(dev.version().ok());
  ASSERT_TRUE(dev.ping(Nid(kPeer)).ok());
  ASSERT_TRUE(dev.nets().ok());
  ASSERT_TRUE(dev.net(1).ok());
  ASSERT_EQ(kernel_->calls.size(), 2U + 1U + 3U + 1U);
  for (const auto& c : kernel_->calls) {
    EXPECT_EQ(c.hdr.abi_version, O2LND_ABI_VERSION);
    EXPECT_EQ(c.hdr.size, _IOC_SIZE(c.cmd));
    EXPECT_EQ(c.hdr.flags, 0U);
    EXPECT_EQ(c.hdr.reserved, 0U);
  }
  EXPECT_EQ(kernel_->calls[0].hdr.size, sizeof(o2lnd_ioc_version));
  EXPECT_EQ(kernel_->calls[2].hdr.size, sizeof(o2lnd_ioc_ping));
  EXPECT_EQ(kernel_->calls[3].hdr.size, sizeof(o2lnd_ioc_net));
}

TEST_F(DeviceTest, VersionRequestIsZeroPastTheHeader) {
  auto dev = attach_ok();
  const auto& bytes = kernel_->calls[0].bytes;
  EXPECT_TRUE(std::all_of(bytes.begin() + sizeof(o2lnd_ioc_hdr), bytes.end(),
                          [](unsigned char b) { return b == 0; }));
}

// ---- ping ----------------------------------------------------------------------

o2lnd_ioc_ping last_ping(const FakeKernel& k) {
  o2lnd_ioc_ping p{};
  for (const auto& c : k.calls) {
    if (c.cmd == O2LND_IOC_PING) {
      std::memcpy(&p, c.bytes.data(), sizeof(p));
    }
  }
  return p;
}

int reply_with(o2lnd_ioc_ping& p, std::uint32_t n_ids) {
  p.pid = O2LND_PID_LUSTRE;
  p.n_ids = n_ids;
  p.rtt_ns = 123456;
  for (std::uint32_t i = 0; i < std::min(n_ids, p.max_ids); ++i) {
    p.ids[i].nid = i == 0 ? O2LND_LO_NID : kPeer + i - 1;
    p.ids[i].status = O2LND_NI_STATUS_UP;
  }
  return 0;
}

TEST_F(DeviceTest, PingSendsTargetAnySourceDefaultTimeoutAndAllIds) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 2); };
  auto dev = attach_ok();
  ASSERT_TRUE(dev.ping(Nid(kPeer)).ok());
  auto req = last_ping(*kernel_);
  EXPECT_EQ(req.nid, kPeer);
  EXPECT_EQ(req.src_nid, O2LND_NID_ANY);
  EXPECT_EQ(req.timeout_ms, 0U);
  EXPECT_EQ(req.max_ids, static_cast<std::uint32_t>(O2LND_PING_MAX_IDS));
  EXPECT_EQ(req.pid, 0U);
  EXPECT_EQ(req.n_ids, 0U);
  EXPECT_EQ(req.rtt_ns, 0U);
  const auto* ids = reinterpret_cast<const unsigned char*>(&req.ids);  // NOLINT
  EXPECT_TRUE(std::all_of(ids, ids + sizeof(req.ids), [](unsigned char b) { return b == 0; }));
}

TEST_F(DeviceTest, PingPassesSourceTimeoutAndMaxIds) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 2); };
  auto dev = attach_ok();
  ASSERT_TRUE(dev.ping(Nid(kPeer), milliseconds(1500), Nid(kLocal), 4).ok());
  auto req = last_ping(*kernel_);
  EXPECT_EQ(req.src_nid, kLocal);
  EXPECT_EQ(req.timeout_ms, 1500U);
  EXPECT_EQ(req.max_ids, 4U);
}

TEST_F(DeviceTest, BrwSendsTheRequestAndDecodesRttAndRdma) {
  kernel_->on_brw = [](o2lnd_ioc_brw& b) {
    b.rtt_ns = 123456;
    b.rdma = 1;
    return 0;
  };
  auto dev = attach_ok();
  BrwRequest req;
  req.nid = Nid(0x00050000c0a80102ULL);
  req.source = Nid(0x00050000c0a80101ULL);
  req.op = O2LND_BRW_READ;
  req.size = O2LND_BRW_MAX_SIZE;
  req.timeout = std::chrono::milliseconds(3000);
  req.check = true;
  req.seed = 99;
  auto r = dev.brw(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rtt, std::chrono::nanoseconds(123456));
  EXPECT_TRUE(r->rdma);
  auto sent = kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW);
  EXPECT_EQ(sent.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_brw));
  EXPECT_EQ(sent.nid, 0x00050000c0a80102ULL);
  EXPECT_EQ(sent.src_nid, 0x00050000c0a80101ULL);
  EXPECT_EQ(sent.op, static_cast<std::uint32_t>(O2LND_BRW_READ));
  EXPECT_EQ(sent.size, static_cast<std::uint32_t>(O2LND_BRW_MAX_SIZE));
  EXPECT_EQ(sent.timeout_ms, 3000U);
  EXPECT_EQ(sent.flags, static_cast<std::uint32_t>(O2LND_BRW_F_CHECK));
  EXPECT_EQ(sent.seed, 99U);
  EXPECT_EQ(sent.rtt_ns, 0U);
  EXPECT_EQ(sent.rdma, 0U);
  EXPECT_EQ(sent.pad, 0U);

  kernel_->on_brw = [](o2lnd_ioc_brw&) { return EBADMSG; };
  r = dev.brw(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EBADMSG);
  EXPECT_EQ(r.error().message, "failed to brw read 192.168.1.2@o2ib0: Bad message");
}

TEST_F(DeviceTest, BrwChecksItsArgumentsWithoutCallingTheModule) {
  auto dev = attach_ok();
  auto calls = kernel_->count(O2LND_IOC_BRW);
  BrwRequest good;
  good.nid = Nid(0x00050000c0a80102ULL);
  for (auto bad : {[&] {
                     auto r = good;
                     r.op = 0;
                     return r;
                   }(),
                   [&] {
                     auto r = good;
                     r.op = 3;
                     return r;
                   }(),
                   [&] {
                     auto r = good;
                     r.size = O2LND_BRW_MAX_SIZE + 1;
                     return r;
                   }(),
                   [&] {
                     auto r = good;
                     r.timeout = std::chrono::milliseconds(O2LND_PING_TIMEOUT_MAX_MS + 1);
                     return r;
                   }(),
                   [&] {
                     auto r = good;
                     r.nid = Nid::any();
                     return r;
                   }(),
                   [&] {
                     auto r = good;
                     r.nid = Nid::loopback();
                     return r;
                   }()}) {
    auto r = dev.brw(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().errnum, EINVAL) << r.error().message;
  }
  EXPECT_EQ(kernel_->count(O2LND_IOC_BRW), calls);
}

TEST_F(DeviceTest, PingDecodesPidIdsAndRtt) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 2); };
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->pid, 12345U);
  EXPECT_EQ(r->n_ids, 2U);
  ASSERT_EQ(r->ids.size(), 2U);
  EXPECT_EQ(r->ids[0], (PingId{Nid::loopback(), O2LND_NI_STATUS_UP}));
  EXPECT_EQ(r->ids[1].nid, Nid(kPeer));
  EXPECT_EQ(r->rtt, std::chrono::nanoseconds(123456));
  EXPECT_FALSE(r->truncated());
}

TEST_F(DeviceTest, PingWithMoreIdsThanMaxReturnsMaxAndSaysTruncated) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 40); };
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->n_ids, 40U);
  EXPECT_EQ(r->ids.size(), static_cast<std::size_t>(O2LND_PING_MAX_IDS));
  EXPECT_TRUE(r->truncated());
}

TEST_F(DeviceTest, PingReadsOnlyAsManyIdsAsItAskedFor) {
  // A module that ignores max_ids and overwrites it must not make us read
  // entries we did not ask for.
  kernel_->on_ping = [](o2lnd_ioc_ping& p) {
    p.max_ids = O2LND_PING_MAX_IDS;
    return reply_with(p, 5);
  };
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer), milliseconds(0), std::nullopt, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ids.size(), 2U);
  EXPECT_TRUE(r->truncated());
}

TEST_F(DeviceTest, PingWithNoIdsIsAnEmptyList) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 0); };
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ids.empty());
}

TEST_F(DeviceTest, PingFailureCarriesTheModulesErrno) {
  kernel_->on_ping = [](o2lnd_ioc_ping&) { return ETIMEDOUT; };
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, ETIMEDOUT);
  EXPECT_EQ(r.error().message, "failed to ping 192.168.1.2@o2ib0: Connection timed out");
}

TEST_F(DeviceTest, PingRefusesTimeoutAboveMaxWithoutAskingTheModule) {
  auto dev = attach_ok();
  auto r = dev.ping(Nid(kPeer), milliseconds(O2LND_PING_TIMEOUT_MAX_MS + 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_EQ(kernel_->calls.size(), 1U);
}

TEST_F(DeviceTest, PingAcceptsTimeoutAtMax) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) { return reply_with(p, 1); };
  auto dev = attach_ok();
  EXPECT_TRUE(dev.ping(Nid(kPeer), milliseconds(O2LND_PING_TIMEOUT_MAX_MS)).ok());
}

TEST_F(DeviceTest, PingRefusesNegativeTimeout) {
  auto dev = attach_ok();
  EXPECT_EQ(dev.ping(Nid(kPeer), milliseconds(-1)).error().errnum, EINVAL);
}

TEST_F(DeviceTest, PingRefusesMaxIdsZeroAndAboveLimit) {
  auto dev = attach_ok();
  EXPECT_EQ(dev.ping(Nid(kPeer), milliseconds(0), std::nullopt, 0).error().errnum, EINVAL);
  EXPECT_EQ(
      dev.ping(Nid(kPeer), milliseconds(0), std::nullopt, O2LND_PING_MAX_IDS + 1).error().errnum,
      EINVAL);
  EXPECT_EQ(kernel_->calls.size(), 1U);
}

TEST_F(DeviceTest, PingRefusesNidAny) {
  auto dev = attach_ok();
  EXPECT_EQ(dev.ping(Nid::any()).error().errnum, EINVAL);
}

// ---- net show ------------------------------------------------------------------

TEST_F(DeviceTest, NetsReadsEveryNiAndStopsAtEnoent) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0", "rxe0"),
                  make_ni(kLocal + 0x100000000ULL, "o2ib1", "eth1", "rxe1")};
  kernel_->nis[1].peer_credits = 8;
  kernel_->nis[1].send_count = 42;
  kernel_->nis[1].error_count = 0x100000007ULL;  // the last field of the struct
  kernel_->nis[1].incarnation = 1700000000123456789ULL;
  auto dev = attach_ok();
  auto nis = dev.nets();
  ASSERT_TRUE(nis.ok()) << nis.error().message;
  ASSERT_EQ(nis->size(), 3U);
  EXPECT_EQ((*nis)[0].nid, Nid::loopback());
  EXPECT_EQ((*nis)[0].net, "lo");
  EXPECT_EQ((*nis)[0].ifname, "");
  EXPECT_EQ((*nis)[1].index, 1U);
  EXPECT_EQ((*nis)[1].count, 3U);
  EXPECT_EQ((*nis)[1].nid.str(), "192.168.1.1@o2ib0");
  EXPECT_EQ((*nis)[1].ifname, "eth0");
  EXPECT_EQ((*nis)[1].devname, "rxe0");
  EXPECT_EQ((*nis)[1].peer_credits, 8U);
  EXPECT_EQ((*nis)[1].send_count, 42U);
  EXPECT_EQ((*nis)[1].error_count, 0x100000007ULL);
  EXPECT_EQ((*nis)[1].incarnation, 1700000000123456789ULL);
  EXPECT_TRUE((*nis)[1].up());
  EXPECT_EQ((*nis)[2].net, "o2ib1");
  // VERSION, then NET_SHOW 0, 1, 2 and 3 (ENOENT).
  ASSERT_EQ(kernel_->calls.size(), 5U);
  for (std::uint32_t i = 0; i < 4; ++i) {
    o2lnd_ioc_net req{};
    std::memcpy(&req, kernel_->calls[1 + i].bytes.data(), sizeof(req));
    EXPECT_EQ(req.index, i);
  }
}

TEST_F(DeviceTest, NetsWithNoNiIsEmpty) {
  auto dev = attach_ok();
  auto nis = dev.nets();
  ASSERT_TRUE(nis.ok());
  EXPECT_TRUE(nis->empty());
}

TEST_F(DeviceTest, NetsPropagatesErrorsOtherThanEnoent) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  kernel_->net_err = EIO;
  kernel_->net_err_index = 1;
  auto dev = attach_ok();
  auto nis = dev.nets();
  ASSERT_FALSE(nis.ok());
  EXPECT_EQ(nis.error().errnum, EIO);
  EXPECT_EQ(nis.error().message, "O2LND_IOC_NET_SHOW of NI 1: Input/output error");
}

TEST_F(DeviceTest, NetsGivesUpOnAModuleThatNeverSaysEnoent) {
  kernel_->net_never_ends = true;
  auto dev = attach_ok();
  auto nis = dev.nets();
  ASSERT_FALSE(nis.ok());
  EXPECT_EQ(nis.error().errnum, EPROTO);
}

TEST_F(DeviceTest, NetPastTheEndIsEnoent) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", "")};
  auto dev = attach_ok();
  EXPECT_EQ(dev.net(1).error().errnum, ENOENT);
}

TEST(Decode, NetNamesWithoutNulAreCutAtTheField) {
  o2lnd_ioc_net n{};
  std::memset(n.net, 'n', sizeof(n.net));
  std::memset(n.ifname, 'i', sizeof(n.ifname));
  std::memset(n.devname, 'd', sizeof(n.devname));
  auto ni = decode(n);
  EXPECT_EQ(ni.net, std::string(O2LND_NAME_LEN, 'n'));
  EXPECT_EQ(ni.ifname, std::string(O2LND_NAME_LEN, 'i'));
  EXPECT_EQ(ni.devname, std::string(O2LND_NAME_LEN, 'd'));
}

TEST(Decode, StatusNames) {
  EXPECT_EQ(status_name(O2LND_NI_STATUS_UP), "up");
  EXPECT_EQ(status_name(O2LND_NI_STATUS_DOWN), "down");
  EXPECT_EQ(status_name(0), "unknown");
}

// ---- the real backend ---------------------------------------------------------

TEST(FdBackend, MissingDeviceSaysLoadTheModule) {
  auto dev = Device::open("/nonexistent-o2lnd-dir/o2lnd", "o2ctl");
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, ENOENT);
  EXPECT_EQ(dev.error().message,
            "cannot open /nonexistent-o2lnd-dir/o2lnd: No such file or directory (is the o2lnd "
            "module loaded?)");
}

TEST(FdBackend, ADeviceThatIsNotO2lndIsRefused) {
  auto dev = Device::open("/dev/null", "o2ctl");
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, ENOTTY);
  EXPECT_NE(dev.error().message.find("is /dev/null an o2lnd device?"), std::string::npos);
}

}  // namespace
}  // namespace o2lnd
