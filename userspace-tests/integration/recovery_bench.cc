// Recovery benchmark (not a pass/fail timing test; testbed/bench-recovery.sh
// runs it, make check does not): on two guests (g1 192.168.1.1 the
// survivor, g2 192.168.1.2 the peer that is killed and booted again) it
// measures the time from "peer back up" (o2lnd loaded on the rebooted g2)
// to the first good ping, in four cases, over O2_BENCH_RUNS runs each
// (default 3):
//   survivor_pings_first     g1 pings g2 back to back throughout
//   survivor_idle_pings_first g1 idle during the reboot (holding its
//                            connection to the dead incarnation), pings
//                            g2 as soon as it is back (o2iblnd: the first
//                            message hangs on the dead QP)
//   rebooted_pings_first     g1 idle (holding its dead connection); g2
//                            pings g1 as soon as it is back
//   stuck_connect_survivor   as the first, with g1's next connect stuck in
//                            address resolution (stall addr --count 1)
//                            from just before g2 boots
// plus the pings that failed after the first good one (goal: none) and
// the connect attempts per minute to the dead peer (while g2 is down and
// g1 keeps pinging it, O2_BENCH_DEAD_SECONDS, default 60).  Prints a table
// and writes it to O2_BENCH_OUT (default <repo>/results/recovery.md).
// The test fails only when a run never recovers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture.h"

namespace o2it {
namespace {

constexpr const char* kSurvivor = "192.168.1.1@o2ib0";  // g1
constexpr const char* kPeer = "192.168.1.2@o2ib0";      // g2, rebooted
constexpr const char* kNet = "o2ib0(eth0)";
constexpr const char* kLog = "/tmp/bench-loop.log";

double guest_now(Guest& g) { return std::strtod(g.run("date +%s.%3N", 10).out.c_str(), nullptr); }

struct Sample {
  double seconds = -1;  // peer up -> first good ping (-1: never)
  int fails_after = 0;  // failed pings after the first good one
  int pings_after = 0;
};

O2_SUITE_CLASS(
    RecoveryBench, "two",
    void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"g1", "g2"}) {
          if (guest(n).alive()) stop_loop(guest(n));
        }
      }
      TopologyTest::TearDown();
    }

    void stop_loop(Guest& g) { run(g, "touch /tmp/stop-loop; sleep 6; rm -f /tmp/stop-loop", 30); }

    // Both guests fresh: o2lnd (re)loaded, connected, no faults.
    void fresh_pair() {
      for (const char* n : {"g1", "g2"}) {
        Guest& g = guest(n);
        run(g, "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi", 60);
        ASSERT_TRUE(insmod(g, kNet).ok()) << bed().test_log();
      }
      RunResult r = o2ctl(guest("g1"), std::string("ping ") + kPeer + " --timeout 20", 60);
      ASSERT_EQ(r.status, 0) << r.out;
    }

    // Polls the loop log on `g` until a good ping after t0 (at most limit s).
    LoopStats wait_first_ok(Guest& g, double t0, double limit) {
      LoopStats s;
      auto start = std::chrono::steady_clock::now();
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
             limit) {
        s = loop_stats(run(g, std::string("cat ") + kLog + " 2>/dev/null", 30).out, t0);
        if (s.first_ok >= 0) break;
        usleep(500 * 1000);
      }
      return s;
    }

    // One run of a case; the rebooted guest is g2.
    Sample one_run(const std::string& kase) {
      Sample out;
      fresh_pair();
      if (HasFatalFailure()) return out;
      Guest& g1 = guest("g1");
      Guest& g2 = guest("g2");
      bool survivor_pings = kase != "rebooted_pings_first";
      bool idle_first = kase == "survivor_idle_pings_first";
      if (survivor_pings && !idle_first) run(g1, ping_loop(kPeer, kLog), 30);
      g2.kill();
      usleep(3 * 1000 * 1000);
      if (kase == "stuck_connect_survivor") {
        add_fault(g1, std::string("stall addr --local ") + kSurvivor + " --count 1");
      }
      g2.boot();
      EXPECT_TRUE(insmod(g2, kNet).ok()) << bed().test_log();
      Guest& pinger = survivor_pings ? g1 : g2;
      double t0 = guest_now(pinger);  // the peer is back up
      if (!survivor_pings) run(g2, ping_loop(kSurvivor, kLog), 30);
      if (idle_first) run(g1, ping_loop(kPeer, kLog), 30);
      LoopStats s = wait_first_ok(pinger, t0, 90);
      if (s.first_ok >= 0) usleep(10 * 1000 * 1000);  // pings after the first good one
      stop_loop(pinger);
      s = loop_stats(run(pinger, std::string("cat ") + kLog, 30).out, t0);
      out.seconds = s.first_ok;
      out.fails_after = s.fails_after;
      out.pings_after = s.fails_after + s.oks_after;
      if (!survivor_pings && s.first_ok >= 0) {
        // and the survivor's direction right after
        RunResult r = o2ctl(g1, std::string("ping ") + kPeer + " --timeout 5", 30);
        out.pings_after++;
        out.fails_after += r.status == 0 ? 0 : 1;
      }
      o2ctl(g1, "fault del all", 30);
      return out;
    });

double median(std::vector<double> v) {
  std::ranges::sort(v);
  size_t n = v.size();
  return n == 0 ? -1 : (n % 2 != 0 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

std::string fmt(double x) {
  char b[32];
  snprintf(b, sizeof b, "%.1f", x);
  return b;
}

TEST_F(RecoveryBench, TimeFromPeerUpToFirstGoodPing) {
  const int runs = env_int("O2_BENCH_RUNS", 3);
  const int dead_s = env_int("O2_BENCH_DEAD_SECONDS", 60);
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");

  // Connect attempts per minute to a dead peer.
  fresh_pair();
  ASSERT_FALSE(HasFatalFailure());
  g2.kill();
  run(g1, ping_loop(kPeer, kLog), 30);
  int64_t c0 = num(peer(g1, kSurvivor, kPeer), "connects", 0);
  usleep(static_cast<useconds_t>(dead_s) * 1000 * 1000);
  int64_t c1 = num(peer(g1, kSurvivor, kPeer), "connects", 0);
  stop_loop(g1);
  double dead_per_min = static_cast<double>(c1 - c0) * 60.0 / dead_s;
  figure("dead_peer_connects_per_minute", fmt(dead_per_min));
  g2.boot();

  const std::vector<std::string> cases = {"survivor_pings_first", "survivor_idle_pings_first",
                                          "rebooted_pings_first", "stuck_connect_survivor"};
  std::map<std::string, std::vector<Sample>> res;
  for (int i = 0; i < runs; i++) {
    for (const auto& c : cases) {
      Sample s = one_run(c);
      printf("[ bench    ] %s run %d: %s s to the first good ping, %d of %d later pings failed\n",
             c.c_str(), i + 1, fmt(s.seconds).c_str(), s.fails_after, s.pings_after);
      fflush(stdout);
      EXPECT_GE(s.seconds, 0) << c << " run " << i + 1 << " never recovered";
      res[c].push_back(s);
    }
  }

  std::ostringstream t;
  t << "| case | runs | median s | min s | max s | failed pings after the first good one |\n"
    << "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : cases) {
    std::vector<double> ok;
    int fails = 0, after = 0, never = 0;
    for (const auto& s : res[c]) {
      if (s.seconds >= 0) {
        ok.push_back(s.seconds);
      } else {
        never++;
      }
      fails += s.fails_after;
      after += s.pings_after;
    }
    t << "| " << c << " | " << res[c].size()
      << (never != 0 ? " (" + std::to_string(never) + " never recovered)" : "") << " | "
      << (ok.empty() ? "-" : fmt(median(ok))) << " | "
      << (ok.empty() ? "-" : fmt(*std::ranges::min_element(ok))) << " | "
      << (ok.empty() ? "-" : fmt(*std::ranges::max_element(ok))) << " | " << fails << " of "
      << after << " |\n";
    figure("recovery_" + c + "_median_s", ok.empty() ? "-" : fmt(median(ok)));
  }
  t << "\nConnect attempts to a dead peer while it is pinged back to back: " << fmt(dead_per_min)
    << " per minute (" << c1 - c0 << " in " << dead_s << " s).\n";

  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string out = getenv("O2_BENCH_OUT") != nullptr && *getenv("O2_BENCH_OUT") != 0
                        ? getenv("O2_BENCH_OUT")
                        : std::string(O2_ITEST_SOURCE_DIR) + "/results/recovery.md";
  std::ofstream f(out);
  f << "# o2lnd recovery after a peer reboot\n\n"
    << "Measured " << date << " by testbed/bench-recovery.sh on the `two` topology (QEMU TCG,\n"
    << "Soft-RoCE), module " << ko_path() << ", " << runs << " runs per case.\n"
    << "Time: from o2lnd loaded on the rebooted peer (g2) to the end of the first\n"
    << "good `o2ctl ping` (each ping --timeout 5, back to back) on the pinging side.\n\n"
    << "- survivor_pings_first: g1 pings g2 throughout the reboot\n"
    << "- survivor_idle_pings_first: g1 idle during the reboot, still holding its\n"
    << "  connection to the dead incarnation; pings g2 once it is back\n"
    << "- rebooted_pings_first: g1 idle; g2 pings g1 once it is back\n"
    << "- stuck_connect_survivor: as the first, with g1's next connect stuck in address\n"
    << "  resolution (`fault add stall addr --count 1`) from just before g2 boots; its\n"
    << "  deadline is max(5 s, timeout/10) = 5 s at the default timeout\n\n"
    << t.str();
  printf("\n%s\nwritten to %s\n", t.str().c_str(), out.c_str());
  fflush(stdout);
}

}  // namespace
}  // namespace o2it
