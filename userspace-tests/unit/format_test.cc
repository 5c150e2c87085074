#include "o2ctl/format.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "o2ctl/cli.h"
#include "o2ctl_yaml/record.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2ctl_yaml::Record;
using o2lnd::NetInfo;
using o2lnd::Nid;

NetInfo ni(const char* nid, const char* net, const char* ifname, const char* devname = "") {
  NetInfo n;
  n.nid = *Nid::parse(nid);
  n.status = O2LND_NI_STATUS_UP;
  n.net = net;
  n.ifname = ifname;
  n.devname = devname;
  return n;
}

// The NIs of net show output, flattened (o2ctl_yaml/record.h); a parse
// error fails the test.
std::vector<Record> nis_of(const std::string& yaml) {
  std::string error;
  auto v = o2ctl_yaml::parse_net_nis(yaml, error);
  EXPECT_EQ(error, "") << yaml;
  return v;
}

// The one entry of list `name` in yaml, flattened.
Record entry_of(const std::string& yaml, const std::string& name) {
  std::string error;
  auto v = o2ctl_yaml::parse_list(yaml, name, error);
  EXPECT_EQ(error, "") << yaml;
  EXPECT_EQ(v.size(), 1U) << yaml;
  return v.empty() ? Record{} : v[0];
}

std::vector<NetInfo> two_nis() {
  return {ni("0@lo", "lo", ""), ni("192.168.1.2@o2ib0", "o2ib0", "eth0", "rxe0")};
}

TEST(FormatPing, OneLctlLinePerNid) {
  o2lnd::PingResult r;
  r.pid = 12345;
  r.n_ids = 2;
  r.ids = {{Nid::loopback(), O2LND_NI_STATUS_UP}, {*Nid::parse("192.168.1.2@o2ib0"), 0}};
  EXPECT_EQ(format_ping(r), "12345-0@lo\n12345-192.168.1.2@o2ib0\n");
}

TEST(FormatPing, NoIdsNoLines) { EXPECT_EQ(format_ping(o2lnd::PingResult{}), ""); }

TEST(FormatNetShow, MatchesTheLnetctlLayout) {
  EXPECT_EQ(format_net_show(two_nis(), false),
            "net:\n"
            "    - net type: lo\n"
            "      local NI(s):\n"
            "        - nid: 0@lo\n"
            "          status: up\n"
            "    - net type: o2ib0\n"
            "      local NI(s):\n"
            "        - nid: 192.168.1.2@o2ib0\n"
            "          status: up\n"
            "          interfaces:\n"
            "              0: eth0\n");
}

TEST(FormatNetShow, ParsesAsYamlWithTheExpectedStructure) {
  std::string yaml = format_net_show(two_nis(), false);
  auto shape = o2ctl_yaml::net_show(yaml, false);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(shape.entries, 2U);
  EXPECT_EQ(shape.nested, 2U);
  auto nis = nis_of(yaml);
  ASSERT_EQ(nis.size(), 2U) << yaml;
  EXPECT_EQ(nis[0], (Record{{"net type", "lo"}, {"nid", "0@lo"}, {"status", "up"}}));
  EXPECT_EQ(nis[1], (Record{{"net type", "o2ib0"},
                            {"nid", "192.168.1.2@o2ib0"},
                            {"status", "up"},
                            {"interfaces.0", "eth0"}}));
}

TEST(FormatNetShow, GroupsNisOfOneNetwork) {
  std::vector<NetInfo> nis = {ni("0@lo", "lo", ""), ni("10.0.0.1@o2ib0", "o2ib0", "eth0"),
                              ni("10.0.1.1@o2ib1", "o2ib1", "eth1"),
                              ni("10.0.0.2@o2ib0", "o2ib0", "eth2")};
  nis[3].status = O2LND_NI_STATUS_DOWN;
  std::string yaml = format_net_show(nis, false);
  EXPECT_NE(yaml.find("    - net type: o2ib0\n"
                      "      local NI(s):\n"
                      "        - nid: 10.0.0.1@o2ib0\n"
                      "          status: up\n"
                      "          interfaces:\n"
                      "              0: eth0\n"
                      "        - nid: 10.0.0.2@o2ib0\n"
                      "          status: down\n"),
            std::string::npos)
      << yaml;
  auto shape = o2ctl_yaml::net_show(yaml, false);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(shape.entries, 3U) << yaml;
  EXPECT_EQ(shape.nested, 4U) << yaml;
}

TEST(FormatNetShow, VerboseAddsStatisticsTunablesAndRdmaDetails) {
  auto nis = two_nis();
  auto& n = nis[1];
  n.send_count = 10;
  n.recv_count = 11;
  n.drop_count = 1;
  n.send_bytes = 4096;
  n.recv_bytes = 8192;
  n.timeout_s = 50;
  n.peer_credits = 8;
  n.credits = 256;
  n.max_msg_size = 4096;
  n.incarnation = 1700000000123456789ULL;
  n.npeers = 1;
  n.nconns = 2;
  n.nconns_established = 1;
  n.connects_active = 3;
  n.connects_passive = 4;
  n.rejects_sent = 5;
  n.rejects_received = 6;
  n.tx_credits = -2;
  n.tx_credits_min = -5;
  n.tx_queued = 2;
  n.ntx = 512;
  n.tx_live = 258;
  n.peer_credits_hiw = 7;
  n.concurrent_sends = 16;
  n.keepalive_s = 100;
  n.tx_timeouts = 21;
  n.tx_no_credit_drops = 22;
  n.keepalives = 23;
  n.early_replies = 24;
  n.rdma_bytes = 1048576;
  n.bulk_errors = 3;
  n.max_immediate = 4096;
  n.max_frags = 256;
  n.cksum = 1;
  n.mr_pool_size = 64;
  n.mr_pool_used = 2;
  n.mr_max_pages = 257;
  n.mr_recovered = 5;
  n.health = 800;
  n.resend_count = 4;
  std::string yaml = format_net_show(nis, true);
  EXPECT_NE(yaml.find("              error_count: 0\n"
                      "              tx_timeouts: 21\n"
                      "              queue_full_drops: 22\n"
                      "              keepalives: 23\n"
                      "              early_replies: 24\n"
                      "              rdma_bytes: 1048576\n"
                      "              bulk_errors: 3\n"
                      "              resend_count: 4\n"
                      "          health stats:\n"
                      "              health value: 800\n"
                      "          tunables:\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("              max_msg_size: 4096\n"
                      "              peercredits_hiw: 7\n"
                      "              concurrent_sends: 16\n"
                      "              ntx: 512\n"
                      "              keepalive: 100\n"
                      "          tx_credits:\n"
                      "              max: 256\n"
                      "              available: -2\n"
                      "              min: -5\n"
                      "              queued: 2\n"
                      "          bulk:\n"
                      "              max_immediate: 4096\n"
                      "              max_frags: 256\n"
                      "              cksum: 1\n"
                      "              mr_pool:\n"
                      "                  size: 64\n"
                      "                  used: 2\n"
                      "                  max_pages: 257\n"
                      "                  recovered: 5\n"
                      "          lnd details:\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("              rejects_received: 6\n"
                      "              tx_live: 258\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("          statistics:\n"
                      "              send_count: 10\n"
                      "              recv_count: 11\n"
                      "              drop_count: 1\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("          tunables:\n"
                      "              peer_timeout: 50\n"
                      "              peer_credits: 8\n"
                      "              credits: 256\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("              rdma device: rxe0\n"), std::string::npos) << yaml;
  auto shape = o2ctl_yaml::net_show(yaml, true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  auto got = nis_of(yaml);
  ASSERT_EQ(got.size(), 2U) << yaml;
  const Record want = {
      {"lnd details.connections", "2"},
      {"lnd details.connects_active", "3"},
      {"lnd details.connects_passive", "4"},
      {"lnd details.established", "1"},
      {"lnd details.incarnation", "1700000000123456789"},
      {"lnd details.peers", "1"},
      {"lnd details.rdma device", "rxe0"},
      {"lnd details.rejects_received", "6"},
      {"lnd details.rejects_sent", "5"},
      {"lnd details.tx_live", "258"},
      {"statistics.bulk_errors", "3"},
      {"statistics.drop_count", "1"},
      {"statistics.early_replies", "24"},
      {"statistics.error_count", "0"},
      {"statistics.keepalives", "23"},
      {"statistics.queue_full_drops", "22"},
      {"statistics.rdma_bytes", "1048576"},
      {"statistics.recv_bytes", "8192"},
      {"statistics.recv_count", "11"},
      {"statistics.send_bytes", "4096"},
      {"statistics.send_count", "10"},
      {"statistics.tx_timeouts", "21"},
      {"tx_credits.available", "-2"},
      {"tx_credits.max", "256"},
      {"tx_credits.min", "-5"},
      {"tx_credits.queued", "2"},
      {"bulk.cksum", "1"},
      {"bulk.max_frags", "256"},
      {"bulk.max_immediate", "4096"},
      {"bulk.mr_pool.max_pages", "257"},
      {"bulk.mr_pool.recovered", "5"},
      {"bulk.mr_pool.size", "64"},
      {"bulk.mr_pool.used", "2"},
  };
  for (const auto& [k, v] : want) {
    EXPECT_EQ(got[1].contains(k) ? got[1].at(k) : "(missing)", v) << k << "\n" << yaml;
  }
  // and each value is a YAML integer (rdma device: a string)
  auto ni = YAML::Load(yaml)["net"][1]["local NI(s)"][0];
  EXPECT_EQ(ni["lnd details"]["incarnation"].as<std::uint64_t>(), 1700000000123456789ULL);
  EXPECT_EQ(ni["tx_credits"]["available"].as<int>(), -2);
}

TEST(FormatNetShow, NoNisIsAnEmptyList) {
  EXPECT_EQ(format_net_show({}, false), "net: []\n");
  for (bool verbose : {false, true}) {
    std::string yaml = format_net_show({}, verbose);
    auto shape = o2ctl_yaml::net_show(yaml, verbose);
    EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
    EXPECT_EQ(shape.entries, 0U) << yaml;
    EXPECT_TRUE(nis_of(yaml).empty()) << yaml;
  }
}

TEST(FormatNetShow, OddNamesFromTheModuleStillParse) {
  std::vector<NetInfo> nis = {ni("10.0.0.1@o2ib0", "o2ib0: x", "#eth0"),
                              ni("10.0.0.2@o2ib0", "yes", "1")};
  nis[1].devname = "a\"b\\c\x01";
  std::string yaml = format_net_show(nis, true);
  // every name a string (the schema checks the kinds), with its text
  auto shape = o2ctl_yaml::net_show(yaml, true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  auto got = nis_of(yaml);
  ASSERT_EQ(got.size(), 2U) << yaml;
  EXPECT_EQ(got[0]["net type"], "o2ib0: x") << yaml;
  EXPECT_EQ(got[0]["interfaces.0"], "#eth0") << yaml;
  EXPECT_EQ(got[1]["net type"], "yes") << yaml;
  EXPECT_EQ(got[1]["interfaces.0"], "1") << yaml;
  EXPECT_EQ(got[1]["lnd details.rdma device"], "a\"b\\c\x01") << yaml;
}

TEST(YamlScalar, PlainWhenSafeQuotedOtherwise) {
  EXPECT_EQ(yaml_scalar("eth0"), "eth0");
  EXPECT_EQ(yaml_scalar("192.168.1.2@o2ib0"), "192.168.1.2@o2ib0");
  EXPECT_EQ(yaml_scalar("0.1.0"), "\"0.1.0\"");
  EXPECT_EQ(yaml_scalar("yes"), "\"yes\"");
  EXPECT_EQ(yaml_scalar("Null"), "\"Null\"");
  EXPECT_EQ(yaml_scalar(""), "\"\"");
  EXPECT_EQ(yaml_scalar("a b"), "\"a b\"");
  EXPECT_EQ(yaml_scalar("-x"), "\"-x\"");
  EXPECT_EQ(yaml_scalar("a\"b"), "\"a\\\"b\"");
}

TEST(FormatVersion, ToolAndModule) {
  const std::string abi = std::to_string(O2LND_ABI_VERSION);
  o2lnd::VersionInfo v{O2LND_ABI_VERSION, "0.1.0"};
  std::string yaml = format_version("0.1.0", &v);
  EXPECT_EQ(yaml,
            "o2ctl version: \"0.1.0\"\n"
            "o2ctl abi: " +
                abi +
                "\n"
                "module version: \"0.1.0\"\n"
                "module abi: " +
                abi + "\n");
  auto shape = o2ctl_yaml::version(yaml, true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(o2ctl_yaml::flat(YAML::Load(yaml)), (Record{{"module abi", abi},
                                                        {"module version", "0.1.0"},
                                                        {"o2ctl abi", abi},
                                                        {"o2ctl version", "0.1.0"}}));
}

TEST(FormatVersion, ToolOnlyWithoutModule) {
  EXPECT_EQ(format_version("0.1.0", nullptr),
            "o2ctl version: \"0.1.0\"\no2ctl abi: " + std::to_string(O2LND_ABI_VERSION) + "\n");
}

// ---- peer show, conn show, fault list ------------------------------------------------

TEST(FormatProbability, FractionOfAMillion) {
  EXPECT_EQ(format_probability(1000000), "1");
  EXPECT_EQ(format_probability(500000), "0.5");
  EXPECT_EQ(format_probability(250000), "0.25");
  EXPECT_EQ(format_probability(123456), "0.123456");
  EXPECT_EQ(format_probability(1), "0.000001");
  EXPECT_EQ(format_probability(10), "0.00001");
  EXPECT_EQ(format_probability(0), "0");
}

TEST(FormatProbability, RoundTripsThroughParseProbability) {
  for (std::uint32_t p : {1U, 7U, 10U, 999999U, 1000000U, 333333U, 100000U}) {
    auto back = parse_probability(format_probability(p));
    ASSERT_TRUE(back.ok()) << p;
    EXPECT_EQ(*back, p);
  }
}

TEST(FormatPeerShow, EmptyIsAnEmptyList) { EXPECT_EQ(format_peer_show({}, true), "peer: []\n"); }

TEST(FormatPeerShow, UnknownStateAndRejectStillParse) {
  o2lnd::PeerInfo p;
  p.nid = *Nid::parse("192.168.1.2@o2ib0");
  p.local_nid = *Nid::parse("192.168.1.1@o2ib0");
  p.state = 42;
  p.last_reject = 99;
  p.health = 9;
  std::string yaml = format_peer_show({p}, true);
  EXPECT_NE(yaml.find("      health: \"unknown(9)\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      alive ms: never\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      state: \"unknown(42)\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      last reject: \"unknown(99)\"\n"), std::string::npos) << yaml;
  auto shape = o2ctl_yaml::peer_show(yaml, true);
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(entry_of(yaml, "peer"), (Record{{"alive ms", "never"},
                                            {"backoff ms", "0"},
                                            {"connect failures", "0"},
                                            {"connects", "0"},
                                            {"conns closing", "0"},
                                            {"conns connecting", "0"},
                                            {"conns established", "0"},
                                            {"conns zombie", "0"},
                                            {"credit queued", "0"},
                                            {"downs", "0"},
                                            {"failures", "0"},
                                            {"health", "unknown(9)"},
                                            {"incarnation", "0"},
                                            {"last error", "0"},
                                            {"last reject", "unknown(99)"},
                                            {"local nid", "192.168.1.1@o2ib0"},
                                            {"next retry ms", "0"},
                                            {"nid", "192.168.1.2@o2ib0"},
                                            {"phase timeouts", "0"},
                                            {"races received", "0"},
                                            {"races sent", "0"},
                                            {"rejects received", "0"},
                                            {"rejects sent", "0"},
                                            {"router credits", "0"},
                                            {"router credits max", "0"},
                                            {"router credits min", "0"},
                                            {"router queued", "0"},
                                            {"stale closes", "0"},
                                            {"state", "unknown(42)"},
                                            {"tx credits", "0"},
                                            {"tx credits max", "0"},
                                            {"tx credits min", "0"},
                                            {"tx queued", "0"},
                                            {"tx timeouts", "0"}}))
      << yaml;
}

TEST(FormatConnShow, EmptyIsAnEmptyList) { EXPECT_EQ(format_conn_show({}), "conn: []\n"); }

TEST(FormatConnShow, EveryKeyParsesWithItsType) {
  o2lnd::ConnInfo c;
  c.peer_nid = *Nid::parse("192.168.1.2@o2ib0");
  c.local_nid = *Nid::parse("192.168.1.1@o2ib0");
  c.state = O2LND_CONN_ACTIVE_CONNECT;
  c.phase = O2LND_PHASE_CONNECT;
  c.active = true;
  c.credits = -3;
  c.qp_num = 0xffffffffU;
  c.reserved_credits = -1;
  c.idle_ms = 0xffffffffU;
  std::string yaml = format_conn_show({c});
  auto shape = o2ctl_yaml::conn_show(yaml);  // each key of its kind ("active" a boolean)
  EXPECT_TRUE(shape.check.ok()) << shape.check.str() << yaml;
  EXPECT_EQ(entry_of(yaml, "conn"), (Record{{"active", "true"},
                                            {"age ms", "0"},
                                            {"comp vector", "0"},
                                            {"comp vectors", "0"},
                                            {"concurrent sends", "0"},
                                            {"credits", "-3"},
                                            {"deadline ms", "0"},
                                            {"error", "0"},
                                            {"idle ms", "4294967295"},
                                            {"keepalives", "0"},
                                            {"local nid", "192.168.1.1@o2ib0"},
                                            {"max frags", "0"},
                                            {"noops posted", "0"},
                                            {"noops queued", "0"},
                                            {"outstanding", "0"},
                                            {"peer", "192.168.1.2@o2ib0"},
                                            {"phase", "connect"},
                                            {"posted", "0"},
                                            {"qp", "4294967295"},
                                            {"queue depth", "0"},
                                            {"reserved credits", "-1"},
                                            {"rx buffers", "0"},
                                            {"send count", "0"},
                                            {"sq free", "0"},
                                            {"sq size", "0"},
                                            {"state", "active_connect"},
                                            {"tx queued", "0"}}))
      << yaml;
}

TEST(FormatFaultList, EmptyIsAnEmptyList) { EXPECT_EQ(format_fault_list({}), "fault: []\n"); }

TEST(FormatFaultList, NamesTheArgOfEveryKind) {
  std::vector<o2lnd::FaultRule> rules(3);
  rules[0].id = 1;
  rules[0].kind = O2LND_FAULT_REJECT;
  rules[0].arg = O2LND_REJECT_CONN_RACE;
  rules[1].id = 2;
  rules[1].kind = O2LND_FAULT_MSG_CORRUPT;
  rules[1].arg = 0xd2;
  rules[1].probability = 1;
  rules[2].id = 3;
  rules[2].kind = 99;  // a newer module's kind
  rules[2].arg = 5;
  std::string yaml = format_fault_list(rules);
  EXPECT_NE(yaml.find("      kind: reject\n      arg: conn_race\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      kind: msg-corrupt\n      arg: put_req\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      probability: 0.000001\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      kind: \"unknown(99)\"\n      arg: \"5\"\n"), std::string::npos)
      << yaml;
  std::string error;
  auto v = o2ctl_yaml::parse_list(yaml, "fault", error);
  EXPECT_EQ(error, "") << yaml;
  ASSERT_EQ(v.size(), 3U) << yaml;
  EXPECT_EQ(v[1]["arg"], "put_req");
  EXPECT_EQ(v[1]["probability"], "0.000001");
  // the unknown kind's arg is quoted: a string, not the integer 5
  EXPECT_EQ(o2ctl_yaml::node_kind(YAML::Load(yaml)["fault"][2]["arg"]), o2ctl_yaml::Kind::kStr);
}

}  // namespace
}  // namespace o2ctl
