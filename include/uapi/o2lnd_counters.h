/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * o2lnd: the counter lists of the userspace ABI, part of o2lnd.h (include
 * that).  See "Counters" at the top of o2lnd.h.
 *
 * X-macro lists are a construct checkpatch cannot parse (it takes a list
 * for a complex expression and X for a reused argument):
 * scripts/checkpatch.sh checks this file with COMPLEX_MACRO,
 * MACRO_ARG_REUSE, MULTISTATEMENT_MACRO_USE_DO_WHILE and
 * TRAILING_SEMICOLON off, and every other file with all checks.  Keep
 * anything but lists out of it.
 */
#ifndef _UAPI_O2LND_COUNTERS_H
#define _UAPI_O2LND_COUNTERS_H

/*
 * The counter lists (see "Counters" at the top).  O2LND_COUNTER_FIELD
 * makes an entry the struct field it describes.
 */
#define O2LND_COUNTER_FIELD(type, name, view, key, doc)	type name;

/*
 * NI counters (struct o2lnd_ioc_net).  view: stats: `o2ctl net show -v`
 * prints it under "statistics:"; lnd: under "lnd details:".
 */
#define O2LND_NI_COUNTERS_ABI1(X)					\
	X(__u64, send_count, stats, "send_count", "messages sent")	\
	X(__u64, recv_count, stats, "recv_count", "messages received")	\
	X(__u64, drop_count, stats, "drop_count", "messages dropped")	\
	X(__u64, send_bytes, stats, "send_bytes", "payload bytes sent")	\
	X(__u64, recv_bytes, stats, "recv_bytes",			\
	  "payload bytes received")					\
	X(__u64, connects_active, lnd, "connects_active",		\
	  "active connects started")					\
	X(__u64, connects_passive, lnd, "connects_passive",		\
	  "connect requests received")					\
	X(__u64, rejects_sent, lnd, "rejects_sent",			\
	  "connect requests we rejected")				\
	X(__u64, rejects_received, lnd, "rejects_received",		\
	  "rejects of our connect requests")				\
	X(__u64, error_count, stats, "error_count",			\
	  "messages that failed (send errors, timeouts, protocol errors)")
#define O2LND_NI_COUNTERS_ABI3(X)					\
	X(__u64, tx_timeouts, stats, "tx_timeouts",			\
	  "messages failed because their deadline passed")		\
	X(__u64, tx_no_credit_drops, stats, "queue_full_drops",		\
	  "messages refused because a queue bound was reached (-ENOBUFS)") \
	X(__u64, keepalives, stats, "keepalives", "keepalive NOOPs sent") \
	X(__u64, early_replies, stats, "early_replies",			\
	  "replies that arrived before the Send completion of their request")
#define O2LND_NI_COUNTERS_ABI4(X)					\
	X(__u64, rdma_bytes, stats, "rdma_bytes",			\
	  "payload bytes moved by RDMA write")				\
	X(__u64, bulk_errors, stats, "bulk_errors",			\
	  "bulk transfers failed (refused descriptor, NAK, RDMA error, verification)")
#define O2LND_NI_COUNTERS_TAIL(X)					\
	X(__u64, resend_count, stats, "resend_count",			\
	  "messages sent again after their path failed (retry_count)")
#define O2LND_NI_COUNTERS(X)						\
	O2LND_NI_COUNTERS_ABI1(X)					\
	O2LND_NI_COUNTERS_ABI3(X)					\
	O2LND_NI_COUNTERS_ABI4(X)					\
	O2LND_NI_COUNTERS_TAIL(X)

/*
 * Peer counters (struct o2lnd_ioc_peer).  view: verbose: `o2ctl peer show
 * -v` prints it; traffic: `o2ctl stats` prints it (its own keys).  The
 * __u32 ones count connection events, the __u64 ones traffic.
 */
#define O2LND_PEER_EVENTS_ABI1(X)					\
	X(__u32, races_received, verbose, "races received",		\
	  "CONN_RACE rejects of our connects")				\
	X(__u32, races_sent, verbose, "races sent",			\
	  "CONN_RACE rejects we sent to it")				\
	X(__u32, connects, verbose, "connects", "active connects started") \
	X(__u32, connect_failures, verbose, "connect failures",		\
	  "active connects that failed (timeout, error, reject)")	\
	X(__u32, rejects_sent, verbose, "rejects sent",			\
	  "its connect requests we rejected (any reason)")		\
	X(__u32, rejects_received, verbose, "rejects received",		\
	  "rejects of our connects (any reason)")
#define O2LND_PEER_EVENTS_ABI2(X)					\
	X(__u32, stale_closes, verbose, "stale closes",			\
	  "connections closed because it rebooted")			\
	X(__u32, phase_timeouts, verbose, "phase timeouts",		\
	  "connect phases aborted by their deadline")
#define O2LND_PEER_TRAFFIC_ABI2(X)					\
	X(__u64, send_count, traffic, "send count",			\
	  "messages sent to it (Send completed)")			\
	X(__u64, recv_count, traffic, "recv count",			\
	  "messages received from it")					\
	X(__u64, drop_count, traffic, "drop count",			\
	  "messages from it dropped")					\
	X(__u64, error_count, traffic, "error count",			\
	  "failed sends to it and protocol errors of its")		\
	X(__u64, send_bytes, traffic, "send bytes", "bytes sent to it")	\
	X(__u64, recv_bytes, traffic, "recv bytes", "bytes received from it")
#define O2LND_PEER_TRAFFIC_ABI3(X)					\
	X(__u64, tx_timeouts, verbose, "tx timeouts",			\
	  "messages to it failed because their deadline passed")
#define O2LND_PEER_COUNTERS_TAIL(X)
#define O2LND_PEER_COUNTERS(X)						\
	O2LND_PEER_EVENTS_ABI1(X)					\
	O2LND_PEER_EVENTS_ABI2(X)					\
	O2LND_PEER_TRAFFIC_ABI2(X)					\
	O2LND_PEER_TRAFFIC_ABI3(X)					\
	O2LND_PEER_COUNTERS_TAIL(X)

/* Connection counters (struct o2lnd_ioc_conn); `o2ctl conn show` prints them */
#define O2LND_CONN_COUNTERS_ABI3(X)					\
	X(__u32, keepalives, show, "keepalives",			\
	  "keepalive NOOPs sent on it")
#define O2LND_CONN_COUNTERS_ABI10(X)					\
	X(__u64, send_count, show, "send count",			\
	  "messages posted on it (NOOPs included)")
#define O2LND_CONN_COUNTERS(X)						\
	O2LND_CONN_COUNTERS_ABI3(X)					\
	O2LND_CONN_COUNTERS_ABI10(X)

/* Route counters (struct o2lnd_ioc_route); `o2ctl route show` prints them */
#define O2LND_ROUTE_COUNTERS(X)						\
	X(__u64, sent, show, "sent", "messages sent through this route") \
	X(__u64, dropped, show, "dropped",				\
	  "messages for this route dropped because its gateway was down")

/* Router counters (struct o2lnd_ioc_routing); `o2ctl routing show` prints them */
#define O2LND_ROUTING_COUNTERS(X)					\
	X(__u64, forwarded, show, "forwarded", "messages forwarded")	\
	X(__u64, forwarded_bytes, show, "forwarded bytes",		\
	  "payload bytes forwarded")					\
	X(__u64, dropped_no_route, show, "dropped no route",		\
	  "messages for a network we neither are on nor route to, "	\
	  "or received while not forwarding")				\
	X(__u64, dropped_down, show, "dropped down",			\
	  "messages dropped because the next hop was down")		\
	X(__u64, dropped_timeout, show, "dropped timeout",		\
	  "messages that waited past router_timeout_s")		\
	X(__u64, dropped_closed, show, "dropped closed",		\
	  "waiting messages released because the connection they came on closed") \
	X(__u64, dropped_error, show, "dropped error",			\
	  "messages that failed on the next hop (no tx, send error, deadline)")

#endif /* _UAPI_O2LND_COUNTERS_H */
