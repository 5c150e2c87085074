// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the objects both layers share, owned here: the list of local
 * NIs, the peer table of each NI (lookup, creation, references) and the
 * counts unload waits on; and the table through which the transport
 * reaches up to LNet (o2_up, set once at load by the LNet side before
 * any NI starts, never changed after).
 *
 * The LND files (cm, conn, connd, dev, mr, rx, tx) call into LNet only
 * through o2_up and a tx's own done callback; LNet calls the transport
 * by name.  scripts/o2-layers.py measures it from the objects' symbols.
 */
#include <linux/slab.h>
#include "lnd.h"

const struct o2_lnet_ops *o2_up;

LIST_HEAD(o2_nis);
int o2_nnis;
atomic_t o2_nconns = ATOMIC_INIT(0);
atomic_t o2_npeers = ATOMIC_INIT(0);
DECLARE_WAIT_QUEUE_HEAD(o2_exit_waitq);

/**
 * o2_ni_by_nid() - the local NI with NID @nid
 * @nid: the NID
 *
 * Return: the NI or NULL.
 */
struct o2_ni *o2_ni_by_nid(u64 nid)
{
	struct o2_ni *ni;

	o2_for_each_ni(ni)
		if (ni->nid == nid)
			return ni;
	return NULL;
}

/**
 * o2_ni_by_net() - the first local NI on network @net
 * @net: the network
 *
 * Return: the NI or NULL.
 */
struct o2_ni *o2_ni_by_net(u32 net)
{
	struct o2_ni *ni;

	o2_for_each_ni(ni)
		if (o2_nid_net(ni->nid) == net)
			return ni;
	return NULL;
}

/**
 * o2_ni_toward() - the local NI to reach @nid from
 * @nid: a NID
 *
 * Of the NIs on @nid's network, the first whose IPv4 subnet holds @nid's
 * address: with several rails on separate subnets, only that one has a
 * route to it.  Else the first NI on the network, as o2_ni_by_net().
 *
 * Return: the NI or NULL (no NI on the network).
 */
struct o2_ni *o2_ni_toward(u64 nid)
{
	__be32 addr = htonl((u32)nid);
	struct o2_ni *ni;

	o2_for_each_ni(ni)
		if (o2_nid_net(ni->nid) == o2_nid_net(nid) &&
		    !((ni->addr ^ addr) & ni->mask))
			return ni;
	return o2_ni_by_net(o2_nid_net(nid));
}

/**
 * o2_peer_find_locked() - look a peer up
 * @ni: the NI; caller holds ni->lock
 * @nid: the peer's NID
 *
 * Return: the peer (no reference taken) or NULL.
 */
struct o2_peer *o2_peer_find_locked(struct o2_ni *ni, u64 nid)
{
	struct o2_peer *peer;

	lockdep_assert_held(&ni->lock);
	hash_for_each_possible(ni->peers, peer, node, nid)
		if (peer->nid == nid)
			return peer;
	return NULL;
}

/**
 * o2_peer_find_or_create() - the peer @nid of @ni, created if new
 * @ni: the NI
 * @nid: the peer's NID
 *
 * May sleep.
 *
 * Return: the peer with a reference for the caller, or NULL (no memory,
 * or the NI is shutting down).
 */
struct o2_peer *o2_peer_find_or_create(struct o2_ni *ni, u64 nid)
{
	struct o2_peer *peer, *old;

	spin_lock(&ni->lock);
	peer = ni->shutdown ? NULL : o2_peer_find_locked(ni, nid);
	if (peer)
		kref_get(&peer->ref);
	spin_unlock(&ni->lock);
	if (peer || READ_ONCE(ni->shutdown))
		return peer;

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return NULL;
	kref_init(&peer->ref);		/* the table's */
	peer->ni = ni;
	peer->nid = nid;
	INIT_LIST_HEAD(&peer->conns);
	INIT_LIST_HEAD(&peer->tx_queue);
	INIT_LIST_HEAD(&peer->credit_q);
	INIT_LIST_HEAD(&peer->rtr_q);
	o2_up->peer_init(peer);
	o2_our_connparams(&peer->cp);

	spin_lock(&ni->lock);
	old = o2_peer_find_locked(ni, nid);
	if (old || ni->shutdown) {
		if (old)
			kref_get(&old->ref);
		spin_unlock(&ni->lock);
		kfree(peer);
		return old;
	}
	hash_add(ni->peers, &peer->node, nid);
	peer->in_table = true;
	kref_get(&peer->ref);		/* the caller's */
	atomic_inc(&o2_npeers);
	refcount_inc(&ni->ref);
	spin_unlock(&ni->lock);
	return peer;
}

static void o2_peer_release(struct kref *ref)
{
	struct o2_peer *peer = container_of(ref, struct o2_peer, ref);

	WARN_ON(!list_empty(&peer->conns) || !list_empty(&peer->tx_queue) ||
		!list_empty(&peer->credit_q) || peer->ntx ||
		!list_empty(&peer->rtr_q));
	refcount_dec(&peer->ni->ref);
	kfree(peer);
	if (atomic_dec_and_test(&o2_npeers))
		wake_up(&o2_exit_waitq);
}

/**
 * o2_peer_put() - drop a peer reference
 * @peer: the peer
 */
void o2_peer_put(struct o2_peer *peer)
{
	kref_put(&peer->ref, o2_peer_release);
}

/*
 * The established conn of @peer that a message takes: with several
 * (conns_per_peer), each in turn; never a race's surplus conn
 * (o2_cm_established()) unless it is all there is, and then it is
 * surplus no more.  Caller holds ni->lock.
 * Return: the conn (no reference taken) or NULL.
 */
static struct o2_conn *o2_peer_conn_pick_locked(struct o2_peer *peer)
{
	struct o2_conn *c, *first = NULL, *spare = NULL;
	u32 n = 0, k;

	lockdep_assert_held(&peer->ni->lock);
	list_for_each_entry(c, &peer->conns, peer_list) {
		if (READ_ONCE(c->state) != O2_CONN_ESTABLISHED)
			continue;
		if (c->surplus) {
			spare = c;
			continue;
		}
		if (!n++)
			first = c;
	}
	if (!n && spare) {
		WRITE_ONCE(spare->surplus, false);
		return spare;
	}
	if (n <= 1)
		return first;
	k = peer->conn_cursor++ % n;
	list_for_each_entry(c, &peer->conns, peer_list) {
		if (READ_ONCE(c->state) != O2_CONN_ESTABLISHED || c->surplus)
			continue;
		if (!k--)
			return c;
	}
	return first;
}

/**
 * o2_peer_send() - send a tx to its peer
 * @peer: the peer
 * @tx: the tx (its upper layer's credits, if any, taken); its reference
 *	passes on whatever happens
 *
 * On an ESTABLISHED conn, or queued on the peer for one (connecting
 * first if nothing is under way; connd fails it past tx->deadline).
 *
 * Return: 0 if it was queued, else the errno it failed with.
 */
int o2_peer_send(struct o2_peer *peer, struct o2_tx *tx)
{
	struct o2_conn *conn = NULL;
	struct o2_ni *ni = peer->ni;
	bool connect = false;
	LIST_HEAD(fail);
	int rc = 0, tries = 0;

again:
	spin_lock(&ni->lock);
	if (ni->shutdown) {
		spin_unlock(&ni->lock);
		tx->status = -ESHUTDOWN;
		o2_tx_put(tx);
		return -ESHUTDOWN;
	}
	conn = o2_peer_conn_pick_locked(peer);
	if (conn)
		kref_get(&conn->ref);
	if (!conn) {
		list_add_tail(&tx->list, &peer->tx_queue);
		/* in BACKOFF the tx waits: connd connects when it ends */
		connect = o2_peer_connect_due(!list_empty(&peer->conns),
					      peer->reconnect, true);
		if (connect)
			peer->addr_retries = 0;
	}
	spin_unlock(&ni->lock);

	if (conn) {
		rc = o2_conn_queue_tx(conn, tx);
		if (!rc)
			o2_conn_check_sends(conn);
		o2_conn_put(conn);
		if (rc && tries++ < 3) {
			/* it started closing meanwhile: take another */
			conn = NULL;
			goto again;
		}
		if (rc) {
			tx->status = rc;
			o2_tx_put(tx);
		}
	} else if (connect) {
		rc = o2_conn_start_active(peer, false);
		if (rc) {
			spin_lock(&ni->lock);
			if (list_empty(&peer->conns))
				list_splice_init(&peer->tx_queue, &fail);
			spin_unlock(&ni->lock);
			o2_tx_fail_list(&fail, rc);
		}
	}
	return rc;
}
