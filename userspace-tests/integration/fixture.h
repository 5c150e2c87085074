// o2lnd integration tests: fixtures that boot test-bed topologies once per
// suite and check every test for kernel reports.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "topology.h"

namespace o2it {

using o2tb::Guest;
using o2tb::RunResult;

// Paths the guests use (the host's paths: the guest shares the host root).
// Overridable by O2_KO, O2_O2CTL, O2_GUEST_ABI_TESTS.
std::string ko_path();
std::string o2ctl_path();
std::string guest_abi_tests_path();

std::string sh_quote(const std::string& s);
std::vector<std::string> lines_of(const std::string& s);
bool has_line(const std::string& out, const std::string& line);
// Indents every line (keeps nested gtest output apart from ours in logs).
std::string indent(const std::string& s, const std::string& prefix = "    | ");

// One booted topology shared by the tests of a suite.
class Bed {
 public:
  void boot(const std::string& suite, const std::string& topology);
  void shutdown();
  // Called around each test: reboots dead or dirty guests, unloads o2lnd,
  // marks the kernel logs; after: unloads o2lnd (must succeed), asserts no
  // kernel reports and (kernels with kmemleak) no new unreferenced object,
  // keeps logs of failures.
  void before_test(const std::string& test);
  void after_test(bool failed);

  o2tb::Testbed* tb() { return tb_.get(); }
  [[nodiscard]] const std::string& boot_error() const { return boot_error_; }
  // Logs the command and its result to the test's log file.
  RunResult run(Guest& g, const std::string& cmd, double timeout_s = 60);
  [[nodiscard]] const std::string& test_log() const { return test_log_; }

 private:
  // kmemleak ($O2_KMEMLEAK: 0 off, 1 required, unset: when the guest has
  // it).  A scan + clear right after a boot is the baseline (leaks of the
  // boot and the rxe setup are not ours); after each test, once o2lnd is
  // unloaded, a scan must find nothing new.  Returns a problem or "".
  bool kmemleak_on(Guest& g);
  std::string kmemleak_check(Guest& g, bool baseline);

  std::unique_ptr<o2tb::Testbed> tb_;
  std::string suite_, dir_, boot_error_, test_, test_log_;
  bool dirty_ = false;
  std::mutex log_mu_;
  std::map<std::string, int> baselined_;  // guest name -> boots() at its baseline (0: none)
};

class TopologyTest : public ::testing::Test {
 protected:
  virtual Bed& bed() = 0;
  [[nodiscard]] virtual bool needs_module() const { return true; }
  void SetUp() override;
  void TearDown() override;

  Guest& guest(const std::string& name) { return bed().tb()->by(name); }
  RunResult run(Guest& g, const std::string& cmd, double timeout_s = 60) {
    return bed().run(g, cmd, timeout_s);
  }
  // insmod o2lnd.ko networks="<networks>" (double quotes kept for the
  // kernel's parser, so spaces separate networks as in modprobe.d)
  RunResult insmod(Guest& g, const std::string& networks, double timeout_s = 60);
  RunResult rmmod(Guest& g, double timeout_s = 60);
  // o2ctl <args> (args are passed to bash as they are)
  RunResult o2ctl(Guest& g, const std::string& args, double timeout_s = 60);
  // `o2ctl ping <target> <extra>` must succeed and list 0@lo and <target>,
  // as lctl ping prints them ("12345-<nid>").
  void expect_ping_ok(Guest& g, const std::string& target, const std::string& extra = "");
  uint64_t read_counter(Guest& g, const std::string& path);
  // `rdma stat show link DEV/1` counters (sent_pkts, rcvd_pkts, ...)
  std::map<std::string, uint64_t> rxe_stats(Guest& g, const std::string& dev);
};

// NOLINTBEGIN(bugprone-macro-parentheses): Suite names a class.
// A fixture class per suite, sharing one booted topology across its tests;
// the trailing arguments are extra members of the class.
#define O2_SUITE_CLASS(Suite, topology, ...)                          \
  class Suite : public ::o2it::TopologyTest {                         \
   public:                                                            \
    static ::o2it::Bed& shared() {                                    \
      static ::o2it::Bed b;                                           \
      return b;                                                       \
    }                                                                 \
    static void SetUpTestSuite() { shared().boot(#Suite, topology); } \
    static void TearDownTestSuite() { shared().shutdown(); }          \
                                                                      \
   protected:                                                         \
    ::o2it::Bed& bed() override { return shared(); }                  \
    __VA_ARGS__                                                       \
  }
// NOLINTEND(bugprone-macro-parentheses)

#define O2_TOPOLOGY_SUITE(Suite, topology) O2_SUITE_CLASS(Suite, topology)

// A suite that tests the test bed itself (no o2lnd.ko needed).
#define O2_TESTBED_SUITE(Suite, topology) \
  O2_SUITE_CLASS(                         \
      Suite, topology, bool needs_module() const override { return false; })

}  // namespace o2it
