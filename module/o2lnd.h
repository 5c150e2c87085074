/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the module's base header: its version, constants and
 * parameters, and the map of the whole module below.
 *
 * Layers (docs/design/architecture.md; scripts/o2-layers.py checks calls
 * and includes), one folder each:
 *   module/lnet/ (lnet.h)  LNet: ni.c lnet.c ping.c discovery.c
 *                          selftest.c router.c views.c ctl.c
 *   module/lnd/ (lnd.h)    the LND: cm.c conn.c connd.c tx.c rx.c dev.c
 *                          mr.c peer.c ni.c bulk.c pending.c
 *   module/ (this header)  pure units below both, driven by KUnit:
 *                          wire.c credits.c state.c nid.c route.c
 *                          health.c fault.c params.c trace.c; and main.c
 *                          on top
 *   LNet calls the LND by name; the LND calls LNet only through o2_up
 *   (struct o2_lnet_ops, lnd.h) and a tx's done callback, and never
 *   includes lnet.h.
 *
 * Objects and their lifetimes
 *   o2_ni    one per (net, interface); created at load or by NET_ADD,
 *            freed at unload or NET_DEL after every peer and conn of it
 *            is gone (refcount_t @ref).
 *   o2_peer  one per remote NID per NI, in the NI's peer table; kref held
 *            by the table, by each of its conns, by each tx LNet sends
 *            to it (tx->peer) and by connd while it starts a reconnect.
 *   o2_conn  one RC connection; kref held by the peer's conn list (until
 *            close hands it to connd), by connd's teardown work and by
 *            short-lived users (launch, deadline scan).
 *   o2_tx    one outgoing message; kref held by its owner and by a posted
 *            Send WR.  Completes only after its Send completion.
 *   o2_rx    a receive buffer, part of its conn (conn->rxs): it lives as
 *            long as the conn, whose teardown drains the QP first.
 *   o2_dev   one per RDMA device, owns the shared PD and the pool of
 *            fast-registration MRs (mr.c); its users count is the number
 *            of conns and bulk buffers with resources on the device.
 *   o2_bulk  one bulk buffer and its RDMA exchange (bulk.c); kref held by
 *            its owner, the waiting table and each tx carrying it.
 *            Its MR is invalidated before the exchange completes, or
 *            destroyed and replaced if the exchange is abandoned.
 *   o2_rtr_msg  a message a router forwards (router.c): it holds a
 *            reference to the conn it came on only while it waits for a
 *            router buffer (released at once when that conn closes), then
 *            is owned by the tx or bulk exchange that sends it on.
 *
 * Contexts (all process context: no lock is taken from hard/soft irq)
 *   - rdma_cm callbacks run in the CM's work queues (they may sleep);
 *   - CQ completions run in ib_comp_wq: CQs use IB_POLL_WORKQUEUE, so
 *     completion handlers run in process context, take plain spinlocks
 *     and may allocate with GFP_KERNEL (never while holding a lock);
 *   - connd: o2_connd_wq (ordered, WQ_MEM_RECLAIM) runs the first step
 *     of each active connect and the deadline / reconnect / keepalive
 *     scan (every 250 ms); each conn's teardown runs on o2_reap_wq, so a
 *     slow destroy never holds the deadlines up; see connd.c;
 *   - o2_tx_wq runs ni->credit_work: messages that got their LNet tx
 *     credits from a completing message are sent from there, never from
 *     the completion itself (lnet.c);
 *   - ioctls run in the caller's context.
 *
 * Credits (credits.h): per conn under conn->lock (o2iblnd v2 credits,
 * reserved credits, sends in flight, send-queue slots), per peer and per
 * NI under ni->lock (LNet tx credits, below zero while messages queue).
 * A tx's LNet credits are returned by its release, i.e. after its Send
 * completion, never earlier.
 *
 * LOCK ORDER (outer to inner):
 *   o2_nis_mutex (ni.c; sleeping: listener destruction, held across
 *     rdma_destroy_id() of a listener, never taken in a CM callback)
 *   o2_devs_mutex (dev.c; sleeping; never taken under a spinlock)
 *   ni->lock (peer table, peer fields and peer conn lists)
 *     -> ni->conns_lock (every conn of the NI, any state: the views)
 *     -> conn->lock (conn state, credits, tx queues)
 *   The two mutexes nest only in that order (NET_SHOW's MR figures,
 *   views.c), never with a spinlock held.
 *   the pending table's lock (lnd/pending.c: pings, selftest RPCs and
 *   bulk exchanges waiting for an answer), ni->tx_pool_lock (an NI's
 *   released txs), o2_fault_lock (fault rules), o2_rtr_lock (router
 *   buffers and credits; taken under ni->lock by PEER_SHOW),
 *   dev->mr_lock (mr.c), o2_pset_lock (bulk.c), o2_lpeers_lock
 *   (discovery.c), o2_port_waits_lock and o2_connd_kick_lock (connd.c)
 *   are leaves: nothing is taken under them.
 *
 * A cm_id is never destroyed inside its own CM callback: the handler
 * returns 0 and connd destroys it, except for a refused CONNECT_REQUEST,
 * where the handler returns non-zero and the CM destroys the new id.
 *
 * Teardown of a conn is always: rdma_disconnect -> ib_drain_qp -> wait
 * for late Send completions and for a router copy under way -> fail
 * unposted txs -> unmap and free rx buffers -> destroy QP -> free CQ ->
 * destroy cm_id -> drop the device and peer references.
 */
#ifndef _O2LND_H
#define _O2LND_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <linux/atomic.h>
#include <linux/if.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_cm.h>
#include <uapi/o2lnd.h>
#include "compat.h"
#include "wire.h"
#include "nid.h"
#include "state.h"
#include "fault.h"
#include "credits.h"

#define O2_VERSION		"0.1.0"
/*
 * Address resolution gives up after O2_ADDR_TIMEOUT_MS and is retried up
 * to O2_ADDR_RETRIES times: the CM only re-checks the neighbour table
 * when its timer fires if no neighbour event reached it (seen on veth
 * pairs: a fresh ARP entry took the whole 5 s o2iblnd allows).
 */
#define O2_ADDR_TIMEOUT_MS	1000
#define O2_ADDR_RETRIES		4
#define O2_RESOLVE_TIMEOUT_MS	5000
#define O2_MAX_NETS		16
#define O2_RETRY_MAX		16	/* retry_count's largest value */
#define O2_CONNS_PER_PEER_MAX	16	/* conns_per_peer's largest value */
/* a conn that received a message gets ESTABLISHED within this, or closes */
#define O2_ESTABLISH_GRACE	(2 * HZ)

/* module parameters (params.c) */
extern char *o2_networks;
extern int o2_service;
extern int o2_peer_credits;
extern int o2_timeout;
extern int o2_credits;
extern int o2_ack_timeout;
extern int o2_reg_pairs;
extern int o2_peer_credits_hiw;
extern int o2_concurrent_sends;
extern int o2_ntx;
extern int o2_keepalive;
extern int o2_cksum_param;
extern int o2_health_sensitivity;
extern int o2_discovery_disabled;
extern int o2_retry_count;
extern int o2_transaction_timeout;
extern int o2_conns_per_peer;

#endif /* _O2LND_H */
