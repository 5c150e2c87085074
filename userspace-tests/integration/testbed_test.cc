// The test bed itself, on the three-guest router topology (no o2lnd):
// proves the agent's contract and that every link carries RDMA, so that a
// failing o2lnd scenario is not a test-bed problem.
//   compute eth0 192.168.1.1 <-> router eth0 192.168.1.2
//   router  eth1 192.168.2.2 <-> server eth0 192.168.2.1
#include <chrono>
#include <future>
#include <string>

#include "fixture.h"

namespace o2it {
namespace {

O2_TESTBED_SUITE(TestbedRouter, "three");

TEST_F(TestbedRouter, AgentReturnsStatusOutputAndHonoursTimeouts) {
  Guest& g = guest("compute");
  RunResult r = run(g, "echo out; echo err >&2; exit 7", 10);
  EXPECT_EQ(r.status, 7);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\nerr\n");

  r = g.run("echo out; echo err >&2", 10, /*separate_stderr=*/true);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");

  r = run(g, "sleep 30", 2);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 10);
  EXPECT_NE(run(g, "pgrep -x sleep", 5).status, 0) << "the timed-out command was not killed";

  // A background child keeping stdout open does not hold up the reply.
  r = run(g, "sleep 20 & echo started", 10);
  EXPECT_EQ(r.status, 0);
  EXPECT_LT(r.seconds, 5);
  run(g, "pkill -x sleep; true", 5);

  auto f = g.read_file("/proc/sys/kernel/hostname");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, "compute\n");
  EXPECT_FALSE(g.read_file("/nonexistent").has_value());
}

TEST_F(TestbedRouter, KernelReportsAreDetectedAfterTheMark) {
  Guest& g = guest("server");
  EXPECT_TRUE(g.kernel_reports().empty());
  run(g, "echo 'WARNING: CPU: 0 PID: 1 at fake/testbed.c:1 selftest' > /dev/kmsg", 5);
  auto reports = g.kernel_reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("fake/testbed.c"), std::string::npos) << reports[0];
  g.mark("after-selftest-warning");  // so the fixture's check passes
  EXPECT_TRUE(g.kernel_reports().empty());
}

TEST_F(TestbedRouter, EveryLinkCarriesRdmaAtMtu9000) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  Guest& server = guest("server");
  EXPECT_EQ(run(router, "cat /proc/sys/net/ipv4/ip_forward", 5).out, "1\n");
  for (auto* g : {&compute, &router, &server}) {
    RunResult r = run(*g, "rdma link show; ip -br link show eth0", 10);
    EXPECT_NE(r.out.find("rxe0/1 state ACTIVE"), std::string::npos) << g->name() << ":\n" << r.out;
    RunResult mtu = run(*g, "cat /sys/class/net/eth0/mtu", 5);
    EXPECT_EQ(mtu.out, "9000\n") << g->name();
  }
  // rping across each link (server side in the router).
  struct Hop {
    Guest* client;
    const char* addr;
  } hops[] = {{&compute, "192.168.1.2"}, {&server, "192.168.2.2"}};
  for (auto& h : hops) {
    run(router, std::string("(rping -s -a ") + h.addr + " -C 2 >/dev/null 2>&1 &)", 5);
    RunResult r;
    for (int i = 0; i < 10; i++) {  // the server may take a moment to listen
      r = run(*h.client, std::string("rping -c -a ") + h.addr + " -C 2 -v", 30);
      if (r.ok()) break;
      run(*h.client, "sleep 0.5", 5);
    }
    EXPECT_TRUE(r.ok()) << h.client->name() << " -> " << h.addr << ":\n" << r.out;
    EXPECT_NE(r.out.find("rdma-ping-1"), std::string::npos) << r.out;
  }
  run(router, "pkill -x rping; true", 5);
}

TEST_F(TestbedRouter, KilledGuestBootsAgainWithItsLinks) {
  Guest& server = guest("server");
  server.kill();
  EXPECT_FALSE(server.alive());
  server.boot();
  EXPECT_TRUE(server.alive());
  RunResult r = run(server, "ip -br -4 addr show eth0; rdma link show", 10);
  EXPECT_NE(r.out.find("192.168.2.1/24"), std::string::npos) << r.out;
  run(server, "(rping -s -a 192.168.2.1 -C 1 >/dev/null 2>&1 &)", 5);
  Guest& router = guest("router");
  for (int i = 0; i < 10; i++) {
    r = run(router, "rping -c -a 192.168.2.1 -C 1", 30);
    if (r.ok()) break;
    run(router, "sleep 0.5", 5);
  }
  EXPECT_TRUE(r.ok()) << r.out;
}

// pause() freezes a guest (QEMU `stop`): its agent answers nothing (a
// run() just waits, it is not lost), its neighbours cannot reach it; after
// resume() the waiting command runs and returns, and the links work again.
TEST_F(TestbedRouter, PausedGuestRunsNothingUntilResumed) {
  Guest& server = guest("server");
  Guest& router = guest("router");
  ASSERT_EQ(run(router, "busybox ping -c 1 -W 5 192.168.2.1", 15).status, 0);
  {
    PausedGuest paused(server);
    EXPECT_TRUE(server.paused());
    EXPECT_EQ(server.vm_status(), "paused");
    auto t0 = std::chrono::steady_clock::now();
    auto waiting = std::async(std::launch::async, [&] { return server.run("echo resumed", 60); });
    EXPECT_EQ(waiting.wait_for(std::chrono::seconds(3)), std::future_status::timeout)
        << "a paused guest answered";
    RunResult r = run(router, "busybox ping -c 2 -W 1 192.168.2.1", 15);
    EXPECT_NE(r.status, 0) << "a paused guest answered ICMP:\n" << r.out;
    paused.resume();
    RunResult w = waiting.get();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(w.ok()) << w.out;
    EXPECT_EQ(w.out, "resumed\n");
    EXPECT_GE(s, 3);
    figure("paused_run_returned_after_s", std::to_string(s));
  }
  EXPECT_FALSE(server.paused());
  EXPECT_EQ(server.vm_status(), "running");
  RunResult r;
  for (int i = 0; i < 10; i++) {
    r = run(router, "busybox ping -c 1 -W 2 192.168.2.1", 15);
    if (r.ok()) break;
  }
  EXPECT_TRUE(r.ok()) << r.out;
}

}  // namespace
}  // namespace o2it
