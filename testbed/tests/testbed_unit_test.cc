// Host-side unit tests of the test bed's pure parts: framing and the
// kernel report scanner.
#include <string>

#include <gtest/gtest.h>

#include "guest.h"
#include "protocol.h"

namespace {

using namespace o2tb;

TEST(Framing, RoundTripsSeveralFramesFedByteByByte) {
  std::string stream = proto::frame(proto::kRun, 7, "abc") + proto::frame(proto::kPing, 8, "");
  std::string buf;
  proto::Header h{};
  std::string payload;
  int got = 0;
  for (char c : stream) {
    buf += c;
    while (proto::parse_frame(buf, h, payload)) {
      if (got == 0) {
        EXPECT_EQ(h.type, proto::kRun);
        EXPECT_EQ(h.id, 7u);
        EXPECT_EQ(payload, "abc");
      } else {
        EXPECT_EQ(h.type, proto::kPing);
        EXPECT_EQ(h.id, 8u);
        EXPECT_EQ(payload, "");
      }
      got++;
    }
  }
  EXPECT_EQ(got, 2);
  EXPECT_TRUE(buf.empty());
}

TEST(Framing, ResyncsAfterGarbage) {
  std::string buf = "garbage\n" + proto::frame(proto::kPong, 3, "host 12");
  proto::Header h{};
  std::string payload;
  ASSERT_TRUE(proto::parse_frame(buf, h, payload));
  EXPECT_EQ(h.id, 3u);
  EXPECT_EQ(payload, "host 12");
}

TEST(Framing, RejectsOversizedLengthWithoutWaitingForIt) {
  std::string bad;
  proto::put_u32(bad, proto::kMagic);
  proto::put_u32(bad, proto::kRun);
  proto::put_u32(bad, 1);
  proto::put_u32(bad, proto::kMaxPayload + 1);
  std::string buf = bad + proto::frame(proto::kRun, 2, "x");
  proto::Header h{};
  std::string payload;
  ASSERT_TRUE(proto::parse_frame(buf, h, payload));
  EXPECT_EQ(h.id, 2u);
}

TEST(ScanReports, FindsKernelReportsAndIgnoresNoise) {
  const std::string log =
      "[    1.0] Linux version 6.1.0\r\n"
      "[    2.0] o2-init [0.1] start: g1\n"
      "[    3.0] WARNING: CPU: 0 PID: 1 at net/foo.c:12 bar+0x1/0x2\n"
      "[    4.0] BUG: KASAN: use-after-free in baz\n"
      "[    5.0] o2-testbed-mark: WARNING: in a label\n"
      "[    6.0] ============================================\n"
      "[    7.0] WARNING: possible circular locking dependency detected\n"
      "[    8.0] refcount_t: underflow; use-after-free.\n"
      "[    9.0] list_del corruption. prev->next should be ...\n"
      "[   10.0] general protection fault, probably for non-canonical address\n"
      "[   11.0] Kernel panic - not syncing: Fatal exception\n"
      "[   12.0] kmemleak: 2 new suspected memory leaks\n"
      "[   13.0] o2lnd: loading out-of-tree module taints kernel.\n";
  auto r = scan_reports(log);
  ASSERT_EQ(r.size(), 8u);
  EXPECT_NE(r[0].find("net/foo.c"), std::string::npos);
  EXPECT_EQ(r[0].back(), '2');  // "\r" stripped
  EXPECT_NE(r.back().find("kmemleak"), std::string::npos);
}

TEST(ScanReports, CleanBootHasNone) {
  EXPECT_TRUE(
      scan_reports("[0.0] Booting\n[0.1] rdma_rxe: loaded\n[0.2] infiniband rxe0: added veth0\n")
          .empty());
}

}  // namespace
