// Hostile input, on the one-guest veth topology (rxe0 on veth0 =
// 192.168.1.1, rxe1 on veth1 = 192.168.1.2):
//   - the ioctl fuzzer (userspace-tests/guest/ioctl_fuzz.cc) with and
//     without CAP_NET_ADMIN, while honest pings run;
//   - who may do what: configuration and fault injection need
//     CAP_NET_ADMIN, views and ping do not, the device is 0666;
//   - module parameters: every bad value is refused at load with a dmesg
//     line that names it, leaving nothing behind; the edges load.
// Each test writes its figures into report fragments; the assembled
// report is $O2_RESULTS/hostile/report.md (results/hostile/report.md;
// check.sh copies it into results/check/).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fixture.h"

namespace fs = std::filesystem;

namespace o2it {
namespace {

O2_TOPOLOGY_SUITE(Hostile, "veth");

constexpr const char* kBothEnds = "o2ib0(veth0,veth1)";
constexpr const char* kPeer = "192.168.1.2@o2ib0";
constexpr const char* kLocal = "192.168.1.1@o2ib0";
constexpr const char* kNeedsCap = "permission denied (needs CAP_NET_ADMIN)";
// Root without CAP_NET_ADMIN (dropped from the bounding set, so exec does
// not grant it), and the unprivileged user nobody.
constexpr const char* kRootNoCap = "setpriv --inh-caps=-net_admin --bounding-set=-net_admin -- ";
constexpr const char* kNobody =
    "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "
    "--bounding-set=-net_admin -- ";

double scale() {
  const char* v = std::getenv("O2_TIMEOUT_SCALE");
  double s = v != nullptr ? std::strtod(v, nullptr) : 1;
  return s > 0 ? s : 1;
}

// The fuzzer's iterations: $O2_FUZZ_ITERATIONS, else `base` (fewer on slow
// kernels: O2_TIMEOUT_SCALE > 1 divides by three times it, 1/15 on the
// debug kernel, whose every call runs under KASAN).
long iterations(long base) {
  const char* v = std::getenv("O2_FUZZ_ITERATIONS");
  if (v != nullptr && *v != 0) return std::strtol(v, nullptr, 10);
  return static_cast<long>(static_cast<double>(base) / (scale() > 1 ? 3 * scale() : 1));
}

// $O2_FUZZ_SEED, else a fresh one (printed, and in the report).
unsigned long long seed() {
  const char* v = std::getenv("O2_FUZZ_SEED");
  if (v != nullptr && *v != 0) return std::strtoull(v, nullptr, 10);
  std::random_device rd;
  return (static_cast<unsigned long long>(rd()) << 20U) ^ rd();
}

// --- the report --------------------------------------------------------------

// $O2_RESULTS/hostile: not under itest/<suite>, which every boot of the
// suite's topology wipes.
fs::path report_dir() {
  const char* v = std::getenv("O2_RESULTS");
  return fs::path(v != nullptr && *v != 0 ? v : O2_ITEST_SOURCE_DIR "/results") / "hostile";
}

// Writes fragment `name` and re-assembles report.md from every fragment of
// this run (sorted by name), so the report is whole after any subset of
// tests.
void report(Guest& g, const std::string& name, const std::string& text) {
  static bool fresh = false;  // fragments of earlier runs go at the first write
  fs::path dir = report_dir() / "report.d";
  if (!fresh) {
    fs::remove_all(dir);
    fresh = true;
  }
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  std::vector<fs::path> parts;
  for (const auto& e : fs::directory_iterator(dir)) parts.push_back(e.path());
  std::ranges::sort(parts);
  std::ofstream out(report_dir() / "report.md");
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", gmtime(&t));
  out << "# Hostile input: figures of the last run\n\n"
      << "Written by the Hostile suite (userspace-tests/integration/hostile_test.cc) on " << stamp
      << ", kernel " << g.config().kernel.release << ", transport " << transport()
      << ", O2_TIMEOUT_SCALE " << scale() << ".\n";
  bool params_header = false;
  for (const auto& p : parts) {
    std::string fn = p.filename().string();
    bool param = fn.rfind('4', 0) == 0;
    if (param && !params_header) {
      out << "\n## Module parameters at load\n\n"
          << "| case | parameters | outcome | dmesg |\n| --- | --- | --- | --- |\n";
      params_header = true;
    }
    std::ifstream in(p);
    out << (param ? "" : "\n") << in.rdbuf();
  }
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') {
      o += "\\|";
    } else if (c == '\n') {
      o += "<br>";
    } else {
      o += c;
    }
  }
  return o;
}

// --- 1. the ioctl fuzzer ---------------------------------------------------

// Runs the fuzzer in g (after `prefix`, e.g. a setpriv command); its
// Markdown summary lands in the report under `title`.
RunResult fuzz(Bed& bed, Guest& g, const std::string& prefix, long iters, const std::string& tag,
               const std::string& title) {
  unsigned long long s = seed();
  double budget = 60 * std::min(scale(), 3.0);
  std::string md = "/tmp/fuzz-" + tag + ".md", js = "/tmp/fuzz-" + tag + ".json";
  printf(
      "[ fuzz     ] %s: seed %llu, %ld iterations (O2_FUZZ_SEED=%llu O2_FUZZ_ITERATIONS=%ld "
      "to reproduce)\n",
      tag.c_str(), s, iters, s, iters);
  fflush(stdout);
  RunResult r =
      bed.run(g,
              "rm -f " + md + " " + js + "; " + prefix + sh_quote(guest_ioctl_fuzz_path()) +
                  " --seed=" + std::to_string(s) + " --iterations=" + std::to_string(iters) +
                  " --max-seconds=" + std::to_string(static_cast<int>(budget)) +
                  " --peer-nid=" + kPeer + " --markdown=" + md + " --json=" + js + "; rc=$?; cp " +
                  md + " " + js + " /out/ 2>/dev/null; exit $rc",
              budget + 120);
  std::ifstream in(g.out_dir() + "/fuzz-" + tag + ".md");
  std::stringstream text;
  text << in.rdbuf();
  report(g, "1" + tag + ".md",
         "## " + title + "\n\n" +
             (text.str().empty() ? "(no summary: fuzzer status " + std::to_string(r.status) + ")\n"
                                 : text.str()));
  figure("fuzz_" + tag + "_seconds", std::to_string(r.seconds));
  return r;
}

TEST_F(Hostile, IoctlFuzzWithCapNetAdminFindsNoViolation) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  expect_ping_ok(g, kPeer, std::string("--source ") + kLocal);
  // Honest traffic runs all along: it must never fail.
  run(g, ping_loop(std::string(kPeer) + " --source " + kLocal, "/tmp/honest.log"), 10);
  RunResult t0 = run(g, "date +%s.%3N", 10);
  RunResult r =
      fuzz(bed(), g, "", iterations(120000), "0-root", "ioctl fuzzer, root (with CAP_NET_ADMIN)");
  run(g, "touch /tmp/stop-loop; sleep 6", 20);
  EXPECT_EQ(r.status, 0) << indent(r.out);
  EXPECT_NE(r.out.find(" 0 violations"), std::string::npos) << indent(r.out);
  LoopStats ls =
      loop_stats(run(g, "cat /tmp/honest.log", 10).out, std::strtod(t0.out.c_str(), nullptr));
  EXPECT_GE(ls.first_ok, 0) << "no honest ping succeeded during the fuzz";
  EXPECT_EQ(ls.fails_after, 0) << "honest pings failed during the fuzz (" << ls.oks_after << " ok)";
  figure("fuzz_honest_pings_ok", std::to_string(ls.oks_after + (ls.first_ok >= 0 ? 1 : 0)));
  figure("fuzz_honest_pings_failed", std::to_string(ls.fails_after));
  // Nothing left behind, and the module still works.
  RunResult fl = o2ctl(g, "fault list", 30);
  EXPECT_TRUE(fl.ok() && fl.out.find("fault: []") != std::string::npos) << fl.out;
  expect_ping_ok(g, kPeer, std::string("--source ") + kLocal);
  expect_unload_frees_rdma(g);
}

TEST_F(Hostile, IoctlFuzzWithoutCapNetAdminFindsNoViolation) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  expect_ping_ok(g, kPeer, std::string("--source ") + kLocal);
  RunResult r = fuzz(bed(), g, kNobody, iterations(50000), "1-nobody",
                     "ioctl fuzzer, user nobody (no capability)");
  EXPECT_EQ(r.status, 0) << indent(r.out);
  EXPECT_NE(r.out.find("without CAP_NET_ADMIN"), std::string::npos) << indent(r.out);
  EXPECT_NE(r.out.find(" 0 violations"), std::string::npos) << indent(r.out);
  expect_ping_ok(g, kPeer, std::string("--source ") + kLocal);
}

// --- 2. privilege -------------------------------------------------------------

TEST_F(Hostile, ConfigNeedsCapNetAdminViewsAndPingDoNot) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  expect_ping_ok(g, kPeer, std::string("--source ") + kLocal);
  RunResult mode = run(g, "stat -c %a /dev/o2lnd", 10);
  EXPECT_EQ(mode.out, "666\n") << "/dev/o2lnd mode";
  RunResult open = run(g, std::string(kNobody) + "sh -c 'exec 3<>/dev/o2lnd && echo opened'", 10);
  EXPECT_TRUE(open.ok() && open.out == "opened\n") << "nobody cannot open /dev/o2lnd rw:\n"
                                                   << open.out;
  // Sanity: the setpriv prefixes really drop the capability.
  RunResult caps = run(g, std::string(kRootNoCap) + "grep CapEff /proc/self/status", 10);
  EXPECT_TRUE(caps.ok()) << caps.out;
  unsigned long long eff =
      std::strtoull(caps.out.substr(caps.out.find(':') + 1).c_str(), nullptr, 16);
  EXPECT_EQ(eff & (1ULL << 12U), 0ULL) << "CAP_NET_ADMIN still effective: " << caps.out;

  const std::string o2 = sh_quote(o2ctl_path()) + " ";
  int id = add_fault(g, "msg-drop any --peer 192.0.2.9@o2ib0");  // one rule to list / delete
  const auto conns0 = conns(g);
  std::string table =
      "## Privilege (o2ctl as root without CAP_NET_ADMIN, and as nobody)\n\n"
      "| who | command | expected | exit | message |\n"
      "| --- | --- | --- | ---: | --- |\n";
  struct Cmd {
    std::string args;
    bool admin;
  };
  const std::vector<Cmd> cmds = {
      {"fault add msg-drop any --peer 192.0.2.9@o2ib0", true},
      {"fault del " + std::to_string(id), true},
      {"fault del all", true},
      {"fault list", true},
      {std::string("peer close ") + kPeer, true},
      {std::string("discover ") + kPeer, true},
      {"net add --net o2ib3 --if veth0", true},
      {"net del --net o2ib0", true},
      {"net show -v", false},
      {"peer list", false},
      {"peer show -v", false},
      {"conn show", false},
      {std::string("ping ") + kPeer + " --source " + kLocal, false},
      {"version", false},
  };
  for (const auto& [who, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"root, no CAP_NET_ADMIN", kRootNoCap}, {"nobody", kNobody}}) {
    for (const auto& c : cmds) {
      RunResult r = run(g, prefix + o2 + c.args, 60);
      std::string first = lines_of(r.out).empty() ? "" : lines_of(r.out)[0];
      if (c.admin) {
        EXPECT_EQ(r.status, 1) << who << ": o2ctl " << c.args << "\n" << r.out;
        EXPECT_NE(r.out.find(kNeedsCap), std::string::npos) << who << ": o2ctl " << c.args << "\n"
                                                            << r.out;
      } else {
        EXPECT_EQ(r.status, 0) << who << ": o2ctl " << c.args << "\n" << r.out;
      }
      table += "| " + who + " | `o2ctl " + c.args + "` | " + (c.admin ? "refused" : "allowed") +
               " | " + std::to_string(r.status) + " | " + md_cell(c.admin ? first : "") + " |\n";
    }
  }
  // The refused calls changed nothing: the rule is still there, the
  // connections still up.
  RunResult fl = o2ctl(g, "fault list", 30);
  EXPECT_EQ(parse_yaml_list(fl.out, "fault").size(), 1U) << fl.out;
  auto conns1 = conns(g);
  EXPECT_EQ(conns1.size(), conns0.size()) << dump(conns0) << "\n" << dump(conns1);
  // With the capability it works.
  EXPECT_TRUE(o2ctl(g, "fault del " + std::to_string(id), 30).ok());
  EXPECT_TRUE(o2ctl(g, std::string("peer close ") + kPeer, 30).ok());
  report(g, "30-privilege.md", table);
}

// --- 3. module parameters ----------------------------------------------------
// Their own topology boot (a parameterised suite is a suite of its own).
O2_TOPOLOGY_SUITE(HostileParams, "veth");

struct ParamCase {
  const char* name;      // the test's name: what it proves
  const char* networks;  // networks= value
  const char* params;    // further parameters (raw, for insmod)
  const char* message;   // bad: a substring of the dmesg line that explains it;
                         // good (loads): "param=value" read back from sysfs
  const char* setup = "";
  bool good = false;
  bool names_module = true;  // the dmesg line names o2lnd
};

const std::vector<ParamCase>& param_cases() {
  static const std::string too_long = "o2ib0(veth0" + std::string(1100, ' ') + ")";
  static const std::string many_nets = [] {
    std::string s;
    for (int i = 0; i < 17; i++) s += "o2ib" + std::to_string(i) + "(veth0) ";
    return s;
  }();
  static const std::string many_ifs = [] {
    std::string s = "o2ib0(";
    for (int i = 0; i < 17; i++) s += (i != 0 ? "," : "") + std::string("veth") + std::to_string(i);
    return s + ")";
  }();
  auto good = [](const char* name, const char* params, const char* readback) {
    return ParamCase{name, kBothEnds, params, readback, "", true};
  };
  static const std::vector<ParamCase> v = {
      {"ServiceZeroRefused", kBothEnds, "service=0", "service=0 out of range 1..65535"},
      {"ServiceAbove65535Refused", kBothEnds, "service=65536", "service=65536 out of range"},
      {"ServiceNegativeRefused", kBothEnds, "service=-1", "service=-1 out of range"},
      {"ServiceNonNumericRefused", kBothEnds, "service=abc", "for parameter"},
      {"ServiceEmptyRefused", kBothEnds, "service=", "for parameter"},
      {"ServiceOverflowRefused", kBothEnds, "service=4294967297", "for parameter"},
      {"PeerCreditsBelow2Refused", kBothEnds, "peer_credits=1",
       "peer_credits=1 out of range 2..255"},
      {"PeerCreditsAbove255Refused", kBothEnds, "peer_credits=256",
       "peer_credits=256 out of range"},
      {"PeerCreditsNegativeRefused", kBothEnds, "peer_credits=-8", "peer_credits=-8 out of range"},
      {"PeerCreditsNonNumericRefused", kBothEnds, "peer_credits=8x", "for parameter"},
      {"TimeoutAbove3600Refused", kBothEnds, "timeout=3601", "timeout=3601 out of range"},
      {"TimeoutNegativeRefused", kBothEnds, "timeout=-50", "timeout=-50 out of range"},
      {"TimeoutFractionRefused", kBothEnds, "timeout=1.5", "for parameter"},
      {"CreditsBelow8Refused", kBothEnds, "credits=7", "credits=7 out of range 8..16384"},
      {"CreditsAbove16384Refused", kBothEnds, "credits=16385", "credits=16385 out of range"},
      {"CreditsNegativeRefused", kBothEnds, "credits=-256", "credits=-256 out of range"},
      {"CreditsNonNumericRefused", kBothEnds, "credits=lots", "for parameter"},
      {"AckTimeoutBelow12Refused", kBothEnds, "ack_timeout=11",
       "ack_timeout=11 out of range 12..24"},
      {"AckTimeoutAbove24Refused", kBothEnds, "ack_timeout=25", "ack_timeout=25 out of range"},
      {"AckTimeoutNegativeRefused", kBothEnds, "ack_timeout=-16", "ack_timeout=-16 out of range"},
      {"AckTimeoutNonNumericRefused", kBothEnds, "ack_timeout=sixteen", "for parameter"},
      {"RegPairsBelowMinus1Refused", kBothEnds, "reg_pairs=-2", "reg_pairs=-2 out of range -1..1"},
      {"RegPairsAbove1Refused", kBothEnds, "reg_pairs=2", "reg_pairs=2 out of range -1..1"},
      {"RegPairsNonNumericRefused", kBothEnds, "reg_pairs=auto", "for parameter"},
      {"RetryCountNegativeRefused", kBothEnds, "retry_count=-1",
       "retry_count=-1 out of range 0..16"},
      {"RetryCountAbove16Refused", kBothEnds, "retry_count=17", "retry_count=17 out of range"},
      {"GoodNetworksOneBadValueAmongGoodRefused", kBothEnds,
       "service=987 peer_credits=8 credits=0 timeout=50", "credits=0 out of range"},
      {"NetworksEmptyRefused", "", "", "networks: no network given"},
      {"NetworksBlankRefused", "   ", "", "networks: no network given"},
      {"NetworksNoInterfaceListRefused", "o2ib0", "", "expected o2ibN(interface,...)"},
      {"NetworksEmptyInterfaceListRefused", "o2ib0()", "", "bad interface name"},
      {"NetworksUnclosedParenRefused", "o2ib0(veth0", "", "missing ')'"},
      {"NetworksUnknownInterfaceRefused", "o2ib0(nosuchif0)", "", "no interface 'nosuchif0'"},
      {"NetworksInterfaceWithoutIpv4Refused", "o2ib0(vx0)", "", "has no IPv4 address",
       "ip link show vx0 >/dev/null 2>&1 || "
       "{ ip link add vx0 type veth peer name vx1 && ip link set vx0 up; }"},
      {"NetworksInterfaceWithoutRdmaDeviceRefused", "o2ib0(lo)", "", "no RDMA device"},
      {"NetworksDuplicateInterfaceRefused", "o2ib0(veth0,veth0)", "", "given twice"},
      {"NetworksDuplicateNetworkRefused", "o2ib0(veth0) o2ib0(veth1)", "", "given twice"},
      {"NetworksSameInterfaceInTwoNetworksRefused", "o2ib0(veth0) o2ib1(veth0)", "",
       "o2lnd: o2ib1"},
      {"NetworksGarbageAfterParenRefused", "o2ib0(veth0)junk", "", "garbage after ')'"},
      {"NetworksNotO2ibRefused", "tcp0(veth0)", "", "expected o2ibN"},
      {"NetworksBadNetNumberRefused", "o2ibx(veth0)", "", "expected o2ibN"},
      {"NetworksNetNumberAbove65535Refused", "o2ib65536(veth0)", "", "expected o2ibN"},
      {"NetworksEmptyInterfaceNameRefused", "o2ib0(veth0,,veth1)", "", "bad interface name"},
      {"NetworksInterfaceNameTooLongRefused",
       "o2ib0(a_very_long_interface_name_longer_than_ifnamsiz)", "", "bad interface name"},
      {"NetworksSeventeenNetworksRefused", many_nets.c_str(), "", "more than 16"},
      {"NetworksSeventeenInterfacesRefused", many_ifs.c_str(), "", "more than 16"},
      // The kernel's charp parser refuses it before o2lnd runs, with a line
      // that does not name the module (reported in the findings).
      {"NetworksLongerThan1024BytesRefused", too_long.c_str(), "",
       "networks: string parameter too long", "", false, false},
      // routing (module/route.c, module/router.c)
      {"RoutesNotO2ibNetworkRefused", kBothEnds, R"('routes="tcp1 192.168.1.2@o2ib"')",
       "routes: expected an o2ib network"},
      {"RoutesWithoutGatewayRefused", kBothEnds, "routes=o2ib1", "routes: no gateway"},
      {"RoutesHopCountZeroRefused", kBothEnds, R"('routes="o2ib1 0 192.168.1.2@o2ib"')",
       "routes: bad hop count"},
      {"RoutesBadPriorityRefused", kBothEnds, R"('routes="o2ib1 192.168.1.2@o2ib:x"')",
       "routes: expected a gateway"},
      {"RoutesGarbageRefused", kBothEnds, R"('routes="o2ib1 192.168.1.2@o2ib junk"')",
       "routes: garbage"},
      {"RoutesGatewayOnNoLocalNetworkRefused", kBothEnds, R"('routes="o2ib1 10.9.9.9@o2ib7"')",
       "is not on a local network"},
      {"RoutesToALocalNetworkRefused", kBothEnds, R"('routes="o2ib0 10.9.9.9@o2ib7"')",
       "is a local network"},
      {"ForwardingNeitherEnabledNorDisabledRefused", kBothEnds, "forwarding=yes",
       "expected enabled or disabled"},
      {"TinyRouterBuffersBelow8Refused", kBothEnds, "tiny_router_buffers=7",
       "tiny_router_buffers=7 out of range 8..65536"},
      {"SmallRouterBuffersAbove65536Refused", kBothEnds, "small_router_buffers=65537",
       "small_router_buffers=65537 out of range"},
      {"LargeRouterBuffersZeroRefused", kBothEnds, "large_router_buffers=0",
       "large_router_buffers=0 out of range 1..4096"},
      {"PeerBufferCreditsNegativeRefused", kBothEnds, "peer_buffer_credits=-1",
       "peer_buffer_credits=-1 out of range"},
      {"RouterTimeoutAbove3600Refused", kBothEnds, "router_timeout=3601",
       "router_timeout=3601 out of range"},
      {"AliveRouterCheckIntervalNegativeRefused", kBothEnds, "alive_router_check_interval=-1",
       "alive_router_check_interval=-1 out of range 0..3600"},
      {"RouterPingTimeoutZeroRefused", kBothEnds, "router_ping_timeout=0",
       "router_ping_timeout=0 out of range 1..3600"},
      {"PeerDiscoveryDisabledTwoRefused", kBothEnds, "lnet_peer_discovery_disabled=2",
       "lnet_peer_discovery_disabled=2 out of range 0..1"},
      {"ConnsPerPeerZeroRefused", kBothEnds, "conns_per_peer=0",
       "conns_per_peer=0 out of range 1..16"},
      {"ConnsPerPeerAbove16Refused", kBothEnds, "conns_per_peer=17",
       "conns_per_peer=17 out of range"},
      {"TransactionTimeoutZeroRefused", kBothEnds, "lnet_transaction_timeout=0",
       "lnet_transaction_timeout=0 out of range 1..3600"},
      {"TransactionTimeoutAbove3600Refused", kBothEnds, "lnet_transaction_timeout=3601",
       "lnet_transaction_timeout=3601 out of range"},
      // LNet's rule: each attempt of a message gets at least a second
      {"TransactionTimeoutNotAboveRetryCountRefused", kBothEnds,
       "lnet_transaction_timeout=3 retry_count=3",
       "lnet_transaction_timeout=3 must be greater than retry_count=3"},
      // The edges themselves load (no off-by-one) and are the values in
      // force; a ping works with each.
      good("Service1Loads", "service=1", "service=1"),
      good("Service65535Loads", "service=65535", "service=65535"),
      good("PeerCredits2Loads", "peer_credits=2", "peer_credits=2"),
      good("PeerCredits255Loads", "peer_credits=255", "peer_credits=255"),
      good("Timeout1Loads", "timeout=1", "timeout=1"),
      good("Timeout3600Loads", "timeout=3600", "timeout=3600"),
      // as o2iblnd: timeout=0 is LNet's share of the transaction timeout,
      // (150 - 1) / (2 + 1) at LNet's defaults
      good("TimeoutZeroTakesLnetsShareOfTheTransaction", "timeout=0", "timeout=49"),
      good("TimeoutZeroFollowsTheTransactionTimeout",
           "timeout=0 lnet_transaction_timeout=31 retry_count=4", "timeout=6"),
      good("ConnsPerPeer16Loads", "conns_per_peer=16", "conns_per_peer=16"),
      good("TransactionTimeout4WithRetryCount3Loads", "lnet_transaction_timeout=4 retry_count=3",
           "lnet_transaction_timeout=4"),
      good("Credits8Loads", "credits=8", "credits=8"),
      // ntx (txs alive per NI) must be at least credits.
      good("Credits16384Loads", "credits=16384 ntx=16384", "credits=16384"),
      good("AckTimeout12Loads", "ack_timeout=12", "ack_timeout=12"),
      good("AckTimeout24Loads", "ack_timeout=24", "ack_timeout=24"),
      good("RegPairsNeverLoads", "reg_pairs=0", "reg_pairs=0"),
      good("RegPairsAlwaysLoads", "reg_pairs=1", "reg_pairs=1"),
      good("RetryCount0Loads", "retry_count=0", "retry_count=0"),
      good("ForwardingEnabledLoads", "forwarding=enabled", "forwarding=enabled"),
      good("RoutesWithHopsAndPriorityLoad",
           R"('routes="o2ib1 2 192.168.1.9@o2ib0:1; o2ib2 192.168.1.9@o2ib"')",
           "routes=o2ib1 2 192.168.1.9@o2ib0:1; o2ib2 192.168.1.9@o2ib"),
      good("LargeRouterBuffers1Loads", "forwarding=enabled large_router_buffers=1",
           "large_router_buffers=1"),
      // Lustre clamps peer_credits to credits; o2lnd takes both as given.
      good("PeerCreditsAboveCreditsLoads", "peer_credits=255 credits=8", "peer_credits=255"),
  };
  return v;
}

class HostileLoad : public HostileParams {
 protected:
  // A bad value (or combination) is refused at load with a dmesg line that
  // explains it, and leaves nothing: no module, no /dev/o2lnd, no cm_id, no
  // listening socket (siw listens with TCP).  A good edge loads, reads back
  // from sysfs, pings, and unloads clean.
  void check_case(const ParamCase& c) {
    Guest& g = guest("g1");
    if (*c.setup != 0) {
      ASSERT_TRUE(run(g, c.setup, 30).ok());
    }
    const std::string listeners = "ss -Hltn | sort; rdma res show cm_id";
    RunResult base = run(g, listeners, 20);
    std::string mark = std::string("o2-hostile-") + c.name;
    run(g, "echo " + mark + " > /dev/kmsg", 10);
    RunResult r = insmod_with(g, c.networks, c.params, 60);
    RunResult log = run(g, "dmesg | sed -n '/" + mark + "/,$p' | grep -v " + mark, 10);
    std::string shown = std::string("networks=\"") + c.networks + "\"";
    if (shown.size() > 60) {
      shown = shown.substr(0, 40) + "...\" (" + std::to_string(std::string(c.networks).size()) +
              " bytes)";
    }
    if (*c.params != 0) shown += std::string(" ") + c.params;
    std::string outcome;
    if (c.good) {
      EXPECT_TRUE(r.ok()) << "refused: " << shown << "\n" << r.out << log.out;
      std::string p = c.message;
      std::string name = p.substr(0, p.find('=')), want = p.substr(p.find('=') + 1);
      RunResult v = run(g, "cat /sys/module/o2lnd/parameters/" + name, 10);
      EXPECT_EQ(v.out, want + "\n") << name;
      RunResult ping = o2ctl(g, std::string("ping ") + kPeer + " --source " + kLocal, 60);
      EXPECT_EQ(ping.status, 0) << ping.out;
      expect_unload_frees_rdma(g);
      outcome = std::string(r.ok() ? "loads" : "**REFUSED**") +
                (ping.status == 0 ? ", ping ok" : ", **ping failed**") + ", unloads";
    } else {
      EXPECT_NE(r.status, 0) << "accepted: " << shown;
      EXPECT_NE(log.out.find(c.message), std::string::npos)
          << "no dmesg line with '" << c.message << "':\n"
          << log.out;
      if (c.names_module) {
        EXPECT_NE(log.out.find("o2lnd"), std::string::npos) << log.out;
      }
      RunResult left = run(g, "! grep '^o2lnd ' /proc/modules && ! ls -l /dev/o2lnd", 10);
      EXPECT_TRUE(left.ok()) << "module or /dev/o2lnd left behind:\n" << left.out;
      RunResult after = run(g, listeners, 20);
      EXPECT_EQ(after.out, base.out) << "listeners / cm_ids not back to the baseline";
      if (!left.ok()) run(g, "rmmod o2lnd", 30);
      bool ok = r.status != 0 && left.ok() && after.out == base.out &&
                log.out.find(c.message) != std::string::npos;
      outcome = std::string(r.status != 0 ? "refused" : "**ACCEPTED**") +
                (ok ? ", nothing left" : ", **check failed**") +
                (c.names_module ? "" : " (the message does not name o2lnd)");
    }
    std::string dm;
    for (const auto& l : lines_of(log.out)) {
      bool ours = l.find(c.names_module ? "o2lnd" : c.message) != std::string::npos;
      if (!ours || c.good || l.find("taint") != std::string::npos) continue;
      std::string t = l.substr(l.find(']') == std::string::npos ? 0 : l.find(']') + 2);
      if (t.size() > 110) t = t.substr(0, 107) + "...";
      dm += (dm.empty() ? "" : "\n") + t;
    }
    report(g, std::string(c.good ? "41-" : "40-") + c.name + ".md",
           std::string("| ") + c.name + " | `" + md_cell(shown) + "` | " + outcome + " | " +
               md_cell(dm) + " |\n");
  }
};

class HostileParam : public HostileLoad, public ::testing::WithParamInterface<ParamCase> {};

TEST_P(HostileParam, AtLoad) { check_case(GetParam()); }

// On slow kernels (O2_TIMEOUT_SCALE > 1: the debug kernel, ~6x slower) every
// case runs in this one test (testbed/check.sh leaves Hostile/HostileParam.*
// out there).
TEST_F(HostileLoad, EveryCaseInOneTestOnSlowKernels) {
  if (scale() <= 1) {
    GTEST_SKIP() << "fast kernel: Hostile/HostileParam.AtLoad/* run the cases one by one";
  }
  for (const auto& c : param_cases()) {
    SCOPED_TRACE(c.name);
    check_case(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Hostile, HostileParam, ::testing::ValuesIn(param_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace o2it
