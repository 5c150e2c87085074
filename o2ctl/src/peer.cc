// o2ctl peer show, peer list, peer close, conn show: the peers of the
// local NIs, the LNet peers, closing a peer's connections, and the
// connections.

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"

namespace o2ctl::cmd {
namespace {

// conn show: the peer is an option, and there is no -v.
constexpr Option kConnShowOptions[] = {
    {"--peer", "", true},
    {"--net", "", true},
    {"--table", "-t", false},
};

// `peer show` and `conn show`: parse, open, fetch the items (`fetch` on
// the device), filter them and print them (`render(items)`).
template <typename Fetch, typename Render>
int run_item_list(Env& env, std::string_view cmd, const Opts& opts, const Positional& positional,
                  PeerArg peer_arg, Fetch fetch, Render render) {
  auto args = parse_list_args(env, cmd, opts, positional, peer_arg);
  if (!args) {
    return kExitUsage;
  }
  auto listing = open_listing(env, cmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  auto items = fetch(listing->dev);
  if (!items) {
    return kernel_failure(env, cmd, listing->dev, items.error());
  }
  keep(*items, *listing, *args);
  env.out << render(*items);
  return kExitOk;
}

int run_peer_show(Env& env, const Opts& opts, const Positional& positional) {
  const bool table = opts.contains("--table");
  const bool verbose = opts.contains("--verbose");
  return run_item_list(
      env, "peer show", opts, positional, PeerArg::kPositional,
      [](o2lnd::Device& dev) { return dev.peers(); },
      [&](const std::vector<o2lnd::PeerInfo>& peers) {
        return table ? table_peer_show(peers, verbose) : format_peer_show(peers, verbose);
      });
}

int run_conn_show(Env& env, const Opts& opts, const Positional& positional) {
  const bool table = opts.contains("--table");
  return run_item_list(
      env, "conn show", opts, positional, PeerArg::kOption,
      [](o2lnd::Device& dev) { return dev.conns(); },
      [&](const std::vector<o2lnd::ConnInfo>& conns) {
        return table ? table_conn_show(conns) : format_conn_show(conns);
      });
}

constexpr Option kPeerCloseOptions[] = {
    {"--source", "-s", true},
};

int run_peer_close(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "peer close";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, "expected NID");
  }
  auto nid = parse_nid_arg(env, positional[0]);
  if (!nid) {
    return kExitUsage;
  }
  bool bad = false;
  auto source = nid_option(env, opts, "--source", bad);
  if (bad) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto closed = dev->peer_close(*nid, source);
  if (!closed) {
    if (closed.error().errnum == ENOENT) {
      env.err << "o2ctl: " << kCmd << ": no peer " << nid->str()
              << (source ? " on " + source->str() : std::string()) << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, kCmd, *dev, closed.error());
  }
  env.out << "closed " << *closed << " connections to " << nid->str() << "\n";
  return kExitOk;
}

int run_peer_list(Env& env, const Opts& /*opts*/, const Positional& positional) {
  constexpr std::string_view kCmd = "peer list";
  if (positional.size() > 1) {
    return usage_error(env, kCmd, "expected at most one NID");
  }
  std::optional<o2lnd::Nid> nid;
  if (!positional.empty()) {
    nid = parse_nid_arg(env, positional[0]);
    if (!nid) {
      return kExitUsage;
    }
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  std::vector<o2lnd::LnetPeer> peers;
  if (nid) {
    auto p = dev->lpeer_of(*nid);
    if (!p && p.error().errnum != ENOENT) {
      return kernel_failure(env, kCmd, *dev, p.error());
    }
    if (p) {
      peers.push_back(std::move(*p));
    }
  } else {
    auto all = dev->lpeers();
    if (!all) {
      return kernel_failure(env, kCmd, *dev, all.error());
    }
    peers = std::move(*all);
  }
  env.out << format_lnet_peers(peers, "peer");
  return kExitOk;
}

}  // namespace

constinit const Command kPeerShowCommand = {
    "peer show",
    "[NID] [--net NET] [-v] [-t]",
    "peers of the local NIs as YAML",
    "Lists every peer of every o2ib NI (one entry per NI that knows it):\n"
    "nid, local nid, state (idle, connecting, established, backoff), its\n"
    "connections by state (connecting = init + active_connect + passive_wait,\n"
    "established, closing, zombie), tx queued, next retry ms, tx credits (now;\n"
    "below 0, that many wait), tx credits max, tx credits min, credit queued,\n"
    "router credits (router buffers the peer may still hold on this router;\n"
    "below 0, that many of its messages wait), router credits max, router\n"
    "credits min, router queued and health (up, down).  Prints 'peer: []'\n"
    "when there is none, also when NID is unknown.\n"
    "\n"
    "  NID               only this peer (on every NI that knows it)\n"
    "      --net NET     only the peers of the NIs of network NET (e.g. o2ib0)\n"
    "  -v, --verbose     add incarnation, races received/sent, connects,\n"
    "                    connect failures, rejects sent/received, last reject,\n"
    "                    last error, backoff ms, stale closes, phase timeouts,\n"
    "                    failures, downs, alive ms ('never' if never heard\n"
    "                    from), tx timeouts\n"
    "  -t, --table       a table instead of YAML, one row per peer: NID LOCAL\n"
    "                    STATE CONNS (connecting/established/closing/zombie)\n"
    "                    TXQ RETRY_MS CRED (tx credits available/max) MIN Q\n"
    "                    (credit queued) HEALTH; with -v also RTR (router\n"
    "                    credits available/max) RMIN RQ (router queued)\n",
    kListOptions,
    run_peer_show};

constinit const Command kPeerListCommand = {
    "peer list",
    "[NID]",
    "LNet peers with all their NIDs, like 'lnetctl peer show -v'",
    "Lists every LNet peer o2lnd learned, one entry per node (a ping's reply,\n"
    "a discovery or a push teaches its NIDs): primary nid, Multi-Rail (true\n"
    "when its ping info says so), discovery (it answers discovery), pushed\n"
    "(it ACKed our push), pushed to us (it pushed its NIDs to us), seqno (of\n"
    "its ping info), nids (how many it listed), and under 'peer ni' each NID\n"
    "with its state (up or down, as the peer reported it), health value (LNet\n"
    "Health, 0..1000: failures blamed on the NID lower it by\n"
    "health_sensitivity, successes raise it), selected (messages Multi-Rail\n"
    "sent to it) and failures.  Prints 'peer: []' when there is none, also\n"
    "when no peer lists NID.\n"
    "\n"
    "  NID               only the peer that lists this NID\n",
    {},
    run_peer_list};

constinit const Command kPeerCloseCommand = {
    "peer close",
    "NID [--source NID]",
    "close every connection to a peer",
    "Closes every connection to NID (as if it had failed with ECONNABORTED) and\n"
    "cancels a scheduled reconnect and its backoff.  Prints 'closed N\n"
    "connections to NID'.  Exits 1 when no NI knows the peer.  Needs\n"
    "CAP_NET_ADMIN.\n"
    "\n"
    "  -s, --source NID  only on the local NI with this NID (default: every NI)\n",
    kPeerCloseOptions,
    run_peer_close};

constinit const Command kConnShowCommand = {
    "conn show",
    "[--peer NID] [--net NET] [-t]",
    "connections of the local NIs as YAML",
    "Lists every connection of every o2ib NI, in any state: peer, local nid,\n"
    "state (init, active_connect, passive_wait, established, closing, zombie),\n"
    "phase (none, addr, route, connect), active, age ms, deadline ms, queue\n"
    "depth, max frags, credits, outstanding (owed to the peer), posted, tx\n"
    "queued, error, qp, rx buffers, reserved credits, concurrent sends (the cap\n"
    "on posted), sq size, sq free, noops posted, noops queued, idle ms,\n"
    "keepalives.  Prints 'conn: []' when there is none.\n"
    "\n"
    "      --peer NID    only the connections to this peer\n"
    "      --net NET     only the connections of the NIs of network NET\n"
    "  -t, --table       a table instead of YAML, one row per connection: PEER\n"
    "                    LOCAL STATE PHASE ACT AGE_MS QD (queue depth) CRED\n"
    "                    (credits) OUT (outstanding) POSTED QP RSV (reserved\n"
    "                    credits) SENDS (posted/concurrent sends) SQ\n"
    "                    (free/size) NOOPS (posted/queued) IDLE_MS\n",
    kConnShowOptions,
    run_conn_show};

}  // namespace o2ctl::cmd
