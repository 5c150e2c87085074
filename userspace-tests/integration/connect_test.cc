// Connection scenarios on one guest (the `veth` topology): both ends of
// every connection live in one module (NI A = 192.168.1.1@o2ib0 on
// veth0/rxe0, NI B = 192.168.1.2@o2ib0 on veth1/rxe1; B is the higher NID
// and wins plain races), so each test sees both sides of the connect it
// provokes.  Faults are injected with `o2ctl fault add ... --local NID`.
//
// After every test the module is unloaded and o2lnd's QPs and cm_ids must
// be gone within a bounded time (expect_unload_frees_rdma).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture.h"

namespace o2it {
namespace {

constexpr const char* kA = "192.168.1.1@o2ib0";  // veth0, the lower NID
constexpr const char* kB = "192.168.1.2@o2ib0";  // veth1, the higher NID
constexpr const char* kBoth = "o2ib0(veth0,veth1)";

std::string scenario_script(const std::string& name) {
  return std::string(O2_ITEST_SOURCE_DIR) + "/testbed/scenarios/" + name;
}

// "key=value" words of a script's output line.
std::map<std::string, std::string> words(const std::string& line) {
  std::map<std::string, std::string> m;
  std::istringstream is(line);
  std::string w;
  while (is >> w) {
    auto p = w.find('=');
    if (p != std::string::npos) m[w.substr(0, p)] = w.substr(p + 1);
  }
  return m;
}

int64_t wnum(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? -1 : std::strtoll(it->second.c_str(), nullptr, 10);
}

// The connection of `local` to `peer` in a conn list (first match), or {}.
Record conn_of(const std::vector<Record>& cs, const std::string& local, const std::string& peer) {
  for (const auto& c : cs) {
    if (field(c, "local nid") == local && field(c, "peer") == peer) return c;
  }
  return {};
}

std::string param_name(const ::testing::TestParamInfo<const char*>& i) { return i.param; }

// Every scenario suite here: after each test, unload and check that the
// module's RDMA resources are back to none (the baseline without o2lnd).
// NOLINTNEXTLINE(cppcoreguidelines-macro-usage)
#define O2_CONNECT_SUITE(Suite)                    \
  O2_SUITE_CLASS(                                  \
      Suite, "veth", void TearDown() override {    \
        if (bed().tb() != nullptr) {               \
          o2ctl(guest("g1"), "fault del all", 30); \
          expect_unload_frees_rdma(guest("g1"));   \
        }                                          \
        TopologyTest::TearDown();                  \
      })

O2_CONNECT_SUITE(ConnectVeth);

// --- a: simultaneous connects ---------------------------------------------

TEST_F(ConnectVeth, BothSidesConnectAtOnceEndWithOneConnection) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  // 50 rounds on Debian's kernel; fewer on slow (debug) kernels.  A
  // longer soak: O2_RACE_ROUNDS=1000.
  const int rounds = env_int("O2_RACE_ROUNDS", o2tb::timeout_scale() > 1 ? 20 : 50);

  // Reference: one established connection each way, nothing else.
  RunResult r = o2ctl(g, std::string("ping ") + kB + " --source " + kA + " --timeout 20", 60);
  ASSERT_EQ(r.status, 0) << r.out;
  RdmaRes one_pair = rdma_res(g);

  auto t0 = std::chrono::steady_clock::now();
  r = run(g,
          sh_quote(scenario_script("race-rounds.sh")) + " " + sh_quote(o2ctl_path()) + " " + kA +
              " " + kB + " " + std::to_string(rounds),
          (rounds * 10.0 + 60) * o2tb::timeout_scale());
  ASSERT_FALSE(r.timed_out) << r.out;
  int ok_rounds = 0, bad = 0, transient_dups = 0, settle_max = 0;
  std::string bad_lines;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("round ", 0) != 0) {
      if (bad <= 5) bad_lines += l + "\n";  // ping error output of a bad round
      continue;
    }
    auto w = words(l);
    settle_max = std::max<int>(settle_max, static_cast<int>(wnum(w, "settle_ms")));
    if (wnum(w, "first_a") > 1 || wnum(w, "first_b") > 1) transient_dups++;
    if (wnum(w, "ab") == 0 && wnum(w, "ba") == 0 && wnum(w, "est_a") == 1 &&
        wnum(w, "est_b") == 1) {
      ok_rounds++;
    } else if (++bad <= 5) {
      bad_lines += l + "\n";
    }
  }
  figure("race_rounds", std::to_string(rounds));
  figure("race_rounds_seconds", std::to_string(since(t0)));
  figure("race_rounds_with_a_transient_second_connection", std::to_string(transient_dups));
  figure("race_rounds_max_settle_ms", std::to_string(settle_max));
  EXPECT_EQ(ok_rounds, rounds) << "rounds where a ping failed or a side did not end with exactly "
                                  "one established connection (first 5):\n"
                               << bad_lines;

  // Race counters of both sides.
  Record pa = peer(g, kA, kB), pb = peer(g, kB, kA);
  figure("races_received_by_A", field(pa, "races received"));
  figure("races_sent_by_A", field(pa, "races sent"));
  figure("races_received_by_B", field(pb, "races received"));
  figure("races_sent_by_B", field(pb, "races sent"));
  figure("connects_A_to_B", field(pa, "connects"));
  figure("connects_B_to_A", field(pb, "connects"));
  // The lower NID's connect loses plain races: B never receives a race reject.
  EXPECT_EQ(num(pb, "races received"), 0) << dump({pa, pb});

  // Settled: no closing or zombie connection left, only the pair, and the
  // RDMA resources of one pair (QPs, cm_ids) as after the first ping.
  std::vector<Record> cs;
  bool clean = false;
  for (int i = 0; i < 20 && !clean; i++) {
    cs = conns(g);
    clean = cs.size() == 2 && std::ranges::all_of(cs, [](const Record& c) {
              return field(c, "state") == "established";
            });
    if (!clean) usleep(500000);
  }
  EXPECT_TRUE(clean) << "connections 10 s after the last round:\n" << dump(cs);
  RdmaRes now = wait_rdma_res(g, one_pair, 10);
  EXPECT_EQ(now, one_pair) << "RDMA resources after the rounds (" << now.str()
                           << ") differ from one connected pair (" << one_pair.str() << ")";
}

// --- c: dead peers ---------------------------------------------------------

// Upper bound on connect attempts to a dead peer in T seconds of continuous
// traffic.  The contract: after a failed connect the next one waits the
// backoff, 1 s doubling up to a cap of ~8 s, with jitter.  Allowing the
// jitter to shorten a delay by up to half, the delays are at least 0.5, 1,
// 2, 4 s and then at least 4 s each; the first attempt starts at once.  So
//   N(T) <= 1 + 4 + ceil((T - 7.5) / 4)        (T >= 7.5 s)
// i.e. at most ~15 a minute in the steady state.  Without pacing, a peer
// that refuses at once (no listener) sees hundreds a minute.  +2 for an
// attempt in flight at each end of the window.
int max_attempts(double t) { return 1 + 4 + static_cast<int>((t - 7.5) / 4 + 0.999) + 2; }

// `src` pings `target` back to back for `seconds` (dead-peer.sh), then
// checks the pacing, the connection count and slab memory; then that no
// attempt is made once nothing is queued.
void dead_peer_scenario(const std::string& src, const std::string& target, int seconds,
                        const std::function<RunResult(const std::string&, double)>& run,
                        const std::function<Record()>& peer_now) {
  RunResult r = run(sh_quote(scenario_script("dead-peer.sh")) + " " + sh_quote(o2ctl_path()) + " " +
                        src + " " + target + " " + std::to_string(seconds),
                    (seconds + 120) * o2tb::timeout_scale());
  ASSERT_FALSE(r.timed_out) << r.out;
  std::vector<std::map<std::string, std::string>> s;
  std::string done;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("sample ", 0) == 0) s.push_back(words(l));
    if (l.rfind("done ", 0) == 0) done = l;
  }
  ASSERT_GE(s.size(), 3U) << r.out;
  auto& last = s.back();
  double t_end = static_cast<double>(wnum(last, "t"));
  int64_t connects = wnum(last, "connects");
  // the sample one minute before the end (or the first)
  const auto* minute_ago = &s.front();
  for (const auto& x : s) {
    if (static_cast<double>(wnum(x, "t")) <= t_end - 60) minute_ago = &x;
  }
  double window = t_end - static_cast<double>(wnum(*minute_ago, "t"));
  int64_t last_minute = connects - wnum(*minute_ago, "connects");
  int64_t max_conns = 0;
  for (const auto& x : s) max_conns = std::max(max_conns, wnum(x, "conns"));
  // slab: from the sample at 20 s (module caches warm) to the end
  const auto& warm = s.size() > 2 ? s[2] : s.front();
  int64_t slab_growth = wnum(last, "slab_kb") - wnum(warm, "slab_kb");
  int64_t sunreclaim_growth = wnum(last, "sunreclaim_kb") - wnum(warm, "sunreclaim_kb");

  std::string what = target + " from " + src;
  figure("dead_peer_seconds", std::to_string(t_end));
  figure("dead_peer_connects", std::to_string(connects));
  figure("dead_peer_connects_per_minute_steady",
         std::to_string(window > 0 ? static_cast<double>(last_minute) * 60 / window : 0));
  figure("dead_peer_pings", done);
  figure("dead_peer_max_conns", std::to_string(max_conns));
  figure("dead_peer_slab_growth_kb", std::to_string(slab_growth));
  figure("dead_peer_sunreclaim_growth_kb", std::to_string(sunreclaim_growth));
  std::string all = indent(r.out);
  // The backoff paces connect cycles: a cycle ends in a failure, and an
  // attempt whose address resolution fails is first retried at once, at
  // most O2_ADDR_RETRIES (4) times (o2_cm_addr_error()), so a cycle is 1 to
  // 5 attempts.  How many of them an unused address takes depends on
  // whether its ARP fails before the phase deadline (seen here: 10 to 17
  // attempts in 40 s, 4 to 5 failures).  A peer that refuses at once has
  // one attempt per cycle: there the bounds are the attempts' own.
  constexpr int64_t kAttemptsPerCycle = 1 + 4;
  int64_t failures = wnum(last, "failures");
  int64_t last_minute_failures = failures - wnum(*minute_ago, "failures");
  EXPECT_LE(failures, max_attempts(t_end)) << what << ": connect cycles not paced by the backoff\n"
                                           << all;
  EXPECT_LE(last_minute_failures, static_cast<int64_t>(window / 4) + 2)
      << what << ": steady-state cycles above one per 4 s\n"
      << all;
  EXPECT_LE(connects, (failures + 1) * kAttemptsPerCycle)
      << what << ": more attempts per cycle than the address retries allow\n"
      << all;
  figure("dead_peer_failures", std::to_string(failures));
  figure("dead_peer_attempts_over_cycles",
         std::to_string(connects) + "/" + std::to_string(failures));
  // It keeps trying while messages are queued (does not give up for good).
  EXPECT_GE(connects, 4) << what << ": too few attempts for " << t_end << " s of traffic\n" << all;
  EXPECT_LE(max_conns, 2) << what << ": connections pile up\n" << all;
  EXPECT_LT(sunreclaim_growth, 2048) << what << ": unreclaimable slab grew\n" << all;
  EXPECT_LT(slab_growth, 4096) << what << ": slab grew\n" << all;

  // Nothing queued any more: no further attempts (one already scheduled
  // may still run).
  Record before = peer_now();
  usleep(20 * 1000 * 1000);
  Record after = peer_now();
  EXPECT_LE(num(after, "connects"), num(before, "connects") + 1)
      << what << ": connects while nothing is queued\n"
      << dump({before, after});
}

// A connect closed while its callback makes the queue pair: `fault add
// cm-delay route_resolved` holds that callback 3 s after the connect phase
// began, and `peer close` falls inside.  The teardown waits for the
// callback (conn->in_setup), which then makes no QP and sends no request:
// nothing is left (no connection, no QP, no cm_id beyond the listeners')
// and the next ping connects afresh.  (Before, a close inside the callback
// let the QP be made after the teardown had released it: a kernel warning
// and a QP leaked until the unload, which rxe then warned about.)
TEST_F(ConnectVeth, ConnectClosedWhileItsQpIsMadeLeavesNothing) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  const RdmaRes base = rdma_res(g);  // the two listeners, no connection
  ASSERT_GT(add_fault(g, std::string("cm-delay route_resolved --delay 3000 --count 1 --local ") +
                             kA + " --peer " + kB),
            0);
  auto ping = std::async(std::launch::async, [&g] {
    return g.run(sh_quote(o2ctl_path()) + " ping " + kB + " --source " + kA + " --timeout 10", 60);
  });
  bool held = false;
  for (int t = 0; t < 100 && !held; t++) {
    held = field(conn_of(conns(g), kA, kB), "phase") == "connect";
    if (!held) usleep(100 * 1000);
  }
  ASSERT_TRUE(held) << "the connect never reached its held callback:\n" << dump(conns(g));
  RunResult c = o2ctl(g, std::string("peer close ") + kB + " --source " + kA, 30);
  EXPECT_TRUE(c.ok()) << c.out;
  RunResult p = ping.get();
  figure("ping_status_after_the_close", std::to_string(p.status));
  // the held callback ends 3 s after it began; the teardown right after
  RdmaRes now = wait_rdma_res(g, base, 20);
  EXPECT_EQ(now, base) << "left after the closed connect: " << now.str() << " vs " << base.str()
                       << "\n"
                       << dump(conns(g));
  EXPECT_TRUE(conn_of(conns(g), kA, kB).empty()) << dump(conns(g));
  expect_ping_ok(g, kB, std::string("--source ") + kA);
}

TEST_F(ConnectVeth, DeadPeerAttemptsArePacedWhenNothingListens) {
  Guest& g = guest("g1");
  // Only NI A: 192.168.1.2 (veth1) has rxe1 but no o2lnd listener, so every
  // connect is refused at once by the CM: only the backoff paces them.
  ASSERT_TRUE(insmod(g, "o2ib0(veth0)").ok()) << bed().test_log();
  // 60 s: the backoff reaches its cap after ~7.5 s, so the steady state
  // fills most of the window.  A longer soak: O2_DEAD_PEER_SECONDS=600.
  const int seconds = env_int("O2_DEAD_PEER_SECONDS", 60);
  dead_peer_scenario(
      kA, kB, seconds, [&](const std::string& c, double to) { return run(g, c, to); },
      [&] { return peer(g, kA, kB); });
}

TEST_F(ConnectVeth, DeadPeerAttemptsArePacedWhenTheAddressIsUnused) {
  Guest& g = guest("g1");
  // 192.168.1.77 is on veth0's subnet but nobody owns it: address
  // resolution fails (ARP) or the address phase deadline ends it.
  ASSERT_TRUE(insmod(g, "o2ib0(veth0)").ok()) << bed().test_log();
  const int seconds = std::max(40, env_int("O2_DEAD_PEER_SECONDS", 60) * 2 / 3);
  const std::string target = "192.168.1.77@o2ib0";
  dead_peer_scenario(
      kA, target, seconds, [&](const std::string& c, double to) { return run(g, c, to); },
      [&] { return peer(g, kA, target); });
}

// --- b: reject reasons -----------------------------------------------------

enum class Outcome {
  kRetried,       // the ping succeeds after a retry with the same parameters
  kRenegotiated,  // the ping succeeds with the rejecter's smaller values
  kFails,         // the ping fails well before its timeout
  kRefused,       // the ping fails at once with "Connection refused"
};

struct RejectCase {
  const char* name;    // test name suffix
  const char* reason;  // o2ctl reason name, as `last reject` prints it
  const char* extra;   // more `fault add` options
  Outcome outcome;
  int queue_depth = 0;  // kRenegotiated: expected negotiated values (0: not checked)
  int frags = 0;
  int max_connects = 0;  // kFails: at most this many connects (0: not checked)
};

void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.name; }

O2_CONNECT_SUITE(ConnectRejectVeth);
class EachRejectReason : public ConnectRejectVeth,
                         public ::testing::WithParamInterface<RejectCase> {};

TEST_P(EachRejectReason, IsHandled) {
  const RejectCase& c = GetParam();
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  // B rejects A's connect requests (count 1: only the first, else all).
  ASSERT_GT(add_fault(g, std::string("reject ") + c.reason + " --local " + kB + " " + c.extra), 0);
  const double ping_timeout = 30;
  RunResult r = o2ctl(g, std::string("ping ") + kB + " --source " + kA + " --timeout 30", 90);
  Record pa = peer(g, kA, kB), pb = peer(g, kB, kA);
  std::vector<Record> cs = conns(g);
  std::string ctx = "ping:\n" + r.out + "A's peer B, B's peer A:\n" + dump({pa, pb}) + "conns:\n" +
                    dump(cs) + o2ctl(g, "fault list", 30).out;
  figure(std::string("reject_") + c.name + "_ping_seconds", std::to_string(r.seconds));
  figure(std::string("reject_") + c.name + "_connects", field(pa, "connects"));

  EXPECT_EQ(field(pa, "last reject"), c.reason) << ctx;
  EXPECT_GE(num(pa, "rejects received"), 1) << ctx;
  EXPECT_GE(num(pb, "rejects sent"), 1) << ctx;
  switch (c.outcome) {
    case Outcome::kRetried:
    case Outcome::kRenegotiated: {
      EXPECT_EQ(r.status, 0) << ctx;
      EXPECT_TRUE(has_line(r.out, std::string("12345-") + kB)) << ctx;
      EXPECT_GE(num(pa, "connects"), 2) << "no retry?\n" << ctx;
      if (std::string(c.reason) == "conn_race") {
        EXPECT_GE(num(pa, "races received"), 1) << ctx;
      }
      Record ab = conn_of(cs, kA, kB), ba = conn_of(cs, kB, kA);
      EXPECT_EQ(field(ab, "state"), "established") << ctx;
      EXPECT_EQ(field(ba, "state"), "established") << ctx;
      if (c.queue_depth != 0) {
        EXPECT_EQ(num(ab, "queue depth"), c.queue_depth) << "A's side\n" << ctx;
        EXPECT_EQ(num(ba, "queue depth"), c.queue_depth) << "B's side\n" << ctx;
      }
      if (c.frags != 0) {
        EXPECT_EQ(num(ab, "max frags"), c.frags) << "A's side\n" << ctx;
        EXPECT_EQ(num(ba, "max frags"), c.frags) << "B's side\n" << ctx;
      }
      break;
    }
    case Outcome::kRefused:
      EXPECT_NE(r.out.find(std::string("failed to ping ") + kB + ": Connection refused"),
                std::string::npos)
          << ctx;
      EXPECT_EQ(num(pa, "last error"), -111) << "ECONNREFUSED\n" << ctx;
      [[fallthrough]];
    case Outcome::kFails:
      EXPECT_NE(r.status, 0) << ctx;
      EXPECT_NE(r.out.find(std::string("failed to ping ") + kB + ": "), std::string::npos) << ctx;
      // Not waiting out the ping timeout: the reject ends it.
      EXPECT_LT(r.seconds, ping_timeout - 5) << ctx;
      if (c.max_connects != 0) {
        EXPECT_LE(num(pa, "connects"), c.max_connects) << ctx;
      }
      break;
  }
  // No connection left stuck half-way.
  for (const auto& x : cs) {
    EXPECT_TRUE(field(x, "phase") == "none" || field(x, "phase").empty()) << ctx;
  }
}

// Default peer_credits 8 and 257 fragments (O2_MAX_FRAGS): the rejecter
// advertises smaller (or not smaller / invalid) values.
const RejectCase kRejectCases[] = {
    {"conn_race", "conn_race", "--count 1", Outcome::kRetried},
    {"no_resources", "no_resources", "--count 1", Outcome::kRetried},
    {"early", "early", "--count 1", Outcome::kRetried},
    {"conn_stale", "conn_stale", "--count 1", Outcome::kRetried},
    {"msg_queue_size", "msg_queue_size", "--count 1 --queue-depth 4", Outcome::kRenegotiated, 4},
    {"rdma_frags", "rdma_frags", "--count 1 --frags 16", Outcome::kRenegotiated, 0, 16},
    {"conn_uncompat", "conn_uncompat", "--count 1 --queue-depth 4 --frags 16",
     Outcome::kRenegotiated, 4, 16},
    // a queue depth / frags not smaller than ours: no retry (o2ctl refuses
    // --frags above 257, so an invalid value is not reachable from here)
    {"msg_queue_size_not_smaller", "msg_queue_size", "--count 1 --queue-depth 16", Outcome::kFails,
     0, 0, 1},
    {"rdma_frags_not_smaller", "rdma_frags", "--count 1 --frags 257", Outcome::kFails, 0, 0, 1},
    // renegotiation is adopted once: a second reject ends it
    {"msg_queue_size_twice", "msg_queue_size", "--queue-depth 4", Outcome::kFails, 0, 0, 2},
    // retried after a backoff, at most 3 times
    {"no_resources_persistent", "no_resources", "", Outcome::kFails, 0, 0, 4},
    {"fatal", "fatal", "", Outcome::kRefused, 0, 0, 1},
    {"invalid_srv_id", "invalid_srv_id", "", Outcome::kRefused, 0, 0, 1},
};

INSTANTIATE_TEST_SUITE_P(Connect, EachRejectReason, ::testing::ValuesIn(kRejectCases),
                         [](const ::testing::TestParamInfo<RejectCase>& i) {
                           return std::string(i.param.name);
                         });

// --- d: per-phase deadlines ------------------------------------------------

struct PhaseCase {
  const char* phase;
  int timeout_s;  // module parameter timeout; deadline = max(5 s, timeout / 10)
};
void PrintTo(const PhaseCase& c, std::ostream* os) { *os << c.phase << "/" << c.timeout_s; }
std::string phase_case_name(const ::testing::TestParamInfo<PhaseCase>& i) {
  return std::string(i.param.phase) + "_timeout" + std::to_string(i.param.timeout_s);
}
int deadline_ms(int timeout_s) { return std::max(5000, timeout_s * 1000 / 10); }

O2_CONNECT_SUITE(StuckConnectVeth);
class StuckConnect : public StuckConnectVeth, public ::testing::WithParamInterface<PhaseCase> {};

TEST_P(StuckConnect, IsAbortedByItsDeadline) {
  const PhaseCase& c = GetParam();
  const int dl = deadline_ms(c.timeout_s);
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod_with(g, kBoth, "timeout=" + std::to_string(c.timeout_s)).ok())
      << bed().test_log();
  // A's first connect ignores the event that ends phase c.phase.
  ASSERT_GT(add_fault(g, std::string("stall ") + c.phase + " --local " + kA + " --count 1"), 0);
  auto ping = std::async(std::launch::async, [&] {
    return o2ctl(g, std::string("ping ") + kB + " --source " + kA + " --timeout 60", 120);
  });
  // While stuck: A's active connect sits in that phase with its deadline.
  usleep(2 * 1000 * 1000);
  std::vector<Record> stuck = conns(g, std::string("--peer ") + kB);
  Record ab = conn_of(stuck, kA, kB);
  EXPECT_EQ(field(ab, "phase"), c.phase) << dump(stuck);
  EXPECT_EQ(field(ab, "state"), "active_connect") << dump(stuck);
  EXPECT_GT(num(ab, "deadline ms"), 0) << dump(stuck);
  EXPECT_LE(num(ab, "deadline ms"), dl) << dump(stuck);

  RunResult r = ping.get();
  Record pa = peer(g, kA, kB);
  std::vector<Record> cs = conns(g);
  std::string ctx = r.out + dump({pa}) + "conns:\n" + dump(cs);
  figure(std::string("stuck_") + c.phase + "_ping_seconds", std::to_string(r.seconds));
  EXPECT_EQ(r.status, 0) << "the ping must succeed once the deadline aborted the stuck connect\n"
                         << ctx;
  // It was the deadline (not something quicker) that ended the stall...
  EXPECT_GE(r.seconds, dl / 1000.0 * 0.8) << ctx;
  // ...and the retry followed soon after it.
  EXPECT_LT(r.seconds, dl / 1000.0 + 15) << ctx;
  EXPECT_GE(num(pa, "phase timeouts"), 1) << ctx;
  for (const auto& x : cs) {
    EXPECT_NE(field(x, "phase"), c.phase) << "a connection is still in the stalled phase\n" << ctx;
  }
  EXPECT_EQ(field(conn_of(cs, kA, kB), "state"), "established") << ctx;
}

// addr and route at timeout=20 (5 s deadlines, quick); connect at
// timeout=80, where the tenth (8 s) is above the 5 s floor.
const PhaseCase kStallPhases[] = {{"addr", 20}, {"route", 20}, {"connect", 80}};
INSTANTIATE_TEST_SUITE_P(Connect, StuckConnect, ::testing::ValuesIn(kStallPhases), phase_case_name);

// --- e: LU-7646 in one guest -----------------------------------------------

O2_CONNECT_SUITE(RaceVeth);
class RaceWithAStuckConnect : public RaceVeth, public ::testing::WithParamInterface<const char*> {};

TEST_P(RaceWithAStuckConnect, Resolves) {
  const std::string phase = GetParam();
  Guest& g = guest("g1");
  // Default timeout 50: the stuck connect's own deadline is 12.5 s away, so
  // a quick success below comes from the race window, not the deadline.
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  // Every connect of B hangs in this phase (until its deadline), before
  // its CONNREQ reaches A: A does not know of it, as in LU-7646.  (The
  // connect phase itself is not a case here: a CONNREQ parked by
  // `cm-drop connect_request` on A is known to A, which then rightly waits
  // for that passive connection instead of racing it.)
  ASSERT_GT(add_fault(g, "stall " + phase + " --local " + kB), 0);
  auto b_ping = std::async(std::launch::async, [&] {
    return o2ctl(g, std::string("ping ") + kA + " --source " + kB + " --timeout 40", 90);
  });
  usleep(2500 * 1000);  // B's connect is now older than the ~1 s race window
  std::vector<Record> cs = conns(g, std::string("--peer ") + kA);
  Record ba = conn_of(cs, kB, kA);
  EXPECT_EQ(field(ba, "phase"), phase) << "B's connect is not stuck as intended\n" << dump(cs);

  // The lower NID connects to the higher one, whose own connect is stuck.
  RunResult r = o2ctl(g, std::string("ping ") + kB + " --source " + kA + " --timeout 30", 60);
  Record pa = peer(g, kA, kB), pb = peer(g, kB, kA);
  std::string ctx = r.out + dump({pa, pb});
  figure("race_stuck_" + phase + "_ping_seconds", std::to_string(r.seconds));
  figure("race_stuck_" + phase + "_races_received_by_A", field(pa, "races received"));
  EXPECT_EQ(r.status, 0) << ctx;
  EXPECT_LT(r.seconds, 6) << "not resolved at once (B's deadline is 12.5 s)\n" << ctx;
  // B's request never left: to A there is no race, and B withdraws its
  // connect instead of rejecting A's (o2iblnd: up to 20 CONN_RACE rejects).
  EXPECT_EQ(num(pa, "races received"), 0) << ctx;
  EXPECT_EQ(num(pb, "races sent"), 0) << ctx;

  // B's stuck connect was aborted and B's own ping used the accepted one.
  RunResult rb = b_ping.get();
  EXPECT_EQ(rb.status, 0) << rb.out;
  cs = conns(g);
  for (const auto& x : cs) {
    EXPECT_NE(field(x, "phase"), phase) << "the stuck connect is still there\n" << dump(cs);
  }
  EXPECT_EQ(field(conn_of(cs, kA, kB), "state"), "established") << dump(cs);
  EXPECT_EQ(field(conn_of(cs, kB, kA), "state"), "established") << dump(cs);
}

INSTANTIATE_TEST_SUITE_P(Connect, RaceWithAStuckConnect, ::testing::Values("addr", "route"),
                         param_name);

// --- f: rmmod in every connect phase and under traffic ---------------------

O2_CONNECT_SUITE(RmmodVeth);
class RmmodFinishes : public RmmodVeth, public ::testing::WithParamInterface<const char*> {};

TEST_P(RmmodFinishes, InEveryConnectPhaseAndUnderTraffic) {
  const std::string c = GetParam();
  Guest& g = guest("g1");
  const double kRmmodBound = 10;  // a requirement, not a benchmark
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  const std::string ping_ab = std::string("ping ") + kB + " --source " + kA;
  double rmmod_s = 0;
  if (c == "ping_flood") {
    // Pings both ways back to back in two loops; rmmod is retried every
    // 50 ms (it fails with EBUSY while an o2ctl holds /dev/o2lnd open).
    std::string o2 = sh_quote(o2ctl_path());
    std::string cmd = "for d in '" + std::string(kB) + " --source " + kA + "' '" + kA +
                      " --source " + kB + "'; do (while [ ! -e /tmp/stop-flood ]; do " + o2 +
                      " ping $d --timeout 2 >/dev/null 2>&1; done) & done; sleep 3; "
                      "for i in $(seq 400); do s=$(date +%s.%N); if rmmod o2lnd 2>/dev/null; then "
                      "e=$(date +%s.%N); echo rmmod_ok tries=$i $(awk -v s=$s -v e=$e 'BEGIN { "
                      "printf \"seconds=%.3f\", e - s }'); break; fi; "
                      "sleep 0.05; done; touch /tmp/stop-flood; wait; rm -f /tmp/stop-flood";
    RunResult r = run(g, cmd, 120);
    auto pos = r.out.find("rmmod_ok");
    ASSERT_NE(pos, std::string::npos) << "rmmod never succeeded under the flood:\n" << r.out;
    auto w = words(r.out.substr(pos));
    rmmod_s = std::strtod(w["seconds"].c_str(), nullptr);
    figure("rmmod_under_flood_tries", w["tries"]);
  } else {
    if (c == "parked_connect_request") {
      ASSERT_GT(add_fault(g, std::string("cm-drop connect_request --local ") + kB), 0);
    } else {
      ASSERT_GT(add_fault(g, "stall " + c + " --local " + kA), 0);
    }
    // The ping gives up; the connect stays stuck (its deadline is 12.5 s).
    RunResult r = o2ctl(g, ping_ab + " --timeout 2", 60);
    EXPECT_NE(r.status, 0) << r.out;
    std::vector<Record> cs = conns(g);
    EXPECT_EQ(field(conn_of(cs, kA, kB), "phase"),
              c == "parked_connect_request" ? std::string("connect") : c)
        << dump(cs);
    RunResult rm = rmmod(g, 60);
    EXPECT_TRUE(rm.ok()) << rm.out;
    rmmod_s = rm.seconds;
  }
  figure("rmmod_" + c + "_seconds", std::to_string(rmmod_s));
  EXPECT_LT(rmmod_s, kRmmodBound);
  RdmaRes now = wait_rdma_res(g, RdmaRes{0, 0}, 10);
  EXPECT_EQ(now, (RdmaRes{0, 0})) << run(g, "rdma res show qp; rdma res show cm_id", 30).out;
  // Loading again works (and the fault rules went with the module).
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  expect_ping_ok(g, kB, std::string("--source ") + kA + " --timeout 20");
}

INSTANTIATE_TEST_SUITE_P(Connect, RmmodFinishes,
                         ::testing::Values("addr", "route", "connect", "parked_connect_request",
                                           "ping_flood"),
                         param_name);

}  // namespace
}  // namespace o2it
