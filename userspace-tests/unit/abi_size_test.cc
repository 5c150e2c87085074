// ABI 6 (include/uapi/o2lnd.h): size-extensible structs, dispatch by
// command number, the accepted ABI range; on the fake kernel, which
// applies the module's rules, and through the library.
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2lnd/device.h"

namespace o2lnd {
namespace {

using testing::FakeBackend;
using testing::FakeKernel;
using testing::make_ni;

constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0

// `arg` in a buffer of `size` bytes (zero beyond it), hdr.size = size.
template <typename T>
std::vector<unsigned char> buffer(const T& arg, std::size_t size) {
  std::vector<unsigned char> b(std::max(size, sizeof(T)), 0);
  std::memcpy(b.data(), &arg, sizeof(T));
  auto s = static_cast<std::uint32_t>(size);
  std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &s, sizeof(s));
  return b;
}

std::uint32_t hdr_size(const std::vector<unsigned char>& b) {
  std::uint32_t s = 0;
  std::memcpy(&s, b.data() + offsetof(o2lnd_ioc_hdr, size), sizeof(s));
  return s;
}

class AbiSizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  }
  int call(unsigned long cmd, std::vector<unsigned char>& b) {
    return kernel_->ioctl(cmd, b.data());
  }
  Result<Device> attach() {
    return Device::attach(std::make_unique<FakeBackend>(kernel_), "o2ctl");
  }
  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
};

// ---- sizes ------------------------------------------------------------------

TEST_F(AbiSizeTest, OldSmallerStructIsAcceptedAndZeroExtended) {
  // An ABI 5 caller's VERSION (56 bytes) in a buffer whose next bytes it
  // does not own.
  auto b = buffer(make_arg<o2lnd_ioc_version>(), O2LND_IOC_VERSION_SIZE_VER0);
  b.resize(sizeof(o2lnd_ioc_version) + 8);
  std::fill(b.begin() + O2LND_IOC_VERSION_SIZE_VER0, b.end(), 0x5a);
  ASSERT_EQ(call(O2LND_IOC_VERSION, b), 0);
  const auto& seen = kernel_->calls.back().seen;
  ASSERT_EQ(seen.size(), sizeof(o2lnd_ioc_version));
  EXPECT_TRUE(std::all_of(seen.begin() + O2LND_IOC_VERSION_SIZE_VER0, seen.end(),
                          [](unsigned char x) { return x == 0; }))
      << "the fields an older struct lacks read as 0";
  EXPECT_EQ(hdr_size(b), O2LND_IOC_VERSION_SIZE_VER0);
  EXPECT_TRUE(std::all_of(b.begin() + O2LND_IOC_VERSION_SIZE_VER0, b.end(), [](unsigned char x) {
    return x == 0x5a;
  })) << "written past the caller's struct";
}

TEST_F(AbiSizeTest, LargerStructWithZeroTailIsAcceptedAndOnlyKnownBytesWritten) {
  auto n = make_arg<o2lnd_ioc_net>();
  n.index = 1;
  auto b = buffer(n, sizeof(n) + 64);
  ASSERT_EQ(call(O2LND_IOC_NET_SHOW, b), 0);
  EXPECT_EQ(hdr_size(b), sizeof(n)) << "hdr.size: the bytes the module filled";
  EXPECT_TRUE(std::all_of(b.begin() + sizeof(n), b.end(), [](unsigned char x) { return x == 0; }));
  o2lnd_ioc_net out{};
  std::memcpy(&out, b.data(), sizeof(out));
  EXPECT_EQ(out.nid, kLocal);
}

TEST_F(AbiSizeTest, LargerStructWithNonzeroTailIsE2big) {
  auto b = buffer(make_arg<o2lnd_ioc_net>(), sizeof(o2lnd_ioc_net) + 8);
  b.back() = 1;
  const auto before = b;
  EXPECT_EQ(call(O2LND_IOC_NET_SHOW, b), E2BIG);
  EXPECT_EQ(b, before);
}

TEST_F(AbiSizeTest, VersionIgnoresAnUnknownTail) {
  auto b = buffer(make_arg<o2lnd_ioc_version>(), sizeof(o2lnd_ioc_version) + 8);
  b.back() = 1;
  EXPECT_EQ(call(O2LND_IOC_VERSION, b), 0);
}

TEST_F(AbiSizeTest, SizeBelowTheFirstPublishedSizeIsEinval) {
  for (std::uint32_t size :
       {O2LND_IOC_NET_SIZE_VER0 - 8U, std::uint32_t{sizeof(o2lnd_ioc_hdr)}, 0U}) {
    auto b = buffer(make_arg<o2lnd_ioc_net>(), sizeof(o2lnd_ioc_net));
    std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &size, sizeof(size));
    EXPECT_EQ(call(O2LND_IOC_NET_SHOW, b), EINVAL) << size;
  }
  auto v = buffer(make_arg<o2lnd_ioc_version>(), O2LND_IOC_VERSION_SIZE_VER0 - 8);
  EXPECT_EQ(call(O2LND_IOC_VERSION, v), EINVAL);
}

TEST_F(AbiSizeTest, SizeNotAMultipleOf8IsEinvalAndAbsurdSizeIsE2big) {
  auto b = buffer(make_arg<o2lnd_ioc_net>(), sizeof(o2lnd_ioc_net) + 1);
  EXPECT_EQ(call(O2LND_IOC_NET_SHOW, b), EINVAL);
  auto big = buffer(make_arg<o2lnd_ioc_net>(), O2LND_IOC_MAX_SIZE + 8);
  EXPECT_EQ(call(O2LND_IOC_NET_SHOW, big), E2BIG);
}

// ---- commands and versions --------------------------------------------------------

TEST_F(AbiSizeTest, UnknownNumberIsEnotty) {
  auto b = buffer(make_arg<o2lnd_ioc_version>(), sizeof(o2lnd_ioc_version));
  for (unsigned nr : {0U, 17U, 0xffU}) {
    EXPECT_EQ(call(_IOC(_IOC_READ | _IOC_WRITE, O2LND_IOC_MAGIC, nr, b.size()), b), ENOTTY) << nr;
  }
  EXPECT_EQ(call(_IOWR(O2LND_IOC_MAGIC + 1, 1, o2lnd_ioc_version), b), ENOTTY);
}

TEST_F(AbiSizeTest, CommandIsMatchedByNumberWhateverItsEncodedSize) {
  auto b = buffer(make_arg<o2lnd_ioc_version>(), sizeof(o2lnd_ioc_version));
  EXPECT_EQ(call(_IOC(_IOC_READ | _IOC_WRITE, O2LND_IOC_MAGIC, 1, O2LND_IOC_VERSION_SIZE_VER0), b),
            0);
  EXPECT_EQ(call(_IO(O2LND_IOC_MAGIC, 1), b), 0);
}

TEST_F(AbiSizeTest, VersionOutOfRangeIsEprotoAndInRangeIsServed) {
  for (std::uint32_t abi : {0U, O2LND_ABI_VERSION_MIN - 1U, O2LND_ABI_VERSION + 1U}) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.hdr.abi_version = abi;
    auto b = buffer(n, sizeof(n));
    EXPECT_EQ(call(O2LND_IOC_NET_SHOW, b), EPROTO) << abi;
  }
  for (std::uint32_t abi = O2LND_ABI_VERSION_MIN; abi <= O2LND_ABI_VERSION; ++abi) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.hdr.abi_version = abi;
    auto b = buffer(n, sizeof(n));
    EXPECT_EQ(call(O2LND_IOC_NET_SHOW, b), 0) << abi;
  }
}

// ---- the library ------------------------------------------------------------

TEST_F(AbiSizeTest, DeviceReadsTheModulesAbiRange) {
  auto dev = attach();
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  EXPECT_EQ(dev->module_info().abi_version, std::uint32_t{O2LND_ABI_VERSION});
  EXPECT_EQ(dev->module_info().abi_version_min, std::uint32_t{O2LND_ABI_VERSION_MIN});
}

TEST_F(AbiSizeTest, DeviceAcceptsANewerModuleThatStillAcceptsItsAbi) {
  kernel_->abi = O2LND_ABI_VERSION + 1;
  auto dev = attach();
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  auto nis = dev->nets();
  ASSERT_TRUE(nis.ok()) << nis.error().message;
  EXPECT_EQ(nis->size(), 2U);
}

TEST_F(AbiSizeTest, DeviceRefusesANewerModuleThatDroppedItsAbi) {
  kernel_->abi = O2LND_ABI_VERSION + 1;
  kernel_->abi_min = O2LND_ABI_VERSION + 1;
  auto dev = attach();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, EPROTO);
}

TEST_F(AbiSizeTest, DeviceAsksAnAbi5ModuleWithTheAbi5StructAndRefusesIt) {
  // An ABI 5 module takes only a 56-byte VERSION and accepts only ABI 5.
  kernel_->abi = 5;
  kernel_->abi_min = 5;
  kernel_->abi5_version = true;
  auto dev = attach();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.error().errnum, EPROTO);
  EXPECT_EQ(dev.error().message, "o2lnd module ABI 5, o2ctl speaks ABI " +
                                     std::to_string(O2LND_ABI_VERSION) +
                                     ": upgrade o2ctl or load a matching module");
  ASSERT_EQ(kernel_->count(O2LND_IOC_VERSION), 2U);
  EXPECT_EQ(kernel_->calls[1].hdr.size, O2LND_IOC_VERSION_SIZE_VER0) << "asked again the ABI 5 way";
}

TEST(AbiDecode, AnAbi5VersionReplyHasNoMinimumButItsOwnAbi) {
  auto v = make_arg<o2lnd_ioc_version>();
  v.hdr.size = O2LND_IOC_VERSION_SIZE_VER0;
  v.abi_version = 5;
  v.abi_version_min = 99;  // not part of a 56-byte reply
  auto info = decode(v);
  EXPECT_EQ(info.abi_version_min, 5U);
  EXPECT_TRUE(info.accepts(5));
  EXPECT_FALSE(info.accepts(6));
}

}  // namespace
}  // namespace o2lnd
