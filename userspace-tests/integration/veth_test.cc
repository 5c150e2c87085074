// Scenarios on one guest whose two Soft-RoCE devices sit on the two ends of
// a veth pair: rxe0 on veth0 (192.168.1.1), rxe1 on veth1 (192.168.1.2),
// policy-routed so that traffic between the addresses crosses the pair.
// With O2_TRANSPORT=siw the same on Soft-iWARP: siw0 on veth0, siw1 on veth1.
#include <algorithm>
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
