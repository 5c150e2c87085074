// o2lnd integration tests: fixtures that boot test-bed topologies once per
// suite and check every test for kernel reports.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "o2ctl_yaml/record.h"
#include "topology.h"

namespace o2it {

using o2tb::Guest;
using o2tb::RunResult;

// Paths the guests use (the host's paths: the guest shares the host root).
// Overridable by O2_KO, O2_O2CTL, O2_GUEST_ABI_TESTS.
std::string ko_path();
std::string o2ctl_path();
std::string guest_abi_tests_path();
// The guest ioctl fuzzer (userspace-tests/guest/ioctl_fuzz.cc); $O2_GUEST_IOCTL_FUZZ.
std::string guest_ioctl_fuzz_path();
// The hostile peer (userspace-tests/adversary), overridable by O2_ADVERSARY.
std::string adversary_path();
// The RDMA transport of the guests' links, $O2_TRANSPORT: "rxe" (default,
// Soft-RoCE devices rxeN) or "siw" (Soft-iWARP devices siwN on the same
// interfaces).  rdma_dev(n) is the name of the n-th device of a guest.
std::string transport();
std::string rdma_dev(int n);

std::string sh_quote(const std::string& s);
std::vector<std::string> lines_of(const std::string& s);
bool has_line(const std::string& out, const std::string& line);
// Indents every line (keeps nested gtest output apart from ours in logs).
std::string indent(const std::string& s, const std::string& prefix = "    | ");
// Seconds from t0 to now (steady clock).
double since(std::chrono::steady_clock::time_point t0);
// The integer in environment variable `name`, or `def` when unset or empty.
int env_int(const char* name, int def);

// One entry of an o2ctl YAML list (`peer:`, `conn:`, `fault:`), keyed by
// exact key paths: the entry's own keys as o2ctl prints them ("tx
// credits"), nested maps joined with '.' ("lnd details.tx_live"), sequence
// items by index ("interfaces.0"); quotes removed (o2ctl_yaml/record.h,
// shared with the unit test IntegrationKeys that checks every key read
// here exists in o2ctl's output).
using Record = o2ctl_yaml::Record;
// The entries of the top-level list `list` in o2ctl's YAML output, parsed
// with yaml-cpp ("peer: []" gives none).  Text that does not parse, or has
// no such list, is a test failure (ADD_FAILURE with the text) and gives none.
std::vector<Record> parse_yaml_list(const std::string& yaml, const std::string& list);
// The NIs of `o2ctl net show [-v]` output, one Record per NI with "net
// type" of its network added; a parse error is a test failure.
std::vector<Record> parse_net_nis(const std::string& yaml);
// The value at exact key path `key` ("" if missing).
std::string field(const Record& r, const std::string& key);
// As a number: def if missing or not an integer.
int64_t num(const Record& r, const std::string& key, int64_t def = -1);

// o2lnd's RDMA resources in a guest: QPs other than ib_core's GSI ones, and
// every cm_id (`rdma res show qp|cm_id`).  With o2lnd unloaded both are 0.
struct RdmaRes {
  int qp = -1;
  int cm_id = -1;
  bool operator==(const RdmaRes&) const = default;
  [[nodiscard]] std::string str() const;
};

// A measured figure of a scenario: printed ("[ figure   ] name = value",
// kept in check.sh's log) and recorded as a property in the XML report.
void figure(const std::string& name, const std::string& value);
// Records as "  - key=value; ..." lines, for failure messages.
std::string dump(const std::vector<Record>& rs);
std::string dump_record(const Record& r);

// A field at exact key path `key` as a number: kMissingField if absent or
// not an integer.
inline constexpr int64_t kMissingField = INT64_MIN;
int64_t field_int(const Record& r, const std::string& key);
// A field that must be there: its value, or a test failure naming it and
// the entry (and 0).
int64_t need(const Record& r, const std::string& key);

// `o2ctl selftest ping|brw ... -y` parsed: its `selftest:` map as a Record
// ("rpcs", "errors.total", "latency_us.p50").
struct Selftest {
  RunResult run;
  Record f;
  std::string error;  // not parsed, or no rpcs in it
  // The number at exact key path `key`, or def.
  [[nodiscard]] double at(const std::string& key, double def = -1) const;
  [[nodiscard]] std::string text() const { return run.out; }
};
Selftest parse_selftest(const RunResult& r);
// A guest-side background ping loop: `o2ctl ping TARGET --timeout 5` back
// to back until /tmp/stop-loop exists, one line "<epoch s> <status>" per
// ping in LOG (the guest's own clock).  Returns the bash command.
std::string ping_loop(const std::string& target, const std::string& log);
// What a ping loop's log says from time t0 (same guest clock) on.
struct LoopStats {
  double first_ok = -1;  // s from t0 to the end of the first good ping (-1: none)
  int fails_after = 0;   // failed pings after it
  int oks_after = 0;     // good pings after it
};
LoopStats loop_stats(const std::string& log, double t0);

// Pauses a guest (QEMU `stop`: its vCPUs freeze, its peers see a dead
// node) for the guard's lifetime, or until resume(); a test that fails in
// between leaves no paused guest behind (the fixture also resumes any
// paused guest after each test).  Never call into the paused guest: its
// agent does not answer, a run() just waits.
class PausedGuest {
 public:
  explicit PausedGuest(Guest& g) : g_(g) { g_.pause(); }
  ~PausedGuest() {
    try {
      resume();
    } catch (const std::exception&) {  // the fixture reports it
    }
  }
  PausedGuest(const PausedGuest&) = delete;
  PausedGuest& operator=(const PausedGuest&) = delete;
  PausedGuest(PausedGuest&&) = delete;
  PausedGuest& operator=(PausedGuest&&) = delete;
  void resume() {
    if (g_.paused() && g_.alive()) g_.resume();
  }

 private:
  Guest& g_;
};

// One booted topology shared by the tests of a suite.
// A kernel report of a peer stack's own bug (Bed::expect_known_reports()).
struct KnownReport {
  std::string match;  // a substring of the report
  std::string why;    // the bug, and why o2lnd cannot cause it
};

class Bed {
 public:
  // The Bed of a suite.  With O2_SHARE_BEDS=1 the suites of one topology
  // share one Bed, booted by the first of them and kept until another
  // topology boots or the run ends: each suite still starts on guests
  // without o2lnd loaded, as after every test (before_test), but not on
  // freshly booted ones.  make check shares beds on the debug kernel, where
  // a boot, its kmemleak baseline and a sweep cost ~1.5 min per suite.
  static Bed& get(const std::string& suite, const std::string& topology);
  void boot(const std::string& suite, const std::string& topology);
  // The suite is done with the Bed; really: the run or the topology is
  // (shared beds go down only then).  Runs the deferred kmemleak sweeps.
  void shutdown(bool really = false);
  // Called around each test: reboots dead or dirty guests, unloads o2lnd,
  // marks the kernel logs; after: unloads o2lnd (must succeed), asserts no
  // kernel reports and (kernels with kmemleak) no new unreferenced object,
  // keeps logs of failures.
  void before_test(const std::string& test);
  void after_test(bool failed);
  // The guests' state is not to be trusted (a peer stack that would not
  // come up or go down): every guest is booted again before the next test,
  // so one broken node fails one test, not the rest of the suite.
  void reboot_before_next_test() { dirty_ = true; }
  // Kernel reports the current test may see that are known bugs of a
  // peer stack (a Lustre version), which o2lnd cannot cause: a report
  // containing `match` is listed with `why` ("[ known    ]" line and the
  // test's XML property known_reports) instead of failing the test.
  // Cleared after each test.
  void expect_known_reports(std::vector<KnownReport> known) { known_ = std::move(known); }

  o2tb::Testbed* tb() { return tb_.get(); }
  [[nodiscard]] const std::string& boot_error() const { return boot_error_; }
  // Logs the command and its result to the test's log file.
  RunResult run(Guest& g, const std::string& cmd, double timeout_s = 60);
  [[nodiscard]] const std::string& test_log() const { return test_log_; }

 private:
  // kmemleak ($O2_KMEMLEAK: 0 off, 1 required, unset: when the guest has
  // it).  A scan + clear right after a boot is the baseline (leaks of the
  // boot and the rxe setup are not ours).  The leak check of a test is
  // deferred: a sweep (once o2lnd is unloaded: wait 5 s, scan twice, read,
  // clear) runs when the suite ends or before the fixture reboots the
  // guest, and each unreferenced object is charged to the test that was
  // running when it was allocated (its age against the guest's uptime at
  // each test's start).  One sweep per suite instead of one per test: on a
  // debug kernel a sweep costs ~20-30 s.  Each checked test becomes a case
  // Kmemleak.<Suite>.<Test> in <dir>/kmemleak.xml.
  struct LeakWindow {
    double start = 0;  // guest uptime (s) when the test started
    std::string test;
  };
  bool kmemleak_on(Guest& g);
  std::string kmemleak_baseline(Guest& g);
  void kmemleak_sweep(Guest& g);
  void kmemleak_not_checked(Guest& g, const std::string& why);
  void write_kmemleak_xml();

  std::unique_ptr<o2tb::Testbed> tb_;
  std::vector<KnownReport> known_;
  std::string suite_, dir_, boot_error_, test_, test_log_;
  std::string tb_dir_;  // where the booted guests live (the dir of the suite that booted them)
  bool dirty_ = false;
  std::mutex log_mu_;
  std::map<std::string, int> baselined_;  // guest name -> boots() at its baseline (0: none)
  std::map<std::string, std::vector<LeakWindow>> windows_;  // guest -> tests since its last sweep
  // test -> problems found for it ("" entries: checked, clean); in test order
  std::vector<std::pair<std::string, std::string>> leak_cases_;
  std::map<std::string, std::string> leak_not_checked_;  // test -> why
  std::mutex leak_mu_;  // windows_ entries, leak_cases_, leak_not_checked_, the XML (sweeps run in
                        // parallel)
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

  // --- connection scenarios (connect_test.cc, lu7646_test.cc) ---
  // insmod with module parameters after networks= (e.g. "timeout=20").
  RunResult insmod_with(Guest& g, const std::string& networks, const std::string& params,
                        double timeout_s = 60);
  // `o2ctl peer show -v [args]` / `o2ctl conn show [args]`, parsed; a
  // failing command is a test failure and gives no entries.
  std::vector<Record> peers(Guest& g, const std::string& args = "");
  std::vector<Record> conns(Guest& g, const std::string& args = "");
  // The peer entry of `peer` on local NI `local` (empty Record if none).
  Record peer(Guest& g, const std::string& local, const std::string& peer);
  // `o2ctl fault add <args>`: the new rule's id, or -1 (and a failure).
  int add_fault(Guest& g, const std::string& args);
  RdmaRes rdma_res(Guest& g);
  // One line on the link `dev` of `g` towards `peer_ip`: its packet,
  // error and drop counters both ways, the neighbour entry, and whether a
  // plain IP ping gets through: what tells a link that stopped carrying
  // anything from an RDMA or o2lnd failure above it.
  std::string link_state(Guest& g, const std::string& dev, const std::string& peer_ip);
  // Polls (every 0.5 s, at most timeout_s) until g's RDMA resources equal
  // `want`; the last reading is returned either way.
  RdmaRes wait_rdma_res(Guest& g, const RdmaRes& want, double timeout_s);
  // rmmod o2lnd (if loaded), then the RDMA resources must be back to none
  // within timeout_s: every QP and cm_id of o2lnd freed.
  void expect_unload_frees_rdma(Guest& g, double timeout_s = 20);
};

// NOLINTBEGIN(bugprone-macro-parentheses): Suite names a class.
// A fixture class per suite, sharing one booted topology across its tests;
// the trailing arguments are extra members of the class.
#define O2_SUITE_CLASS(Suite, topology, ...)                                    \
  class Suite : public ::o2it::TopologyTest {                                   \
   public:                                                                      \
    static ::o2it::Bed& shared() { return ::o2it::Bed::get(#Suite, topology); } \
    static void SetUpTestSuite() { shared().boot(#Suite, topology); }           \
    static void TearDownTestSuite() { shared().shutdown(); }                    \
                                                                                \
   protected:                                                                   \
    ::o2it::Bed& bed() override { return shared(); }                            \
    __VA_ARGS__                                                                 \
  }
// NOLINTEND(bugprone-macro-parentheses)

#define O2_TOPOLOGY_SUITE(Suite, topology) O2_SUITE_CLASS(Suite, topology)

// A suite that tests the test bed itself (no o2lnd.ko needed).
#define O2_TESTBED_SUITE(Suite, topology) \
  O2_SUITE_CLASS(                         \
      Suite, topology, bool needs_module() const override { return false; })

}  // namespace o2it
