// Credit-based tx scheduling (issue 5): LNet-level peer and NI tx credits,
// o2iblnd connection credits, bounded queues, peer health, keepalive NOOPs
// and Send completions, seen through o2ctl's YAML (`conn show`, `peer show
// -v`, `net show -v`) and `o2ctl selftest ping`.
//
//   CreditsVeth (veth): one guest, NI A = 192.168.1.1@o2ib0 (veth0/rxe0),
//     NI B = 192.168.1.2@o2ib0 (veth1/rxe1): both ends of every connection
//     in one module, so `conn show` lists both and their credits can be
//     matched (A's credits + B's outstanding = queue depth when idle).
//   CreditsTwoGuests (two): g1 192.168.1.1 <-> g2 192.168.1.2; g2 is paused
//     (QEMU `stop`) to play a peer that stops answering without closing.
//
// Field names: the exact key paths o2ctl prints (fixture.h's Record):
// "queue depth" of a conn, "tx credits" of a peer, "tx_credits.available"
// of an NI of `net show -v`; a missing field is a test failure that names
// it.  The unit test IntegrationKeys checks that each is in o2ctl's output.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fixture.h"
#include <yaml-cpp/yaml.h>

namespace o2it {
namespace {

constexpr const char* kA = "192.168.1.1@o2ib0";  // veth0 (g1 eth0 in `two`)
constexpr const char* kB = "192.168.1.2@o2ib0";  // veth1 (g2 eth0 in `two`)
constexpr const char* kBoth = "o2ib0(veth0,veth1)";
constexpr const char* kEth = "o2ib0(eth0)";

// Messages to a peer that failed so far: timed out (the peer's counter)
// or failed otherwise (its NI's error count; 0 when a field is missing).
int64_t message_failures(const Record& peer, const Record* ni) {
  int64_t t = field_int(peer, "tx timeouts");
  int64_t e = ni != nullptr ? field_int(*ni, "statistics.error_count") : kMissingField;
  return (t == kMissingField ? 0 : t) + (e == kMissingField ? 0 : e);
}

// Keys of a conn (`conn show`).
constexpr const char* kQd = "queue depth";
constexpr const char* kCredits = "credits";
constexpr const char* kOutstanding = "outstanding";
constexpr const char* kReserved = "reserved credits";
constexpr const char* kPosted = "posted";
constexpr const char* kCsends = "concurrent sends";
constexpr const char* kSqSize = "sq size";
constexpr const char* kSqFree = "sq free";
constexpr const char* kNoopsPosted = "noops posted";
constexpr const char* kNoopsQueued = "noops queued";
constexpr const char* kKeepalives = "keepalives";
// A conn's and a peer's (`peer show -v`) messages waiting.
constexpr const char* kTxq = "tx queued";
// Keys of a peer.
constexpr const char* kTxc = "tx credits";
constexpr const char* kTxcMax = "tx credits max";
constexpr const char* kTxcMin = "tx credits min";
constexpr const char* kCreditQueued = "credit queued";
// Keys of an NI (`net show -v`).
constexpr const char* kNiTxc = "tx_credits.available";
constexpr const char* kNiTxcMax = "tx_credits.max";
constexpr const char* kNiTxcMin = "tx_credits.min";
constexpr const char* kNiTxq = "tx_credits.queued";
constexpr const char* kTxLive = "lnd details.tx_live";
constexpr const char* kNtx = "tunables.ntx";
constexpr const char* kEarly = "statistics.early_replies";

// One sample of o2ctl's views of g: conns, peers, o2ib NIs (one agent call).
struct Sample {
  std::vector<Record> conns, peers, nis;
  std::map<std::string, int64_t> extra;  // "qp", "Slab", "SUnreclaim" (kB)
  bool ok = false;
  std::string raw;
};

O2_SUITE_CLASS(
    CreditsVeth, "veth", void TearDown() override {
      if (bed().tb() != nullptr && guest("g1").alive()) {
        o2ctl(guest("g1"), "fault del all", 30);
        expect_unload_frees_rdma(guest("g1"));
      }
      TopologyTest::TearDown();
    });

O2_SUITE_CLASS(
    CreditsTwoGuests, "two", void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"g1", "g2"}) {
          Guest& g = guest(n);
          if (g.paused() && g.alive()) g.resume();
          if (!g.alive()) continue;
          o2ctl(g, "fault del all", 30);
          expect_unload_frees_rdma(g);
        }
      }
      TopologyTest::TearDown();
    });

// --- helpers shared by both suites ------------------------------------------

std::string sample_cmd() {
  std::string o = sh_quote(o2ctl_path());
  return o + " conn show && " + o + " peer show -v && " + o +
         " net show -v && echo \"qp: $(rdma res show qp | grep -vc 'type GSI')\" && "
         "grep -E '^(Slab|SUnreclaim):' /proc/meminfo | tr -d ' kB' | sed 's/:/: /'";
}

Sample parse_sample(const RunResult& r) {
  Sample s;
  s.raw = r.out;
  s.ok = r.ok();
  if (!s.ok) return s;
  try {
    // conn:, peer:, net: and the "qp: N", "Slab: N" lines: one mapping.
    YAML::Node y = YAML::Load(r.out);
    std::string error;
    s.conns = o2ctl_yaml::entries(y["conn"], error);
    s.peers = o2ctl_yaml::entries(y["peer"], error);
    for (auto& ni : o2ctl_yaml::net_nis(y["net"], error)) {
      if (field(ni, "nid").find("@o2ib") != std::string::npos) s.nis.push_back(ni);  // not 0@lo
    }
    if (!error.empty()) {
      ADD_FAILURE() << "o2ctl output: " << error << ":\n" << r.out;
      s.ok = false;
    }
    for (const char* k : {"qp", "Slab", "SUnreclaim"}) {
      if (y[k].IsScalar()) s.extra[k] = y[k].as<int64_t>();
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "o2ctl output does not parse as YAML: " << e.what() << "\n" << r.out;
    s.ok = false;
  }
  return s;
}

const Record* find_conn(const Sample& s, const std::string& local, const std::string& peer) {
  const Record* best = nullptr;
  for (const auto& c : s.conns) {
    if (field(c, "local nid") != local || field(c, "peer") != peer) continue;
    if (field(c, "state") == "established") return &c;
    best = &c;
  }
  return best;
}

const Record* find_peer(const Sample& s, const std::string& local, const std::string& nid) {
  for (const auto& p : s.peers) {
    if (field(p, "local nid") == local && field(p, "nid") == nid) return &p;
  }
  return nullptr;
}

const Record* find_ni(const Sample& s, const std::string& nid) {
  for (const auto& n : s.nis) {
    if (field(n, "nid") == nid) return &n;
  }
  return nullptr;
}

std::string selftest_cmd(const std::string& target, const std::string& from,
                         const std::string& args) {
  return sh_quote(o2ctl_path()) + " selftest ping " + target +
         (from.empty() ? "" : " --from " + from) + " " + args + " -y";
}

// A selftest's YAML must parse; says why not.
void expect_parsed(const Selftest& s, const std::string& what) {
  EXPECT_TRUE(s.error.empty()) << what << ": " << s.error << " (status " << s.run.status << "):\n"
                               << s.text();
}

// --- CreditsVeth --------------------------------------------------------------

// A flood of small RPCs both ways at once (32 in flight each way against 8
// peer credits and 64 NI credits) queues messages below zero credits; on
// every sample every counter stays in its bounds, and once the floods end
// every credit is back where it started, on both ends of the connection.
TEST_F(CreditsVeth, CreditsFloodBothWaysKeepsInvariants) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod_with(g, kBoth, "peer_credits=8 concurrent_sends=8 credits=64").ok())
      << bed().test_log();
  expect_ping_ok(g, kB, std::string("--source ") + kA);
  const int seconds = o2tb::timeout_scale() > 1 ? 8 : 20;
  const std::string args = "--concurrency 32 --duration " + std::to_string(seconds);
  auto flood = [&](const char* to, const char* from) {
    return std::async(std::launch::async, [&g, to, from, args, seconds] {
      return g.run(selftest_cmd(to, from, args), seconds + 120.0);
    });
  };
  auto t0 = std::chrono::steady_clock::now();
  auto ab = flood(kB, kA);
  auto ba = flood(kA, kB);

  int samples = 0, checked_conns = 0;
  int64_t min_credits = INT64_MAX;
  auto check_sample = [&](const Sample& s) {
    for (const auto& c : s.conns) {
      int64_t qd = field_int(c, kQd);
      if (qd <= 0) continue;  // not negotiated yet
      checked_conns++;
      int64_t cr = need(c, kCredits), out = need(c, kOutstanding), res = need(c, kReserved);
      min_credits = std::min(min_credits, cr);
      EXPECT_TRUE(cr >= 0 && cr <= qd) << "credits out of 0..queue depth:\n" << dump_record(c);
      EXPECT_TRUE(out >= 0 && out <= qd) << "outstanding out of 0..queue depth:\n"
                                         << dump_record(c);
      EXPECT_TRUE(res >= 0 && res <= qd) << "reserved out of 0..queue depth:\n" << dump_record(c);
      EXPECT_LE(need(c, kPosted), need(c, kCsends)) << "posted > concurrent sends:\n"
                                                    << dump_record(c);
      EXPECT_LE(need(c, kSqFree), need(c, kSqSize)) << dump_record(c);
      EXPECT_LE(need(c, kNoopsPosted), 2) << "more than 2 NOOPs posted:\n" << dump_record(c);
    }
    for (const auto& p : s.peers) {
      int64_t tc = need(p, kTxc), mn = need(p, kTxcMin), mx = need(p, kTxcMax);
      EXPECT_GE(tc, mn) << "peer tx credits below their minimum:\n" << dump_record(p);
      EXPECT_LE(tc, mx) << "peer tx credits above their maximum:\n" << dump_record(p);
    }
    for (const auto& n : s.nis) {
      EXPECT_GE(need(n, kNiTxc), need(n, kNiTxcMin)) << dump_record(n);
      EXPECT_LE(need(n, kNiTxc), need(n, kNiTxcMax)) << dump_record(n);
      EXPECT_LE(need(n, kTxLive), need(n, kNtx)) << dump_record(n);
    }
  };
  while (ab.wait_for(std::chrono::milliseconds(500)) != std::future_status::ready ||
         ba.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    if (since(t0) > seconds + 150.0 * o2tb::timeout_scale()) break;
    Sample s = parse_sample(run(g, sample_cmd(), 30));
    if (!s.ok) continue;  // the guest is busy: a late sample is no sample
    samples++;
    check_sample(s);
    if (HasFailure()) break;  // one sample's failures say it all
  }
  Selftest s_ab = parse_selftest(ab.get());
  Selftest s_ba = parse_selftest(ba.get());
  expect_parsed(s_ab, "selftest A->B");
  expect_parsed(s_ba, "selftest B->A");
  EXPECT_EQ(s_ab.at("errors.total"), 0) << s_ab.text();
  EXPECT_EQ(s_ba.at("errors.total"), 0) << s_ba.text();
  EXPECT_GT(s_ab.at("rpcs"), 0) << s_ab.text();
  EXPECT_GT(s_ba.at("rpcs"), 0) << s_ba.text();
  // (the debug kernel is ~6x slower: one sample there can take seconds)
  EXPECT_GE(samples, o2tb::timeout_scale() > 1 ? 1 : 3) << "too few samples during the flood";

  // Quiescence: every credit back.
  usleep(3 * 1000 * 1000);
  Sample q = parse_sample(run(g, sample_cmd(), 60));
  ASSERT_TRUE(q.ok) << q.raw;
  check_sample(q);
  const Record* a = find_conn(q, kA, kB);
  const Record* b = find_conn(q, kB, kA);
  ASSERT_TRUE(a != nullptr && b != nullptr) << "no connection A->B and B->A:\n" << dump(q.conns);
  EXPECT_EQ(field(*a, "state"), "established") << dump_record(*a);
  EXPECT_EQ(field(*b, "state"), "established") << dump_record(*b);
  int64_t qd = need(*a, kQd);
  EXPECT_EQ(need(*b, kQd), qd);
  EXPECT_EQ(need(*a, kCredits) + need(*b, kOutstanding), qd) << dump_record(*a) << dump_record(*b);
  EXPECT_EQ(need(*b, kCredits) + need(*a, kOutstanding), qd) << dump_record(*a) << dump_record(*b);
  for (const Record* c : {a, b}) {
    EXPECT_EQ(need(*c, kPosted), 0) << dump_record(*c);
    EXPECT_EQ(need(*c, kNoopsQueued), 0) << dump_record(*c);
    EXPECT_EQ(need(*c, kTxq), 0) << dump_record(*c);
  }
  int64_t peer_min = INT64_MAX, ni_min = INT64_MAX;
  for (const auto& p : q.peers) {
    EXPECT_EQ(need(p, kTxc), need(p, kTxcMax)) << "peer credits not back:\n" << dump_record(p);
    EXPECT_EQ(need(p, kCreditQueued), 0) << dump_record(p);
    peer_min = std::min(peer_min, need(p, kTxcMin));
  }
  EXPECT_LT(peer_min, 0) << "the flood never queued for a peer credit:\n" << dump(q.peers);
  ASSERT_EQ(q.nis.size(), 2U) << q.raw;
  for (const auto& n : q.nis) {
    EXPECT_EQ(need(n, kNiTxc), need(n, kNiTxcMax)) << "NI credits not back:\n" << dump_record(n);
    EXPECT_EQ(need(n, kNiTxcMax), 64) << dump_record(n);
    EXPECT_EQ(need(n, kNiTxq), 0) << dump_record(n);
    EXPECT_EQ(need(n, kTxLive), 0) << dump_record(n);
    ni_min = std::min(ni_min, need(n, kNiTxcMin));
  }
  figure("samples_checked", std::to_string(samples));
  figure("conn_entries_checked", std::to_string(checked_conns));
  figure("min_conn_credits_seen", std::to_string(min_credits));
  figure("peer_tx_credits_min", std::to_string(peer_min));
  figure("ni_tx_credits_min", std::to_string(ni_min));
  figure("rpcs_a_to_b", std::to_string(static_cast<int64_t>(s_ab.at("rpcs"))));
  figure("rpcs_b_to_a", std::to_string(static_cast<int64_t>(s_ba.at("rpcs"))));
}

// With Send completions held back 300 ms on NI A, a ping from A cannot
// complete before its request's Send completion, even though the reply
// (whose arrival proves the Send done) comes much earlier: every RTT is
// at least the delay, and the NI counts the early replies.  Deleting the
// rule gives every credit back.
TEST_F(CreditsVeth, LateSendCompletionsNeverCompleteEarly) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBoth).ok()) << bed().test_log();
  expect_ping_ok(g, kB, std::string("--source ") + kA);
  Sample s0 = parse_sample(run(g, sample_cmd(), 30));
  ASSERT_TRUE(s0.ok) << s0.raw;
  const Record* ni0 = find_ni(s0, kA);
  ASSERT_NE(ni0, nullptr) << s0.raw;
  int64_t early0 = need(*ni0, kEarly);
  int id = add_fault(g, std::string("send-delay --delay 300 --local ") + kA);
  ASSERT_GT(id, 0);

  // 20 pings, each timed in the guest (ms, o2ctl's start-up included).
  RunResult r = run(g,
                    "for i in $(seq 20); do s=$(date +%s%N); " + sh_quote(o2ctl_path()) + " ping " +
                        kB + " --source " + kA +
                        " --timeout 20 >/dev/null || echo FAIL; "
                        "e=$(date +%s%N); echo rtt_ms $(( (e - s) / 1000000 )); done",
                    300);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  int n = 0;
  int64_t min_ms = INT64_MAX;
  for (const auto& l : lines_of(r.out)) {
    long long ms = 0;
    if (std::sscanf(l.c_str(), "rtt_ms %lld", &ms) != 1) continue;
    n++;
    min_ms = std::min<int64_t>(min_ms, ms);
    EXPECT_GE(ms, 300) << "a ping completed before its Send completion:\n" << r.out;
  }
  EXPECT_EQ(n, 20) << r.out;
  // The same through selftest: its latency is the module's (no process
  // start-up in it).
  Selftest st = parse_selftest(
      run(g, selftest_cmd(kB, kA, "--concurrency 1 --count 10 --timeout 20000"), 300));
  expect_parsed(st, "selftest with send-delay");
  EXPECT_EQ(st.at("errors.total"), 0) << st.text();
  EXPECT_GE(st.at("latency_us.min"), 300000) << st.text();

  Sample s1 = parse_sample(run(g, sample_cmd(), 30));
  ASSERT_TRUE(s1.ok) << s1.raw;
  const Record* ni1 = find_ni(s1, kA);
  ASSERT_NE(ni1, nullptr) << s1.raw;
  int64_t early = need(*ni1, kEarly) - early0;
  EXPECT_GT(early, 0) << "no early replies counted on " << kA << ":\n" << dump_record(*ni1);

  // Credits return once the rule is gone.
  EXPECT_TRUE(o2ctl(g, "fault del " + std::to_string(id), 30).ok());
  expect_ping_ok(g, kB, std::string("--source ") + kA);
  usleep(2 * 1000 * 1000);
  Sample q = parse_sample(run(g, sample_cmd(), 30));
  ASSERT_TRUE(q.ok) << q.raw;
  const Record* a = find_conn(q, kA, kB);
  const Record* b = find_conn(q, kB, kA);
  ASSERT_TRUE(a != nullptr && b != nullptr) << dump(q.conns);
  int64_t qd = need(*a, kQd);
  EXPECT_EQ(need(*a, kCredits) + need(*b, kOutstanding), qd) << dump_record(*a) << dump_record(*b);
  EXPECT_EQ(need(*b, kCredits) + need(*a, kOutstanding), qd) << dump_record(*a) << dump_record(*b);
  EXPECT_EQ(need(*a, kPosted), 0) << dump_record(*a);
  for (const auto& p : q.peers) {
    EXPECT_EQ(need(p, kTxc), need(p, kTxcMax)) << dump_record(p);
  }
  for (const auto& ni : q.nis) {
    EXPECT_EQ(need(ni, kNiTxc), need(ni, kNiTxcMax)) << dump_record(ni);
    EXPECT_EQ(need(ni, kTxLive), 0) << dump_record(ni);
  }
  figure("min_ping_rtt_ms", std::to_string(min_ms));
  figure("selftest_min_latency_us", std::to_string(static_cast<int64_t>(st.at("latency_us.min"))));
  figure("early_replies", std::to_string(early));
}

// keepalive=1: an idle established connection sends a NOOP every idle
// second and stays up; keepalive=0 sends none.
TEST_F(CreditsVeth, KeepaliveNoopsFlowOnIdleConnections) {
  Guest& g = guest("g1");
  auto keepalives_after_idle = [&](const char* params, int64_t& most, bool& established) {
    ASSERT_TRUE(insmod_with(g, kBoth, params).ok()) << bed().test_log();
    expect_ping_ok(g, kB, std::string("--source ") + kA);
    usleep(5 * 1000 * 1000);
    auto cs = conns(g);
    most = 0;
    established = false;
    for (const auto& c : cs) {
      most = std::max(most, need(c, kKeepalives));
      if (field(c, "state") == "established") established = true;
    }
    EXPECT_TRUE(established) << params << ":\n" << dump(cs);
    expect_unload_frees_rdma(g);
  };
  int64_t on = 0, off = 0;
  bool est_on = false, est_off = false;
  keepalives_after_idle("keepalive=1", on, est_on);
  EXPECT_GE(on, 2) << "keepalive=1: fewer than 2 keepalive NOOPs in 5 idle seconds";
  keepalives_after_idle("keepalive=0", off, est_off);
  EXPECT_EQ(off, 0) << "keepalive=0 sent keepalive NOOPs";
  figure("keepalives_in_5s_idle", std::to_string(on));
}

// Each bad value or combination of the credit parameters fails insmod with
// a dmesg line "o2lnd: ..." that names the parameter; a valid set loads.
TEST_F(CreditsVeth, BadParametersAreRefusedWithAClearError) {
  Guest& g = guest("g1");
  struct Case {
    const char* params;
    const char* names;  // the parameter the message must name
  };
  const Case cases[] = {
      {"peer_credits=1", "peer_credits"},
      {"peer_credits=8 peer_credits_hiw=8", "peer_credits_hiw"},
      {"peer_credits=8 concurrent_sends=100", "concurrent_sends"},
      {"ntx=16 credits=64", "ntx"},
      {"keepalive=-1", "keepalive"},
      {"timeout=-1", "timeout"},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.params);
    std::string mark = "o2-credits-bad-param-" + std::to_string(n++);
    run(g, "echo " + mark + " > /dev/kmsg", 10);
    RunResult r = insmod_with(g, kBoth, c.params, 60);
    EXPECT_NE(r.status, 0) << "accepted: " << c.params;
    RunResult log = run(g, "dmesg | sed -n '/" + mark + "/,$p' | grep 'o2lnd:'", 10);
    bool named = false;
    for (const auto& l : lines_of(log.out)) {
      if (l.find(c.names) != std::string::npos) named = true;
    }
    EXPECT_TRUE(named) << "no 'o2lnd:' dmesg line naming " << c.names << ":\n" << log.out;
    if (r.status == 0) run(g, "rmmod o2lnd", 30);
    EXPECT_TRUE(run(g, "! grep -q '^o2lnd ' /proc/modules", 10).ok()) << "module left loaded";
  }
  const char* good =
      "peer_credits=8 peer_credits_hiw=7 concurrent_sends=16 credits=64 ntx=64 timeout=50 "
      "keepalive=0";
  ASSERT_TRUE(insmod_with(g, kBoth, good).ok()) << good << "\n" << bed().test_log();
  RunResult v = run(g, "cat /sys/module/o2lnd/parameters/{peer_credits_hiw,concurrent_sends,ntx}");
  EXPECT_EQ(v.out, "7\n16\n64\n") << v.out;
  expect_ping_ok(g, kB, std::string("--source ") + kA);
}

// --- CreditsTwoGuests ---------------------------------------------------------

// g2 stops answering (paused: no disconnect, no reject, nothing) under a
// flood from g1.  g1's queues stay bounded (txs by ntx, queued messages
// by credits, connections and QPs by 2, slab flat), its messages fail
// within the timeout, the peer is marked down; after g2 resumes a ping
// gets through, the peer is up and its credits are all back.
TEST_F(CreditsTwoGuests, PeerThatStopsAnsweringFailsMessagesWithinTimeoutAndRecovers) {
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  const int timeout = 10, credits = 32, ntx = 64;
  const std::string params = "timeout=" + std::to_string(timeout) +
                             " credits=" + std::to_string(credits) + " ntx=" + std::to_string(ntx);
  ASSERT_TRUE(insmod_with(g1, kEth, params).ok()) << bed().test_log();
  ASSERT_TRUE(insmod_with(g2, kEth, params).ok()) << bed().test_log();
  expect_ping_ok(g1, kB, "--timeout 20");

  const int duration = 60;
  auto flood = std::async(std::launch::async, [&g1, duration] {
    return g1.run(
        selftest_cmd(
            kB, "", "--concurrency 32 --duration " + std::to_string(duration) + " --timeout 15000"),
        duration + 180.0);
  });
  usleep(3 * 1000 * 1000);
  Sample before = parse_sample(run(g1, sample_cmd(), 30));
  ASSERT_TRUE(before.ok) << before.raw;
  const Record* p0 = find_peer(before, kA, kB);
  ASSERT_NE(p0, nullptr) << before.raw;
  const int64_t fails0 = message_failures(*p0, find_ni(before, kA));
  const int64_t downs0 = need(*p0, "downs");
  const int64_t slab0 = before.extra["SUnreclaim"];

  PausedGuest paused(g2);
  auto t_pause = std::chrono::steady_clock::now();
  double first_failure = -1, down_at = -1;
  std::string health_seen;  // the health values sampled, in order, repeats folded
  int64_t max_queued = 0, max_live = 0, max_conns = 0, max_qp = 0, max_slab_delta = 0;
  while (since(t_pause) < 25) {
    Sample s = parse_sample(run(g1, sample_cmd(), 30));
    if (!s.ok) continue;
    double t = since(t_pause);
    const Record* ni = find_ni(s, kA);
    ASSERT_NE(ni, nullptr) << s.raw;
    int64_t live = need(*ni, kTxLive);
    max_live = std::max(max_live, live);
    EXPECT_LE(live, ntx) << "more txs alive than ntx:\n" << dump_record(*ni);
    const Record* p = find_peer(s, kA, kB);
    if (p != nullptr) {
      int64_t queued = need(*p, kCreditQueued) + need(*p, kTxq);
      max_queued = std::max(max_queued, queued);
      EXPECT_LE(queued, credits) << "more messages queued for the peer than credits:\n"
                                 << dump_record(*p);
      int64_t fails = message_failures(*p, ni);
      if (first_failure < 0 && fails > fails0) first_failure = t;
      std::string h = field(*p, "health");
      health_seen += health_seen.empty() || !health_seen.ends_with(h) ? " " + h : "";
      // down now, or it went down (and maybe up) between two samples
      if (down_at < 0 && (h == "down" || h == "1" || need(*p, "downs") > downs0)) down_at = t;
    }
    int64_t nconns = 0;
    for (const auto& c : s.conns) nconns += field(c, "peer") == kB ? 1 : 0;
    max_conns = std::max(max_conns, nconns);
    EXPECT_LE(nconns, 2) << dump(s.conns);
    max_qp = std::max(max_qp, s.extra["qp"]);
    EXPECT_LE(s.extra["qp"], 2) << s.raw;
    max_slab_delta = std::max(max_slab_delta, s.extra["SUnreclaim"] - slab0);
    usleep(1000 * 1000);
  }
  EXPECT_GE(first_failure, 0) << "no message to the paused peer failed (timed out or errored) "
                                 "in 25 s";
  EXPECT_LE(first_failure, timeout + 10.0) << "first message failure later than timeout + 10 s";
  EXPECT_GE(down_at, 0) << "the paused peer was never marked down (health seen:" << health_seen
                        << ")";
  EXPECT_LT(max_slab_delta, 8192) << "SUnreclaim grew by " << max_slab_delta << " kB";

  paused.resume();
  auto t_resume = std::chrono::steady_clock::now();
  double recovered = -1;
  while (since(t_resume) < 30) {
    if (o2ctl(g1, std::string("ping ") + kB + " --timeout 5", 30).ok()) {
      recovered = since(t_resume);
      break;
    }
  }
  EXPECT_GE(recovered, 0) << "no ping got through within 30 s of the resume";
  Record p = peer(g1, kA, kB);
  EXPECT_EQ(field(p, "health") == "up" || field(p, "health") == "0", true) << dump_record(p);

  Selftest st = parse_selftest(flood.get());
  expect_parsed(st, "selftest flood");
  EXPECT_GT(st.at("errors.expired", 0) + st.at("errors.dropped", 0), 0)
      << "no RPC failed while the peer was paused:\n"
      << st.text();
  usleep(3 * 1000 * 1000);
  p = peer(g1, kA, kB);
  EXPECT_EQ(need(p, kTxc), need(p, kTxcMax)) << "credits not restored:\n" << dump_record(p);
  EXPECT_EQ(need(p, kCreditQueued), 0) << dump_record(p);

  figure("first_failure_after_pause_s", std::to_string(first_failure));
  figure("marked_down_after_s", std::to_string(down_at));
  figure("health_seen_while_paused", health_seen);
  for (const char* e : {"total", "expired", "dropped", "refused", "other"}) {
    figure(std::string("rpc_errors_") + e,
           std::to_string(static_cast<int64_t>(st.at(std::string("errors.") + e))));
  }
  figure("rpcs", std::to_string(static_cast<int64_t>(st.at("rpcs"))));
  figure("max_queued_for_peer", std::to_string(max_queued));
  figure("max_tx_live", std::to_string(max_live));
  figure("max_conns", std::to_string(max_conns));
  figure("max_qp", std::to_string(max_qp));
  figure("sunreclaim_delta_kb", std::to_string(max_slab_delta));
  figure("recovered_after_resume_s", std::to_string(recovered));
}

}  // namespace
}  // namespace o2it
