// Multi-Rail peers, discovery and push between o2lnd nodes (issue 19), on
// two guests joined by two rails ("rails": eth0 192.168.1.0/24 and eth1
// 192.168.2.0/24, an RDMA device on each), each loaded with both
// interfaces as NIs of one network, networks="o2ib0(eth0,eth1)":
//
//   - both NIs of a node answer, and a ping lists every NID of the peer;
//   - `o2ctl discover` learns all the peer's NIDs (primary first, Multi-
//     Rail, discovery) and pushes ours, which the peer ACKs and learns;
//     discovering by the second NID finds the same peer;
//   - a rail whose RDMA device goes away (`rdma link delete`), or whose
//     link is lost (`ip link set down`), is pushed to the peers as down,
//     and as up once the device or the link is back;
//   - LNet Health: RPCs that fail on one rail lower the health of its local
//     NI or of the peer's NID; once the rail works again the recovery
//     pings bring both back to full health, and traffic takes both rails;
//   - a rail's link lost under checked bulk loses no RPC: what was in
//     flight there is sent again over the other rail, and the rail comes
//     back once healed;
//   - the first selftest RPC to a peer discovers it (LNet's discovery on
//     first send), unless lnet_peer_discovery_disabled=1;
//   - selftest bulk RPCs to a discovered Multi-Rail peer go over both rails
//     in turns (each NI's sends, each peer NID's `selected`), checked end
//     to end; and the same RPCs pinned to one rail (--from) beside them,
//     for the two-rail figure (under TCG both guests share the host's
//     cores, so it says what the rails add here, not on hardware).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "fixture.h"

namespace o2it {
namespace {

constexpr const char* kNet = "o2ib0(eth0,eth1)";
constexpr const char* kG1a = "192.168.1.1@o2ib0";
constexpr const char* kG1b = "192.168.2.1@o2ib0";
constexpr const char* kG2a = "192.168.1.2@o2ib0";
constexpr const char* kG2b = "192.168.2.2@o2ib0";

O2_SUITE_CLASS(
    MultiRail, "rails",
    // Each test leaves both devices present, whatever it did.
    void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"g1", "g2"}) {
          Guest& g = guest(n);
          if (g.alive()) {
            run(g,
                "ip link set eth1 up; tc qdisc del dev eth1 root 2>/dev/null; " +
                    restore_rail1_cmd(),
                30);
          }
        }
      }
      TopologyTest::TearDown();
    }

    static std::string restore_rail1_cmd() {
      const std::string dev = rdma_dev(1);
      return "rdma link show " + dev + "/1 >/dev/null 2>&1 || rdma link add " + dev + " type " +
             transport() + " netdev eth1";
    }

    void load_both(const std::string& params = "") {
      for (const char* n : {"g1", "g2"}) {
        RunResult r = params.empty() ? insmod(guest(n), kNet) : insmod_with(guest(n), kNet, params);
        ASSERT_TRUE(r.ok()) << n << ": " << r.out << bed().test_log();
      }
    }

    // Messages sent by each o2ib NI of `g` (net show -v), by NID.
    std::map<std::string, int64_t>
        sends(Guest& g) {
          std::map<std::string, int64_t> out;
          for (const auto& ni : parse_net_nis(o2ctl(g, "net show -v").out)) {
            if (field(ni, "net type") == "o2ib0")
              out[field(ni, "nid")] = need(ni, "statistics.send_count");
          }
          return out;
        }

    // The health value of g's NI `nid` (net show -v), -1 if not listed.
    int64_t ni_health(Guest& g, const std::string& nid) {
      for (const auto& ni : parse_net_nis(o2ctl(g, "net show -v").out)) {
        if (field(ni, "nid") == nid) return need(ni, "health stats.health value");
      }
      return -1;
    }

    // `o2ctl peer list NID` on `g`, polled (every 0.5 s, at most `seconds`)
    // until its one entry has `key` == `want`; the last entry either way.
    Record wait_lpeer(Guest& g, const std::string& nid, const std::string& key,
                      const std::string& want, int seconds) {
      Record last;
      for (int i = 0; i < seconds * 2; i++) {
        RunResult r = o2ctl(g, "peer list " + nid);
        auto v = parse_yaml_list(r.out, "peer");
        if (v.size() == 1) {
          last = v[0];
          if (field(last, key) == want) break;
        }
        usleep(500 * 1000);
      }
      return last;
    });

TEST_F(MultiRail, BothRailsAreNisOfOneNetworkAndAPingListsThemAll) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  auto nis = parse_net_nis(o2ctl(guest("g1"), "net show").out);
  int up = 0;
  for (const auto& ni : nis) {
    if (field(ni, "net type") == "o2ib0" && field(ni, "status") == "up") up++;
  }
  EXPECT_EQ(up, 2) << "g1 should have two NIs on o2ib0";
  for (const char* target : {kG2a, kG2b}) {
    RunResult p = o2ctl(guest("g1"), std::string("ping ") + target + " --timeout 20", 60);
    ASSERT_TRUE(p.ok()) << target << ": " << p.out;
    EXPECT_NE(p.out.find(std::string("12345-") + kG2a), std::string::npos) << p.out;
    EXPECT_NE(p.out.find(std::string("12345-") + kG2b), std::string::npos) << p.out;
  }
}

TEST_F(MultiRail, DiscoveryLearnsEveryNidAndThePeerLearnsOursFromThePush) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto v = parse_yaml_list(d.out, "discover");
  ASSERT_EQ(v.size(), 1U) << d.out;
  EXPECT_EQ(field(v[0], "primary nid"), kG2a) << d.out;
  EXPECT_EQ(field(v[0], "Multi-Rail"), "true") << d.out;
  EXPECT_EQ(field(v[0], "discovery"), "true") << d.out;
  EXPECT_EQ(field(v[0], "pushed"), "true") << d.out;
  EXPECT_EQ(field(v[0], "nids"), "2") << d.out;
  EXPECT_EQ(field(v[0], "peer ni.0.nid"), kG2a) << d.out;
  EXPECT_EQ(field(v[0], "peer ni.1.nid"), kG2b) << d.out;
  EXPECT_EQ(field(v[0], "peer ni.1.state"), "up") << d.out;
  // g2 learned g1, both NIDs, from g1's push
  Record p = wait_lpeer(guest("g2"), kG1b, "pushed to us", "true", 10);
  EXPECT_EQ(field(p, "primary nid"), kG1a);
  EXPECT_EQ(field(p, "pushed to us"), "true");
  EXPECT_EQ(field(p, "Multi-Rail"), "true");
  EXPECT_EQ(field(p, "peer ni.1.nid"), kG1b);
}

TEST_F(MultiRail, DiscoveryByTheSecondNidFindsTheSamePeer) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2b + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto v = parse_yaml_list(d.out, "discover");
  ASSERT_EQ(v.size(), 1U) << d.out;
  EXPECT_EQ(field(v[0], "primary nid"), kG2a) << d.out;
  EXPECT_EQ(field(v[0], "peer ni.1.nid"), kG2b) << d.out;
  RunResult all = o2ctl(guest("g1"), "peer list");
  EXPECT_EQ(parse_yaml_list(all.out, "peer").size(), 1U) << "the two NIDs of g2 are one peer:\n"
                                                         << all.out;
}

TEST_F(MultiRail, ARailThatGoesDownAndComesBackIsPushedToThePeer) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  // g2 learns g1 (and that it takes pushes) from g1's push
  Record p = wait_lpeer(guest("g2"), kG1a, "pushed to us", "true", 10);
  ASSERT_EQ(field(p, "pushed to us"), "true");
  ASSERT_TRUE(run(guest("g2"), "rdma link delete " + rdma_dev(1)).ok());
  Record down = wait_lpeer(guest("g1"), kG2a, "peer ni.1.state", "down", 15);
  EXPECT_EQ(field(down, "peer ni.1.nid"), kG2b);
  EXPECT_EQ(field(down, "peer ni.1.state"), "down")
      << "g2's push did not tell g1 that its second rail went down";
  EXPECT_EQ(field(down, "peer ni.0.state"), "up");
  ASSERT_TRUE(run(guest("g2"), restore_rail1_cmd()).ok());
  Record up = wait_lpeer(guest("g1"), kG2a, "peer ni.1.state", "up", 20);
  EXPECT_EQ(field(up, "peer ni.1.state"), "up")
      << "g2's push did not tell g1 that its second rail came back";
  // and the rail carries traffic again (pinned to it: a ping of a
  // Multi-Rail peer may take either rail, as LNet's)
  RunResult ping =
      o2ctl(guest("g1"), std::string("ping ") + kG2b + " --source " + kG1b + " --timeout 20", 60);
  EXPECT_TRUE(ping.ok()) << ping.out;

  // its link lost (the port goes down, the device stays): the NI goes
  // down at once and is pushed so, then up again with the link
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(run(guest("g2"), "ip link set eth1 down").ok());
  Record ldown = wait_lpeer(guest("g1"), kG2a, "peer ni.1.state", "down", 15);
  EXPECT_EQ(field(ldown, "peer ni.1.state"), "down")
      << "g2's push did not tell g1 that its second rail's link was lost";
  figure("link_down_to_peer_knows_s", std::to_string(since(t0)));
  auto g2nis = parse_net_nis(o2ctl(guest("g2"), "net show").out);
  for (const auto& ni : g2nis) {
    if (field(ni, "nid") == kG2b) {
      EXPECT_EQ(field(ni, "status"), "down") << dump(g2nis);
    }
  }
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(run(guest("g2"), "ip link set eth1 up").ok());
  Record lup = wait_lpeer(guest("g1"), kG2a, "peer ni.1.state", "up", 15);
  EXPECT_EQ(field(lup, "peer ni.1.state"), "up")
      << "g2's push did not tell g1 that its second rail's link is back";
  figure("link_up_to_peer_knows_s", std::to_string(since(t0)));
  RunResult again =
      o2ctl(guest("g1"), std::string("ping ") + kG2b + " --source " + kG1b + " --timeout 20", 60);
  EXPECT_TRUE(again.ok()) << again.out;
}

TEST_F(MultiRail, AFailedRailIsProbedBackToFullHealthAndCarriesTrafficAgain) {
  // timeout=10: a message that cannot get a connection fails after 10 s
  ASSERT_NO_FATAL_FAILURE(load_both("timeout=10"));
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  // g2's second rail loses its device: RPCs pinned to that rail fail
  ASSERT_TRUE(run(guest("g2"), "rdma link delete " + rdma_dev(1)).ok());
  RunResult fail = o2ctl(guest("g1"),
                         std::string("selftest brw write ") + kG2b + " --from " + kG1b +
                             " --size 4K --concurrency 1 --count 2 --timeout 4000 -y",
                         120);
  EXPECT_NE(fail.status, 0) << "RPCs over a rail without its device succeeded:\n" << fail.out;
  // their messages fail at their deadline, having found no connection: a
  // network timeout (o2iblnd's class), which lowers the peer NID's health
  int64_t nid_low = 1000;
  for (int i = 0; i < 60 && nid_low == 1000; i++) {
    nid_low = need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.health value");
    if (nid_low == 1000) usleep(500 * 1000);
  }
  figure("failed_rail_peer_nid_health", std::to_string(nid_low));
  EXPECT_LT(nid_low, 1000) << "the failed messages did not lower the peer NID's health";
  // the rail heals: the recovery pings bring both back to full health
  ASSERT_TRUE(run(guest("g2"), restore_rail1_cmd()).ok());
  int64_t ni_h = -1;
  int64_t nid_h = -1;
  std::string state;
  auto healed = [&] { return ni_h == 1000 && nid_h == 1000 && state == "up"; };
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 90 && !healed(); i++) {
    ni_h = ni_health(guest("g1"), kG1b);
    Record r = wait_lpeer(guest("g1"), kG2a, "nids", "2", 1);
    nid_h = need(r, "peer ni.1.health value");
    state = field(r, "peer ni.1.state");
    if (!healed()) usleep(500 * 1000);
  }
  figure(
      "failed_rail_back_to_full_health_s",
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  EXPECT_EQ(ni_h, 1000) << "g1's second NI did not get back to full health";
  EXPECT_EQ(nid_h, 1000) << "g2's second NID did not get back to full health";
  EXPECT_EQ(state, "up") << "g2 did not push its second NID up";
  // and Multi-Rail sends to the healed rail again
  const int64_t before = need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.selected");
  Selftest st = parse_selftest(
      o2ctl(guest("g1"),
            std::string("selftest brw write ") + kG2a + " --size 64K --check --count 40 -y", 120));
  EXPECT_EQ(st.at("errors.total"), 0) << st.text();
  const int64_t after = need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.selected");
  EXPECT_GE(after - before, 10) << "the healed rail took " << after - before << " of 40 RPCs";
}

// A rail's link is lost both ways (netem loss 100% on eth1 of both
// guests) under checked bulk to the Multi-Rail peer: what was in flight
// on that rail fails there (its connection breaks after the RC retries)
// and is sent again on the other rail, the RPC's own resend (o2_brw()) for
// a write whose exchange broke, the transport's for an LNet ACK whose Send
// failed (on the path chosen anew, from the peer's other NID); so no RPC is
// lost.  The figures: the longest RPC across the loss (from its first
// send to its answer over the other rail), and the resends on each side.
// Once the link is back, the recovery pings bring the rail back to full
// health and it takes its turns again.
TEST_F(MultiRail, ARailLostUnderCheckedBulkLosesNoRpcAndComesBack) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  for (const char* n : {"g1", "g2"}) {
    RunResult netem = run(guest(n), "modprobe sch_netem", 30);
    if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
  }
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  // g2 knows g1 as a Multi-Rail peer from the push: its ACKs may take either rail
  Record g1_at_g2 = wait_lpeer(guest("g2"), kG1a, "nids", "2", 20);
  ASSERT_EQ(field(g1_at_g2, "Multi-Rail"), "true") << "g2 did not learn g1's rails from the push";
  auto resends = [&](Guest& g) {
    int64_t sum = 0;
    for (const auto& ni : parse_net_nis(o2ctl(g, "net show -v").out)) {
      if (field(ni, "net type") == "o2ib0") sum += need(ni, "statistics.resend_count");
    }
    return sum;
  };
  const int64_t r1 = resends(guest("g1"));
  const int64_t r2 = resends(guest("g2"));
  ASSERT_TRUE(run(guest("g1"),
                  "rm -f /tmp/mr-loss.log /tmp/mr-loss.done; (" + o2ctl_path() +
                      " selftest brw write " + kG2a +
                      " --size 64K --check --concurrency 4 --duration 20 --timeout 20000 -y "
                      "> /tmp/mr-loss.log 2>&1; touch /tmp/mr-loss.done) >/dev/null 2>&1 &",
                  30)
                  .ok());
  usleep(4 * 1000 * 1000);
  auto before = sends(guest("g1"));
  for (const char* n : {"g1", "g2"}) {
    EXPECT_TRUE(run(guest(n), "tc qdisc replace dev eth1 root netem loss 100%", 30).ok()) << n;
  }
  usleep(8 * 1000 * 1000);
  auto during = sends(guest("g1"));
  for (const char* n : {"g1", "g2"}) run(guest(n), "tc qdisc del dev eth1 root", 30);
  Selftest st = parse_selftest(run(guest("g1"),
                                   "for i in $(seq 120); do [ -e /tmp/mr-loss.done ] && break; "
                                   "sleep 0.5; done; cat /tmp/mr-loss.log",
                                   120));
  ASSERT_EQ(st.error, "") << st.text();
  EXPECT_EQ(st.at("errors.total"), 0) << "RPCs lost across the rail's loss:\n" << st.text();
  EXPECT_EQ(st.at("errors.verify"), 0) << st.text();
  EXPECT_GT(during[kG1a] - before[kG1a], 20)
      << "the first rail did not carry the traffic while the second was lost";
  const int64_t resent = resends(guest("g1")) - r1;
  const int64_t resent_acks = resends(guest("g2")) - r2;
  figure("rail_loss_rpcs", std::to_string(static_cast<int64_t>(st.at("rpcs"))));
  figure("rail_loss_rpcs_lost", std::to_string(static_cast<int64_t>(st.at("errors.total"))));
  figure("rail_loss_longest_rpc_ms", std::to_string(st.at("latency_us.max") / 1000));
  figure("rail_loss_resent_by_g1", std::to_string(resent));
  figure("rail_loss_resent_by_g2", std::to_string(resent_acks));
  EXPECT_GT(resent + resent_acks, 0) << "nothing was in flight on the lost rail?\n" << st.text();
  // the rail comes back: full health again, and it takes its turns
  const auto t0 = std::chrono::steady_clock::now();
  int64_t h = -1;
  for (int i = 0; i < 120 && h != 1000; i++) {
    h = need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.health value");
    if (h != 1000) usleep(500 * 1000);
  }
  figure(
      "rail_loss_back_to_full_health_s",
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  EXPECT_EQ(h, 1000) << "the lost rail did not get back to full health";
  const int64_t sel = need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.selected");
  Selftest after = parse_selftest(
      o2ctl(guest("g1"),
            std::string("selftest brw write ") + kG2a + " --size 64K --check --count 20 -y", 120));
  EXPECT_EQ(after.at("errors.total"), 0) << after.text();
  EXPECT_GE(need(wait_lpeer(guest("g1"), kG2a, "nids", "2", 1), "peer ni.1.selected") - sel, 5)
      << "the healed rail took too few of 20 RPCs";
}

// Discovery on first send, as LNet's (lnet_peer_discovery_disabled=0, the
// default): the first selftest RPC to a peer discovers it beside the RPC
// (a ping, then a push of our ping info), with no `o2ctl discover`: the
// sender then lists both of the peer's NIDs, Multi-Rail and pushed, the
// peer lists ours as pushed to it, and further RPCs take both rails.
// With lnet_peer_discovery_disabled=1 an RPC discovers nothing, and the
// node's ping info says it does no discovery, as LNet's does.
TEST_F(MultiRail, TheFirstRpcToAPeerDiscoversIt) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  const std::string brw = std::string("selftest brw write ") + kG2a + " --size 64K --check -y";
  Selftest first = parse_selftest(o2ctl(g1, brw + " --count 1", 60));
  EXPECT_EQ(first.at("errors.total"), 0) << first.text();
  Record p = wait_lpeer(g1, kG2a, "pushed", "true", 15);
  EXPECT_EQ(field(p, "pushed"), "true") << dump_record(p);
  EXPECT_EQ(field(p, "Multi-Rail"), "true") << dump_record(p);
  EXPECT_EQ(field(p, "peer ni.0.nid"), kG2a) << dump_record(p);
  EXPECT_EQ(field(p, "peer ni.1.nid"), kG2b) << dump_record(p);
  Record q = wait_lpeer(g2, kG1a, "pushed to us", "true", 10);
  EXPECT_EQ(field(q, "pushed to us"), "true") << dump_record(q);
  EXPECT_EQ(field(q, "peer ni.1.nid"), kG1b) << dump_record(q);
  auto before = sends(g1);
  Selftest more = parse_selftest(o2ctl(g1, brw + " --count 20", 120));
  EXPECT_EQ(more.at("errors.total"), 0) << more.text();
  auto after = sends(g1);
  for (const char* nid : {kG1a, kG1b}) {
    EXPECT_GE(after[nid] - before[nid], 5) << nid << " carried too few of 20 RPCs' messages";
  }

  // discovery disabled on both: nothing is learned from RPCs
  for (Guest* g : {&g1, &g2}) ASSERT_TRUE(rmmod(*g).ok()) << g->name();
  ASSERT_NO_FATAL_FAILURE(load_both("lnet_peer_discovery_disabled=1"));
  Selftest off = parse_selftest(o2ctl(g1, brw + " --count 3", 60));
  EXPECT_EQ(off.at("errors.total"), 0) << off.text();
  usleep(2 * 1000 * 1000);
  RunResult none = o2ctl(g1, "peer list");
  EXPECT_EQ(parse_yaml_list(none.out, "peer").size(), 0U)
      << "an RPC discovered a peer with discovery disabled:\n"
      << none.out;
  RunResult d = o2ctl(g1, std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto v = parse_yaml_list(d.out, "discover");
  ASSERT_EQ(v.size(), 1U) << d.out;
  EXPECT_EQ(field(v[0], "discovery"), "false") << d.out;
}

TEST_F(MultiRail, BulkToAMultiRailPeerUsesBothRailsInTurns) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  RunResult d = o2ctl(guest("g1"), std::string("discover ") + kG2a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto before = sends(guest("g1"));
  Selftest both = parse_selftest(o2ctl(guest("g1"),
                                       std::string("selftest brw write ") + kG2a +
                                           " --size 1M --check --concurrency 8 --duration 5 -y",
                                       120));
  ASSERT_EQ(both.error, "") << both.text();
  auto after = sends(guest("g1"));
  EXPECT_EQ(both.at("errors.total"), 0) << both.text();
  EXPECT_EQ(both.at("errors.verify"), 0) << both.text();
  for (const char* nid : {kG1a, kG1b}) {
    EXPECT_GT(after[nid] - before[nid], 0.3 * both.at("rpcs"))
        << nid << " carried too few of the RPCs' messages: " << after[nid] - before[nid] << " of "
        << both.at("rpcs") << " RPCs";
  }
  Record p = wait_lpeer(guest("g1"), kG2a, "nids", "2", 1);
  const int64_t sel0 = need(p, "peer ni.0.selected");
  const int64_t sel1 = need(p, "peer ni.1.selected");
  EXPECT_GT(sel0, 0);
  EXPECT_GT(sel1, 0);
  EXPECT_LE(std::abs(sel0 - sel1), 1 + (sel0 + sel1) / 10)
      << "equal rails should take turns: " << sel0 << " vs " << sel1;
  // the same RPCs pinned to the first rail, in the same boot
  Selftest one = parse_selftest(
      o2ctl(guest("g1"),
            std::string("selftest brw write ") + kG2a +
                " --size 1M --check --concurrency 8 --duration 5 --from " + kG1a + " -y",
            120));
  ASSERT_EQ(one.error, "") << one.text();
  EXPECT_EQ(one.at("errors.total"), 0) << one.text();
  figure("two_rails_mib_per_s", std::to_string(both.at("mib_per_s")));
  figure("one_rail_mib_per_s", std::to_string(one.at("mib_per_s")));
  if (one.at("mib_per_s") > 0) {
    figure("two_rails_over_one", std::to_string(both.at("mib_per_s") / one.at("mib_per_s")));
  }
}

// Networks at run time (`o2ctl net add|del`, as lnetctl net add|del), on
// nodes loaded with the first rail only (o2ib0(eth0)), under checked bulk
// on o2ib0 that must not notice.  Twice: a second network on eth1 is
// added on both nodes and carries checked bulk; deleted on g2 under bulk
// to it, the delete returns with nothing of the NI left on g2 (no NI,
// connection or peer) and the RPCs to it end (failed, none corrupted); a
// ping of it fails; deleted on g1.  The second round adds the NIs again
// into the structs the first deletes kept, with a new incarnation.  In
// the end the o2ib0 bulk lost nothing and g2 holds what it held before.
TEST_F(MultiRail, ANetworkAddedAndDeletedUnderTrafficWithoutAReload) {
  // the flows are pinned to their network (--from): the peer is
  // Multi-Rail, so LNet's selection would otherwise spread the o2ib0
  // flood over o2ib1 too
  constexpr const char* kG1b1 = "192.168.2.1@o2ib1";
  constexpr const char* kG2b1 = "192.168.2.2@o2ib1";
  for (const char* n : {"g1", "g2"}) {
    ASSERT_TRUE(insmod(guest(n), "o2ib0(eth0)").ok()) << n << bed().test_log();
  }
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  expect_ping_ok(g1, kG2a, "--timeout 20");
  const RdmaRes g2_base = rdma_res(g2);  // one listener and one connection of o2ib0
  ASSERT_TRUE(run(g1,
                  "rm -f /tmp/net-bg.log /tmp/net-bg.done; (" + o2ctl_path() +
                      " selftest brw write " + kG2a + " --from " + kG1a +
                      " --size 64K --check --concurrency 2 --duration 60 --timeout 20000 -y "
                      "> /tmp/net-bg.log 2>&1; touch /tmp/net-bg.done) >/dev/null 2>&1 &",
                  30)
                  .ok());
  // bad requests change nothing
  RunResult bad = o2ctl(g2, "net add --net o2ib1 --if nope0");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("no such interface"), std::string::npos) << bad.out;
  bad = o2ctl(g2, "net del --net o2ib1");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("no NI of o2ib1"), std::string::npos) << bad.out;

  for (int cycle = 1; cycle <= 2; cycle++) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    for (Guest* g : {&g1, &g2}) {
      const auto t0 = std::chrono::steady_clock::now();
      RunResult a = o2ctl(*g, "net add --net o2ib1 --if eth1");
      ASSERT_TRUE(a.ok()) << g->name() << ": " << a.out;
      if (cycle == 1) figure("net_add_s", std::to_string(since(t0)));
      EXPECT_NE(a.out.find("@o2ib1 on eth1"), std::string::npos) << a.out;
    }
    RunResult again = o2ctl(g2, "net add --net o2ib1 --if eth1");
    EXPECT_EQ(again.status, 1) << again.out;
    EXPECT_NE(again.out.find("exists"), std::string::npos) << again.out;
    bool up = false;
    for (const auto& ni : parse_net_nis(o2ctl(g2, "net show").out)) {
      if (field(ni, "nid") == kG2b1) up = field(ni, "status") == "up";
    }
    EXPECT_TRUE(up) << "g2's new NI is not listed up:\n" << o2ctl(g2, "net show").out;
    expect_ping_ok(g1, kG2b1, "--timeout 20");
    Selftest w = parse_selftest(o2ctl(g1,
                                      std::string("selftest brw write ") + kG2b1 + " --from " +
                                          kG1b1 + " --size 64K --check --duration 3 -y",
                                      120));
    ASSERT_EQ(w.error, "") << w.text();
    EXPECT_EQ(w.at("errors.total"), 0) << w.text();

    // deleted on g2 under bulk to it
    auto cut = std::async(std::launch::async, [&g1, kG1b1, kG2b1] {
      return g1.run(o2ctl_path() + " selftest brw write " + kG2b1 + " --from " + kG1b1 +
                        " --size 64K --check --concurrency 4 --duration 6 --timeout 20000 -y",
                    180);
    });
    usleep(2 * 1000 * 1000);
    const auto t0 = std::chrono::steady_clock::now();
    RunResult d = o2ctl(g2, "net del --net o2ib1 --if eth1");
    const double del_s = since(t0);
    ASSERT_TRUE(d.ok()) << d.out;
    EXPECT_NE(d.out.find("deleted 1 NI of o2ib1(eth1)"), std::string::npos) << d.out;
    figure("net_del_under_bulk_s_cycle" + std::to_string(cycle), std::to_string(del_s));
    // nothing of o2ib1 is left on g2 once the delete returned
    for (const auto& ni : parse_net_nis(o2ctl(g2, "net show").out)) {
      EXPECT_NE(field(ni, "nid"), kG2b1) << "the deleted NI is still listed";
    }
    for (const auto& c : conns(g2)) {
      EXPECT_EQ(field(c, "local nid").find("@o2ib1"), std::string::npos)
          << "a connection of the deleted NI is left:\n"
          << dump({c});
    }
    for (const auto& pr : parse_yaml_list(o2ctl(g2, "peer show").out, "peer")) {
      EXPECT_EQ(field(pr, "local nid").find("@o2ib1"), std::string::npos)
          << "a peer of the deleted NI is left:\n"
          << dump({pr});
    }
    Selftest c = parse_selftest(cut.get());
    ASSERT_EQ(c.error, "") << c.text();
    EXPECT_EQ(c.at("errors.verify"), 0) << c.text();
    // (a write whose data arrived but whose LNet ACK the NI never sent
    // waits out its deadline, as with LNet: those are the `expired` ones)
    figure("rpcs_to_the_deleted_ni_failed_cycle" + std::to_string(cycle),
           std::to_string(static_cast<int64_t>(c.at("errors.total"))));
    figure("rpcs_to_the_deleted_ni_expired_cycle" + std::to_string(cycle),
           std::to_string(static_cast<int64_t>(c.at("errors.expired"))));
    RunResult p = o2ctl(g1, std::string("ping ") + kG2b1 + " --timeout 5", 30);
    EXPECT_FALSE(p.ok()) << "a deleted NI answered a ping:\n" << p.out;
    ASSERT_TRUE(o2ctl(g1, "net del --net o2ib1").ok());
  }
  // the o2ib0 traffic beside it lost nothing
  Selftest st = parse_selftest(run(g1,
                                   "for i in $(seq 240); do [ -e /tmp/net-bg.done ] && break; "
                                   "sleep 0.5; done; cat /tmp/net-bg.log",
                                   180));
  ASSERT_EQ(st.error, "") << st.text();
  EXPECT_GT(st.at("rpcs"), 0) << st.text();
  EXPECT_EQ(st.at("errors.total"), 0)
      << "o2ib0's RPCs failed while o2ib1 came and went:\n"
      << st.text() << "\n"
      << (st.at("errors.total") != 0
              ? link_state(g1, "eth0", "192.168.1.2") + "\n" + link_state(g2, "eth0", "192.168.1.1")
              : std::string());
  EXPECT_EQ(st.at("errors.verify"), 0) << st.text();
  figure("o2ib0_rpcs_beside", std::to_string(static_cast<int64_t>(st.at("rpcs"))));
  // g2 holds what it held before the first add: o2ib0's listener and conn
  RdmaRes now = wait_rdma_res(g2, g2_base, 20);
  EXPECT_EQ(now, g2_base) << now.str() << " vs " << g2_base.str();
}

// An interface added to a network the peer discovered is pushed to it: the
// peer lists our new NID (Multi-Rail) and reaches it, and forgets it once
// it is deleted.
TEST_F(MultiRail, AnInterfaceAddedOrDeletedIsPushedToThePeer) {
  // g2 on both rails: it reaches g1's second NID from its own eth1
  ASSERT_TRUE(insmod(guest("g1"), "o2ib0(eth0)").ok()) << bed().test_log();
  ASSERT_TRUE(insmod(guest("g2"), kNet).ok()) << bed().test_log();
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  RunResult d = o2ctl(g2, std::string("discover ") + kG1a + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  EXPECT_EQ(field(wait_lpeer(g2, kG1a, "nids", "1", 10), "nids"), "1");
  ASSERT_TRUE(o2ctl(g1, "net add --net o2ib0 --if eth1").ok());
  Record p = wait_lpeer(g2, kG1a, "nids", "2", 20);
  EXPECT_EQ(field(p, "nids"), "2") << "g2 did not learn g1's new NID from the push";
  EXPECT_EQ(field(p, "peer ni.1.nid"), kG1b);
  EXPECT_EQ(field(p, "Multi-Rail"), "true");
  // g2 reaches the new NID, and g1 answers from it
  expect_ping_ok(g2, kG1b, "--timeout 20");
  ASSERT_TRUE(o2ctl(g1, "net del --net o2ib0 --if eth1").ok());
  p = wait_lpeer(g2, kG1a, "nids", "1", 20);
  EXPECT_EQ(field(p, "nids"), "1") << "g2 still lists g1's deleted NID";
  expect_ping_ok(g2, kG1a, "--timeout 20");
}

}  // namespace
}  // namespace o2it
