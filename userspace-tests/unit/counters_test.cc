// The counter lists of the uapi (include/uapi/o2lnd_counters.h) drive the
// library's decoders and o2ctl's YAML: every counter of every list is
// decoded from its field and printed under its key.
#include "o2lnd/counters.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "o2ctl/format.h"
#include "o2lnd/device.h"

namespace o2lnd {
namespace {

// Sets every counter of a list on `reply` to a distinct value (1000, 1001, ...).
#define O2LND_TEST_SET(type, name, view, key, doc) reply.name = next++;

// {key, value} of every counter of view `view` as the visitor reports it.
template <typename T, typename Visit>
std::vector<std::pair<std::string, std::uint64_t>> keyed(const T& x, std::string_view view,
                                                         Visit visit) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  visit(x, [&](const CounterInfo& c, std::uint64_t v) {
    if (c.view == view) {
      out.emplace_back(std::string(c.key), v);
    }
  });
  return out;
}

// Every "key: value" line is in `yaml`.
void expect_printed(const std::string& yaml,
                    const std::vector<std::pair<std::string, std::uint64_t>>& kv) {
  EXPECT_FALSE(kv.empty());
  for (const auto& [key, v] : kv) {
    EXPECT_NE(yaml.find(" " + key + ": " + std::to_string(v) + "\n"), std::string::npos)
        << key << " = " << v << " not in\n"
        << yaml;
  }
}

TEST(Counters, EveryNiCounterIsDecodedFromItsField) {
  o2lnd_ioc_net reply{};
  __u64 next = 1000;
  O2LND_NI_COUNTERS(O2LND_TEST_SET)
  NetInfo ni = decode(reply);
  std::uint64_t want = 1000;
  std::size_t n = 0;
  visit_ni_counters(ni, [&](const CounterInfo& c, std::uint64_t v) {
    EXPECT_EQ(v, want++) << c.name;
    ++n;
  });
  EXPECT_EQ(n, kNiCounters.size());
}

TEST(Counters, EveryPeerConnRouteAndRoutingCounterIsDecodedFromItsField) {
  {
    o2lnd_ioc_peer reply{};
    __u32 next = 2000;
    O2LND_PEER_COUNTERS(O2LND_TEST_SET)
    std::uint64_t want = 2000;
    visit_peer_counters(decode(reply), [&](const CounterInfo& c, std::uint64_t v) {
      EXPECT_EQ(v, want++) << c.name;
    });
  }
  {
    o2lnd_ioc_conn reply{};
    __u32 next = 3000;
    O2LND_CONN_COUNTERS(O2LND_TEST_SET)
    std::uint64_t want = 3000;
    visit_conn_counters(decode(reply), [&](const CounterInfo& c, std::uint64_t v) {
      EXPECT_EQ(v, want++) << c.name;
    });
  }
  {
    o2lnd_ioc_route reply{};
    __u64 next = 4000;
    O2LND_ROUTE_COUNTERS(O2LND_TEST_SET)
    std::uint64_t want = 4000;
    visit_route_counters(decode(reply), [&](const CounterInfo& c, std::uint64_t v) {
      EXPECT_EQ(v, want++) << c.name;
    });
  }
  {
    o2lnd_ioc_routing reply{};
    __u64 next = 5000;
    O2LND_ROUTING_COUNTERS(O2LND_TEST_SET)
    std::uint64_t want = 5000;
    visit_routing_counters(decode(reply), [&](const CounterInfo& c, std::uint64_t v) {
      EXPECT_EQ(v, want++) << c.name;
    });
  }
}

TEST(Counters, NetShowVerbosePrintsEveryNiCounterInItsSection) {
  o2lnd_ioc_net reply{};
  __u64 next = 1000;
  O2LND_NI_COUNTERS(O2LND_TEST_SET)
  NetInfo ni = decode(reply);
  ni.net = "o2ib0";
  std::string yaml = o2ctl::format_net_show({ni}, true);
  auto stats = keyed(ni, "stats", visit_ni_counters<NetInfo, CounterSinkRef>);
  auto lnd = keyed(ni, "lnd", visit_ni_counters<NetInfo, CounterSinkRef>);
  expect_printed(
      yaml.substr(yaml.find("statistics:"), yaml.find("tunables:") - yaml.find("statistics:")),
      stats);
  expect_printed(yaml.substr(yaml.find("lnd details:")), lnd);
  EXPECT_EQ(stats.size() + lnd.size(), kNiCounters.size()) << "a counter of no known view";
}

TEST(Counters, PeerShowVerbosePrintsEveryVerbosePeerCounter) {
  o2lnd_ioc_peer reply{};
  __u32 next = 2000;
  O2LND_PEER_COUNTERS(O2LND_TEST_SET)
  PeerInfo p = decode(reply);
  std::string yaml = o2ctl::format_peer_show({p}, true);
  expect_printed(yaml, keyed(p, "verbose", visit_peer_counters<PeerInfo, CounterSinkRef>));
  std::string brief = o2ctl::format_peer_show({p}, false);
  EXPECT_EQ(brief.find("races received"), std::string::npos) << "verbose counters only with -v";
}

TEST(Counters, ConnRouteAndRoutingShowPrintEveryCounter) {
  {
    o2lnd_ioc_conn reply{};
    __u32 next = 3000;
    O2LND_CONN_COUNTERS(O2LND_TEST_SET)
    ConnInfo c = decode(reply);
    expect_printed(o2ctl::format_conn_show({c}),
                   keyed(c, "show", visit_conn_counters<ConnInfo, CounterSinkRef>));
  }
  {
    o2lnd_ioc_route reply{};
    __u64 next = 4000;
    O2LND_ROUTE_COUNTERS(O2LND_TEST_SET)
    RouteInfo r = decode(reply);
    expect_printed(o2ctl::format_route_show({r}),
                   keyed(r, "show", visit_route_counters<RouteInfo, CounterSinkRef>));
  }
  {
    o2lnd_ioc_routing reply{};
    __u64 next = 5000;
    O2LND_ROUTING_COUNTERS(O2LND_TEST_SET)
    RoutingInfo r = decode(reply);
    expect_printed(o2ctl::format_routing_show(r),
                   keyed(r, "show", visit_routing_counters<RoutingInfo, CounterSinkRef>));
  }
}

TEST(Counters, NamesAndKeysAreUniqueInEachList) {
  auto unique = [](const auto& list) {
    std::set<std::string_view> names;
    std::set<std::pair<std::string_view, std::string_view>> keys;
    for (const auto& c : list) {
      EXPECT_TRUE(names.insert(c.name).second) << c.name;
      EXPECT_TRUE(keys.insert({c.view, c.key}).second) << c.key;
      EXPECT_FALSE(c.doc.empty()) << c.name;
    }
  };
  unique(kNiCounters);
  unique(kPeerCounters);
  unique(kConnCounters);
  unique(kRouteCounters);
  unique(kRoutingCounters);
}

}  // namespace
}  // namespace o2lnd
