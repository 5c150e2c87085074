// Real faults (issue 16): what a fabric does to o2lnd, not what o2lnd's own
// fault framework injects.  Two guests (`two`: g1 eth0 192.168.1.1 <-> g2
// eth0 192.168.1.2, rxe0 on each eth0; siw0 with O2_TRANSPORT=siw), the
// module at timeout=20 as a user would load it, and under checked traffic
// (`o2ctl selftest brw --check`, every byte verified at the far end):
//
//   - netem packet loss on one side and on both, duplication and
//     reordering: each window of traffic must complete RPCs (progress) with
//     no verify error; up to 1% loss no RPC may fail at all (a lossy link
//     costs throughput, not RPCs); afterwards the link is at once usable;
//   - the RDMA device deleted and added back (`rdma link delete/add`, what
//     an mlx5 firmware reset or a driver reload does) on the receiver, then
//     on the sender, three times: the NI goes down, then up again by itself
//     and carries verified traffic, without a reload;
//   - the module unloaded while its device is gone;
//   - the selftest client while its NI is down: it backs off and reports
//     the attempts as not sent, it does not spin.
//
// Every test ends with the module unloaded and every QP and cm_id freed
// (the fixture also checks that no kernel report appeared).
//
//   - a link flap (`ip link set eth0 down`, 15 s, `up`) under pings and a
//     checked brw, on the receiver and on the sender: the first ping after
//     the link is back gets through, and checked traffic flows again with
//     no reload.  On rxe the device's GSI QP (QP1, the CM's) must still be
//     usable afterwards: rxe puts it in error for good when a MAD is sent
//     while the link is down (no route), which o2lnd's teardown did with
//     the DREQ of a connection that failed then (it now waits for the
//     port to come back, connd.c).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fixture.h"
#include <yaml-cpp/yaml.h>

namespace o2it {
namespace {

constexpr const char* kG1 = "192.168.1.1@o2ib0";
constexpr const char* kG2 = "192.168.1.2@o2ib0";
constexpr const char* kNet = "o2ib0(eth0)";
constexpr const char* kParams = "timeout=20";
constexpr int kWindowS = 2;  // one window of traffic: must complete RPCs

std::string fmt1(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f", v);
  return b;
}

// `o2ctl selftest ... -y`, the figures a fault test looks at.
struct Window {
  bool parsed = false;
  std::string what, out;
  int64_t rpcs = -1, errors = -1, expired = -1, verify = -1, not_sent = -1;
  double rpc_per_s = 0, mib_per_s = 0;
  [[nodiscard]] std::string str() const {
    return what + ": " + std::to_string(rpcs) + " rpcs (" + fmt1(rpc_per_s) + "/s, " +
           fmt1(mib_per_s) + " MiB/s), errors " + std::to_string(errors) + " (expired " +
           std::to_string(expired) + ", verify " + std::to_string(verify) + "), not sent " +
           std::to_string(not_sent);
  }
};

Window parse_window(const std::string& what, const RunResult& r) {
  Window w;
  w.what = what;
  w.out = r.out;
  size_t p = r.out.find("selftest:");
  if (p == std::string::npos) return w;
  // o2ctl's own lines on stderr ("o2ctl: ...") come with the YAML
  std::string yaml;
  for (const auto& l : lines_of(r.out.substr(p))) {
    if (l.rfind("o2ctl:", 0) != 0) yaml += l + "\n";
  }
  try {
    YAML::Node st = YAML::Load(yaml)["selftest"];
    w.rpcs = st["rpcs"].as<int64_t>();
    w.not_sent = st["not_sent"] ? st["not_sent"].as<int64_t>() : 0;
    w.rpc_per_s = st["rpc_per_s"].as<double>();
    w.mib_per_s = st["mib_per_s"] ? st["mib_per_s"].as<double>() : 0;
    w.errors = st["errors"]["total"].as<int64_t>();
    w.expired = st["errors"]["expired"].as<int64_t>();
    w.verify = st["errors"]["verify"] ? st["errors"]["verify"].as<int64_t>() : 0;
    w.parsed = true;
  } catch (const std::exception&) {
    w.parsed = false;
  }
  return w;
}

O2_SUITE_CLASS(
    RealFaults, "two",
    // Each test leaves both links clean and both devices present, whatever
    // it did, so the next one (and the fixture's unload) starts from there.
    void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"g1", "g2"}) {
          Guest& g = guest(n);
          if (!g.alive()) continue;
          run(g, "ip link set eth0 up; tc qdisc del dev eth0 root 2>/dev/null; true", 30);
          run(g, restore_device_cmd(), 30);
        }
      }
      TopologyTest::TearDown();
    }

    // A command that waits (up to `seconds`) for the o2ib NI of `g` to show
    // `status` in `o2ctl net show`.
    static std::string wait_ni_cmd(Guest& g, const std::string& status, int seconds) {
      const std::string nid = g.name() == "g1" ? kG1 : kG2;
      return "for i in $(seq " + std::to_string(seconds * 4) + "); do " + o2ctl_path() +
             " net show | grep -A1 'nid: " + nid + "' | grep -q 'status: " + status +
             "' && exit 0; sleep 0.25; done; exit 1";
    }

    static std::string restore_device_cmd() {
      const std::string dev = rdma_dev(0);
      return "rdma link show " + dev + "/1 >/dev/null 2>&1 || rdma link add " + dev + " type " +
             transport() + " netdev eth0";
    }

    void load_both() {
      for (const char* n : {"g1", "g2"}) {
        RunResult r = insmod_with(guest(n), kNet, kParams);
        ASSERT_TRUE(r.ok()) << n << ": " << r.out << bed().test_log();
      }
      expect_ping_ok(guest("g1"), kG2, "--timeout 20");
      expect_ping_ok(guest("g2"), kG1, "--timeout 20");
    }

    // One window of checked traffic g1 -> g2: `op` is "ping" or
    // "brw write|read --size S"; each RPC given `timeout_ms` (0: the
    // module's default, 5 s).
    Window window(const std::string& op, int seconds = kWindowS, int concurrency = 4,
                  int timeout_ms = 0) {
      const bool brw = op.rfind("brw", 0) == 0;
      const std::string timeout =
          timeout_ms > 0 ? " --timeout " + std::to_string(timeout_ms) : std::string();
      RunResult r = o2ctl(guest("g1"),
                          "selftest " + op + " " + kG2 + (brw ? " --check" : "") +
                              " --concurrency " + std::to_string(concurrency) + " --duration " +
                              std::to_string(seconds) + timeout + " -y",
                          seconds + 120 + (timeout_ms / 1000.0));
      return parse_window(op, r);
    }

    // The windows every loss level runs, each must make progress and verify
    // clean; with `lossless_rpcs` (<= 1% loss) no RPC may fail either, each
    // given 30 s as a Lustre RPC has tens of seconds: a queue pair that
    // rxe gives up on after its retries (seen on 6.12 under 1% loss and
    // under heavy reordering, after seconds of retransmissions) breaks its
    // connection, and the RPC is sent again on a new one (retry_count).
    void expect_windows(const std::string& level, const std::vector<std::string>& ops,
                        bool lossless_rpcs) {
      for (const auto& op : ops) {
        Window w = window(op, kWindowS, 4, lossless_rpcs ? 30000 : 0);
        ASSERT_TRUE(w.parsed) << level << ", " << op << ": no selftest report:\n" << w.out;
        std::string name = level;
        name += " ";
        name += op;
        for (char& c : name) {
          if (c == ' ' || c == '%' || c == '-') c = '_';
        }
        figure(name + "_rpc_per_s", fmt1(w.rpc_per_s));
        figure(name + "_errors", std::to_string(w.errors));
        EXPECT_GT(w.rpcs, 0) << level << ": no RPC completed in a " << kWindowS
                             << " s window: " << w.str();
        EXPECT_EQ(w.verify, 0) << level << ": data arrived corrupted: " << w.str();
        if (lossless_rpcs) {
          EXPECT_EQ(w.errors, 0) << level
                                 << ": RPCs failed on a lossy but working link: " << w.str();
        }
      }
    }

    // Each guest's connections and their QPs, in a few lines: why a ping
    // that should pass did not.
    std::string conn_state() {
      std::string s;
      for (const char* n : {"g1", "g2"}) {
        RunResult r =
            run(guest(n),
                o2ctl_path() +
                    " conn show 2>&1 | grep -E ' (state|age ms|credits|outstanding|posted|tx "
                    "queued|error|qp|idle ms):' | head -18 "
                    "| tr -s ' ' | paste -sd ';'; rdma res show qp 2>&1 | grep -v "
                    "'qpn 1 ' | awk '{print $4, $6, $8}' | paste -sd ';'",
                30);
        s += std::string(n) + ": " + r.out;
        s += link_state(guest(n), "eth0", std::string(n) == "g1" ? "192.168.1.2" : "192.168.1.1");
      }
      return s;
    }

    // After a fault: pings both ways at once, a clean checked window, and
    // no MR left registered once idle.
    void expect_healed(const std::string& after) {
      for (const char* n : {"g1", "g2"}) {
        if (run(guest(n), wait_ni_cmd(guest(n), "up", 20), 60).ok()) continue;
        // what the NI says, and every blocked task's stack (sysrq w, in
        // the dmesg the failure keeps)
        RunResult why = run(guest(n),
                            o2ctl_path() +
                                " net show -v 2>&1; echo w > /proc/sysrq-trigger; "
                                "dmesg | tail -60",
                            60);
        ADD_FAILURE() << n << ": the NI is not up 20 s after " << after << ":\n" << why.out;
      }
      RunResult p1 = o2ctl(guest("g1"), std::string("ping ") + kG2 + " --timeout 10", 60);
      EXPECT_TRUE(p1.ok()) << "after " << after << ": the first ping g1 -> g2 failed:\n"
                           << p1.out << (p1.ok() ? std::string() : conn_state());
      RunResult p2 = o2ctl(guest("g2"), std::string("ping ") + kG1 + " --timeout 10", 60);
      EXPECT_TRUE(p2.ok()) << "after " << after << ": the first ping g2 -> g1 failed:\n"
                           << p2.out << (p2.ok() ? std::string() : conn_state());
      Window w = window("brw write --size 64K", 2);
      EXPECT_TRUE(w.parsed && w.rpcs > 0 && w.errors == 0)
          << "after " << after << ": traffic is not clean again: " << w.str() << "\n"
          << w.out;
      for (const char* n : {"g1", "g2"}) {
        RunResult mr = run(
            guest(n),
            "for i in $(seq 40); do u=$(" + o2ctl_path() +
                " net show -v | awk '/mr_pool:/ {p=1} p && /used:/ {s+=$2; p=0} END {print s+0}'); "
                "[ \"$u\" = 0 ] && break; sleep 0.25; done; echo $u",
            60);
        EXPECT_EQ(mr.out.substr(0, mr.out.find('\n')), "0")
            << n << ": MRs still in use after " << after << " (net show -v):\n"
            << mr.out;
      }
    }

    // Deletes the RDMA device of `g` and adds it back, `cycles` times,
    // under a background checked brw write g1 -> g2; after each add the NI
    // must be up again by itself and carry a ping.
    void device_cycles(Guest& g, const std::string& side, int cycles) {
      const std::string dev = rdma_dev(0);
      ASSERT_NO_FATAL_FAILURE(start_background(
          "rf-bg", std::string("brw write ") + kG2 + " --size 64K --check --concurrency 4 " +
                       "--duration " + std::to_string(cycles * 8 + 6)));
      usleep(2 * 1000 * 1000);
      for (int c = 1; c <= cycles; c++) {
        const std::string at = side + ", cycle " + std::to_string(c);
        ASSERT_TRUE(run(g, "rdma link delete " + dev, 60).ok()) << at;
        // the NI goes down: its sends fail with ENETDOWN
        RunResult down = run(g, wait_ni_cmd(g, "down", 10), 60);
        EXPECT_TRUE(down.ok()) << at << ": the NI did not go down with its device";
        usleep(2 * 1000 * 1000);
        ASSERT_TRUE(run(g, restore_device_cmd(), 60).ok()) << at;
        auto t0 = std::chrono::steady_clock::now();
        RunResult up = run(g, wait_ni_cmd(g, "up", 20), 60);
        EXPECT_TRUE(up.ok()) << at << ": the NI did not come back up within 20 s";
        figure(side + "_cycle" + std::to_string(c) + "_ni_up_s", fmt1(since(t0)));
        const bool ok = ping_gets_through(6);
        EXPECT_TRUE(ok) << at << ": no ping g1 -> g2 got through after the device came back";
        figure(side + "_cycle" + std::to_string(c) + "_ping_s", fmt1(since(t0)));
      }
      Window w = collect_background("rf-bg", "background brw write 64K");
      ASSERT_TRUE(w.parsed) << "the background selftest gave no report:\n" << w.out;
      figure(side + "_background_rpcs", std::to_string(w.rpcs));
      figure(side + "_background_errors", std::to_string(w.errors));
      EXPECT_GT(w.rpcs, 0) << w.str();
      EXPECT_EQ(w.verify, 0) << "data arrived corrupted across the device cycles: " << w.str();
    }

    // Pings g1 -> g2 (5 s each) until one gets through, at most `tries`
    // times.  Return: whether one did.
    bool ping_gets_through(int tries) {
      for (int i = 0; i < tries; i++) {
        if (o2ctl(guest("g1"), std::string("ping ") + kG2 + " --timeout 5", 30).ok()) return true;
      }
      return false;
    }

    // Starts `o2ctl selftest ARGS -y` on g1 in the background; its report
    // goes to /tmp/NAME.log, and /tmp/NAME.done appears once it ended.
    void start_background(const std::string& name, const std::string& args) {
      const std::string f = "/tmp/" + name;
      ASSERT_TRUE(run(guest("g1"),
                      "rm -f " + f + ".log " + f + ".done; (" + o2ctl_path() + " selftest " + args +
                          " -y > " + f + ".log 2>&1; touch " + f + ".done) >/dev/null 2>&1 &",
                      30)
                      .ok())
          << name;
    }

    // Waits (up to 2 min) for a background selftest and parses its report.
    Window collect_background(const std::string& name, const std::string& what) {
      const std::string f = "/tmp/" + name;
      RunResult bg = run(guest("g1"),
                         "for i in $(seq 240); do [ -e " + f + ".done ] && break; sleep 0.5; " +
                             "done; cat " + f + ".log",
                         150);
      return parse_window(what, bg);
    }

    // Takes eth0 of `g` down for `down_s` seconds and up again, under a
    // background `selftest ping --concurrency 8` and a checked brw write
    // g1 -> g2; afterwards traffic must flow again by itself, and on rxe
    // the CM's QP of `g`'s device must still be usable.
    void link_flap(Guest& g, const std::string& side, int down_s) {
      const std::string dur = std::to_string(down_s + 14);
      ASSERT_NO_FATAL_FAILURE(start_background(
          "lf-ping", std::string("ping ") + kG2 + " --concurrency 8 --duration " + dur));
      ASSERT_NO_FATAL_FAILURE(
          start_background("lf-brw", std::string("brw write ") + kG2 +
                                         " --size 64K --check --concurrency 2 --duration " + dur));
      const int waits_before = port_waits(g);
      usleep(3 * 1000 * 1000);
      ASSERT_TRUE(run(g, "ip link set eth0 down", 30).ok()) << side;
      usleep(static_cast<useconds_t>(down_s) * 1000 * 1000);
      ASSERT_TRUE(run(g, "ip link set eth0 up", 30).ok()) << side;
      auto t0 = std::chrono::steady_clock::now();
      // the first ping that gets through after the link is back
      const bool ok = ping_gets_through(12);
      EXPECT_TRUE(ok) << side << ": no ping g1 -> g2 got through within ~60 s of the link "
                      << "coming back";
      figure(side + "_first_ping_after_up_s", fmt1(since(t0)));
      for (const char* bgname : {"ping", "brw"}) {
        Window w =
            collect_background(std::string("lf-") + bgname, std::string("background ") + bgname);
        ASSERT_TRUE(w.parsed) << "the background selftest " << bgname << " gave no report:\n"
                              << w.out;
        figure(side + "_background_" + bgname + "_rpcs", std::to_string(w.rpcs));
        figure(side + "_background_" + bgname + "_errors", std::to_string(w.errors));
        EXPECT_GT(w.rpcs, 0) << w.str();
        EXPECT_EQ(w.verify, 0) << "data arrived corrupted across the flap: " << w.str();
      }
      // teardowns that waited for the port rather than send a DREQ into
      // a link that is down (a figure: whether one closed then is timing)
      figure(side + "_teardowns_waited_for_port", std::to_string(port_waits(g) - waits_before));
      if (transport() == "rxe") {
        RunResult qp1 = run(g, "rdma res show qp lqpn 1", 30);
        EXPECT_NE(qp1.out.find("state RTS"), std::string::npos)
            << side << ": the GSI QP (QP1, the CM's) of " << rdma_dev(0)
            << " is no longer usable after the flap (a MAD was sent while the link was "
            << "down):\n"
            << qp1.out;
      }
    }

    // Teardowns of `g` that waited for their port so far (its log).
    int port_waits(Guest& g) {
      RunResult r = run(g, "dmesg | grep -c 'waits for .* port .* to come back' || true", 30);
      return std::atoi(r.out.c_str());
    }

    // Both modules loaded; g2's link goes down and its connection to g1 is
    // closed then (`peer close`): the teardown must wait for the port
    // rather than send a DREQ into a link that is down (its log says so).
    void close_while_link_down(Guest& g2) {
      ASSERT_NO_FATAL_FAILURE(load_both());
      EXPECT_TRUE(o2ctl(g2, std::string("ping ") + kG1 + " --timeout 10", 60).ok());
      const int before = port_waits(g2);
      EXPECT_TRUE(run(g2, "ip link set eth0 down", 30).ok());
      EXPECT_TRUE(o2ctl(g2, std::string("peer close ") + kG1, 30).ok());
      int n = before;
      for (int i = 0; i < 40 && n == before; i++) {
        usleep(250 * 1000);
        n = port_waits(g2);
      }
      ASSERT_GE(n - before, 1)
          << "the teardown of the connection closed while the link was down did not wait for it";
    });

TEST_F(RealFaults, LossOnTheReceiverCostsThroughputNotRpcs) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g2 = guest("g2");
  RunResult netem = run(g2, "modprobe sch_netem", 30);
  if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
  Window clean = window("brw write --size 64K");
  figure("lossless_brw_write_64K_rpc_per_s", fmt1(clean.rpc_per_s));
  struct Level {
    const char* loss;
    bool lossless_rpcs;
    std::vector<std::string> ops;
  };
  const std::vector<Level> levels = {
      {"0.1%", true, {"brw write --size 64K", "brw read --size 64K", "brw read --size 1M"}},
      {"1%",
       true,
       {"ping", "brw write --size 4K", "brw read --size 4K", "brw write --size 64K",
        "brw read --size 64K", "brw write --size 1M", "brw read --size 1M"}},
      {"5%", false, {"ping", "brw write --size 4K", "brw read --size 64K", "brw write --size 1M"}},
  };
  for (const auto& l : levels) {
    SCOPED_TRACE(std::string("netem loss ") + l.loss + " on g2");
    ASSERT_TRUE(
        run(g2, std::string("tc qdisc replace dev eth0 root netem loss ") + l.loss, 30).ok());
    ASSERT_NO_FATAL_FAILURE(expect_windows(std::string("loss ") + l.loss, l.ops, l.lossless_rpcs));
    ASSERT_TRUE(run(g2, "tc qdisc del dev eth0 root", 30).ok());
    expect_healed(std::string("loss ") + l.loss);
  }
}

TEST_F(RealFaults, LossOnBothSidesCostsThroughputNotRpcs) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  for (const char* n : {"g1", "g2"}) {
    RunResult netem = run(guest(n), "modprobe sch_netem", 30);
    if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
    ASSERT_TRUE(run(guest(n), "tc qdisc replace dev eth0 root netem loss 1%", 30).ok());
  }
  ASSERT_NO_FATAL_FAILURE(expect_windows(
      "loss 1% both",
      {"ping", "brw write --size 64K", "brw read --size 64K", "brw write --size 1M"}, true));
  for (const char* n : {"g1", "g2"}) run(guest(n), "tc qdisc del dev eth0 root", 30);
  expect_healed("1% loss on both sides");
}

TEST_F(RealFaults, DuplicatedAndReorderedPacketsLoseNothing) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g2 = guest("g2");
  RunResult netem = run(g2, "modprobe sch_netem", 30);
  if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
  ASSERT_TRUE(run(g2, "tc qdisc replace dev eth0 root netem duplicate 2%", 30).ok());
  ASSERT_NO_FATAL_FAILURE(
      expect_windows("duplicate 2%", {"ping", "brw write --size 64K", "brw read --size 1M"}, true));
  ASSERT_TRUE(run(g2, "tc qdisc replace dev eth0 root netem delay 2ms reorder 25% 50%", 30).ok());
  ASSERT_NO_FATAL_FAILURE(
      expect_windows("reorder 25%", {"ping", "brw write --size 1M", "brw read --size 64K"}, true));
  ASSERT_TRUE(run(g2, "tc qdisc del dev eth0 root", 30).ok());
  expect_healed("duplication and reordering");
}

TEST_F(RealFaults, DeviceRemovedAndAddedBackOnTheReceiverHealsWithoutAReload) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  ASSERT_NO_FATAL_FAILURE(device_cycles(guest("g2"), "receiver", 3));
  expect_healed("three device cycles on the receiver");
}

TEST_F(RealFaults, DeviceRemovedAndAddedBackOnTheSenderHealsWithoutAReload) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  ASSERT_NO_FATAL_FAILURE(device_cycles(guest("g1"), "sender", 3));
  expect_healed("three device cycles on the sender");
}

TEST_F(RealFaults, LinkFlapOnTheReceiverUnderLoadHeals) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  ASSERT_NO_FATAL_FAILURE(link_flap(guest("g2"), "receiver", 15));
  expect_healed("a 15 s link flap on the receiver");
}

TEST_F(RealFaults, LinkFlapOnTheSenderUnderLoadHeals) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  ASSERT_NO_FATAL_FAILURE(link_flap(guest("g1"), "sender", 15));
  expect_healed("a 15 s link flap on the sender");
}

TEST_F(RealFaults, UnloadWhileTheDeviceIsGoneFreesEverything) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g2 = guest("g2");
  ASSERT_TRUE(run(g2, "rdma link delete " + rdma_dev(0), 60).ok());
  RunResult r = rmmod(g2, 60);
  EXPECT_TRUE(r.ok()) << "rmmod with the device gone: " << r.out;
  EXPECT_TRUE(wait_rdma_res(g2, RdmaRes{0, 0}, 20) == (RdmaRes{0, 0}));
  ASSERT_TRUE(run(g2, restore_device_cmd(), 60).ok());
  // a fresh load on the device that came back works
  ASSERT_TRUE(insmod_with(g2, kNet, kParams).ok()) << bed().test_log();
  expect_healed("an unload while the device was gone");
}

TEST_F(RealFaults, UnloadWhileATeardownWaitsForTheLinkDoesNotHang) {
  if (transport() == "siw") GTEST_SKIP() << "iWARP's CM speaks TCP: no teardown waits for it";
  Guest& g2 = guest("g2");
  ASSERT_NO_FATAL_FAILURE(close_while_link_down(g2));
  // the unload does not wait for the port: the teardown goes on
  RunResult r = rmmod(g2, 60);
  EXPECT_TRUE(r.ok()) << "rmmod with a teardown waiting for the link: " << r.out;
  EXPECT_TRUE(wait_rdma_res(g2, RdmaRes{0, 0}, 20) == (RdmaRes{0, 0}));
  ASSERT_TRUE(run(g2, "ip link set eth0 up", 30).ok());
  // that teardown's DREQ went into the down link: a fresh device for the
  // next load (rxe's QP1 is in error after it)
  ASSERT_TRUE(run(g2, "rdma link delete " + rdma_dev(0) + "; " + restore_device_cmd(), 60).ok());
  ASSERT_TRUE(insmod_with(g2, kNet, kParams).ok()) << bed().test_log();
  expect_healed("an unload while a teardown waited for the link");
}

TEST_F(RealFaults, DeviceRemovedWhileATeardownWaitsForTheLinkCompletes) {
  if (transport() == "siw") GTEST_SKIP() << "iWARP's CM speaks TCP: no teardown waits for it";
  Guest& g2 = guest("g2");
  ASSERT_NO_FATAL_FAILURE(close_while_link_down(g2));
  // the removal waits for the device's connections: the waiting teardown
  // must go on, or `rdma link delete` would hang
  RunResult del = run(g2, "timeout 50 rdma link delete " + rdma_dev(0), 60);
  EXPECT_TRUE(del.ok()) << "rdma link delete with a teardown waiting for the link: " << del.out;
  EXPECT_TRUE(run(g2, wait_ni_cmd(g2, "down", 10), 60).ok())
      << "the NI did not go down with its device";
  ASSERT_TRUE(run(g2, "ip link set eth0 up; " + restore_device_cmd(), 60).ok());
  expect_healed("a device removed while a teardown waited for the link");
}

TEST_F(RealFaults, SelftestBacksOffWhileTheLocalNiIsDown) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g1 = guest("g1");
  ASSERT_TRUE(run(g1, "rdma link delete " + rdma_dev(0), 60).ok());
  RunResult down = run(g1, wait_ni_cmd(g1, "down", 10), 60);
  ASSERT_TRUE(down.ok()) << "the NI did not go down with its device";
  RunResult r =
      o2ctl(g1, std::string("selftest ping ") + kG2 + " --concurrency 8 --duration 3 -y", 60);
  Window w = parse_window("ping with the NI down", r);
  ASSERT_TRUE(w.parsed) << r.out;
  figure("not_sent_in_3s_8_workers", std::to_string(w.not_sent));
  EXPECT_NE(r.status, 0) << "a run whose every attempt failed must exit non-zero";
  EXPECT_EQ(w.rpcs, 0) << "attempts that never left the node counted as RPCs: " << w.str();
  EXPECT_GT(w.not_sent, 0) << w.str();
  // 8 workers backing off 1 ms doubling to 200 ms try ~20 times each in
  // 3 s; a spinning client made ~270,000 attempts in that time
  EXPECT_LT(w.not_sent, 8 * 40) << "the client did not back off: " << w.str();
  EXPECT_NE(r.out.find("local NI was down"), std::string::npos) << r.out;
  ASSERT_TRUE(run(g1, restore_device_cmd(), 60).ok());
  expect_healed("the NI down on the sender");
}

// LNet's transaction timeout, as a Lustre operator sets it: with timeout=0
// the LND's timeout is LNet's share of it, (lnet_transaction_timeout - 1) /
// (retry_count + 1), as o2iblnd takes lnet_get_lnd_timeout().  A message to
// a node that stopped answering (paused: no ARP, no CM reply) waits for a
// connection through the paced connects, and fails when that one attempt's
// time is up, not at the 60 s its owner (a ping) allowed.  Twice, with two
// transaction timeouts: the failure follows it.  Once resumed, the node
// answers at once.
TEST_F(RealFaults, AMessageToAPausedPeerFailsWhenItsShareOfTheTransactionTimeoutEnds) {
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  struct Case {
    int transaction_timeout, attempt_s;
  };
  for (const Case c : {Case{13, 4}, Case{31, 10}}) {
    SCOPED_TRACE("lnet_transaction_timeout=" + std::to_string(c.transaction_timeout));
    const std::string params =
        "timeout=0 retry_count=2 lnet_transaction_timeout=" + std::to_string(c.transaction_timeout);
    for (Guest* g : {&g1, &g2}) {
      RunResult r = insmod_with(*g, kNet, params);
      ASSERT_TRUE(r.ok()) << g->name() << ": " << r.out << bed().test_log();
    }
    RunResult t = run(g1, "cat /sys/module/o2lnd/parameters/timeout", 10);
    EXPECT_EQ(t.out, std::to_string(c.attempt_s) + "\n") << "timeout=0 did not take LNet's share";
    RunResult said = run(g1, "dmesg | grep 'o2lnd: timeout=0: ' | tail -1", 10);
    EXPECT_NE(said.out.find(std::to_string(c.attempt_s) + " s per attempt"), std::string::npos)
        << said.out;
    double took = 0;
    RunResult ping;
    {
      PausedGuest paused(g2);
      auto t0 = std::chrono::steady_clock::now();
      ping = o2ctl(g1, std::string("ping ") + kG2 + " --timeout 60", 120);
      took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    EXPECT_NE(ping.status, 0) << "a paused node answered:\n" << ping.out;
    EXPECT_NE(ping.out.find("timed out"), std::string::npos) << ping.out;
    // at its attempt's deadline (connd looks four times a second), far
    // from the ping's own 60 s
    EXPECT_GE(took, c.attempt_s - 0.5) << "it failed before its attempt's time was up";
    EXPECT_LT(took, 2 * c.attempt_s + 5) << "the attempt outlived its share";
    figure("ping_to_paused_peer_failed_after_s_tt" + std::to_string(c.transaction_timeout),
           fmt1(took));
    expect_ping_ok(g1, kG2, "--timeout 20");
    for (Guest* g : {&g1, &g2}) expect_unload_frees_rdma(*g);
  }
}

// LU-17480: a RoCE peer that answers ARP while its RDMA traffic is dropped
// (a black hole: tc drops RoCEv2's UDP port 4791, siw's TCP connections to
// o2lnd's port 987, on the peer's eth0 ingress) took o2iblnd over 4 minutes
// to fail a connect and hung lustre_rmmod.  o2lnd, with a transaction
// timeout of 13 s (4 s per attempt): the message fails when its attempt's
// time is up; an unload while a connect to the hole is under way returns
// at once; once the traffic passes again, the next attempt connects.  Then
// the other case: the connection was made and the data is dropped
// afterwards (what the stall detector is for, here on a real link): the
// message fails, and the link heals once the drop ends.
TEST_F(RealFaults, ABlackHoledPeerFailsConnectsAtTheirDeadlineAndIsReachedOnceItIsBack) {
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  const std::string params = "timeout=0 retry_count=2 lnet_transaction_timeout=13";
  const std::string match = transport() == "siw"
                                ? "match ip protocol 6 0xff match ip dport 987 0xffff"
                                : "match ip protocol 17 0xff match ip dport 4791 0xffff";
  const std::string hole_on =
      "tc qdisc add dev eth0 clsact && tc filter add dev eth0 ingress "
      "protocol ip prio 1 u32 " +
      match + " action drop";
  const std::string hole_off = "tc qdisc del dev eth0 clsact";
  auto timed_ping = [&](double* took) {
    auto t0 = std::chrono::steady_clock::now();
    RunResult p = o2ctl(g1, std::string("ping ") + kG2 + " --timeout 60", 120);
    *took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return p;
  };
  for (Guest* g : {&g1, &g2}) {
    RunResult r = insmod_with(*g, kNet, params);
    ASSERT_TRUE(r.ok()) << g->name() << ": " << r.out << bed().test_log();
  }
  RunResult on = run(g2, hole_on);
  ASSERT_TRUE(on.ok()) << on.out;

  double took = 0;
  RunResult p = timed_ping(&took);
  EXPECT_NE(p.status, 0) << "a black-holed peer answered:\n" << p.out;
  EXPECT_GE(took, 3.5) << "it failed before its attempt's time was up\n" << p.out;
  EXPECT_LT(took, 13) << "the connect outlived its attempt's share\n" << p.out;
  figure("ping_to_black_holed_peer_failed_after_s", fmt1(took));
  // a black hole, not a dead node: the peer answered ARP
  RunResult nb = run(g1, "ip neigh show 192.168.1.2 dev eth0");
  EXPECT_NE(nb.out.find("lladdr"), std::string::npos) << "the peer did not answer ARP\n" << nb.out;

  // an unload while a connect to the hole is under way (the ping gives up
  // after 1 s; the connect's phase deadline is 5 s)
  RunResult bg = o2ctl(g1, std::string("ping ") + kG2 + " --timeout 1", 30);
  EXPECT_NE(bg.status, 0) << bg.out;
  RunResult rm = rmmod(g1, 60);
  EXPECT_TRUE(rm.ok()) << rm.out;
  EXPECT_LT(rm.seconds, 10) << "rmmod waited for a connect to a black hole";
  figure("rmmod_during_connect_to_black_holed_peer_s", fmt1(rm.seconds));

  RunResult off = run(g2, hole_off);
  ASSERT_TRUE(off.ok()) << off.out;
  RunResult r = insmod_with(g1, kNet, params);
  ASSERT_TRUE(r.ok()) << r.out;
  expect_ping_ok(g1, kG2, "--timeout 20");

  // connected; now the data is dropped
  on = run(g2, hole_on);
  ASSERT_TRUE(on.ok()) << on.out;
  p = timed_ping(&took);
  EXPECT_NE(p.status, 0) << "a ping crossed a black hole:\n" << p.out;
  EXPECT_LT(took, 30) << p.out;
  figure("ping_over_a_connection_gone_black_failed_after_s", fmt1(took));
  off = run(g2, hole_off);
  ASSERT_TRUE(off.ok()) << off.out;
  // the next attempt connects: within two attempts' time
  bool back = false;
  for (int i = 0; i < 3 && !back; i++) {
    back = o2ctl(g1, std::string("ping ") + kG2 + " --timeout 10", 30).ok();
  }
  EXPECT_TRUE(back) << "the peer was not reached once the drop ended";
  for (Guest* g : {&g1, &g2}) expect_unload_frees_rdma(*g);
}

// bench-faults (make bench-faults; not in make check): throughput and RPC
// rate at 0, 0.1, 1 and 5% netem loss on g2, in one boot, as ratios to the
// lossless figure, beside ib_write_bw (perftest, rdma_cm, the same link and
// loss).  Figures only, no verdict on speed; the verdicts on data and
// progress are the Loss* tests'.
TEST_F(RealFaults, ThroughputAtEachLossRateBesideIbWriteBw) {
  ASSERT_NO_FATAL_FAILURE(load_both());
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  RunResult netem = run(g2, "modprobe sch_netem", 30);
  if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
  const int secs = 8;
  const std::vector<std::string> ops = {"brw write --size 1M", "brw read --size 1M",
                                        "brw write --size 64K", "brw read --size 4K", "ping"};
  std::vector<double> lossless(ops.size(), 0);
  double bw0 = 0;
  for (const char* loss : {"0%", "0.1%", "1%", "5%"}) {
    const std::string tag = std::string("loss_") + loss;
    if (std::string(loss) == "0%") {
      run(g2, "tc qdisc del dev eth0 root 2>/dev/null; true", 30);
    } else {
      ASSERT_TRUE(
          run(g2, std::string("tc qdisc replace dev eth0 root netem loss ") + loss, 30).ok());
    }
    for (size_t i = 0; i < ops.size(); i++) {
      Window w = window(ops[i], secs, ops[i] == "ping" ? 8 : 4);
      ASSERT_TRUE(w.parsed) << w.out;
      std::string name = tag + "_" + ops[i];
      for (char& c : name) {
        if (c == ' ' || c == '%' || c == '-' || c == '.') c = '_';
      }
      const bool bulk = ops[i].find("1M") != std::string::npos;
      const double v = bulk ? w.mib_per_s : w.rpc_per_s;
      if (std::string(loss) == "0%") lossless[i] = v;
      figure(name + (bulk ? "_MiB_s" : "_rpc_s"), fmt1(v));
      figure(name + "_errors", std::to_string(w.errors));
      if (lossless[i] > 0) {
        char r[32];
        std::snprintf(r, sizeof(r), "%.3f", v / lossless[i]);
        figure(name + "_ratio", r);
      }
    }
    // raw verbs on the same link: ib_write_bw over rdma_cm, 64 KiB, the
    // data leaving g2 through the lossy egress (as the brw reads' data)
    run(g1,
        "pkill -x ib_write_bw; (timeout 90 ib_write_bw -R -s 65536 -n 300 -d " + rdma_dev(0) +
            " > /tmp/iwb-s.log 2>&1 &)",
        30);
    usleep(1000 * 1000);
    RunResult c = run(g2,
                      "timeout 90 ib_write_bw -R -s 65536 -n 300 -d " + rdma_dev(0) +
                          " 192.168.1.1 2>&1 | awk '$1 == 65536 {print $4}'",
                      120);
    double bw = std::strtod(c.out.c_str(), nullptr);
    if (std::string(loss) == "0%") bw0 = bw;
    std::string bname = tag + "_ib_write_bw_64K_g2_to_g1";
    for (char& ch : bname) {
      if (ch == '%' || ch == '.') ch = '_';
    }
    figure(bname + "_MB_s", fmt1(bw));
    if (bw0 > 0) {
      char r[32];
      std::snprintf(r, sizeof(r), "%.3f", bw / bw0);
      figure(bname + "_ratio", r);
    }
    run(g1, "pkill -x ib_write_bw; true", 30);
  }
  run(g2, "tc qdisc del dev eth0 root 2>/dev/null; true", 30);
}

// Benchmark (make bench-faults): what the RC ack timeout costs and buys.
// On rxe each lost packet stalls its QP for one ack timeout (4.096 us x
// 2^ack_timeout) before the retransmission; a peer that stopped answering
// is detected once the retry count is spent, after O2_CM_RETRY_COUNT + 1 of
// them.  For ack_timeout 14, 16 (the default) and 18: brw rates at 1% loss
// on g2, and the time from pausing g2 (a node that hangs) until g1 has no
// established connection to it, under a ping load.
TEST_F(RealFaults, ThroughputAndDeadPeerDetectionAtEachAckTimeout) {
  Guest& g1 = guest("g1");
  Guest& g2 = guest("g2");
  RunResult netem = run(g2, "modprobe sch_netem", 30);
  if (!netem.ok()) GTEST_SKIP() << "no sch_netem in this kernel: " << netem.out;
  const std::vector<std::string> ops = {"brw write --size 64K", "brw read --size 64K",
                                        "brw read --size 1M"};
  bool loaded = false;
  for (int at : {14, 16, 18}) {
    const std::string tag = "ack_timeout_" + std::to_string(at);
    SCOPED_TRACE(tag);
    const std::string params = std::string(kParams) + " ack_timeout=" + std::to_string(at);
    for (const char* n : {"g1", "g2"}) {
      if (loaded) {
        ASSERT_TRUE(rmmod(guest(n), 60).ok()) << n;
      }
      ASSERT_TRUE(insmod_with(guest(n), kNet, params).ok()) << n << ": " << bed().test_log();
    }
    loaded = true;
    expect_ping_ok(g1, kG2, "--timeout 20");
    ASSERT_TRUE(run(g2, "tc qdisc replace dev eth0 root netem loss 1%", 30).ok());
    for (const auto& op : ops) {
      Window w = window(op, 6);
      ASSERT_TRUE(w.parsed) << w.out;
      std::string name = tag;
      name += "_loss_1_";
      name += op.substr(0, op.find(" --size ")) + "_" + op.substr(op.rfind(' ') + 1);
      for (char& c : name) {
        if (c == ' ') c = '_';
      }
      const bool bulk = op.find("1M") != std::string::npos;
      figure(name + (bulk ? "_MiB_s" : "_rpc_s"), fmt1(bulk ? w.mib_per_s : w.rpc_per_s));
      figure(name + "_errors", std::to_string(w.errors));
      EXPECT_EQ(w.verify, 0) << w.str();
    }
    ASSERT_TRUE(run(g2, "tc qdisc del dev eth0 root", 30).ok());
    ASSERT_NO_FATAL_FAILURE(
        start_background("at-ping", std::string("ping ") + kG2 + " --concurrency 1 --duration 12"));
    usleep(2 * 1000 * 1000);
    // from the pause (host clock) until g1's poll sees no established
    // connection (its answer comes back within a few ms)
    double detect_s = 0;
    {
      PausedGuest paused(g2);
      auto t_pause = std::chrono::steady_clock::now();
      run(g1,
          "for i in $(seq 400); do n=$(" + o2ctl_path() +
              " net show -v | awk '/established:/ {s+=$2} END {print s+0}'); "
              "[ \"$n\" = 0 ] && break; sleep 0.05; done",
          60);
      detect_s = since(t_pause);
    }
    char d[32];
    std::snprintf(d, sizeof(d), "%.2f", detect_s);
    figure(tag + "_dead_peer_detected_s", d);
    EXPECT_LT(detect_s, 20.0) << "the connection to the paused peer was never closed";
    // the load ends by itself: its duration covers the pause
    (void)collect_background("at-ping", "background ping");
    const bool ok = ping_gets_through(6);
    EXPECT_TRUE(ok) << "no ping got through once the paused peer was resumed";
  }
}

}  // namespace
}  // namespace o2it
