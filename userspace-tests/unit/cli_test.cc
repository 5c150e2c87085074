#include "o2ctl/cli.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2lnd/backend.h"
#include "yaml_check.h"

namespace o2ctl {
namespace {

using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_ni;

constexpr std::uint64_t kPeer = 0x00050000c0a80102ULL;   // 192.168.1.2@o2ib0
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
  kernel_->abi = 2;
  EXPECT_EQ(run_o2ctl({"ping", "192.168.1.2@o2ib0"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: o2lnd module ABI 2, o2ctl speaks ABI 1: upgrade o2ctl or load a matching "
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
  if (o2lnd::testing::have_python_yaml()) {
    EXPECT_TRUE(o2lnd::testing::yaml_to_json(out()).has_value()) << out();
  }
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
  EXPECT_EQ(err(), "o2ctl: O2LND_IOC_NET_SHOW of NI 0: Bad address\n");
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
            "o2ctl abi: 1\n"
            "module version: \"0.1.0-fake\"\n"
            "module abi: 1\n");
  EXPECT_EQ(run_o2ctl({"--version"}), kExitOk);
}

TEST_F(CliTest, VersionReportsAModuleOfAnotherAbi) {
  kernel_->abi = 7;
  EXPECT_EQ(run_o2ctl({"version"}), kExitFailure);
  EXPECT_NE(out().find("module abi: 7\n"), std::string::npos);
  EXPECT_EQ(err(),
            "o2ctl: o2lnd module ABI 7, o2ctl speaks ABI 1: upgrade o2ctl or load a matching "
            "module\n");
}

TEST_F(CliTest, VersionWithoutModuleStillShowsTheTool) {
  open_err_ = ENOENT;
  EXPECT_EQ(run_o2ctl({"version"}), kExitFailure);
  EXPECT_EQ(out(), "o2ctl version: \"0.1.0\"\no2ctl abi: 1\n");
  EXPECT_NE(err().find("is the o2lnd module loaded?"), std::string::npos);
}

TEST_F(CliTest, HelpListsEveryCommand) {
  EXPECT_EQ(run_o2ctl({"--help"}), kExitOk);
  for (const char* c : {"ping", "net show", "version"}) {
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

}  // namespace
}  // namespace o2ctl
