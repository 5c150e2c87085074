// Every YAML output of o2ctl, through a real YAML parser (yaml-cpp): net show
// [-v], peer show [-v], conn show, route show, routing show, fault list,
// stats [-v|NID], version, empty lists included, on a fake kernel with awkward content (NIDs,
// negative numbers, zero and 2^64-1 counters, 31-character names, names that read as YAML booleans
// or numbers).  Also the -t tables: a header and one aligned row per entry.
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
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/backend.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2ctl_yaml::Kind;
using o2ctl_yaml::Shape;
using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_conn;
using o2lnd::testing::make_ni;
using o2lnd::testing::make_peer;
using o2lnd::testing::make_route;
using o2lnd::testing::make_routing;

constexpr std::uint64_t kLocal0 = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0
constexpr std::uint64_t kPeer0 = 0x00050000c0a80102ULL;   // 192.168.1.2@o2ib0
constexpr std::uint64_t kLocal1 = 0x0005ffff0a000001ULL;  // 10.0.0.1@o2ib65535
constexpr std::uint64_t kPeer1 = 0x0005ffffffffffffULL;   // 255.255.255.255@o2ib65535
constexpr std::uint64_t kMax = UINT64_MAX;
const std::string kLongIf = "an-interface-name-of-31-chars-x";  // fills 31 of 32 bytes

class YamlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(kLongIf.size(), 31U);
    auto lo = make_ni(O2LND_LO_NID, "lo", "");
    auto ni0 = make_ni(kLocal0, "o2ib0", "eth0", "rxe0");
    ni0.send_count = 3;
    ni0.recv_count = 4;
    ni0.send_bytes = kMax;  // every digit of a u64
    ni0.recv_bytes = 1;
    ni0.error_count = 2;
    ni0.incarnation = 1700000000123456789ULL;
    ni0.npeers = 1;
    ni0.nconns = 2;
    ni0.nconns_established = 1;
    ni0.tx_credits = -3;  // three messages wait for an NI credit
    ni0.tx_credits_min = -7;
    ni0.tx_queued = 3;
    ni0.credits = 256;
    ni0.ntx = 512;
    ni0.tx_live = 259;
    ni0.peer_credits_hiw = 4;
    ni0.concurrent_sends = 8;
    ni0.keepalive_s = 100;
    ni0.tx_timeouts = kMax;
    ni0.tx_no_credit_drops = 5;
    ni0.keepalives = 6;
    ni0.early_replies = 7;
    // A name that reads as a YAML boolean, one that reads as a number.
    auto ni1 = make_ni(kLocal1, "o2ib65535", kLongIf, "yes");
    auto ni2 = make_ni(0x00050001c0a80201ULL, "o2ib1", "1234", "");
    ni2.status = O2LND_NI_STATUS_DOWN;
    kernel_->nis = {lo, ni0, ni1, ni2};

    auto p0 = make_peer(kPeer0, O2LND_PEER_ESTABLISHED);
    p0.conns[O2LND_CONN_ESTABLISHED] = 1;
    p0.conns[O2LND_CONN_ZOMBIE] = 1;
    p0.send_count = 10;
    p0.recv_count = 11;
    p0.drop_count = 1;
    p0.error_count = 0;
    p0.send_bytes = 4096;
    p0.recv_bytes = kMax;
    p0.incarnation = 1700000000000000001ULL;
    p0.tx_credits = 6;
    p0.tx_credits_max = 8;
    p0.tx_credits_min = -2;
    p0.alive_ms = 15;
    p0.rtr_credits = -3;  // three of its messages wait for a router buffer
    p0.rtr_credits_max = 8;
    p0.rtr_credits_min = -5;
    p0.rtr_queued = 3;
    auto p1 = make_peer(kPeer1, O2LND_PEER_BACKOFF);
    p1.last_error = -110;
    p1.last_reject = O2LND_REJECT_CONN_STALE;
    p1.next_retry_ms = 999;
    p1.backoff_ms = 1000;
    p1.error_count = 7;
    p1.tx_credits = -1;
    p1.tx_credits_max = 8;
    p1.tx_credits_min = -1;
    p1.credit_queued = 1;
    p1.health = O2LND_HEALTH_DOWN;
    p1.failures = 3;
    p1.downs = 1;
    p1.alive_ms = ~0U;  // never heard from
    p1.tx_timeouts = 3;
    kernel_->peers[1] = {p0};
    kernel_->peers[2] = {p1};

    auto c0 = make_conn(kPeer0, O2LND_CONN_ESTABLISHED);
    c0.active = 1;
    c0.age_ms = 12345;
    c0.queue_depth = 8;
    c0.max_frags = 256;
    c0.credits = 8;
    c0.qp_num = 17;
    c0.nrx = 18;
    c0.concurrent_sends = 8;
    c0.sq_size = 24;
    c0.sq_free = 24;
    c0.idle_ms = 40;
    c0.keepalives = 2;
    auto c1 = make_conn(kPeer0, O2LND_CONN_ZOMBIE);
    c1.credits = -1;
    c1.outstanding = -3;
    c1.error = -104;
    c1.reserved_credits = -1;
    c1.noops_posted = 2;
    c1.noops_queued = 1;
    auto c2 = make_conn(kPeer1, O2LND_CONN_ACTIVE_CONNECT);
    c2.phase = O2LND_PHASE_ROUTE;
    c2.active = 1;
    c2.deadline_ms = 5000;
    kernel_->conns[1] = {c0, c1};
    kernel_->conns[2] = {c2};

    // Routes to o2ib1 (gateway up) and o2ib65535 (gateway down, far, low
    // priority, every digit of a u64 sent).
    auto r0 = make_route(0x00050001U, kPeer0);
    r0.sent = 12;
    auto r1 = make_route(0x0005ffffU, kPeer1, O2LND_HEALTH_DOWN);
    r1.hops = 255;
    r1.priority = 0xffffffffU;
    r1.sent = kMax;
    r1.dropped = 4;
    kernel_->routes = {r0, r1};
    // A router under load: the large pool overcommitted.
    auto rt = make_routing(true);
    rt.waiting = 2;
    rt.waiting_max = 6;
    rt.held_rx = 2;
    rt.pools[O2LND_RTR_LARGE].credits = -2;
    rt.pools[O2LND_RTR_LARGE].min_credits = -4;
    rt.pools[O2LND_RTR_SMALL].taken = kMax;
    rt.forwarded_bytes = kMax;
    rt.dropped_timeout = 1;
    kernel_->routing = rt;
  }

  void add_faults() {
    for (const std::vector<std::string_view>& args : {
             std::vector<std::string_view>{"fault", "add", "reject", "conn_stale", "--peer",
                                           "192.168.1.2@o2ib0", "--count", "3"},
             std::vector<std::string_view>{"fault", "add", "cm-delay", "connect_request", "--delay",
                                           "100", "--prob", "0.5"},
             std::vector<std::string_view>{"fault", "add", "send-delay", "--delay", "5", "--local",
                                           "10.0.0.1@o2ib65535", "--prob", "0.000001"},
         }) {
      ASSERT_EQ(o2ctl(args), kExitOk) << err_.str();
    }
    kernel_->faults[0].fired = 2;
  }

  // Runs o2ctl; out() is its stdout.
  int o2ctl(std::vector<std::string_view> args) {
    out_.str("");
    err_.str("");
    Env env{out_, err_,
            [this](const std::string&) -> o2lnd::Result<std::unique_ptr<o2lnd::Backend>> {
              return std::unique_ptr<o2lnd::Backend>(std::make_unique<FakeBackend>(kernel_));
            }};
    env.tool_version = "0.1.0";
    return run(args, env);
  }
  // o2ctl's YAML for `args`; fails the test when it does not exit 0.
  std::string yaml(std::vector<std::string_view> args) {
    EXPECT_EQ(o2ctl(std::move(args)), kExitOk) << err_.str();
    return out_.str();
  }

  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
  std::ostringstream out_;
  std::ostringstream err_;
};

#define EXPECT_SHAPE(shape, text) EXPECT_TRUE((shape).check.ok()) << (shape).check.str() << (text)

// ---- the parser and the checker themselves ----------------------------------

TEST(YamlSchema, ResolvesScalarsLikeTheCoreSchema) {
  auto doc = YAML::Load(
      "a: 12\nb: -3\nc: 0.5\nd: yes\ne: \"yes\"\nf: 192.168.1.2@o2ib0\ng: ~\nh: \"12\"\ni: on\n"
      "j: 18446744073709551615\nk: 0@lo\n");
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["a"]), Kind::kInt);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["b"]), Kind::kInt);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["c"]), Kind::kNumber);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["d"]), Kind::kBool);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["e"]), Kind::kStr);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["f"]), Kind::kStr);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["g"]), Kind::kNull);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["h"]), Kind::kStr);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["i"]), Kind::kBool);
  EXPECT_TRUE(o2ctl_yaml::is_kind(doc["j"], Kind::kInt));
  EXPECT_TRUE(o2ctl_yaml::is_kind(doc["f"], Kind::kNid));
  EXPECT_TRUE(o2ctl_yaml::is_kind(doc["k"], Kind::kNid));
  EXPECT_FALSE(o2ctl_yaml::is_kind(doc["e"], Kind::kNid));
  EXPECT_FALSE(o2ctl_yaml::is_kind(doc["h"], Kind::kInt));
}

TEST(YamlSchema, ReportsMissingUnexpectedMistypedAndUnparsable) {
  auto s = o2ctl_yaml::conn_show("conn:\n    - peer: 192.168.1.2@o2ib0\n      active: 1\n");
  EXPECT_FALSE(s.check.ok());
  EXPECT_NE(s.check.str().find("'active' is not a boolean"), std::string::npos) << s.check.str();
  EXPECT_NE(s.check.str().find("no 'local nid'"), std::string::npos) << s.check.str();
  s = o2ctl_yaml::fault_list("fault: []\nextra: 1\n");
  EXPECT_NE(s.check.str().find("unexpected key 'extra'"), std::string::npos) << s.check.str();
  s = o2ctl_yaml::peer_show("peer:\n  - nid: [\n", false);
  EXPECT_NE(s.check.str().find("does not parse"), std::string::npos) << s.check.str();
}

// ---- every YAML output --------------------------------------------------------

TEST_F(YamlTest, NetShow) {
  std::string y = yaml({"net", "show"});
  Shape s = o2ctl_yaml::net_show(y, false);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 4U) << y;  // lo, o2ib0, o2ib65535, o2ib1
  EXPECT_EQ(s.nested, 4U) << y;
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["net"][2]["local NI(s)"][0]["interfaces"]["0"].as<std::string>(), kLongIf);
  EXPECT_EQ(doc["net"][3]["local NI(s)"][0]["interfaces"]["0"].as<std::string>(), "1234");
  EXPECT_EQ(doc["net"][3]["local NI(s)"][0]["status"].as<std::string>(), "down");
  EXPECT_FALSE(doc["net"][0]["local NI(s)"][0]["interfaces"]) << "0@lo has no interface";
}

TEST_F(YamlTest, NetShowVerbose) {
  std::string y = yaml({"net", "show", "-v"});
  Shape s = o2ctl_yaml::net_show(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.nested, 4U) << y;
  auto ni0 = YAML::Load(y)["net"][1]["local NI(s)"][0];
  EXPECT_EQ(ni0["statistics"]["send_bytes"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(ni0["statistics"]["error_count"].as<std::uint64_t>(), 2U);
  EXPECT_EQ(ni0["lnd details"]["incarnation"].as<std::uint64_t>(), 1700000000123456789ULL);
  EXPECT_EQ(ni0["statistics"]["tx_timeouts"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(ni0["statistics"]["queue_full_drops"].as<int>(), 5);
  EXPECT_EQ(ni0["statistics"]["keepalives"].as<int>(), 6);
  EXPECT_EQ(ni0["statistics"]["early_replies"].as<int>(), 7);
  EXPECT_EQ(ni0["tunables"]["peercredits_hiw"].as<int>(), 4);
  EXPECT_EQ(ni0["tunables"]["concurrent_sends"].as<int>(), 8);
  EXPECT_EQ(ni0["tunables"]["ntx"].as<int>(), 512);
  EXPECT_EQ(ni0["tunables"]["keepalive"].as<int>(), 100);
  EXPECT_EQ(ni0["tx_credits"]["max"].as<int>(), 256);
  EXPECT_EQ(ni0["tx_credits"]["available"].as<int>(), -3);
  EXPECT_EQ(ni0["tx_credits"]["min"].as<int>(), -7);
  EXPECT_EQ(ni0["tx_credits"]["queued"].as<int>(), 3);
  EXPECT_EQ(ni0["lnd details"]["tx_live"].as<int>(), 259);
  auto ni1 = YAML::Load(y)["net"][2]["local NI(s)"][0];
  EXPECT_EQ(ni1["lnd details"]["rdma device"].as<std::string>(), "yes");
  EXPECT_EQ(o2ctl_yaml::node_kind(ni1["lnd details"]["rdma device"]), Kind::kStr);
}

TEST_F(YamlTest, NetShowOfOneNetAndOfNone) {
  std::string y = yaml({"net", "show", "--net", "o2ib65535", "-v"});
  Shape s = o2ctl_yaml::net_show(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.nested, 1U) << y;
  kernel_->nis.clear();
  for (bool v : {false, true}) {
    y = yaml(v ? std::vector<std::string_view>{"net", "show", "-v"}
               : std::vector<std::string_view>{"net", "show"});
    s = o2ctl_yaml::net_show(y, v);
    EXPECT_SHAPE(s, y);
    EXPECT_EQ(s.entries, 0U) << y;
  }
}

TEST_F(YamlTest, PeerShowAndVerbose) {
  for (bool v : {false, true}) {
    std::string y = yaml(v ? std::vector<std::string_view>{"peer", "show", "-v"}
                           : std::vector<std::string_view>{"peer", "show"});
    Shape s = o2ctl_yaml::peer_show(y, v);
    EXPECT_SHAPE(s, y);
    EXPECT_EQ(s.entries, 2U) << y;
    auto doc = YAML::Load(y);
    EXPECT_EQ(doc["peer"][1]["nid"].as<std::string>(), "255.255.255.255@o2ib65535");
    EXPECT_EQ(doc["peer"][1]["local nid"].as<std::string>(), "10.0.0.1@o2ib65535");
    EXPECT_EQ(doc["peer"][0]["conns zombie"].as<int>(), 1);
    EXPECT_EQ(doc["peer"][0]["tx credits"].as<int>(), 6);
    EXPECT_EQ(doc["peer"][0]["tx credits max"].as<int>(), 8);
    EXPECT_EQ(doc["peer"][0]["tx credits min"].as<int>(), -2);
    EXPECT_EQ(doc["peer"][0]["health"].as<std::string>(), "up");
    EXPECT_EQ(doc["peer"][1]["tx credits"].as<int>(), -1);
    EXPECT_EQ(doc["peer"][1]["credit queued"].as<int>(), 1);
    EXPECT_EQ(doc["peer"][1]["health"].as<std::string>(), "down");
    if (v) {
      EXPECT_EQ(doc["peer"][0]["alive ms"].as<int>(), 15);
      EXPECT_EQ(doc["peer"][1]["alive ms"].as<std::string>(), "never");
      EXPECT_EQ(o2ctl_yaml::node_kind(doc["peer"][1]["alive ms"]), Kind::kStr);
      EXPECT_EQ(doc["peer"][1]["failures"].as<int>(), 3);
      EXPECT_EQ(doc["peer"][1]["downs"].as<int>(), 1);
      EXPECT_EQ(doc["peer"][1]["tx timeouts"].as<int>(), 3);
      EXPECT_EQ(doc["peer"][1]["last error"].as<int>(), -110);
      EXPECT_EQ(doc["peer"][1]["last reject"].as<std::string>(), "conn_stale");
      EXPECT_EQ(doc["peer"][0]["last reject"].as<std::string>(), "none");
    }
  }
}

TEST_F(YamlTest, PeerShowEmptyUnknownNidAndNoPeers) {
  std::string y = yaml({"peer", "show", "10.9.9.9@o2ib0", "-v"});
  Shape s = o2ctl_yaml::peer_show(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 0U) << y;
  kernel_->peers.clear();
  y = yaml({"peer", "show"});
  s = o2ctl_yaml::peer_show(y, false);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 0U) << y;
}

TEST_F(YamlTest, ConnShow) {
  std::string y = yaml({"conn", "show"});
  Shape s = o2ctl_yaml::conn_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 3U) << y;
  auto doc = YAML::Load(y);
  EXPECT_TRUE(doc["conn"][0]["active"].as<bool>());
  EXPECT_FALSE(doc["conn"][1]["active"].as<bool>());
  EXPECT_EQ(doc["conn"][1]["credits"].as<int>(), -1);
  EXPECT_EQ(doc["conn"][1]["outstanding"].as<int>(), -3);
  EXPECT_EQ(doc["conn"][1]["error"].as<int>(), -104);
  EXPECT_EQ(doc["conn"][2]["phase"].as<std::string>(), "route");
  EXPECT_EQ(doc["conn"][0]["concurrent sends"].as<int>(), 8);
  EXPECT_EQ(doc["conn"][0]["sq size"].as<int>(), 24);
  EXPECT_EQ(doc["conn"][0]["sq free"].as<int>(), 24);
  EXPECT_EQ(doc["conn"][0]["idle ms"].as<int>(), 40);
  EXPECT_EQ(doc["conn"][0]["keepalives"].as<int>(), 2);
  EXPECT_EQ(doc["conn"][1]["reserved credits"].as<int>(), -1);
  EXPECT_EQ(doc["conn"][1]["noops posted"].as<int>(), 2);
  EXPECT_EQ(doc["conn"][1]["noops queued"].as<int>(), 1);
  y = yaml({"conn", "show", "--peer", "10.9.9.9@o2ib0"});
  s = o2ctl_yaml::conn_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 0U) << y;
}

TEST_F(YamlTest, RouteShowParsesWithEveryKeyTyped) {
  std::string y = yaml({"route", "show"});
  Shape s = o2ctl_yaml::route_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 2U) << y;
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["route"][0]["net"].as<std::string>(), "o2ib1");
  EXPECT_EQ(doc["route"][0]["gateway"].as<std::string>(), "192.168.1.2@o2ib0");
  EXPECT_EQ(doc["route"][0]["hop"].as<int>(), 1);
  EXPECT_EQ(doc["route"][0]["priority"].as<int>(), 0);
  EXPECT_EQ(doc["route"][0]["state"].as<std::string>(), "up");
  EXPECT_EQ(doc["route"][0]["sent"].as<int>(), 12);
  EXPECT_EQ(doc["route"][0]["dropped"].as<int>(), 0);
  EXPECT_EQ(doc["route"][1]["net"].as<std::string>(), "o2ib65535");
  EXPECT_EQ(doc["route"][1]["gateway"].as<std::string>(), "255.255.255.255@o2ib65535");
  EXPECT_EQ(doc["route"][1]["hop"].as<int>(), 255);
  EXPECT_EQ(doc["route"][1]["priority"].as<std::uint32_t>(), 0xffffffffU);
  EXPECT_EQ(doc["route"][1]["state"].as<std::string>(), "down");
  EXPECT_EQ(doc["route"][1]["sent"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(doc["route"][1]["dropped"].as<int>(), 4);
}

TEST_F(YamlTest, RouteShowWithoutRoutesIsAnEmptySequence) {
  kernel_->routes.clear();
  std::string y = yaml({"route", "show"});
  Shape s = o2ctl_yaml::route_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 0U) << y;
  EXPECT_TRUE(YAML::Load(y)["route"].IsSequence()) << y;
}

TEST_F(YamlTest, RoutingShowParsesWithEveryKeyTypedAndThreePools) {
  std::string y = yaml({"routing", "show"});
  Shape s = o2ctl_yaml::routing_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 3U) << y;
  auto r = YAML::Load(y)["routing"];
  EXPECT_EQ(r["forwarding"].as<std::string>(), "enabled");
  EXPECT_EQ(o2ctl_yaml::node_kind(r["forwarding"]), Kind::kStr) << "not a YAML boolean";
  EXPECT_EQ(r["peer buffer credits"].as<int>(), 8);
  EXPECT_EQ(r["router timeout"].as<int>(), 50);
  EXPECT_EQ(r["waiting"].as<int>(), 2);
  EXPECT_EQ(r["waiting max"].as<int>(), 6);
  EXPECT_EQ(r["held rx"].as<int>(), 2);
  EXPECT_EQ(r["forwarded bytes"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(r["dropped timeout"].as<int>(), 1);
  EXPECT_EQ(r["buffers"][0]["pool"].as<std::string>(), "tiny");
  EXPECT_EQ(r["buffers"][0]["size"].as<int>(), 0);
  EXPECT_EQ(r["buffers"][1]["pool"].as<std::string>(), "small");
  EXPECT_EQ(r["buffers"][1]["taken"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(r["buffers"][2]["pool"].as<std::string>(), "large");
  EXPECT_EQ(r["buffers"][2]["size"].as<int>(), 1 << 20);
  EXPECT_EQ(r["buffers"][2]["credits"].as<int>(), -2);
  EXPECT_EQ(r["buffers"][2]["min credits"].as<int>(), -4);
  kernel_->routing = make_routing(false);
  y = yaml({"routing", "show"});
  s = o2ctl_yaml::routing_show(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(YAML::Load(y)["routing"]["forwarding"].as<std::string>(), "disabled");
}

TEST(YamlSchema, RouteAndRoutingCheckersCatchBadValues) {
  auto s = o2ctl_yaml::route_show(
      "route:\n    - net: nowhere\n      gateway: 192.168.1.2@o2ib0\n      hop: 0\n"
      "      priority: 0\n      state: sideways\n      sent: 0\n      dropped: 0\n");
  EXPECT_NE(s.check.str().find("'nowhere' is not a network name"), std::string::npos)
      << s.check.str();
  EXPECT_NE(s.check.str().find("'sideways' is not up or down"), std::string::npos) << s.check.str();
  EXPECT_NE(s.check.str().find("hop below 1"), std::string::npos) << s.check.str();
  std::string routing = format_routing_show(o2lnd::RoutingInfo{});
  EXPECT_TRUE(o2ctl_yaml::routing_show(routing).check.ok()) << routing;
  std::string bad = routing;
  bad.replace(bad.find("forwarding: disabled"), 20, "forwarding: yes");
  s = o2ctl_yaml::routing_show(bad);
  EXPECT_NE(s.check.str().find("'forwarding' is not a string"), std::string::npos) << s.check.str();
  bad = routing;
  bad.replace(bad.find("pool: small"), 11, "pool: huge");
  const std::string pool_credits = "\n          credits: 0";
  bad.replace(bad.find(pool_credits), pool_credits.size(),
              "\n          credits: 1");  // more than its 0 buffers
  s = o2ctl_yaml::routing_show(bad);
  EXPECT_NE(s.check.str().find("pool 'huge', expected small"), std::string::npos) << s.check.str();
  EXPECT_NE(s.check.str().find("buffers[0]: more credits than buffers"), std::string::npos)
      << s.check.str();
}

TEST_F(YamlTest, PeerShowHasTheRouterCredits) {
  std::string y = yaml({"peer", "show"});
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["peer"][0]["router credits"].as<int>(), -3);
  EXPECT_EQ(doc["peer"][0]["router credits max"].as<int>(), 8);
  EXPECT_EQ(doc["peer"][0]["router credits min"].as<int>(), -5);
  EXPECT_EQ(doc["peer"][0]["router queued"].as<int>(), 3);
  EXPECT_EQ(doc["peer"][1]["router credits"].as<int>(), 0);
}

TEST_F(YamlTest, FaultListEmptyAndFull) {
  std::string y = yaml({"fault", "list"});
  Shape s = o2ctl_yaml::fault_list(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 0U) << y;
  add_faults();
  y = yaml({"fault", "list"});
  s = o2ctl_yaml::fault_list(y);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 3U) << y;
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["fault"][0]["peer"].as<std::string>(), "192.168.1.2@o2ib0");
  EXPECT_EQ(doc["fault"][0]["local"].as<std::string>(), "any");
  EXPECT_EQ(doc["fault"][0]["fired"].as<int>(), 2);
  EXPECT_DOUBLE_EQ(doc["fault"][0]["probability"].as<double>(), 1.0);
  EXPECT_DOUBLE_EQ(doc["fault"][1]["probability"].as<double>(), 0.5);
  EXPECT_DOUBLE_EQ(doc["fault"][2]["probability"].as<double>(), 0.000001);
  EXPECT_EQ(doc["fault"][2]["arg"].as<std::string>(), "none");
}

TEST_F(YamlTest, StatsByNi) {
  std::string y = yaml({"stats"});
  Shape s = o2ctl_yaml::stats(y, false);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 4U) << y;
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["statistics"][0]["nid"].as<std::string>(), "0@lo");
  EXPECT_EQ(doc["statistics"][0]["send count"].as<int>(), 0);
  EXPECT_EQ(doc["statistics"][1]["send bytes"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(doc["statistics"][1]["error count"].as<int>(), 2);
  EXPECT_EQ(y.substr(0, y.find("    - nid: 192")),
            "statistics:\n"
            "    - nid: 0@lo\n"
            "      send count: 0\n"
            "      recv count: 0\n"
            "      drop count: 0\n"
            "      error count: 0\n"
            "      send bytes: 0\n"
            "      recv bytes: 0\n"
            "      tx timeouts: 0\n"
            "      queue full drops: 0\n"
            "      keepalives: 0\n"
            "      early replies: 0\n");
  EXPECT_EQ(doc["statistics"][1]["tx timeouts"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(doc["statistics"][1]["queue full drops"].as<int>(), 5);
  EXPECT_EQ(doc["statistics"][1]["keepalives"].as<int>(), 6);
  EXPECT_EQ(doc["statistics"][1]["early replies"].as<int>(), 7);
}

TEST_F(YamlTest, StatsVerboseListsEachNisPeers) {
  std::string y = yaml({"stats", "-v"});
  Shape s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 4U) << y;
  EXPECT_EQ(s.nested, 2U) << y;
  auto doc = YAML::Load(y);
  EXPECT_EQ(doc["statistics"][0]["peers"].size(), 0U) << "0@lo: 'peers: []'";
  auto p0 = doc["statistics"][1]["peers"][0];
  EXPECT_EQ(p0["nid"].as<std::string>(), "192.168.1.2@o2ib0");
  EXPECT_EQ(p0["send count"].as<int>(), 10);
  EXPECT_EQ(p0["recv count"].as<int>(), 11);
  EXPECT_EQ(p0["drop count"].as<int>(), 1);
  EXPECT_EQ(p0["error count"].as<int>(), 0);
  EXPECT_EQ(p0["send bytes"].as<int>(), 4096);
  EXPECT_EQ(p0["recv bytes"].as<std::uint64_t>(), kMax);
  EXPECT_EQ(doc["statistics"][2]["peers"][0]["error count"].as<int>(), 7);
  EXPECT_EQ(doc["statistics"][2]["peers"][0]["tx timeouts"].as<int>(), 3);
  EXPECT_FALSE(p0["keepalives"]) << "NI-only counters are not listed per peer";
  EXPECT_NE(y.find("    - nid: 192.168.1.1@o2ib0\n"
                   "      send count: 3\n"
                   "      recv count: 4\n"
                   "      drop count: 0\n"
                   "      error count: 2\n"
                   "      send bytes: 18446744073709551615\n"
                   "      recv bytes: 1\n"
                   "      tx timeouts: 18446744073709551615\n"
                   "      queue full drops: 5\n"
                   "      keepalives: 6\n"
                   "      early replies: 7\n"
                   "      peers:\n"
                   "          - nid: 192.168.1.2@o2ib0\n"
                   "            send count: 10\n"),
            std::string::npos)
      << y;
}

TEST_F(YamlTest, StatsOfOnePeerAndOfOneNet) {
  std::string y = yaml({"stats", "255.255.255.255@o2ib65535"});
  Shape s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 4U) << y;
  EXPECT_EQ(s.nested, 1U) << y;
  EXPECT_EQ(YAML::Load(y)["statistics"][2]["peers"][0]["nid"].as<std::string>(),
            "255.255.255.255@o2ib65535");
  y = yaml({"stats", "--net", "o2ib0", "-v"});
  s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.entries, 1U) << y;
  EXPECT_EQ(s.nested, 1U) << y;
  y = yaml({"stats", "10.9.9.9@o2ib0"});
  s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(s.nested, 0U) << y;
}

TEST_F(YamlTest, StatsEmptyAndErrors) {
  EXPECT_EQ(o2ctl({"stats", "--net", "o2ib9"}), kExitFailure);
  EXPECT_NE(err_.str().find("no local NI on network 'o2ib9'"), std::string::npos) << err_.str();
  EXPECT_EQ(o2ctl({"stats", "300.1.1.1@o2ib0"}), kExitUsage);
  EXPECT_EQ(o2ctl({"stats", "192.168.1.2@o2ib0", "192.168.1.3@o2ib0"}), kExitUsage);
  kernel_->fail[O2LND_IOC_PEER_SHOW] = EPERM;
  EXPECT_EQ(o2ctl({"stats", "-v"}), kExitFailure);
  EXPECT_NE(err_.str().find("o2ctl: stats: permission denied"), std::string::npos) << err_.str();
  EXPECT_EQ(o2ctl({"stats"}), kExitOk) << "without peers no PEER_SHOW";
  kernel_->nis.clear();
  for (bool v : {false, true}) {
    std::string y = yaml(v ? std::vector<std::string_view>{"stats", "-v"}
                           : std::vector<std::string_view>{"stats"});
    Shape s = o2ctl_yaml::stats(y, v);
    EXPECT_SHAPE(s, y);
    EXPECT_EQ(y, "statistics: []\n");
  }
}

TEST_F(YamlTest, Version) {
  std::string y = yaml({"version"});
  Shape s = o2ctl_yaml::version(y, true);
  EXPECT_SHAPE(s, y);
  auto doc = YAML::Load(y);
  EXPECT_EQ(o2ctl_yaml::node_kind(doc["o2ctl version"]), Kind::kStr) << y;
  EXPECT_EQ(doc["o2ctl version"].as<std::string>(), "0.1.0");
  EXPECT_EQ(doc["module abi"].as<int>(), O2LND_ABI_VERSION);
  // A module version that reads as a number stays a string.
  kernel_->module_version = "2.15";
  y = yaml({"version"});
  s = o2ctl_yaml::version(y, true);
  EXPECT_SHAPE(s, y);
  EXPECT_EQ(YAML::Load(y)["module version"].as<std::string>(), "2.15");
}

// ---- the -t tables --------------------------------------------------------------

// The table of `args` + "-t" has the header `header` and one row per entry
// of the YAML of `args`.
void expect_table(YamlTest* t, const std::string& table, const std::vector<std::string>& header,
                  std::size_t rows) {
  (void)t;
  auto tab = o2ctl_yaml::parse_table(table);
  EXPECT_TRUE(tab.problems.empty()) << tab.problems.front() << "\n" << table;
  EXPECT_EQ(tab.header, header) << table;
  EXPECT_EQ(tab.rows.size(), rows) << table;
}

TEST_F(YamlTest, TablesHaveAHeaderAndOneRowPerEntry) {
  add_faults();
  struct Case {
    std::vector<std::string_view> args;
    std::vector<std::string> header;
    std::size_t rows;
  };
  const std::vector<std::string> kNetColumns = {"NET",   "NID",   "STATUS", "IFACE", "DEVICE",
                                                "PEERS", "CONNS", "EST",    "CRED",  "MIN",
                                                "Q",     "TXS",   "MRS"};
  const std::vector<std::string> kPeerColumns = {"NID",      "LOCAL", "STATE", "CONNS", "TXQ",
                                                 "RETRY_MS", "CRED",  "MIN",   "Q",     "HEALTH"};
  const std::vector<std::string> kPeerVerboseColumns = {
      "NID", "LOCAL", "STATE",  "CONNS", "TXQ",  "RETRY_MS", "CRED",
      "MIN", "Q",     "HEALTH", "RTR",   "RMIN", "RQ"};
  const std::vector<std::string> kStatsPeerColumns = {"NID",  "LOCAL", "SENT",      "RECV",
                                                      "DROP", "ERR",   "BYTES_OUT", "BYTES_IN",
                                                      "TMO",  "QFULL", "KA",        "EARLY"};
  const std::vector<Case> cases = {
      {{"net", "show"}, kNetColumns, 4},
      {{"net", "show", "-v"}, kNetColumns, 4},
      {{"peer", "show"}, kPeerColumns, 2},
      {{"conn", "show"},
       {"PEER", "LOCAL", "STATE", "PHASE", "ACT", "AGE_MS", "QD", "CRED", "OUT", "POSTED", "QP",
        "RSV", "SENDS", "SQ", "NOOPS", "IDLE_MS"},
       3},
      {{"fault", "list"},
       {"ID", "KIND", "ARG", "PEER", "LOCAL", "COUNT", "PROB", "DELAY_MS", "FIRED"},
       3},
      {{"stats"},
       {"NID", "SENT", "RECV", "DROP", "ERR", "BYTES_OUT", "BYTES_IN", "TMO", "QFULL", "KA",
        "EARLY"},
       4},
      {{"stats", "-v"}, kStatsPeerColumns, 6},
      {{"stats", "192.168.1.2@o2ib0"}, kStatsPeerColumns, 5},
      {{"peer", "show", "10.9.9.9@o2ib0"}, kPeerColumns, 0},
      {{"peer", "show", "-v"}, kPeerVerboseColumns, 2},
      {{"route", "show"}, {"NET", "GATEWAY", "HOP", "PRIO", "STATE", "SENT", "DROPPED"}, 2},
  };
  for (const auto& c : cases) {
    auto args = c.args;
    std::string joined;
    for (auto a : args) {
      joined += std::string(a) + " ";
    }
    SCOPED_TRACE(joined);
    args.emplace_back("-t");
    ASSERT_EQ(o2ctl(args), kExitOk) << err_.str();
    std::string table = out_.str();
    expect_table(this, table, c.header, c.rows);
    args.back() = "--table";
    ASSERT_EQ(o2ctl(args), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), table);
  }
}

TEST_F(YamlTest, TablesAlignTheirColumns) {
  EXPECT_EQ(yaml({"peer", "show", "-t"}),
            "NID                        LOCAL               STATE        CONNS    TXQ  RETRY_MS"
            "  CRED  MIN  Q  HEALTH\n"
            "192.168.1.2@o2ib0          192.168.1.1@o2ib0   established  0/1/0/1    0         0"
            "   6/8   -2  0  up\n"
            "255.255.255.255@o2ib65535  10.0.0.1@o2ib65535  backoff      0/0/0/0    0       999"
            "  -1/8   -1  1  down\n");
  EXPECT_EQ(yaml({"stats", "-t", "--net", "o2ib0", "-v"}),
            "NID                LOCAL              SENT  RECV  DROP  ERR             BYTES_OUT"
            "              BYTES_IN                   TMO  QFULL  KA  EARLY\n"
            "192.168.1.1@o2ib0  -                     3     4     0    2  18446744073709551615"
            "                     1  18446744073709551615      5   6      7\n"
            "192.168.1.2@o2ib0  192.168.1.1@o2ib0    10    11     1    0                  4096"
            "  18446744073709551615                     0      -   -      -\n");
  std::string conns = yaml({"conn", "show", "-t"});
  EXPECT_NE(
      conns.find("192.168.1.2@o2ib0          192.168.1.1@o2ib0   zombie          none   "
                 "no        0   0    -1   -3       0   0   -1    0/0    0/0    2/1        0\n"),
      std::string::npos)
      << conns;
  EXPECT_NE(conns.find("  QP  RSV  SENDS     SQ  NOOPS  IDLE_MS\n"), std::string::npos) << conns;
  std::string nets = yaml({"net", "show", "-t", "--net", "o2ib0"});
  EXPECT_EQ(nets,
            "NET    NID                STATUS  IFACE  DEVICE  PEERS  CONNS  EST    CRED  MIN  Q"
            "      TXS  MRS\n"
            "o2ib0  192.168.1.1@o2ib0  up      eth0   rxe0        1      2    1  -3/256   -7  3"
            "  259/512  0/0\n");
  kernel_->nis.clear();
  EXPECT_EQ(yaml({"net", "show", "-t"}),
            "NET  NID  STATUS  IFACE  DEVICE  PEERS  CONNS  EST  CRED  MIN  Q  TXS  MRS\n");
  EXPECT_EQ(yaml({"fault", "list", "-t"}),
            "ID  KIND  ARG  PEER  LOCAL  COUNT  PROB  DELAY_MS  FIRED\n");
}

TEST_F(YamlTest, HelpDocumentsTablesAndStats) {
  for (std::vector<std::string_view> cmd : {std::vector<std::string_view>{"net", "show"},
                                            {"peer", "show"},
                                            {"conn", "show"},
                                            {"fault", "list"},
                                            {"route", "show"},
                                            {"routing", "show"},
                                            {"stats"}}) {
    cmd.emplace_back("--help");
    ASSERT_EQ(o2ctl(cmd), kExitOk);
    EXPECT_NE(out_.str().find("-t, --table"), std::string::npos) << out_.str();
  }
  ASSERT_EQ(o2ctl({"--help"}), kExitOk);
  EXPECT_NE(out_.str().find("  stats "), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("  route show "), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("  routing show "), std::string::npos) << out_.str();
  EXPECT_EQ(o2ctl({"ping", "--table", "192.168.1.2@o2ib0"}), kExitUsage) << "ping has no table";
}

}  // namespace
}  // namespace o2ctl
