// Scenarios on one guest whose two Soft-RoCE devices sit on the two ends of
// a veth pair: rxe0 on veth0 (192.168.1.1), rxe1 on veth1 (192.168.1.2),
// policy-routed so that traffic between the addresses crosses the pair.
// With O2_TRANSPORT=siw the same on Soft-iWARP: siw0 on veth0, siw1 on veth1.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixture.h"

namespace o2it {
namespace {

O2_TOPOLOGY_SUITE(OneGuestVeth, "veth");

constexpr const char* kBothEnds = "o2ib0(veth0,veth1)";

TEST_F(OneGuestVeth, PingAcrossVethPair) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  uint64_t tx0 = read_counter(g, "/sys/class/net/veth0/statistics/tx_packets");
  uint64_t rx1 = read_counter(g, "/sys/class/net/veth1/statistics/rx_packets");
  auto rxe0 = rxe_stats(g, "rxe0");
  auto rxe1 = rxe_stats(g, "rxe1");

  expect_ping_ok(g, "192.168.1.2@o2ib0", "--source 192.168.1.1@o2ib0");

  // The RoCE packets really crossed the pair: out of veth0 into veth1, and
  // sent by rxe0 / received by rxe1 (not looped back inside rxe0).  (siw
  // has no `rdma stat` counters; its TCP stream shows in the veth ones.)
  EXPECT_GT(read_counter(g, "/sys/class/net/veth0/statistics/tx_packets"), tx0);
  EXPECT_GT(read_counter(g, "/sys/class/net/veth1/statistics/rx_packets"), rx1);
  if (transport() == "rxe") {
    EXPECT_GT(rxe_stats(g, "rxe0")["sent_pkts"], rxe0["sent_pkts"]);
    EXPECT_GT(rxe_stats(g, "rxe1")["rcvd_pkts"], rxe1["rcvd_pkts"]);
  }

  // And back the other way.
  expect_ping_ok(g, "192.168.1.1@o2ib0", "--source 192.168.1.2@o2ib0");
}

TEST_F(OneGuestVeth, PingOwnNidSelfConnect) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, "o2ib0(veth0)").ok()) << bed().test_log();
  expect_ping_ok(g, "192.168.1.1@o2ib0");
  // Twice: the second ping reuses (or cleanly re-creates) the connection.
  RunResult r = o2ctl(g, "ping 192.168.1.1@o2ib0", 60);
  EXPECT_EQ(r.status, 0) << r.out;
}

// The connections of a device spread their CQs over its completion
// vectors, in turn, as o2iblnd does (kiblnd_get_completion_vector()), so
// their completions are handled on as many CPUs as the device has vectors.
// Three connections on rxe0 here: the two halves of a ping to our own NID
// and the one to the other NI's.  The guests have one vCPU (of two
// possible: rxe offers a vector per possible CPU), so this shows the
// placement, not a gain.
TEST_F(OneGuestVeth, ConnsOfADeviceTakeItsCompletionVectorsInTurn) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  expect_ping_ok(g, "192.168.1.1@o2ib0");
  expect_ping_ok(g, "192.168.1.2@o2ib0", "--source 192.168.1.1@o2ib0");
  std::vector<int64_t> vectors;
  int64_t nvec = 0;
  for (const Record& c : conns(g)) {
    if (field(c, "state") != "established" || field(c, "local nid") != "192.168.1.1@o2ib0") {
      continue;
    }
    const int64_t v = need(c, "comp vector");
    nvec = need(c, "comp vectors");
    EXPECT_GE(nvec, 1) << "a connection with a QP names its device's vectors";
    EXPECT_LT(v, nvec) << "a vector the device does not have";
    vectors.push_back(v);
  }
  ASSERT_EQ(vectors.size(), 3U) << "two halves of the self-connect and one to the other NI";
  figure("rxe0_comp_vectors", std::to_string(nvec));
  if (nvec >= 2) {
    const std::set<int64_t> used(vectors.begin(), vectors.end());
    EXPECT_EQ(used.size(), std::min<std::size_t>(3, static_cast<std::size_t>(nvec)))
        << "three CQs in turn on a device of " << nvec << " vectors";
  }
}

// conns_per_peer=3, as o2iblnd's: the NI that connects (A) opens three
// connections to B, one after another, and B accepts them and opens none
// of its own; messages take them in turn, both ways (each carries its
// share of a checked write flood, by its send count), and nothing churns:
// after the flood the same three connections, no connect beyond the
// three.  Closed, they come back as three.
TEST_F(OneGuestVeth, ConnsPerPeerOpensThatManyAndMessagesTakeThemInTurn) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod_with(g, kBothEnds, "conns_per_peer=3").ok()) << bed().test_log();
  const std::string a = "192.168.1.1@o2ib0";
  const std::string b = "192.168.1.2@o2ib0";
  auto established = [&](const std::string& local, bool active) {
    std::vector<Record> out;
    for (const Record& c : conns(g)) {
      if (field(c, "local nid") == local && field(c, "state") == "established" &&
          field(c, "active") == (active ? "true" : "false")) {
        out.push_back(c);
      }
    }
    return out;
  };
  auto wait_three = [&] {
    for (int i = 0; i < 60 && established(a, true).size() < 3; i++) usleep(250 * 1000);
    return established(a, true).size();
  };
  expect_ping_ok(g, b, "--source " + a);
  ASSERT_EQ(wait_three(), 3U) << "A did not open three connections to B";
  EXPECT_EQ(established(b, false).size(), 3U) << "B did not accept three";
  EXPECT_EQ(established(b, true).size(), 0U) << "B opened connections of its own";
  const int64_t connects = need(peer(g, a, b), "connects");
  std::map<std::string, int64_t> before;
  for (const Record& c : established(a, true)) before[field(c, "qp")] = need(c, "send count");
  Selftest st = parse_selftest(o2ctl(g,
                                     "selftest brw write " + b + " --from " + a +
                                         " --size 64K --check --concurrency 6 --duration 3 -y",
                                     120));
  ASSERT_EQ(st.error, "") << st.text();
  EXPECT_EQ(st.at("errors.total"), 0) << st.text();
  // the other way: B sends on the three connections it accepted
  Selftest back = parse_selftest(
      o2ctl(g, "selftest ping " + a + " --from " + b + " --concurrency 6 --duration 2 -y", 120));
  EXPECT_EQ(back.at("errors.total"), 0) << back.text();
  const auto after = established(a, true);
  ASSERT_EQ(after.size(), 3U) << "a connection was lost or added under traffic";
  const double rpcs = st.at("rpcs");
  for (const Record& c : after) {
    const std::string qp = field(c, "qp");
    ASSERT_EQ(before.count(qp), 1U) << "connection qp " << qp << " is new: churn";
    const int64_t sent = need(c, "send count") - before[qp];
    figure("sends_on_qp_" + qp, std::to_string(sent));
    // in turn: each takes about a third of the flood's messages
    EXPECT_GT(static_cast<double>(sent), rpcs / 6) << "qp " << qp << " carried too little";
  }
  for (const Record& c : established(b, false)) {
    EXPECT_GT(need(c, "send count"), 10) << "B did not use the connection it accepted";
  }
  EXPECT_EQ(need(peer(g, a, b), "connects"), connects) << "connects beyond the three";
  figure("rpcs", std::to_string(static_cast<int64_t>(rpcs)));
  // closed, all three come back
  ASSERT_TRUE(o2ctl(g, "peer close " + b + " --source " + a).ok());
  expect_ping_ok(g, b, "--source " + a);
  EXPECT_EQ(wait_three(), 3U) << "three connections did not come back after a close";
  expect_unload_frees_rdma(g);
}

// Both NIs connect to each other at once with conns_per_peer=2: one side
// ends up holding the connections (the higher NID's, B, when the two
// connects cross; whichever got through first otherwise), the other opens
// none beside them (a connect of its own that the race left established
// beside them is surplus and closes once quiet, ~1 s), and it settles:
// two connections, and no connect in the next 3 s.
TEST_F(OneGuestVeth, ConnsPerPeerBothSidesConnectingAtOnceSettle) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod_with(g, kBothEnds, "conns_per_peer=2").ok()) << bed().test_log();
  const std::string a = "192.168.1.1@o2ib0";
  const std::string b = "192.168.1.2@o2ib0";
  RunResult both = run(g,
                       o2ctl_path() + " ping " + b + " --source " + a + " & " + o2ctl_path() +
                           " ping " + a + " --source " + b + "; wait",
                       60);
  auto count = [&](const std::string& local, bool active) {
    int n = 0;
    for (const Record& c : conns(g)) {
      if (field(c, "local nid") == local && field(c, "state") == "established" &&
          field(c, "active") == (active ? "true" : "false")) {
        n++;
      }
    }
    return n;
  };
  auto settled = [&] {
    const int ab = count(a, true), ba = count(b, true);
    return std::max(ab, ba) == 2 && std::min(ab, ba) == 0;
  };
  for (int i = 0; i < 60 && !settled(); i++) usleep(250 * 1000);
  const bool b_holds = count(b, true) > 0;
  const std::string holder = b_holds ? b : a, other = b_holds ? a : b;
  figure("holder_is_the_higher_nid", b_holds ? "1" : "0");
  EXPECT_EQ(count(holder, true), 2) << holder << " should hold two:\n" << both.out;
  EXPECT_EQ(count(other, true), 0) << other << " kept connections of its own beside the others";
  EXPECT_EQ(count(other, false), 2);
  const int64_t ca = need(peer(g, a, b), "connects");
  const int64_t cb = need(peer(g, b, a), "connects");
  usleep(3 * 1000 * 1000);
  EXPECT_EQ(need(peer(g, a, b), "connects"), ca) << "A keeps connecting";
  EXPECT_EQ(need(peer(g, b, a), "connects"), cb) << "B keeps connecting";
  EXPECT_EQ(count(holder, true), 2);
  EXPECT_EQ(count(other, true), 0);
  expect_ping_ok(g, b, "--source " + a);
  expect_ping_ok(g, a, "--source " + b);
  expect_unload_frees_rdma(g);
}

// The tracepoints of module/trace.h are usable from tracefs: a connect, a
// ping and a close leave the events an operator debugs with, in order.
TEST_F(OneGuestVeth, TracepointsRecordConnectPhasesTxAndReaping) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  const std::string t = "/sys/kernel/tracing";
  RunResult r = run(g, "mountpoint -q " + t + " || mount -t tracefs nodev " + t + " && echo > " +
                           t + "/trace && echo 1 > " + t + "/events/o2lnd/enable");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_ping_ok(g, "192.168.1.2@o2ib0", "--source 192.168.1.1@o2ib0");
  // More than a queue depth (8) of messages: credits go back for sure
  // (piggybacked, or by a NOOP at the high-water mark).
  r = run(g, "for i in $(seq 12); do " + o2ctl_path() +
                 " ping 192.168.1.2@o2ib0 --source 192.168.1.1@o2ib0 >/dev/null || exit 1; done");
  ASSERT_EQ(r.status, 0) << r.out;
  r = o2ctl(g, "peer close 192.168.1.2@o2ib0");
  EXPECT_EQ(r.status, 0) << r.out;
  // The teardown runs in connd: give it a moment before reading.
  r = run(g, "sleep 2; echo 0 > " + t + "/events/o2lnd/enable; grep o2lnd_ " + t + "/trace");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string& tr = r.out;
  auto at = [&](const std::string& what) { return tr.find(what); };
  for (const char* ev : {"o2lnd_tx_queued: ni=50000c0a80101 peer=50000c0a80102 type=0xd1",
                         "o2lnd_connect_phase: ni=50000c0a80101 peer=50000c0a80102 phase=addr",
                         "phase=route", "phase=connect", "phase=established",
                         "o2lnd_tx_posted:", "o2lnd_tx_completed:", "o2lnd_credits_returned:",
                         "o2lnd_conn_reaped: ni=50000c0a80101 peer=50000c0a80102 active=1"}) {
    EXPECT_NE(at(ev), std::string::npos) << "no " << ev << " in\n" << tr;
  }
  EXPECT_LT(at("phase=addr"), at("phase=route")) << tr;
  EXPECT_LT(at("phase=route"), at("phase=connect")) << tr;
  EXPECT_LT(at("phase=connect"), at("phase=established")) << tr;
  EXPECT_LT(at("phase=established"), at("o2lnd_conn_reaped:")) << tr;
}

// A forced reject and a stalled phase show up as reject and timeout events.
TEST_F(OneGuestVeth, TracepointsRecordRejectsAndPhaseTimeouts) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  const std::string t = "/sys/kernel/tracing";
  RunResult r = run(g, "mountpoint -q " + t + " || mount -t tracefs nodev " + t + " && echo > " +
                           t + "/trace && echo 1 > " + t + "/events/o2lnd/enable");
  ASSERT_EQ(r.status, 0) << r.out;
  r = o2ctl(g, "fault add reject conn_stale --local 192.168.1.2@o2ib0 --count 1");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_ping_ok(g, "192.168.1.2@o2ib0", "--source 192.168.1.1@o2ib0 --timeout 20");
  r = o2ctl(g, "peer close 192.168.1.2@o2ib0");
  EXPECT_EQ(r.status, 0) << r.out;
  r = o2ctl(g, "fault add stall route --local 192.168.1.1@o2ib0 --count 1");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_ping_ok(g, "192.168.1.2@o2ib0", "--source 192.168.1.1@o2ib0 --timeout 30");
  r = run(g, "echo 0 > " + t + "/events/o2lnd/enable; grep o2lnd_ " + t + "/trace");
  ASSERT_EQ(r.status, 0) << r.out;
  // CONN_STALE is reason 5, retried after 500-999 ms.
  EXPECT_NE(r.out.find("o2lnd_reject_sent: ni=50000c0a80102 peer=50000c0a80101 why=5"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("o2lnd_reject_received: ni=50000c0a80101 peer=50000c0a80102 why=5"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("o2lnd_phase_timeout: ni=50000c0a80101 peer=50000c0a80102 phase=route "
                       "active=1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("o2lnd_reconnect: ni=50000c0a80101 peer=50000c0a80102"), std::string::npos)
      << r.out;
  EXPECT_EQ(o2ctl(g, "fault del all").status, 0);
}

TEST_F(OneGuestVeth, PingUnknownNidFailsWithinTimeout) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  // 192.168.1.77 is on the configured subnet but nobody owns it.
  const double timeout = 3, slack = 10;
  RunResult r = o2ctl(g, "ping 192.168.1.77@o2ib0 --timeout 3", 60);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_FALSE(r.timed_out) << r.out;
  EXPECT_NE(r.out.find("failed to ping 192.168.1.77@o2ib0: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("12345-"), std::string::npos) << r.out;
  // The deadline is honoured (not a benchmark: generous slack for TCG).
  EXPECT_LT(r.seconds, timeout + slack) << r.out;

  // The module still works afterwards.
  r = o2ctl(g, "ping 192.168.1.2@o2ib0 --source 192.168.1.1@o2ib0", 60);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(OneGuestVeth, PingUnconfiguredNetFailsFast) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  RunResult r = o2ctl(g, "ping 10.9.9.9@o2ib7 --timeout 30", 60);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("failed to ping 10.9.9.9@o2ib7: "), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 10)
      << "no local NI reaches o2ib7: should fail at once, not wait out the timeout";
}

TEST_F(OneGuestVeth, NetShowListsLocalNids) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  RunResult raw = o2ctl(g, "net show", 30);
  ASSERT_EQ(raw.status, 0) << raw.out;
  // Parsed as YAML on the host (yaml-cpp); one line per NI:
  // "<net type> <nid> <status> <interface 0>"
  std::vector<std::string> nis;
  for (const auto& ni : parse_net_nis(raw.out)) {
    std::string ifname = field(ni, "interfaces.0");
    nis.push_back(field(ni, "net type") + " " + field(ni, "nid") + " " + field(ni, "status") + " " +
                  (ifname.empty() ? "-" : ifname));
  }
  ASSERT_FALSE(HasFailure()) << "not YAML of the expected shape:\n" << raw.out;
  auto has = [&nis](const std::string& l) { return std::ranges::find(nis, l) != nis.end(); };
  EXPECT_TRUE(has("lo 0@lo up -")) << "LNet lists 0@lo first\n" << raw.out;
  EXPECT_EQ(nis.size(), 3U) << raw.out;
  EXPECT_TRUE(has("o2ib0 192.168.1.1@o2ib0 up veth0")) << raw.out;
  EXPECT_TRUE(has("o2ib0 192.168.1.2@o2ib0 up veth1")) << raw.out;
  for (auto& l : nis) {
    EXPECT_TRUE(l.rfind("o2ib0 ", 0) == 0 || l.rfind("lo ", 0) == 0) << "unexpected NI: " << l;
  }
}

TEST_F(OneGuestVeth, BadIoctlArgumentsGetCleanErrors) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  RunResult r = run(g,
                    sh_quote(guest_abi_tests_path()) +
                        " --peer-nid=192.168.1.2@o2ib0 --unowned-nid=192.168.1.77@o2ib0 --ping-self"
                        " --gtest_output=xml:/out/guest_abi_tests.xml",
                    300);
  // (its test cases are also counted by testbed/check.sh from the XML)
  EXPECT_EQ(r.status, 0) << indent(r.out);
  EXPECT_NE(r.out.find("[  PASSED  ]"), std::string::npos) << indent(r.out);
  EXPECT_EQ(r.out.find("[  FAILED  ]"), std::string::npos);
}

TEST_F(OneGuestVeth, BadNidStringsRejectedByO2ctl) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  const std::vector<std::string> bad = {
      "",
      "192.168.1.2",
      "192.168.1.2@",
      "@o2ib0",
      // (no "192.168.1.2@o2ib": like LNet, a net without a number is net 0)
      "192.168.1.2@o2ibx",
      "192.168.1.2@o2ib0x",
      "192.168.1.2@nosuchlnd0",
      "300.168.1.2@o2ib0",
      "192.168.1@o2ib0",
      "192.168.1.2.3@o2ib0",
      "abc@o2ib0",
      "-1@o2ib0",
      "192.168.1.2@o2ib99999999999",
      "192.168.1.2 @o2ib0",
  };
  for (const auto& nid : bad) {
    RunResult r = o2ctl(g, "ping " + sh_quote(nid) + " --timeout 2", 30);
    EXPECT_NE(r.status, 0) << "'" << nid << "' accepted:\n" << r.out;
    EXPECT_FALSE(r.timed_out) << nid;
    EXPECT_FALSE(r.out.empty()) << "no message for '" << nid << "'";
    EXPECT_EQ(r.out.find("12345-"), std::string::npos) << nid << ":\n" << r.out;
    EXPECT_LT(r.seconds, 10) << nid;
  }
  // --source is parsed with the same rules.
  RunResult r = o2ctl(g, "ping 192.168.1.2@o2ib0 --source 192.168.1.1", 30);
  EXPECT_NE(r.status, 0) << r.out;
}

TEST_F(OneGuestVeth, RmmodWhileConnectedFreesEverything) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  RunResult r = o2ctl(g, "ping 192.168.1.2@o2ib0 --source 192.168.1.1@o2ib0", 60);
  ASSERT_EQ(r.status, 0) << r.out;

  // With a connection up, the module owns RDMA resources.
  RunResult res = run(g, "rdma res show qp; rdma res show cm_id", 30);
  EXPECT_NE(res.out.find("o2lnd"), std::string::npos)
      << "no QP or cm_id of o2lnd while connected?\n"
      << res.out;

  r = rmmod(g);
  ASSERT_TRUE(r.ok()) << r.out;
  res = run(g,
            "for k in qp cm_id cq mr pd; do echo \"== $k\"; rdma res show $k; done; "
            "echo '== lsmod'; grep '^o2lnd ' /proc/modules; ls /dev/o2lnd 2>&1",
            30);
  EXPECT_EQ(res.out.find("o2lnd "), std::string::npos) << res.out;
  EXPECT_EQ(res.out.find("[o2lnd]"), std::string::npos) << "RDMA resources left behind:\n"
                                                        << res.out;
  // Only ib_core's GSI QPs remain and no cm_id at all.
  RunResult qp = run(g, "rdma res show qp | grep -v 'type GSI' || true", 30);
  EXPECT_EQ(qp.out, "") << qp.out;
  RunResult cm = run(g, "rdma res show cm_id", 30);
  EXPECT_EQ(cm.out, "") << cm.out;
  EXPECT_NE(res.out.find("No such file or directory"), std::string::npos)
      << "/dev/o2lnd still there";

  // Load again and ping again.
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  r = o2ctl(g, "ping 192.168.1.2@o2ib0 --source 192.168.1.1@o2ib0", 60);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "12345-192.168.1.2@o2ib0")) << r.out;
}

TEST_F(OneGuestVeth, ModuleLoadRejectsBadNetworks) {
  Guest& g = guest("g1");
  // An interface with no IPv4 address.
  ASSERT_TRUE(run(g, "ip link add vx0 type veth peer name vx1 && ip link set vx0 up").ok());
  const std::vector<std::string> bad = {
      "",
      "o2ib0",
      "o2ib0(",
      "o2ib0()",
      "o2ib0(veth0",
      "o2ib0(nosuchif0)",
      "o2ib0(vx0)",
      "o2ib0(veth0,veth0)",
      "o2ib0(veth0) o2ib0(veth1)",
      "o2ib0(veth0)junk",
      "tcp0(veth0)",
      "o2ibx(veth0)",
      "o2ib0(veth0,,veth1)",
      "o2ib0(a_very_long_interface_name_longer_than_ifnamsiz)",
  };
  int i = 0;
  for (const auto& nets : bad) {
    std::string mark = "o2-itest-bad-networks-" + std::to_string(i++);
    run(g, "echo " + mark + " > /dev/kmsg", 10);
    RunResult r = insmod(g, nets);
    EXPECT_NE(r.status, 0) << "networks='" << nets << "' was accepted";
    std::string cmd = "dmesg | sed -n '/";
    cmd += mark + "/,$p' | grep -v ";
    cmd += mark;
    RunResult log = run(g, cmd, 10);
    EXPECT_NE(log.out.find("o2lnd"), std::string::npos)
        << "networks='" << nets << "': no o2lnd line in dmesg explains the failure:\n"
        << log.out;
    RunResult left = run(g, "! grep '^o2lnd ' /proc/modules && ! ls -l /dev/o2lnd", 10);
    EXPECT_TRUE(left.ok()) << "networks='" << nets << "' left the module or /dev/o2lnd behind:\n"
                           << left.out;
    if (!left.ok()) run(g, "rmmod o2lnd", 30);
  }
  run(g, "ip link del vx0", 10);
}

}  // namespace
}  // namespace o2it
