// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the ioctl views of LNet's objects (NET_SHOW, PEER_SHOW,
 * CONN_SHOW) and PEER_CLOSE, read under the locks that guard each object.
 */
#include <linux/mutex.h>
#include <linux/stddef.h>
#include "lnet.h"

/*
 * ---- counters, from the uapi lists ----
 *
 * Each view's counters are filled by its list (include/uapi/o2lnd_counters.h).
 * For each list, tables in its order: where each counter is in the uapi
 * struct (and its size), and where the kernel keeps it (and its size: an
 * atomic64_t or a u32).  A counter the kernel does not keep under the
 * list's name does not compile.
 */
struct o2_view_ctr {
	u16 off;
	u16 size;
};

struct o2_view_ctrs {
	const struct o2_view_ctr *uapi;
	const u16 *koff;
	const u8 *ksize;
	unsigned int n;
};

static void o2_view_counters(void *out, const void *obj,
			     const struct o2_view_ctrs *t)
{
	const void *k;
	unsigned int i;
	u64 v;

	for (i = 0; i < t->n; i++) {
		k = obj + t->koff[i];
		if (t->ksize[i] == sizeof(atomic64_t))
			v = atomic64_read(k);
		else
			v = READ_ONCE(*(const u32 *)k);
		if (t->uapi[i].size == sizeof(u64))
			*(u64 *)(out + t->uapi[i].off) = v;
		else
			*(u32 *)(out + t->uapi[i].off) = v;
	}
}

/* the tables <p>_u, <p>_ko and <p>_ks of a list */
#define O2_VIEW_CTRS(p)							\
	{ .uapi = p##_u, .koff = p##_ko, .ksize = p##_ks,		\
	  .n = ARRAY_SIZE(p##_u) }

#define O2_NI_U(type, name, view, key, doc)				\
	{ offsetof(struct o2lnd_ioc_net, name), sizeof(type) },
#define O2_NI_KO(type, name, view, key, doc)				\
	offsetof(struct o2_ni, stats.name),
#define O2_NI_KS(type, name, view, key, doc)				\
	sizeof_field(struct o2_ni, stats.name),

static const struct o2_view_ctr o2_ni_u[] = { O2LND_NI_COUNTERS(O2_NI_U) };
static const u16 o2_ni_ko[] = { O2LND_NI_COUNTERS(O2_NI_KO) };
static const u8 o2_ni_ks[] = { O2LND_NI_COUNTERS(O2_NI_KS) };
static const struct o2_view_ctrs o2_ni_ctrs = O2_VIEW_CTRS(o2_ni);

/* a peer keeps its __u32 counters in @n, its __u64 ones in @st */
#define O2_PEER_BLK___u32	n
#define O2_PEER_BLK___u64	st
#define O2_PEER_KO_IN(blk, name)	offsetof(struct o2_peer, blk.name)
#define O2_PEER_KS_IN(blk, name)	sizeof_field(struct o2_peer, blk.name)
#define O2_PEER_U(type, name, view, key, doc)				\
	{ offsetof(struct o2lnd_ioc_peer, name), sizeof(type) },
#define O2_PEER_KO(type, name, view, key, doc)				\
	O2_PEER_KO_IN(O2_PEER_BLK_##type, name),
#define O2_PEER_KS(type, name, view, key, doc)				\
	O2_PEER_KS_IN(O2_PEER_BLK_##type, name),

static const struct o2_view_ctr o2_peer_u[] = {
	O2LND_PEER_COUNTERS(O2_PEER_U)
};

static const u16 o2_peer_ko[] = { O2LND_PEER_COUNTERS(O2_PEER_KO) };
static const u8 o2_peer_ks[] = { O2LND_PEER_COUNTERS(O2_PEER_KS) };
static const struct o2_view_ctrs o2_peer_ctrs =
	O2_VIEW_CTRS(o2_peer);

#define O2_CONN_U(type, name, view, key, doc)				\
	{ offsetof(struct o2lnd_ioc_conn, name), sizeof(type) },
#define O2_CONN_KO(type, name, view, key, doc)				\
	offsetof(struct o2_conn, name),
#define O2_CONN_KS(type, name, view, key, doc)				\
	sizeof_field(struct o2_conn, name),

static const struct o2_view_ctr o2_conn_u[] = {
	O2LND_CONN_COUNTERS(O2_CONN_U)
};

static const u16 o2_conn_ko[] = { O2LND_CONN_COUNTERS(O2_CONN_KO) };
static const u8 o2_conn_ks[] = { O2LND_CONN_COUNTERS(O2_CONN_KS) };
static const struct o2_view_ctrs o2_conn_ctrs =
	O2_VIEW_CTRS(o2_conn);

/**
 * o2_ni_stats() - fill NET_SHOW output for @ni
 * @ni: the NI
 * @out: zeroed output
 */
void o2_ni_stats(struct o2_ni *ni, struct o2lnd_ioc_net *out)
{
	struct o2_peer *peer;
	struct o2_conn *conn;
	u32 npeers = 0, nconns = 0, nest = 0;
	int bkt;

	out->count = o2_nnis;
	out->nid = ni->nid;
	out->status = READ_ONCE(ni->up) ? O2LND_NI_STATUS_UP :
					  O2LND_NI_STATUS_DOWN;
	strscpy(out->net, ni->net, sizeof(out->net));
	strscpy(out->ifname, ni->ifname, sizeof(out->ifname));
	strscpy(out->devname, ni->devname, sizeof(out->devname));
	out->incarnation = ni->stamp;
	out->health = atomic_read(&ni->health);
	out->peer_credits = o2_peer_credits;
	out->credits = o2_credits;
	out->timeout_s = o2_timeout;
	out->max_msg_size = O2_MAX_MSG_SIZE;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node)
		npeers++;
	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		nconns++;
		if (READ_ONCE(conn->state) == O2_CONN_ESTABLISHED)
			nest++;
	}
	spin_unlock(&ni->conns_lock);
	spin_unlock(&ni->lock);
	out->npeers = npeers;
	out->nconns = nconns;
	out->nconns_established = nest;
	spin_lock(&ni->lock);
	out->tx_credits = ni->txcr.avail;
	out->tx_credits_min = ni->txcr.min;
	out->tx_queued = ni->txcr.queued;
	spin_unlock(&ni->lock);
	out->ntx = o2_ntx;
	out->tx_live = atomic_read(&ni->tx_live);
	out->peer_credits_hiw = o2_peer_credits_hiw;
	out->concurrent_sends = o2_concurrent_sends;
	out->keepalive_s = o2_keepalive;
	out->max_immediate = O2_MAX_IMMEDIATE;
	out->max_frags = O2_MAX_FRAGS;
	out->cksum = o2_cksum_param;
	o2_view_counters(out, ni, &o2_ni_ctrs);
	mutex_lock(&o2_nis_mutex);
	if (ni->dev)
		o2_dev_mr_stats(ni->dev->ibdev, out);
	mutex_unlock(&o2_nis_mutex);
}

/**
 * o2_ni_by_index() - the NI of a NET_SHOW index
 * @ni_index: 1.. (0 is 0@lo): the position on o2_nis, which NET_ADD and
 *	NET_DEL change
 *
 * Return: the NI, or NULL.
 */
struct o2_ni *o2_ni_by_index(u32 ni_index)
{
	struct o2_ni *ni;
	u32 i = 0;

	o2_for_each_ni(ni)
		if (++i == ni_index)
			return ni;
	return NULL;
}

/* uapi O2LND_CONN_* of a conn state: DISCONNECTED is a zombie */
static u32 o2_conn_state_uapi(enum o2_conn_state state)
{
	return state == O2_CONN_DISCONNECTED ? O2LND_CONN_ZOMBIE : state;
}

static u32 o2_ms_left(unsigned long deadline, unsigned long now)
{
	return time_after(deadline, now) ? jiffies_to_msecs(deadline - now) :
					   0;
}

/**
 * o2_peer_show() - PEER_SHOW: the @index-th peer of an NI
 * @ni_index: NET_SHOW index of the NI (1..)
 * @index: 0-based peer index in the NI's peer table
 * @out: zeroed output
 *
 * Counts the peer's conns by state over every conn of the NI, so closing
 * and zombie conns (no longer on the peer's list) are included.
 *
 * Return: 0 or -ENOENT.
 */
int o2_peer_show(u32 ni_index, u32 index, struct o2lnd_ioc_peer *out)
{
	struct o2_ni *ni = o2_ni_by_index(ni_index);
	unsigned long now = jiffies;
	struct o2_peer *peer, *found = NULL;
	struct o2_conn *conn;
	u32 n = 0;
	int bkt;

	if (!ni)
		return -ENOENT;
	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		if (n++ == index)
			found = peer;
	}
	out->count = n;
	if (found) {
		peer = found;
		out->state = peer->state;
		out->nid = peer->nid;
		out->incarnation = peer->incarnation;
		spin_lock(&ni->conns_lock);
		list_for_each_entry(conn, &ni->conns, ni_list)
			if (conn->peer == peer)
				out->conns[o2_conn_state_uapi(READ_ONCE(conn->state))]++;
		spin_unlock(&ni->conns_lock);
		o2_view_counters(out, peer, &o2_peer_ctrs);
		out->last_error = peer->last_error;
		out->last_reject = peer->last_reject;
		out->next_retry_ms = peer->reconnect ?
				     o2_ms_left(peer->reconnect_at, now) : 0;
		out->backoff_ms = peer->backoff_ms;
		out->tx_queued = list_count_nodes(&peer->tx_queue);
		out->tx_credits = peer->txcr.avail;
		out->tx_credits_max = peer->txcr.max;
		out->tx_credits_min = peer->txcr.min;
		out->credit_queued = peer->txcr.queued;
		out->health = peer->down ? O2LND_HEALTH_DOWN : O2LND_HEALTH_UP;
		out->failures = peer->failures;
		out->downs = peer->downs;
		out->alive_ms = READ_ONCE(peer->alive) ?
				jiffies_to_msecs(now - READ_ONCE(peer->alive)) :
				~0U;
		o2_rtr_peer_show(peer, out);
	}
	spin_unlock(&ni->lock);
	return found ? 0 : -ENOENT;
}

/**
 * o2_conn_show() - CONN_SHOW: the @index-th conn of an NI, any state
 * @ni_index: NET_SHOW index of the NI (1..)
 * @index: 0-based index in the NI's conn list
 * @out: zeroed output
 *
 * Return: 0 or -ENOENT.
 */
int o2_conn_show(u32 ni_index, u32 index, struct o2lnd_ioc_conn *out)
{
	struct o2_ni *ni = o2_ni_by_index(ni_index);
	struct o2_conn *conn, *found = NULL;
	unsigned long now = jiffies;
	u32 n = 0;

	if (!ni)
		return -ENOENT;
	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		if (n++ == index)
			found = conn;
	}
	out->count = n;
	if (found) {
		conn = found;
		spin_lock(&conn->lock);
		out->state = o2_conn_state_uapi(conn->state);
		out->peer_nid = conn->peer->nid;
		out->peer_stamp = conn->peer_stamp;
		out->phase = conn->phase;
		out->active = conn->active;
		out->age_ms = jiffies_to_msecs(now - conn->created);
		if (conn->state == O2_CONN_ACTIVE_CONNECT ||
		    conn->state == O2_CONN_PASSIVE_WAIT)
			out->deadline_ms = o2_ms_left(conn->deadline, now);
		out->queue_depth = conn->cp.queue_depth;
		out->max_frags = conn->cp.max_frags;
		out->credits = conn->cr.credits;
		out->outstanding = conn->cr.outstanding;
		out->nposted = conn->cr.nposted;
		out->tx_queued = list_count_nodes(&conn->tx_queue) +
				 list_count_nodes(&conn->tx_queue_rsrvd);
		out->reserved_credits = conn->cr.reserved;
		out->concurrent_sends = conn->cr.concurrent_sends;
		out->sq_size = conn->cr.sq_size;
		out->sq_free = conn->cr.sq_size - conn->cr.sq_used;
		out->noops_posted = conn->cr.noops_posted;
		out->noops_queued = list_count_nodes(&conn->tx_queue_nocred);
		out->idle_ms = conn->last_send ?
			       jiffies_to_msecs(now - conn->last_send) : 0;
		o2_view_counters(out, conn, &o2_conn_ctrs);
		out->error = conn->error;
		out->qp_num = conn->qp ? conn->qp->qp_num : 0;
		out->nrx = conn->rxs ? conn->nrx : 0;
		if (conn->qp) {
			out->comp_vector = conn->comp_vector;
			out->comp_vectors = max(conn->dev->ibdev->num_comp_vectors,
						1);
		}
		spin_unlock(&conn->lock);
	}
	spin_unlock(&ni->conns_lock);
	return found ? 0 : -ENOENT;
}

/**
 * o2_peer_close() - PEER_CLOSE: close every conn to @nid
 * @nid: the peer
 * @local_nid: the local NI, or O2LND_NID_ANY
 * @closed: out: conns closed
 *
 * Closes the conns there when it is called, not those made meanwhile
 * (for the RPCs the close fails and resends).  Cancels a scheduled
 * reconnect and the backoff too.  Sleeps.
 *
 * Return: 0, or -ENOENT when no NI (of @local_nid) knows the peer.
 */
int o2_peer_close(u64 nid, u64 local_nid, u32 *closed)
{
	struct o2_ni *ni;
	bool known = false;

	*closed = 0;
	o2_for_each_ni(ni) {
		if (local_nid != O2LND_NID_ANY && ni->nid != local_nid)
			continue;
		if (o2_ni_close_peer(ni, nid, closed))
			known = true;
	}
	return known ? 0 : -ENOENT;
}
