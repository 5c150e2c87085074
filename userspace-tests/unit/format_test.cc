#include "o2ctl/format.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

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
  std::string yaml = format_net_show(nis, true);
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
                 R"j("rejects_received": 6, "rejects_sent": 5})j"),
      std::string::npos)
      << *json;
  EXPECT_NE(json->find(R"j("statistics": {"drop_count": 1, "recv_bytes": 8192, "recv_count": 11, )j"
                       R"j("send_bytes": 4096, "send_count": 10})j"),
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
  o2lnd::VersionInfo v{1, "0.1.0"};
  std::string yaml = format_version("0.1.0", &v);
  EXPECT_EQ(yaml,
            "o2ctl version: \"0.1.0\"\n"
            "o2ctl abi: 1\n"
            "module version: \"0.1.0\"\n"
            "module abi: 1\n");
  if (have_python_yaml()) {
    EXPECT_EQ(yaml_to_json(yaml),
              R"j({"module abi": 1, "module version": "0.1.0", "o2ctl abi": 1, )j"
              R"j("o2ctl version": "0.1.0"})j");
  }
}

TEST(FormatVersion, ToolOnlyWithoutModule) {
  EXPECT_EQ(format_version("0.1.0", nullptr), "o2ctl version: \"0.1.0\"\no2ctl abi: 1\n");
}

}  // namespace
}  // namespace o2ctl
