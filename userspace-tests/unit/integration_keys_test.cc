// The integration tests (userspace-tests/integration, in QEMU guests) read
// o2ctl's YAML by exact key paths: fixture.cc's parse_yaml_list() and
// parse_net_nis() flatten each entry with o2ctl_yaml/record.h ("tx
// credits", "lnd details.tx_live", "interfaces.0"), and some suites read
// yaml-cpp nodes directly (selftest's "errors.total").  Here, on the fake
// kernel, every command they read is rendered with entries present,
// flattened by the same record.h, and every key they look up must be in
// its output: a renamed key fails here on the host, not in a guest.
//
// Keep kKeys complete: every key read by userspace-tests/integration/*.cc
// (field(), num(), field_int(), need(), at(), err(), st["..."]) with the
// command whose output it is read from.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2ctl/cli.h"
#include "o2ctl_yaml/record.h"
#include "o2lnd/backend.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2ctl_yaml::Record;
using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_conn;
using o2lnd::testing::make_ni;
using o2lnd::testing::make_peer;
using o2lnd::testing::make_route;
using o2lnd::testing::make_routing;

constexpr std::uint64_t kLocal0 = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0
constexpr std::uint64_t kLocal1 = 0x00050000c0a80102ULL;  // 192.168.1.2@o2ib0
constexpr std::uint64_t kPeer0 = 0x00050000c0a80102ULL;   // 192.168.1.2@o2ib0

// A view: the output of one o2ctl command, as the integration tests take
// its entries apart.
constexpr const char* kNetShow = "net show: an NI";  // parse_net_nis()
constexpr const char* kNetShowV = "net show -v: an NI";
constexpr const char* kPeerShowV = "peer show -v: a peer";  // parse_yaml_list(.., "peer")
constexpr const char* kConnShow = "conn show: a conn";
constexpr const char* kRouteShow = "route show: a route";
constexpr const char* kRoutingShow = "routing show: the routing map";
constexpr const char* kRoutingPool = "routing show: a pool of buffers";
constexpr const char* kFaultList = "fault list: a rule";
constexpr const char* kPeerList = "peer list: an LNet peer";  // parse_yaml_list(.., "peer")
constexpr const char* kDiscover = "discover: the peer";       // parse_yaml_list(.., "discover")
constexpr const char* kSelftestPing = "selftest ping -y: the selftest map";
constexpr const char* kSelftestBrw = "selftest brw -y: the selftest map";

struct Key {
  const char* view;
  const char* key;
};

// Every (view, key) the integration tests read.
const std::vector<Key> kKeys = {
    // veth_test NetShowListsLocalNids
    {kNetShow, "net type"},
    {kNetShow, "nid"},
    {kNetShow, "status"},
    {kNetShow, "interfaces.0"},
    // adversary_test ni_stats, credits_test (kNi*, kTxLive, kNtx, kEarly,
    // message_failures), bulk_test bulk() (yaml-cpp nodes)
    {kNetShowV, "nid"},
    {kNetShowV, "net type"},  // multirail_test sends()
    {kNetShowV, "statistics.send_count"},
    {kNetShowV, "health stats.health value"},
    {kNetShowV, "statistics.drop_count"},
    {kNetShowV, "statistics.error_count"},
    {kNetShowV, "statistics.bulk_errors"},
    {kNetShowV, "statistics.rdma_bytes"},
    {kNetShowV, "statistics.early_replies"},
    {kNetShowV, "lnd details.rejects_sent"},
    {kNetShowV, "lnd details.incarnation"},
    {kNetShowV, "lnd details.tx_live"},
    {kNetShowV, "tx_credits.available"},
    {kNetShowV, "tx_credits.max"},
    {kNetShowV, "tx_credits.min"},
    {kNetShowV, "tx_credits.queued"},
    {kNetShowV, "tunables.ntx"},
    {kNetShowV, "bulk.max_immediate"},
    {kNetShowV, "bulk.cksum"},
    {kNetShowV, "bulk.mr_pool.size"},
    {kNetShowV, "bulk.mr_pool.used"},
    {kNetShowV, "bulk.mr_pool.recovered"},
    // fixture peer(), connect_test, credits_test, interop_test, lu7646_test,
    // bulk_test, recovery_bench, routing_test
    {kPeerShowV, "nid"},
    {kPeerShowV, "local nid"},
    {kPeerShowV, "state"},
    {kPeerShowV, "races received"},
    {kPeerShowV, "races sent"},
    {kPeerShowV, "connects"},
    {kPeerShowV, "last reject"},
    {kPeerShowV, "last error"},
    {kPeerShowV, "rejects received"},
    {kPeerShowV, "rejects sent"},
    {kPeerShowV, "phase timeouts"},
    {kPeerShowV, "stale closes"},
    {kPeerShowV, "tx credits"},
    {kPeerShowV, "tx credits max"},
    {kPeerShowV, "tx credits min"},
    {kPeerShowV, "credit queued"},
    {kPeerShowV, "tx queued"},
    {kPeerShowV, "tx timeouts"},
    {kPeerShowV, "downs"},
    {kPeerShowV, "health"},
    {kPeerShowV, "router credits"},
    {kPeerShowV, "router credits max"},
    {kPeerShowV, "router credits min"},
    {kPeerShowV, "router queued"},
    // connect_test, credits_test, interop_test, lu7646_test, adversary_test,
    // routing_test
    {kConnShow, "peer"},
    {kConnShow, "local nid"},
    {kConnShow, "state"},
    {kConnShow, "phase"},
    {kConnShow, "active"},
    {kConnShow, "queue depth"},
    {kConnShow, "max frags"},
    {kConnShow, "deadline ms"},
    {kConnShow, "credits"},
    {kConnShow, "outstanding"},
    {kConnShow, "reserved credits"},
    {kConnShow, "posted"},
    {kConnShow, "concurrent sends"},
    {kConnShow, "sq size"},
    {kConnShow, "sq free"},
    {kConnShow, "noops posted"},
    {kConnShow, "noops queued"},
    {kConnShow, "tx queued"},
    {kConnShow, "keepalives"},
    // routing_test expect_route
    {kRouteShow, "net"},
    {kRouteShow, "gateway"},
    {kRouteShow, "hop"},
    {kRouteShow, "priority"},
    {kRouteShow, "state"},
    {kRouteShow, "sent"},
    {kRouteShow, "dropped"},
    // routing_test RoutingView::top
    {kRoutingShow, "forwarding"},
    {kRoutingShow, "peer buffer credits"},
    {kRoutingShow, "router timeout"},
    {kRoutingShow, "waiting"},
    {kRoutingShow, "waiting max"},
    {kRoutingShow, "held rx"},
    {kRoutingShow, "forwarded"},
    {kRoutingShow, "forwarded bytes"},
    {kRoutingShow, "dropped no route"},
    {kRoutingShow, "dropped down"},
    {kRoutingShow, "dropped timeout"},
    {kRoutingShow, "dropped closed"},
    {kRoutingShow, "dropped error"},
    // routing_test RoutingView::pools
    {kRoutingPool, "pool"},
    {kRoutingPool, "size"},
    {kRoutingPool, "nbuffers"},
    {kRoutingPool, "credits"},
    {kRoutingPool, "min credits"},
    {kRoutingPool, "taken"},
    // hostile_test counts the rules (parse_yaml_list(.., "fault"))
    {kFaultList, "id"},
    // interop_test LnetctlDiscoverSeesTheO2lndNode, multirail_test
    {kPeerList, "primary nid"},
    {kPeerList, "pushed to us"},
    {kPeerList, "discovery"},
    {kPeerList, "routing"},
    {kPeerList, "Multi-Rail"},
    {kPeerList, "nids"},
    {kPeerList, "peer ni.0.nid"},
    {kPeerList, "peer ni.1.nid"},
    {kPeerList, "peer ni.1.state"},
    {kPeerList, "peer ni.1.health value"},
    {kPeerList, "peer ni.0.selected"},
    {kPeerList, "peer ni.1.selected"},
    // interop_test O2lndDiscoversTheLustreNodeAndPushesToIt, multirail_test
    {kDiscover, "primary nid"},
    {kDiscover, "Multi-Rail"},
    {kDiscover, "discovery"},
    {kDiscover, "routing"},
    {kDiscover, "pushed"},
    {kDiscover, "nids"},
    {kDiscover, "peer ni.0.nid"},
    {kDiscover, "peer ni.0.state"},
    {kDiscover, "peer ni.1.nid"},
    {kDiscover, "peer ni.1.state"},
    // credits_test, routing_test, real_faults_test Selftest / parse
    {kSelftestPing, "rpcs"},
    {kSelftestPing, "not_sent"},
    {kSelftestPing, "rpc_per_s"},
    {kSelftestPing, "errors.total"},
    {kSelftestPing, "errors.expired"},
    {kSelftestPing, "errors.dropped"},
    {kSelftestPing, "errors.refused"},
    {kSelftestPing, "errors.other"},
    {kSelftestPing, "latency_us.min"},
    {kSelftestPing, "latency_us.max"},
    // bulk_test Brw, routing_test, real_faults_test
    {kSelftestBrw, "rpcs"},
    {kSelftestBrw, "size"},
    {kSelftestBrw, "rdma_rpcs"},
    {kSelftestBrw, "mib_per_s"},
    {kSelftestBrw, "not_sent"},
    {kSelftestBrw, "rpc_per_s"},
    {kSelftestBrw, "errors.total"},
    {kSelftestBrw, "errors.expired"},
    {kSelftestBrw, "errors.dropped"},
    {kSelftestBrw, "errors.verify"},
    {kSelftestBrw, "errors.other"},
    {kSelftestBrw, "latency_us.min"},
    {kSelftestBrw, "latency_us.max"},
};

class IntegrationKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ni0 = make_ni(kLocal0, "o2ib0", "veth0", "rxe0");
    auto ni1 = make_ni(kLocal1, "o2ib0", "veth1", "rxe1");
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), ni0, ni1};
    auto p = make_peer(kPeer0, O2LND_PEER_ESTABLISHED);
    p.conns[O2LND_CONN_ESTABLISHED] = 1;
    kernel_->peers[1] = {p};
    auto c = make_conn(kPeer0, O2LND_CONN_ESTABLISHED);
    c.active = 1;
    c.queue_depth = 8;
    kernel_->conns[1] = {c};
    kernel_->routes = {make_route(0x00050001U, kPeer0)};
    kernel_->routing = make_routing(true);
    kernel_->on_ping = [](o2lnd_ioc_ping& r) {
      r.pid = 12345;
      r.n_ids = 1;
      r.ids[0].nid = kPeer0;
      r.rtt_ns = 25000;
      return 0;
    };
    kernel_->on_brw = [](o2lnd_ioc_brw& b) {
      b.rtt_ns = 500000;
      b.rdma = 1;
      return 0;
    };
    o2lnd_ioc_lpeer lp{};
    lp.primary_nid = kPeer0;
    lp.flags = O2LND_LPEER_F_MULTI_RAIL | O2LND_LPEER_F_PUSHED | O2LND_LPEER_F_PUSHED_TO_US;
    lp.features = O2LND_PING_FEAT_MULTI_RAIL | O2LND_PING_FEAT_DISCOVERY;
    lp.n_nids = 2;
    lp.nids[0] = {kPeer0, O2LND_NI_STATUS_UP, 1000, 0, 0};
    lp.nids[1] = {kPeer0 + 0x100, O2LND_NI_STATUS_UP, 1000, 0, 0};
    kernel_->lpeers = {lp};
    kernel_->on_discover = [lp](o2lnd_ioc_lpeer& d) {
      o2lnd_ioc_hdr h = d.hdr;
      d = lp;
      d.hdr = h;
      return 0;
    };
  }

  // o2ctl's stdout for `args`; a failing command fails the test.
  std::string o2ctl(std::vector<std::string_view> args) {
    std::ostringstream out;
    std::ostringstream err;
    Env env{out, err, [this](const std::string&) -> o2lnd::Result<std::unique_ptr<o2lnd::Backend>> {
              return std::unique_ptr<o2lnd::Backend>(std::make_unique<FakeBackend>(kernel_));
            }};
    env.tool_version = "0.1.0";
    EXPECT_EQ(run(args, env), kExitOk) << err.str();
    return out.str();
  }

  // The entries of `list`, as fixture.cc's parse_yaml_list() takes them.
  static std::vector<Record> list(const std::string& yaml, const std::string& name) {
    std::string error;
    auto v = o2ctl_yaml::parse_list(yaml, name, error);
    EXPECT_EQ(error, "") << yaml;
    return v;
  }
  static std::vector<Record> nis(const std::string& yaml) {
    std::string error;
    auto v = o2ctl_yaml::parse_net_nis(yaml, error);
    EXPECT_EQ(error, "") << yaml;
    return v;
  }
  // A top-level map of `yaml` as one record (routing show, selftest -y).
  static Record map(const std::string& yaml, const std::string& name) {
    auto d = o2ctl_yaml::load(yaml);
    EXPECT_EQ(d.error, "") << yaml;
    return d.error.empty() ? o2ctl_yaml::flat(d.root[name]) : Record{};
  }

  // Every view, with its entries and the text they came from.
  std::map<std::string, std::pair<std::vector<Record>, std::string>> views() {
    std::map<std::string, std::pair<std::vector<Record>, std::string>> v;
    std::string y = o2ctl({"net", "show"});
    v[kNetShow] = {nis(y), y};
    y = o2ctl({"net", "show", "-v"});
    v[kNetShowV] = {nis(y), y};
    y = o2ctl({"peer", "show", "-v"});
    v[kPeerShowV] = {list(y, "peer"), y};
    y = o2ctl({"conn", "show"});
    v[kConnShow] = {list(y, "conn"), y};
    y = o2ctl({"route", "show"});
    v[kRouteShow] = {list(y, "route"), y};
    y = o2ctl({"routing", "show"});
    v[kRoutingShow] = {{map(y, "routing")}, y};
    auto d = o2ctl_yaml::load(y);
    std::string error;
    v[kRoutingPool] = {o2ctl_yaml::entries(d.root["routing"]["buffers"], error), y};
    EXPECT_EQ(error, "") << y;
    y = o2ctl({"peer", "list"});
    v[kPeerList] = {list(y, "peer"), y};
    y = o2ctl({"discover", "192.168.1.2@o2ib0"});
    v[kDiscover] = {list(y, "discover"), y};
    o2ctl({"fault", "add", "reject", "conn_stale", "--peer", "192.168.1.2@o2ib0"});
    y = o2ctl({"fault", "list"});
    v[kFaultList] = {list(y, "fault"), y};
    y = o2ctl({"selftest", "ping", "192.168.1.2@o2ib0", "--count", "2", "-y"});
    v[kSelftestPing] = {{map(y, "selftest")}, y};
    y = o2ctl({"selftest", "brw", "write", "192.168.1.2@o2ib0", "--size", "1M", "--check",
               "--count", "2", "--from", "192.168.1.1@o2ib0", "-y"});
    v[kSelftestBrw] = {{map(y, "selftest")}, y};
    return v;
  }

  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
};

TEST_F(IntegrationKeys, ExistInO2ctlOutput) {
  auto v = views();
  for (const auto& [view, entries] : v) {
    EXPECT_FALSE(entries.first.empty()) << view << ": no entries in\n" << entries.second;
  }
  for (const auto& k : kKeys) {
    ASSERT_TRUE(v.contains(k.view)) << k.view;
    const auto& [records, text] = v[k.view];
    bool found = false;
    for (const auto& r : records) {
      found = found || r.contains(k.key);
    }
    EXPECT_TRUE(found) << k.view << ": no key '" << k.key << "' in\n" << text;
  }
}

// Every NI of net show -v has each of the NI keys (not only one of them);
// the same for peers and conns: a key the integration tests need is not
// one that o2ctl prints only sometimes.
TEST_F(IntegrationKeys, EveryEntryHasThem) {
  auto v = views();
  for (const auto& k : kKeys) {
    const std::string view = k.view;
    const std::string key = k.key;
    if (view == kNetShow && key == "interfaces.0") {
      continue;  // 0@lo has no interface
    }
    for (const auto& r : v[view].first) {
      EXPECT_TRUE(r.contains(key)) << view << ": an entry without '" << key << "' in\n"
                                   << v[view].second;
    }
  }
}

// ---- o2ctl_yaml/record.h ---------------------------------------------------------------

TEST(YamlRecord, FlattensNestedMapsAndSequencesToExactKeyPaths) {
  std::string error;
  auto v = o2ctl_yaml::parse_list(
      "peer:\n"
      "    - nid: 192.168.1.2@o2ib0\n"
      "      tx credits: -3\n"
      "      state: \"yes\"\n"
      "      lnd details:\n"
      "          tx_live: 5\n"
      "          mr_pool:\n"
      "              used: 2\n"
      "      nids: [a, b]\n"
      "      none:\n",
      "peer", error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0], (Record{{"nid", "192.168.1.2@o2ib0"},
                          {"tx credits", "-3"},
                          {"state", "yes"},
                          {"lnd details.tx_live", "5"},
                          {"lnd details.mr_pool.used", "2"},
                          {"nids.0", "a"},
                          {"nids.1", "b"},
                          {"none", ""}}));
}

TEST(YamlRecord, EmptyOrNullListIsNoEntries) {
  for (const char* yaml : {"peer: []\n", "peer:\n", "peer: ~\n"}) {
    std::string error;
    EXPECT_TRUE(o2ctl_yaml::parse_list(yaml, "peer", error).empty()) << yaml;
    EXPECT_EQ(error, "") << yaml;
  }
}

TEST(YamlRecord, BadTextIsAnError) {
  for (const auto& [yaml, why] :
       std::vector<std::pair<std::string, std::string>>{{"peer: [\n", "does not parse"},
                                                        {"conn: []\n", "no top-level key 'peer'"},
                                                        {"peer: 3\n", "peer: not a sequence"},
                                                        {"- a\n", "not a map"}}) {
    std::string error;
    EXPECT_TRUE(o2ctl_yaml::parse_list(yaml, "peer", error).empty()) << yaml;
    EXPECT_NE(error.find(why), std::string::npos) << yaml << "\nerror: " << error;
  }
}

TEST(YamlRecord, NetNisCarryTheirNetType) {
  std::string error;
  auto v = o2ctl_yaml::parse_net_nis(
      "net:\n"
      "    - net type: lo\n"
      "      local NI(s):\n"
      "        - nid: 0@lo\n"
      "    - net type: o2ib0\n"
      "      local NI(s):\n"
      "        - nid: 10.0.0.1@o2ib0\n"
      "          interfaces:\n"
      "              0: eth0\n",
      error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(v[0], (Record{{"net type", "lo"}, {"nid", "0@lo"}}));
  EXPECT_EQ(v[1],
            (Record{{"net type", "o2ib0"}, {"nid", "10.0.0.1@o2ib0"}, {"interfaces.0", "eth0"}}));
  EXPECT_TRUE(o2ctl_yaml::parse_net_nis("net: []\n", error).empty());
  EXPECT_EQ(error, "");
  o2ctl_yaml::parse_net_nis("peer: []\n", error);
  EXPECT_NE(error, "");
}

}  // namespace
}  // namespace o2ctl
