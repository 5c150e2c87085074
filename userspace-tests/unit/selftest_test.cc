// o2ctl selftest: the statistics (exact percentiles, error classes), the
// worker pool on a scripted ping, the report's YAML through yaml-cpp, and the
// command line on the fake kernel.
#include "o2ctl/selftest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2ctl/cli.h"
#include "o2ctl_fixture.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/backend.h"
#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl::selftest {
namespace {

using o2lnd::Nid;
using std::chrono::milliseconds;

constexpr std::uint64_t kPeerA = 0x00050000c0a80102ULL;  // 192.168.1.2@o2ib0
constexpr std::uint64_t kPeerB = 0x00050000c0a80103ULL;  // 192.168.1.3@o2ib0
constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0

// ---- statistics ---------------------------------------------------------------

TEST(SelftestStats, PercentilesOfKnownSamples) {
  std::vector<std::uint64_t> hundred(100);
  std::iota(hundred.begin(), hundred.end(), 1);  // 1..100
  EXPECT_EQ(percentile(hundred, 50), 50U);
  EXPECT_EQ(percentile(hundred, 99), 99U);
  EXPECT_EQ(percentile(hundred, 100), 100U);
  EXPECT_EQ(percentile(hundred, 0), 1U);
  EXPECT_EQ(percentile(hundred, 99.5), 100U);
  EXPECT_EQ(summarize(hundred), (Summary{1, 50, 99, 100}));

  // Unsorted, with duplicates: summarize() sorts.
  EXPECT_EQ(summarize({30, 10, 20, 10, 1000}), (Summary{10, 20, 1000, 1000}));
  EXPECT_EQ(summarize({7}), (Summary{7, 7, 7, 7}));
  EXPECT_EQ(summarize({2, 1}), (Summary{1, 1, 2, 2}));

  // 1000 samples: p99 is the 990th smallest.
  std::vector<std::uint64_t> thousand(1000);
  std::iota(thousand.rbegin(), thousand.rend(), 1);  // 1000..1
  EXPECT_EQ(summarize(thousand), (Summary{1, 500, 990, 1000}));
}

TEST(SelftestStats, EmptySamplesReportZero) {
  EXPECT_EQ(percentile({}, 50), 0U);
  EXPECT_EQ(summarize({}), (Summary{0, 0, 0, 0}));
}

TEST(SelftestStats, ErrnoClassification) {
  EXPECT_EQ(classify(ETIMEDOUT), ErrorClass::kExpired);
  for (int e : {ENOBUFS, ENOMEM, ECONNABORTED, ECONNRESET, EIO, ECANCELED, ESHUTDOWN, EAGAIN}) {
    EXPECT_EQ(classify(e), ErrorClass::kDropped) << std::strerror(e);
  }
  for (int e : {ECONNREFUSED, EHOSTUNREACH, ENETUNREACH}) {
    EXPECT_EQ(classify(e), ErrorClass::kRefused) << std::strerror(e);
  }
  for (int e : {EPROTO, EINVAL, ENOENT, 0, 9999}) {
    EXPECT_EQ(classify(e), ErrorClass::kOther) << e;
  }
  EXPECT_EQ(class_name(ErrorClass::kExpired), "expired");
  EXPECT_EQ(class_name(ErrorClass::kDropped), "dropped");
  EXPECT_EQ(class_name(ErrorClass::kRefused), "refused");
  EXPECT_EQ(class_name(ErrorClass::kOther), "other");

  ErrorCounts c;
  for (int e : {ETIMEDOUT, ETIMEDOUT, ENOBUFS, ECONNREFUSED, EPROTO}) {
    c.add(e);
  }
  EXPECT_EQ(c, (ErrorCounts{5, 2, 1, 1, 1}));
  c.merge(c);
  EXPECT_EQ(c, (ErrorCounts{10, 4, 2, 2, 2}));
}

TEST(SelftestStats, OnlyHopelessErrorsAreFatal) {
  for (int e : {EINVAL, EPERM, EACCES, ENOTTY}) {
    EXPECT_TRUE(fatal(e)) << std::strerror(e);
  }
  for (int e : {ETIMEDOUT, ENOBUFS, ECONNREFUSED, EHOSTUNREACH, EPROTO, ECONNABORTED}) {
    EXPECT_FALSE(fatal(e)) << std::strerror(e);
  }
}

// ---- the workers ------------------------------------------------------------------

PingConfig two_peers(std::uint32_t concurrency, std::optional<std::uint64_t> count) {
  PingConfig c;
  c.peers = {Nid(kPeerA), Nid(kPeerB)};
  c.concurrency = concurrency;
  c.count = count;
  return c;
}

TEST(SelftestRun, CountStopsAfterExactlyThatManyPingsRoundRobin) {
  std::mutex mu;
  std::map<std::uint64_t, int> per_peer;
  std::atomic<std::uint64_t> n{0};
  PingReport r = run_ping(two_peers(8, 1000), [&](Nid nid) {
    {
      std::lock_guard lock(mu);
      ++per_peer[nid.raw()];
    }
    // rtt 1..1000 us, each once
    return PingOutcome{0, std::chrono::microseconds(++n)};
  });
  EXPECT_EQ(r.rpcs, 1000U);
  EXPECT_EQ(r.ok, 1000U);
  EXPECT_EQ(r.errors, ErrorCounts{});
  EXPECT_EQ(per_peer[kPeerA], 500);
  EXPECT_EQ(per_peer[kPeerB], 500);
  EXPECT_EQ(r.latency_us, (Summary{1, 500, 990, 1000}));
  EXPECT_LE(r.wall_latency_us.min, r.wall_latency_us.max);
  EXPECT_GT(r.elapsed_s, 0);
  EXPECT_NEAR(r.msg_per_s, 2 * r.rpc_per_s, 1e-6 * r.rpc_per_s) << "2 messages per ping";
  EXPECT_EQ(r.fatal_errnum, 0);
}

TEST(SelftestRun, DurationStopsTheWorkers) {
  PingConfig c = two_peers(4, std::nullopt);
  c.duration = milliseconds(200);
  auto t0 = std::chrono::steady_clock::now();
  PingReport r = run_ping(c, [](Nid) {
    std::this_thread::sleep_for(milliseconds(2));
    return PingOutcome{0, std::chrono::microseconds(2000)};
  });
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(r.elapsed_s, 0.2);
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_GT(r.rpcs, 4U);
  EXPECT_EQ(r.ok, r.rpcs);
  EXPECT_GE(r.wall_latency_us.min, 2000U) << "the wall time includes the 2 ms sleep";
}

TEST(SelftestRun, FailuresAreCountedByClassAndExcludedFromLatency) {
  std::atomic<int> n{0};
  PingReport r = run_ping(two_peers(3, 40), [&](Nid) {
    static constexpr int kErrs[] = {0, ETIMEDOUT, ENOBUFS, ECONNREFUSED, EPROTO};
    int i = n++ % 5;
    return PingOutcome{kErrs[i], kErrs[i] == 0 ? std::chrono::microseconds(10) : milliseconds(0)};
  });
  EXPECT_EQ(r.rpcs, 40U);
  EXPECT_EQ(r.ok, 8U);
  EXPECT_EQ(r.errors, (ErrorCounts{32, 8, 8, 8, 8}));
  EXPECT_EQ(r.latency_us, (Summary{10, 10, 10, 10}));
  EXPECT_NEAR(r.msg_per_s, 2 * 8 / r.elapsed_s, 1e-6 * r.msg_per_s);
}

TEST(SelftestRun, AFatalErrorStopsTheRunEarly) {
  PingConfig c = two_peers(8, std::nullopt);
  c.duration = milliseconds(60000);
  auto t0 = std::chrono::steady_clock::now();
  PingReport r = run_ping(c, [](Nid) { return PingOutcome{EINVAL, {}}; });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(r.fatal_errnum, EINVAL);
  EXPECT_TRUE(r.fatal_peer == Nid(kPeerA) || r.fatal_peer == Nid(kPeerB));
  EXPECT_GE(r.errors.other, 1U);
  EXPECT_LE(r.rpcs, 8U) << "each worker stops after at most one more ping";
  EXPECT_EQ(r.ok, 0U);
}

TEST(SelftestRun, ALocalNiDownIsNotAnRpcAndTheWorkersBackOff) {
  PingConfig c = two_peers(4, std::nullopt);
  c.duration = milliseconds(400);
  std::atomic<int> calls{0};
  PingReport r = run_ping(c, [&](Nid) {
    ++calls;
    return PingOutcome{ENETDOWN, {}};
  });
  EXPECT_EQ(r.rpcs, 0U) << "attempts that were never sent are not RPCs";
  EXPECT_EQ(r.errors.total, 0U);
  EXPECT_EQ(r.not_sent, static_cast<std::uint64_t>(calls.load()));
  // 1, 2, 4 ... 200 ms between tries: ~10 per worker in 0.4 s, where a
  // spinning worker makes tens of thousands
  EXPECT_LE(calls.load(), 4 * 14) << "the workers did not back off";
  EXPECT_GE(r.elapsed_s, 0.4);
  EXPECT_LT(r.elapsed_s, 1.5) << "a back-off never sleeps past the end of the run";
}

TEST(SelftestRun, TheBackOffEndsWithTheFirstRpcSentAgain) {
  PingConfig c = two_peers(1, std::nullopt);
  c.duration = milliseconds(300);
  std::atomic<int> calls{0};
  PingReport r = run_ping(c, [&](Nid) {
    // the NI is down for the first 6 attempts (63 ms of back-off), then up
    if (++calls <= 6) {
      return PingOutcome{ENETDOWN, {}};
    }
    std::this_thread::sleep_for(milliseconds(1));
    return PingOutcome{0, std::chrono::microseconds(1000)};
  });
  EXPECT_EQ(r.not_sent, 6U);
  EXPECT_GT(r.rpcs, 20U) << "back to full speed once the NI is up";
  EXPECT_EQ(r.ok, r.rpcs);
}

TEST(SelftestFormat, YamlHasTheSchemaAndTextHasEveryFigure) {
  PingReport r;
  r.config = two_peers(8, std::nullopt);
  r.config.source = Nid(kLocal);
  r.elapsed_s = 10.0004;
  r.rpcs = 1234;
  r.ok = 1230;
  r.rpc_per_s = 123.4;
  r.msg_per_s = 246.0;
  r.latency_us = {12, 34, 120, 560};
  r.wall_latency_us = {20, 40, 130, 600};
  r.errors = {4, 1, 1, 1, 1};
  std::string y = format_yaml(r);
  EXPECT_EQ(y,
            "selftest:\n"
            "    mode: ping\n"
            "    peers:\n"
            "        - 192.168.1.2@o2ib0\n"
            "        - 192.168.1.3@o2ib0\n"
            "    source: 192.168.1.1@o2ib0\n"
            "    concurrency: 8\n"
            "    duration_s: 10.000\n"
            "    timeout_ms: 0\n"
            "    rpcs: 1234\n"
            "    not_sent: 0\n"
            "    rpc_per_s: 123.4\n"
            "    msg_per_s: 246.0\n"
            "    latency_us:\n"
            "        min: 12\n"
            "        p50: 34\n"
            "        p99: 120\n"
            "        max: 560\n"
            "    wall_latency_us:\n"
            "        min: 20\n"
            "        p50: 40\n"
            "        p99: 130\n"
            "        max: 600\n"
            "    errors:\n"
            "        total: 4\n"
            "        expired: 1\n"
            "        dropped: 1\n"
            "        refused: 1\n"
            "        other: 1\n");
  auto s = o2ctl_yaml::selftest(y);
  EXPECT_TRUE(s.check.ok()) << s.check.str() << y;
  EXPECT_EQ(s.entries, 2U);

  std::string t = format_text(r);
  for (const char* want : {"selftest ping: 2 peers, concurrency 8, 10.000 s\n",
                           "  peers:            192.168.1.2@o2ib0 192.168.1.3@o2ib0\n",
                           "  from:             192.168.1.1@o2ib0\n", "  rpcs:             1234\n",
                           "  rpc/s:            123.4\n", "  msg/s:            246.0\n",
                           "  latency us:       min 12  p50 34  p99 120  max 560\n",
                           "  wall latency us:  min 20  p50 40  p99 130  max 600\n",
                           "  ping errors:      4 (expired 1, dropped 1, refused 1, other 1)\n"}) {
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
  }
}

TEST(SelftestFormat, TheSchemaCatchesInconsistentReports) {
  PingReport r;
  r.config = two_peers(1, 1);
  r.rpcs = 1;
  r.errors = {1, 0, 0, 0, 0};  // classes do not add up
  EXPECT_FALSE(o2ctl_yaml::selftest(format_yaml(r)).check.ok());
  r.errors = {1, 1, 0, 0, 0};
  r.latency_us = {5, 4, 3, 2};  // not ordered
  EXPECT_FALSE(o2ctl_yaml::selftest(format_yaml(r)).check.ok());
  r.latency_us = {};
  EXPECT_TRUE(o2ctl_yaml::selftest(format_yaml(r)).check.ok());
}

// ---- the command line on the fake kernel ---------------------------------------------

class SelftestCliTest : public test_support::O2ctlTest {};

TEST_F(SelftestCliTest, PingsThatTimeOutCountAsExpiredAndExit1) {
  kernel_->on_ping = [](o2lnd_ioc_ping&) { return ETIMEDOUT; };
  EXPECT_EQ(
      o2ctl({"selftest", "ping", "192.168.1.2@o2ib0", "--count", "5", "--concurrency", "2", "-y"}),
      kExitFailure);
  auto s = o2ctl_yaml::selftest(out());
  ASSERT_TRUE(s.check.ok()) << s.check.str() << out();
  auto st = YAML::Load(out())["selftest"];
  EXPECT_EQ(st["rpcs"].as<int>(), 5);
  EXPECT_EQ(st["errors"]["total"].as<int>(), 5);
  EXPECT_EQ(st["errors"]["expired"].as<int>(), 5);
  EXPECT_EQ(st["errors"]["dropped"].as<int>(), 0);
  EXPECT_EQ(st["latency_us"]["max"].as<int>(), 0) << "no answered ping, no latency";
  EXPECT_EQ(st["msg_per_s"].as<double>(), 0.0);
  EXPECT_EQ(kernel_->count(O2LND_IOC_PING), 5U);
}

TEST_F(SelftestCliTest, AnsweredPingsReportTheModulesRtt) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) {
    p.pid = 12345;
    p.n_ids = 2;
    p.ids[0].nid = O2LND_LO_NID;
    p.rtt_ns = 25000;  // 25 us
    return 0;
  };
  EXPECT_EQ(o2ctl({"selftest", "ping", "192.168.1.2@o2ib0", "192.168.1.3@o2ib0", "--count", "10",
                   "--from", "192.168.1.1@o2ib0", "--timeout", "250", "--yaml"}),
            kExitOk)
      << err();
  EXPECT_EQ(err(), "");
  auto st = YAML::Load(out())["selftest"];
  EXPECT_EQ(st["rpcs"].as<int>(), 10);
  EXPECT_EQ(st["errors"]["total"].as<int>(), 0);
  EXPECT_EQ(st["concurrency"].as<int>(), 8);
  EXPECT_EQ(st["timeout_ms"].as<int>(), 250);
  EXPECT_EQ(st["source"].as<std::string>(), "192.168.1.1@o2ib0");
  EXPECT_EQ(st["peers"].size(), 2U);
  for (const char* k : {"min", "p50", "p99", "max"}) {
    EXPECT_EQ(st["latency_us"][k].as<int>(), 25) << k;
  }
  auto sent = kernel_->last<o2lnd_ioc_ping>(O2LND_IOC_PING);
  EXPECT_EQ(sent.src_nid, kLocal);
  EXPECT_EQ(sent.timeout_ms, 250U);
  EXPECT_EQ(sent.max_ids, 1U);
  // Human-readable by default.
  EXPECT_EQ(o2ctl({"selftest", "ping", "192.168.1.2@o2ib0", "--count", "3"}), kExitOk);
  EXPECT_NE(out().find("  rpcs:             3\n"), std::string::npos) << out();
  EXPECT_NE(out().find("  latency us:       min 25  p50 25  p99 25  max 25\n"), std::string::npos)
      << out();
  EXPECT_NE(out().find("  ping errors:      0 (expired 0, dropped 0, refused 0, other 0)\n"),
            std::string::npos)
      << out();
}

TEST_F(SelftestCliTest, AnInvalidSourceStopsTheRunAtOnce) {
  kernel_->on_ping = [](o2lnd_ioc_ping&) { return EINVAL; };
  EXPECT_EQ(o2ctl({"selftest", "ping", "192.168.1.2@o2ib0", "--duration", "60", "-y"}),
            kExitFailure);
  EXPECT_NE(err().find("o2ctl: selftest ping: stopped: ping of 192.168.1.2@o2ib0 failed with "
                       "Invalid argument"),
            std::string::npos)
      << err();
  EXPECT_TRUE(o2ctl_yaml::selftest(out()).check.ok()) << out();
  EXPECT_LE(kernel_->count(O2LND_IOC_PING), 8U);
}

TEST_F(SelftestCliTest, UsageErrorsNameTheBadOptionAndTouchNoDevice) {
  struct Case {
    std::vector<std::string_view> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"selftest", "ping"}, "o2ctl selftest ping: expected at least one NID\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--concurrency", "0"},
       "o2ctl selftest ping: invalid --concurrency '0': out of range (1..256)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--concurrency", "257"},
       "o2ctl selftest ping: invalid --concurrency '257': out of range (1..256)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--concurrency", "many"},
       "o2ctl selftest ping: invalid --concurrency 'many': not a number\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--duration", "5", "--count", "10"},
       "o2ctl selftest ping: --duration and --count exclude each other\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--duration", "0.05"},
       "o2ctl selftest ping: invalid --duration '0.05': too small (at least 0.1 seconds)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--duration", "3601"},
       "o2ctl selftest ping: invalid --duration '3601': too large (at most 3600 seconds)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--count", "0"},
       "o2ctl selftest ping: invalid --count '0': out of range (1..4294967295)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--timeout", "600001"},
       "o2ctl selftest ping: invalid --timeout '600001': out of range (1..600000)\n"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--from", "nowhere"},
       "o2ctl: invalid NID 'nowhere'"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "bogus"}, "o2ctl: invalid NID 'bogus'"},
      {{"selftest", "ping", "192.168.1.2@o2ib0", "--bogus"},
       "o2ctl selftest ping: unknown option '--bogus'\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(o2ctl(c.args), kExitUsage) << c.err;
    EXPECT_TRUE(err().starts_with(c.err)) << "want: " << c.err << "got:  " << err();
    EXPECT_EQ(out(), "");
  }
  EXPECT_EQ(kernel_->opens, 0) << "a usage error must not touch the device";
}

TEST_F(SelftestCliTest, ModesArePingAndBrw) {
  EXPECT_EQ(o2ctl({"selftest", "bulk", "192.168.1.2@o2ib0"}), kExitUsage);
  EXPECT_NE(err().find("'selftest' needs a subcommand (unknown: 'bulk')"), std::string::npos)
      << err();
  EXPECT_NE(err().find("  o2ctl selftest ping NID [NID...]"), std::string::npos) << err();
  EXPECT_NE(err().find("  o2ctl selftest brw write|read NID [NID...] --size SIZE"),
            std::string::npos)
      << err();
  EXPECT_EQ(o2ctl({"selftest"}), kExitUsage);
  EXPECT_EQ(o2ctl({"selftest", "--help"}), kExitOk);
  EXPECT_NE(out().find("o2ctl selftest ping"), std::string::npos) << out();
  EXPECT_NE(out().find("o2ctl selftest brw"), std::string::npos) << out();
  EXPECT_EQ(o2ctl({"selftest", "ping", "--help"}), kExitOk);
  EXPECT_TRUE(
      out().starts_with("Usage: o2ctl selftest ping NID [NID...] [--from NID] "
                        "[--concurrency N] [--duration S | --count N] [--timeout MS] "
                        "[-y]\n"))
      << out();
  for (const char* opt : {"--from", "--concurrency", "--duration", "--count", "--timeout",
                          "-y, --yaml", "expired", "dropped", "refused", "p99"}) {
    EXPECT_NE(out().find(opt), std::string::npos) << opt;
  }
  EXPECT_EQ(o2ctl({"selftest", "brw", "--help"}), kExitOk);
  EXPECT_TRUE(out().starts_with(
      "Usage: o2ctl selftest brw write|read NID [NID...] --size SIZE [--check] "
      "[--ack] [--seed N] [--from NID] [--concurrency N] [--duration S | --count N] "
      "[--timeout MS] [-y]\n"))
      << out();
  for (const char* opt : {"--size", "--check", "--ack", "--seed", "KiB", "MiB", "verify",
                          "rdma rpcs", "MiB/s", "mode brw"}) {
    EXPECT_NE(out().find(opt), std::string::npos) << opt;
  }
  EXPECT_EQ(kernel_->opens, 0);
}

// ---- selftest brw --------------------------------------------------------------------

TEST(SelftestBrw, SizeSuffixesAreBinaryAndBounded) {
  EXPECT_EQ(*parse_size("0"), 0U);
  EXPECT_EQ(*parse_size("1"), 1U);
  EXPECT_EQ(*parse_size("4097"), 4097U);
  EXPECT_EQ(*parse_size("64K"), 65536U);
  EXPECT_EQ(*parse_size("64k"), 65536U);
  EXPECT_EQ(*parse_size("64KiB"), 65536U);
  EXPECT_EQ(*parse_size("64kib"), 65536U);
  EXPECT_EQ(*parse_size("1M"), 1048576U);
  EXPECT_EQ(*parse_size("1MiB"), 1048576U);
  EXPECT_EQ(*parse_size("1024K"), 1048576U);
  EXPECT_EQ(*parse_size("1048576"), 1048576U);
  EXPECT_EQ(*parse_size("0M"), 0U);
  for (const char* bad : {"", "K", "1048577", "2M", "1025K", "1G", "1.5M", "-1", "1 M", "1MB",
                          "99999999999999999999"}) {
    EXPECT_FALSE(parse_size(bad).ok()) << bad;
  }
  EXPECT_EQ(parse_size("2M").error().message, "too large (at most 1M = 1048576 bytes)");
  EXPECT_EQ(parse_size("1G").error().message, "unknown unit 'G' (K, M, KiB or MiB)");
}

TEST(SelftestBrw, VerifyIsItsOwnClass) {
  EXPECT_EQ(classify(EBADMSG), ErrorClass::kVerify);
  EXPECT_EQ(class_name(ErrorClass::kVerify), "verify");
  ErrorCounts c;
  for (int e : {EBADMSG, EBADMSG, ETIMEDOUT, EPROTO}) {
    c.add(e);
  }
  EXPECT_EQ(c, (ErrorCounts{4, 1, 0, 0, 1, 2}));
  EXPECT_FALSE(fatal(EBADMSG));
}

TEST(SelftestBrw, RunCountsBytesRdmaAndSeedsByTicket) {
  RunConfig c = two_peers(4, 100);
  c.brw = BrwParams{O2LND_BRW_READ, 1048576, true, 7};
  std::mutex mu;
  std::vector<std::uint64_t> tickets;
  PingReport r = run_rpcs(c, [&](Nid, std::uint64_t ticket) {
    {
      std::lock_guard lock(mu);
      tickets.push_back(ticket);
    }
    if (ticket % 10 == 9) {
      return RpcOutcome{EBADMSG, {}, false};
    }
    return RpcOutcome{0, std::chrono::microseconds(100), ticket % 2 == 0};
  });
  EXPECT_EQ(r.rpcs, 100U);
  EXPECT_EQ(r.ok, 90U);
  EXPECT_EQ(r.errors, (ErrorCounts{10, 0, 0, 0, 0, 10}));
  EXPECT_EQ(r.rdma_rpcs, 50U) << "the even tickets; 9, 19, ... are odd";
  EXPECT_NEAR(r.mib_per_s, 90.0 / r.elapsed_s, 1e-6 * r.mib_per_s) << "1 MiB per answered RPC";
  std::sort(tickets.begin(), tickets.end());
  for (std::uint64_t i = 0; i < tickets.size(); ++i) {
    EXPECT_EQ(tickets[i], i);
  }
}

TEST(SelftestBrw, YamlAndTextOfABrwReport) {
  PingReport r;
  r.config = two_peers(8, std::nullopt);
  r.config.peers.resize(1);
  r.config.brw = BrwParams{O2LND_BRW_WRITE, 65536, true, 42};
  r.elapsed_s = 2;
  r.rpcs = 100;
  r.ok = 97;
  r.rpc_per_s = 50;
  r.msg_per_s = 97;
  r.mib_per_s = 3.03125;
  r.rdma_rpcs = 97;
  r.latency_us = {100, 200, 300, 400};
  r.wall_latency_us = {110, 210, 310, 410};
  r.errors = {3, 1, 0, 0, 0, 2};
  std::string y = format_yaml(r);
  EXPECT_EQ(y,
            "selftest:\n"
            "    mode: brw\n"
            "    op: write\n"
            "    size: 65536\n"
            "    check: true\n"
            "    ack: false\n"
            "    seed: 42\n"
            "    peers:\n"
            "        - 192.168.1.2@o2ib0\n"
            "    source: any\n"
            "    concurrency: 8\n"
            "    duration_s: 2.000\n"
            "    timeout_ms: 0\n"
            "    rpcs: 100\n"
            "    not_sent: 0\n"
            "    rpc_per_s: 50.0\n"
            "    msg_per_s: 97.0\n"
            "    mib_per_s: 3.0\n"
            "    rdma_rpcs: 97\n"
            "    latency_us:\n"
            "        min: 100\n"
            "        p50: 200\n"
            "        p99: 300\n"
            "        max: 400\n"
            "    wall_latency_us:\n"
            "        min: 110\n"
            "        p50: 210\n"
            "        p99: 310\n"
            "        max: 410\n"
            "    errors:\n"
            "        total: 3\n"
            "        expired: 1\n"
            "        dropped: 0\n"
            "        refused: 0\n"
            "        verify: 2\n"
            "        other: 0\n");
  auto s = o2ctl_yaml::selftest(y);
  EXPECT_TRUE(s.check.ok()) << s.check.str() << y;
  std::string t = format_text(r);
  for (const char* want :
       {"selftest brw write, size 65536, check, 1 peer, concurrency 8, 2.000 s\n",
        "  MiB/s:            3.0\n", "  rdma rpcs:        97\n",
        "  brw errors:       3 (expired 1, dropped 0, refused 0, verify 2, other 0)\n"}) {
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
  }
  // The schema refuses brw keys in a ping report and a verify class there.
  r.config.brw.reset();
  std::string ping = format_yaml(r);
  EXPECT_EQ(ping.find("verify"), std::string::npos) << ping;
  EXPECT_NE(ping.find("        other: 2\n"), std::string::npos)
      << "EBADMSG counts as other" << ping;
  EXPECT_TRUE(o2ctl_yaml::selftest(ping).check.ok()) << ping;
}

TEST_F(SelftestCliTest, BrwSendsTheRequestAndReportsRdma) {
  kernel_->on_brw = [](o2lnd_ioc_brw& b) {
    b.rtt_ns = 500000;
    b.rdma = b.size > 4096 ? 1 : 0;
    return 0;
  };
  EXPECT_EQ(o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--check",
                   "--seed", "1000", "--count", "6", "--concurrency", "2", "--from",
                   "192.168.1.1@o2ib0", "--timeout", "3000", "-y"}),
            kExitOk)
      << err();
  auto s = o2ctl_yaml::selftest(out());
  ASSERT_TRUE(s.check.ok()) << s.check.str() << out();
  auto st = YAML::Load(out())["selftest"];
  EXPECT_EQ(st["mode"].as<std::string>(), "brw");
  EXPECT_EQ(st["op"].as<std::string>(), "write");
  EXPECT_EQ(st["size"].as<int>(), 1048576);
  EXPECT_TRUE(st["check"].as<bool>());
  EXPECT_EQ(st["rpcs"].as<int>(), 6);
  EXPECT_EQ(st["rdma_rpcs"].as<int>(), 6);
  EXPECT_EQ(st["errors"]["verify"].as<int>(), 0);
  EXPECT_EQ(st["latency_us"]["p50"].as<int>(), 500);
  EXPECT_EQ(kernel_->count(O2LND_IOC_BRW), 6U);
  auto sent = kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW);
  EXPECT_EQ(sent.nid, kPeerA);
  EXPECT_EQ(sent.src_nid, kLocal);
  EXPECT_EQ(sent.op, static_cast<std::uint32_t>(O2LND_BRW_WRITE));
  EXPECT_EQ(sent.size, 1048576U);
  EXPECT_EQ(sent.flags, static_cast<std::uint32_t>(O2LND_BRW_F_CHECK));
  EXPECT_EQ(sent.timeout_ms, 3000U);
  EXPECT_GE(sent.seed, 1000U);
  EXPECT_LT(sent.seed, 1006U);
  EXPECT_EQ(sent.pad, 0U);
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_brw));

  // A read below max_immediate, without --check, as text.
  EXPECT_EQ(o2ctl({"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "4K", "--count", "3"}),
            kExitOk)
      << err();
  sent = kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW);
  EXPECT_EQ(sent.op, static_cast<std::uint32_t>(O2LND_BRW_READ));
  EXPECT_EQ(sent.size, 4096U);
  EXPECT_EQ(sent.flags, 0U);
  EXPECT_EQ(sent.src_nid, O2LND_NID_ANY);
  EXPECT_NE(out().find("selftest brw read, size 4096, 1 peer"), std::string::npos) << out();
  EXPECT_NE(out().find("  rdma rpcs:        0\n"), std::string::npos) << out();
}

// --ack sets O2LND_BRW_F_ACK (and only it), and the reports say so.
TEST_F(SelftestCliTest, BrwAckAsksForTheLnetAckAndTheReportSaysSo) {
  kernel_->on_brw = [](o2lnd_ioc_brw& b) {
    b.rtt_ns = 1000;
    b.rdma = 1;
    return 0;
  };
  EXPECT_EQ(o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--ack",
                   "--count", "2", "-y"}),
            kExitOk)
      << err();
  auto s = o2ctl_yaml::selftest(out());
  EXPECT_TRUE(s.check.ok()) << s.check.str() << out();
  auto st = YAML::Load(out())["selftest"];
  EXPECT_TRUE(st["ack"].as<bool>());
  EXPECT_FALSE(st["check"].as<bool>());
  EXPECT_EQ(kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW).flags,
            static_cast<std::uint32_t>(O2LND_BRW_F_ACK));

  EXPECT_EQ(o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--ack",
                   "--check", "--count", "1"}),
            kExitOk)
      << err();
  EXPECT_EQ(kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW).flags,
            static_cast<std::uint32_t>(O2LND_BRW_F_CHECK | O2LND_BRW_F_ACK));
  EXPECT_NE(out().find("selftest brw write, size 1048576, check, ack, 1 peer"), std::string::npos)
      << out();

  EXPECT_EQ(o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--count", "1",
                   "-y"}),
            kExitOk)
      << err();
  EXPECT_FALSE(YAML::Load(out())["selftest"]["ack"].as<bool>());
  EXPECT_EQ(kernel_->last<o2lnd_ioc_brw>(O2LND_IOC_BRW).flags, 0U);
}

// msg/s counts the LNet messages the module says each RPC took: one for a
// write that asked for no ACK, two otherwise (and two from a module older
// than ABI 11, which says nothing).
TEST_F(SelftestCliTest, BrwMsgPerSecondCountsTheMessagesTheModuleReports) {
  auto msg_per_rpc = [this](std::uint32_t messages) {
    kernel_->on_brw = [messages](o2lnd_ioc_brw& b) {
      b.rtt_ns = 1000;
      b.messages = messages;
      return 0;
    };
    EXPECT_EQ(o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--count",
                     "40", "--concurrency", "1", "-y"}),
              kExitOk)
        << err();
    auto st = YAML::Load(out())["selftest"];
    return st["msg_per_s"].as<double>() / st["rpc_per_s"].as<double>();
  };
  EXPECT_NEAR(msg_per_rpc(1), 1.0, 0.01);
  EXPECT_NEAR(msg_per_rpc(2), 2.0, 0.01);
  EXPECT_NEAR(msg_per_rpc(0), 2.0, 0.01);
}

TEST_F(SelftestCliTest, BrwVerifyFailuresAndHopelessErrors) {
  std::atomic<int> n{0};
  kernel_->on_brw = [&n](o2lnd_ioc_brw& b) {
    b.rtt_ns = 1000;
    return n++ % 2 == 0 ? EBADMSG : 0;
  };
  EXPECT_EQ(o2ctl({"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "64KiB", "--check",
                   "--count", "10", "--concurrency", "1", "-y"}),
            kExitFailure);
  auto st = YAML::Load(out())["selftest"];
  EXPECT_TRUE(o2ctl_yaml::selftest(out()).check.ok()) << out();
  EXPECT_EQ(st["errors"]["total"].as<int>(), 5);
  EXPECT_EQ(st["errors"]["verify"].as<int>(), 5);
  EXPECT_EQ(st["errors"]["other"].as<int>(), 0);

  kernel_->on_brw = [](o2lnd_ioc_brw&) { return EINVAL; };
  EXPECT_EQ(
      o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1", "--duration", "60"}),
      kExitFailure);
  EXPECT_NE(err().find("o2ctl: selftest brw: stopped: brw of 192.168.1.2@o2ib0 failed with "
                       "Invalid argument"),
            std::string::npos)
      << err();
}

TEST_F(SelftestCliTest, BrwUsageErrorsTouchNoDevice) {
  struct Case {
    std::vector<std::string_view> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"selftest", "brw"}, "o2ctl selftest brw: expected write or read, then at least one NID\n"},
      {{"selftest", "brw", "send", "192.168.1.2@o2ib0", "--size", "1"},
       "o2ctl selftest brw: unknown operation 'send' (expected write or read)\n"},
      {{"selftest", "brw", "write", "192.168.1.2@o2ib0"},
       "o2ctl selftest brw: --size is required\n"},
      {{"selftest", "brw", "write", "--size", "1"},
       "o2ctl selftest brw: expected at least one NID\n"},
      {{"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "2M"},
       "o2ctl selftest brw: invalid --size '2M': too large (at most 1M = 1048576 bytes)\n"},
      {{"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "big"},
       "o2ctl selftest brw: invalid --size 'big': not a size"},
      {{"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1", "--seed", "x"},
       "o2ctl selftest brw: invalid --seed 'x'"},
      {{"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1", "--check", "--check"},
       "o2ctl selftest brw: option '--check' given twice\n"},
      {{"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "1", "--concurrency", "0"},
       "o2ctl selftest brw: invalid --concurrency '0': out of range (1..256)\n"},
      {{"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "1", "--count", "1", "--duration",
        "1"},
       "o2ctl selftest brw: --duration and --count exclude each other\n"},
      {{"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "1", "--timeout", "600001"},
       "o2ctl selftest brw: invalid --timeout '600001': out of range (1..600000)\n"},
      {{"selftest", "brw", "read", "nowhere", "--size", "1"}, "o2ctl: invalid NID 'nowhere'"},
      {{"selftest", "brw", "read", "192.168.1.2@o2ib0", "--size", "1M", "--ack"},
       "o2ctl selftest brw: --ack applies to write only (a read's answer is its data)\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(o2ctl(c.args), kExitUsage) << c.err;
    EXPECT_TRUE(err().starts_with(c.err)) << "want: " << c.err << "got:  " << err();
    EXPECT_EQ(out(), "");
  }
  EXPECT_EQ(kernel_->opens, 0) << "a usage error must not touch the device";
}

TEST(ParseSeconds, BoundsAndPrecision) {
  EXPECT_EQ(*parse_seconds("0.1", milliseconds(100), milliseconds(3600000)), milliseconds(100));
  EXPECT_EQ(*parse_seconds("3600", milliseconds(100), milliseconds(3600000)),
            milliseconds(3600000));
  EXPECT_EQ(*parse_seconds(".25", milliseconds(100), milliseconds(3600000)), milliseconds(250));
  EXPECT_FALSE(parse_seconds("0.0999", milliseconds(100), milliseconds(3600000)).ok());
  EXPECT_FALSE(parse_seconds("99999999999", milliseconds(100), milliseconds(3600000)).ok());
  EXPECT_FALSE(parse_seconds("1e3", milliseconds(100), milliseconds(3600000)).ok());
  EXPECT_FALSE(parse_seconds("-1", milliseconds(100), milliseconds(3600000)).ok());
}

}  // namespace
}  // namespace o2ctl::selftest
