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

void Bed::boot(const std::string& suite, const std::string& topology) {
  suite_ = suite;
  dir_ = env_or("O2_RESULTS", O2_ITEST_SOURCE_DIR "/results") + "/itest/" + suite;
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
  }
}

void Bed::shutdown() {
  if (tb_) tb_->kill_all();
  tb_.reset();
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

std::string Bed::kmemleak_check(Guest& g, bool baseline) {
  // Objects younger than 5 s are never reported: let the test's last ones
  // age.  A white object whose contents changed since the previous scan
  // (every object at its first scan) is only reported by the next one:
  // scan twice.  A leak that still slips through shows up in the next
  // test's scan.  `clear` then hides what was reported from later scans.
  std::string k = kKmemleak;
  std::string cmd = std::string(baseline ? "" : "sleep 5; ") + "echo scan > " + k +
                    " && echo scan > " + k + " || exit 3; cat " + k + "; echo clear > " + k;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run(g, cmd, 600);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("[ kmemleak ] %s: %s scan in %.1f s\n", g.name().c_str(),
         baseline ? "baseline" : "after-test", s);
  fflush(stdout);
  if (!r.ok()) {
    return g.name() + ": kmemleak scan failed (status " + std::to_string(r.status) + "): " + r.out;
  }
  if (baseline || r.out.find("unreferenced object") == std::string::npos) return "";
  std::string d = g.config().dir + "/kmemleak-" + test_ + ".txt";
  std::ofstream(d) << r.out;
  std::string head;
  int n = 0;
  for (auto& l : lines_of(r.out)) {
    if (n++ == 40) break;
    head += l + "\n";
  }
  return g.name() + ": kmemleak found unreferenced objects (all in " + d + "):\n" + head;
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
    res.push_back(std::async(std::launch::async, [this, g] { return kmemleak_check(*g, true); }));
  }
  for (size_t i = 0; i < scan.size(); i++) {
    std::string p = res[i].get();
    if (!p.empty()) throw o2tb::Error(p);
    baselined_[scan[i]->name()] = scan[i]->boots();
  }
  tb_->mark(test);
}

void Bed::after_test(bool failed) {
  std::vector<std::string> problems;
  std::vector<Guest*> scan;
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
    } else if (baselined_[g.name()] == g.boots() && g.boots() > 0) {
      scan.push_back(&g);
    } else if (baselined_[g.name()] > 0) {
      // booted again during the test: its boot's objects have no baseline
      printf("[ kmemleak ] %s: rebooted during the test, not checked\n", g.name().c_str());
    }
  }
  std::vector<std::future<std::string>> res;
  res.reserve(scan.size());
  for (Guest* g : scan) {
    res.push_back(std::async(std::launch::async, [this, g] { return kmemleak_check(*g, false); }));
  }
  for (auto& f : res) {
    std::string p = f.get();
    if (!p.empty()) problems.push_back(p);
  }
  auto reports = tb_->kernel_reports();
  for (auto& r : reports) problems.push_back("kernel report: " + r);
  for (auto& p : problems) ADD_FAILURE() << p;
  if (!problems.empty()) dirty_ = true;  // fresh kernels for the next test
  if (failed || !problems.empty()) {
    for (size_t i = 0; i < tb_->size(); i++) {
      Guest& g = (*tb_)[i];
      std::string d = g.save_dmesg(test_);
      std::error_code ec;
      fs::copy_file(g.console_path(), g.config().dir + "/console-" + test_ + ".log",
                    fs::copy_options::overwrite_existing, ec);
      printf("[ logs     ] %s: %s, console %s\n", g.name().c_str(), d.c_str(),
             g.console_path().c_str());
    }
    printf("[ logs     ] commands: %s\n", test_log_.c_str());
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
  std::vector<Record> v;
  bool in_list = false;
  for (const auto& raw : lines_of(yaml)) {
    if (raw.empty() || raw[0] == '#') continue;
    if (raw[0] != ' ' && raw[0] != '-') {  // a top-level key
      in_list = raw.rfind(list + ":", 0) == 0;
      continue;
    }
    if (!in_list) continue;
    std::string l = raw.substr(raw.find_first_not_of(' '));
    if (l.rfind("- ", 0) == 0) {
      v.emplace_back();
      l = l.substr(2);
    }
    if (v.empty()) continue;
    auto p = l.find(": ");
    if (p == std::string::npos) continue;  // "section:" headings
    std::string val = l.substr(p + 2);
    if (val.size() >= 2 && val.front() == '"' && val.back() == '"') {
      val = val.substr(1, val.size() - 2);
    }
    v.back()[l.substr(0, p)] = val;
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

std::string field_key(std::string_view k) {
  std::string s;
  for (char c : k) {
    s +=
        c == ' ' || c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::optional<std::string> field(const Record& r, std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    std::string nk = field_key(k);
    for (const auto& [rk, v] : r) {
      if (field_key(rk) == nk) return v;
    }
    for (const auto& [rk, v] : r) {
      if (field_key(rk).ends_with("." + nk)) return v;
    }
  }
  return std::nullopt;
}

int64_t field_int(const Record& r, std::initializer_list<std::string_view> keys) {
  auto v = field(r, keys);
  if (!v) return kMissingField;
  char* end = nullptr;
  int64_t n = std::strtoll(v->c_str(), &end, 10);
  return end != v->c_str() && *end == 0 ? n : kMissingField;
}

std::string field_str(const Record& r, std::initializer_list<std::string_view> keys) {
  return field(r, keys).value_or("");
}

}  // namespace o2it
