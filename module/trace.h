/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: tracepoints (tracefs: events/o2lnd/).  NIDs are printed as raw
 * 64-bit values in hex (network in the high 32 bits, IPv4 address in the
 * low 32); o2ctl and dmesg print them as a.b.c.d@o2ibN.
 *
 * Connect phases and their deadlines, phase timeouts, rejects sent and
 * received, reconnects and backoff, tx queued / posted / completed /
 * failed, credits returned, connections reaped.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM o2lnd

#if !defined(_O2LND_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _O2LND_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(o2lnd_connect_phase,
	    TP_PROTO(u64 nid, u64 peer, int phase, unsigned int deadline_ms),
	    TP_ARGS(nid, peer, phase, deadline_ms),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(int, phase)
			     __field(unsigned int, deadline_ms)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->phase = phase;
			   __entry->deadline_ms = deadline_ms;),
	    TP_printk("ni=%llx peer=%llx phase=%s deadline_ms=%u",
		      __entry->nid, __entry->peer,
		      __print_symbolic(__entry->phase, { 0, "established" },
				       { 1, "addr" }, { 2, "route" },
				       { 3, "connect" }),
		      __entry->deadline_ms));

TRACE_EVENT(o2lnd_phase_timeout,
	    TP_PROTO(u64 nid, u64 peer, int phase, bool active),
	    TP_ARGS(nid, peer, phase, active),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(int, phase)
			     __field(bool, active)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->phase = phase;
			   __entry->active = active;),
	    TP_printk("ni=%llx peer=%llx phase=%s active=%d",
		      __entry->nid, __entry->peer,
		      __print_symbolic(__entry->phase, { 0, "accept-or-tx" },
				       { 1, "addr" }, { 2, "route" },
				       { 3, "connect" }),
		      __entry->active));

DECLARE_EVENT_CLASS(o2lnd_reject_class,
		    TP_PROTO(u64 nid, u64 peer, u8 why, long retry_ms),
		    TP_ARGS(nid, peer, why, retry_ms),
		    TP_STRUCT__entry(__field(u64, nid)
				     __field(u64, peer)
				     __field(u8, why)
				     __field(long, retry_ms)),
		    TP_fast_assign(__entry->nid = nid;
				   __entry->peer = peer;
				   __entry->why = why;
				   __entry->retry_ms = retry_ms;),
		    TP_printk("ni=%llx peer=%llx why=%u retry_ms=%ld", __entry->nid,
			      __entry->peer, __entry->why, __entry->retry_ms));

DEFINE_EVENT(o2lnd_reject_class, o2lnd_reject_sent,
	     TP_PROTO(u64 nid, u64 peer, u8 why, long retry_ms),
	     TP_ARGS(nid, peer, why, retry_ms));

DEFINE_EVENT(o2lnd_reject_class, o2lnd_reject_received,
	     TP_PROTO(u64 nid, u64 peer, u8 why, long retry_ms),
	     TP_ARGS(nid, peer, why, retry_ms));

TRACE_EVENT(o2lnd_reconnect,
	    TP_PROTO(u64 nid, u64 peer, unsigned int backoff_ms,
		     unsigned int delay_ms),
	    TP_ARGS(nid, peer, backoff_ms, delay_ms),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(unsigned int, backoff_ms)
			     __field(unsigned int, delay_ms)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->backoff_ms = backoff_ms;
			   __entry->delay_ms = delay_ms;),
	    TP_printk("ni=%llx peer=%llx backoff_ms=%u delay_ms=%u", __entry->nid,
		      __entry->peer, __entry->backoff_ms, __entry->delay_ms));

DECLARE_EVENT_CLASS(o2lnd_tx_class,
		    TP_PROTO(u64 nid, u64 peer, u8 type, u32 nob, int status),
		    TP_ARGS(nid, peer, type, nob, status),
		    TP_STRUCT__entry(__field(u64, nid)
				     __field(u64, peer)
				     __field(u8, type)
				     __field(u32, nob)
				     __field(int, status)),
		    TP_fast_assign(__entry->nid = nid;
				   __entry->peer = peer;
				   __entry->type = type;
				   __entry->nob = nob;
				   __entry->status = status;),
		    TP_printk("ni=%llx peer=%llx type=0x%02x nob=%u status=%d",
			      __entry->nid, __entry->peer, __entry->type, __entry->nob,
			      __entry->status));

DEFINE_EVENT(o2lnd_tx_class, o2lnd_tx_queued,
	     TP_PROTO(u64 nid, u64 peer, u8 type, u32 nob, int status),
	     TP_ARGS(nid, peer, type, nob, status));

DEFINE_EVENT(o2lnd_tx_class, o2lnd_tx_posted,
	     TP_PROTO(u64 nid, u64 peer, u8 type, u32 nob, int status),
	     TP_ARGS(nid, peer, type, nob, status));

DEFINE_EVENT(o2lnd_tx_class, o2lnd_tx_completed,
	     TP_PROTO(u64 nid, u64 peer, u8 type, u32 nob, int status),
	     TP_ARGS(nid, peer, type, nob, status));

DEFINE_EVENT(o2lnd_tx_class, o2lnd_tx_failed,
	     TP_PROTO(u64 nid, u64 peer, u8 type, u32 nob, int status),
	     TP_ARGS(nid, peer, type, nob, status));

TRACE_EVENT(o2lnd_send_chain,
	    TP_PROTO(u64 nid, u64 peer, int txs, int wrs, int status),
	    TP_ARGS(nid, peer, txs, wrs, status),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(int, txs)
			     __field(int, wrs)
			     __field(int, status)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->txs = txs;
			   __entry->wrs = wrs;
			   __entry->status = status;),
	    TP_printk("ni=%llx peer=%llx txs=%d wrs=%d status=%d",
		      __entry->nid, __entry->peer, __entry->txs, __entry->wrs,
		      __entry->status));

TRACE_EVENT(o2lnd_credits_returned,
	    TP_PROTO(u64 nid, u64 peer, int returned, int credits),
	    TP_ARGS(nid, peer, returned, credits),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(int, returned)
			     __field(int, credits)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->returned = returned;
			   __entry->credits = credits;),
	    TP_printk("ni=%llx peer=%llx returned=%d credits=%d", __entry->nid,
		      __entry->peer, __entry->returned, __entry->credits));

TRACE_EVENT(o2lnd_conn_reaped,
	    TP_PROTO(u64 nid, u64 peer, bool active, int error,
		     unsigned int age_ms),
	    TP_ARGS(nid, peer, active, error, age_ms),
	    TP_STRUCT__entry(__field(u64, nid)
			     __field(u64, peer)
			     __field(bool, active)
			     __field(int, error)
			     __field(unsigned int, age_ms)),
	    TP_fast_assign(__entry->nid = nid;
			   __entry->peer = peer;
			   __entry->active = active;
			   __entry->error = error;
			   __entry->age_ms = age_ms;),
	    TP_printk("ni=%llx peer=%llx active=%d error=%d age_ms=%u",
		      __entry->nid, __entry->peer, __entry->active, __entry->error,
		      __entry->age_ms));

#endif /* _O2LND_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
