// o2ctl's YAML on the real module: in one guest with a veth pair (see
// veth_test.cc), before and after a ping across it, every command's YAML
// output is parsed on the host with yaml-cpp and checked for its structure
// (keys, and values that are integers, NID strings, booleans), as the host
// unit tests check it on a fake kernel (o2ctl_yaml/schema.h); and each -t
// table has a header and one row per YAML entry.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fixture.h"
#include "o2ctl_yaml/schema.h"
#include <yaml-cpp/yaml.h>

namespace o2it {
namespace {

namespace fs = std::filesystem;

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

// o2lnd's configuration file on the real module: what `o2ctl export`
// writes loads the same module again with `o2ctl import` (networks,
// routes and tunables as its parameters), puts back an NI deleted at run
// time, and refuses, changing nothing, a file whose load-time parameters
// differ from the loaded module's or that is malformed.
TEST_F(O2ctlYamlVeth, AnExportedConfigurationLoadsTheSameModuleAgain) {
  Guest& g = guest("g1");
  ASSERT_TRUE(insmod_with(g, kBothEnds,
                          sh_quote("routes=\"o2ib5 2 192.168.1.9@o2ib0:3\"") + " peer_credits=16")
                  .ok())
      << bed().test_log();
  const std::string first = out(g, "export");
  for (const char* want :
       {"net type: o2ib0", "0: veth0", "0: veth1", "net: o2ib5", "gateway: 192.168.1.9@o2ib0",
        "hop: 2", "priority: 3", "peer_credits: 16", "forwarding: disabled"}) {
    EXPECT_NE(first.find(want), std::string::npos) << want << " not in\n" << first;
  }
  ASSERT_TRUE(run(g, sh_quote(o2ctl_path()) + " export > /tmp/o2lnd.conf").ok());

  // unloaded, then loaded by import from the file
  ASSERT_TRUE(rmmod(g).ok());
  const std::string import = sh_quote(o2ctl_path()) + " import /tmp/o2lnd.conf";
  RunResult r = run(g, import + " --module " + sh_quote(ko_path()), 120);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_NE(r.out.find("loaded o2lnd: 2 NIs, 1 routes"), std::string::npos) << r.out;
  EXPECT_EQ(out(g, "export"), first);
  expect_ping_ok(g, kNid2, std::string("--source ") + kNid1);

  // an NI deleted at run time comes back; the one there is left alone
  ASSERT_TRUE(o2ctl(g, "net del --net o2ib0 --if veth1").ok());
  r = run(g, import, 60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_NE(r.out.find(std::string("added ") + kNid2 + " on veth1"), std::string::npos) << r.out;
  EXPECT_EQ(out(g, "export"), first);
  r = run(g, import, 60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_NE(r.out.find("o2lnd already has this configuration"), std::string::npos) << r.out;

  // forwarding, the one run-time parameter, is set on the loaded module
  r = run(g,
          "sed -e 's/forwarding: disabled/forwarding: enabled/' /tmp/o2lnd.conf > /tmp/r.conf && " +
              sh_quote(o2ctl_path()) +
              " import /tmp/r.conf && cat /sys/module/o2lnd/parameters/forwarding",
          60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_TRUE(has_line(r.out, "forwarding enabled") && has_line(r.out, "enabled")) << r.out;
  r = run(g, import, 60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_TRUE(has_line(r.out, "forwarding disabled")) << r.out;
  EXPECT_EQ(out(g, "export"), first);

  // another peer_credits and one NI less: refused, nothing changed
  ASSERT_TRUE(run(g,
                  "sed -e 's/peer_credits: 16/peer_credits: 8/' /tmp/o2lnd.conf > /tmp/o.conf"
                  " && " +
                      sh_quote(o2ctl_path()) + " net del --net o2ib0 --if veth1")
                  .ok());
  r = run(g, sh_quote(o2ctl_path()) + " import /tmp/o.conf", 60);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("peer_credits is 16, the file says 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing changed"), std::string::npos) << r.out;
  EXPECT_EQ(out(g, "net show").find("veth1"), std::string::npos) << "an NI was added";

  // a malformed file: its line named, nothing changed
  ASSERT_TRUE(run(g,
                  "printf 'net:\\n  - net type: o2ib0\\n    local NI(s):\\n"
                  "      - interfaces: {0: veth1}\\nroute:\\n  - net: o2ib7\\n' > /tmp/bad.conf")
                  .ok());
  r = run(g, sh_quote(o2ctl_path()) + " import /tmp/bad.conf", 60);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("/tmp/bad.conf: line 6: a route needs 'net' and 'gateway'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(out(g, "net show").find("veth1"), std::string::npos) << "an NI was added";

  // import --del: the file's NIs go; twice is the same as once
  r = run(g, import + " --del", 60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_NE(r.out.find("deleted o2ib0 on veth0"), std::string::npos) << r.out;
  r = run(g, import + " --del", 60);
  ASSERT_TRUE(r.ok()) << r.out;
  EXPECT_NE(r.out.find("o2lnd has none of the file's NIs"), std::string::npos) << r.out;

  // o2lnd.service's start and stop commands, as built (o2ctl, the file
  // and the module where this bed has them): loaded as exported, unloaded
  ASSERT_TRUE(rmmod(g).ok());
  std::string start;
  std::string stop;
  {
    std::ifstream unit(fs::path(o2ctl_path()).parent_path() / "o2lnd.service");
    for (std::string line; std::getline(unit, line);) {
      if (line.rfind("ExecStart=", 0) == 0) start = line.substr(10);
      if (line.rfind("ExecStop=", 0) == 0) stop = line.substr(9);
    }
  }
  const std::string installed_o2ctl = start.substr(0, start.find(' '));
  ASSERT_TRUE(installed_o2ctl.ends_with("/o2ctl") &&
              start.substr(installed_o2ctl.size()) == " import /etc/o2lnd.conf")
      << "ExecStart=" << start;
  ASSERT_EQ(stop, "/sbin/rmmod o2lnd");
  std::string cmd = sh_quote(o2ctl_path()) + start.substr(installed_o2ctl.size());
  cmd.replace(cmd.find("/etc/o2lnd.conf"), 15, "/tmp/o2lnd.conf");
  r = run(g, cmd + " --module " + sh_quote(ko_path()), 120);
  ASSERT_TRUE(r.ok()) << "ExecStart\n" << r.out;
  EXPECT_EQ(out(g, "export"), first);
  r = run(g, stop + " && ! test -e /sys/module/o2lnd", 60);
  EXPECT_TRUE(r.ok()) << "ExecStop\n" << r.out;
}

}  // namespace
}  // namespace o2it
