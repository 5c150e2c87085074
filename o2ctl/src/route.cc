// o2ctl route show, routing show: the routes to remote networks, and the
// router's state and buffer pools.

#include <string>
#include <string_view>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/names.h"

namespace o2ctl::cmd {
namespace {

constexpr Option kRouteShowOptions[] = {
    {"--net", "", true},
    {"--table", "-t", false},
};

constexpr Option kTableOption[] = {
    {"--table", "-t", false},
};

int run_route_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "route show";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto routes = dev->routes();
  if (!routes) {
    return kernel_failure(env, kCmd, *dev, routes.error());
  }
  if (auto it = opts.find("--net"); it != opts.end()) {
    std::string_view want = it->second;
    std::erase_if(*routes,
                  [want](const o2lnd::RouteInfo& r) { return o2lnd::net_name(r.net) != want; });
  }
  env.out << (opts.contains("--table") ? table_route_show(*routes) : format_route_show(*routes));
  return kExitOk;
}

int run_routing_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "routing show";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto routing = dev->routing();
  if (!routing) {
    return kernel_failure(env, kCmd, *dev, routing.error());
  }
  env.out << (opts.contains("--table") ? table_routing_show(*routing)
                                       : format_routing_show(*routing));
  return kExitOk;
}

}  // namespace

constinit const Command kRouteShowCommand = {
    "route show",
    "[--net NET] [-t]",
    "routes to remote networks as YAML",
    "Lists the routes configured (module parameter routes=), like 'lnetctl\n"
    "route show -v': net (the remote network), gateway (its NID, on a local\n"
    "network), hop, priority (0 highest), state (up or down: down while the\n"
    "gateway peer is down, its last check got no answer, or its ping info\n"
    "said it does not forward or has no NI up on the route's network; up\n"
    "while it was never tried), sent (messages sent through the route),\n"
    "dropped (dropped because its gateway was down).  Prints 'route: []'\n"
    "when there is none.\n"
    "\n"
    "      --net NET     only the routes to network NET (e.g. o2ib1)\n"
    "  -t, --table       a table instead of YAML, one row per route: NET GATEWAY\n"
    "                    HOP PRIO STATE SENT DROPPED\n",
    kRouteShowOptions,
    run_route_show};

constinit const Command kRoutingShowCommand = {
    "routing show",
    "[-t]",
    "the router's state and buffer pools as YAML",
    "Prints 'routing:' like 'lnetctl routing show': forwarding (enabled or\n"
    "disabled: module parameter forwarding=), peer buffer credits (router\n"
    "buffers one peer may hold), router timeout (seconds a message may wait\n"
    "for a router buffer), waiting (messages waiting now), waiting max,\n"
    "held rx (receive buffers held by waiting messages), forwarded,\n"
    "forwarded bytes, dropped no route, dropped down, dropped timeout,\n"
    "dropped closed, dropped error, and 'buffers:', one entry per pool\n"
    "(pool: tiny, small, large; size: payload bytes per buffer, nbuffers,\n"
    "credits (now; below 0, that many wait), min credits, taken).\n"
    "\n"
    "  -t, --table       tables instead of YAML: one row of FORWARDING\n"
    "                    PEER_CRED TIMEOUT WAIT WAIT_MAX HELD_RX FWD\n"
    "                    FWD_BYTES NO_ROUTE DOWN TMO CLOSED ERR, an empty line,\n"
    "                    then one row per pool: POOL SIZE CRED\n"
    "                    (credits/nbuffers) MIN TAKEN\n",
    kTableOption,
    run_routing_show};

}  // namespace o2ctl::cmd
