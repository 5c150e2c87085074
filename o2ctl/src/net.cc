// o2ctl net show, net add, net del: the local NIs, and networks added
// and deleted at run time.

#include <cerrno>
#include <string>
#include <string_view>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"

namespace o2ctl::cmd {
namespace {

int run_net_show(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "net show";
  if (!parse_list_args(env, kCmd, opts, positional, PeerArg::kNone)) {
    return kExitUsage;
  }
  auto listing = open_listing(env, kCmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  const auto& nis = listing->nis;
  env.out << (opts.contains("--table") ? table_net_show(nis)
                                       : format_net_show(nis, opts.contains("--verbose")));
  return kExitOk;
}

constexpr Option kNetCfgOptions[] = {
    {"--net", "-n", true},
    {"--if", "-i", true},
};

int run_net_cfg(Env& env, const Opts& opts, const Positional& positional, bool add) {
  const std::string_view cmd = add ? "net add" : "net del";
  if (!positional.empty()) {
    return usage_error(env, cmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto net = opts.find("--net");
  if (net == opts.end()) {
    return usage_error(env, cmd, "expected --net NET");
  }
  auto itf = opts.find("--if");
  if (add && itf == opts.end()) {
    return usage_error(env, cmd, "expected --if INTERFACE");
  }
  const std::string ifname = itf == opts.end() ? std::string() : std::string(itf->second);
  const std::string what =
      std::string(net->second) + (ifname.empty() ? std::string() : "(" + ifname + ")");
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  if (add) {
    auto nid = dev->net_add(net->second, ifname);
    if (!nid) {
      switch (nid.error().errnum) {
        case EEXIST:
          env.err << "o2ctl: net add: " << what << " exists\n";
          return kExitFailure;
        case ENODEV:
        case EADDRNOTAVAIL:
          env.err << "o2ctl: net add: " << what
                  << ": no such interface, or it has no IPv4 address or no RDMA device ("
                  << nid.error().message << ")\n";
          return kExitFailure;
        default:
          return kernel_failure(env, cmd, *dev, nid.error());
      }
    }
    env.out << "added " << nid->str() << " on " << ifname << "\n";
    return kExitOk;
  }
  auto n = dev->net_del(net->second, ifname);
  if (!n) {
    if (n.error().errnum == ENOENT) {
      env.err << "o2ctl: net del: no NI of " << what << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, cmd, *dev, n.error());
  }
  env.out << "deleted " << *n << (*n == 1 ? " NI" : " NIs") << " of " << what << "\n";
  return kExitOk;
}

int run_net_add(Env& env, const Opts& opts, const Positional& positional) {
  return run_net_cfg(env, opts, positional, true);
}

int run_net_del(Env& env, const Opts& opts, const Positional& positional) {
  return run_net_cfg(env, opts, positional, false);
}

}  // namespace

constinit const Command kNetShowCommand = {
    "net show",
    "[-v] [--net NET] [-t]",
    "local NIs as YAML, like 'lnetctl net show'",
    "  -v, --verbose     add statistics (incl. tx_timeouts, queue_full_drops,\n"
    "                    keepalives, early_replies, rdma_bytes, bulk_errors),\n"
    "                    health stats (health value: LNet Health, 0..1000),\n"
    "                    tunables (incl. peercredits_hiw, concurrent_sends,\n"
    "                    ntx, keepalive), tx_credits (max, available, min,\n"
    "                    queued), bulk (max_immediate, max_frags, cksum,\n"
    "                    mr_pool: size, used, max_pages, recovered) and RDMA\n"
    "                    details (incl. tx_live)\n"
    "      --net NET     only the NIs of network NET (e.g. o2ib0)\n"
    "  -t, --table       a table instead of YAML, one row per NI: NET NID STATUS\n"
    "                    IFACE DEVICE PEERS CONNS EST CRED (tx credits\n"
    "                    available/max) MIN Q (waiting for a credit) TXS\n"
    "                    (txs live/ntx) MRS (MR pool used/size)\n",
    kListOptions,
    run_net_show};

constinit const Command kNetAddCommand = {
    "net add",
    "--net NET --if INTERFACE",
    "add a network or an interface, like 'lnetctl net add'",
    "Adds an NI of network NET (o2ibN) on INTERFACE without a reload: it\n"
    "listens on the interface's IPv4 address and is up at once, and the peers\n"
    "that discovered us learn it (a push).  Prints 'added NID on INTERFACE'.\n"
    "Exits 1 when the NI exists, the interface does not exist or has no IPv4\n"
    "address or RDMA device, or the module has its maximum of NIs.  Needs\n"
    "CAP_NET_ADMIN.\n"
    "\n"
    "  -n, --net NET     the network, e.g. o2ib1\n"
    "  -i, --if INTERFACE the interface, e.g. eth1\n",
    kNetCfgOptions,
    run_net_add};

constinit const Command kNetDelCommand = {
    "net del",
    "--net NET [--if INTERFACE]",
    "delete a network or an interface, like 'lnetctl net del'",
    "Deletes the NI of NET on INTERFACE, or every NI of NET without --if,\n"
    "without a reload: it goes down at once, its connections are closed and\n"
    "freed, the messages waiting on it fail and its peers are forgotten before\n"
    "the command returns; the peers that discovered us learn it (a push).\n"
    "Prints 'deleted N NIs of NET'.  Exits 1 when no NI matches.  Needs\n"
    "CAP_NET_ADMIN.\n"
    "\n"
    "  -n, --net NET     the network\n"
    "  -i, --if INTERFACE only the NI on this interface\n",
    kNetCfgOptions,
    run_net_del};

}  // namespace o2ctl::cmd
