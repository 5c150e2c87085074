// Host-side unit tests of the test bed's pure parts: framing, the kernel
// report scanner, the QEMU monitor client (against a fake monitor), the
// kmemleak report reader and the apt helper (against stub apt and dpkg).
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "guest.h"
#include "kmemleak.h"
#include "protocol.h"

namespace {

using namespace o2tb;

TEST(Framing, RoundTripsSeveralFramesFedByteByByte) {
  std::string stream = proto::frame(proto::kRun, 7, "abc") + proto::frame(proto::kPing, 8, "");
  std::string buf;
  proto::Header h{};
  std::string payload;
  int got = 0;
  for (char c : stream) {
    buf += c;
    while (proto::parse_frame(buf, h, payload)) {
      if (got == 0) {
        EXPECT_EQ(h.type, proto::kRun);
        EXPECT_EQ(h.id, 7u);
        EXPECT_EQ(payload, "abc");
      } else {
        EXPECT_EQ(h.type, proto::kPing);
        EXPECT_EQ(h.id, 8u);
        EXPECT_EQ(payload, "");
      }
      got++;
    }
  }
  EXPECT_EQ(got, 2);
  EXPECT_TRUE(buf.empty());
}

TEST(Framing, ResyncsAfterGarbage) {
  std::string buf = "garbage\n" + proto::frame(proto::kPong, 3, "host 12");
  proto::Header h{};
  std::string payload;
  ASSERT_TRUE(proto::parse_frame(buf, h, payload));
  EXPECT_EQ(h.id, 3u);
  EXPECT_EQ(payload, "host 12");
}

TEST(Framing, RejectsOversizedLengthWithoutWaitingForIt) {
  std::string bad;
  proto::put_u32(bad, proto::kMagic);
  proto::put_u32(bad, proto::kRun);
  proto::put_u32(bad, 1);
  proto::put_u32(bad, proto::kMaxPayload + 1);
  std::string buf = bad + proto::frame(proto::kRun, 2, "x");
  proto::Header h{};
  std::string payload;
  ASSERT_TRUE(proto::parse_frame(buf, h, payload));
  EXPECT_EQ(h.id, 2u);
}

TEST(ScanReports, FindsKernelReportsAndIgnoresNoise) {
  const std::string log =
      "[    1.0] Linux version 6.1.0\r\n"
      "[    2.0] o2-init [0.1] start: g1\n"
      "[    3.0] WARNING: CPU: 0 PID: 1 at net/foo.c:12 bar+0x1/0x2\n"
      "[    4.0] BUG: KASAN: use-after-free in baz\n"
      "[    5.0] o2-testbed-mark: WARNING: in a label\n"
      "[    6.0] ============================================\n"
      "[    7.0] WARNING: possible circular locking dependency detected\n"
      "[    8.0] refcount_t: underflow; use-after-free.\n"
      "[    9.0] list_del corruption. prev->next should be ...\n"
      "[   10.0] general protection fault, probably for non-canonical address\n"
      "[   11.0] Kernel panic - not syncing: Fatal exception\n"
      "[   12.0] kmemleak: 2 new suspected memory leaks\n"
      "[   13.0] o2lnd: loading out-of-tree module taints kernel.\n";
  auto r = scan_reports(log);
  ASSERT_EQ(r.size(), 8u);
  EXPECT_NE(r[0].find("net/foo.c"), std::string::npos);
  EXPECT_EQ(r[0].back(), '2');  // "\r" stripped
  EXPECT_NE(r.back().find("kmemleak"), std::string::npos);
}

TEST(ScanReports, OopsKeepsItsRipAndCallTraceButNotTheRegisters) {
  const std::string log =
      "[  137.2] BUG: kernel NULL pointer dereference, address: 0000000000000018\n"
      "[  137.2] #PF: supervisor read access in kernel mode\n"
      "[  137.2] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
      "[  137.2] RIP: 0010:o2_tx_post_locked+0x1a2/0x5e0 [o2lnd]\n"
      "[  137.2] RSP: 0018:ffffa1 EFLAGS: 00010246\n"
      "[  137.2] Call Trace:\n"
      "[  137.2]  <TASK>\n"
      "[  137.2]  ? o2_conn_check_sends+0x40/0x90 [o2lnd]\n"
      "[  137.2]  ib_unregister_device+0x20/0x30 [ib_core]\n"
      "[  137.3] o2lnd: NI 10.0.0.2@o2ib up again\n";
  auto r = scan_reports(log);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_NE(r[0].find("address: 0000000000000018"), std::string::npos);
  EXPECT_NE(r[1].find("Oops"), std::string::npos);
  EXPECT_NE(r[2].find("RIP: 0010:o2_tx_post_locked"), std::string::npos);
  EXPECT_NE(r[3].find("o2_conn_check_sends"), std::string::npos);
  EXPECT_NE(r[4].find("ib_unregister_device"), std::string::npos);
}

TEST(ScanReports, TheDebugTrapQemuLeaksIntoTheGuestIsNoReport) {
  const std::string log =
      "[   33.1] WARNING: CPU: 0 PID: 31 at arch/x86/kernel/traps.c:1120 "
      "exc_debug_kernel+0xca/0x160\n"
      "[   33.1] RIP: 0010:exc_debug_kernel+0xca/0x160\n"
      "[   33.1]  asm_exc_debug+0x1e/0x40\n"
      "[   33.1] RIP: 0010:kmem_cache_alloc_node_noprof+0x74/0x330\n"
      "[   33.1]  rxe_init_packet+0xa1/0x150 [rdma_rxe]\n"
      "[   33.2] WARNING: CPU: 1 PID: 7 at net/foo.c:1 bar+0x1/0x2\n";
  auto r = scan_reports(log);
  ASSERT_EQ(r.size(), 1u) << r[0];
  EXPECT_NE(r[0].find("net/foo.c"), std::string::npos);
}

TEST(ScanReports, CleanBootHasNone) {
  EXPECT_TRUE(
      scan_reports("[0.0] Booting\n[0.1] rdma_rxe: loaded\n[0.2] infiniband rxe0: added veth0\n")
          .empty());
}

// A fake QEMU human monitor on a unix socket: greets with the banner and
// prompt, echoes each command line with terminal escapes as QEMU does,
// answers `info status` with the VM state, `stop` / `cont` change it.
class FakeMonitor {
 public:
  FakeMonitor() : fd_(socket(AF_UNIX, SOCK_STREAM, 0)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "o2tb-mon-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data()) != nullptr ? tmpl : std::filesystem::temp_directory_path().string();
    path_ = dir_ + "/mon.sock";
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    path_.copy(sa.sun_path, path_.size());
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): sockets API
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(fd_, 4) != 0) {
      ADD_FAILURE() << "fake monitor: cannot listen on " << path_;
    }
    th_ = std::thread([this] { serve(); });
  }
  ~FakeMonitor() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    th_.join();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  FakeMonitor(const FakeMonitor&) = delete;
  FakeMonitor& operator=(const FakeMonitor&) = delete;
  FakeMonitor(FakeMonitor&&) = delete;
  FakeMonitor& operator=(FakeMonitor&&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  std::vector<std::string> commands;  // as received

 private:
  void serve() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string hello = "QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) ";
      if (write(c, hello.data(), hello.size()) < 0) break;
      std::string buf;
      char ch = 0;
      while (read(c, &ch, 1) == 1) {
        if (ch != '\n') {
          buf += ch;
          continue;
        }
        commands.push_back(buf);
        std::string out = buf.substr(0, 1) + "\x1b[K\x1b[D" + buf + "\x1b[K\r\n";
        if (buf == "stop") status_ = "paused";
        if (buf == "cont") status_ = "running";
        if (buf == "info status") out += "VM status: " + status_ + "\r\n";
        out += "(qemu) ";
        if (write(c, out.data(), out.size()) < 0) break;
        buf.clear();
      }
      close(c);
    }
  }
  int fd_ = -1;
  std::string dir_, path_, status_ = "running";
  std::thread th_;
};

TEST(Monitor, HmpCommandReturnsTheAnswerWithoutEchoOrPrompt) {
  FakeMonitor m;
  EXPECT_EQ(hmp_command(m.path(), "info status"), "VM status: running\n");
  EXPECT_EQ(hmp_command(m.path(), "stop"), "");
  EXPECT_EQ(hmp_command(m.path(), "info status"), "VM status: paused\n");
  EXPECT_EQ(hmp_command(m.path(), "cont"), "");
  EXPECT_EQ(hmp_command(m.path(), "info status"), "VM status: running\n");
  EXPECT_EQ(m.commands, (std::vector<std::string>{"info status", "stop", "info status", "cont",
                                                  "info status"}));
}

TEST(Monitor, HmpCommandWithoutMonitorThrows) {
  EXPECT_THROW(hmp_command("/var/tmp/o2tb-no-such-monitor.sock", "stop", 1), Error);
}

TEST(Monitor, GuestMonitorSocketIsInItsStateFolder) {
  GuestConfig c;
  c.name = "g9";
  c.dir = "/var/tmp/o2tb-unit-g9";
  {
    Guest g(c);
    EXPECT_EQ(g.monitor_path(), "/var/tmp/o2tb-unit-g9/mon.sock");
    EXPECT_FALSE(g.paused());
    EXPECT_THROW(g.pause(), Error);  // not running
  }
  std::filesystem::remove_all("/var/tmp/o2tb-unit-g9");
}

// --- the QEMU command line and the links between guests ------------------

std::vector<std::string> argv_of(const GuestConfig& c) {
  Guest g(c);
  return g.qemu_argv();
}

// The argument after `flag` (its first occurrence), or "" when absent.
std::string arg_after(const std::vector<std::string>& v, const std::string& flag) {
  auto it = std::find(v.begin(), v.end(), flag);
  return it == v.end() || it + 1 == v.end() ? "" : *(it + 1);
}

TEST(QemuCommandLine, OneVcpuIsTranslatedInParallelModeSoGuestBarriersReachTheHost) {
  GuestConfig c;
  c.name = "g9";
  c.dir = "/var/tmp/o2tb-unit-g9";
  EXPECT_EQ(arg_after(argv_of(c), "-smp"), "1,maxcpus=2");
  c.smp = 3;
  EXPECT_EQ(arg_after(argv_of(c), "-smp"), "3,maxcpus=3");
  std::filesystem::remove_all(c.dir);
}

TEST(QemuCommandLine, EachNicTakesItsLinkSocketFromADescriptorAndNoHostNetwork) {
  GuestConfig c;
  c.name = "g9";
  c.dir = "/var/tmp/o2tb-unit-g9";
  c.nics = {{40001, 40002, "52:54:00:12:09:00"}, {40003, 40004, "52:54:00:12:09:01"}};
  auto v = argv_of(c);
  std::vector<std::string> netdevs;
  for (size_t i = 0; i + 1 < v.size(); i++) {
    if (v[i] == "-netdev") netdevs.push_back(v[i + 1]);  // only these: never slirp
  }
  EXPECT_EQ(netdevs, (std::vector<std::string>{"dgram,id=n0,local.type=fd,local.str=100",
                                               "dgram,id=n1,local.type=fd,local.str=101"}));
  EXPECT_EQ(arg_after(v, "-nic"), "none");
  std::filesystem::remove_all(c.dir);
}

TEST(LinkSockets, APairCarriesJumboFramesBothWays) {
  auto [pa, pb] = free_udp_port_pair();
  ASSERT_NE(pa, pb);
  int a = open_link_socket({pa, pb, ""});
  int b = open_link_socket({pb, pa, ""});
  std::string frame(9014, 'x');
  frame[0] = 'A';
  ASSERT_EQ(send(a, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
  frame[0] = 'B';
  ASSERT_EQ(send(b, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
  std::string got(65536, '\0');
  ASSERT_EQ(recv(b, got.data(), got.size(), 0), static_cast<ssize_t>(frame.size()));
  EXPECT_EQ(got[0], 'A');
  ASSERT_EQ(recv(a, got.data(), got.size(), 0), static_cast<ssize_t>(frame.size()));
  EXPECT_EQ(got[0], 'B');
  close(a);
  close(b);
}

// A peer that takes no frames (a paused or slow guest) costs its frames, never
// the sender's progress: QEMU's transmit path never has to wait for a peer.
TEST(LinkSockets, AFullPeerDropsFramesAndNeverBlocksTheSender) {
  auto [pa, pb] = free_udp_port_pair();
  int a = open_link_socket({pa, pb, ""});
  int b = open_link_socket({pb, pa, ""});
  int rcvbuf = 0;
  socklen_t len = sizeof rcvbuf;
  ASSERT_EQ(getsockopt(b, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0) << strerror(errno);
  const std::string frame(9014, 'x');
  const int n = 3000;  // 27 MB, several times the receive buffer
  int sent = 0;
  for (int i = 0; i < n; i++) {
    if (send(a, frame.data(), frame.size(), MSG_DONTWAIT) == static_cast<ssize_t>(frame.size())) {
      sent++;
    }
  }
  EXPECT_EQ(sent, n) << "a send failed: " << strerror(errno);
  int got = 0;
  std::string buf(65536, '\0');
  while (recv(b, buf.data(), buf.size(), MSG_DONTWAIT) > 0) got++;
  // A jumbo frame takes ~17 KiB of the buffer (its skb's truesize): as
  // root the buffer is the 4 MiB asked for (8 MiB granted) and holds
  // hundreds; as a user it is capped by net.core.rmem_max (~25 frames).
  EXPECT_GE(got, std::max(1, rcvbuf / (64 << 10)))
      << "a " << rcvbuf << "-byte receive buffer should hold a burst";
  EXPECT_LT(got, n) << "the rest was dropped";
  close(a);
  close(b);
}

TEST(LinkSockets, ATakenPortIsAnErrorNamingIt) {
  auto [pa, pb] = free_udp_port_pair();
  int a = open_link_socket({pa, pb, ""});
  try {
    open_link_socket({pa, pb, ""});
    ADD_FAILURE() << "bound the same port twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(pa)), std::string::npos) << e.what();
  }
  close(a);
}

}  // namespace

// --- kmemleak: the deferred leak checks of the debug stage ---------------

namespace {
// The shape of /sys/kernel/debug/kmemleak on 6.1 (two objects).
constexpr const char* kLeakReport =
    "unreferenced object 0xffff888004a1c000 (size 64):\n"
    "  comm \"insmod\", pid 612, jiffies 4294912345 (age 42.120s)\n"
    "  hex dump (first 32 bytes):\n"
    "    6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b  kkkkkkkkkkkkkkkk\n"
    "  backtrace:\n"
    "    [<000000001c2b3a4d>] kmalloc_trace+0x26/0x90\n"
    "    [<00000000a1b2c3d4>] o2_conn_alloc+0x3e/0x2a0 [o2lnd]\n"
    "unreferenced object 0xffff888004a1d000 (size 128):\n"
    "  comm \"kworker/0:1\", pid 35, jiffies 4294922345 (age 2.5s)\n"
    "  backtrace:\n"
    "    [<000000001c2b3a4d>] __kmalloc+0x4a/0x130\n";
}  // namespace

TEST(Kmemleak, ParsesEveryObjectWithItsAge) {
  auto v = o2tb::parse_kmemleak(std::string("1234.56\n") + kLeakReport);
  ASSERT_EQ(v.size(), 2U);
  EXPECT_DOUBLE_EQ(v[0].age, 42.12);
  EXPECT_DOUBLE_EQ(v[1].age, 2.5);
  EXPECT_NE(v[0].text.find("o2_conn_alloc"), std::string::npos);
  EXPECT_EQ(v[0].text.find("1234.56"), std::string::npos) << "lines before the first object";
  EXPECT_EQ(v[1].text.find("o2_conn_alloc"), std::string::npos);
  EXPECT_TRUE(o2tb::parse_kmemleak("").empty());
  EXPECT_TRUE(o2tb::parse_kmemleak("no leaks here\n").empty());
}

TEST(Kmemleak, ObjectWithoutAgeIsKept) {
  auto v = o2tb::parse_kmemleak("unreferenced object 0xffff888004a1c000 (size 8):\n  backtrace:\n");
  ASSERT_EQ(v.size(), 1U);
  EXPECT_LT(v[0].age, 0);
}

TEST(Kmemleak, LeakIsChargedToTheTestThatAllocatedIt) {
  const std::vector<double> starts = {100, 150, 200};  // three tests' start uptimes
  const double now = 260;                              // when the report was read
  EXPECT_EQ(o2tb::leak_window(starts, now, 5), 2U);    // born 255: the last test
  EXPECT_EQ(o2tb::leak_window(starts, now, 100), 1U);  // born 160
  EXPECT_EQ(o2tb::leak_window(starts, now, 130), 0U);  // born 130
  EXPECT_EQ(o2tb::leak_window(starts, now, 60), 2U);   // born exactly at the third start
  EXPECT_EQ(o2tb::leak_window(starts, now, 60.03), 2U) << "within the clocks' slack";
  EXPECT_EQ(o2tb::leak_window(starts, now, 61), 1U);
  EXPECT_EQ(o2tb::leak_window(starts, now, 200), 0U) << "born before the first test: the first";
  EXPECT_EQ(o2tb::leak_window(starts, now, -1), 2U) << "no age: the last test";
  EXPECT_EQ(o2tb::leak_window({100}, now, 500), 0U);
}

namespace {

// scripts/o2-apt.sh against stubs of apt-get, dpkg and dpkg-query in
// front of PATH: an install killed half way (a stopped run) leaves dpkg
// "interrupted", and the next run must mend it, not fail on it.
class AptHelper : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/o2-apt-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void stub(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/bash\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  // Runs `o2_apt_install PKG` with the stubs; returns its exit status.
  int install(const std::string& pkg) {
    std::string cmd = "env PATH=" + dir_ + ":/usr/bin:/bin O2_CACHE=" + dir_ +
                      "/cache O2_APT_UPDATED=1 bash -c '. " + O2_SOURCE_DIR +
                      "/scripts/o2-apt.sh && o2_apt_install " + pkg + "' 2>" + dir_ + "/stderr";
    int rc = std::system(cmd.c_str());  // NOLINT(*-mt-unsafe)
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string dir_;
};

TEST_F(AptHelper, InterruptedDpkgIsConfiguredAndTheInstallTriedAgain) {
  stub("dpkg-query", "exit 1");  // nothing installed
  stub("dpkg", "echo \"$*\" >>'" + dir_ + "/dpkg.calls'; touch '" + dir_ + "/configured'");
  stub("apt-get", "echo \"$*\" >>'" + dir_ + "/apt.calls'\n[[ -e '" + dir_ +
                      "/configured' ]] && exit 0\n"
                      "echo \"E: dpkg was interrupted, you must manually run "
                      "'dpkg --configure -a' to correct the problem.\"\nexit 100");
  EXPECT_EQ(install("some-pkg"), 0) << read("stderr");
  EXPECT_NE(read("dpkg.calls").find("--configure -a"), std::string::npos);
  std::string apt = read("apt.calls");
  EXPECT_EQ(std::count(apt.begin(), apt.end(), '\n'), 2) << apt;  // failed once, then installed
  EXPECT_EQ(read("stderr"), "");  // what the installer printed stays in the log
}

TEST_F(AptHelper, OtherInstallFailureIsOneLineNamingTheLog) {
  stub("dpkg-query", "exit 1");
  stub("dpkg", "echo \"$*\" >>'" + dir_ + "/dpkg.calls'");
  stub("apt-get", "echo 'E: Unable to locate package some-pkg'; exit 100");
  EXPECT_NE(install("some-pkg"), 0);
  EXPECT_EQ(read("dpkg.calls"), "");  // no repair tried for another error
  std::string err = read("stderr");
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("apt-get install some-pkg failed"), std::string::npos) << err;
}

}  // namespace
