// What the guest ABI tests share: raw ioctls on /dev/o2lnd, the header rules
// every command obeys, bad pointers, and readable errnos.
#pragma once

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

#include "guest_env.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/uapi.h"

namespace o2lnd::guest {

inline constexpr unsigned char kPattern = 0xa5;
// TEST-NET-1: never a real peer; used where a call must be refused before
// any traffic (and returns quickly even if it is not).
inline constexpr std::uint64_t kNowhere = 0x00050000c0000201ULL;  // 192.0.2.1@o2ib0
inline constexpr std::uint64_t kTcpNid = 0x00020000c0a80102ULL;   // 192.168.1.2@tcp0

inline std::string errno_name(int err) {
  if (err == 0) {
    return "success";
  }
  const char* name = ::strerrordesc_np(err);
  const char* sym = ::strerrorname_np(err);
  return std::string(sym != nullptr ? sym : "?") + " (" + (name != nullptr ? name : "?") + ")";
}

inline std::string cmd_name(unsigned long cmd) {
  switch (cmd) {
    case O2LND_IOC_VERSION:
      return "VERSION";
    case O2LND_IOC_PING:
      return "PING";
    case O2LND_IOC_NET_SHOW:
      return "NET_SHOW";
    case O2LND_IOC_PEER_SHOW:
      return "PEER_SHOW";
    case O2LND_IOC_CONN_SHOW:
      return "CONN_SHOW";
    case O2LND_IOC_PEER_CLOSE:
      return "PEER_CLOSE";
    case O2LND_IOC_FAULT_ADD:
      return "FAULT_ADD";
    case O2LND_IOC_FAULT_DEL:
      return "FAULT_DEL";
    case O2LND_IOC_FAULT_LIST:
      return "FAULT_LIST";
    case O2LND_IOC_BRW:
      return "BRW";
    case O2LND_IOC_ROUTE_SHOW:
      return "ROUTE_SHOW";
    case O2LND_IOC_ROUTING_SHOW:
      return "ROUTING_SHOW";
    case O2LND_IOC_LPEER_SHOW:
      return "LPEER_SHOW";
    case O2LND_IOC_DISCOVER:
      return "DISCOVER";
    default:
      return "cmd " + std::to_string(cmd);
  }
}

template <typename T>
bool all_bytes(const T& obj, std::size_t from, std::size_t to, unsigned char value) {
  const auto* p = reinterpret_cast<const unsigned char*>(&obj);  // NOLINT(*-reinterpret-cast)
  return std::all_of(p + from, p + to, [value](unsigned char b) { return b == value; });  // NOLINT
}

// A NUL-terminated field with nothing but NULs after the terminator.
template <std::size_t N>
::testing::AssertionResult clean_string(const char (&s)[N]) {  // NOLINT(*-avoid-c-arrays)
  std::size_t len = ::strnlen(s, N);
  if (len == N) {
    return ::testing::AssertionFailure() << "not NUL-terminated";
  }
  for (std::size_t i = len; i < N; ++i) {
    if (s[i] != '\0') {  // NOLINT(*-constant-array-index)
      return ::testing::AssertionFailure()
             << "byte " << i << " after the NUL is " << int{static_cast<unsigned char>(s[i])};
    }
  }
  return ::testing::AssertionSuccess();
}

class AbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = ::open(settings().device.c_str(), O_RDWR | O_CLOEXEC);  // NOLINT(*-vararg)
    ASSERT_GE(fd_, 0) << "cannot open " << settings().device << ": " << errno_name(errno)
                      << " (is o2lnd loaded?)";
  }
  void TearDown() override {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }

  // ioctl(); 0 or the errno.
  int call(unsigned long cmd, void* arg) const {
    return ::ioctl(fd_, cmd, arg) == 0 ? 0 : errno;  // NOLINT(*-vararg)
  }

  // Expects `arg` refused with `want`, and the user buffer left as it was.
  template <typename T>
  void expect_refused(unsigned long cmd, T arg, int want, const std::string& what) {
    std::array<unsigned char, sizeof(T)> before{};
    std::memcpy(before.data(), &arg, sizeof(T));
    int rc = call(cmd, &arg);
    EXPECT_EQ(rc, want) << cmd_name(cmd) << " with " << what << ": expected " << errno_name(want)
                        << ", got " << errno_name(rc);
    EXPECT_EQ(std::memcmp(before.data(), &arg, sizeof(T)), 0)
        << cmd_name(cmd) << " with " << what << ": a refused call changed the user buffer";
  }

  // Header rules shared by every command but VERSION (which has its own):
  // an ABI outside [O2LND_ABI_VERSION_MIN, O2LND_ABI_VERSION] is EPROTO
  // (abi_v6_test.cc: those inside are served); a size below the first
  // published one or not a multiple of 8 is EINVAL.
  template <typename T>
  void check_header_rules(unsigned long cmd, const T& valid) {
    for (std::uint32_t abi :
         {0U, O2LND_ABI_VERSION_MIN - 1U, O2LND_ABI_VERSION + 1U, 0xffffffffU}) {
      T a = valid;
      a.hdr.abi_version = abi;
      expect_refused(cmd, a, EPROTO, "abi_version " + std::to_string(abi));
    }
    for (std::uint32_t size : {std::uint32_t{sizeof(T) - 1}, std::uint32_t{sizeof(T) + 1},
                               std::uint32_t{0}, std::uint32_t{sizeof(o2lnd_ioc_hdr)}}) {
      T a = valid;
      a.hdr.size = size;
      expect_refused(cmd, a, EINVAL, "size " + std::to_string(size));
    }
    for (std::uint32_t flags : {1U, 0x80000000U}) {
      T a = valid;
      a.hdr.flags = flags;
      expect_refused(cmd, a, EINVAL, "flags " + std::to_string(flags));
      a = valid;
      a.hdr.reserved = flags;
      expect_refused(cmd, a, EINVAL, "reserved " + std::to_string(flags));
    }
  }

  // NULL, unmapped, half-mapped and (when `check_readonly`) read-only
  // arguments are EFAULT.
  template <typename T>
  void check_bad_pointers(unsigned long cmd, const T& valid, bool check_readonly) {
    EXPECT_EQ(call(cmd, nullptr), EFAULT) << cmd_name(cmd) << " with NULL";

    long page = ::sysconf(_SC_PAGESIZE);
    auto len = static_cast<std::size_t>(2 * page);
    void* map = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    auto* base = static_cast<unsigned char*>(map);
    unsigned char* second = base + page;  // NOLINT(*-pointer-arithmetic)
    ASSERT_EQ(::mprotect(second, static_cast<std::size_t>(page), PROT_NONE), 0);

    // Entirely in an inaccessible page.
    EXPECT_EQ(call(cmd, second), EFAULT) << cmd_name(cmd) << " with an unmapped pointer";
    // The header readable, the rest not.
    unsigned char* straddle = second - sizeof(o2lnd_ioc_hdr);  // NOLINT(*-pointer-arithmetic)
    std::memcpy(straddle, &valid, sizeof(o2lnd_ioc_hdr));
    EXPECT_EQ(call(cmd, straddle), EFAULT)
        << cmd_name(cmd) << " with only the header in mapped memory";
    if (check_readonly) {
      std::memcpy(base, &valid, sizeof(T));
      ASSERT_EQ(::mprotect(base, static_cast<std::size_t>(page), PROT_READ), 0);
      EXPECT_EQ(call(cmd, base), EFAULT) << cmd_name(cmd) << " with a read-only argument";
    }
    ::munmap(map, len);
  }

  [[nodiscard]] std::uint32_t net_count() const {
    auto a = make_arg<o2lnd_ioc_net>();
    a.index = 0;
    int rc = call(O2LND_IOC_NET_SHOW, &a);
    return rc == 0 ? a.count : 0;
  }

  int fd_ = -1;
};

}  // namespace o2lnd::guest
