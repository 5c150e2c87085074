#include "fixture.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>

#include "kmemleak.h"
#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;

namespace o2it {

namespace {

std::string env_or(const char* name, const std::string& def) {
  const char* v = getenv(name);
  return v && (*v != 0) ? std::string(v) : def;
}

std::string now_stamp() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char b[32];
  strftime(b, sizeof b, "%H:%M:%S", gmtime(&t));
  return b;
}

}  // namespace

std::string ko_path() { return env_or("O2_KO", O2_ITEST_KO); }
std::string o2ctl_path() { return env_or("O2_O2CTL", O2_ITEST_O2CTL); }
std::string guest_abi_tests_path() {
  return env_or("O2_GUEST_ABI_TESTS", O2_ITEST_GUEST_ABI_TESTS);
}
std::string guest_ioctl_fuzz_path() {
  return env_or("O2_GUEST_IOCTL_FUZZ", O2_ITEST_GUEST_IOCTL_FUZZ);
}
std::string adversary_path() { return env_or("O2_ADVERSARY", O2_ITEST_ADVERSARY); }
std::string transport() { return env_or("O2_TRANSPORT", "rxe"); }
std::string rdma_dev(int n) { return transport() + std::to_string(n); }

int env_int(const char* name, int def) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::atoi(v) : def;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream is(s);
  std::string l;
  while (std::getline(is, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    v.push_back(l);
  }
  return v;
}

std::string indent(const std::string& s, const std::string& prefix) {
  std::string o;
  for (auto& l : lines_of(s)) o += prefix + l + "\n";
  return o;
}

bool has_line(const std::string& out, const std::string& line) {
  const auto lines = lines_of(out);
  return std::ranges::any_of(lines, [&](const std::string& l) { return l == line; });
}

namespace {

bool share_beds() { return env_or("O2_SHARE_BEDS", "0") == "1"; }

// The Beds of the run: one per suite, or with O2_SHARE_BEDS=1 one per
// topology, shared by the suites that use it (at most one booted at a time).
std::map<std::string, std::unique_ptr<Bed>>& beds() {
  static std::map<std::string, std::unique_ptr<Bed>> m;
  return m;
}

// Shuts the shared beds down (their deferred kmemleak sweeps included) at
// the end of the run.
class SharedBedsEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    for (auto& [name, b] : beds()) b->shutdown(true);
  }
};
const auto* const kSharedBedsEnvironment =
    ::testing::AddGlobalTestEnvironment(new SharedBedsEnvironment);  // NOLINT(cert-err58-cpp)

}  // namespace

Bed& Bed::get(const std::string& suite, const std::string& topology) {
  auto& b = beds()[share_beds() ? "topology:" + topology : suite];
  if (!b) b = std::make_unique<Bed>();
  return *b;
}

void Bed::boot(const std::string& suite, const std::string& topology) {
  suite_ = suite;
  dir_ = env_or("O2_RESULTS", O2_ITEST_SOURCE_DIR "/results") + "/itest/" + suite;
  if (share_beds()) {
    // one booted test bed at a time: another topology's goes down first
    for (auto& [name, b] : beds()) {
      if (b.get() != this) b->shutdown(true);
    }
    if (tb_) {  // booted by an earlier suite: share it
      fs::remove_all(dir_);
      fs::create_directories(dir_);
      printf("[ testbed  ] %s: shares the %s test bed of %s (logs in %s)\n", suite.c_str(),
             topology.c_str(), tb_dir_.c_str(), dir_.c_str());
      fflush(stdout);
      return;
    }
  }
  tb_dir_ = dir_;
  boot_error_.clear();
  if (fs::exists(dir_ + "/guests")) {  // guests left by an interrupted run
    try {
      o2tb::Testbed::attach(dir_)->kill_all();
    } catch (const std::exception&) {
    }
  }
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  auto t0 = std::chrono::steady_clock::now();
  try {
    o2tb::TopologyOptions o;
    o.dir = dir_;
    o.transport = transport();  // rejects anything but rxe and siw
    tb_ = o2tb::Testbed::by_name(topology, o);
    tb_->boot_all();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("[ testbed  ] %s: %s (%s) booted in %.1f s (logs in %s)\n", suite.c_str(),
           topology.c_str(), o.transport.c_str(), s, dir_.c_str());
    fflush(stdout);
  } catch (const std::exception& e) {
    boot_error_ = std::string("booting the ") + topology + " test bed failed: " + e.what();
    if (tb_) tb_->kill_all();
    tb_.reset();
  }
}

void Bed::shutdown(bool really) {
  if (share_beds() && !really) return;  // the next suite of this topology shares it
  if (tb_) {
    // the suite's deferred leak checks, all guests at once
    std::vector<std::future<void>> sweeps;
    for (size_t i = 0; i < tb_->size(); i++) {
      Guest& g = (*tb_)[i];
      bool none = false;
      {
        std::lock_guard<std::mutex> lk(leak_mu_);
        none = windows_[g.name()].empty();
      }
      if (none) continue;
      if (!g.alive() || baselined_[g.name()] != g.boots()) {
        kmemleak_not_checked(g, "the guest died");
        continue;
      }
      sweeps.push_back(std::async(std::launch::async, [this, &g] {
        try {
          run(g, "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi", 60);
          kmemleak_sweep(g);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lk(leak_mu_);
          leak_cases_.emplace_back("sweep", g.name() + ": kmemleak sweep failed: " + e.what());
        }
      }));
    }
    for (auto& f : sweeps) f.get();
    {
      std::lock_guard<std::mutex> lk(leak_mu_);
      write_kmemleak_xml();
    }
    tb_->kill_all();
  }
  tb_.reset();
  baselined_.clear();
  windows_.clear();
}

RunResult Bed::run(Guest& g, const std::string& cmd, double timeout_s) {
  RunResult r = g.run(cmd, timeout_s);
  std::lock_guard<std::mutex> lk(log_mu_);  // kmemleak scans run in parallel
  std::ofstream f(test_log_.empty() ? dir_ + "/commands.log" : test_log_, std::ios::app);
  f << "[" << now_stamp() << "] " << g.name() << "$ " << cmd << "\n"
    << r.out << (r.out.empty() || r.out.back() == '\n' ? "" : "\n") << "  -> status " << r.status
    << (r.timed_out ? " (timed out)" : "") << ", " << r.seconds << " s\n";
  return r;
}

namespace {
constexpr const char* kKmemleak = "/sys/kernel/debug/kmemleak";
}

bool Bed::kmemleak_on(Guest& g) {
  std::string mode = env_or("O2_KMEMLEAK", "auto");
  if (mode == "0") return false;
  if (mode == "1") return true;
  return run(g, std::string("test -w ") + kKmemleak, 10).ok();
}

std::string Bed::kmemleak_baseline(Guest& g) {
  // A white object whose contents changed since the previous scan (every
  // object at its first scan) is only reported by the next one: scan twice.
  // `clear` then hides what was reported from later scans.
  std::string k = kKmemleak;
  std::string cmd = "echo scan > " + k + " && echo scan > " + k + " || exit 3; echo clear > " + k;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run(g, cmd, 600);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("[ kmemleak ] %s: baseline scan in %.1f s\n", g.name().c_str(), s);
  fflush(stdout);
  if (!r.ok()) {
    return g.name() + ": kmemleak scan failed (status " + std::to_string(r.status) + "): " + r.out;
  }
  std::lock_guard<std::mutex> lk(leak_mu_);
  windows_[g.name()].clear();
  return "";
}

void Bed::kmemleak_sweep(Guest& g) {
  std::vector<LeakWindow> w;
  {
    std::lock_guard<std::mutex> lk(leak_mu_);
    w.swap(windows_[g.name()]);
  }
  if (w.empty()) return;
  // Objects younger than 5 s are never reported: let the last test's ones
  // age.  Then two scans (see kmemleak_baseline), the guest's uptime at the
  // moment of reading (the ages are relative to it), the report, clear.
  std::string k = kKmemleak;
  std::string cmd = "sleep 5; echo scan > " + k + " && echo scan > " + k +
                    " || exit 3; cut -d' ' -f1 /proc/uptime; cat " + k + "; echo clear > " + k;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run(g, cmd, 600);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("[ kmemleak ] %s: sweep of %zu test(s) in %.1f s\n", g.name().c_str(), w.size(), s);
  fflush(stdout);
  std::vector<std::pair<std::string, std::string>> found;  // per window
  found.reserve(w.size());
  for (const auto& x : w) found.emplace_back(x.test, "");
  if (!r.ok()) {
    for (auto& f : found) {
      f.second =
          g.name() + ": kmemleak scan failed (status " + std::to_string(r.status) + "): " + r.out;
    }
  } else {
    const double now = std::strtod(r.out.c_str(), nullptr);
    const auto objects =
        o2tb::parse_kmemleak(r.out.substr(std::min(r.out.size(), r.out.find('\n') + 1)));
    std::vector<double> starts;
    starts.reserve(w.size());
    for (const auto& x : w) starts.push_back(x.start);
    std::map<size_t, int> count;
    std::map<size_t, std::string> all;  // every object's block, per window
    for (const auto& o : objects) {
      // the test that was running when the object was allocated (before
      // the first test's start: the fixture's own setup, charged to it)
      const size_t i = o2tb::leak_window(starts, now, o.age);
      if (count[i]++ < 6) found[i].second += o.text;
      all[i] += o.text;
    }
    for (auto& [i, n] : count) {
      std::string file = g.config().dir + "/kmemleak-" + w[i].test + ".txt";
      std::ofstream(file) << all[i];
      found[i].second = g.name() + ": kmemleak found " + std::to_string(n) +
                        " unreferenced object(s) allocated during this test (first ones in " +
                        file + "):\n" + found[i].second;
      printf("[ kmemleak ] %s: %d unreferenced object(s) from %s\n", g.name().c_str(), n,
             w[i].test.c_str());
    }
  }
  std::lock_guard<std::mutex> lk(leak_mu_);
  for (auto& [test, problem] : found) {
    auto it = std::ranges::find_if(leak_cases_, [&](const auto& c) { return c.first == test; });
    if (it == leak_cases_.end()) {
      leak_cases_.emplace_back(test, problem);
    } else if (!problem.empty()) {
      it->second += (it->second.empty() ? "" : "\n") + problem;
    }
  }
  write_kmemleak_xml();
}

void Bed::kmemleak_not_checked(Guest& g, const std::string& why) {
  std::lock_guard<std::mutex> lk(leak_mu_);
  for (const auto& x : windows_[g.name()]) {
    leak_not_checked_[x.test] = g.name() + ": " + why;
    printf("[ kmemleak ] %s: %s not checked (%s)\n", g.name().c_str(), x.test.c_str(), why.c_str());
  }
  fflush(stdout);
  windows_[g.name()].clear();
  write_kmemleak_xml();
}

void Bed::write_kmemleak_xml() {
  if (leak_cases_.empty() && leak_not_checked_.empty()) return;  // kmemleak off
  auto esc = [](const std::string& t) {
    std::string o;
    for (char c : t) {
      switch (c) {
        case '&':
          o += "&amp;";
          break;
        case '<':
          o += "&lt;";
          break;
        case '>':
          o += "&gt;";
          break;
        case '"':
          o += "&quot;";
          break;
        default:
          o += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
      }
    }
    return o;
  };
  std::ofstream f(tb_dir_ + "/kmemleak.xml");
  f << "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"Kmemleak\">\n";
  for (const auto& [test, problem] : leak_cases_) {
    f << "  <testcase classname=\"Kmemleak\" name=\"" << esc(test) << "\"";
    if (problem.empty()) {
      f << "/>\n";
    } else {
      f << "><failure message=\"kmemleak\">" << esc(problem) << "</failure></testcase>\n";
    }
  }
  for (const auto& [test, why] : leak_not_checked_) {
    if (std::ranges::any_of(leak_cases_, [&](const auto& c) { return c.first == test; })) continue;
    f << "  <testcase classname=\"Kmemleak\" name=\"" << esc(test) << "\"><skipped message=\""
      << esc(why) << "\"/></testcase>\n";
  }
  f << "</testsuite></testsuites>\n";
}

void Bed::before_test(const std::string& test) {
  test_ = test;
  std::ranges::replace(test_, '/', '.');  // parameterised tests: Name/param
  test_log_ = dir_ + "/" + test_ + ".log";
  fs::remove(test_log_);
  for (size_t i = 0; i < tb_->size(); i++) {
    Guest& g = (*tb_)[i];
    if (g.paused() && g.alive()) g.resume();  // left paused by an aborted test
    if (dirty_ || !g.alive()) {
      // the tests since the last sweep are checked before their kernel goes
      if (g.alive() && baselined_[g.name()] == g.boots()) {
        kmemleak_sweep(g);
      } else {
        kmemleak_not_checked(g, "the guest died");
      }
      auto t0 = std::chrono::steady_clock::now();
      g.boot();
      printf("[ testbed  ] rebooted %s in %.1f s\n", g.name().c_str(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      fflush(stdout);
    }
  }
  dirty_ = false;
  std::vector<Guest*> scan;
  for (size_t i = 0; i < tb_->size(); i++) {
    Guest& g = (*tb_)[i];
    run(g, "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi", 60);
    if (baselined_[g.name()] != g.boots() && kmemleak_on(g)) scan.push_back(&g);
  }
  // kmemleak baselines of all guests at once (each scan takes 5-25 s)
  std::vector<std::future<std::string>> res;
  res.reserve(scan.size());
  for (Guest* g : scan) {
    res.push_back(std::async(std::launch::async, [this, g] { return kmemleak_baseline(*g); }));
  }
  for (size_t i = 0; i < scan.size(); i++) {
    std::string p = res[i].get();
    if (!p.empty()) throw o2tb::Error(p);
    baselined_[scan[i]->name()] = scan[i]->boots();
  }
  // Where this test starts in each leak-checked guest's clock.
  for (size_t i = 0; i < tb_->size(); i++) {
    Guest& g = (*tb_)[i];
    if (baselined_[g.name()] != g.boots() || g.boots() == 0) continue;
    RunResult u = run(g, "cut -d' ' -f1 /proc/uptime", 30);
    if (!u.ok()) throw o2tb::Error(g.name() + ": cannot read /proc/uptime: " + u.out);
    std::lock_guard<std::mutex> lk(leak_mu_);
    windows_[g.name()].push_back({std::strtod(u.out.c_str(), nullptr), suite_ + "." + test_});
  }
  tb_->mark(test);
}

void Bed::after_test(bool failed) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < tb_->size(); i++) {
    Guest& g = (*tb_)[i];
    if (!g.alive()) {
      problems.push_back(g.name() + " died during the test (console: " + g.console_path() + ")");
      continue;
    }
    if (g.paused()) {  // a test that failed between pause() and resume()
      try {
        g.resume();
      } catch (const std::exception& e) {
        problems.push_back(g.name() + ": could not resume the paused guest: " + e.what());
        dirty_ = true;
        continue;
      }
    }
    RunResult r = run(g, "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi", 60);
    if (!r.ok()) {
      problems.push_back(g.name() + ": rmmod o2lnd at the end of the test failed (status " +
                         std::to_string(r.status) + "): " + r.out);
    } else if (baselined_[g.name()] > 0 && baselined_[g.name()] != g.boots()) {
      // booted again during the test: the objects of the boot it had are
      // gone, and the new boot has no baseline yet (the next test's)
      kmemleak_not_checked(g, "booted again during the test");
    }
  }
  auto reports = tb_->kernel_reports();
  std::string known_seen;
  std::string known_guest;  // the guest whose known report's trace follows
  for (auto& r : reports) {
    const std::string guest = r.substr(0, r.find(": "));
    auto k = std::find_if(known_.begin(), known_.end(), [&r](const KnownReport& kr) {
      return r.find(kr.match) != std::string::npos;
    });
    if (k == known_.end()) {
      // the RIP and call trace of a known report are part of it
      if (guest == known_guest && o2tb::is_trace_line(r)) continue;
      known_guest.clear();
      problems.push_back("kernel report: " + r);
      continue;
    }
    // listed, never silently ignored: the first line of the report
    known_guest = guest;
    printf("[ known    ] %s -- %s\n", r.c_str(), k->why.c_str());
    fflush(stdout);
    known_seen += (known_seen.empty() ? "" : "; ") + k->why + ": " + r;
  }
  if (!known_seen.empty()) ::testing::Test::RecordProperty("known_reports", known_seen);
  known_.clear();
  for (auto& p : problems) ADD_FAILURE() << p;
  if (!problems.empty()) dirty_ = true;  // fresh kernels for the next test
  if (failed || !problems.empty()) {
    // A failed test's logs are kept apart from the suite's folder, which
    // the next boot of a bed with the same folder empties.
    std::string keep = env_or("O2_RESULTS", O2_ITEST_SOURCE_DIR "/results") + "/itest/failed/" +
                       suite_ + "." + test_;
    std::error_code ec;
    fs::remove_all(keep, ec);
    fs::create_directories(keep, ec);
    auto copy = [&keep](const std::string& from, const std::string& name) {
      std::error_code e;
      fs::copy_file(from, keep + "/" + name, fs::copy_options::overwrite_existing, e);
    };
    for (size_t i = 0; i < tb_->size(); i++) {
      Guest& g = (*tb_)[i];
      std::string d = g.save_dmesg(test_);
      copy(d, g.name() + "-dmesg.txt");
      copy(g.console_path(), g.name() + "-console.log");
    }
    copy(test_log_, "commands.log");
    printf("[ logs     ] %s (commands, and each guest's dmesg and console)\n", keep.c_str());
    fflush(stdout);
  }
}

void TopologyTest::SetUp() {
  if (!bed().tb()) GTEST_FAIL() << bed().boot_error();
  if (needs_module() && !fs::exists(ko_path())) {
    GTEST_FAIL() << "no module at " << ko_path() << " (run make module)";
  }
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  try {
    bed().before_test(info->name());
  } catch (const std::exception& e) {
    GTEST_FAIL() << "test bed: " << e.what();
  }
}

void TopologyTest::TearDown() {
  if (!bed().tb()) return;
  try {
    bed().after_test(HasFailure());
  } catch (const std::exception& e) {
    ADD_FAILURE() << "test bed: " << e.what();
  }
}

RunResult TopologyTest::insmod(Guest& g, const std::string& networks, double timeout_s) {
  return run(g, "insmod " + sh_quote(ko_path()) + " " + sh_quote("networks=\"" + networks + "\""),
             timeout_s);
}

RunResult TopologyTest::rmmod(Guest& g, double timeout_s) {
  return run(g, "rmmod o2lnd", timeout_s);
}

RunResult TopologyTest::o2ctl(Guest& g, const std::string& args, double timeout_s) {
  return run(g, sh_quote(o2ctl_path()) + " " + args, timeout_s);
}

void TopologyTest::expect_ping_ok(Guest& g, const std::string& target, const std::string& extra) {
  RunResult r = o2ctl(g, "ping " + target + (extra.empty() ? "" : " " + extra), 60);
  EXPECT_EQ(r.status, 0) << g.name() << ": ping " << target << "\n" << r.out;
  EXPECT_TRUE(has_line(r.out, "12345-0@lo")) << g.name() << ": ping " << target << "\n" << r.out;
  EXPECT_TRUE(has_line(r.out, "12345-" + target)) << g.name() << ": ping " << target << "\n"
                                                  << r.out;
}

uint64_t TopologyTest::read_counter(Guest& g, const std::string& path) {
  RunResult r = run(g, "cat " + sh_quote(path), 10);
  return r.ok() ? std::strtoull(r.out.c_str(), nullptr, 10) : 0;
}

std::map<std::string, uint64_t> TopologyTest::rxe_stats(Guest& g, const std::string& dev) {
  std::map<std::string, uint64_t> m;
  RunResult r = run(g, "rdma stat show link " + dev + "/1", 10);
  std::istringstream is(r.out);
  std::string k, v;
  is >> k >> v;  // "link rxe0/1"
  while (is >> k >> v) m[k] = std::strtoull(v.c_str(), nullptr, 10);
  return m;
}

// --- connection scenarios ----------------------------------------------------

std::vector<Record> parse_yaml_list(const std::string& yaml, const std::string& list) {
  std::string error;
  auto v = o2ctl_yaml::parse_list(yaml, list, error);
  if (!error.empty()) {
    ADD_FAILURE() << "o2ctl's YAML (list '" << list << "'): " << error << ":\n" << yaml;
    return {};
  }
  return v;
}

std::vector<Record> parse_net_nis(const std::string& yaml) {
  std::string error;
  auto v = o2ctl_yaml::parse_net_nis(yaml, error);
  if (!error.empty()) {
    ADD_FAILURE() << "o2ctl's net show YAML: " << error << ":\n" << yaml;
    return {};
  }
  return v;
}

std::string field(const Record& r, const std::string& key) {
  auto it = r.find(key);
  return it == r.end() ? std::string() : it->second;
}

int64_t num(const Record& r, const std::string& key, int64_t def) {
  std::string s = field(r, key);
  if (s.empty()) return def;
  char* end = nullptr;
  int64_t n = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == 0 ? n : def;
}

std::string RdmaRes::str() const {
  return "qp " + std::to_string(qp) + ", cm_id " + std::to_string(cm_id);
}

RunResult TopologyTest::insmod_with(Guest& g, const std::string& networks,
                                    const std::string& params, double timeout_s) {
  return run(g,
             "insmod " + sh_quote(ko_path()) + " " + sh_quote("networks=\"" + networks + "\"") +
                 " " + params,
             timeout_s);
}

std::vector<Record> TopologyTest::peers(Guest& g, const std::string& args) {
  RunResult r = o2ctl(g, "peer show -v " + args, 30);
  EXPECT_TRUE(r.ok()) << g.name() << ": o2ctl peer show -v " << args << ":\n" << r.out;
  return r.ok() ? parse_yaml_list(r.out, "peer") : std::vector<Record>{};
}

std::vector<Record> TopologyTest::conns(Guest& g, const std::string& args) {
  RunResult r = o2ctl(g, "conn show " + args, 30);
  EXPECT_TRUE(r.ok()) << g.name() << ": o2ctl conn show " << args << ":\n" << r.out;
  return r.ok() ? parse_yaml_list(r.out, "conn") : std::vector<Record>{};
}

Record TopologyTest::peer(Guest& g, const std::string& local, const std::string& peer) {
  for (auto& p : peers(g, peer)) {
    if (field(p, "nid") == peer && field(p, "local nid") == local) return p;
  }
  return {};
}

int TopologyTest::add_fault(Guest& g, const std::string& args) {
  RunResult r = o2ctl(g, "fault add " + args, 30);
  int id = -1;
  if (r.ok() && std::sscanf(r.out.c_str(), "fault %d added", &id) == 1) return id;
  ADD_FAILURE() << g.name() << ": o2ctl fault add " << args << ":\n" << r.out;
  return -1;
}

std::string TopologyTest::link_state(Guest& g, const std::string& dev, const std::string& peer_ip) {
  const std::string st = "/sys/class/net/" + dev + "/statistics/";
  RunResult r =
      run(g,
          "echo -n \"" + g.name() + " " + dev + ": rx $(cat " + st + "rx_packets)/" + "$(cat " +
              st + "rx_errors)/$(cat " + st + "rx_dropped) tx $(cat " + st + "tx_packets)/$(cat " +
              st + "tx_errors)/$(cat " + st +
              "tx_dropped) (packets/errors/dropped); neigh $(ip neigh show " + peer_ip + " dev " +
              dev + " | tr -s ' ' | cut -c1-60); ip ping \"; " + "ping -c 2 -W 1 -I " + dev + " " +
              peer_ip + " >/dev/null 2>&1 && echo ok || echo LOST",
          30);
  return r.out;
}

RdmaRes TopologyTest::rdma_res(Guest& g) {
  RunResult r = run(g,
                    "echo qp $(rdma res show qp | grep -vc 'type GSI'); "
                    "echo cm_id $(rdma res show cm_id | grep -c .)",
                    30);
  RdmaRes res;
  std::sscanf(r.out.c_str(), "qp %d\ncm_id %d", &res.qp, &res.cm_id);
  return res;
}

RdmaRes TopologyTest::wait_rdma_res(Guest& g, const RdmaRes& want, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  RdmaRes now = rdma_res(g);
  while (!(now == want) &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < timeout_s) {
    usleep(500000);
    now = rdma_res(g);
  }
  return now;
}

void TopologyTest::expect_unload_frees_rdma(Guest& g, double timeout_s) {
  if (!g.alive()) return;
  RunResult r = run(g, "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi", 60);
  EXPECT_TRUE(r.ok()) << g.name() << ": rmmod o2lnd: " << r.out;
  RdmaRes now = wait_rdma_res(g, RdmaRes{0, 0}, timeout_s);
  EXPECT_EQ(now, (RdmaRes{0, 0})) << g.name() << ": RDMA resources left " << timeout_s
                                  << " s after rmmod (" << now.str() << "):\n"
                                  << run(g, "rdma res show qp; rdma res show cm_id", 30).out;
}

void figure(const std::string& name, const std::string& value) {
  printf("[ figure   ] %s = %s\n", name.c_str(), value.c_str());
  fflush(stdout);
  ::testing::Test::RecordProperty(name, value);
}

std::string dump(const std::vector<Record>& rs) {
  std::string s;
  for (const auto& r : rs) {
    s += "  -";
    for (const auto& [k, v] : r) {
      s += " ";
      s += k;
      s += "=";
      s += v;
      s += ";";
    }
    s += "\n";
  }
  return s.empty() ? "  (none)\n" : s;
}

std::string ping_loop(const std::string& target, const std::string& log) {
  return "rm -f /tmp/stop-loop " + log + "; (while [ ! -e /tmp/stop-loop ]; do " +
         sh_quote(o2ctl_path()) + " ping " + target + " --timeout 5 >/dev/null 2>&1; echo " +
         "\"$(date +%s.%3N) $?\" >> " + log + "; done) >/dev/null 2>&1 &";
}

LoopStats loop_stats(const std::string& log, double t0) {
  LoopStats s;
  std::istringstream is(log);
  double t = 0;
  int rc = 0;
  while (is >> t >> rc) {
    if (t < t0) continue;
    if (s.first_ok < 0) {
      if (rc == 0) s.first_ok = t - t0;
    } else if (rc == 0) {
      s.oks_after++;
    } else {
      s.fails_after++;
    }
  }
  return s;
}

std::string dump_record(const Record& r) { return dump(std::vector<Record>{r}); }

int64_t field_int(const Record& r, const std::string& key) { return num(r, key, kMissingField); }

int64_t need(const Record& r, const std::string& key) {
  int64_t v = field_int(r, key);
  if (v != kMissingField) return v;
  ADD_FAILURE() << "no numeric field '" << key << "' in the o2ctl entry:\n" << dump_record(r);
  return 0;
}

double Selftest::at(const std::string& key, double def) const {
  auto it = f.find(key);
  if (it == f.end()) return def;
  char* end = nullptr;
  double d = std::strtod(it->second.c_str(), &end);
  return end != it->second.c_str() ? d : def;
}

Selftest parse_selftest(const RunResult& r) {
  Selftest s;
  s.run = r;
  // o2ctl's stderr (warnings) may come first: parse from "selftest:".
  size_t p = r.out.find("selftest:");
  if (p == std::string::npos) {
    s.error = "no 'selftest:' in the output";
    return s;
  }
  try {
    s.f = o2ctl_yaml::flat(YAML::Load(r.out.substr(p))["selftest"]);
  } catch (const std::exception& e) {
    s.error = std::string("YAML: ") + e.what();
  }
  if (s.error.empty() && s.at("rpcs") < 0) s.error = "no rpcs in the selftest YAML";
  return s;
}

}  // namespace o2it
