// o2ctl's output, as pure functions of library results (tested on the host).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/device.h"

namespace o2ctl {

// `lctl ping` lines: "12345-0@lo\n12345-192.168.1.2@o2ib0\n".
std::string format_ping(const o2lnd::PingResult& result);

// `lnetctl net show` YAML of the local NIs, grouped by network in the order
// the module lists them.  `verbose` adds statistics (incl. rdma_bytes,
// bulk_errors), tunables, tx_credits, bulk (max_immediate, max_frags, cksum,
// mr_pool: size, used, max_pages, recovered) and the RDMA details.  An empty list gives "net: []".
std::string format_net_show(const std::vector<o2lnd::NetInfo>& nis, bool verbose);

// `o2ctl peer show` YAML: "peer:" and one entry per peer (nid, local nid,
// state, connection counts, tx queued, next retry ms, tx credits, tx credits
// max, tx credits min, credit queued, router credits, router credits max,
// router credits min, router queued, health); `verbose` adds the peer's
// counters, failures, downs, alive ms ("never" for a peer never heard from)
// and tx timeouts.  An empty list gives "peer: []".
std::string format_peer_show(const std::vector<o2lnd::PeerInfo>& peers, bool verbose);

// `o2ctl route show` YAML: "route:" and one entry per route (net, gateway,
// hop, priority, state: up or down (the gateway's health), sent, dropped).
// An empty list gives "route: []".
// LNet peers with all their NIDs, like `lnetctl peer show -v` (`top` is
// "peer" or "discover"): primary nid, Multi-Rail (true/false), discovery,
// pushed, pushed to us, seqno, nids, and each peer ni's nid, state,
// health value, selected, failures.
std::string format_lnet_peers(const std::vector<o2lnd::LnetPeer>& peers, std::string_view top);

std::string format_route_show(const std::vector<o2lnd::RouteInfo>& routes);

// `o2ctl routing show` YAML: "routing:" with forwarding (enabled or
// disabled), peer buffer credits, router timeout, waiting, waiting max, held
// rx, forwarded, forwarded bytes, dropped no route / down / timeout / closed
// / error, and "buffers:", one entry per pool (pool: tiny, small, large;
// size, nbuffers, credits, min credits, taken).
std::string format_routing_show(const o2lnd::RoutingInfo& routing);

// `o2ctl conn show` YAML: "conn:" and one entry per connection.  An empty
// list gives "conn: []".
std::string format_conn_show(const std::vector<o2lnd::ConnInfo>& conns);

// `o2ctl fault list` YAML: "fault:" and one entry per rule.  An empty list
// gives "fault: []".
std::string format_fault_list(const std::vector<o2lnd::FaultRule>& rules);

// `o2ctl stats` YAML, like `lnetctl stats show`: "statistics:" and one
// entry per NI (nid, send count, recv count, drop count, error count, send
// bytes, recv bytes, tx timeouts, then the NI-only queue full drops,
// keepalives, early replies).  With `with_peers` each NI entry gets
// "peers:", the entries of `peers` whose local_nid is that NI, with the keys
// up to tx timeouts ("peers: []" when it has none).  An empty NI list gives
// "statistics: []".
std::string format_stats(const std::vector<o2lnd::NetInfo>& nis,
                         const std::vector<o2lnd::PeerInfo>& peers, bool with_peers);

// The compact tables of `-t` / `--table`: a header line of upper-case
// column names, then one line per entry, columns aligned (text left, numbers
// right) and separated by two spaces, no trailing blanks.  An empty list
// gives the header alone.
//   net show:   NET NID STATUS IFACE DEVICE PEERS CONNS EST CRED MIN Q TXS MRS
//               (CRED: tx credits available/max, TXS: tx_live/ntx, MRS: MR
//               pool used/size)
//   peer show:  NID LOCAL STATE CONNS TXQ RETRY_MS CRED MIN Q HEALTH
//               (CONNS: connecting/established/closing/zombie, CRED: tx
//               credits available/max, Q: credit queued); `verbose` adds
//               RTR RMIN RQ (router credits available/max, min, queued)
//   route show: NET GATEWAY HOP PRIO STATE SENT DROPPED
//   routing show: two tables separated by an empty line: one row of
//               FORWARDING PEER_CRED TIMEOUT WAIT WAIT_MAX HELD_RX FWD
//               FWD_BYTES NO_ROUTE DOWN TMO CLOSED ERR, then one row per
//               pool of POOL SIZE CRED (credits/nbuffers) MIN TAKEN
//   conn show:  PEER LOCAL STATE PHASE ACT AGE_MS QD CRED OUT POSTED QP RSV
//               SENDS SQ NOOPS IDLE_MS (SENDS: posted/concurrent sends, SQ:
//               free/size, NOOPS: posted/queued)
//   fault list: ID KIND ARG PEER LOCAL COUNT PROB DELAY_MS FIRED
//   stats:      NID SENT RECV DROP ERR BYTES_OUT BYTES_IN TMO QFULL KA EARLY;
//               with peers a LOCAL column after NID ("-" on the NI rows)
//               and, after each NI's row, one row per peer of it ("-" in
//               the NI-only QFULL KA EARLY)
std::string table_net_show(const std::vector<o2lnd::NetInfo>& nis);
std::string table_peer_show(const std::vector<o2lnd::PeerInfo>& peers, bool verbose = false);
std::string table_route_show(const std::vector<o2lnd::RouteInfo>& routes);
std::string table_routing_show(const o2lnd::RoutingInfo& routing);
std::string table_conn_show(const std::vector<o2lnd::ConnInfo>& conns);
std::string table_fault_list(const std::vector<o2lnd::FaultRule>& rules);
std::string table_stats(const std::vector<o2lnd::NetInfo>& nis,
                        const std::vector<o2lnd::PeerInfo>& peers, bool with_peers);

// A per-million probability as a fraction: 1000000 -> "1", 250000 -> "0.25",
// 1 -> "0.000001".
std::string format_probability(std::uint32_t per_million);

// `o2ctl version` YAML.  `module` is null when the module could not be asked.
std::string format_version(std::string_view tool_version, const o2lnd::VersionInfo* module);

// A YAML scalar for `text`: plain when that reads back as the same string,
// else double-quoted with escapes.
std::string yaml_scalar(std::string_view text);

}  // namespace o2ctl
