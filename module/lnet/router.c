// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet routing.  End nodes reach remote networks through the
 * gateways of routes=; a node with forwarding=enabled forwards between
 * its networks.
 *
 * Router buffers, as LNet's: three pools (tiny: no payload, small: up
 * to a page, large: up to 1 MiB) with credits, and per sending peer a
 * router credit (peer_buffer_credits).  A message to forward first takes
 * its peer's router credit, then a credit of its pool; short of either,
 * it waits (the credit goes below zero, LNet's lpni_rtrq and rbp_msgs).
 *
 * What o2lnd does that LNet does not (the router OOM of
 * docs/design/routing.md):
 *   - A waiting IMMEDIATE message holds its receive buffer (that is the
 *     back-pressure on its sender) but never its connection: when the
 *     connection closes, o2_rtr_conn_closed() releases its waiting
 *     messages at once, so the QP, CQ and receive buffers go with the
 *     teardown; the teardown waits only for a copy under way
 *     (conn->rtr_held).  A bulk PUT waiting for a large buffer holds no
 *     receive buffer at all (its request is copied).
 *   - Waiting has a deadline (router_timeout); the queue is bounded by
 *     the credits: at most peer_buffer_credits messages per peer beyond
 *     its buffers, and each connection holds at most its queue depth.
 *   - A next hop that is down (failed deadlines, o2_peer_health()) gets
 *     no traffic: messages for it are dropped at once, and counted,
 *     except one probe every O2_RTR_PROBE_INTERVAL, whose success marks
 *     it up again.
 * Once it has both credits a message is copied out: an IMMEDIATE one
 * into the message buffer of the tx that forwards it (that tx is its
 * router buffer: the credits return when the tx is released), a PUT into
 * a large buffer that the sender RDMA-writes and that is then sent on
 * as a PUT of our own (bulk.c).  The LNet header is forwarded unchanged.
 *
 * Locking: o2_rtr_lock protects the pools, every peer's router credits
 * and queue, and the waiting list; it is a leaf (taken inside ni->lock
 * by PEER_SHOW; it takes no other lock).  Granted messages are sent
 * from o2_rtr_work (o2_tx_wq), never from the completion or the context
 * that returned the credit.
 */
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "lnet.h"
#include "route.h"

static char *routes;
module_param(routes, charp, 0444);
MODULE_PARM_DESC(routes,
		 "routes to remote networks: \"<net> [<hops>] <gateway NID>[:<priority>][; ...]\"");

bool o2_forwarding;
static bool o2_rtr_live;	/* o2_rtr_init() done: a write applies at once */

/*
 * forwarding=, at load and written at run time
 * (/sys/module/o2lnd/parameters/forwarding): "enabled" or "disabled".
 * Switched off at run time, a router drains, as LNet's `lnetctl set
 * routing 0` does: it forwards no new message (what waits for a buffer
 * goes on), its ping info says RTE_DISABLED and is pushed to its peers, so
 * that their routes through it go down; switched on, it forwards again.
 * Runs under the module parameters' lock.
 */
static int o2_forwarding_set(const char *val, const struct kernel_param *kp)
{
	bool on;

	if (!*val || sysfs_streq(val, "disabled")) {
		on = false;
	} else if (sysfs_streq(val, "enabled")) {
		on = true;
	} else {
		/* one line, however the value was written */
		pr_err("o2lnd: forwarding='%.*s': expected enabled or disabled\n",
		       (int)min_t(size_t, strcspn(val, "\n"), 32), val);
		return -EINVAL;
	}
	if (!READ_ONCE(o2_rtr_live)) {
		o2_forwarding = on;
		return 0;
	}
	if (READ_ONCE(o2_forwarding) == on)
		return 0;
	WRITE_ONCE(o2_forwarding, on);
	pr_info("o2lnd: forwarding %s\n",
		on ? "enabled" : "disabled: draining, peers told (RTE_DISABLED)");
	o2_push_all();		/* our ping info changed */
	return 0;
}

static int o2_forwarding_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(o2_forwarding) ? "enabled" : "disabled");
}

static const struct kernel_param_ops o2_forwarding_ops = {
	.set = o2_forwarding_set,
	.get = o2_forwarding_get,
};

module_param_cb(forwarding, &o2_forwarding_ops, NULL, 0644);
MODULE_PARM_DESC(forwarding,
		 "\"enabled\" to forward between our networks (a router), \"disabled\" (default) not; writable: disabling drains a running router");

static int tiny_router_buffers = 512;
module_param(tiny_router_buffers, int, 0444);
MODULE_PARM_DESC(tiny_router_buffers,
		 "router buffers for messages without payload (8..65536)");

static int small_router_buffers = 512;
module_param(small_router_buffers, int, 0444);
MODULE_PARM_DESC(small_router_buffers,
		 "router buffers for payloads up to a page (8..65536)");

static int large_router_buffers = 32;
module_param(large_router_buffers, int, 0444);
MODULE_PARM_DESC(large_router_buffers,
		 "router buffers of 1 MiB for bulk payloads (1..4096)");

static int peer_buffer_credits;
module_param(peer_buffer_credits, int, 0444);
MODULE_PARM_DESC(peer_buffer_credits,
		 "router buffers one peer may hold (0: peer_credits; 1..16384)");

static int router_timeout;
module_param(router_timeout, int, 0444);
MODULE_PARM_DESC(router_timeout,
		 "seconds a message may wait for a router buffer (0: timeout; 1..3600)");

static int alive_router_check_interval = 60;
module_param(alive_router_check_interval, int, 0444);
MODULE_PARM_DESC(alive_router_check_interval,
		 "seconds between pings of each route's gateway, as LNet's router checker: a gateway that does not forward, or has no NI up on the route's network, takes the route down (0: no checks; 0..3600)");

static int router_ping_timeout = 50;
module_param(router_ping_timeout, int, 0444);
MODULE_PARM_DESC(router_ping_timeout,
		 "seconds a gateway's check may take before its routes count as down (1..3600)");

/* a down next hop gets one message through this often */
#define O2_RTR_PROBE_INTERVAL	(2 * HZ)

static struct o2_route_spec o2_routes[O2_MAX_ROUTES];
static int o2_nroutes;
static atomic64_t o2_route_sent[O2_MAX_ROUTES];
static atomic64_t o2_route_dropped[O2_MAX_ROUTES];
/*
 * What each route's gateway last told us (enum o2_route_state; xchg, no
 * lock): UP, DEAD when its ping info said it would not forward there
 * (o2_route_gw_alive(): from its check, any ping or discovery of it, or
 * its push), DOWN when its last check got no answer.
 */
static u32 o2_route_heard[O2_MAX_ROUTES];
static void o2_rtr_check_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(o2_rtr_check_work, o2_rtr_check_fn);
static bool o2_rtr_check_stopped;	/* READ_ONCE/WRITE_ONCE */

/**
 * struct o2_rtr_pool - router buffer pool
 * @cr: its credits
 * @size: payload bytes of one buffer
 * @taken: buffers handed out
 * @q: messages waiting for a credit
 */
struct o2_rtr_pool {
	struct o2_txcr cr;
	u32 size;
	u64 taken;
	struct list_head q;
};

static struct o2_rtr_pool o2_rtr_pools[O2LND_RTR_NPOOLS];
static DEFINE_SPINLOCK(o2_rtr_lock);
static LIST_HEAD(o2_rtr_waiting);	/* every waiting message (all) */
static LIST_HEAD(o2_rtr_ready);		/* granted, to send (list) */
static u32 o2_rtr_nwaiting, o2_rtr_waiting_max, o2_rtr_nheld;
static void o2_rtr_work_fn(struct work_struct *work);
static DECLARE_WORK(o2_rtr_work, o2_rtr_work_fn);

static struct {
	atomic64_t forwarded;
	atomic64_t forwarded_bytes;
	atomic64_t no_route;
	atomic64_t down;
	atomic64_t timeout;
	atomic64_t closed;
	atomic64_t error;
} o2_rtr_st;

/**
 * o2_rtr_peer_credits() - router credits of a new peer
 *
 * Return: peer_buffer_credits, or peer_credits when it is 0.
 */
int o2_rtr_peer_credits(void)
{
	return peer_buffer_credits ? peer_buffer_credits : o2_peer_credits;
}

/* ---- routes ---- */

/**
 * o2_route_find() - the route that leads to @net
 * @net: a network that is not local
 *
 * Return: the route's index, or -1.
 */
static int o2_route_find(u32 net)
{
	u8 state[O2_MAX_ROUTES] = {};
	u32 nets[O2_MAX_NETS];
	struct o2_peer *gw;
	struct o2_ni *ni;
	int n = 0, i;

	o2_for_each_ni(ni)
		if (n < O2_MAX_NETS)
			nets[n++] = o2_nid_net(ni->nid);
	for (i = 0; i < o2_nroutes; i++) {
		if (o2_routes[i].net != net)
			continue;
		state[i] = READ_ONCE(o2_route_heard[i]);
		ni = o2_ni_toward(o2_routes[i].gw);
		if (!ni || state[i] != O2_ROUTE_UP)
			continue;
		spin_lock(&ni->lock);
		gw = o2_peer_find_locked(ni, o2_routes[i].gw);
		if (gw && gw->down)
			state[i] = O2_ROUTE_DOWN;
		spin_unlock(&ni->lock);
	}
	return o2_route_pick(o2_routes, o2_nroutes, net, nets, n, state);
}

/**
 * o2_route_ni() - the NI and next hop for a NID on no local network
 * @nid: the destination
 * @hop: out: the gateway's NID
 *
 * Return: the NI the gateway is on, or NULL if no route leads there.
 */
struct o2_ni *o2_route_ni(u64 nid, u64 *hop)
{
	int r = o2_route_find(o2_nid_net(nid));

	if (r < 0)
		return NULL;
	*hop = o2_routes[r].gw;
	return o2_ni_toward(*hop);
}

/**
 * o2_route_hop() - where a message from @ni to @nid goes first
 * @ni: the NI it leaves from
 * @nid: its destination
 * @count: count the message in its route's sent count
 *
 * Return: @nid on @ni's network, else the gateway of its route on @ni's
 * network, or 0 if none.
 */
u64 o2_route_hop(struct o2_ni *ni, u64 nid, bool count)
{
	int r;

	if (o2_nid_net(nid) == o2_nid_net(ni->nid))
		return nid;
	r = o2_route_find(o2_nid_net(nid));
	if (r < 0 || o2_nid_net(o2_routes[r].gw) != o2_nid_net(ni->nid))
		return 0;
	if (count)
		atomic64_inc(&o2_route_sent[r]);
	return o2_routes[r].gw;
}

/* ---- the gateways' checks ---- */

/* Is @nid one of the @n NIDs of @nids? */
static bool o2_nid_in(u64 nid, const u64 *nids, int n)
{
	while (n-- > 0)
		if (nids[n] == nid)
			return true;
	return false;
}

/* Route @i's gateway told us @state (why: for the log): log a change. */
static void o2_route_heard_set(int i, u32 state, const char *why)
{
	char net[O2_NIDSTR_SIZE], gw[O2_NIDSTR_SIZE];

	if (xchg(&o2_route_heard[i], state) == state)
		return;
	pr_info_ratelimited("o2lnd: route to %s through %s %s%s\n",
			    o2_net_format(o2_routes[i].net, net, sizeof(net)),
			    o2_nid_format(o2_routes[i].gw, gw, sizeof(gw)),
			    state == O2_ROUTE_UP ? "up" : "down: ",
			    state == O2_ROUTE_UP ? "" : why);
}

/**
 * o2_route_gw_heard() - a peer's ping info was learned: judge the routes
 *	through it
 * @v: the ping info (of a check, a ping or discovery of ours, or a push)
 *
 * Every route whose gateway is one of @v's NIDs is UP or DEAD as
 * o2_route_gw_alive() says; a gateway that stops forwarding, or loses its
 * NIs on a route's network, takes that route out of use as soon as it
 * tells us (its push), not at its next check.
 */
void o2_route_gw_heard(const struct o2_ping_view *v)
{
	int i;
	u32 k;

	for (i = 0; i < o2_nroutes; i++) {
		const struct o2_route_spec *r = &o2_routes[i];
		bool alive, listed = false;

		for (k = 0; k < v->n; k++)
			listed |= v->ni[k].nid == r->gw;
		if (!listed)
			continue;
		alive = o2_route_gw_alive(r, v);
		o2_route_heard_set(i, alive ? O2_ROUTE_UP : O2_ROUTE_DEAD,
				   v->features & O2_PING_FEAT_RTE_DISABLED ?
				   "the gateway does not forward" :
				   "the gateway has no NI up on that network");
	}
}

/*
 * LNet's router checker: every alive_router_check_interval seconds each
 * gateway is pinged, at most router_ping_timeout seconds each.  A reply
 * is learned (o2_lpeer_learn()), which judges the routes through it
 * (o2_route_gw_heard()); no reply makes them DOWN, still used when no
 * route is up (their traffic probes the gateway), until a later check
 * gets an answer.  One gateway at a time, on system_long_wq; at unload
 * o2_rtr_stop() ends a ping in flight (o2_pings_stop()).
 */
static void o2_rtr_check_fn(struct work_struct *work)
{
	struct o2lnd_ioc_ping *out;
	u64 gws[O2_MAX_ROUTES];
	int n = 0, i, j, rc;

	for (i = 0; i < o2_nroutes; i++)
		if (!o2_nid_in(o2_routes[i].gw, gws, n))
			gws[n++] = o2_routes[i].gw;
	out = kmalloc(sizeof(*out), GFP_KERNEL);
	for (j = 0; out && j < n && !READ_ONCE(o2_rtr_check_stopped); j++) {
		memset(out, 0, sizeof(*out));
		out->max_ids = 1;
		rc = o2_ping(gws[j], O2LND_NID_ANY, false,
			     router_ping_timeout * MSEC_PER_SEC, out);
		if (!rc)
			continue;
		if (rc == -ESHUTDOWN)
			break;
		for (i = 0; i < o2_nroutes; i++)
			if (o2_routes[i].gw == gws[j])
				o2_route_heard_set(i, O2_ROUTE_DOWN,
						   "the gateway did not answer its check");
	}
	kfree(out);
	if (!READ_ONCE(o2_rtr_check_stopped))
		queue_delayed_work(system_long_wq, &o2_rtr_check_work,
				   alive_router_check_interval * HZ);
}

/**
 * o2_rtr_stop() - at unload, before the NIs stop: no more gateway checks
 *
 * Ends a check's ping in flight at once (o2_pings_stop(), which ends
 * every internal ping and push), so that unloading never waits for a
 * router_ping_timeout.
 */
void o2_rtr_stop(void)
{
	WRITE_ONCE(o2_rtr_check_stopped, true);
	o2_pings_stop();
	cancel_delayed_work_sync(&o2_rtr_check_work);
}

/* ---- router buffers ---- */

/**
 * struct o2_rtr_msg - a message this router forwards
 * @list: in its peer's or pool's queue, or o2_rtr_ready
 * @all: in o2_rtr_waiting while it waits
 * @conn: the conn it came on (a reference while it waits)
 * @rx: its receive buffer, held while it waits (IMMEDIATE)
 * @src: the sending peer, whose router credit it takes (a reference)
 * @pool: O2LND_RTR_*
 * @nob: LNet header and payload bytes
 * @deadline: when waiting ends
 * @peer_credit: it holds @src's router credit
 * @pool_credit: it holds a credit of @pool
 * @waiting: on a queue
 * @put: a PUT_REQ (bulk): its request, copied
 * @putreq: that copy
 * @out_ni: the NI it leaves from
 * @hop: the next hop, on @out_ni's network
 * @to: the destination NID it goes out with: the one it came with, or on
 *	its last hop another NID of a Multi-Rail destination (the header's
 *	dest_nid is rewritten to it, as LNet's router does)
 */
struct o2_rtr_msg {
	struct list_head list;
	struct list_head all;
	struct o2_conn *conn;
	struct o2_rx *rx;
	struct o2_peer *src;
	struct o2_ni *out_ni;
	u64 hop;
	u64 to;
	int pool;
	u32 nob;
	unsigned long deadline;
	bool peer_credit;
	bool pool_credit;
	bool waiting;
	bool put;
	struct o2_putreq_msg putreq;
};

static int o2_rtr_pool_of(u32 payload)
{
	if (!payload)
		return O2LND_RTR_TINY;
	return payload <= PAGE_SIZE ? O2LND_RTR_SMALL : O2LND_RTR_LARGE;
}

/* Caller holds o2_rtr_lock: @m waits on @q. */
static void o2_rtr_wait_locked(struct o2_rtr_msg *m, struct list_head *q)
{
	lockdep_assert_held(&o2_rtr_lock);
	list_add_tail(&m->list, q);
	if (!m->waiting) {
		m->waiting = true;
		list_add_tail(&m->all, &o2_rtr_waiting);
		o2_rtr_nwaiting++;
		o2_rtr_waiting_max = max(o2_rtr_waiting_max, o2_rtr_nwaiting);
	}
}

/* Caller holds o2_rtr_lock: @m got its peer credit; now its pool's. */
static void o2_rtr_take_pool_locked(struct o2_rtr_msg *m)
{
	struct o2_rtr_pool *p = &o2_rtr_pools[m->pool];

	lockdep_assert_held(&o2_rtr_lock);
	if (o2_txcr_take(&p->cr)) {
		m->pool_credit = true;
		p->taken++;
		if (m->waiting)
			list_add_tail(&m->list, &o2_rtr_ready);
		return;
	}
	o2_rtr_wait_locked(m, &p->q);
}

/*
 * Caller holds o2_rtr_lock: take @m's credits as far as they go.
 * Return: true if it has both.
 */
static bool o2_rtr_take_locked(struct o2_rtr_msg *m)
{
	lockdep_assert_held(&o2_rtr_lock);
	if (!o2_txcr_take(&m->src->rtrcr)) {
		o2_rtr_wait_locked(m, &m->src->rtr_q);
		return false;
	}
	m->peer_credit = true;
	o2_rtr_take_pool_locked(m);
	return m->pool_credit;
}

/* Caller holds o2_rtr_lock: give back @m's credits, granting waiters. */
static bool o2_rtr_return_locked(struct o2_rtr_msg *m)
{
	struct o2_rtr_pool *p = &o2_rtr_pools[m->pool];
	struct o2_rtr_msg *w;
	bool granted = false;

	lockdep_assert_held(&o2_rtr_lock);
	if (m->pool_credit && o2_txcr_return(&p->cr)) {
		w = list_first_entry(&p->q, struct o2_rtr_msg, list);
		list_del(&w->list);
		w->pool_credit = true;
		p->taken++;
		list_add_tail(&w->list, &o2_rtr_ready);
		granted = true;
	}
	m->pool_credit = false;
	if (m->peer_credit && o2_txcr_return(&m->src->rtrcr)) {
		w = list_first_entry(&m->src->rtr_q, struct o2_rtr_msg, list);
		list_del(&w->list);
		w->peer_credit = true;
		o2_rtr_take_pool_locked(w);
		granted |= w->pool_credit;
	}
	m->peer_credit = false;
	return granted;
}

/*
 * Caller holds o2_rtr_lock: @m, waiting, leaves its queue without a
 * credit (deadline, conn closed, unload).
 */
static void o2_rtr_unwait_locked(struct o2_rtr_msg *m)
{
	lockdep_assert_held(&o2_rtr_lock);
	list_del_init(&m->list);
	list_del_init(&m->all);
	m->waiting = false;
	o2_rtr_nwaiting--;
	if (!m->peer_credit)
		o2_txcr_unqueue(&m->src->rtrcr);
	else if (!m->pool_credit)
		o2_txcr_unqueue(&o2_rtr_pools[m->pool].cr);
}

/* Give the held receive buffer of @m back to its conn. */
static void o2_rtr_release_rx(struct o2_rtr_msg *m)
{
	struct o2_conn *conn = m->conn;

	if (!m->rx)
		return;
	o2_rx_repost(m->rx, o2_rx_credit_of(O2_MSG_IMMEDIATE));
	m->rx = NULL;
	spin_lock(&o2_rtr_lock);
	o2_rtr_nheld--;
	spin_unlock(&o2_rtr_lock);
	o2_rx_unhold(conn);
}

/* Free @m, which holds no credit and is on no queue. */
static void o2_rtr_msg_free(struct o2_rtr_msg *m)
{
	o2_rtr_release_rx(m);
	if (m->conn)
		o2_conn_put(m->conn);
	o2_peer_put(m->src);
	kfree(m);
}

/**
 * o2_rtr_msg_done() - a forwarded message is done with its buffer
 * @m: the message (its tx was released, or its bulk exchange ended)
 * @status: 0, or why forwarding failed
 */
void o2_rtr_msg_done(struct o2_rtr_msg *m, int status)
{
	bool granted;

	if (status)
		atomic64_inc(&o2_rtr_st.error);
	spin_lock(&o2_rtr_lock);
	granted = o2_rtr_return_locked(m);
	spin_unlock(&o2_rtr_lock);
	if (granted)
		queue_work(o2_tx_wq, &o2_rtr_work);
	o2_rtr_msg_free(m);
}

/* A forwarded message's tx is done with the router buffer (tx->done). */
static void o2_rtr_tx_done(struct o2_tx *tx)
{
	o2_rtr_msg_done(tx->owner, tx->status);
}

static void o2_rtr_drop(struct o2_conn *conn, atomic64_t *count,
			const char *why, u64 dest)
{
	char from[O2_NIDSTR_SIZE], to[O2_NIDSTR_SIZE];

	atomic64_inc(count);
	atomic64_inc(&conn->ni->stats.drop_count);
	atomic64_inc(&conn->peer->st.drop_count);
	pr_warn_ratelimited("o2lnd: %s: not forwarding a message from %s to %s: %s\n",
			    conn->ni->net,
			    o2_nid_format(conn->peer->nid, from, sizeof(from)),
			    o2_nid_format(dest, to, sizeof(to)), why);
}

/*
 * The next hop for @dest, checked: its NI in @out_ni, its NID in @hop, and
 * the destination NID to send with in @to.  A destination on one of our
 * networks that is a Multi-Rail peer we know is reached, as LNet's router
 * reaches it, at whichever of its NIDs the selection picks
 * (o2_lnet_select()): @to and @hop are that NID, @out_ni the NI toward it.
 * Return: 0, or -EHOSTUNREACH (no route: counted) or -ENETDOWN (the next
 * hop is down and no probe is due: counted).
 */
static int o2_rtr_next_hop(struct o2_conn *conn, u64 dest,
			   struct o2_ni **out_ni, u64 *hop, u64 *to)
{
	struct o2_peer *peer;
	bool down = false;
	int rc;

	*out_ni = o2_lnet_select(dest, O2LND_NID_ANY, 0, to, &rc);
	*hop = *out_ni ? o2_route_hop(*out_ni, *to, true) : 0;
	if (!*out_ni || !*hop || *hop == conn->peer->nid) {
		o2_rtr_drop(conn, &o2_rtr_st.no_route,
			    "no route (or it leads back)", dest);
		return -EHOSTUNREACH;
	}
	spin_lock(&(*out_ni)->lock);
	peer = o2_peer_find_locked(*out_ni, *hop);
	if (peer && peer->down) {
		down = time_before(jiffies, peer->rtr_probe_at);
		if (!down)
			peer->rtr_probe_at = jiffies + O2_RTR_PROBE_INTERVAL;
	}
	spin_unlock(&(*out_ni)->lock);
	if (down) {
		int r = o2_route_find(o2_nid_net(*to));

		if (r >= 0 && o2_nid_net(*to) != o2_nid_net((*out_ni)->nid))
			atomic64_inc(&o2_route_dropped[r]);
		o2_rtr_drop(conn, &o2_rtr_st.down, "the next hop is down",
			    dest);
		return -ENETDOWN;
	}
	return 0;
}

/* Forward IMMEDIATE @m, which has its credits, from @payload. */
static void o2_rtr_send_immediate(struct o2_rtr_msg *m, const void *payload)
{
	const struct o2_lnet_hdr *h = payload;
	struct o2_lnet_hdr *out;
	struct o2_tx *tx;

	tx = o2_tx_alloc(m->out_ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		o2_rtr_msg_done(m, -ENOBUFS);
		return;
	}
	out = tx->msg + sizeof(struct o2_msg_hdr);
	memcpy(out, payload, m->nob);
	out->dest_nid = cpu_to_le64(m->to);
	tx->nob = sizeof(struct o2_msg_hdr) + m->nob;
	/* copied: the receive buffer and the conn are free to go */
	o2_rtr_release_rx(m);
	o2_conn_put(m->conn);
	m->conn = NULL;
	atomic64_inc(&o2_rtr_st.forwarded);
	atomic64_add(le32_to_cpu(h->payload_length),
		     &o2_rtr_st.forwarded_bytes);
	tx->owner = m;
	tx->done = o2_rtr_tx_done;
	o2_ni_launch(m->out_ni, m->hop, tx);
}

static void o2_rtr_bulk_done(struct o2_bulk *b, int status);

/* Forward PUT @m, which has its credits: take the data into a buffer. */
static void o2_rtr_start_put(struct o2_rtr_msg *m)
{
	const struct o2_bulk_owner o = { .done = o2_rtr_bulk_done, .ctx = m };
	int rc = o2_bulk_sink_start(m->conn, &m->putreq, &o);

	if (rc) {
		o2_bulk_rtr_nak(m->conn, &m->putreq, rc);
		o2_rtr_msg_done(m, rc);
	}
}

/*
 * The data of forwarded PUT @m is in buffer @b (a reference passes to
 * the send): send it on to the next hop as a PUT of this router.
 */
static void o2_rtr_put_arrived(struct o2_rtr_msg *m, struct o2_bulk *b)
{
	const struct o2_bulk_owner o = { .done = o2_rtr_bulk_done, .ctx = m };
	struct o2_tx *tx;

	atomic64_inc(&o2_rtr_st.forwarded);
	atomic64_add(b->nob, &o2_rtr_st.forwarded_bytes);
	o2_conn_put(m->conn);	/* its sender is done with */
	m->conn = NULL;
	tx = o2_bulk_rtr_send(m->out_ni, m->hop, &m->putreq.hdr, b, &o);
	if (tx)
		o2_ni_launch(m->out_ni, m->hop, tx);
}

/*
 * b->done of a PUT this router forwards: in (the sink filled: now out),
 * out (sent on), or failed; also when abandoned (-ECONNABORTED).
 */
static void o2_rtr_bulk_done(struct o2_bulk *b, int status)
{
	struct o2_rtr_msg *m = b->owner;

	if (b->kind == O2_BULK_PUT_SINK && !status) {
		kref_get(&b->ref);
		o2_rtr_put_arrived(m, b);
	} else {
		o2_rtr_msg_done(m, status);
	}
}

/* Send what got its credits. */
static void o2_rtr_work_fn(struct work_struct *work)
{
	struct o2_rtr_msg *m;

	for (;;) {
		spin_lock(&o2_rtr_lock);
		m = list_first_entry_or_null(&o2_rtr_ready, struct o2_rtr_msg,
					     list);
		if (m) {
			list_del_init(&m->list);
			list_del_init(&m->all);
			m->waiting = false;
			o2_rtr_nwaiting--;
		}
		spin_unlock(&o2_rtr_lock);
		if (!m)
			return;
		if (m->put)
			o2_rtr_start_put(m);
		else
			o2_rtr_send_immediate(m, m->rx->msg +
					      sizeof(struct o2_msg_hdr));
	}
}

/*
 * A message of @conn for @dest, to forward through pool @pool: checks that
 * this node forwards and that a next hop that is not down leads to @dest.
 * Return: the message with its next hop, or NULL with @rc (the drop is
 * counted and logged).
 */
static struct o2_rtr_msg *o2_rtr_admit(struct o2_conn *conn, u64 dest,
				       int pool, int *rc)
{
	struct o2_rtr_msg *m;
	struct o2_ni *out_ni;
	u64 hop, to;

	if (!READ_ONCE(o2_forwarding)) {
		o2_rtr_drop(conn, &o2_rtr_st.no_route,
			    "not a router (forwarding disabled)", dest);
		*rc = -EHOSTUNREACH;
		return NULL;
	}
	*rc = o2_rtr_next_hop(conn, dest, &out_ni, &hop, &to);
	if (*rc)
		return NULL;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		o2_rtr_drop(conn, &o2_rtr_st.error, "no memory", dest);
		*rc = -ENOMEM;
		return NULL;
	}
	INIT_LIST_HEAD(&m->list);
	INIT_LIST_HEAD(&m->all);
	kref_get(&conn->ref);
	m->conn = conn;
	kref_get(&conn->peer->ref);
	m->src = conn->peer;
	m->pool = pool;
	m->out_ni = out_ni;
	m->hop = hop;
	m->to = to;
	m->deadline = jiffies + (router_timeout ? router_timeout :
				 o2_timeout) * HZ;
	return m;
}

/**
 * o2_rtr_forward() - an IMMEDIATE message for another node arrived
 * @conn: the conn it came on
 * @rx: its receive buffer
 * @payload: its LNet header and payload (checked by o2_lnet_recv())
 * @nob: their length
 *
 * Called from the Receive completion.
 *
 * Return: true if @rx is held (the message waits for a router buffer;
 * it is reposted when the message is copied or dropped), false if the
 * caller reposts it.
 */
bool o2_rtr_forward(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		    u32 nob)
{
	const struct o2_lnet_hdr *h = payload;
	u64 dest = le64_to_cpu(h->dest_nid);
	struct o2_rtr_msg *m;
	bool now;
	int rc;

	m = o2_rtr_admit(conn, dest,
			 o2_rtr_pool_of(le32_to_cpu(h->payload_length)), &rc);
	if (!m)
		return false;
	m->nob = nob;
	spin_lock(&o2_rtr_lock);
	if (conn->rtr_closed) {
		spin_unlock(&o2_rtr_lock);
		o2_rtr_drop(conn, &o2_rtr_st.closed, "its connection closed",
			    dest);
		o2_rtr_msg_free(m);
		return false;
	}
	now = o2_rtr_take_locked(m);
	if (!now) {
		m->rx = rx;
		o2_rtr_nheld++;
		atomic_inc(&conn->rtr_held);
	}
	spin_unlock(&o2_rtr_lock);
	if (now)
		o2_rtr_send_immediate(m, payload);
	return !now;
}

/**
 * o2_rtr_forward_put() - a PUT_REQ for another node arrived
 * @conn: the conn it came on
 * @m: the request (header checked)
 *
 * Answers the sender later (PUT_ACK once a large buffer is ours, or
 * PUT_NAK); its credit returns with that answer.
 *
 * Return: 0, or an errno when refused at once (the caller NAKs).
 */
int o2_rtr_forward_put(struct o2_conn *conn, const struct o2_putreq_msg *m)
{
	u64 dest = le64_to_cpu(m->hdr.dest_nid);
	struct o2_rtr_msg *rm;
	int rc;

	rm = o2_rtr_admit(conn, dest, O2LND_RTR_LARGE, &rc);
	if (!rm)
		return rc;
	if (le32_to_cpu(m->hdr.payload_length) > O2LND_BRW_MAX_SIZE) {
		o2_rtr_drop(conn, &o2_rtr_st.error, "PUT beyond 1 MiB", dest);
		o2_rtr_msg_free(rm);
		return -EMSGSIZE;
	}
	rm->put = true;
	rm->putreq = *m;
	rm->putreq.hdr.dest_nid = cpu_to_le64(rm->to);
	rm->nob = le32_to_cpu(m->hdr.payload_length);
	spin_lock(&o2_rtr_lock);
	if (conn->rtr_closed) {
		spin_unlock(&o2_rtr_lock);
		o2_rtr_msg_free(rm);
		return -ECONNABORTED;
	}
	if (!o2_rtr_take_locked(rm))
		rm = NULL;	/* waits; o2_rtr_work_fn() starts it */
	spin_unlock(&o2_rtr_lock);
	if (rm)
		o2_rtr_start_put(rm);
	return 0;
}

/* Drop waiting @m (off every queue). */
static void o2_rtr_drop_waiting(struct o2_rtr_msg *m, int why)
{
	if (m->put && why == -ETIMEDOUT)
		o2_bulk_rtr_nak(m->conn, &m->putreq, why);
	o2_rtr_msg_done(m, 0);	/* a granted one holds credits */
}

/*
 * Take waiting messages off the queues: of @conn (NULL: any), past their
 * deadline unless @all.
 */
static void o2_rtr_take_waiting(struct o2_conn *conn, unsigned long now,
				bool all, struct list_head *out)
{
	struct o2_rtr_msg *m, *next;

	spin_lock(&o2_rtr_lock);
	if (conn)
		conn->rtr_closed = true;
	list_for_each_entry_safe(m, next, &o2_rtr_waiting, all) {
		if (conn ? m->conn != conn :
			   !all && time_before(now, m->deadline))
			continue;
		o2_rtr_unwait_locked(m);
		list_add_tail(&m->list, out);
	}
	spin_unlock(&o2_rtr_lock);
}

static void o2_rtr_drop_list(struct list_head *q, atomic64_t *count,
			     int why)
{
	struct o2_rtr_msg *m, *next;

	list_for_each_entry_safe(m, next, q, list) {
		list_del_init(&m->list);
		atomic64_inc(count);
		atomic64_inc(&m->conn->ni->stats.drop_count);
		atomic64_inc(&m->src->st.drop_count);
		o2_rtr_drop_waiting(m, why);
	}
}

/**
 * o2_rtr_conn_closed() - @conn closes: release what waits on it
 * @conn: the conn (CLOSING)
 *
 * Its waiting messages are dropped (their receive buffers are not
 * reposted: the conn is closing), so nothing here keeps the conn, its
 * QP or its buffers alive.  Called from o2_conn_close().
 */
void o2_rtr_conn_closed(struct o2_conn *conn)
{
	LIST_HEAD(q);

	o2_rtr_take_waiting(conn, jiffies, true, &q);
	if (!list_empty(&q)) {
		char nid[O2_NIDSTR_SIZE];

		pr_info_ratelimited("o2lnd: %s: connection to %s closed: released its messages waiting for router buffers\n",
				    conn->ni->net,
				    o2_nid_format(conn->peer->nid, nid,
						  sizeof(nid)));
	}
	o2_rtr_drop_list(&q, &o2_rtr_st.closed, -ECONNABORTED);
}

/**
 * o2_rtr_expire() - drop messages that waited too long
 * @now: jiffies
 * @all: drop every waiting message (unload)
 *
 * Called by connd's scan.
 */
void o2_rtr_expire(unsigned long now, bool all)
{
	LIST_HEAD(q);

	o2_rtr_take_waiting(NULL, now, all, &q);
	o2_rtr_drop_list(&q, all ? &o2_rtr_st.closed : &o2_rtr_st.timeout,
			 -ETIMEDOUT);
	if (all)
		flush_work(&o2_rtr_work);
}

/* ---- load ---- */

static int o2_rtr_param(const char *name, int val, int min, int max)
{
	if (val >= min && val <= max)
		return 0;
	pr_err("o2lnd: %s=%d out of range %d..%d\n", name, val, min, max);
	return -EINVAL;
}

/**
 * o2_rtr_init() - check and apply routes=, forwarding= and the router
 *	buffer parameters
 *
 * Called once the NIs exist: a gateway must be on one of our networks,
 * a remote network must not be one of them.
 *
 * Return: 0, or -EINVAL after a pr_err() naming the bad parameter.
 */
int o2_rtr_init(void)
{
	const int sizes[O2LND_RTR_NPOOLS] = {
		0, PAGE_SIZE, O2LND_BRW_MAX_SIZE
	};
	const int counts[O2LND_RTR_NPOOLS] = {
		tiny_router_buffers, small_router_buffers,
		large_router_buffers
	};
	char err[128], a[O2_NIDSTR_SIZE];
	int i, n;

	if (o2_rtr_param("tiny_router_buffers", tiny_router_buffers, 8,
			 65536) ||
	    o2_rtr_param("small_router_buffers", small_router_buffers, 8,
			 65536) ||
	    o2_rtr_param("large_router_buffers", large_router_buffers, 1,
			 4096) ||
	    o2_rtr_param("peer_buffer_credits", peer_buffer_credits, 0,
			 16384) ||
	    o2_rtr_param("router_timeout", router_timeout, 0, 3600) ||
	    o2_rtr_param("alive_router_check_interval",
			 alive_router_check_interval, 0, 3600) ||
	    o2_rtr_param("router_ping_timeout", router_ping_timeout, 1, 3600))
		return -EINVAL;
	n = o2_routes_parse(routes ? routes : "", o2_routes, O2_MAX_ROUTES,
			    err, sizeof(err));
	if (n < 0) {
		pr_err("o2lnd: routes: %s\n", err);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (o2_ni_by_net(o2_routes[i].net)) {
			pr_err("o2lnd: routes: %s is a local network\n",
			       o2_net_format(o2_routes[i].net, a, sizeof(a)));
			return -EINVAL;
		}
		if (!o2_ni_by_net(o2_nid_net(o2_routes[i].gw))) {
			pr_err("o2lnd: routes: gateway %s is not on a local network\n",
			       o2_nid_format(o2_routes[i].gw, a, sizeof(a)));
			return -EINVAL;
		}
	}
	o2_nroutes = n;
	for (i = 0; i < O2LND_RTR_NPOOLS; i++) {
		o2_txcr_init(&o2_rtr_pools[i].cr, counts[i]);
		o2_rtr_pools[i].size = sizes[i];
		INIT_LIST_HEAD(&o2_rtr_pools[i].q);
	}
	WRITE_ONCE(o2_rtr_live, true);
	/* the first check one interval after load: gateways load too */
	if (n && alive_router_check_interval)
		queue_delayed_work(system_long_wq, &o2_rtr_check_work,
				   alive_router_check_interval * HZ);
	return 0;
}

/* ---- views ---- */

/**
 * o2_route_show() - O2LND_IOC_ROUTE_SHOW
 * @index: the route
 * @out: zeroed output
 *
 * Return: 0 or -ENOENT past the last route.
 */
int o2_route_show(u32 index, struct o2lnd_ioc_route *out)
{
	const struct o2_route_spec *r;
	struct o2_peer *gw;
	struct o2_ni *ni;

	out->count = o2_nroutes;
	if (index >= o2_nroutes)
		return -ENOENT;
	r = &o2_routes[index];
	out->net = r->net;
	out->hops = r->hops;
	out->gateway = r->gw;
	out->priority = r->priority;
	out->gw_health = READ_ONCE(o2_route_heard[index]) == O2_ROUTE_UP ?
			 O2LND_HEALTH_UP : O2LND_HEALTH_DOWN;
	ni = o2_ni_toward(r->gw);
	if (ni) {
		spin_lock(&ni->lock);
		gw = o2_peer_find_locked(ni, r->gw);
		if (gw && gw->down)
			out->gw_health = O2LND_HEALTH_DOWN;
		spin_unlock(&ni->lock);
	}
	out->sent = atomic64_read(&o2_route_sent[index]);
	out->dropped = atomic64_read(&o2_route_dropped[index]);
	return 0;
}

/**
 * o2_routing_show() - O2LND_IOC_ROUTING_SHOW
 * @out: zeroed output
 */
void o2_routing_show(struct o2lnd_ioc_routing *out)
{
	int i;

	out->forwarding = READ_ONCE(o2_forwarding);
	out->peer_buffer_credits = o2_rtr_peer_credits();
	out->router_timeout_s = router_timeout ? router_timeout : o2_timeout;
	spin_lock(&o2_rtr_lock);
	out->waiting = o2_rtr_nwaiting;
	out->waiting_max = o2_rtr_waiting_max;
	out->held_rx = o2_rtr_nheld;
	for (i = 0; i < O2LND_RTR_NPOOLS; i++) {
		out->pools[i].nbuffers = o2_rtr_pools[i].cr.max;
		out->pools[i].buffer_size = o2_rtr_pools[i].size;
		out->pools[i].credits = o2_rtr_pools[i].cr.avail;
		out->pools[i].min_credits = o2_rtr_pools[i].cr.min;
		out->pools[i].taken = o2_rtr_pools[i].taken;
	}
	spin_unlock(&o2_rtr_lock);
	out->forwarded = atomic64_read(&o2_rtr_st.forwarded);
	out->forwarded_bytes = atomic64_read(&o2_rtr_st.forwarded_bytes);
	out->dropped_no_route = atomic64_read(&o2_rtr_st.no_route);
	out->dropped_down = atomic64_read(&o2_rtr_st.down);
	out->dropped_timeout = atomic64_read(&o2_rtr_st.timeout);
	out->dropped_closed = atomic64_read(&o2_rtr_st.closed);
	out->dropped_error = atomic64_read(&o2_rtr_st.error);
}

/**
 * o2_rtr_peer_show() - a peer's router credits for PEER_SHOW
 * @peer: the peer
 * @out: output
 */
void o2_rtr_peer_show(struct o2_peer *peer, struct o2lnd_ioc_peer *out)
{
	spin_lock(&o2_rtr_lock);
	out->rtr_credits = peer->rtrcr.avail;
	out->rtr_credits_max = peer->rtrcr.max;
	out->rtr_credits_min = peer->rtrcr.min;
	out->rtr_queued = peer->rtrcr.queued;
	spin_unlock(&o2_rtr_lock);
}
