// o2ctl's YAML on the real module: in one guest with a veth pair (see
// veth_test.cc), before and after a ping across it, every command's YAML
// output is parsed on the host with yaml-cpp and checked for its structure
// (keys, and values that are integers, NID strings, booleans), as the host
// unit tests check it on a fake kernel (o2ctl_yaml/schema.h); and each -t
// table has a header and one row per YAML entry.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fixture.h"
#include "o2ctl_yaml/schema.h"
#include <yaml-cpp/yaml.h>

namespace o2it {
namespace {

O2_TOPOLOGY_SUITE(O2ctlYamlVethBed, "veth");

constexpr const char* kBothEnds = "o2ib0(veth0,veth1)";
constexpr const char* kNid1 = "192.168.1.1@o2ib0";
constexpr const char* kNid2 = "192.168.1.2@o2ib0";

class O2ctlYamlVeth : public O2ctlYamlVethBed {
 protected:
  // `o2ctl ARGS` in g: its stdout alone (its stderr only when it fails,
  // which fails the test).
  std::string out(Guest& g, const std::string& args) {
    RunResult r = run(g,
                      sh_quote(o2ctl_path()) + " " + args +
                          " 2>/tmp/o2ctl_yaml.err; rc=$?; [ $rc = 0 ] || cat /tmp/o2ctl_yaml.err;"
                          " exit $rc",
                      60);
    EXPECT_TRUE(r.ok()) << "o2ctl " << args << "\n" << r.out;
    return r.out;
  }
  // The -t table of `args` has a header and `rows` rows.
  void expect_table(Guest& g, const std::string& args, std::size_t rows) {
    std::string text = out(g, args + " -t");
    auto t = o2ctl_yaml::parse_table(text);
    EXPECT_TRUE(t.problems.empty()) << "o2ctl " << args << " -t\n" << text;
    EXPECT_GE(t.header.size(), 6U) << "o2ctl " << args << " -t\n" << text;
    EXPECT_EQ(t.rows.size(), rows) << "o2ctl " << args << " -t: one row per YAML entry\n" << text;
  }
};

#define EXPECT_SHAPE(shape, args, text) \
  EXPECT_TRUE((shape).check.ok()) << "o2ctl " << (args) << ":\n" << (shape).check.str() << (text)

TEST_F(O2ctlYamlVeth, EmptyListsParseBeforeAnyTraffic) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();

  std::string y = out(g, "peer show -v");
  auto s = o2ctl_yaml::peer_show(y, true);
  EXPECT_SHAPE(s, "peer show -v", y);
  EXPECT_EQ(s.entries, 0U) << y;
  expect_table(g, "peer show", 0);

  y = out(g, "conn show");
  s = o2ctl_yaml::conn_show(y);
  EXPECT_SHAPE(s, "conn show", y);
  EXPECT_EQ(s.entries, 0U) << y;
  expect_table(g, "conn show", 0);

  y = out(g, "fault list");
  s = o2ctl_yaml::fault_list(y);
  EXPECT_SHAPE(s, "fault list", y);
  EXPECT_EQ(s.entries, 0U) << y;
  expect_table(g, "fault list", 0);

  y = out(g, "stats -v");
  s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, "stats -v", y);
  EXPECT_EQ(s.entries, 3U) << "0@lo and the two o2ib0 NIs\n" << y;
  EXPECT_EQ(s.nested, 0U) << y;
  expect_table(g, "stats -v", 3);
}

TEST_F(O2ctlYamlVeth, EveryCommandsYamlParsesAfterAPing) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod(g, kBothEnds).ok()) << bed().test_log();
  expect_ping_ok(g, kNid2, std::string("--source ") + kNid1);
  // A rule that never fires (nobody owns .77), so that the list has one.
  RunResult r = o2ctl(g, "fault add cm-delay timewait_exit --delay 1 --peer 192.168.1.77@o2ib0");
  ASSERT_EQ(r.status, 0) << r.out;

  for (bool v : {false, true}) {
    std::string args = v ? "net show -v" : "net show";
    std::string y = out(g, args);
    auto s = o2ctl_yaml::net_show(y, v);
    EXPECT_SHAPE(s, args, y);
    EXPECT_EQ(s.entries, 2U) << "lo and o2ib0\n" << y;
    EXPECT_EQ(s.nested, 3U) << y;
    expect_table(g, args, s.nested);
  }

  for (bool v : {false, true}) {
    std::string args = v ? "peer show -v" : "peer show";
    std::string y = out(g, args);
    auto s = o2ctl_yaml::peer_show(y, v);
    EXPECT_SHAPE(s, args, y);
    // .2 is a peer of NI .1, and .1 one of NI .2.
    EXPECT_GE(s.entries, 2U) << y;
    expect_table(g, args, s.entries);
  }

  std::string y = out(g, "conn show");
  auto s = o2ctl_yaml::conn_show(y);
  EXPECT_SHAPE(s, "conn show", y);
  EXPECT_GE(s.entries, 2U) << "the active end on .1, the passive one on .2\n" << y;
  expect_table(g, "conn show", s.entries);

  y = out(g, "fault list");
  s = o2ctl_yaml::fault_list(y);
  EXPECT_SHAPE(s, "fault list", y);
  EXPECT_EQ(s.entries, 1U) << y;
  expect_table(g, "fault list", 1);

  y = out(g, "stats");
  s = o2ctl_yaml::stats(y, false);
  EXPECT_SHAPE(s, "stats", y);
  EXPECT_EQ(s.entries, 3U) << y;
  expect_table(g, "stats", 3);

  y = out(g, "stats -v");
  s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, "stats -v", y);
  EXPECT_EQ(s.entries, 3U) << y;
  EXPECT_GE(s.nested, 2U) << y;
  expect_table(g, "stats -v", s.entries + s.nested);
  if (s.check.ok()) {
    // The ping went out of NI .1 to peer .2, and its reply came back.
    auto doc = YAML::Load(y);
    bool found = false;
    for (const auto& ni : doc["statistics"]) {
      if (ni["nid"].as<std::string>() != kNid1) {
        continue;
      }
      EXPECT_GE(ni["send count"].as<std::uint64_t>(), 1U) << y;
      EXPECT_GE(ni["recv count"].as<std::uint64_t>(), 1U) << y;
      for (const auto& p : ni["peers"]) {
        if (p["nid"].as<std::string>() == kNid2) {
          found = true;
          EXPECT_GE(p["send count"].as<std::uint64_t>(), 1U) << y;
          EXPECT_GE(p["recv count"].as<std::uint64_t>(), 1U) << y;
          EXPECT_GE(p["send bytes"].as<std::uint64_t>(), 1U) << y;
        }
      }
    }
    EXPECT_TRUE(found) << "no peer " << kNid2 << " under NI " << kNid1 << "\n" << y;
  }

  y = out(g, std::string("stats ") + kNid2);
  s = o2ctl_yaml::stats(y, true);
  EXPECT_SHAPE(s, "stats NID", y);
  EXPECT_GE(s.nested, 1U) << y;
  if (s.check.ok()) {
    for (const auto& ni : YAML::Load(y)["statistics"]) {
      for (const auto& p : ni["peers"]) {
        EXPECT_EQ(p["nid"].as<std::string>(), kNid2) << y;
      }
    }
  }
  expect_table(g, std::string("stats ") + kNid2, s.entries + s.nested);

  y = out(g, "version");
  s = o2ctl_yaml::version(y, true);
  EXPECT_SHAPE(s, "version", y);

  EXPECT_EQ(o2ctl(g, "fault del all").status, 0);
}

}  // namespace
}  // namespace o2it
