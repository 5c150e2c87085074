// LU-7646 across two guests (the `two` topology): g1 eth0 192.168.1.1 (the
// lower NID, here the "router" that reboots) <-> g2 eth0 192.168.1.2 (the
// higher NID, the survivor).  In the field the survivor's connect to the
// rebooted router hung (no CM event for minutes) and, being the higher
// NID, it rejected the router's connects with CONN_RACE again and again.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "fixture.h"

namespace o2it {
namespace {

constexpr const char* kRouter = "192.168.1.1@o2ib0";    // g1
constexpr const char* kSurvivor = "192.168.1.2@o2ib0";  // g2
constexpr const char* kNet = "o2ib0(eth0)";

O2_SUITE_CLASS(
    LU7646TwoGuests, "two", void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"g1", "g2"}) {
          Guest& g = guest(n);
          if (!g.alive()) continue;
          run(g, "touch /tmp/stop-loop; sleep 0.5; rm -f /tmp/stop-loop", 30);
          o2ctl(g, "fault del all", 30);
          expect_unload_frees_rdma(g);
        }
      }
      TopologyTest::TearDown();
    });

double guest_now(Guest& g) {
  RunResult r = g.run("date +%s.%3N", 10);
  return std::strtod(r.out.c_str(), nullptr);
}

TEST_F(LU7646TwoGuests, RouterRebootWithStuckConnectResumesWithoutEndlessRace) {
  Guest& router = guest("g1");
  Guest& survivor = guest("g2");
  ASSERT_TRUE(insmod(router, kNet).ok()) << bed().test_log();
  ASSERT_TRUE(insmod(survivor, kNet).ok()) << bed().test_log();
  expect_ping_ok(survivor, kRouter, "--timeout 20");

  // The survivor keeps sending to the router throughout.
  ASSERT_TRUE(run(survivor, ping_loop(kRouter, "/tmp/lu7646.log"), 30).ok());
  router.kill();
  usleep(5 * 1000 * 1000);
  // Every connect of the survivor now hangs after rdma_connect (no REP,
  // REJ or error ever reaches it; only its deadline ends it): the stuck
  // connect of LU-7646.
  ASSERT_GT(add_fault(survivor, std::string("stall connect --local ") + kSurvivor), 0);
  usleep(3 * 1000 * 1000);

  router.boot();
  ASSERT_TRUE(insmod(router, kNet).ok()) << bed().test_log();
  double t0 = guest_now(survivor);  // the router is back up
  auto start = std::chrono::steady_clock::now();
  // The router connects to the survivor (the lower NID to the higher one
  // whose own connect to it is stuck).
  RunResult r;
  int tries = 0;
  do {
    r = o2ctl(router, std::string("ping ") + kSurvivor + " --timeout 5", 60);
    tries++;
  } while (r.status != 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 60);
  double router_first_ok =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Let the survivor's loop run on for a while, then stop it.
  usleep(10 * 1000 * 1000);
  run(survivor, "touch /tmp/stop-loop; sleep 6", 30);
  RunResult log = run(survivor, "cat /tmp/lu7646.log", 30);
  LoopStats s = loop_stats(log.out, t0);
  Record rp = peer(router, kRouter, kSurvivor), sp = peer(survivor, kSurvivor, kRouter);
  std::string ctx = "router's peer, survivor's peer:\n" + dump({rp, sp}) + "router conns:\n" +
                    dump(conns(router)) + "survivor conns:\n" + dump(conns(survivor)) +
                    "last router ping:\n" + r.out;

  figure("lu7646_router_first_ok_seconds", std::to_string(router_first_ok));
  figure("lu7646_router_ping_tries", std::to_string(tries));
  figure("lu7646_survivor_first_ok_seconds", std::to_string(s.first_ok));
  figure("lu7646_survivor_fails_after_first_ok", std::to_string(s.fails_after));
  figure("lu7646_races_received_by_router", field(rp, "races received"));
  figure("lu7646_races_sent_by_survivor", field(sp, "races sent"));
  figure("lu7646_survivor_phase_timeouts", field(sp, "phase timeouts"));
  figure("lu7646_survivor_stale_closes", field(sp, "stale closes"));

  EXPECT_EQ(r.status, 0) << "the router never got through within 60 s\n" << ctx;
  EXPECT_LE(router_first_ok, 30) << ctx;
  // Bounded CONN_RACE rejections (o2iblnd gave in only after 20).
  EXPECT_LE(num(rp, "races received"), 3) << ctx;
  EXPECT_LE(num(sp, "races sent"), 3) << ctx;
  // The survivor's traffic resumes too (over the router's connection, its
  // own connects being stuck), and stays up.
  EXPECT_GE(s.first_ok, 0) << "the survivor's pings never succeeded after the reboot\n"
                           << log.out << ctx;
  EXPECT_GE(s.oks_after, 1) << log.out << ctx;
  EXPECT_EQ(s.fails_after, 0) << "failed pings after the first good one\n" << log.out << ctx;
}

TEST_F(LU7646TwoGuests, DifferentPeerCreditsNegotiateTheSmallerQueueDepth) {
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  ASSERT_TRUE(insmod_with(g1, kNet, "peer_credits=16").ok()) << bed().test_log();
  ASSERT_TRUE(insmod_with(g2, kNet, "peer_credits=8").ok()) << bed().test_log();
  // g1 (16) connects to g2 (8): g2 rejects with MSG_QUEUE_SIZE (or accepts
  // the smaller depth at once); either way both sides run at 8.
  expect_ping_ok(g1, kSurvivor, "--timeout 20");
  auto check = [&](const char* when) {
    for (Guest* g : {&g1, &g2}) {
      std::vector<Record> all = conns(*g), cs;
      std::ranges::copy_if(all, std::back_inserter(cs),
                           [](const Record& c) { return field(c, "state") == "established"; });
      ASSERT_EQ(cs.size(), 1U) << when << ", " << g->name() << ":\n" << dump(all);
      EXPECT_EQ(num(cs[0], "queue depth"), 8) << when << ", " << g->name() << ":\n" << dump(all);
      EXPECT_LE(num(cs[0], "credits"), 8) << when << dump(all);
    }
  };
  check("g1 connected");
  Record p1 = peer(g1, kRouter, kSurvivor);
  figure("queue_size_rejects_received_by_g1", field(p1, "rejects received"));
  figure("queue_size_last_reject_g1", field(p1, "last reject"));

  // The other way round: g2 (8) connects to g1 (16), which accepts 8.
  ASSERT_TRUE(o2ctl(g1, std::string("peer close ") + kSurvivor, 30).ok());
  usleep(1000 * 1000);
  expect_ping_ok(g2, kRouter, "--timeout 20");
  usleep(500 * 1000);
  check("g2 connected");
}

}  // namespace
}  // namespace o2it
