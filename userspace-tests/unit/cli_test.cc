#include "o2ctl/cli.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/backend.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_conn;
using o2lnd::testing::make_ni;
using o2lnd::testing::make_peer;

constexpr std::uint64_t kPeer = 0x00050000c0a80102ULL;  // 192.168.1.2@o2ib0
// This build's ABI as o2ctl prints it.
const std::string kAbi = std::to_string(O2LND_ABI_VERSION);
constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0

class CliTest : public ::testing::Test {
 protected:
  int run_o2ctl(std::vector<std::string_view> args) {
    out_.str("");
    err_.str("");
    Env env{out_, err_,
            [this](const std::string& path) -> o2lnd::Result<std::unique_ptr<o2lnd::Backend>> {
              opened_path_ = path;
              ++kernel_->opens;
              if (open_err_ != 0) {
                return o2lnd::Error{open_err_, "cannot open " + path + ": " +
                                                   std::strerror(open_err_) +
                                                   " (is the o2lnd module loaded?)"};
              }
              return std::unique_ptr<o2lnd::Backend>(std::make_unique<FakeBackend>(kernel_));
            }};
    env.tool_version = "0.1.0";
    return run(args, env);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }
  o2lnd_ioc_ping last_ping() const {
    o2lnd_ioc_ping p{};
    for (const auto& c : kernel_->calls) {
      if (c.cmd == O2LND_IOC_PING) {
        std::memcpy(&p, c.bytes.data(), sizeof(p));
      }
    }
    return p;
  }
  void reply_two_ids() {
    kernel_->on_ping = [](o2lnd_ioc_ping& p) {
      p.pid = 12345;
      p.n_ids = 2;
      p.ids[0].nid = O2LND_LO_NID;
      p.ids[1].nid = kPeer;
      return 0;
    };
  }

  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
  int open_err_ = 0;
  std::string opened_path_;
  std::ostringstream out_;
  std::ostringstream err_;
};

// ---- ping ------------------------------------------------------------------

TEST_F(CliTest, PingPrintsOneLctlLinePerNid) {
  reply_two_ids();
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(out(), "12345-0@lo\n12345-192.168.1.2@o2ib0\n");
  EXPECT_EQ(err(), "");
  EXPECT_EQ(last_ping().nid, kPeer);
  EXPECT_EQ(last_ping().timeout_ms, 0U) << "no --timeout: the module's default applies";
  EXPECT_EQ(last_ping().src_nid, O2LND_NID_ANY);
}

TEST_F(CliTest, PingFailurePrintsFailedToPingAndExits1) {
  kernel_->on_ping = [](o2lnd_ioc_ping&) { return ETIMEDOUT; };
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(out(), "");
  EXPECT_EQ(err(), "failed to ping 192.168.1.2@o2ib0: Connection timed out\n");
}

TEST_F(CliTest, PingFailureNamesTheNidAsGiven) {
  kernel_->on_ping = [](o2lnd_ioc_ping&) { return EHOSTUNREACH; };
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib"}), kExitFailure);
  EXPECT_EQ(err(), "failed to ping 192.168.1.2@o2ib: No route to host\n");
}

TEST_F(CliTest, PingInvalidNidIsAUsageErrorWithTheReason) {
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.256@o2ib0"}), kExitUsage);
  EXPECT_EQ(err(),
            "o2ctl: invalid NID '192.168.1.256@o2ib0': octet 256 out of range (0..255) in IPv4 "
            "address '192.168.1.256'\n");
  EXPECT_EQ(kernel_->opens, 0) << "a usage error must not touch the device";
}

TEST_F(CliTest, PingTimeoutOptionInSecondsWithFractions) {
  reply_two_ids();
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--timeout", "0.5"}), kExitOk);
  EXPECT_EQ(last_ping().timeout_ms, 500U);
  EXPECT_EQ(run_o2ctl({"ping", "--timeout=3", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(last_ping().timeout_ms, 3000U);
  EXPECT_EQ(run_o2ctl({"ping", "-t", "600", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(last_ping().timeout_ms, 600000U);
}

TEST_F(CliTest, PingTimeoutAsSecondArgumentLikeLctl) {
  reply_two_ids();
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "2"}), kExitOk);
  EXPECT_EQ(last_ping().timeout_ms, 2000U);
}

TEST_F(CliTest, PingBadTimeoutIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--timeout", "abc"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl: invalid timeout 'abc': not a number of seconds\n");
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--timeout", "601"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl: invalid timeout '601': too large (at most 600 seconds)\n");
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--timeout", "0"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "1", "--timeout", "1"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--timeout"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, PingSourceIsPassedAndValidated) {
  reply_two_ids();
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--source", "192.168.1.1@o2ib0"}), kExitOk);
  EXPECT_EQ(last_ping().src_nid, kLocal);
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--source", "bogus"}), kExitUsage);
  EXPECT_EQ(err(),
            "o2ctl: invalid NID 'bogus': missing '@' (expected ADDRESS@NETWORK, e.g. "
            "192.168.1.2@o2ib0)\n");
}

TEST_F(CliTest, PingOfNidStartingWithMinusIsAnInvalidNidNotAnOption) {
  EXPECT_EQ(run_o2ctl({"ping", "-1.2.3.4@o2ib0"}), kExitUsage);
  EXPECT_EQ(err(),
            "o2ctl: invalid NID '-1.2.3.4@o2ib0': unexpected character '-' in IPv4 address "
            "'-1.2.3.4'\n");
}

TEST_F(CliTest, PingOfEmptyNidIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"ping", ""}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl: invalid NID '': empty NID\n");
}

TEST_F(CliTest, DeviceOptionWithoutValueIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"--device"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl: option '--device' needs a value\n");
}

TEST_F(CliTest, PingWithoutNidIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"ping"}), kExitUsage);
  EXPECT_NE(err().find("expected NID"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"ping", "a", "b", "c"}), kExitUsage);
}

TEST_F(CliTest, PingUnknownOptionIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0", "--bogus"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl ping: unknown option '--bogus'\nTry 'o2ctl ping --help'.\n");
}

TEST_F(CliTest, PingTruncatedReplySaysSoOnStderr) {
  kernel_->on_ping = [](o2lnd_ioc_ping& p) {
    p.pid = 12345;
    p.n_ids = 20;
    for (auto& id : p.ids) {
      id.nid = kPeer;
    }
    p.ids[0].nid = O2LND_LO_NID;
    return 0;
  };
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(err(), "o2ctl: 192.168.1.2@o2ib0 reported 20 NIDs, showing 16\n");
}

// ---- the device --------------------------------------------------------------

TEST_F(CliTest, MissingDeviceSaysLoadTheModule) {
  open_err_ = ENOENT;
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: cannot open /dev/o2lnd: No such file or directory (is the o2lnd module "
            "loaded?)\n");
  EXPECT_EQ(run_o2ctl({"net", "show"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: cannot open /dev/o2lnd: No such file or directory (is the o2lnd module "
            "loaded?)\n");
}

TEST_F(CliTest, DeviceOptionOverridesThePath) {
  reply_two_ids();
  EXPECT_EQ(run_o2ctl({"--device", "/tmp/x", "ping", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(opened_path_, "/tmp/x");
  EXPECT_EQ(run_o2ctl({"--device=/tmp/y", "net", "show"}), kExitOk);
  EXPECT_EQ(opened_path_, "/tmp/y");
}

TEST_F(CliTest, ModuleWithOtherAbiIsRefused) {
  kernel_->abi = 1;
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: o2lnd module ABI 1, o2ctl speaks ABI " + kAbi +
                       ": upgrade o2ctl or load a matching "
                       "module\n");
  EXPECT_EQ(last_ping().nid, 0U) << "no PING may be sent to a module of another ABI";
}

// ---- net show ------------------------------------------------------------------

TEST_F(CliTest, NetShowPrintsYaml) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0", "rxe0")};
  EXPECT_EQ(run_o2ctl({"net", "show"}), kExitOk);
  EXPECT_EQ(out(),
            "net:\n"
            "    - net type: lo\n"
            "      local NI(s):\n"
            "        - nid: 0@lo\n"
            "          status: up\n"
            "    - net type: o2ib0\n"
            "      local NI(s):\n"
            "        - nid: 192.168.1.1@o2ib0\n"
            "          status: up\n"
            "          interfaces:\n"
            "              0: eth0\n");
}

TEST_F(CliTest, NetShowVerboseParsesAsYaml) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0", "rxe0")};
  EXPECT_EQ(run_o2ctl({"net", "show", "-v"}), kExitOk);
  EXPECT_NE(out().find("statistics:"), std::string::npos);
  EXPECT_NE(out().find("tunables:"), std::string::npos);
  EXPECT_NE(out().find("rdma device: rxe0"), std::string::npos);
  auto shape = o2ctl_yaml::net_show(out(), true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << out();
  EXPECT_EQ(shape.nested, 2U) << out();
  EXPECT_EQ(run_o2ctl({"net", "show", "--verbose"}), kExitOk);
}

TEST_F(CliTest, NetShowFiltersByNet) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  EXPECT_EQ(run_o2ctl({"net", "show", "--net", "o2ib0"}), kExitOk);
  EXPECT_EQ(out().find("net type: lo"), std::string::npos);
  EXPECT_NE(out().find("net type: o2ib0"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"net", "show", "--net", "o2ib9"}), kExitFailure);
}

TEST_F(CliTest, NetShowErrorIsReported) {
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", "")};
  kernel_->net_err = EFAULT;
  EXPECT_EQ(run_o2ctl({"net", "show"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: net show: O2LND_IOC_NET_SHOW of NI 0: Bad address\n");
}

TEST_F(CliTest, NetWithoutSubcommandListsThem) {
  EXPECT_EQ(run_o2ctl({"net"}), kExitUsage);
  EXPECT_NE(err().find("o2ctl net show"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"net", "bogus"}), kExitUsage);
  EXPECT_NE(err().find("unknown: 'bogus'"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"net", "--help"}), kExitOk);
  EXPECT_NE(out().find("o2ctl net show"), std::string::npos);
}

// ---- version and help --------------------------------------------------------

TEST_F(CliTest, VersionShowsToolAbiAndModule) {
  EXPECT_EQ(run_o2ctl({"version"}), kExitOk);
  EXPECT_EQ(out(),
            "o2ctl version: \"0.1.0\"\n"
            "o2ctl abi: " +
                kAbi +
                "\n"
                "module version: \"0.1.0-fake\"\n"
                "module abi: " +
                kAbi + "\n");
  EXPECT_EQ(run_o2ctl({"--version"}), kExitOk);
}

TEST_F(CliTest, VersionReportsAModuleOfAnotherAbi) {
  kernel_->abi = O2LND_ABI_VERSION + 1;
  kernel_->abi_min = O2LND_ABI_VERSION + 1;  // a module that no longer accepts this ABI
  const std::string next = std::to_string(O2LND_ABI_VERSION + 1);
  EXPECT_EQ(run_o2ctl({"version"}), kExitFailure);
  EXPECT_NE(out().find("module abi: " + next + "\n"), std::string::npos);
  EXPECT_EQ(err(), "o2ctl: o2lnd module ABI " + next + ", o2ctl speaks ABI " + kAbi +
                       ": upgrade o2ctl or load a matching "
                       "module\n");
}

TEST_F(CliTest, VersionWithoutModuleStillShowsTheTool) {
  open_err_ = ENOENT;
  EXPECT_EQ(run_o2ctl({"version"}), kExitFailure);
  EXPECT_EQ(out(), "o2ctl version: \"0.1.0\"\no2ctl abi: " + kAbi + "\n");
  EXPECT_NE(err().find("is the o2lnd module loaded?"), std::string::npos);
}

TEST_F(CliTest, HelpListsEveryCommand) {
  EXPECT_EQ(run_o2ctl({"--help"}), kExitOk);
  for (const char* c : {"ping", "net show", "peer show", "peer close", "conn show", "fault add",
                        "fault del", "fault list", "stats", "selftest ping", "version"}) {
    EXPECT_NE(out().find(std::string("  ") + c), std::string::npos) << c;
  }
  EXPECT_EQ(run_o2ctl({"help"}), kExitOk);
  EXPECT_EQ(run_o2ctl({"-h"}), kExitOk);
}

TEST_F(CliTest, CommandHelp) {
  EXPECT_EQ(run_o2ctl({"ping", "--help"}), kExitOk);
  EXPECT_NE(out().find("Usage: o2ctl ping NID"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"net", "show", "-h"}), kExitOk);
  EXPECT_NE(out().find("Usage: o2ctl net show"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"help", "net", "show"}), kExitOk);
  EXPECT_NE(out().find("Usage: o2ctl net show"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"help", "bogus"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, NoCommandOrUnknownCommandIsAUsageError) {
  EXPECT_EQ(run_o2ctl({}), kExitUsage);
  EXPECT_NE(err().find("Usage: o2ctl"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"bogus"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl: unknown command 'bogus'\nTry 'o2ctl --help'.\n");
  EXPECT_EQ(run_o2ctl({"--bogus"}), kExitUsage);
}

// ---- timeout parsing -------------------------------------------------------------

TEST(ParseTimeout, SecondsAndFractions) {
  using std::chrono::milliseconds;
  EXPECT_EQ(*parse_timeout("5"), milliseconds(5000));
  EXPECT_EQ(*parse_timeout("0.5"), milliseconds(500));
  EXPECT_EQ(*parse_timeout(".25"), milliseconds(250));
  EXPECT_EQ(*parse_timeout("0.001"), milliseconds(1));
  EXPECT_EQ(*parse_timeout("600"), milliseconds(600000));
  EXPECT_EQ(*parse_timeout("600.000"), milliseconds(600000));
}

TEST(ParseTimeout, RejectsZeroNegativeTooLargeAndJunk) {
  for (std::string_view s : {"", "0", "0.0", "0.0001", "600.001", "601", "99999999999", "-1", "+1",
                             "1e3", "abc", "1s", " 1", "1 ", ".", "1.2.3"}) {
    auto r = parse_timeout(s);
    EXPECT_FALSE(r.ok()) << "'" << s << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.error().errnum, EINVAL);
    }
  }
}

// ---- peer show ---------------------------------------------------------------------

constexpr std::uint64_t kPeer3 = 0x00050000c0a80103ULL;   // 192.168.1.3@o2ib0
constexpr std::uint64_t kLocal1 = 0x00050001c0a80201ULL;  // 192.168.2.1@o2ib1
constexpr std::uint64_t kPeer1 = 0x00050001c0a80202ULL;   // 192.168.2.2@o2ib1

class PeerCliTest : public CliTest {
 protected:
  void SetUp() override {
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0"),
                    make_ni(kLocal1, "o2ib1", "eth1")};
  }
  static o2lnd_ioc_peer established_peer(std::uint64_t nid) {
    o2lnd_ioc_peer p = make_peer(nid, O2LND_PEER_ESTABLISHED);
    p.conns[O2LND_CONN_ESTABLISHED] = 1;
    return p;
  }
};

TEST_F(PeerCliTest, PeerShowPrintsYaml) {
  kernel_->peers[1] = {established_peer(kPeer)};
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitOk);
  EXPECT_EQ(err(), "");
  EXPECT_EQ(out(),
            "peer:\n"
            "    - nid: 192.168.1.2@o2ib0\n"
            "      local nid: 192.168.1.1@o2ib0\n"
            "      state: established\n"
            "      conns connecting: 0\n"
            "      conns established: 1\n"
            "      conns closing: 0\n"
            "      conns zombie: 0\n"
            "      tx queued: 0\n"
            "      next retry ms: 0\n"
            "      tx credits: 0\n"
            "      tx credits max: 0\n"
            "      tx credits min: 0\n"
            "      credit queued: 0\n"
            "      router credits: 0\n"
            "      router credits max: 0\n"
            "      router credits min: 0\n"
            "      router queued: 0\n"
            "      health: up\n");
}

TEST_F(PeerCliTest, PeerShowShowsCreditsAndHealth) {
  o2lnd_ioc_peer p = established_peer(kPeer);
  p.tx_credits = -2;
  p.tx_credits_max = 8;
  p.tx_credits_min = -3;
  p.credit_queued = 2;
  p.health = O2LND_HEALTH_DOWN;
  p.failures = 4;
  p.downs = 1;
  p.alive_ms = 2500;
  p.tx_timeouts = 5;
  o2lnd_ioc_peer never = make_peer(kPeer3, O2LND_PEER_IDLE);
  never.alive_ms = ~0U;
  kernel_->peers[1] = {p, never};
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitOk);
  EXPECT_NE(out().find("      next retry ms: 0\n"
                       "      tx credits: -2\n"
                       "      tx credits max: 8\n"
                       "      tx credits min: -3\n"
                       "      credit queued: 2\n"
                       "      router credits: 0\n"
                       "      router credits max: 0\n"
                       "      router credits min: 0\n"
                       "      router queued: 0\n"
                       "      health: down\n"),
            std::string::npos)
      << out();
  EXPECT_EQ(out().find("failures:"), std::string::npos) << "-v only\n" << out();
  EXPECT_EQ(run_o2ctl({"peer", "show", "-v"}), kExitOk);
  // ABI 6: the counters (O2LND_PEER_COUNTERS, view verbose) follow the
  // other -v keys, in list order.
  EXPECT_NE(out().find("      failures: 4\n"
                       "      downs: 1\n"
                       "      alive ms: 2500\n"
                       "      races received: 0\n"),
            std::string::npos)
      << out();
  EXPECT_NE(out().find("      phase timeouts: 0\n"
                       "      tx timeouts: 5\n"),
            std::string::npos)
      << out();
  EXPECT_NE(out().find("      alive ms: never\n"), std::string::npos) << out();
  EXPECT_EQ(run_o2ctl({"peer", "show", "-t"}), kExitOk);
  EXPECT_NE(out().find("CRED  MIN  Q  HEALTH\n"), std::string::npos) << out();
  EXPECT_NE(out().find("  -2/8   -3  2  down\n"), std::string::npos) << out();
}

TEST_F(PeerCliTest, PeerShowCountsInitActiveConnectAndPassiveWaitAsConnecting) {
  o2lnd_ioc_peer p = make_peer(kPeer, O2LND_PEER_CONNECTING);
  p.conns[O2LND_CONN_INIT] = 1;
  p.conns[O2LND_CONN_ACTIVE_CONNECT] = 2;
  p.conns[O2LND_CONN_PASSIVE_WAIT] = 4;
  p.conns[O2LND_CONN_CLOSING] = 8;
  p.conns[O2LND_CONN_ZOMBIE] = 16;
  p.tx_queued = 3;
  p.next_retry_ms = 1500;
  kernel_->peers[1] = {p};
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitOk);
  EXPECT_NE(out().find("      state: connecting\n"
                       "      conns connecting: 7\n"
                       "      conns established: 0\n"
                       "      conns closing: 8\n"
                       "      conns zombie: 16\n"
                       "      tx queued: 3\n"
                       "      next retry ms: 1500\n"),
            std::string::npos)
      << out();
}

TEST_F(PeerCliTest, PeerShowVerboseAddsCountersInOrder) {
  o2lnd_ioc_peer p = established_peer(kPeer);
  p.incarnation = 1700000000000000001ULL;
  p.races_received = 1;
  p.races_sent = 2;
  p.connects = 3;
  p.connect_failures = 4;
  p.rejects_sent = 5;
  p.rejects_received = 6;
  p.last_reject = O2LND_REJECT_CONN_RACE;
  p.last_error = -ETIMEDOUT;
  p.backoff_ms = 7;
  p.stale_closes = 8;
  p.phase_timeouts = 9;
  kernel_->peers[1] = {p};
  EXPECT_EQ(run_o2ctl({"peer", "show", "-v"}), kExitOk);
  // ABI 6: the non-counters first, then the counters of
  // O2LND_PEER_COUNTERS (view verbose) in list order.
  EXPECT_NE(out().find("      health: up\n"
                       "      incarnation: 1700000000000000001\n"
                       "      last reject: conn_race\n"
                       "      last error: -110\n"
                       "      backoff ms: 7\n"),
            std::string::npos)
      << out();
  EXPECT_NE(out().find("      races received: 1\n"
                       "      races sent: 2\n"
                       "      connects: 3\n"
                       "      connect failures: 4\n"
                       "      rejects sent: 5\n"
                       "      rejects received: 6\n"
                       "      stale closes: 8\n"
                       "      phase timeouts: 9\n"
                       "      tx timeouts: 0\n"),
            std::string::npos)
      << out();
  std::string verbose = out();
  EXPECT_EQ(run_o2ctl({"peer", "show", "--verbose"}), kExitOk);
  EXPECT_EQ(out(), verbose);
  auto shape = o2ctl_yaml::peer_show(verbose, true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << verbose;
  auto peer = YAML::Load(verbose)["peer"][0];
  EXPECT_EQ(peer["last error"].as<int>(), -110) << verbose;
  EXPECT_EQ(peer["local nid"].as<std::string>(), "192.168.1.1@o2ib0") << verbose;
}

TEST_F(PeerCliTest, PeerShowVerboseWithoutRejectSaysNone) {
  kernel_->peers[1] = {established_peer(kPeer)};
  EXPECT_EQ(run_o2ctl({"peer", "show", "-v"}), kExitOk);
  EXPECT_NE(out().find("      last reject: none\n      last error: 0\n"), std::string::npos)
      << out();
}

TEST_F(PeerCliTest, PeerShowEmptyPrintsEmptyList) {
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitOk);
  EXPECT_EQ(out(), "peer: []\n");
  EXPECT_EQ(run_o2ctl({"peer", "show", "-v"}), kExitOk);
  EXPECT_EQ(out(), "peer: []\n");
}

TEST_F(PeerCliTest, PeerShowListsEveryNiInOrder) {
  kernel_->peers[1] = {established_peer(kPeer), make_peer(kPeer3, O2LND_PEER_BACKOFF)};
  kernel_->peers[2] = {established_peer(kPeer1)};
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitOk);
  auto a = out().find("- nid: 192.168.1.2@o2ib0");
  auto b = out().find("- nid: 192.168.1.3@o2ib0");
  auto c = out().find("- nid: 192.168.2.2@o2ib1\n      local nid: 192.168.2.1@o2ib1\n");
  ASSERT_NE(a, std::string::npos) << out();
  ASSERT_NE(b, std::string::npos) << out();
  ASSERT_NE(c, std::string::npos) << out();
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(out().find("state: backoff"), std::string::npos);
}

TEST_F(PeerCliTest, PeerShowFiltersByNid) {
  kernel_->peers[1] = {established_peer(kPeer), established_peer(kPeer3)};
  kernel_->peers[2] = {established_peer(kPeer)};
  EXPECT_EQ(run_o2ctl({"peer", "show", "192.168.1.3@o2ib0"}), kExitOk);
  EXPECT_EQ(out().find("192.168.1.2@o2ib0"), std::string::npos) << out();
  EXPECT_NE(out().find("- nid: 192.168.1.3@o2ib0"), std::string::npos) << out();
  // The same peer on every NI that knows it.
  EXPECT_EQ(run_o2ctl({"peer", "show", "192.168.1.2@o2ib"}), kExitOk);
  EXPECT_NE(out().find("local nid: 192.168.1.1@o2ib0"), std::string::npos) << out();
  EXPECT_NE(out().find("local nid: 192.168.2.1@o2ib1"), std::string::npos) << out();
}

TEST_F(PeerCliTest, PeerShowUnknownNidPrintsEmptyListAndExits0) {
  kernel_->peers[1] = {established_peer(kPeer)};
  EXPECT_EQ(run_o2ctl({"peer", "show", "10.9.9.9@o2ib0"}), kExitOk);
  EXPECT_EQ(out(), "peer: []\n");
  EXPECT_EQ(err(), "");
}

TEST_F(PeerCliTest, PeerShowFiltersByNet) {
  kernel_->peers[1] = {established_peer(kPeer)};
  kernel_->peers[2] = {established_peer(kPeer1)};
  EXPECT_EQ(run_o2ctl({"peer", "show", "--net", "o2ib1"}), kExitOk);
  EXPECT_EQ(out().find("192.168.1.2@o2ib0"), std::string::npos) << out();
  EXPECT_NE(out().find("- nid: 192.168.2.2@o2ib1"), std::string::npos) << out();
  EXPECT_EQ(run_o2ctl({"peer", "show", "--net", "o2ib7"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: no local NI on network 'o2ib7'\n");
}

TEST_F(PeerCliTest, PeerShowBadNidIsAUsageError) {
  EXPECT_EQ(run_o2ctl({"peer", "show", "bogus"}), kExitUsage);
  EXPECT_NE(err().find("o2ctl: invalid NID 'bogus'"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"peer", "show", "192.168.1.2@o2ib0", "192.168.1.3@o2ib0"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(PeerCliTest, PeerShowOfOldModuleSaysTooOld) {
  kernel_->fail[O2LND_IOC_PEER_SHOW] = ENOTTY;
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: peer show: the o2lnd module does not know this command (module too old for "
            "o2ctl ABI " +
                kAbi + "; load a matching module)\n");
}

TEST_F(PeerCliTest, PeerShowAbiMismatchNamesBothAbis) {
  kernel_->fail[O2LND_IOC_PEER_SHOW] = EPROTO;
  EXPECT_EQ(run_o2ctl({"peer", "show"}), kExitFailure);
  EXPECT_NE(
      err().find("o2ctl: peer show: ABI mismatch: module ABI " + kAbi + ", o2ctl ABI " + kAbi + ""),
      std::string::npos)
      << err();
}

TEST_F(PeerCliTest, NewCommandsRefuseAModuleOfAnotherAbi) {
  kernel_->abi = 1;
  for (std::vector<std::string_view> args : {std::vector<std::string_view>{"peer", "show"},
                                             {"conn", "show"},
                                             {"peer", "close", "192.168.1.2@o2ib0"},
                                             {"fault", "list"},
                                             {"fault", "del", "all"},
                                             {"fault", "add", "cm-drop", "established"}}) {
    EXPECT_EQ(run_o2ctl(args), kExitFailure) << args[0] << " " << args[1];
    EXPECT_EQ(err(), "o2ctl: o2lnd module ABI 1, o2ctl speaks ABI " + kAbi +
                         ": upgrade o2ctl or load a matching "
                         "module\n");
  }
  EXPECT_EQ(kernel_->count(O2LND_IOC_NET_SHOW) + kernel_->count(O2LND_IOC_FAULT_ADD) +
                kernel_->count(O2LND_IOC_FAULT_DEL) + kernel_->count(O2LND_IOC_PEER_CLOSE),
            0U);
}

// ---- conn show ---------------------------------------------------------------------

TEST_F(PeerCliTest, ConnShowPrintsYaml) {
  o2lnd_ioc_conn c = make_conn(kPeer, O2LND_CONN_ESTABLISHED);
  c.active = 1;
  c.age_ms = 1234;
  c.queue_depth = 8;
  c.max_frags = 256;
  c.credits = 7;
  c.outstanding = 1;
  c.nposted = 2;
  c.qp_num = 17;
  c.nrx = 18;
  c.reserved_credits = 3;
  c.concurrent_sends = 8;
  c.sq_size = 24;
  c.sq_free = 22;
  c.noops_posted = 1;
  c.noops_queued = 4;
  c.idle_ms = 250;
  c.keepalives = 6;
  c.comp_vector = 1;
  c.comp_vectors = 2;
  c.send_count = 99;
  o2lnd_ioc_conn z = make_conn(kPeer, O2LND_CONN_ZOMBIE);
  z.error = -ECONNABORTED;
  z.credits = -1;
  kernel_->conns[1] = {c, z};
  EXPECT_EQ(run_o2ctl({"conn", "show"}), kExitOk);
  EXPECT_EQ(out(),
            "conn:\n"
            "    - peer: 192.168.1.2@o2ib0\n"
            "      local nid: 192.168.1.1@o2ib0\n"
            "      state: established\n"
            "      phase: none\n"
            "      active: true\n"
            "      age ms: 1234\n"
            "      deadline ms: 0\n"
            "      queue depth: 8\n"
            "      max frags: 256\n"
            "      credits: 7\n"
            "      outstanding: 1\n"
            "      posted: 2\n"
            "      tx queued: 0\n"
            "      error: 0\n"
            "      qp: 17\n"
            "      rx buffers: 18\n"
            "      reserved credits: 3\n"
            "      concurrent sends: 8\n"
            "      sq size: 24\n"
            "      sq free: 22\n"
            "      noops posted: 1\n"
            "      noops queued: 4\n"
            "      idle ms: 250\n"
            "      keepalives: 6\n"
            "      send count: 99\n"
            "      comp vector: 1\n"
            "      comp vectors: 2\n"
            "    - peer: 192.168.1.2@o2ib0\n"
            "      local nid: 192.168.1.1@o2ib0\n"
            "      state: zombie\n"
            "      phase: none\n"
            "      active: false\n"
            "      age ms: 0\n"
            "      deadline ms: 0\n"
            "      queue depth: 0\n"
            "      max frags: 0\n"
            "      credits: -1\n"
            "      outstanding: 0\n"
            "      posted: 0\n"
            "      tx queued: 0\n"
            "      error: -103\n"
            "      qp: 0\n"
            "      rx buffers: 0\n"
            "      reserved credits: 0\n"
            "      concurrent sends: 0\n"
            "      sq size: 0\n"
            "      sq free: 0\n"
            "      noops posted: 0\n"
            "      noops queued: 0\n"
            "      idle ms: 0\n"
            "      keepalives: 0\n"
            "      send count: 0\n"
            "      comp vector: 0\n"
            "      comp vectors: 0\n");
  auto shape = o2ctl_yaml::conn_show(out());
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << out();
  auto conns = YAML::Load(out())["conn"];
  EXPECT_TRUE(conns[0]["active"].as<bool>()) << out();
  EXPECT_EQ(conns[1]["error"].as<int>(), -103) << out();
}

TEST_F(PeerCliTest, ConnShowNamesEveryStateAndPhase) {
  o2lnd_ioc_conn a = make_conn(kPeer, O2LND_CONN_ACTIVE_CONNECT);
  a.phase = O2LND_PHASE_ROUTE;
  a.deadline_ms = 4500;
  o2lnd_ioc_conn p = make_conn(kPeer3, O2LND_CONN_PASSIVE_WAIT);
  kernel_->conns[1] = {a, p, make_conn(kPeer, O2LND_CONN_INIT),
                       make_conn(kPeer, O2LND_CONN_CLOSING)};
  EXPECT_EQ(run_o2ctl({"conn", "show"}), kExitOk);
  for (const char* s : {"state: active_connect\n      phase: route\n", "state: passive_wait\n",
                        "state: init\n", "state: closing\n", "deadline ms: 4500\n"}) {
    EXPECT_NE(out().find(s), std::string::npos) << s << "\n" << out();
  }
}

TEST_F(PeerCliTest, ConnShowEmptyPrintsEmptyList) {
  EXPECT_EQ(run_o2ctl({"conn", "show"}), kExitOk);
  EXPECT_EQ(out(), "conn: []\n");
}

TEST_F(PeerCliTest, ConnShowFiltersByPeerAndNet) {
  kernel_->conns[1] = {make_conn(kPeer, O2LND_CONN_ESTABLISHED),
                       make_conn(kPeer3, O2LND_CONN_ESTABLISHED)};
  kernel_->conns[2] = {make_conn(kPeer1, O2LND_CONN_ESTABLISHED)};
  EXPECT_EQ(run_o2ctl({"conn", "show", "--peer", "192.168.1.3@o2ib0"}), kExitOk);
  EXPECT_EQ(out().find("192.168.1.2@o2ib0"), std::string::npos) << out();
  EXPECT_NE(out().find("- peer: 192.168.1.3@o2ib0"), std::string::npos) << out();
  EXPECT_EQ(run_o2ctl({"conn", "show", "--net", "o2ib1"}), kExitOk);
  EXPECT_EQ(out().find("@o2ib0"), std::string::npos) << out();
  EXPECT_NE(out().find("- peer: 192.168.2.2@o2ib1"), std::string::npos) << out();
  EXPECT_EQ(run_o2ctl({"conn", "show", "--peer", "10.1.1.1@o2ib0"}), kExitOk);
  EXPECT_EQ(out(), "conn: []\n");
  EXPECT_EQ(run_o2ctl({"conn", "show", "--peer", "nope"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"conn", "show", "extra"}), kExitUsage);
}

// ---- net add, net del -----------------------------------------------------------------

TEST_F(CliTest, NetAddSendsTheNetAndInterfaceAndPrintsTheNid) {
  kernel_->on_net_cfg = [](o2lnd_ioc_net_cfg& c, bool add) {
    if (!add) return EINVAL;
    c.nid = (std::uint64_t{(5U << 16) | 1U} << 32) | 0xc0a80201U;  // 192.168.2.1@o2ib1
    c.count = 1;
    return 0;
  };
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "eth1"}), kExitOk);
  EXPECT_EQ(out(), "added 192.168.2.1@o2ib1 on eth1\n");
  auto sent = kernel_->last<o2lnd_ioc_net_cfg>(O2LND_IOC_NET_ADD);
  EXPECT_STREQ(sent.net, "o2ib1");
  EXPECT_STREQ(sent.ifname, "eth1");
  EXPECT_EQ(sent.pad, 0U);
}

TEST_F(CliTest, NetAddSaysWhyItFailed) {
  kernel_->on_net_cfg = [](o2lnd_ioc_net_cfg&, bool) { return EEXIST; };
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "eth1"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: net add: o2ib1(eth1) exists\n");
  kernel_->on_net_cfg = [](o2lnd_ioc_net_cfg&, bool) { return ENODEV; };
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "nope0"}), kExitFailure);
  EXPECT_NE(err().find("o2ctl: net add: o2ib1(nope0): no such interface"), std::string::npos)
      << err();
  kernel_->fail[O2LND_IOC_NET_ADD] = EPERM;
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "eth1"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: net add: permission denied (needs CAP_NET_ADMIN)\n");
}

TEST_F(CliTest, NetAddNeedsNetAndInterface) {
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl net add: expected --if INTERFACE\nTry 'o2ctl net add --help'.\n");
  EXPECT_EQ(run_o2ctl({"net", "add", "--if", "eth1"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "eth1", "extra"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
  // names that cannot fit never reach the module
  EXPECT_EQ(run_o2ctl({"net", "add", "--net", "o2ib1", "--if", "an-interface-name-too-long"}),
            kExitFailure);
  EXPECT_EQ(kernel_->count(O2LND_IOC_NET_ADD), 0U);
}

TEST_F(CliTest, NetDelOfANetOrOneInterface) {
  bool whole = false;
  kernel_->on_net_cfg = [&whole](o2lnd_ioc_net_cfg& c, bool add) {
    if (add) return EINVAL;
    whole = c.ifname[0] == 0;
    c.count = whole ? 2 : 1;
    return 0;
  };
  EXPECT_EQ(run_o2ctl({"net", "del", "--net", "o2ib1"}), kExitOk);
  EXPECT_TRUE(whole);
  EXPECT_EQ(out(), "deleted 2 NIs of o2ib1\n");
  EXPECT_EQ(run_o2ctl({"net", "del", "--net", "o2ib1", "--if", "eth1"}), kExitOk);
  EXPECT_FALSE(whole);
  EXPECT_EQ(out(), "deleted 1 NI of o2ib1(eth1)\n");
  kernel_->on_net_cfg = [](o2lnd_ioc_net_cfg&, bool) { return ENOENT; };
  EXPECT_EQ(run_o2ctl({"net", "del", "--net", "o2ib7"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: net del: no NI of o2ib7\n");
  EXPECT_EQ(run_o2ctl({"net", "del"}), kExitUsage);
}

// ---- peer close ----------------------------------------------------------------------

TEST_F(PeerCliTest, PeerClosePrintsClosedCount) {
  kernel_->peers[1] = {established_peer(kPeer)};
  kernel_->conns[1] = {make_conn(kPeer, O2LND_CONN_ESTABLISHED),
                       make_conn(kPeer, O2LND_CONN_ACTIVE_CONNECT)};
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(out(), "closed 2 connections to 192.168.1.2@o2ib0\n");
  auto sent = kernel_->last<o2lnd_ioc_peer_close>(O2LND_IOC_PEER_CLOSE);
  EXPECT_EQ(sent.nid, kPeer);
  EXPECT_EQ(sent.local_nid, O2LND_NID_ANY);
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0"}), kExitOk);
  EXPECT_EQ(out(), "closed 0 connections to 192.168.1.2@o2ib0\n");
}

TEST_F(PeerCliTest, PeerCloseSendsTheSource) {
  kernel_->peers[1] = {established_peer(kPeer)};
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0", "--source", "192.168.1.1@o2ib0"}),
            kExitOk);
  EXPECT_EQ(kernel_->last<o2lnd_ioc_peer_close>(O2LND_IOC_PEER_CLOSE).local_nid, kLocal);
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0", "--source", "x"}), kExitUsage);
}

TEST_F(PeerCliTest, PeerCloseUnknownPeerExits1) {
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.9@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: peer close: no peer 192.168.1.9@o2ib0\n");
  EXPECT_EQ(out(), "");
}

TEST_F(PeerCliTest, PeerCloseWithoutCapNetAdminSaysPermissionDenied) {
  kernel_->fail[O2LND_IOC_PEER_CLOSE] = EPERM;
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: peer close: permission denied (needs CAP_NET_ADMIN)\n");
}

TEST_F(PeerCliTest, PeerCloseNeedsExactlyOneNid) {
  EXPECT_EQ(run_o2ctl({"peer", "close"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl peer close: expected NID\nTry 'o2ctl peer close --help'.\n");
  EXPECT_EQ(run_o2ctl({"peer", "close", "192.168.1.2@o2ib0", "192.168.1.3@o2ib0"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"peer", "close", "1.2.3.4"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

// ---- fault add -----------------------------------------------------------------------

TEST_F(CliTest, FaultAddPrintsTheId) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "connect_request"}), kExitOk);
  EXPECT_EQ(out(), "fault 1 added\n");
  EXPECT_EQ(err(), "");
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.kind, static_cast<std::uint32_t>(O2LND_FAULT_CM_DROP));
  EXPECT_EQ(sent.arg, static_cast<std::uint32_t>(O2LND_CM_CONNECT_REQUEST));
  EXPECT_EQ(sent.peer_nid, O2LND_NID_ANY);
  EXPECT_EQ(sent.local_nid, O2LND_NID_ANY);
  EXPECT_EQ(sent.count, 0U);
  EXPECT_EQ(sent.probability, static_cast<std::uint32_t>(O2LND_FAULT_PROB_ALWAYS));
  EXPECT_EQ(sent.delay_ms, 0U);
  EXPECT_EQ(run_o2ctl({"fault", "add", "msg-drop", "any"}), kExitOk);
  EXPECT_EQ(out(), "fault 2 added\n");
}

TEST_F(CliTest, FaultAddOfEveryKind) {
  struct Case {
    std::vector<std::string_view> args;
    std::uint32_t kind;
    std::uint32_t arg;
    std::uint32_t delay_ms;
  };
  const std::vector<Case> cases = {
      {{"cm-drop", "ESTABLISHED"}, O2LND_FAULT_CM_DROP, O2LND_CM_ESTABLISHED, 0},
      {{"cm-delay", "connect-response", "--delay", "200"},
       O2LND_FAULT_CM_DELAY,
       O2LND_CM_CONNECT_RESPONSE,
       200},
      {{"stall", "route"}, O2LND_FAULT_STALL, O2LND_PHASE_ROUTE, 0},
      {{"reject", "conn_stale"}, O2LND_FAULT_REJECT, O2LND_REJECT_CONN_STALE, 0},
      {{"msg-drop", "immediate"}, O2LND_FAULT_MSG_DROP, 0xd1, 0},
      {{"msg-corrupt", "get_done"}, O2LND_FAULT_MSG_CORRUPT, 0xd7, 0},
      {{"send-delay", "--delay", "10000"}, O2LND_FAULT_SEND_DELAY, 0, 10000},
      {{"inv-fail"}, O2LND_FAULT_INV_FAIL, 0, 0},
      {{"post-fail", "0"}, O2LND_FAULT_POST_FAIL, 0, 0},
      {{"post-fail", "255"}, O2LND_FAULT_POST_FAIL, 255, 0},
  };
  for (const auto& c : cases) {
    std::vector<std::string_view> args = {"fault", "add"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    EXPECT_EQ(run_o2ctl(args), kExitOk) << c.args[0] << ": " << err();
    auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
    EXPECT_EQ(sent.kind, c.kind) << c.args[0];
    EXPECT_EQ(sent.arg, c.arg) << c.args[0];
    EXPECT_EQ(sent.delay_ms, c.delay_ms) << c.args[0];
  }
  EXPECT_EQ(kernel_->faults.size(), cases.size());
}

TEST_F(CliTest, FaultAddSendsPerMillionProbability) {
  for (auto [text, want] : std::vector<std::pair<std::string_view, std::uint32_t>>{
           {"1", 1000000}, {"0.5", 500000}, {".25", 250000}, {"0.000001", 1}, {"1.0", 1000000}}) {
    EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--prob", text}), kExitOk)
        << text << ": " << err();
    EXPECT_EQ(kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD).probability, want) << text;
  }
}

TEST_F(CliTest, FaultAddRejectsBadProbability) {
  for (std::string_view p : {"0", "0.0", "1.1", "2", "-0.5", "0.0000001", "abc", "", ".", "50%"}) {
    EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--prob", p}), kExitUsage) << p;
    EXPECT_TRUE(err().starts_with("o2ctl fault add: invalid --prob '")) << err();
  }
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, FaultAddSendsPeerLocalAndCount) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "connect", "--peer", "192.168.1.2@o2ib0", "--local",
                       "192.168.1.1@o2ib0", "--count", "3"}),
            kExitOk)
      << err();
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.peer_nid, kPeer);
  EXPECT_EQ(sent.local_nid, kLocal);
  EXPECT_EQ(sent.count, 3U);
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "connect", "--count", "-1"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "connect", "--count", "4294967296"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "connect", "--peer", "x@o2ib0"}), kExitUsage);
}

TEST_F(CliTest, FaultAddRejectsUnknownEvent) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "connect_requst"}), kExitUsage);
  EXPECT_EQ(err(),
            "o2ctl fault add: unknown CM event 'connect_requst' (one of: addr_resolved, "
            "addr_error, route_resolved, route_error, connect_request, connect_response, "
            "connect_error, unreachable, rejected, established, disconnected, device_removal, "
            "multicast_join, multicast_error, addr_change, timewait_exit)\n"
            "Try 'o2ctl fault add --help'.\n");
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, FaultAddRejectsUnknownKindPhaseReasonAndType) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "explode"}), kExitUsage);
  EXPECT_NE(err().find("unknown fault kind 'explode' (one of: cm-drop, cm-delay, stall, reject, "
                       "msg-drop, msg-corrupt, send-delay, inv-fail, post-fail)"),
            std::string::npos)
      << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "handshake"}), kExitUsage);
  EXPECT_NE(err().find("unknown connect phase 'handshake'"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall", "none"}), kExitUsage);
  EXPECT_NE(err().find("stall needs a phase: addr, route or connect"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "because"}), kExitUsage);
  EXPECT_NE(err().find("unknown reject reason 'because'"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "msg-corrupt", "put"}), kExitUsage);
  EXPECT_NE(err().find("unknown message type 'put'"), std::string::npos) << err();
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, FaultAddNeedsItsArgAndNoMore) {
  EXPECT_EQ(run_o2ctl({"fault", "add"}), kExitUsage);
  EXPECT_EQ(err(), "o2ctl fault add: expected KIND [ARG]\nTry 'o2ctl fault add --help'.\n");
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop"}), kExitUsage);
  EXPECT_NE(err().find("cm-drop needs EVENT"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "stall"}), kExitUsage);
  EXPECT_NE(err().find("stall needs PHASE"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject"}), kExitUsage);
  EXPECT_NE(err().find("reject needs REASON"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "msg-drop"}), kExitUsage);
  EXPECT_NE(err().find("msg-drop needs TYPE"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "send-delay", "established", "--delay", "5"}), kExitUsage);
  EXPECT_NE(err().find("unexpected argument 'established'"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "extra"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

// post-fail's ARG is a number: the work request of the chain that is refused.
TEST_F(CliTest, FaultAddPostFailNeedsAWorkRequestFromZeroTo255) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "post-fail"}), kExitUsage);
  EXPECT_NE(err().find("post-fail needs WR (a work request, from 0)"), std::string::npos) << err();
  for (std::string_view wr : {"256", "-1", "two", "", "1.5", "4294967296"}) {
    EXPECT_EQ(run_o2ctl({"fault", "add", "post-fail", wr}), kExitUsage) << wr;
    EXPECT_NE(err().find("o2ctl fault add: invalid WR '" + std::string(wr) + "'"),
              std::string::npos)
        << err();
  }
  EXPECT_EQ(run_o2ctl({"fault", "add", "post-fail", "2", "3"}), kExitUsage);
  EXPECT_NE(err().find("unexpected argument '3'"), std::string::npos) << err();
  EXPECT_EQ(kernel_->opens, 0);
  EXPECT_EQ(run_o2ctl({"fault", "add", "post-fail", "3", "--local", "192.168.1.1@o2ib0"}), kExitOk)
      << err();
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.kind, static_cast<std::uint32_t>(O2LND_FAULT_POST_FAIL));
  EXPECT_EQ(sent.arg, 3U);
  EXPECT_EQ(sent.local_nid, kLocal);
  // listed with its number, 0 included (not "none")
  EXPECT_EQ(run_o2ctl({"fault", "add", "post-fail", "0"}), kExitOk) << err();
  EXPECT_EQ(run_o2ctl({"fault", "list"}), kExitOk) << err();
  EXPECT_NE(out().find("post-fail"), std::string::npos) << out();
  EXPECT_NE(out().find("arg: 0"), std::string::npos) << out();
  EXPECT_NE(out().find("arg: 3"), std::string::npos) << out();
}

TEST_F(CliTest, FaultAddDelayIsRequiredForDelayKindsAndRefusedOtherwise) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-delay", "established"}), kExitUsage);
  EXPECT_NE(err().find("cm-delay needs --delay MS"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "send-delay"}), kExitUsage);
  EXPECT_NE(err().find("send-delay needs --delay MS"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--delay", "5"}), kExitUsage);
  EXPECT_NE(err().find("--delay applies only to cm-delay and send-delay"), std::string::npos);
  for (std::string_view d : {"0", "10001", "-5", "1s", ""}) {
    EXPECT_EQ(run_o2ctl({"fault", "add", "send-delay", "--delay", d}), kExitUsage) << d;
    EXPECT_TRUE(err().starts_with("o2ctl fault add: invalid --delay '")) << err();
  }
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, FaultAddRejectAdvertisesQueueDepthAndFrags) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "msg_queue_size", "--queue-depth", "4", "--frags",
                       "32"}),
            kExitOk)
      << err();
  auto sent = kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_ADD);
  EXPECT_EQ(sent.queue_depth, 4U);
  EXPECT_EQ(sent.max_frags, 32U);
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--queue-depth", "4"}),
            kExitUsage);
  EXPECT_NE(err().find("--queue-depth and --frags apply only to reject"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "fatal", "--frags", "65536"}), kExitUsage);
}

TEST_F(CliTest, FaultAddRefusesWhatTheModuleRefuses) {
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "device_removal"}), kExitUsage);
  EXPECT_NE(err().find("device_removal cannot be dropped or delayed"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-delay", "device-removal", "--delay", "5"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "fatal", "--queue-depth", "1"}), kExitUsage);
  EXPECT_NE(err().find("queue depth 1 out of range (2..255)"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "fatal", "--queue-depth", "256"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "add", "reject", "fatal", "--frags", "258"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--peer", "10.0.0.1@tcp"}),
            kExitUsage);
  EXPECT_NE(err().find("peer NID 10.0.0.1@tcp0 is not an o2ib NID"), std::string::npos) << err();
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established", "--local", "0@lo"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
  EXPECT_EQ(
      run_o2ctl({"fault", "add", "reject", "fatal", "--queue-depth", "255", "--frags", "257"}),
      kExitOk)
      << err();
}

TEST_F(CliTest, FaultAddPermissionDeniedNamesCapNetAdmin) {
  kernel_->fail[O2LND_IOC_FAULT_ADD] = EPERM;
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: fault add: permission denied (needs CAP_NET_ADMIN)\n");
  EXPECT_EQ(out(), "");
}

TEST_F(CliTest, FaultAddOfOldModuleSaysTooOld) {
  kernel_->fail[O2LND_IOC_FAULT_ADD] = ENOTTY;
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: fault add: the o2lnd module does not know this command (module too old for "
            "o2ctl ABI " +
                kAbi + "; load a matching module)\n");
}

TEST_F(CliTest, FaultAddThirtyThirdRuleIsTooManyRules) {
  for (int i = 0; i < O2LND_FAULT_MAX_RULES; ++i) {
    ASSERT_EQ(run_o2ctl({"fault", "add", "msg-drop", "noop"}), kExitOk) << err();
  }
  EXPECT_EQ(run_o2ctl({"fault", "add", "msg-drop", "noop"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: fault add: too many fault rules (at most 32)\n");
}

TEST_F(CliTest, FaultAddRefusedByTheModuleSaysSo) {
  kernel_->fail[O2LND_IOC_FAULT_ADD] = EINVAL;
  EXPECT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: fault add: the module refused the rule: O2LND_IOC_FAULT_ADD: Invalid "
            "argument\n");
}

// ---- fault del / list ------------------------------------------------------------------

TEST_F(CliTest, FaultDelPrintsDeleted) {
  ASSERT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established"}), kExitOk);
  ASSERT_EQ(run_o2ctl({"fault", "add", "cm-drop", "rejected"}), kExitOk);
  EXPECT_EQ(run_o2ctl({"fault", "del", "2"}), kExitOk);
  EXPECT_EQ(out(), "fault 2 deleted\n");
  EXPECT_EQ(kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_DEL).id, 2U);
  ASSERT_EQ(kernel_->faults.size(), 1U);
  EXPECT_EQ(kernel_->faults[0].id, 1U);
}

TEST_F(CliTest, FaultDelAllSendsIdZero) {
  ASSERT_EQ(run_o2ctl({"fault", "add", "cm-drop", "established"}), kExitOk);
  EXPECT_EQ(run_o2ctl({"fault", "del", "all"}), kExitOk);
  EXPECT_EQ(out(), "all faults deleted\n");
  EXPECT_EQ(kernel_->last<o2lnd_ioc_fault>(O2LND_IOC_FAULT_DEL).id, 0U);
  EXPECT_TRUE(kernel_->faults.empty());
  EXPECT_EQ(run_o2ctl({"fault", "del", "ALL"}), kExitOk) << "nothing to delete is fine";
}

TEST_F(CliTest, FaultDelUnknownIdExits1) {
  EXPECT_EQ(run_o2ctl({"fault", "del", "7"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: fault del: no fault rule 7\n");
}

TEST_F(CliTest, FaultDelBadIdIsAUsageError) {
  for (std::string_view id : {"0", "-1", "x", "1.5", "4294967296", ""}) {
    EXPECT_EQ(run_o2ctl({"fault", "del", id}), kExitUsage) << id;
    EXPECT_TRUE(err().starts_with("o2ctl fault del: invalid rule id '")) << err();
  }
  EXPECT_EQ(run_o2ctl({"fault", "del"}), kExitUsage);
  EXPECT_EQ(run_o2ctl({"fault", "del", "1", "2"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
}

TEST_F(CliTest, FaultDelPermissionDenied) {
  kernel_->fail[O2LND_IOC_FAULT_DEL] = EPERM;
  EXPECT_EQ(run_o2ctl({"fault", "del", "all"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: fault del: permission denied (needs CAP_NET_ADMIN)\n");
}

TEST_F(CliTest, FaultListPrintsYaml) {
  ASSERT_EQ(run_o2ctl({"fault", "add", "cm-delay", "connect_request", "--delay", "250", "--peer",
                       "192.168.1.2@o2ib0", "--count", "2", "--prob", "0.25"}),
            kExitOk);
  ASSERT_EQ(
      run_o2ctl({"fault", "add", "send-delay", "--delay", "5", "--local", "192.168.1.1@o2ib0"}),
      kExitOk);
  kernel_->faults[0].fired = 1;
  EXPECT_EQ(run_o2ctl({"fault", "list"}), kExitOk);
  EXPECT_EQ(out(),
            "fault:\n"
            "    - id: 1\n"
            "      kind: cm-delay\n"
            "      arg: connect_request\n"
            "      peer: 192.168.1.2@o2ib0\n"
            "      local: any\n"
            "      count: 2\n"
            "      probability: 0.25\n"
            "      delay ms: 250\n"
            "      fired: 1\n"
            "    - id: 2\n"
            "      kind: send-delay\n"
            "      arg: none\n"
            "      peer: any\n"
            "      local: 192.168.1.1@o2ib0\n"
            "      count: 0\n"
            "      probability: 1\n"
            "      delay ms: 5\n"
            "      fired: 0\n");
  auto shape = o2ctl_yaml::fault_list(out());
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << out();
  auto rules = YAML::Load(out())["fault"];
  EXPECT_EQ(rules[0]["probability"].as<double>(), 0.25) << out();
  EXPECT_EQ(rules[1]["probability"].as<double>(), 1.0) << out();
}

TEST_F(CliTest, FaultListEmptyPrintsEmptyList) {
  EXPECT_EQ(run_o2ctl({"fault", "list"}), kExitOk);
  EXPECT_EQ(out(), "fault: []\n");
  EXPECT_EQ(run_o2ctl({"fault", "list", "extra"}), kExitUsage);
}

TEST_F(CliTest, FaultListPermissionDenied) {
  kernel_->fail[O2LND_IOC_FAULT_LIST] = EPERM;
  EXPECT_EQ(run_o2ctl({"fault", "list"}), kExitFailure);
  EXPECT_EQ(err(), "o2ctl: fault list: permission denied (needs CAP_NET_ADMIN)\n");
}

// ---- help of the new commands ------------------------------------------------------------

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (std::string_view name : command_names()) {
    std::vector<std::string_view> args;
    std::size_t start = 0;
    while (start <= name.size()) {
      auto sp = name.find(' ', start);
      args.push_back(name.substr(start, sp == std::string_view::npos ? sp : sp - start));
      if (sp == std::string_view::npos) {
        break;
      }
      start = sp + 1;
    }
    args.emplace_back("--help");
    EXPECT_EQ(run_o2ctl(args), kExitOk) << name;
    EXPECT_TRUE(out().starts_with("Usage: o2ctl " + std::string(name))) << name << ":\n" << out();
    EXPECT_EQ(err(), "") << name;
  }
  EXPECT_EQ(kernel_->opens, 0);
  EXPECT_EQ(run_o2ctl({"peer", "show", "--help"}), kExitOk);
  EXPECT_NE(out().find("Usage: o2ctl peer show [NID] [--net NET] [-v]"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"fault", "add", "--help"}), kExitOk);
  EXPECT_NE(out().find("Usage: o2ctl fault add KIND [ARG] [--peer NID] [--local NID] [--count N] "
                       "[--prob P] [--delay MS] [--queue-depth N] [--frags N]"),
            std::string::npos)
      << out();
}

TEST_F(CliTest, GroupsListTheirCommands) {
  EXPECT_EQ(run_o2ctl({"fault", "--help"}), kExitOk);
  for (const char* c : {"o2ctl fault add", "o2ctl fault del ID|all", "o2ctl fault list"}) {
    EXPECT_NE(out().find(c), std::string::npos) << c;
  }
  EXPECT_EQ(run_o2ctl({"peer"}), kExitUsage);
  EXPECT_NE(err().find("o2ctl peer show"), std::string::npos);
  EXPECT_NE(err().find("o2ctl peer close"), std::string::npos);
  EXPECT_EQ(run_o2ctl({"conn", "--help"}), kExitOk);
  EXPECT_NE(out().find("o2ctl conn show"), std::string::npos);
}

TEST(CommandNames, EveryCommandInHelpOrder) {
  EXPECT_EQ(command_names(),
            (std::vector<std::string_view>{
                "ping",          "net show",     "net add",    "net del",    "peer show",
                "peer list",     "discover",     "peer close", "conn show",  "route show",
                "routing show",  "fault add",    "fault del",  "fault list", "stats",
                "selftest ping", "selftest brw", "export",     "import",     "version"}));
}

// ---- probability and number parsing ---------------------------------------------------------

TEST(ParseProbability, FractionsToPerMillion) {
  EXPECT_EQ(*parse_probability("1"), 1000000U);
  EXPECT_EQ(*parse_probability("1."), 1000000U);
  EXPECT_EQ(*parse_probability("1.000000"), 1000000U);
  EXPECT_EQ(*parse_probability("0.5"), 500000U);
  EXPECT_EQ(*parse_probability(".5"), 500000U);
  EXPECT_EQ(*parse_probability("0.123456"), 123456U);
  EXPECT_EQ(*parse_probability("0.000001"), 1U);
  EXPECT_EQ(*parse_probability("00.1"), 100000U);
}

TEST(ParseProbability, RejectsZeroAboveOneTooPreciseAndJunk) {
  for (std::string_view s : {"", ".", "0", "0.0", "0.0000001", "1.000001", "1.5", "2", "10", "-0.5",
                             "+0.5", "1e-3", "0.5 ", " 0.5", "50%", "0,5", "1..0"}) {
    auto r = parse_probability(s);
    EXPECT_FALSE(r.ok()) << "'" << s << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.error().errnum, EINVAL);
    }
  }
}

TEST(ParseUint, DecimalInRange) {
  EXPECT_EQ(*parse_uint("0", 0, 10), 0U);
  EXPECT_EQ(*parse_uint("10", 0, 10), 10U);
  EXPECT_EQ(*parse_uint("4294967295", 0, UINT32_MAX), UINT32_MAX);
  for (std::string_view s : {"", "-1", "+1", "11", "0x1", "1 ", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_uint(s, 0, 10).ok()) << "'" << s << "'";
  }
  EXPECT_FALSE(parse_uint("0", 1, 10).ok());
  EXPECT_EQ(parse_uint("11", 1, 10).error().message, "out of range (1..10)");
}

}  // namespace
}  // namespace o2ctl
