// LNet routing (issue 7): an end node reaches a remote network through a
// router that forwards between its two networks, copying each message into
// a router buffer (tiny / small / large pools) under per-peer router
// credits.  Seen through o2ctl's YAML: `route show`, `routing show`,
// `peer show -v` (router credits, health), `conn show`, and `selftest
// ping|brw`.
//
//   RoutingThreeGuests ("three"):
//     compute eth0 192.168.1.1@o2ib0
//       <-> router eth0 192.168.1.2@o2ib0 | eth1 192.168.2.2@o2ib1
//       <-> server eth0 192.168.2.1@o2ib1
//   compute: routes="o2ib1 192.168.1.2@o2ib"; server: routes="o2ib
//   192.168.2.2@o2ib1"; router: forwarding="enabled".
//
// DeadComputeNodeCannotRunTheRouterOutOfMemory replays the router OOM of
// ANCHORS.md (failure 2): a compute node that stops answering, a server
// that keeps sending to it through the router and reconnects to the router
// over and over.  In the field every old connection stayed on the router
// (~3 MB each) because routed messages parked on the router queue held
// their receive buffers; tx credits reached -4500 and router credits
// -17000.  Here every resource of the router is sampled once a second and
// must stay inside bounds derived from the module parameters.
//
// Results: $O2_RESULTS/routing/{cea-router.md,cea-router.csv,brw.md}.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fixture.h"
#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;

namespace o2it {
namespace {

// NIDs (o2ctl prints net o2ib0 as "o2ib0"; the module's routes= takes
// LNet's "o2ib" for it: comparisons go through canon()).
constexpr const char* kCompute = "192.168.1.1@o2ib0";
constexpr const char* kRouter0 = "192.168.1.2@o2ib0";  // the router on the compute side
constexpr const char* kRouter1 = "192.168.2.2@o2ib1";  // the router on the server side
constexpr const char* kServer = "192.168.2.1@o2ib1";
constexpr const char* kComputeNet = "o2ib0(eth0)";
constexpr const char* kRouterNets = "o2ib0(eth0) o2ib1(eth1)";
constexpr const char* kServerNet = "o2ib1(eth0)";
constexpr const char* kComputeRoutes = "o2ib1 192.168.1.2@o2ib";
constexpr const char* kServerRoutes = "o2ib 192.168.2.2@o2ib1";
constexpr uint32_t kMiB = 1U << 20;

// The configuration every test loads (bounds below are derived from it).
constexpr int kPeerCredits = 8;        // queue depth: receives a connection can fill
constexpr int kCredits = 64;           // messages one peer may have queued
constexpr int kPeerBufferCredits = 8;  // router buffers one peer may hold
constexpr int kTinyBuffers = 16;       // small pools: the CEA test must run them dry
constexpr int kSmallBuffers = 16;
constexpr int kLargeBuffers = 4;   // 1 MiB each
constexpr int kHealthProbeS = 10;  // "one probe every few seconds", with margin

// The module's timeout= (s): 10 s, scaled for slow kernels as the other
// suites scale theirs.
int module_timeout() { return static_cast<int>(std::lround(10 * o2tb::timeout_scale())); }
int router_timeout() { return std::max(3, module_timeout() / 2); }

// "192.168.1.2@o2ib" and "192.168.1.2@o2ib0" (and "o2ib" / "o2ib0") alike.
std::string canon(std::string s) {
  if (s.ends_with("@o2ib") || s == "o2ib") s += "0";
  return s;
}

// The entries of a list of o2ctl's YAML (a null node: none); not a list is
// a test failure.
std::vector<Record> entries(const YAML::Node& list) {
  std::string error;
  auto v = o2ctl_yaml::entries(list, error);
  if (!error.empty()) ADD_FAILURE() << "o2ctl's YAML: " << error;
  return v;
}

// `o2ctl routing show`: the scalars of `routing:` and its buffer pools.
struct RoutingView {
  bool ok = false;
  Record top;                           // forwarding, waiting, "held rx", ...
  std::map<std::string, Record> pools;  // "tiny", "small", "large"
  std::string raw;
  [[nodiscard]] std::string text() const { return raw; }
};

RoutingView routing_of(const YAML::Node& y, const std::string& raw) {
  RoutingView v;
  v.raw = raw;
  YAML::Node r = y["routing"];
  if (!r || !r.IsMap()) return v;
  for (const auto& kv : r) {
    if (kv.second.IsScalar()) v.top[kv.first.as<std::string>()] = kv.second.Scalar();
  }
  for (auto& p : entries(r["buffers"])) v.pools[field(p, "pool")] = p;
  v.ok = true;
  return v;
}

// Pools idle: every pool's credits back to its size.
bool pools_idle(const RoutingView& v) {
  if (v.pools.size() != 3) return false;
  return std::ranges::all_of(v.pools, [](const auto& kv) {
    return field_int(kv.second, "credits") == field_int(kv.second, "nbuffers") &&
           field_int(kv.second, "nbuffers") != kMissingField;
  });
}

std::string o2(const std::string& args) { return sh_quote(o2ctl_path()) + " " + args; }

// A guest-side background loop: runs `body` until /tmp/rt-stop exists or
// `limit_s` passed, appending its output to LOG, then touches LOG.done.
std::string bg_loop(const std::string& body, const std::string& log, int limit_s) {
  return "rm -f " + log + " " + log + ".done; (end=$(( $(date +%s) + " + std::to_string(limit_s) +
         " )); while [ ! -e /tmp/rt-stop ] && [ $(date +%s) -lt $end ]; do " + body + " >> " + log +
         " 2>&1; done; touch " + log + ".done) >/dev/null 2>&1 &";
}

std::string results_dir() {
  const char* v = getenv("O2_RESULTS");
  std::string d = (v != nullptr && *v != 0 ? std::string(v) : O2_ITEST_SOURCE_DIR "/results");
  d += "/routing";
  fs::create_directories(d);
  return d;
}

std::string fmt(double v, int prec = 1) {
  char b[64];
  snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

O2_SUITE_CLASS(
    RoutingThreeGuests, "three",
    void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"compute", "router", "server"}) {
          Guest& g = guest(n);
          if (g.paused() && g.alive()) g.resume();
        }
        for (const char* n : {"compute", "router", "server"}) {
          Guest& g = guest(n);
          if (!g.alive()) continue;
          // background loops end at the next iteration; no netem drop and
          // no link down left
          run(g,
              "touch /tmp/rt-stop; tc qdisc del dev eth0 root 2>/dev/null; "
              "ip link set eth1 up 2>/dev/null; true",
              30);
        }
        for (const char* n : {"compute", "router", "server"}) {
          Guest& g = guest(n);
          if (!g.alive()) continue;
          run(g,
              "for i in $(seq 60); do n=$(ls /tmp/rt-*.log 2>/dev/null | wc -l); "
              "d=$(ls /tmp/rt-*.log.done 2>/dev/null | wc -l); [ \"$n\" -le \"$d\" ] && break; "
              "sleep 0.5; done; pkill -x o2ctl; sleep 1; "
              "rm -f /tmp/rt-stop /tmp/rt-*.log /tmp/rt-*.log.done",
              60);
          expect_unload_frees_rdma(g);
        }
      }
      TopologyTest::TearDown();
    }

    // Loads o2lnd on the three guests (router buffers and credits as
    // above); false (with a failure) if one insmod fails.
    // compute_extra: more module parameters for the compute node.
    bool load_three(const std::string& compute_extra = "");
    // Polls `g`'s only route until its state is `want` (timeout_s); the
    // seconds it took, or -1.
    double wait_route_state(Guest& g, const std::string& want, double timeout_s);
    RoutingView routing(Guest & g); std::vector<Record> routes(Guest & g);
    Selftest selftest(Guest & g, const std::string& args, double timeout_s = 300);
    // Polls the router until its pools and queues are idle (timeout_s);
    // the last view either way.
    RoutingView wait_router_idle(Guest & router, double timeout_s););

bool RoutingThreeGuests::load_three(const std::string& compute_extra) {
  const std::string common = "timeout=" + std::to_string(module_timeout()) +
                             " peer_credits=" + std::to_string(kPeerCredits) +
                             " credits=" + std::to_string(kCredits);
  auto routes_param = [](const char* r) { return sh_quote(std::string("routes=\"") + r + "\""); };
  RunResult c = insmod_with(guest("compute"), kComputeNet,
                            common + " " + routes_param(kComputeRoutes) + " " + compute_extra);
  EXPECT_TRUE(c.ok()) << "compute: insmod: " << c.out << "\n" << bed().test_log();
  RunResult r = insmod_with(
      guest("router"), kRouterNets,
      common + " forwarding=enabled peer_buffer_credits=" + std::to_string(kPeerBufferCredits) +
          " tiny_router_buffers=" + std::to_string(kTinyBuffers) + " small_router_buffers=" +
          std::to_string(kSmallBuffers) + " large_router_buffers=" + std::to_string(kLargeBuffers) +
          " router_timeout=" + std::to_string(router_timeout()));
  EXPECT_TRUE(r.ok()) << "router: insmod: " << r.out << "\n" << bed().test_log();
  RunResult s =
      insmod_with(guest("server"), kServerNet, common + " " + routes_param(kServerRoutes));
  EXPECT_TRUE(s.ok()) << "server: insmod: " << s.out << "\n" << bed().test_log();
  if (!(c.ok() && r.ok() && s.ok())) return false;
  // insmod ignores unknown parameters: a module without routing loads too
  RunResult p = run(guest("router"), "cat /sys/module/o2lnd/parameters/forwarding", 10);
  EXPECT_TRUE(p.ok()) << "the module has no forwarding= parameter (no routing): " << ko_path();
  return p.ok();
}

double RoutingThreeGuests::wait_route_state(Guest& g, const std::string& want, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    auto rs = routes(g);
    if (rs.size() == 1 && field(rs[0], "state") == want) return since(t0);
    if (since(t0) > timeout_s) {
      ADD_FAILURE() << g.name() << ": the route is not " << want << " after " << timeout_s
                    << " s:\n"
                    << dump(rs);
      return -1;
    }
    usleep(200 * 1000);
  }
}

RoutingView RoutingThreeGuests::routing(Guest& g) {
  RunResult r = o2ctl(g, "routing show", 30);
  EXPECT_TRUE(r.ok()) << g.name() << ": o2ctl routing show:\n" << r.out;
  RoutingView v;
  v.raw = r.out;
  if (!r.ok()) return v;
  try {
    v = routing_of(YAML::Load(r.out), r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << g.name() << ": routing show does not parse: " << e.what() << "\n" << r.out;
  }
  EXPECT_TRUE(v.ok) << g.name() << ": no 'routing:' map in:\n" << r.out;
  return v;
}

std::vector<Record> RoutingThreeGuests::routes(Guest& g) {
  RunResult r = o2ctl(g, "route show", 30);
  EXPECT_TRUE(r.ok()) << g.name() << ": o2ctl route show:\n" << r.out;
  return r.ok() ? parse_yaml_list(r.out, "route") : std::vector<Record>{};
}

Selftest RoutingThreeGuests::selftest(Guest& g, const std::string& args, double timeout_s) {
  Selftest s = parse_selftest(run(g, o2("selftest " + args + " -y"), timeout_s));
  EXPECT_TRUE(s.error.empty()) << g.name() << ": selftest " << args << ": " << s.error
                               << " (status " << s.run.status << "):\n"
                               << s.text();
  return s;
}

RoutingView RoutingThreeGuests::wait_router_idle(Guest& router, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    RoutingView v = routing(router);
    bool idle = v.ok && field_int(v.top, "waiting") == 0 && field_int(v.top, "held rx") == 0 &&
                pools_idle(v);
    if (idle || since(t0) > timeout_s) return v;
    usleep(500 * 1000);
  }
}

// The one route of an end node: to `net` through `gw`, up, used.
void expect_route(const std::vector<Record>& rs, const std::string& who, const std::string& net,
                  const std::string& gw) {
  ASSERT_EQ(rs.size(), 1U) << who << ": expected one route:\n" << dump(rs);
  const Record& r = rs[0];
  EXPECT_EQ(canon(field(r, "net")), canon(net)) << who << ":\n" << dump_record(r);
  EXPECT_EQ(canon(field(r, "gateway")), canon(gw)) << who << ":\n" << dump_record(r);
  EXPECT_EQ(need(r, "hop"), 1) << who << ":\n" << dump_record(r);
  EXPECT_EQ(need(r, "priority"), 0) << who << ":\n" << dump_record(r);
  EXPECT_EQ(field(r, "state"), "up") << who << ":\n" << dump_record(r);
  EXPECT_GT(need(r, "sent"), 0) << who << ": nothing sent through the route:\n" << dump_record(r);
  EXPECT_EQ(need(r, "dropped"), 0) << who << ":\n" << dump_record(r);
}

// --- 1 -------------------------------------------------------------------------

// Pings both ways, then brw writes of every boundary size both ways with
// --check: each arrives intact through the router (inline up to the
// IMMEDIATE maximum, store-and-forward through a large buffer above it).
// The end nodes' routes are up and used, the router forwarded, and once
// quiet every router buffer is back in its pool.
TEST_F(RoutingThreeGuests, PingAndBrwCrossTheRouterBothWays) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  Guest& server = guest("server");
  ASSERT_TRUE(load_three());

  expect_ping_ok(compute, kServer, "--timeout 20");
  expect_ping_ok(server, kCompute, "--timeout 20");
  // the router itself answers on both its networks
  expect_ping_ok(compute, kRouter0, "--timeout 20");
  expect_ping_ok(server, kRouter1, "--timeout 20");

  const std::vector<uint32_t> sizes = {0, 1, 3976, 3977, 65536, kMiB};
  const int count = 3;
  int64_t rdma_rpcs = 0;
  struct Dir {
    Guest* from;
    const char* from_nid;
    const char* to;
    const char* name;
  };
  const Dir dirs[] = {{&server, kServer, kCompute, "server_to_compute"},
                      {&compute, kCompute, kServer, "compute_to_server"}};
  for (const auto& d : dirs) {
    for (uint32_t size : sizes) {
      SCOPED_TRACE(std::string(d.name) + " write " + std::to_string(size));
      Selftest b = selftest(*d.from, "brw write " + std::string(d.to) + " --from " + d.from_nid +
                                         " --size " + std::to_string(size) +
                                         " --check --seed 7 --concurrency 1 --count " +
                                         std::to_string(count) + " --timeout 30000");
      EXPECT_EQ(b.run.status, 0) << b.text();
      EXPECT_EQ(b.at("rpcs"), count) << b.text();
      EXPECT_EQ(b.at("errors.total"), 0) << b.text();
      rdma_rpcs += static_cast<int64_t>(std::max(0.0, b.at("rdma_rpcs", 0)));
    }
  }
  EXPECT_GT(rdma_rpcs, 0) << "no routed write went by RDMA (sizes above the inline maximum)";

  expect_route(routes(compute), "compute", "o2ib1", kRouter0);
  expect_route(routes(server), "server", "o2ib0", kRouter1);
  EXPECT_TRUE(routes(router).empty()) << "the router has no routes of its own";

  RoutingView rv = wait_router_idle(router, 20 * o2tb::timeout_scale());
  ASSERT_TRUE(rv.ok) << rv.text();
  EXPECT_EQ(field(rv.top, "forwarding"), "enabled") << rv.text();
  EXPECT_EQ(need(rv.top, "peer buffer credits"), kPeerBufferCredits) << rv.text();
  EXPECT_EQ(need(rv.top, "router timeout"), router_timeout()) << rv.text();
  EXPECT_GT(need(rv.top, "forwarded"), 0) << rv.text();
  // at least the 1 MiB writes, 3 each way
  EXPECT_GE(need(rv.top, "forwarded bytes"), int64_t{2} * count * kMiB) << rv.text();
  for (const char* k :
       {"dropped no route", "dropped down", "dropped timeout", "dropped closed", "dropped error"}) {
    EXPECT_EQ(need(rv.top, k), 0) << k << ":\n" << rv.text();
  }
  EXPECT_EQ(need(rv.top, "waiting"), 0) << rv.text();
  EXPECT_EQ(need(rv.top, "held rx"), 0) << rv.text();
  ASSERT_EQ(rv.pools.size(), 3U) << "pools tiny, small, large:\n" << rv.text();
  const std::map<std::string, int> sizes_of = {
      {"tiny", kTinyBuffers}, {"small", kSmallBuffers}, {"large", kLargeBuffers}};
  for (const auto& [pool, n] : sizes_of) {
    ASSERT_TRUE(rv.pools.contains(pool)) << rv.text();
    const Record& p = rv.pools.at(pool);
    EXPECT_EQ(need(p, "nbuffers"), n) << pool << ":\n" << rv.text();
    EXPECT_EQ(need(p, "credits"), n) << pool << ": credits not back:\n" << rv.text();
    EXPECT_GE(need(p, "min credits"), -kPeerCredits * 4) << pool << ":\n" << rv.text();
    figure("pool_" + pool + "_taken", std::to_string(need(p, "taken")));
  }
  EXPECT_GT(need(rv.pools["large"], "taken"), 0) << "bulk writes not stored in large buffers";
  EXPECT_EQ(need(rv.pools["large"], "size"), kMiB) << rv.text();
  EXPECT_EQ(need(rv.pools["tiny"], "size"), 0) << rv.text();
  EXPECT_GT(need(rv.pools["tiny"], "taken") + need(rv.pools["small"], "taken"), 0) << rv.text();

  // router credits of both end nodes back on the router
  for (const auto& [local, nid] : {std::pair{kRouter0, kCompute}, std::pair{kRouter1, kServer}}) {
    Record p = peer(router, local, nid);
    ASSERT_FALSE(p.empty()) << "router: no peer " << nid;
    EXPECT_EQ(need(p, "router credits"), need(p, "router credits max")) << dump_record(p);
    EXPECT_EQ(need(p, "router credits max"), kPeerBufferCredits) << dump_record(p);
    EXPECT_EQ(need(p, "router queued"), 0) << dump_record(p);
  }
  // an end node does not forward
  RoutingView cv = routing(compute);
  EXPECT_EQ(field(cv.top, "forwarding"), "disabled") << cv.text();

  figure("forwarded", std::to_string(need(rv.top, "forwarded")));
  figure("forwarded_bytes", std::to_string(need(rv.top, "forwarded bytes")));
  figure("routed_rdma_rpcs", std::to_string(rdma_rpcs));

  // Routed GET (brw read): the spec requires PUT only; try every size both
  // ways last (a drop a GET causes must not spoil the checks above) and
  // record how many arrive intact, without asserting either way.
  int reads = 0, reads_ok = 0;
  std::string read_failures;
  for (const auto& d : dirs) {
    for (uint32_t size : sizes) {
      RunResult r =
          run(*d.from,
              o2("selftest brw read " + std::string(d.to) + " --from " + d.from_nid + " --size " +
                 std::to_string(size) + " --check --concurrency 1 --count 1 --timeout 10000 -y"),
              120);
      reads++;
      if (r.ok()) {
        reads_ok++;
      } else {
        read_failures +=
            std::string(read_failures.empty() ? "" : ", ") + d.name + " " + std::to_string(size);
      }
    }
  }
  figure("routed_brw_read_ok",
         std::to_string(reads_ok) + "/" + std::to_string(reads) +
             (read_failures.empty() ? "" : " (failed: " + read_failures + ")"));
}

// --- 2 -------------------------------------------------------------------------

// A NID on a network nobody routes to: the ping fails at once with
// EHOSTUNREACH, in lctl's words, and o2ctl exits non-zero.
TEST_F(RoutingThreeGuests, NoRouteIsHostUnreachable) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  ASSERT_TRUE(load_three());
  const std::string nid = "192.168.7.1@o2ib7";
  for (Guest* g : {&compute, &router}) {
    SCOPED_TRACE(g->name());
    RunResult r = o2ctl(*g, "ping " + nid + " --timeout 5", 60);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("failed to ping " + nid + ": No route to host"), std::string::npos)
        << r.out;
    EXPECT_LT(r.seconds, 5.0) << "no route must fail at once, not time out:\n" << r.out;
  }
  // the route that exists still works, and was not charged for the miss
  expect_ping_ok(compute, kServer, "--timeout 20");
  auto rs = routes(compute);
  ASSERT_EQ(rs.size(), 1U) << dump(rs);
  EXPECT_EQ(need(rs[0], "dropped"), 0) << dump_record(rs[0]);
}

// A router drained at run time (forwarding written "disabled", LNet's
// `lnetctl set routing 0`) forwards nothing new: a ping across it fails
// and is counted as a drop on the router, its ping info says RTE_DISABLED
// (`routing: false` to a node that discovers it); enabled again, it
// forwards at once.  A value that is neither is refused and changes nothing.
TEST_F(RoutingThreeGuests, ARouterDrainedAtRunTimeForwardsNothingNewAndComesBack) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  ASSERT_TRUE(load_three());
  expect_ping_ok(compute, kServer, "--timeout 20");
  const std::string param = "/sys/module/o2lnd/parameters/forwarding";
  RunResult bad = run(router, "echo yes > " + param);
  EXPECT_NE(bad.status, 0) << "forwarding=yes accepted at run time";
  EXPECT_EQ(run(router, "cat " + param).out, "enabled\n");
  RunResult why = run(router, "dmesg | grep \"forwarding='yes'\"");
  EXPECT_NE(why.out.find("expected enabled or disabled"), std::string::npos) << why.out;

  ASSERT_TRUE(run(router, "echo disabled > " + param).ok());
  EXPECT_EQ(run(router, "cat " + param).out, "disabled\n");
  EXPECT_EQ(field(routing(router).top, "forwarding"), "disabled");
  RunResult p = o2ctl(compute, std::string("ping ") + kServer + " --timeout 3", 30);
  EXPECT_NE(p.status, 0) << "a drained router forwarded a ping:\n" << p.out;
  RunResult d = o2ctl(compute, std::string("discover ") + kRouter0 + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto peers = parse_yaml_list(d.out, "discover");
  ASSERT_EQ(peers.size(), 1U) << d.out;
  EXPECT_EQ(field(peers[0], "routing"), "false") << d.out;

  // the discovery told the compute node: its route is down, a ping fails
  // at once (no route) rather than going into the router's drops
  EXPECT_GE(wait_route_state(compute, "down", 5), 0);
  RunResult nr = o2ctl(compute, std::string("ping ") + kServer + " --timeout 10", 30);
  EXPECT_NE(nr.out.find("No route to host"), std::string::npos) << nr.out;
  EXPECT_LT(nr.seconds, 5.0) << nr.out;

  // enabled again: the router pushes its ping info to the compute node
  // (known from the discovery's push), whose route comes back at once
  ASSERT_TRUE(run(router, "echo enabled > " + param).ok());
  EXPECT_EQ(field(routing(router).top, "forwarding"), "enabled");
  double up_s = wait_route_state(compute, "up", 10);
  EXPECT_GE(up_s, 0);
  figure("route_up_after_enable_s", fmt(up_s));
  expect_ping_ok(compute, kServer, "--timeout 20");
}

// LNet's router checker on an end node: with alive_router_check_interval=1
// the compute node pings its gateway every second and judges the reply
// as LNet does.  The router's far side failing (its o2ib1 link down: no
// NI up on the route's network, LNet's avoid_asym_router_failure) and the
// router draining (RTE_DISABLED, of which no push tells the compute node:
// the router never learned it) each take the route down within a few
// checks, and a ping across then fails at once with "No route to host"
// rather than timing out in the router's drops; healed, the route comes
// back by itself and carries traffic.  Figures: seconds from each change
// to the route's new state on the compute node.
TEST_F(RoutingThreeGuests, AnEndNodesGatewayChecksTakeARouteThatCannotForwardOutOfUse) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  ASSERT_TRUE(load_three("alive_router_check_interval=1 router_ping_timeout=3"));
  expect_ping_ok(compute, kServer, "--timeout 20");
  EXPECT_GE(wait_route_state(compute, "up", 5), 0);
  auto no_route_at_once = [&](const std::string& when) {
    RunResult r = o2ctl(compute, std::string("ping ") + kServer + " --timeout 10", 30);
    EXPECT_NE(r.status, 0) << when << ": a ping crossed:\n" << r.out;
    EXPECT_NE(r.out.find("No route to host"), std::string::npos) << when << ":\n" << r.out;
    EXPECT_LT(r.seconds, 5.0) << when << ": no route must fail at once:\n" << r.out;
  };

  // the router's far side goes down
  ASSERT_TRUE(run(router, "ip link set eth1 down", 30).ok());
  double down_s = wait_route_state(compute, "down", 15);
  EXPECT_GE(down_s, 0);
  figure("route_down_after_far_link_down_s", fmt(down_s));
  no_route_at_once("far side down");
  RunResult why = run(compute, "dmesg | grep 'route to o2ib1 through' | tail -n 1", 10);
  EXPECT_NE(why.out.find("has no NI up on that network"), std::string::npos) << why.out;
  ASSERT_TRUE(run(router, "ip link set eth1 up", 30).ok());
  double up_s = wait_route_state(compute, "up", 30);
  EXPECT_GE(up_s, 0);
  figure("route_up_after_far_link_up_s", fmt(up_s));
  expect_ping_ok(compute, kServer, "--timeout 20");

  // the router drains: only the checks can tell the compute node
  const std::string param = "/sys/module/o2lnd/parameters/forwarding";
  ASSERT_TRUE(run(router, "echo disabled > " + param).ok());
  down_s = wait_route_state(compute, "down", 15);
  EXPECT_GE(down_s, 0);
  figure("route_down_after_drain_s", fmt(down_s));
  no_route_at_once("router drained");
  why = run(compute, "dmesg | grep 'route to o2ib1 through' | tail -n 1", 10);
  EXPECT_NE(why.out.find("does not forward"), std::string::npos) << why.out;
  ASSERT_TRUE(run(router, "echo enabled > " + param).ok());
  up_s = wait_route_state(compute, "up", 15);
  EXPECT_GE(up_s, 0);
  figure("route_up_after_enable_s", fmt(up_s));
  expect_ping_ok(compute, kServer, "--timeout 20");
}

// --- 3 -------------------------------------------------------------------------

// One sample of the router, plus the server's reconnect progress.
struct Row {
  double t = 0;
  int64_t conns = 0, closing = 0, conns_server = 0, conns_compute = 0, qp = 0;
  int64_t slab_kb = 0, sunreclaim_kb = 0, vmalloc_kb = 0, memavail_kb = 0;
  int64_t waiting = 0, waiting_max = 0, held_rx = 0;
  int64_t tiny = 0, small = 0, large = 0, tiny_min = 0, small_min = 0, large_min = 0;
  int64_t srv_tx_min = 0, srv_rtr = 0, srv_rtr_min = 0, cmp_tx = 0, cmp_tx_min = 0, cmp_rtr_min = 0;
  int64_t dropped_closed = 0, dropped_down = 0, dropped_timeout = 0, dropped_error = 0;
  int64_t forwarded = 0, cycles = 0;
  std::string cmp_health;
};

std::string router_sample_cmd() {
  return o2("conn show") + " && " + o2("peer show -v") + " && " + o2("routing show") +
         " && echo \"qp: $(rdma res show qp | grep -c 'type RC')\" && "
         "awk '/^(Slab|SUnreclaim|VmallocUsed|MemAvailable):/ {print $1 \" \" $2}' /proc/meminfo";
}

// Parses a router sample into a Row; false if it does not parse.
bool parse_row(const RunResult& r, Row& row, std::string& why) {
  if (!r.ok()) {
    why = "status " + std::to_string(r.status) + (r.timed_out ? " (timed out)" : "");
    return false;
  }
  try {
    YAML::Node y = YAML::Load(r.out);
    auto cs = entries(y["conn"]);
    auto ps = entries(y["peer"]);
    RoutingView rv = routing_of(y, r.out);
    if (!rv.ok) {
      why = "no routing: map";
      return false;
    }
    for (const auto& c : cs) {
      std::string st = field(c, "state");
      bool closing = st == "closing" || st == "zombie";
      row.conns++;
      row.closing += closing ? 1 : 0;
      if (closing) continue;
      if (canon(field(c, "peer")) == kServer) row.conns_server++;
      if (canon(field(c, "peer")) == kCompute) row.conns_compute++;
    }
    for (const auto& p : ps) {
      std::string nid = canon(field(p, "nid"));
      if (nid == kServer) {
        row.srv_tx_min = need(p, "tx credits min");
        row.srv_rtr = need(p, "router credits");
        row.srv_rtr_min = need(p, "router credits min");
      } else if (nid == kCompute) {
        row.cmp_tx = need(p, "tx credits");
        row.cmp_tx_min = need(p, "tx credits min");
        row.cmp_rtr_min = need(p, "router credits min");
        row.cmp_health = field(p, "health");
      }
    }
    row.waiting = need(rv.top, "waiting");
    row.waiting_max = need(rv.top, "waiting max");
    row.held_rx = need(rv.top, "held rx");
    row.forwarded = need(rv.top, "forwarded");
    row.dropped_closed = need(rv.top, "dropped closed");
    row.dropped_down = need(rv.top, "dropped down");
    row.dropped_timeout = need(rv.top, "dropped timeout");
    row.dropped_error = need(rv.top, "dropped error");
    auto pool = [&rv](const char* n, int64_t& cr, int64_t& mn) {
      auto it = rv.pools.find(n);
      if (it == rv.pools.end()) {
        ADD_FAILURE() << "no pool " << n << " in routing show:\n" << rv.raw;
        return;
      }
      cr = need(it->second, "credits");
      mn = need(it->second, "min credits");
    };
    pool("tiny", row.tiny, row.tiny_min);
    pool("small", row.small, row.small_min);
    pool("large", row.large, row.large_min);
    auto mem = [&y](const char* k) { return y[k] ? y[k].as<int64_t>() : int64_t{-1}; };
    row.qp = mem("qp");
    row.slab_kb = mem("Slab");
    row.sunreclaim_kb = mem("SUnreclaim");
    row.vmalloc_kb = mem("VmallocUsed");
    row.memavail_kb = mem("MemAvailable");
  } catch (const std::exception& e) {
    why = std::string("YAML: ") + e.what();
    return false;
  }
  return true;
}

const char* kCsvHeader =
    "t_s,cycles,conns,closing,conns_server,conns_compute,qp,slab_kb,sunreclaim_kb,vmalloc_kb,"
    "memavailable_kb,waiting,waiting_max,held_rx,tiny_credits,small_credits,large_credits,"
    "tiny_min,small_min,large_min,server_tx_credits_min,server_router_credits,"
    "server_router_credits_min,compute_tx_credits,compute_tx_credits_min,"
    "compute_router_credits_min,compute_health,forwarded,dropped_closed,dropped_down,"
    "dropped_timeout,dropped_error";

std::string csv_row(const Row& r) {
  std::ostringstream o;
  o << fmt(r.t) << "," << r.cycles << "," << r.conns << "," << r.closing << "," << r.conns_server
    << "," << r.conns_compute << "," << r.qp << "," << r.slab_kb << "," << r.sunreclaim_kb << ","
    << r.vmalloc_kb << "," << r.memavail_kb << "," << r.waiting << "," << r.waiting_max << ","
    << r.held_rx << "," << r.tiny << "," << r.small << "," << r.large << "," << r.tiny_min << ","
    << r.small_min << "," << r.large_min << "," << r.srv_tx_min << "," << r.srv_rtr << ","
    << r.srv_rtr_min << "," << r.cmp_tx << "," << r.cmp_tx_min << "," << r.cmp_rtr_min << ","
    << r.cmp_health << "," << r.forwarded << "," << r.dropped_closed << "," << r.dropped_down << ","
    << r.dropped_timeout << "," << r.dropped_error;
  return o.str();
}

// The CEA scenario.  The server floods the compute node through the router
// (pings, 1 KiB inline writes, 64 KiB bulk writes); the compute node is
// paused (a node that stops answering without closing anything); the
// server closes its connections to the router and reconnects over and over
// (>= 100 cycles) while its traffic keeps coming.  Bounds on the router,
// from the configuration (2 end-node peers):
//   connections:  <= 2 per peer alive (a connect race pair) plus 2 per peer
//                 being torn down: 8; QPs (RC): the same 8.  The field kept
//                 every old connection: one per reconnect, 100+ here.
//   waiting, held rx: a waiting message holds its receive, so it holds back
//                 its sender's credit: <= peer_credits per live connection
//                 of a sending peer: 2 peers x 2 conns x 8 = 32.
//   router credits min: >= -(2 x peer_credits) per peer (its waiters); the
//                 field reached -17000.
//   pool min credits: >= -32 (all waiters on one pool).
//   tx credits min to the compute node: >= -credits (64), the most one peer
//                 may have queued; the field reached -4500.
//   slab growth: < 8 MiB over the whole run (the field: ~3 MB per leaked
//                 connection, x100 here).
// Then the compute node resumes: a ping gets through within the health
// probe interval plus the timeout, and the router returns to idle (no
// connection closing, nothing waiting, every pool full).
TEST_F(RoutingThreeGuests, DeadComputeNodeCannotRunTheRouterOutOfMemory) {
  Guest& compute = guest("compute");
  Guest& router = guest("router");
  Guest& server = guest("server");
  ASSERT_TRUE(load_three());
  expect_ping_ok(server, kCompute, "--timeout 20");
  expect_ping_ok(server, kRouter1, "--timeout 20");
  ASSERT_FALSE(HasFailure());

  const int tmo = module_timeout();
  const int64_t kMaxLive = 2, kMaxClosing = 2, kPeers = 2;
  const int64_t conn_bound = kPeers * (kMaxLive + kMaxClosing);
  const int64_t waiting_bound = kPeers * kMaxLive * kPeerCredits;
  const int64_t rtr_min_bound = -(kMaxLive * kPeerCredits);
  const int64_t pool_min_bound = -waiting_bound;
  const int64_t tx_min_bound = -kCredits;
  const int64_t slab_bound_kb = int64_t{8} * 1024;
  const int want_cycles = 100;
  const int loop_limit_s = static_cast<int>(600 * o2tb::timeout_scale());  // traffic
  const int rc_limit_s = static_cast<int>(240 * o2tb::timeout_scale());    // reconnects
  figure("bound_conns", std::to_string(conn_bound));
  figure("bound_waiting", std::to_string(waiting_bound));
  figure("bound_router_credits_min", std::to_string(rtr_min_bound));
  figure("bound_tx_credits_min", std::to_string(tx_min_bound));
  figure("bound_slab_delta_kb", std::to_string(slab_bound_kb));

  // Traffic server -> compute, in background loops on the server.
  const std::string to = std::string(kCompute) + " --from " + kServer;
  const std::string st_tmo = " --timeout " + std::to_string(std::max(2000, tmo * 300));
  ASSERT_TRUE(
      run(server,
          "rm -f /tmp/rt-stop; " +
              bg_loop(o2("selftest ping " + to + " --concurrency 16 --duration 5" + st_tmo + " -y"),
                      "/tmp/rt-ping.log", loop_limit_s) +
              bg_loop(o2("selftest brw write " + to + " --size 1K --concurrency 8 --duration 5" +
                         st_tmo + " -y"),
                      "/tmp/rt-brw1k.log", loop_limit_s) +
              bg_loop(o2("selftest brw write " + to + " --size 64K --concurrency 4 --duration 5" +
                         st_tmo + " -y"),
                      "/tmp/rt-brw64k.log", loop_limit_s),
          30)
          .ok());
  usleep(4 * 1000 * 1000);

  std::vector<Row> rows;
  Row base;
  std::string why;
  ASSERT_TRUE(parse_row(run(router, router_sample_cmd(), 60), base, why)) << why;
  ASSERT_GT(base.forwarded, 0) << "nothing forwarded before the pause";
  const int64_t slab0 = base.slab_kb;
  Record srv_peer0 = peer(server, kServer, kRouter1);
  Record rtr_peer0 = peer(router, kRouter1, kServer);
  const int64_t srv_connects0 = need(srv_peer0, "connects");
  const int64_t rtr_connects0 = need(rtr_peer0, "connects");

  Row worst;  // the extremes over the run
  worst.tiny_min = worst.small_min = worst.large_min = INT64_MAX;
  worst.srv_tx_min = worst.srv_rtr_min = worst.cmp_tx_min = worst.cmp_rtr_min = INT64_MAX;
  int64_t max_slab_delta = 0, max_vmalloc_delta = 0, max_memavail_drop = 0;
  bool down_seen = false;
  int bad_samples = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto check = [&](Row& r) {
    r.t = since(t0);
    rows.push_back(r);
    worst.conns = std::max(worst.conns, r.conns);
    worst.closing = std::max(worst.closing, r.closing);
    worst.qp = std::max(worst.qp, r.qp);
    worst.waiting = std::max(worst.waiting, r.waiting);
    worst.waiting_max = std::max(worst.waiting_max, r.waiting_max);
    worst.held_rx = std::max(worst.held_rx, r.held_rx);
    worst.tiny_min = std::min(worst.tiny_min, r.tiny_min);
    worst.small_min = std::min(worst.small_min, r.small_min);
    worst.large_min = std::min(worst.large_min, r.large_min);
    worst.srv_tx_min = std::min(worst.srv_tx_min, r.srv_tx_min);
    worst.srv_rtr_min = std::min(worst.srv_rtr_min, r.srv_rtr_min);
    worst.cmp_tx_min = std::min(worst.cmp_tx_min, r.cmp_tx_min);
    worst.cmp_rtr_min = std::min(worst.cmp_rtr_min, r.cmp_rtr_min);
    max_slab_delta = std::max(max_slab_delta, r.slab_kb - slab0);
    max_vmalloc_delta = std::max(max_vmalloc_delta, r.vmalloc_kb - base.vmalloc_kb);
    max_memavail_drop = std::max(max_memavail_drop, base.memavail_kb - r.memavail_kb);
    down_seen = down_seen || r.cmp_health == "down";
    const std::string at = " at t=" + fmt(r.t) + " s (cycle " + std::to_string(r.cycles) + ")";
    EXPECT_LE(r.conns, conn_bound) << "router connections" << at;
    EXPECT_LE(r.closing, kPeers * kMaxClosing) << "router connections closing" << at;
    EXPECT_LE(r.conns_server, kMaxLive) << "live connections to the server" << at;
    EXPECT_LE(r.conns_compute, kMaxLive) << "live connections to the compute node" << at;
    EXPECT_LE(r.qp, conn_bound) << "router RC QPs" << at;
    EXPECT_LE(r.waiting, waiting_bound) << "messages waiting for a router buffer" << at;
    EXPECT_LE(r.waiting_max, waiting_bound) << "waiting max" << at;
    EXPECT_LE(r.held_rx, waiting_bound) << "receive buffers held" << at;
    EXPECT_GE(r.srv_rtr_min, rtr_min_bound) << "server's router credits min" << at;
    EXPECT_GE(r.cmp_rtr_min, rtr_min_bound) << "compute's router credits min" << at;
    EXPECT_GE(std::min({r.tiny_min, r.small_min, r.large_min}), pool_min_bound)
        << "pool min credits" << at;
    EXPECT_GE(r.cmp_tx_min, tx_min_bound) << "tx credits min towards the compute node" << at;
    EXPECT_GE(r.srv_tx_min, tx_min_bound) << "tx credits min towards the server" << at;
    EXPECT_LT(r.slab_kb - slab0, slab_bound_kb) << "router slab growth" << at;
  };
  auto sample = [&](int64_t cycles) {
    Row r;
    r.cycles = cycles;
    std::string w;
    if (parse_row(run(router, router_sample_cmd(), 60), r, w)) {
      check(r);
    } else {
      bad_samples++;
      ADD_FAILURE() << "router sample failed: " << w;
    }
  };
  base.cycles = 0;
  check(base);

  // --- the compute node stops answering ---
  // On a fabric a dead node does not back-pressure the router's HCA: the
  // switch drops what is sent to it.  A paused QEMU guest does (its socket
  // fills, the router's virtio tx ring stalls with rxe's packets in it),
  // and rxe on Linux 6.1 frees a QP 50 s into its destroy even with packets
  // still in that ring, whose destructor then touches the freed QP (an
  // oops on resume).  So the router's link to the compute node drops
  // (netem loss 100%) while the compute node is paused, as a switch would.
  RunResult netem = run(router, "modprobe sch_netem", 30);
  if (!netem.ok() && netem.out.find("not found") != std::string::npos) {
    // Debian's kernel has it; o2lnd's own test and debug kernels
    // (kernel/*.config) are built without traffic control.
    GTEST_SKIP() << "the router's kernel has no sch_netem, so a paused node would hit the rxe "
                    "use-after-free described above: "
                 << netem.out;
  }
  RunResult drop = run(router, "tc qdisc replace dev eth0 root netem loss 100%", 30);
  ASSERT_TRUE(drop.ok()) << "router: no netem drop on eth0: " << netem.out << drop.out;
  PausedGuest paused(compute);
  const std::string rc_log = "/tmp/rt-reconnect.log";
  ASSERT_TRUE(run(server,
                  "rm -f " + rc_log + " " + rc_log + ".done; (i=0; ok=0; end=$(( $(date +%s) + " +
                      std::to_string(rc_limit_s) + " )); while [ $ok -lt " +
                      std::to_string(want_cycles + 10) +
                      " ] && [ ! -e /tmp/rt-stop ] && [ $(date +%s) -lt $end ]; do i=$((i+1)); " +
                      o2("peer close " + std::string(kRouter1)) + " >/dev/null 2>&1; if " +
                      o2("ping " + std::string(kRouter1) + " --timeout 3") +
                      " >/dev/null 2>&1; then ok=$((ok+1)); fi; echo \"$i $ok\" >> " + rc_log +
                      "; done; touch " + rc_log + ".done) >/dev/null 2>&1 &",
                  30)
                  .ok());
  auto t_pause = std::chrono::steady_clock::now();
  int64_t cycles = 0;
  bool loop_done = false;
  const std::string poll_cmd = "tail -n1 " + rc_log + " 2>/dev/null; test -e " + rc_log + ".done";
  while (!loop_done && since(t_pause) < rc_limit_s + 30) {
    auto ts = std::chrono::steady_clock::now();
    RunResult p = run(server, poll_cmd, 30);
    loop_done = p.ok();
    long long i = 0, ok = 0;
    if (std::sscanf(p.out.c_str(), "%lld %lld", &i, &ok) == 2) cycles = i;
    sample(cycles);
    if ((HasFailure() && bad_samples > 5) || !router.alive()) break;
    double left = 1.0 - since(ts);
    if (left > 0) usleep(static_cast<useconds_t>(left * 1e6));
  }
  const double paused_s = since(t_pause);
  RunResult rc = run(server, "tail -n1 " + rc_log, 30);
  long long cyc = 0, cyc_ok = 0;
  std::sscanf(rc.out.c_str(), "%lld %lld", &cyc, &cyc_ok);
  Record srv_peer1 = peer(server, kServer, kRouter1);
  Record rtr_peer1 = peer(router, kRouter1, kServer);
  const int64_t srv_reconnects = need(srv_peer1, "connects") - srv_connects0;
  const int64_t rtr_reconnects = need(rtr_peer1, "connects") - rtr_connects0;
  EXPECT_GE(cyc_ok, want_cycles) << "reconnect cycles (close + ping) that completed";
  EXPECT_GE(srv_reconnects + rtr_reconnects, want_cycles)
      << "connects counted by the server and the router:\n"
      << dump_record(srv_peer1) << dump_record(rtr_peer1);
  EXPECT_TRUE(down_seen) << "the router never marked the paused compute node down";

  // --- the compute node comes back ---
  paused.resume();
  auto t_resume = std::chrono::steady_clock::now();
  EXPECT_TRUE(run(router, "tc qdisc del dev eth0 root", 30).ok());
  const double recover_bound = (kHealthProbeS + tmo + 15.0) * o2tb::timeout_scale();
  double recovered = -1;
  while (since(t_resume) < recover_bound && router.alive()) {
    if (o2ctl(server, "ping " + std::string(kCompute) + " --timeout 5", 30).ok()) {
      recovered = since(t_resume);
      break;
    }
    sample(cyc);
  }
  EXPECT_GE(recovered, 0) << "no ping server -> compute got through within " << recover_bound
                          << " s of the resume";
  if (recovered >= 0) expect_ping_ok(compute, kServer, "--timeout 20");

  // stop the traffic, let it drain
  run(server, "touch /tmp/rt-stop", 30);
  run(server,
      "for i in $(seq 120); do [ -e /tmp/rt-ping.log.done ] && [ -e /tmp/rt-brw1k.log.done ] && "
      "[ -e /tmp/rt-brw64k.log.done ] && break; sleep 0.5; done; rm -f /tmp/rt-stop",
      120);
  RunResult tot = run(server,
                      "cat /tmp/rt-ping.log /tmp/rt-brw1k.log /tmp/rt-brw64k.log | awk "
                      "'/^ *rpcs:/ {r+=$2} /^ *total:/ {e+=$2} END {print r+0, e+0}'",
                      30);
  long long rpcs = 0, rpc_errors = 0;
  std::sscanf(tot.out.c_str(), "%lld %lld", &rpcs, &rpc_errors);

  // the router returns to idle: few connections, nothing waiting, pools full
  Row last;
  bool idle = false;
  auto t_idle = std::chrono::steady_clock::now();
  while (since(t_idle) < 60 * o2tb::timeout_scale() && router.alive()) {
    Row r;
    std::string w;
    if (parse_row(run(router, router_sample_cmd(), 60), r, w)) {
      r.cycles = cyc;
      check(r);
      last = r;
      idle = r.closing == 0 && r.waiting == 0 && r.held_rx == 0 && r.tiny == kTinyBuffers &&
             r.small == kSmallBuffers && r.large == kLargeBuffers;
      if (idle) break;
    }
    usleep(1000 * 1000);
  }
  if (last.t == 0 && !rows.empty()) last = rows.back();  // no sample after the traffic
  EXPECT_TRUE(idle) << "the router did not return to idle within 60 s: last sample:\n"
                    << kCsvHeader << "\n"
                    << csv_row(last);
  EXPECT_LE(last.conns, kPeers * kMaxLive) << "steady connections";
  EXPECT_LE(last.qp, kPeers * kMaxLive) << "steady QPs";
  EXPECT_EQ(last.waiting, 0);
  EXPECT_EQ(last.held_rx, 0);
  const int64_t dropped =
      last.dropped_closed + last.dropped_down + last.dropped_timeout + last.dropped_error;
  EXPECT_GT(dropped, 0) << "nothing for the paused node was ever dropped by the router";

  figure("pause_s", fmt(paused_s));
  figure("reconnect_cycles", std::to_string(cyc));
  figure("reconnect_cycles_ok", std::to_string(cyc_ok));
  figure("server_connects_to_router", std::to_string(srv_reconnects));
  figure("router_connects_from_server", std::to_string(rtr_reconnects));
  figure("max_conns", std::to_string(worst.conns));
  figure("max_conns_closing", std::to_string(worst.closing));
  figure("max_qps", std::to_string(worst.qp));
  figure("slab_delta_kb", std::to_string(max_slab_delta));
  figure("vmalloc_delta_kb", std::to_string(max_vmalloc_delta));
  figure("memavailable_drop_kb", std::to_string(max_memavail_drop));
  figure("max_waiting", std::to_string(std::max(worst.waiting, worst.waiting_max)));
  figure("max_held_rx", std::to_string(worst.held_rx));
  figure("min_tx_credits_to_compute", std::to_string(worst.cmp_tx_min));
  figure("min_tx_credits_to_server", std::to_string(worst.srv_tx_min));
  figure("min_router_credits_server", std::to_string(worst.srv_rtr_min));
  figure("min_router_credits_compute", std::to_string(worst.cmp_rtr_min));
  figure("min_pool_credits_tiny_small_large", std::to_string(worst.tiny_min) + " " +
                                                  std::to_string(worst.small_min) + " " +
                                                  std::to_string(worst.large_min));
  figure("dropped_closed", std::to_string(last.dropped_closed));
  figure("dropped_down", std::to_string(last.dropped_down));
  figure("dropped_timeout", std::to_string(last.dropped_timeout));
  figure("dropped_error", std::to_string(last.dropped_error));
  figure("server_rpcs", std::to_string(rpcs) + " (" + std::to_string(rpc_errors) + " failed)");
  figure("recovered_after_resume_s", fmt(recovered));
  figure("samples", std::to_string(rows.size()));

  // The time series: all rows as CSV, ~15 evenly spaced ones as markdown.
  const std::string dir = results_dir();
  {
    std::ofstream csv(dir + "/cea-router.csv");
    csv << kCsvHeader << "\n";
    for (const auto& r : rows) csv << csv_row(r) << "\n";
  }
  std::ofstream md(dir + "/cea-router.md");
  md << "# Router under a dead compute node and a reconnecting server (ANCHORS.md failure 2)\n\n"
     << "Topology `three` (compute - router - server, QEMU TCG, " << transport()
     << "). The server floods the compute node through the router (selftest ping x16, brw "
        "write 1 KiB x8 and 64 KiB x4); the compute node is paused for "
     << fmt(paused_s) << " s while the server closes its connections to the router and "
     << "reconnects " << cyc << " times (" << cyc_ok << " reconnect pings answered; connects "
     << "counted: server " << srv_reconnects << ", router " << rtr_reconnects << ").\n\n"
     << "Module parameters: timeout=" << tmo << " peer_credits=" << kPeerCredits
     << " credits=" << kCredits << " peer_buffer_credits=" << kPeerBufferCredits
     << " tiny/small/large_router_buffers=" << kTinyBuffers << "/" << kSmallBuffers << "/"
     << kLargeBuffers << " router_timeout=" << router_timeout() << ".\n\n"
     << "| | field (Lustre router, a large site) | bound here | measured here |\n"
     << "|---|---|---|---|\n"
     << "| connections on the router | one kept per reconnect, ~3 MB each | <= " << conn_bound
     << " | " << worst.conns << " (" << worst.closing << " closing) |\n"
     << "| RC QPs on the router | one per kept connection | <= " << conn_bound << " | " << worst.qp
     << " |\n"
     << "| tx credits min towards the dead node | -4500 | >= " << tx_min_bound << " | "
     << worst.cmp_tx_min << " |\n"
     << "| router credits min of the server | -17000 | >= " << rtr_min_bound << " | "
     << worst.srv_rtr_min << " |\n"
     << "| messages waiting (max) | unbounded, no timeout | <= " << waiting_bound << " | "
     << std::max(worst.waiting, worst.waiting_max) << " |\n"
     << "| slab growth | ~3 MB x reconnects (~300 MB for 100) | < " << slab_bound_kb / 1024
     << " MiB | " << max_slab_delta << " kB |\n"
     << "| dropped closed / down / timeout / error | - | - | " << last.dropped_closed << " / "
     << last.dropped_down << " / " << last.dropped_timeout << " / " << last.dropped_error << " |\n"
     << "| ping through after resume | - | < " << fmt(recover_bound, 0) << " s | " << fmt(recovered)
     << " s |\n\n"
     << "Time series on the router (" << rows.size() << " samples, all in cea-router.csv; "
     << "t from the sample before the pause):\n\n"
     << "| t s | cycles | conns | closing | RC QPs | slab kB | waiting | held rx | "
        "pools tiny/small/large | tx cr now/min (compute) | rtr cr now/min (server) | "
        "compute health | dropped closed/down/timeout |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  const size_t n = rows.size(), want = std::min<size_t>(15, n);
  for (size_t k = 0; k < want; k++) {
    const Row& r = rows[want > 1 ? k * (n - 1) / (want - 1) : 0];
    md << "| " << fmt(r.t) << " | " << r.cycles << " | " << r.conns << " | " << r.closing << " | "
       << r.qp << " | " << r.slab_kb << " | " << r.waiting << " | " << r.held_rx << " | " << r.tiny
       << "/" << r.small << "/" << r.large << " | " << r.cmp_tx << "/" << r.cmp_tx_min << " | "
       << r.srv_rtr << "/" << r.srv_rtr_min << " | " << r.cmp_health << " | " << r.dropped_closed
       << "/" << r.dropped_down << "/" << r.dropped_timeout << " |\n";
  }
  printf("[ results  ] %s/cea-router.md, cea-router.csv\n", dir.c_str());
}

// --- 4 -------------------------------------------------------------------------

// 1 MiB writes from the server: to the compute node through the router
// (store-and-forward through a large buffer) and to the router itself,
// same boot, same settings.  A figure, not a pass/fail timing.
TEST_F(RoutingThreeGuests, RoutedBrwWriteBandwidthAgainstDirect) {
  Guest& server = guest("server");
  ASSERT_TRUE(load_three());
  expect_ping_ok(server, kCompute, "--timeout 20");
  expect_ping_ok(server, kRouter1, "--timeout 20");
  const int seconds = 5;
  auto bw = [&](const char* to) {
    Selftest s = selftest(server,
                          "brw write " + std::string(to) + " --from " + kServer +
                              " --size 1M --concurrency 4 --duration " + std::to_string(seconds) +
                              " --timeout 60000",
                          seconds + 300.0);
    EXPECT_EQ(s.run.status, 0) << s.text();
    EXPECT_EQ(s.at("errors.total"), 0) << s.text();
    EXPECT_GT(s.at("rpcs"), 0) << s.text();
    return s;
  };
  Selftest direct = bw(kRouter1);
  Selftest routed = bw(kCompute);
  const double d = direct.at("mib_per_s", 0), r = routed.at("mib_per_s", 0);
  const double ratio = d > 0 ? r / d : 0;
  figure("brw_write_1m_direct_mib_per_s", fmt(d));
  figure("brw_write_1m_routed_mib_per_s", fmt(r));
  figure("brw_write_1m_routed_over_direct", fmt(ratio, 2));
  const std::string dir = results_dir();
  std::ofstream md(dir + "/brw.md");
  md << "# brw write 1 MiB: routed vs direct\n\n"
     << "Topology `three` under QEMU TCG (" << transport()
     << "), one boot; `o2ctl selftest brw write --size 1M --concurrency 4 --duration " << seconds
     << "` from the server (" << kServer << "). Only ratios mean anything under TCG.\n\n"
     << "| path | MiB/s | RPCs | errors |\n|---|---|---|---|\n"
     << "| server -> router (direct) | " << fmt(d) << " | " << fmt(direct.at("rpcs"), 0) << " | "
     << fmt(direct.at("errors.total"), 0) << " |\n"
     << "| server -> router -> compute (routed) | " << fmt(r) << " | " << fmt(routed.at("rpcs"), 0)
     << " | " << fmt(routed.at("errors.total"), 0) << " |\n\n"
     << "Routed / direct: " << fmt(ratio, 2) << "\n";
  printf("[ results  ] %s/brw.md\n", dir.c_str());
}

// --- 5 -------------------------------------------------------------------------

// Messages short of router credits wait, but not without end: with the
// router's Send completions towards the compute node held back longer than
// router_timeout (a send-delay fault), the forwarded messages keep their
// router buffers and the next ones wait; those still waiting at
// router_timeout are dropped (dropped timeout), a waiting bulk PUT is
// refused to its sender with a PUT_NAK instead of left to expire there, and
// once the fault is gone the router is idle and traffic flows.
TEST_F(RoutingThreeGuests, MessagesWaitingPastRouterTimeoutAreDropped) {
  Guest& router = guest("router");
  Guest& server = guest("server");
  const int hold_ms = (router_timeout() + 3) * 1000;
  if (hold_ms > 10000) {
    GTEST_SKIP() << "router_timeout " << router_timeout()
                 << " s: a send-delay (at most 10 s) cannot outlast it on this kernel";
  }
  ASSERT_TRUE(load_three());
  expect_ping_ok(server, kCompute, "--timeout 20");
  RoutingView before = routing(router);
  const int64_t timeout0 = field_int(before.top, "dropped timeout");
  RunResult f = o2ctl(router,
                      "fault add send-delay --peer " + std::string(kCompute) + " --delay " +
                          std::to_string(hold_ms),
                      30);
  ASSERT_TRUE(f.ok()) << f.out;

  // more pings in flight than the server's router credits (8): the 9th and
  // later wait behind Send completions held hold_ms
  auto t0 = std::chrono::steady_clock::now();
  Selftest ping =
      selftest(server, "ping " + std::string(kCompute) + " --concurrency 24 --count 24 --timeout " +
                           std::to_string(hold_ms + 20000));
  RoutingView mid = routing(router);
  const int64_t ping_timeouts = field_int(mid.top, "dropped timeout") - timeout0;
  EXPECT_GT(field_int(mid.top, "waiting max"), 0) << mid.text();
  EXPECT_GT(ping_timeouts, 0) << "no message waited past router_timeout:\n" << mid.text();
  EXPECT_GT(ping.at("errors.total"), 0) << ping.text();
  EXPECT_LE(field_int(mid.top, "waiting max"), 2 * kPeerBufferCredits + 2 * kPeerCredits)
      << mid.text();

  // 1 MiB PUTs: more than the large buffers (4) at once; the ones that
  // wait past router_timeout are NAKed, so their RPCs fail long before
  // their own timeout
  Selftest brw = selftest(server, "brw write " + std::string(kCompute) +
                                      " --size 1M --concurrency 8 --count 8 --timeout 60000");
  RoutingView after = routing(router);
  EXPECT_GT(field_int(after.top, "dropped timeout") - timeout0, ping_timeouts)
      << "no PUT waited past router_timeout:\n"
      << after.text();
  EXPECT_GT(brw.at("errors.total"), 0) << brw.text();
  EXPECT_LT(brw.at("latency_us.max", 1e12), 60000.0 * 1000) << brw.text();
  figure("router_timeout_drops_ping", std::to_string(ping_timeouts));
  figure("router_timeout_drops_total",
         std::to_string(field_int(after.top, "dropped timeout") - timeout0));
  figure("router_timeout_test_seconds", fmt(since(t0)));

  ASSERT_TRUE(o2ctl(router, "fault del all", 30).ok());
  RoutingView idle = wait_router_idle(router, 30 + hold_ms / 1000.0);
  EXPECT_TRUE(pools_idle(idle)) << idle.text();
  EXPECT_EQ(field_int(idle.top, "waiting"), 0) << idle.text();
  EXPECT_EQ(field_int(idle.top, "held rx"), 0) << idle.text();
  expect_ping_ok(server, kCompute, "--timeout 20");
  Selftest ok =
      selftest(server, "brw write " + std::string(kCompute) +
                           " --size 1M --check --concurrency 2 --count 4 --timeout 60000");
  EXPECT_EQ(ok.at("errors.total"), 0) << ok.text();
}

// --- a routed destination with two rails ------------------------------------
//
// compute (o2ib0) -> router (o2ib0; o2ib1 on eth1 and eth2) -> server
// (o2ib1 on eth0 and eth1: two NIDs, Multi-Rail).  On the last hop a router
// sends to whichever NID of a Multi-Rail destination its selection picks
// and rewrites the header's dest_nid to it (LNet's lnet_handle_send());
// the destination answers from that NID, and the compute node takes the
// answer of its routed request from it.

constexpr const char* kServerA = "192.168.2.1@o2ib1";
constexpr const char* kServerB = "192.168.3.1@o2ib1";
constexpr const char* kRouterA = "192.168.2.2@o2ib1";  // the router's NI toward kServerA
constexpr const char* kRouterB = "192.168.3.2@o2ib1";  // and toward kServerB

O2_SUITE_CLASS(
    RoutingToMultiRail, "router-rails",
    void TearDown() override {
      if (bed().tb() != nullptr) {
        for (const char* n : {"compute", "router", "server"}) {
          if (guest(n).alive()) expect_unload_frees_rdma(guest(n));
        }
      }
      TopologyTest::TearDown();
    }

    // Messages sent by each o2ib1 NI of the router (net show -v), by NID:
    // what it forwards to the server leaves from the NI toward the NID
    // it picked.
    std::map<std::string, int64_t>
        router_sends() {
          std::map<std::string, int64_t> out;
          for (const auto& ni : parse_net_nis(o2ctl(guest("router"), "net show -v").out)) {
            if (field(ni, "net type") == "o2ib1") {
              out[field(ni, "nid")] = need(ni, "statistics.send_count");
            }
          }
          return out;
        }

    // `o2ctl selftest ARGS -y` on the compute node, parsed; no RPC may fail.
    Selftest clean_selftest(const std::string& args) {
      Selftest st = parse_selftest(o2ctl(guest("compute"), "selftest " + args + " -y", 120));
      EXPECT_EQ(st.error, "") << args << "\n" << st.text();
      EXPECT_EQ(st.at("errors.total"), 0) << args << "\n" << st.text();
      EXPECT_EQ(st.at("errors.verify", 0), 0) << args << "\n" << st.text();  // (brw only)
      return st;
    });

// The router learns the server's two NIDs (discovery) and from then on
// spreads what it forwards to the server over both of its rails: checked
// 1 MiB writes (PUTs through the router's buffers), checked 64 KiB reads
// (a GET whose REPLY comes back as a PUT) and pings (an IMMEDIATE GET and
// its REPLY) all complete, and the router sends a fair share toward each
// server NID.
// Before the router knows the server is Multi-Rail, everything goes to
// the NID named.
TEST_F(RoutingToMultiRail, TheRouterSpreadsForwardedTrafficOverTheServersRails) {
  Guest& router = guest("router");
  ASSERT_TRUE(insmod_with(guest("compute"), kComputeNet,
                          sh_quote(std::string("routes=\"") + kComputeRoutes + "\""))
                  .ok())
      << bed().test_log();
  ASSERT_TRUE(insmod_with(router, "o2ib0(eth0) o2ib1(eth1,eth2)", "forwarding=enabled").ok())
      << bed().test_log();
  ASSERT_TRUE(insmod_with(guest("server"), "o2ib1(eth0,eth1)",
                          sh_quote(std::string("routes=\"") + kServerRoutes + "\""))
                  .ok())
      << bed().test_log();
  const std::string to = kServerA;

  // not known as Multi-Rail: the NID named
  auto b0 = router_sends();
  clean_selftest("brw write " + to + " --size 1M --check --count 8");
  auto b1 = router_sends();
  EXPECT_GE(b1[kRouterA] - b0[kRouterA], 8) << "too little went to the NID named";
  EXPECT_EQ(b1[kRouterB] - b0[kRouterB], 0)
      << "a destination the router does not know as Multi-Rail got messages on another NID";

  RunResult d = o2ctl(router, std::string("discover ") + kServerA + " --timeout 20", 60);
  ASSERT_TRUE(d.ok()) << d.out;
  auto peers = parse_yaml_list(d.out, "discover");
  ASSERT_EQ(peers.size(), 1U) << d.out;
  ASSERT_EQ(field(peers[0], "Multi-Rail"), "true") << d.out;
  ASSERT_EQ(field(peers[0], "peer ni.1.nid"), kServerB) << d.out;
  // the ping infos say who forwards (LNet's RTE_DISABLED when not)
  EXPECT_EQ(field(peers[0], "routing"), "false") << d.out;
  RunResult cd = o2ctl(guest("compute"), std::string("discover ") + kRouter0 + " --timeout 20", 60);
  ASSERT_TRUE(cd.ok()) << cd.out;
  auto gw = parse_yaml_list(cd.out, "discover");
  ASSERT_EQ(gw.size(), 1U) << cd.out;
  EXPECT_EQ(field(gw[0], "routing"), "true") << cd.out;

  Selftest w =
      clean_selftest("brw write " + to + " --size 1M --check --concurrency 4 --duration 5");
  clean_selftest("brw read " + to + " --size 64K --check --concurrency 4 --duration 3");
  Selftest p = clean_selftest("ping " + to + " --concurrency 4 --duration 3");
  auto b2 = router_sends();
  const int64_t a = b2[kRouterA] - b1[kRouterA];
  const int64_t b = b2[kRouterB] - b1[kRouterB];
  figure("routed_to_multi_rail_router_sends_per_rail", std::to_string(a) + " " + std::to_string(b));
  figure("routed_to_multi_rail_write_mib_per_s", std::to_string(w.at("mib_per_s")));
  EXPECT_GT(p.at("rpcs"), 0) << p.text();
  EXPECT_GT(a * 10, (a + b) * 3) << "the router sent " << a << " toward " << kServerA << ", " << b
                                 << " toward " << kServerB;
  EXPECT_GT(b * 10, (a + b) * 3) << "the router sent " << a << " toward " << kServerA << ", " << b
                                 << " toward " << kServerB;
  // the router's selection took both NIDs in turns
  RunResult pl = o2ctl(router, std::string("peer list ") + kServerA);
  auto lp = parse_yaml_list(pl.out, "peer");
  ASSERT_EQ(lp.size(), 1U) << pl.out;
  EXPECT_GT(field_int(lp[0], "peer ni.0.selected"), 0) << pl.out;
  EXPECT_GT(field_int(lp[0], "peer ni.1.selected"), 0) << pl.out;
}

}  // namespace
}  // namespace o2it
