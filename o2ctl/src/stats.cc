// o2ctl stats: the counters of the local NIs, and of their peers.

#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/device.h"

namespace o2ctl::cmd {
namespace {

int run_stats(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "stats";
  auto args = parse_list_args(env, kCmd, opts, positional, PeerArg::kPositional);
  if (!args) {
    return kExitUsage;
  }
  auto listing = open_listing(env, kCmd, opts);
  if (!listing) {
    return kExitFailure;
  }
  bool with_peers = args->peer.has_value() || opts.contains("--verbose");
  std::vector<o2lnd::PeerInfo> peers;
  if (with_peers) {
    auto all = listing->dev.peers();
    if (!all) {
      return kernel_failure(env, kCmd, listing->dev, all.error());
    }
    peers = std::move(*all);
    keep(peers, *listing, *args);
  }
  const auto& nis = listing->nis;
  env.out << (opts.contains("--table") ? table_stats(nis, peers, with_peers)
                                       : format_stats(nis, peers, with_peers));
  return kExitOk;
}

}  // namespace

constinit const Command kStatsCommand = {
    "stats",
    "[NID] [--net NET] [-v] [-t]",
    "traffic statistics of the local NIs and peers as YAML",
    "Prints, like 'lnetctl stats show', 'statistics:' and one entry per local\n"
    "NI (0@lo included): nid, send count, recv count, drop count, error count,\n"
    "send bytes, recv bytes, tx timeouts, queue full drops, keepalives, early\n"
    "replies.  With -v or a NID, each NI entry also lists its peers ('peers:',\n"
    "the same keys up to tx timeouts per peer; 'peers: []' when it has none).\n"
    "\n"
    "  NID               list only this peer (implies the peer lists)\n"
    "      --net NET     only the NIs of network NET (e.g. o2ib0)\n"
    "  -v, --verbose     add each NI's peers\n"
    "  -t, --table       a table instead of YAML: NID SENT RECV DROP ERR\n"
    "                    BYTES_OUT BYTES_IN TMO QFULL KA EARLY, one row per\n"
    "                    NI; with peers a LOCAL column ('-' for an NI) and one\n"
    "                    row per peer after the row of its NI\n",
    kListOptions,
    run_stats};

}  // namespace o2ctl::cmd
