// o2lnd's configuration file (o2ctl/src/config.h) and o2ctl export /
// import on the fake kernel: what a file means, every error it can hold
// named by its line, the module parameters it loads o2lnd with, and what
// import does to a loaded module.
#include "o2ctl/config.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2ctl/cli.h"
#include "o2lnd/backend.h"

namespace o2ctl {
namespace {

namespace fs = std::filesystem;
using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_ni;
using o2lnd::testing::make_route;

constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;   // 192.168.1.1@o2ib0
constexpr std::uint64_t kLocal1 = 0x00050001c0a80201ULL;  // 192.168.2.1@o2ib1
constexpr std::uint64_t kGw = 0x00050000c0a80102ULL;      // 192.168.1.2@o2ib0
constexpr std::uint32_t kO2ib2 = 0x00050002U;

// What `o2ctl export` writes for a router on two networks.
constexpr std::string_view kOurs = R"(# o2lnd's configuration (o2ctl export)
net:
    - net type: o2ib0
      local NI(s):
        - interfaces:
              0: eth0
    - net type: o2ib1
      local NI(s):
        - interfaces:
              0: eth1
        - interfaces:
              0: eth2
route:
    - net: o2ib2
      gateway: 192.168.1.2@o2ib0
      hop: 2
      priority: 1
tunables:
    forwarding: enabled
    peer_credits: 16
    conns_per_peer: 2
)";

// An `lnetctl export` of a Lustre 2.15 router (abridged, as it prints).
constexpr std::string_view kLnetctl = R"(net:
    - net type: lo
      local NI(s):
        - nid: 0@lo
          status: up
    - net type: o2ib
      local NI(s):
        - nid: 192.168.1.1@o2ib
          status: up
          interfaces:
              0: ib0
          tunables:
              peer_timeout: 180
              peer_credits: 8
              peer_buffer_credits: 0
              credits: 256
          lnd tunables:
              peercredits_hiw: 4
              map_on_demand: 1
              concurrent_sends: 8
              fmr_pool_size: 512
              fmr_flush_trigger: 384
              fmr_cache: 1
              ntx: 512
              conns_per_peer: 1
          CPT: "[0]"
route:
    - net: o2ib3
      gateway: 192.168.1.9@o2ib
      hop: -1
      priority: 0
      health_sensitivity: 1
peer:
    - primary nid: 192.168.1.9@o2ib
      Multi-Rail: True
      peer ni:
        - nid: 192.168.1.9@o2ib
          state: NA
routing:
    enable: 1
buffers:
    tiny: 512
    small: 4096
    large: 256
global:
    numa_range: 0
    max_interfaces: 200
    discovery: 1
    drop_asym_route: 0
)";

TEST(ConfigFile, OursReadsAsItWasWritten) {
  auto c = config::parse(kOurs);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->nets.size(), 3U);
  EXPECT_EQ(c->nets[0], (config::NetIf{"o2ib0", "eth0"}));
  EXPECT_EQ(c->nets[2], (config::NetIf{"o2ib1", "eth2"}));
  ASSERT_EQ(c->routes.size(), 1U);
  EXPECT_EQ(c->routes[0], (config::Route{"o2ib2", "192.168.1.2@o2ib0", 2, 1}));
  ASSERT_EQ(c->tunables.size(), 3U);
  EXPECT_EQ(c->tunables[0], (std::pair<std::string, std::string>{"forwarding", "enabled"}));
  EXPECT_EQ(c->tunables[1], (std::pair<std::string, std::string>{"peer_credits", "16"}));
  EXPECT_TRUE(c->skipped.empty());
  // printed and read again: the same configuration
  auto again = config::parse(config::to_yaml(*c));
  ASSERT_TRUE(again.ok()) << again.error().message << "\n" << config::to_yaml(*c);
  EXPECT_EQ(again->nets, c->nets);
  EXPECT_EQ(again->routes, c->routes);
  EXPECT_EQ(again->tunables, c->tunables);
}

TEST(ConfigFile, AnLnetctlExportOfALustreRouterReadsWithWhatO2lndSkipsNamed) {
  auto c = config::parse(kLnetctl);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->nets.size(), 1U);
  EXPECT_EQ(c->nets[0], (config::NetIf{"o2ib0", "ib0"}));
  ASSERT_EQ(c->routes.size(), 1U);
  EXPECT_EQ(c->routes[0], (config::Route{"o2ib3", "192.168.1.9@o2ib0", -1, 0}));
  // routing: enable: 1 is forwarding
  ASSERT_EQ(c->tunables.size(), 1U);
  EXPECT_EQ(c->tunables[0], (std::pair<std::string, std::string>{"forwarding", "enabled"}));
  std::string skipped;
  for (const auto& s : c->skipped) {
    skipped += s + "\n";
  }
  for (const char* what : {"section 'peer'", "section 'buffers'", "section 'global'",
                           "line 12: tunables of o2ib0 on ib0", "lnd tunables of o2ib0 on ib0",
                           "CPT of o2ib0 on ib0"}) {
    EXPECT_NE(skipped.find(what), std::string::npos) << what << " in\n" << skipped;
  }
}

struct BadFile {
  const char* name;
  const char* text;
  const char* error;  // the message, line included
};

void PrintTo(const BadFile& b, std::ostream* os) { *os << b.name; }

class ConfigFileError : public ::testing::TestWithParam<BadFile> {};

TEST_P(ConfigFileError, NamesTheLineAndWhatIsWrong) {
  auto c = config::parse(GetParam().text);
  ASSERT_FALSE(c.ok()) << GetParam().text;
  EXPECT_EQ(c.error().errnum, EINVAL);
  EXPECT_EQ(c.error().message, GetParam().error);
}

constexpr const char* kNet0 =
    "net:\n  - net type: o2ib0\n    local NI(s):\n"
    "      - interfaces: {0: eth0}\n";

const BadFile kBadFiles[] = {
    {"not_yaml", "net: [\n", "line 2: not YAML: end of sequence flow not found"},
    {"not_a_map", "- o2ib0\n",
     "not a configuration: the file must be a YAML map with a 'net' section"},
    {"empty", "", "not a configuration: the file must be a YAML map with a 'net' section"},
    {"no_net", "tunables:\n  peer_credits: 8\n",
     "no o2ib network: the 'net' section must list one"},
    {"unknown_section", "net: []\nnets: []\n",
     "line 2: unknown section 'nets' (o2lnd takes net, route, routing and tunables)"},
    {"net_not_a_list", "net: o2ib0\n", "line 1: net must be a list of networks"},
    {"tcp_net", "net:\n  - net type: tcp0\n    local NI(s): [{interfaces: {0: eth0}}]\n",
     "line 2: net type 'tcp0': o2lnd drives o2ib networks only"},
    {"bad_net_name", "net:\n  - net type: o2ib-x\n    local NI(s): [{interfaces: {0: eth0}}]\n",
     "line 2: net type 'o2ib-x' is not a network name"},
    {"no_nis", "net:\n  - net type: o2ib0\n", "line 2: net o2ib0 has no 'local NI(s)' list"},
    {"no_interfaces", "net:\n  - net type: o2ib0\n    local NI(s):\n      - nid: 1.2.3.4@o2ib\n",
     "line 4: an NI of o2ib0 without 'interfaces'"},
    {"two_interfaces",
     "net:\n  - net type: o2ib0\n    local NI(s):\n      - interfaces: {0: eth0, 1: eth1}\n",
     "line 4: an NI of o2ib0 has 2 interfaces: o2lnd takes one per NI (list them as NIs)"},
    {"bad_interface",
     "net:\n  - net type: o2ib0\n    local NI(s):\n      - interfaces: {0: \"eth0 x\"}\n",
     "line 4: 'eth0 x' is not an interface name"},
    {"interface_too_long",
     "net:\n  - net type: o2ib0\n    local NI(s):\n      - interfaces: {0: abcdefghijklmnop}\n",
     "line 4: 'abcdefghijklmnop' is not an interface name"},
    {"ni_twice",
     "net:\n  - net type: o2ib0\n    local NI(s):\n      - interfaces: {0: eth0}\n"
     "      - interfaces: {0: eth0}\n",
     "line 5: o2ib0 on eth0 is listed twice"},
    {"route_without_gateway", "route:\n  - net: o2ib1\n",
     "line 2: a route needs 'net' and 'gateway'"},
    {"route_bad_gateway", "route:\n  - net: o2ib1\n    gateway: 1.2.3@o2ib0\n",
     "line 3: gateway '1.2.3@o2ib0' is not a NID: too few octets in IPv4 address '1.2.3' "
     "(expected 4)"},
    {"route_tcp_gateway", "route:\n  - net: o2ib1\n    gateway: 1.2.3.4@tcp\n",
     "line 3: gateway 1.2.3.4@tcp0 is not on an o2ib network"},
    {"route_hop_zero", "route:\n  - net: o2ib1\n    gateway: 1.2.3.4@o2ib0\n    hop: 0\n",
     "line 4: hop must be -1 (not given) or 1..255"},
    {"route_hop_big", "route:\n  - net: o2ib1\n    gateway: 1.2.3.4@o2ib0\n    hop: 256\n",
     "line 4: hop must be an integer in -1..255, not '256'"},
    {"route_priority_negative",
     "route:\n  - net: o2ib1\n    gateway: 1.2.3.4@o2ib0\n    priority: -1\n",
     "line 4: priority must be an integer in 0..2147483647, not '-1'"},
    {"route_twice",
     "route:\n  - {net: o2ib1, gateway: 1.2.3.4@o2ib0}\n  - {net: o2ib1, gateway: 1.2.3.4@o2ib0}\n",
     "line 3: the route to o2ib1 via 1.2.3.4@o2ib0 is listed twice"},
    {"gateway_off_net", "route:\n  - {net: o2ib1, gateway: 1.2.3.4@o2ib7}\n",
     "line 2: gateway 1.2.3.4@o2ib7 is not on a configured network"},
    {"route_to_a_local_net", "route:\n  - {net: o2ib0, gateway: 1.2.3.4@o2ib0}\n",
     "line 2: a route to o2ib0, which is a configured network"},
    {"unknown_tunable", "tunables:\n  peer_credit: 8\n", "line 2: unknown tunable 'peer_credit'"},
    {"networks_is_not_a_tunable", "tunables:\n  networks: o2ib0(eth0)\n",
     "line 2: unknown tunable 'networks'"},
    {"tunable_not_a_number", "tunables:\n  peer_credits: eight\n",
     "line 2: peer_credits must be an integer in -2147483648..2147483647, not 'eight'"},
    {"tunable_twice", "tunables:\n  ntx: 8\n  ntx: 9\n", "line 3: tunable 'ntx' is set twice"},
    {"forwarding_bogus", "tunables:\n  forwarding: yes\n",
     "line 2: forwarding must be enabled or disabled, not 'yes'"},
    {"routing_without_enable", "routing:\n  on: 1\n",
     "line 2: routing must be a map with 'enable: 0|1'"},
};

// The sections after kNet0 (each bad file names its own line as if kNet0
// were not there: the cases add it in front and count from there).
std::vector<BadFile> bad_files() {
  std::vector<BadFile> out;
  static std::vector<std::string> texts;
  static std::vector<std::string> errors;
  texts.reserve(std::size(kBadFiles));
  errors.reserve(std::size(kBadFiles));
  for (const auto& b : kBadFiles) {
    const std::string text = b.text;
    const bool needs_net = text.rfind("route:", 0) == 0 || text.rfind("tunables:\n  ", 0) == 0 ||
                           text.rfind("routing:", 0) == 0;
    if (!needs_net || std::string(b.name) == "no_net") {
      out.push_back(b);
      continue;
    }
    // shift the line number by kNet0's four lines
    std::string err = b.error;
    std::smatch m;
    if (std::regex_search(err, m, std::regex("^line ([0-9]+)"))) {
      err = "line " + std::to_string(std::stoi(m[1]) + 4) + m.suffix().str();
    }
    texts.push_back(std::string(kNet0) + text);
    errors.push_back(err);
    out.push_back({b.name, texts.back().c_str(), errors.back().c_str()});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Config, ConfigFileError, ::testing::ValuesIn(bad_files()),
                         [](const auto& i) { return std::string(i.param.name); });

TEST(ConfigFile, ModuleOptionsCarryNetworksRoutesAndTunables) {
  auto c = config::parse(kOurs);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(
      config::module_options(*c),
      (std::vector<std::string>{"networks=\"o2ib0(eth0) o2ib1(eth1,eth2)\"",
                                "routes=\"o2ib2 2 192.168.1.2@o2ib0:1\"", "forwarding=enabled",
                                "peer_credits=16", "conns_per_peer=2"}));
  auto l = config::parse(kLnetctl);
  ASSERT_TRUE(l.ok()) << l.error().message;
  // hop -1: not given, as routes= takes it
  EXPECT_EQ(
      config::module_options(*l),
      (std::vector<std::string>{"networks=\"o2ib0(ib0)\"", "routes=\"o2ib3 192.168.1.9@o2ib0:0\"",
                                "forwarding=enabled"}));
}

// A tunable's range is the module's to check: -1 (auto, as reg_pairs
// exports it) reads.
TEST(ConfigFile, ANegativeTunableIsTheModulesToCheck) {
  auto c = config::parse(std::string(kNet0) + "tunables:\n  reg_pairs: -1\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(config::module_options(*c).back(), "reg_pairs=-1");
}

// The example installed beside the unit is a configuration import takes.
TEST(ConfigFile, TheInstalledExampleReads) {
  std::ifstream f(fs::path(O2_SOURCE_DIR) / "o2ctl" / "o2lnd.conf.example");
  std::stringstream ss;
  ss << f.rdbuf();
  auto c = config::parse(ss.str());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->nets.size(), 2U);
  EXPECT_EQ(c->routes.size(), 1U);
  EXPECT_EQ(c->tunables.size(), 3U);
  EXPECT_TRUE(c->skipped.empty());
}

// Every module parameter of the sources is a tunable, networks= and
// routes= (the sections) aside, and nothing else is.
TEST(ConfigFile, TheTunablesAreTheModulesParameters) {
  std::set<std::string> params;
  const std::regex re(R"(module_param(?:_named|_cb)?\(\s*([a-z_0-9]+)\s*,)");
  for (const auto& e : fs::recursive_directory_iterator(fs::path(O2_SOURCE_DIR) / "module")) {
    if (e.path().extension() != ".c") {
      continue;
    }
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
      params.insert((*it)[1]);
    }
  }
  ASSERT_TRUE(params.count("networks") == 1 && params.count("routes") == 1)
      << "module parameters not found under " << O2_SOURCE_DIR;
  params.erase("networks");
  params.erase("routes");
  std::set<std::string> tunables;
  for (auto t : config::tunable_names()) {
    tunables.emplace(t);
  }
  EXPECT_EQ(tunables, params);
}

// o2ctl export and import on the fake kernel, with a sysfs of their own
// and the program import would run recorded.
class ConfigCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("o2ctl-config-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "params");
    param("peer_credits", "8");
    param("forwarding", "disabled");
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  }
  void TearDown() override { fs::remove_all(dir_); }

  void param(const std::string& name, const std::string& value) {
    std::ofstream(dir_ / "params" / name) << value << "\n";
  }
  fs::path file(std::string_view text) {
    fs::path p = dir_ / "o2lnd.conf";
    std::ofstream(p) << text;
    return p;
  }
  int o2ctl(std::vector<std::string_view> args) {
    out_.str("");
    err_.str("");
    Env env{out_, err_,
            [this](const std::string&) -> o2lnd::Result<std::unique_ptr<o2lnd::Backend>> {
              if (!loaded_) {
                return o2lnd::Error{ENOENT, "cannot open /dev/o2lnd: No such file or directory"};
              }
              return std::unique_ptr<o2lnd::Backend>(std::make_unique<FakeBackend>(kernel_));
            }};
    env.params_dir = (dir_ / "params").string();
    env.run_program = [this](const std::vector<std::string>& argv) {
      ran_.push_back(argv);
      loaded_ = load_status_ == 0;
      return load_status_;
    };
    return run(args, env);
  }

  std::shared_ptr<FakeKernel> kernel_ = std::make_shared<FakeKernel>();
  fs::path dir_;
  bool loaded_ = true;
  int load_status_ = 0;
  std::vector<std::vector<std::string>> ran_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(ConfigCommand, ExportWritesWhatImportReadsBack) {
  kernel_->routes = {make_route(kO2ib2, kGw)};
  ASSERT_EQ(o2ctl({"export"}), kExitOk) << err_.str();
  auto c = config::parse(out_.str());
  ASSERT_TRUE(c.ok()) << c.error().message << "\n" << out_.str();
  EXPECT_EQ(c->nets, (std::vector<config::NetIf>{{"o2ib0", "eth0"}}));
  EXPECT_EQ(c->routes, (std::vector<config::Route>{{"o2ib2", "192.168.1.2@o2ib0", 1, 0}}));
  EXPECT_EQ(c->tunables, (std::vector<std::pair<std::string, std::string>>{
                             {"forwarding", "disabled"}, {"peer_credits", "8"}}));
}

TEST_F(ConfigCommand, ImportLoadsAnUnloadedModuleWithTheFilesParameters) {
  loaded_ = false;
  auto p = file(kOurs);
  ASSERT_EQ(o2ctl({"import", p.c_str(), "--module", "/lib/o2lnd.ko"}), kExitOk) << err_.str();
  ASSERT_EQ(ran_.size(), 1U);
  EXPECT_EQ(ran_[0], (std::vector<std::string>{
                         "insmod", "/lib/o2lnd.ko", "networks=\"o2ib0(eth0) o2ib1(eth1,eth2)\"",
                         "routes=\"o2ib2 2 192.168.1.2@o2ib0:1\"", "forwarding=enabled",
                         "peer_credits=16", "conns_per_peer=2"}));
  EXPECT_NE(out_.str().find("loaded o2lnd"), std::string::npos) << out_.str();
  // without --module: modprobe
  loaded_ = false;
  ran_.clear();
  ASSERT_EQ(o2ctl({"import", p.c_str()}), kExitOk) << err_.str();
  ASSERT_EQ(ran_.size(), 1U);
  EXPECT_EQ(ran_[0][0], "modprobe");
  EXPECT_EQ(ran_[0][1], "o2lnd");
}

TEST_F(ConfigCommand, ALoadThatFailsSaysSoAndWhere) {
  loaded_ = false;
  load_status_ = 1;
  auto p = file(kNet0);
  EXPECT_EQ(o2ctl({"import", p.c_str()}), kExitFailure);
  EXPECT_NE(err_.str().find("modprobe o2lnd networks=\"o2ib0(eth0)\" failed (exit 1); the kernel "
                            "log says why"),
            std::string::npos)
      << err_.str();
}

TEST_F(ConfigCommand, ImportAddsTheNisALoadedModuleLacks) {
  std::vector<std::pair<std::string, std::string>> added;
  kernel_->on_net_cfg = [&](o2lnd_ioc_net_cfg& c, bool add) {
    EXPECT_TRUE(add);
    added.emplace_back(c.net, c.ifname);
    c.nid = kLocal1;
    return 0;
  };
  auto p = file(
      "net:\n  - net type: o2ib0\n    local NI(s): [{interfaces: {0: eth0}}]\n"
      "  - net type: o2ib1\n    local NI(s): [{interfaces: {0: eth1}}]\n"
      "tunables:\n  peer_credits: 8\n");
  ASSERT_EQ(o2ctl({"import", p.c_str()}), kExitOk) << err_.str();
  EXPECT_EQ(added, (std::vector<std::pair<std::string, std::string>>{{"o2ib1", "eth1"}}));
  EXPECT_NE(out_.str().find("added 192.168.2.1@o2ib1 on eth1"), std::string::npos) << out_.str();
  EXPECT_TRUE(ran_.empty());
}

TEST_F(ConfigCommand, ImportDelDeletesTheFilesNisTheModuleHasAndIsIdempotent) {
  std::vector<std::pair<std::string, std::string>> deleted;
  kernel_->on_net_cfg = [&](o2lnd_ioc_net_cfg& c, bool add) {
    EXPECT_FALSE(add);
    deleted.emplace_back(c.net, c.ifname);
    c.count = 1;
    return 0;
  };
  auto p = file(
      "net:\n  - net type: o2ib0\n    local NI(s): [{interfaces: {0: eth0}}]\n"
      "  - net type: o2ib1\n    local NI(s): [{interfaces: {0: eth1}}]\n"
      "tunables:\n  peer_credits: 99\n");
  ASSERT_EQ(o2ctl({"import", p.c_str(), "--del"}), kExitOk) << err_.str();
  EXPECT_EQ(deleted, (std::vector<std::pair<std::string, std::string>>{{"o2ib0", "eth0"}}));
  EXPECT_EQ(out_.str(), "deleted o2ib0 on eth0\n");
  EXPECT_NE(err_.str().find("set at load and stay until o2lnd unloads"), std::string::npos)
      << err_.str();
  // the module no longer has it: nothing to do
  kernel_->nis = {make_ni(O2LND_LO_NID, "lo", "")};
  deleted.clear();
  ASSERT_EQ(o2ctl({"import", p.c_str(), "--del"}), kExitOk) << err_.str();
  EXPECT_TRUE(deleted.empty());
  EXPECT_EQ(out_.str(), "o2lnd has none of the file's NIs\n");
}

// forwarding is the module's one run-time parameter: import sets it on a
// loaded module (through sysfs), as it adds NIs.
TEST_F(ConfigCommand, ImportSetsForwardingOnALoadedModule) {
  auto p = file(std::string(kNet0) + "tunables:\n  forwarding: enabled\n  peer_credits: 8\n");
  ASSERT_EQ(o2ctl({"import", p.c_str()}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "forwarding enabled\n");
  std::ifstream f(dir_ / "params" / "forwarding");
  std::string v;
  std::getline(f, v);
  EXPECT_EQ(v, "enabled");
  ASSERT_EQ(o2ctl({"import", p.c_str()}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "o2lnd already has this configuration\n");
}

TEST_F(ConfigCommand, ImportChangesNothingWhenTheLoadedModulesParametersDiffer) {
  kernel_->routes = {make_route(kO2ib2, kGw)};
  int calls = 0;
  kernel_->on_net_cfg = [&](o2lnd_ioc_net_cfg&, bool) {
    calls++;
    return 0;
  };
  auto p = file(
      "net:\n  - net type: o2ib0\n    local NI(s): [{interfaces: {0: eth0}}]\n"
      "  - net type: o2ib1\n    local NI(s): [{interfaces: {0: eth1}}]\n"
      "tunables:\n  peer_credits: 16\n");
  EXPECT_EQ(o2ctl({"import", p.c_str()}), kExitFailure);
  EXPECT_EQ(calls, 0) << "an NI was added";
  const std::string err = err_.str();
  EXPECT_NE(err.find("nothing changed"), std::string::npos) << err;
  EXPECT_NE(err.find("peer_credits is 8, the file says 16"), std::string::npos) << err;
  EXPECT_NE(err.find("a route to o2ib2 via 192.168.1.2@o2ib0 that the file does not have"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("unload it (rmmod o2lnd) and import again"), std::string::npos) << err;
}

TEST_F(ConfigCommand, ABadFileChangesNothingAndNamesTheLine) {
  loaded_ = false;
  auto p = file(std::string(kNet0) + "tunables:\n  peer_credits: many\n");
  EXPECT_EQ(o2ctl({"import", p.c_str()}), kExitFailure);
  EXPECT_TRUE(ran_.empty());
  EXPECT_EQ(err_.str(),
            "o2ctl: import: " + p.string() +
                ": line 6: peer_credits must be an integer in -2147483648..2147483647, not "
                "'many'\n");
  EXPECT_EQ(o2ctl({"import", (dir_ / "missing.conf").c_str()}), kExitFailure);
  EXPECT_NE(err_.str().find("cannot read"), std::string::npos) << err_.str();
  EXPECT_EQ(o2ctl({"import"}), kExitUsage);
}

TEST_F(ConfigCommand, OptionsPrintsTheModprobeLineWithoutTheModule) {
  loaded_ = false;
  auto p = file(kLnetctl);
  ASSERT_EQ(o2ctl({"import", p.c_str(), "--options"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "networks=\"o2ib0(ib0)\" routes=\"o2ib3 192.168.1.9@o2ib0:0\" forwarding=enabled\n");
  EXPECT_NE(err_.str().find("skipped section 'peer'"), std::string::npos) << err_.str();
  EXPECT_TRUE(ran_.empty());
}

}  // namespace
}  // namespace o2ctl
