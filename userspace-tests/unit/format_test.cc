#include "o2ctl/format.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "o2ctl/cli.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "yaml_check.h"

namespace o2ctl {
namespace {

using o2lnd::NetInfo;
using o2lnd::Nid;
using o2lnd::testing::have_python_yaml;
using o2lnd::testing::yaml_to_json;

NetInfo ni(const char* nid, const char* net, const char* ifname, const char* devname = "") {
  NetInfo n;
  n.nid = *Nid::parse(nid);
  n.status = O2LND_NI_STATUS_UP;
  n.net = net;
  n.ifname = ifname;
  n.devname = devname;
  return n;
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
  if (!have_python_yaml()) {
    GTEST_SKIP() << "python3-yaml not installed";
  }
  auto json = yaml_to_json(format_net_show(two_nis(), false));
  ASSERT_TRUE(json.has_value());
  EXPECT_EQ(*json,
            R"j({"net": [{"local NI(s)": [{"nid": "0@lo", "status": "up"}], "net type": "lo"}, )j"
            R"j({"local NI(s)": [{"interfaces": {"0": "eth0"}, "nid": "192.168.1.2@o2ib0", )j"
            R"j("status": "up"}], "net type": "o2ib0"}]})j");
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
  if (have_python_yaml()) {
    EXPECT_TRUE(yaml_to_json(yaml).has_value()) << yaml;
  }
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
  std::string yaml = format_net_show(nis, true);
  EXPECT_NE(yaml.find("              error_count: 0\n"
                      "              tx_timeouts: 21\n"
                      "              queue_full_drops: 22\n"
                      "              keepalives: 23\n"
                      "              early_replies: 24\n"
                      "              rdma_bytes: 1048576\n"
                      "              bulk_errors: 3\n"
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
  if (!have_python_yaml()) {
    GTEST_SKIP() << "python3-yaml not installed";
  }
  auto json = yaml_to_json(yaml);
  ASSERT_TRUE(json.has_value()) << yaml;
  EXPECT_NE(
      json->find(R"j("lnd details": {"connections": 2, "connects_active": 3, )j"
                 R"j("connects_passive": 4, "established": 1, )j"
                 R"j("incarnation": 1700000000123456789, "peers": 1, "rdma device": "rxe0", )j"
                 R"j("rejects_received": 6, "rejects_sent": 5, "tx_live": 258})j"),
      std::string::npos)
      << *json;
  EXPECT_NE(
      json->find(R"j("statistics": {"bulk_errors": 3, "drop_count": 1, "early_replies": 24, )j"
                 R"j("error_count": 0, "keepalives": 23, "queue_full_drops": 22, )j"
                 R"j("rdma_bytes": 1048576, "recv_bytes": 8192, "recv_count": 11, )j"
                 R"j("send_bytes": 4096, "send_count": 10, "tx_timeouts": 21})j"),
      std::string::npos)
      << *json;
  EXPECT_NE(json->find(R"j("tx_credits": {"available": -2, "max": 256, "min": -5, "queued": 2})j"),
            std::string::npos)
      << *json;
  EXPECT_NE(
      json->find(R"j("bulk": {"cksum": 1, "max_frags": 256, "max_immediate": 4096, )j"
                 R"j("mr_pool": {"max_pages": 257, "recovered": 5, "size": 64, "used": 2}})j"),
      std::string::npos)
      << *json;
}

TEST(FormatNetShow, NoNisIsAnEmptyList) {
  EXPECT_EQ(format_net_show({}, false), "net: []\n");
  if (have_python_yaml()) {
    EXPECT_EQ(yaml_to_json("net: []\n"), R"j({"net": []})j");
  }
}

TEST(FormatNetShow, OddNamesFromTheModuleStillParse) {
  if (!have_python_yaml()) {
    GTEST_SKIP() << "python3-yaml not installed";
  }
  std::vector<NetInfo> nis = {ni("10.0.0.1@o2ib0", "o2ib0: x", "#eth0"),
                              ni("10.0.0.2@o2ib0", "yes", "1")};
  nis[1].devname = "a\"b\\c\x01";
  std::string yaml = format_net_show(nis, true);
  auto json = yaml_to_json(yaml);
  ASSERT_TRUE(json.has_value()) << yaml;
  EXPECT_NE(json->find(R"j("net type": "o2ib0: x")j"), std::string::npos) << *json;
  EXPECT_NE(json->find(R"j("0": "#eth0")j"), std::string::npos) << *json;
  EXPECT_NE(json->find(R"j("net type": "yes")j"), std::string::npos) << *json;
  EXPECT_NE(json->find(R"j("0": "1")j"), std::string::npos) << *json;
  EXPECT_NE(json->find(R"j("rdma device": "a\"b\\c\u0001")j"), std::string::npos) << *json;
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
  if (have_python_yaml()) {
    EXPECT_EQ(yaml_to_json(yaml), R"j({"module abi": )j" + abi +
                                      R"j(, "module version": "0.1.0", "o2ctl abi": )j" + abi +
                                      R"j(, "o2ctl version": "0.1.0"})j");
  }
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
  if (!have_python_yaml()) {
    GTEST_SKIP() << "python3-yaml not installed";
  }
  auto json = yaml_to_json(yaml);
  ASSERT_TRUE(json.has_value()) << yaml;
  EXPECT_EQ(*json,
            R"j({"peer": [{"alive ms": "never", "backoff ms": 0, "connect failures": 0, )j"
            R"j("connects": 0, )j"
            R"j("conns closing": 0, "conns connecting": 0, "conns established": 0, )j"
            R"j("conns zombie": 0, "credit queued": 0, "downs": 0, "failures": 0, )j"
            R"j("health": "unknown(9)", "incarnation": 0, "last error": 0, )j"
            R"j("last reject": "unknown(99)", "local nid": "192.168.1.1@o2ib0", )j"
            R"j("next retry ms": 0, "nid": "192.168.1.2@o2ib0", "phase timeouts": 0, )j"
            R"j("races received": 0, "races sent": 0, "rejects received": 0, )j"
            R"j("rejects sent": 0, "router credits": 0, "router credits max": 0, )j"
            R"j("router credits min": 0, "router queued": 0, )j"
            R"j("stale closes": 0, "state": "unknown(42)", )j"
            R"j("tx credits": 0, "tx credits max": 0, "tx credits min": 0, "tx queued": 0, )j"
            R"j("tx timeouts": 0}]})j");
}

TEST(FormatConnShow, EmptyIsAnEmptyList) { EXPECT_EQ(format_conn_show({}), "conn: []\n"); }

TEST(FormatConnShow, EveryKeyParsesWithItsType) {
  if (!have_python_yaml()) {
    GTEST_SKIP() << "python3-yaml not installed";
  }
  o2lnd::ConnInfo c;
  c.peer_nid = *Nid::parse("192.168.1.2@o2ib0");
  c.local_nid = *Nid::parse("192.168.1.1@o2ib0");
  c.state = O2LND_CONN_ACTIVE_CONNECT;
  c.phase = O2LND_PHASE_CONNECT;
  c.active = true;
  c.credits = -3;
  c.qp_num = 0xffffffffU;
  auto json = yaml_to_json(format_conn_show({c}));
  ASSERT_TRUE(json.has_value());
  c.reserved_credits = -1;
  c.idle_ms = 0xffffffffU;
  json = yaml_to_json(format_conn_show({c}));
  ASSERT_TRUE(json.has_value());
  EXPECT_EQ(*json, R"j({"conn": [{"active": true, "age ms": 0, "concurrent sends": 0, )j"
                   R"j("credits": -3, "deadline ms": 0, )j"
                   R"j("error": 0, "idle ms": 4294967295, "keepalives": 0, )j"
                   R"j("local nid": "192.168.1.1@o2ib0", "max frags": 0, )j"
                   R"j("noops posted": 0, "noops queued": 0, )j"
                   R"j("outstanding": 0, "peer": "192.168.1.2@o2ib0", "phase": "connect", )j"
                   R"j("posted": 0, "qp": 4294967295, "queue depth": 0, "reserved credits": -1, )j"
                   R"j("rx buffers": 0, "sq free": 0, "sq size": 0, )j"
                   R"j("state": "active_connect", "tx queued": 0}]})j");
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
  if (have_python_yaml()) {
    EXPECT_TRUE(yaml_to_json(yaml).has_value()) << yaml;
  }
}

}  // namespace
}  // namespace o2ctl
