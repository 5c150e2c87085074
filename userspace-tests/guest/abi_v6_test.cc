// ABI 6: size-extensible structs (copy_struct_from_user()), dispatch by
// command number, and the accepted ABI range
// [O2LND_ABI_VERSION_MIN, O2LND_ABI_VERSION] (include/uapi/o2lnd.h).
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

namespace o2lnd::guest {
namespace {

constexpr unsigned char kTail = 0x5a;

// A buffer of `size` bytes holding `arg` (the rest zero), hdr.size = size.
template <typename T>
std::vector<unsigned char> buffer(const T& arg, std::size_t size) {
  std::vector<unsigned char> b(std::max(size, sizeof(T)), 0);
  std::memcpy(b.data(), &arg, sizeof(T));
  auto s = static_cast<std::uint32_t>(size);
  std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &s, sizeof(s));
  return b;
}

std::uint32_t reply_size(const std::vector<unsigned char>& b) {
  std::uint32_t s = 0;
  std::memcpy(&s, b.data() + offsetof(o2lnd_ioc_hdr, size), sizeof(s));
  return s;
}

class AbiV6Test : public AbiTest {
 protected:
  // Expects the call refused with `want` and the buffer unchanged.
  void expect_refused_buf(unsigned long cmd, std::vector<unsigned char> b, int want,
                          const std::string& what) {
    const auto before = b;
    int rc = call(cmd, b.data());
    EXPECT_EQ(rc, want) << cmd_name(cmd) << " with " << what << ": expected " << errno_name(want)
                        << ", got " << errno_name(rc);
    EXPECT_EQ(b, before) << cmd_name(cmd) << " with " << what
                         << ": a refused call changed the user buffer";
  }

  struct Cmd {
    unsigned long cmd;
    std::vector<unsigned char> valid;  // a valid argument of the kernel's size
    std::uint32_t ver0;
    bool admin;
  };
  // A valid argument for every command (none of them acts on a real peer).
  static std::vector<Cmd> commands() {
    auto ping = make_arg<o2lnd_ioc_ping>();
    ping.nid = kNowhere;
    ping.src_nid = O2LND_NID_ANY;
    ping.max_ids = 1;
    ping.timeout_ms = 1;
    auto brw = make_arg<o2lnd_ioc_brw>();
    brw.nid = kNowhere;
    brw.src_nid = O2LND_NID_ANY;
    brw.op = O2LND_BRW_WRITE;
    brw.timeout_ms = 1;
    auto peer = make_arg<o2lnd_ioc_peer>();
    peer.ni_index = 1;
    auto conn = make_arg<o2lnd_ioc_conn>();
    conn.ni_index = 1;
    auto close = make_arg<o2lnd_ioc_peer_close>();
    close.nid = kNowhere;
    close.local_nid = O2LND_NID_ANY;
    auto list = make_arg<o2lnd_ioc_fault>();
    list.index = 0xffffffffU;
    auto del = make_arg<o2lnd_ioc_fault>();
    del.id = 0xffffffffU;
    auto v = make_arg<o2lnd_ioc_version>();
    return {
        {O2LND_IOC_VERSION, buffer(v, sizeof(v)), O2LND_IOC_VERSION_SIZE_VER0, false},
        {O2LND_IOC_PING, buffer(ping, sizeof(ping)), O2LND_IOC_PING_SIZE_VER0, false},
        {O2LND_IOC_BRW, buffer(brw, sizeof(brw)), O2LND_IOC_BRW_SIZE_VER0, false},
        {O2LND_IOC_NET_SHOW, buffer(make_arg<o2lnd_ioc_net>(), sizeof(o2lnd_ioc_net)),
         O2LND_IOC_NET_SIZE_VER0, false},
        {O2LND_IOC_PEER_SHOW, buffer(peer, sizeof(peer)), O2LND_IOC_PEER_SIZE_VER0, false},
        {O2LND_IOC_CONN_SHOW, buffer(conn, sizeof(conn)), O2LND_IOC_CONN_SIZE_VER0, false},
        {O2LND_IOC_ROUTE_SHOW, buffer(make_arg<o2lnd_ioc_route>(), sizeof(o2lnd_ioc_route)),
         O2LND_IOC_ROUTE_SIZE_VER0, false},
        {O2LND_IOC_ROUTING_SHOW, buffer(make_arg<o2lnd_ioc_routing>(), sizeof(o2lnd_ioc_routing)),
         O2LND_IOC_ROUTING_SIZE_VER0, false},
        {O2LND_IOC_PEER_CLOSE, buffer(close, sizeof(close)), O2LND_IOC_PEER_CLOSE_SIZE_VER0, true},
        {O2LND_IOC_FAULT_DEL, buffer(del, sizeof(del)), O2LND_IOC_FAULT_SIZE_VER0, true},
        {O2LND_IOC_FAULT_LIST, buffer(list, sizeof(list)), O2LND_IOC_FAULT_SIZE_VER0, true},
    };
  }
  static bool can(const Cmd& c) { return !c.admin || ::geteuid() == 0; }
};

// ---- versions ---------------------------------------------------------------

TEST_F(AbiV6Test, VersionReportsTheAcceptedAbiRange) {
  auto a = make_arg<o2lnd_ioc_version>();
  ASSERT_EQ(call(O2LND_IOC_VERSION, &a), 0) << errno_name(errno);
  EXPECT_EQ(a.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(a.abi_version_min, static_cast<std::uint32_t>(O2LND_ABI_VERSION_MIN));
  EXPECT_EQ(a.pad2, 0U);
  EXPECT_EQ(a.hdr.size, sizeof(a));
}

TEST_F(AbiV6Test, AbiOutOfRangeIsEproto) {
  for (const auto& c : commands()) {
    if (c.cmd == O2LND_IOC_VERSION || !can(c)) {
      continue;
    }
    for (std::uint32_t abi :
         {0U, O2LND_ABI_VERSION_MIN - 1U, O2LND_ABI_VERSION + 1U, 0xffffffffU}) {
      auto b = c.valid;
      std::memcpy(b.data(), &abi, sizeof(abi));
      expect_refused_buf(c.cmd, b, EPROTO, "abi_version " + std::to_string(abi));
    }
  }
}

TEST_F(AbiV6Test, EveryAbiInTheRangeIsServed) {
  for (std::uint32_t abi = O2LND_ABI_VERSION_MIN; abi <= O2LND_ABI_VERSION; ++abi) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.hdr.abi_version = abi;
    EXPECT_EQ(call(O2LND_IOC_NET_SHOW, &n), 0) << "abi " << abi << ": " << errno_name(errno);
    EXPECT_EQ(n.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
    auto r = make_arg<o2lnd_ioc_routing>();
    r.hdr.abi_version = abi;
    EXPECT_EQ(call(O2LND_IOC_ROUTING_SHOW, &r), 0) << "abi " << abi << ": " << errno_name(errno);
  }
}

// ---- sizes ------------------------------------------------------------------

TEST_F(AbiV6Test, OldSmallerStructIsAcceptedZeroExtendedAndNotWrittenPast) {
  // An ABI 5 caller's VERSION: 56 bytes, followed by bytes it does not own.
  auto v = make_arg<o2lnd_ioc_version>();
  v.hdr.abi_version = O2LND_ABI_VERSION_MIN;
  auto b = buffer(v, O2LND_IOC_VERSION_SIZE_VER0);
  b.resize(sizeof(v));
  std::memset(b.data() + O2LND_IOC_VERSION_SIZE_VER0, kTail,
              sizeof(v) - O2LND_IOC_VERSION_SIZE_VER0);
  ASSERT_EQ(call(O2LND_IOC_VERSION, b.data()), 0) << errno_name(errno);
  o2lnd_ioc_version out{};
  std::memcpy(&out, b.data(), O2LND_IOC_VERSION_SIZE_VER0);
  EXPECT_EQ(out.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(reply_size(b), O2LND_IOC_VERSION_SIZE_VER0) << "hdr.size: the bytes written back";
  EXPECT_TRUE(std::all_of(b.begin() + O2LND_IOC_VERSION_SIZE_VER0, b.end(), [](unsigned char x) {
    return x == kTail;
  })) << "the module wrote past the caller's (older, smaller) struct";
}

TEST_F(AbiV6Test, LargerStructWithZeroTailIsAcceptedAndTailLeftAlone) {
  for (const auto& c : commands()) {
    if (!can(c) || (c.cmd != O2LND_IOC_VERSION && c.cmd != O2LND_IOC_NET_SHOW &&
                    c.cmd != O2LND_IOC_ROUTING_SHOW)) {
      continue;
    }
    const std::size_t ksize = c.valid.size();
    auto b = c.valid;
    b.resize(ksize + 64, 0);
    auto s = static_cast<std::uint32_t>(b.size());
    std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &s, sizeof(s));
    ASSERT_EQ(call(c.cmd, b.data()), 0) << cmd_name(c.cmd) << ": " << errno_name(errno);
    EXPECT_EQ(reply_size(b), ksize) << cmd_name(c.cmd) << ": hdr.size is what was filled";
    for (std::size_t i = ksize; i < b.size(); ++i) {
      ASSERT_EQ(b[i], 0) << cmd_name(c.cmd) << ": the module wrote byte " << i
                         << " of the caller's newer struct";
    }
  }
}

TEST_F(AbiV6Test, LargerStructWithNonzeroTailIsE2big) {
  for (const auto& c : commands()) {
    if (!can(c) || c.cmd == O2LND_IOC_VERSION) {
      continue;
    }
    for (std::size_t extra : {8U, 64U}) {
      const std::size_t size = c.valid.size() + extra;
      std::vector<unsigned char> b(size, 0);
      std::copy(c.valid.begin(), c.valid.end(), b.begin());
      b.at(size - 1) = 1;  // a field this module does not know, set
      auto s = static_cast<std::uint32_t>(size);
      std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &s, sizeof(s));
      expect_refused_buf(c.cmd, b, E2BIG, "a nonzero unknown tail of " + std::to_string(extra));
    }
  }
}

TEST_F(AbiV6Test, VersionIgnoresAnUnknownTail) {
  auto b = buffer(make_arg<o2lnd_ioc_version>(), sizeof(o2lnd_ioc_version) + 8);
  b.back() = 1;
  EXPECT_EQ(call(O2LND_IOC_VERSION, b.data()), 0) << errno_name(errno);
  EXPECT_EQ(b.back(), 1);
}

TEST_F(AbiV6Test, SizeBelowTheFirstPublishedSizeIsEinval) {
  for (const auto& c : commands()) {
    if (!can(c)) {
      continue;
    }
    for (std::uint32_t size :
         {c.ver0 - 8U, c.ver0 - 1U, std::uint32_t{sizeof(o2lnd_ioc_hdr)}, 0U}) {
      auto b = c.valid;
      std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &size, sizeof(size));
      expect_refused_buf(c.cmd, b, EINVAL, "size " + std::to_string(size));
    }
  }
}

TEST_F(AbiV6Test, SizeNotAMultipleOf8IsEinval) {
  for (const auto& c : commands()) {
    if (!can(c)) {
      continue;
    }
    auto b = c.valid;
    b.resize(b.size() + 8, 0);
    auto size = static_cast<std::uint32_t>(c.valid.size() + 4);
    std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &size, sizeof(size));
    expect_refused_buf(c.cmd, b, EINVAL, "size " + std::to_string(size));
  }
}

TEST_F(AbiV6Test, AbsurdSizeIsE2big) {
  for (const auto& c : commands()) {
    if (!can(c)) {
      continue;
    }
    auto b = c.valid;
    b.resize(O2LND_IOC_MAX_SIZE + 8, 0);
    for (std::uint32_t size : {std::uint32_t{O2LND_IOC_MAX_SIZE + 8}, 0xfffffff8U}) {
      std::memcpy(b.data() + offsetof(o2lnd_ioc_hdr, size), &size, sizeof(size));
      expect_refused_buf(c.cmd, b, E2BIG, "size " + std::to_string(size));
    }
  }
}

// ---- commands ----------------------------------------------------------------

TEST_F(AbiV6Test, UnknownNumberIsEnotty) {
  auto b = buffer(make_arg<o2lnd_ioc_version>(), sizeof(o2lnd_ioc_version));
  for (unsigned nr : {0U, 17U, 18U, 0x7fU, 0xffU}) {
    for (unsigned long cmd :
         {static_cast<unsigned long>(_IOC(_IOC_READ | _IOC_WRITE, O2LND_IOC_MAGIC, nr, b.size())),
          static_cast<unsigned long>(_IOC(_IOC_NONE, O2LND_IOC_MAGIC, nr, 0))}) {
      expect_refused_buf(cmd, b, ENOTTY, "nr " + std::to_string(nr));
    }
  }
  expect_refused_buf(_IOWR(O2LND_IOC_MAGIC + 1, 1, o2lnd_ioc_version), b, ENOTTY, "another magic");
}

TEST_F(AbiV6Test, CommandIsMatchedByNumberWhateverItsEncodedSizeAndDirection) {
  // An ABI 5 binary's O2LND_IOC_VERSION encodes 56 bytes; strace-less tools
  // may encode none.  hdr.size is what counts.
  for (unsigned long cmd : {static_cast<unsigned long>(_IOC(_IOC_READ | _IOC_WRITE, O2LND_IOC_MAGIC,
                                                            1, O2LND_IOC_VERSION_SIZE_VER0)),
                            static_cast<unsigned long>(_IOC(_IOC_NONE, O2LND_IOC_MAGIC, 1, 0)),
                            static_cast<unsigned long>(_IOC(_IOC_READ, O2LND_IOC_MAGIC, 1, 8))}) {
    auto a = make_arg<o2lnd_ioc_version>();
    EXPECT_EQ(call(cmd, &a), 0) << "cmd 0x" << std::hex << cmd << ": " << errno_name(errno);
    EXPECT_EQ(a.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  }
}

}  // namespace
}  // namespace o2lnd::guest
