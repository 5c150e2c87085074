// ABI 5 routing against the fake kernel: libo2lnd's ROUTE_SHOW and
// ROUTING_SHOW wrappers, o2ctl's route show / routing show (YAML, tables,
// help, errors) and the router credit keys of peer show.
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
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
#include "o2ctl_fixture.h"
#include "o2ctl_yaml/schema.h"
#include "o2lnd/backend.h"
#include "o2lnd/device.h"
#include "o2lnd/names.h"
#include "o2lnd/nid.h"
#include <yaml-cpp/yaml.h>

namespace o2ctl {
namespace {

using o2lnd::Nid;
using o2lnd::testing::FakeBackend;
using o2lnd::testing::FakeKernel;
using o2lnd::testing::make_ni;
using o2lnd::testing::make_peer;
using o2lnd::testing::make_route;
using o2lnd::testing::make_routing;

constexpr std::uint64_t kLocal = 0x00050000c0a80101ULL;  // 192.168.1.1@o2ib0
constexpr std::uint64_t kGw = 0x00050000c0a80102ULL;     // 192.168.1.2@o2ib0
constexpr std::uint64_t kGw2 = 0x00050000c0a80103ULL;    // 192.168.1.3@o2ib0
constexpr std::uint64_t kPeer = 0x00050000c0a80104ULL;   // 192.168.1.4@o2ib0
constexpr std::uint32_t kO2ib1 = 0x00050001U;
constexpr std::uint32_t kO2ib65535 = 0x0005ffffU;
constexpr std::uint32_t kTcp3 = 0x00020003U;
constexpr std::uint64_t kMax = UINT64_MAX;
const std::string kAbi = std::to_string(O2LND_ABI_VERSION);

class RouteTest : public test_support::O2ctlTest {
 protected:
  void SetUp() override {
    kernel_->nis = {make_ni(O2LND_LO_NID, "lo", ""), make_ni(kLocal, "o2ib0", "eth0")};
  }

  // Two routes: o2ib1 via an up gateway, o2ib65535 via a down one.
  void add_routes() {
    auto r0 = make_route(kO2ib1, kGw);
    r0.sent = 10;
    r0.dropped = 0;
    auto r1 = make_route(kO2ib65535, kGw2, O2LND_HEALTH_DOWN);
    r1.hops = 3;
    r1.priority = 7;
    r1.sent = kMax;
    r1.dropped = 2;
    kernel_->routes = {r0, r1};
  }

  // A busy router: forwarding, messages waiting, negative credits.
  void busy_routing() {
    auto r = make_routing(true);
    r.waiting = 3;
    r.waiting_max = 9;
    r.held_rx = 3;
    r.pools[O2LND_RTR_LARGE].credits = -3;
    r.pools[O2LND_RTR_LARGE].min_credits = -5;
    r.pools[O2LND_RTR_LARGE].taken = 77;
    r.pools[O2LND_RTR_TINY].taken = kMax;
    r.forwarded = 1000;
    r.forwarded_bytes = kMax;
    r.dropped_no_route = 1;
    r.dropped_down = 2;
    r.dropped_timeout = 3;
    r.dropped_closed = 4;
    r.dropped_error = 5;
    kernel_->routing = r;
  }
};

#define EXPECT_SHAPE(shape, text) EXPECT_TRUE((shape).check.ok()) << (shape).check.str() << (text)

// ---- libo2lnd ---------------------------------------------------------------------

TEST_F(RouteTest, RoutesWalksRouteShowUntilEnoentAndDecodesEveryField) {
  add_routes();
  auto dev = attach_ok();
  auto routes = dev.routes();
  ASSERT_TRUE(routes.ok()) << routes.error().message;
  ASSERT_EQ(routes->size(), 2U);
  const auto& r0 = (*routes)[0];
  EXPECT_EQ(r0.index, 0U);
  EXPECT_EQ(r0.count, 2U);
  EXPECT_EQ(r0.net, kO2ib1);
  EXPECT_EQ(r0.gateway, Nid(kGw));
  EXPECT_EQ(r0.hops, 1U);
  EXPECT_TRUE(r0.up());
  EXPECT_EQ(r0.sent, 10U);
  const auto& r1 = (*routes)[1];
  EXPECT_EQ(r1.index, 1U);
  EXPECT_EQ(r1.net, kO2ib65535);
  EXPECT_EQ(r1.gateway, Nid(kGw2));
  EXPECT_EQ(r1.hops, 3U);
  EXPECT_EQ(r1.priority, 7U);
  EXPECT_FALSE(r1.up());
  EXPECT_EQ(r1.sent, kMax);
  EXPECT_EQ(r1.dropped, 2U);
  EXPECT_EQ(kernel_->count(O2LND_IOC_ROUTE_SHOW), 3U) << "two routes and the ENOENT";
}

TEST_F(RouteTest, RouteShowSendsTheIndexWithCleanHeaderAndZeroedOutputs) {
  add_routes();
  auto dev = attach_ok();
  ASSERT_TRUE(dev.route_show(1).ok());
  auto sent = kernel_->last<o2lnd_ioc_route>(O2LND_IOC_ROUTE_SHOW);
  EXPECT_EQ(sent.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_route));
  EXPECT_EQ(sent.hdr.flags, 0U);
  EXPECT_EQ(sent.hdr.reserved, 0U);
  EXPECT_EQ(sent.index, 1U);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&sent);                       // NOLINT
  EXPECT_TRUE(std::all_of(bytes + offsetof(o2lnd_ioc_route, count), bytes + sizeof(sent),  // NOLINT
                          [](unsigned char b) { return b == 0; }))
      << "every output field is sent zeroed";
}

TEST_F(RouteTest, RouteShowPastTheLastIsEnoentWithTheIndexInTheMessage) {
  add_routes();
  auto dev = attach_ok();
  auto past = dev.route_show(2);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().errnum, ENOENT);
  EXPECT_EQ(past.error().message, "O2LND_IOC_ROUTE_SHOW of route 2: No such file or directory");
}

TEST_F(RouteTest, RoutesOfANodeWithoutRoutesIsEmpty) {
  auto dev = attach_ok();
  auto routes = dev.routes();
  ASSERT_TRUE(routes.ok()) << routes.error().message;
  EXPECT_TRUE(routes->empty());
  EXPECT_EQ(kernel_->count(O2LND_IOC_ROUTE_SHOW), 1U);
}

TEST_F(RouteTest, RoutesPassesOtherErrorsOn) {
  for (int e : {ENOTTY, EPROTO, EINVAL, EFAULT}) {
    kernel_->fail[O2LND_IOC_ROUTE_SHOW] = e;
    auto dev = attach_ok();
    auto routes = dev.routes();
    ASSERT_FALSE(routes.ok());
    EXPECT_EQ(routes.error().errnum, e);
  }
}

TEST_F(RouteTest, RoutingDecodesEveryFieldAndSendsACleanHeader) {
  busy_routing();
  auto dev = attach_ok();
  auto r = dev.routing();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->forwarding);
  EXPECT_EQ(r->peer_buffer_credits, 8U);
  EXPECT_EQ(r->router_timeout_s, 50U);
  EXPECT_EQ(r->waiting, 3U);
  EXPECT_EQ(r->waiting_max, 9U);
  EXPECT_EQ(r->held_rx, 3U);
  EXPECT_EQ(r->pools[O2LND_RTR_TINY].buffer_size, 0U);
  EXPECT_EQ(r->pools[O2LND_RTR_TINY].taken, kMax);
  EXPECT_EQ(r->pools[O2LND_RTR_SMALL].nbuffers, 256U);
  EXPECT_EQ(r->pools[O2LND_RTR_SMALL].credits, 256);
  EXPECT_EQ(r->pools[O2LND_RTR_LARGE].buffer_size, 1U << 20);
  EXPECT_EQ(r->pools[O2LND_RTR_LARGE].credits, -3);
  EXPECT_EQ(r->pools[O2LND_RTR_LARGE].min_credits, -5);
  EXPECT_EQ(r->pools[O2LND_RTR_LARGE].taken, 77U);
  EXPECT_EQ(r->forwarded, 1000U);
  EXPECT_EQ(r->forwarded_bytes, kMax);
  EXPECT_EQ(r->dropped_no_route, 1U);
  EXPECT_EQ(r->dropped_down, 2U);
  EXPECT_EQ(r->dropped_timeout, 3U);
  EXPECT_EQ(r->dropped_closed, 4U);
  EXPECT_EQ(r->dropped_error, 5U);
  auto sent = kernel_->last<o2lnd_ioc_routing>(O2LND_IOC_ROUTING_SHOW);
  EXPECT_EQ(sent.hdr.abi_version, static_cast<std::uint32_t>(O2LND_ABI_VERSION));
  EXPECT_EQ(sent.hdr.size, sizeof(o2lnd_ioc_routing));
  EXPECT_EQ(sent.hdr.flags, 0U);
  EXPECT_EQ(sent.hdr.reserved, 0U);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&sent);  // NOLINT
  EXPECT_TRUE(std::all_of(bytes + sizeof(sent.hdr), bytes + sizeof(sent), [](unsigned char b) {
    return b == 0;
  })) << "ROUTING_SHOW has no inputs besides the header";
}

TEST_F(RouteTest, RoutingErrorNamesTheCommand) {
  kernel_->fail[O2LND_IOC_ROUTING_SHOW] = ENOTTY;
  auto dev = attach_ok();
  auto r = dev.routing();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, ENOTTY);
  EXPECT_EQ(r.error().message.rfind("O2LND_IOC_ROUTING_SHOW: ", 0), 0U) << r.error().message;
}

// ---- o2ctl route show ---------------------------------------------------------------

TEST_F(RouteTest, RouteShowPrintsTheDocumentedKeys) {
  add_routes();
  EXPECT_EQ(output({"route", "show"}),
            "route:\n"
            "    - net: o2ib1\n"
            "      gateway: 192.168.1.2@o2ib0\n"
            "      hop: 1\n"
            "      priority: 0\n"
            "      state: up\n"
            "      sent: 10\n"
            "      dropped: 0\n"
            "    - net: o2ib65535\n"
            "      gateway: 192.168.1.3@o2ib0\n"
            "      hop: 3\n"
            "      priority: 7\n"
            "      state: down\n"
            "      sent: 18446744073709551615\n"
            "      dropped: 2\n");
  EXPECT_EQ(err(), "");
}

TEST_F(RouteTest, RouteShowWithoutRoutesIsAnEmptyList) {
  EXPECT_EQ(output({"route", "show"}), "route: []\n");
  EXPECT_EQ(output({"route", "show", "-t"}), "NET  GATEWAY  HOP  PRIO  STATE  SENT  DROPPED\n");
}

TEST_F(RouteTest, RouteShowFiltersByRemoteNet) {
  add_routes();
  std::string y = output({"route", "show", "--net", "o2ib65535"});
  EXPECT_EQ(y.find("o2ib1\n"), std::string::npos) << y;
  EXPECT_NE(y.find("    - net: o2ib65535\n"), std::string::npos) << y;
  EXPECT_EQ(output({"route", "show", "--net", "o2ib9"}), "route: []\n");
}

TEST_F(RouteTest, RouteShowOfAnotherLndTypeAndUnknownHealthStillParse) {
  auto r = make_route(kTcp3, kGw, 9);
  kernel_->routes = {r};
  std::string y = output({"route", "show"});
  EXPECT_NE(y.find("    - net: tcp3\n"), std::string::npos) << y;
  EXPECT_NE(y.find("      state: \"unknown(9)\"\n"), std::string::npos) << y;
  EXPECT_NO_THROW((void)YAML::Load(y)) << y;
}

TEST_F(RouteTest, RouteShowTableHasOneAlignedRowPerRoute) {
  add_routes();
  EXPECT_EQ(output({"route", "show", "-t"}),
            "NET        GATEWAY            HOP  PRIO  STATE                  SENT  DROPPED\n"
            "o2ib1      192.168.1.2@o2ib0    1     0  up                       10        0\n"
            "o2ib65535  192.168.1.3@o2ib0    3     7  down   18446744073709551615        2\n");
  EXPECT_EQ(output({"route", "show", "--table"}), output({"route", "show", "-t"}));
}

TEST_F(RouteTest, RouteShowErrors) {
  EXPECT_EQ(o2ctl({"route", "show", "o2ib1"}), kExitUsage);
  EXPECT_NE(err().find("o2ctl route show: unexpected argument 'o2ib1'"), std::string::npos)
      << err();
  EXPECT_EQ(o2ctl({"route", "show", "-v"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0) << "usage errors send nothing";
  kernel_->fail[O2LND_IOC_ROUTE_SHOW] = ENOTTY;
  EXPECT_EQ(o2ctl({"route", "show"}), kExitFailure);
  EXPECT_EQ(err(),
            "o2ctl: route show: the o2lnd module does not know this command (module too old for "
            "o2ctl ABI " +
                kAbi + "; load a matching module)\n");
  kernel_->fail[O2LND_IOC_ROUTE_SHOW] = EPROTO;
  EXPECT_EQ(o2ctl({"route", "show"}), kExitFailure);
  EXPECT_NE(err().find("o2ctl: route show: ABI mismatch"), std::string::npos) << err();
}

// ---- o2ctl routing show -------------------------------------------------------------

TEST_F(RouteTest, RoutingShowPrintsTheDocumentedKeys) {
  busy_routing();
  EXPECT_EQ(output({"routing", "show"}),
            "routing:\n"
            "    forwarding: enabled\n"
            "    peer buffer credits: 8\n"
            "    router timeout: 50\n"
            "    waiting: 3\n"
            "    waiting max: 9\n"
            "    held rx: 3\n"
            "    forwarded: 1000\n"
            "    forwarded bytes: 18446744073709551615\n"
            "    dropped no route: 1\n"
            "    dropped down: 2\n"
            "    dropped timeout: 3\n"
            "    dropped closed: 4\n"
            "    dropped error: 5\n"
            "    buffers:\n"
            "        - pool: tiny\n"
            "          size: 0\n"
            "          nbuffers: 512\n"
            "          credits: 512\n"
            "          min credits: 512\n"
            "          taken: 18446744073709551615\n"
            "        - pool: small\n"
            "          size: 4096\n"
            "          nbuffers: 256\n"
            "          credits: 256\n"
            "          min credits: 256\n"
            "          taken: 0\n"
            "        - pool: large\n"
            "          size: 1048576\n"
            "          nbuffers: 32\n"
            "          credits: -3\n"
            "          min credits: -5\n"
            "          taken: 77\n");
}

TEST_F(RouteTest, RoutingShowOfANonRouterSaysDisabled) {
  kernel_->routing = make_routing(false);
  std::string y = output({"routing", "show"});
  EXPECT_NE(y.find("    forwarding: disabled\n"), std::string::npos) << y;
}

TEST_F(RouteTest, RoutingShowTableIsTheStateThenOneRowPerPool) {
  busy_routing();
  std::string t = output({"routing", "show", "-t"});
  EXPECT_EQ(t,
            "FORWARDING  PEER_CRED  TIMEOUT  WAIT  WAIT_MAX  HELD_RX   FWD             FWD_BYTES"
            "  NO_ROUTE  DOWN  TMO  CLOSED  ERR\n"
            "enabled             8       50     3         9        3  1000  18446744073709551615"
            "         1     2    3       4    5\n"
            "\n"
            "POOL      SIZE     CRED  MIN                 TAKEN\n"
            "tiny         0  512/512  512  18446744073709551615\n"
            "small     4096  256/256  256                     0\n"
            "large  1048576    -3/32   -5                    77\n");
  auto blank = t.find("\n\n");
  ASSERT_NE(blank, std::string::npos) << t;
  auto state = o2ctl_yaml::parse_table(t.substr(0, blank + 1));
  EXPECT_TRUE(state.problems.empty()) << t;
  EXPECT_EQ(state.rows.size(), 1U) << t;
  auto pools = o2ctl_yaml::parse_table(t.substr(blank + 2));
  EXPECT_TRUE(pools.problems.empty()) << t;
  EXPECT_EQ(pools.header, (std::vector<std::string>{"POOL", "SIZE", "CRED", "MIN", "TAKEN"}));
  ASSERT_EQ(pools.rows.size(), 3U) << t;
  EXPECT_EQ(pools.rows[0],
            (std::vector<std::string>{"tiny", "0", "512/512", "512", "18446744073709551615"}));
  EXPECT_EQ(pools.rows[2], (std::vector<std::string>{"large", "1048576", "-3/32", "-5", "77"}));
}

TEST_F(RouteTest, RoutingShowErrors) {
  EXPECT_EQ(o2ctl({"routing", "show", "extra"}), kExitUsage);
  EXPECT_EQ(o2ctl({"routing", "show", "--net", "o2ib0"}), kExitUsage);
  EXPECT_EQ(kernel_->opens, 0);
  kernel_->fail[O2LND_IOC_ROUTING_SHOW] = ENOTTY;
  EXPECT_EQ(o2ctl({"routing", "show"}), kExitFailure);
  EXPECT_NE(err().find("o2ctl: routing show: the o2lnd module does not know this command"),
            std::string::npos)
      << err();
}

TEST_F(RouteTest, RouteAndRoutingRefuseAModuleOfAnotherAbi) {
  for (std::uint32_t abi : {O2LND_ABI_VERSION - 1U, O2LND_ABI_VERSION + 1U}) {
    kernel_->abi = abi;
    kernel_->abi_min = abi;  // accepts only its own
    for (std::vector<std::string_view> args :
         {std::vector<std::string_view>{"route", "show"}, {"routing", "show"}}) {
      EXPECT_EQ(o2ctl(args), kExitFailure) << args[0];
      EXPECT_EQ(err(), "o2ctl: o2lnd module ABI " + std::to_string(abi) + ", o2ctl speaks ABI " +
                           kAbi + ": upgrade o2ctl or load a matching module\n");
    }
  }
  EXPECT_EQ(kernel_->count(O2LND_IOC_ROUTE_SHOW) + kernel_->count(O2LND_IOC_ROUTING_SHOW), 0U);
}

TEST_F(RouteTest, HelpListsAndDocumentsBothCommands) {
  std::string help = output({"--help"});
  EXPECT_NE(help.find("  route show "), std::string::npos) << help;
  EXPECT_NE(help.find("  routing show "), std::string::npos) << help;
  std::string route = output({"route", "show", "--help"});
  for (const char* key : {"net", "gateway", "hop", "priority", "state", "sent", "dropped",
                          "route: []", "--net NET", "-t, --table"}) {
    EXPECT_NE(route.find(key), std::string::npos) << key << "\n" << route;
  }
  std::string routing = output({"routing", "show", "--help"});
  for (const char* key : {"forwarding", "peer buffer credits", "router timeout", "waiting max",
                          "held rx", "forwarded bytes", "dropped no route", "dropped down",
                          "dropped timeout", "dropped closed", "dropped error", "buffers:", "tiny",
                          "small", "large", "nbuffers", "min credits", "taken", "-t, --table"}) {
    EXPECT_NE(routing.find(key), std::string::npos) << key << "\n" << routing;
  }
  EXPECT_NE(output({"route", "--help"}).find("o2ctl route show"), std::string::npos);
  EXPECT_NE(output({"routing", "--help"}).find("o2ctl routing show"), std::string::npos);
}

// ---- peer show: router credits ---------------------------------------------------------

TEST_F(RouteTest, PeerShowHasTheRouterCreditKeysAfterTheTxCreditKeys) {
  auto p = make_peer(kPeer, O2LND_PEER_ESTABLISHED);
  p.tx_credits = 8;
  p.tx_credits_max = 8;
  p.tx_credits_min = 7;
  p.rtr_credits = -2;
  p.rtr_credits_max = 8;
  p.rtr_credits_min = -4;
  p.rtr_queued = 2;
  kernel_->peers[1] = {p};
  std::string y = output({"peer", "show"});
  EXPECT_NE(y.find("      credit queued: 0\n"
                   "      router credits: -2\n"
                   "      router credits max: 8\n"
                   "      router credits min: -4\n"
                   "      router queued: 2\n"
                   "      health: up\n"),
            std::string::npos)
      << y;
  for (bool v : {false, true}) {
    y = output(v ? std::vector<std::string_view>{"peer", "show", "-v"}
                 : std::vector<std::string_view>{"peer", "show"});
    auto s = o2ctl_yaml::peer_show(y, v);
    EXPECT_SHAPE(s, y);
    EXPECT_EQ(YAML::Load(y)["peer"][0]["router credits min"].as<int>(), -4);
  }
}

TEST_F(RouteTest, PeerShowVerboseTableAddsTheRouterCreditColumns) {
  auto p = make_peer(kPeer, O2LND_PEER_ESTABLISHED);
  p.tx_credits_max = 8;
  p.rtr_credits = -2;
  p.rtr_credits_max = 8;
  p.rtr_credits_min = -4;
  p.rtr_queued = 2;
  kernel_->peers[1] = {p};
  auto plain = o2ctl_yaml::parse_table(output({"peer", "show", "-t"}));
  EXPECT_EQ(plain.header.back(), "HEALTH") << "without -v the table is as before";
  std::string t = output({"peer", "show", "-t", "-v"});
  auto verbose = o2ctl_yaml::parse_table(t);
  EXPECT_TRUE(verbose.problems.empty()) << t;
  ASSERT_EQ(verbose.header.size(), plain.header.size() + 3) << t;
  EXPECT_EQ(std::vector<std::string>(verbose.header.end() - 3, verbose.header.end()),
            (std::vector<std::string>{"RTR", "RMIN", "RQ"}));
  ASSERT_EQ(verbose.rows.size(), 1U);
  EXPECT_EQ(std::vector<std::string>(verbose.rows[0].end() - 3, verbose.rows[0].end()),
            (std::vector<std::string>{"-2/8", "-4", "2"}));
}

}  // namespace
}  // namespace o2ctl
