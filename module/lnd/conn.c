// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: connection lifecycle: allocation, state changes (the table is in
 * state.c), QP/CQ setup, close (hand-off to connd) and final release.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include <linux/random.h>
#include "lnd.h"
#include "trace.h"

/**
 * o2_conn_set_state() - move a conn to @state if the table allows it
 * @conn: the conn
 * @state: the new state
 *
 * Caller holds conn->lock.  A transition the table does not allow is a
 * bug: it WARNs and leaves the state unchanged.
 *
 * Return: true if the state changed.
 */
bool o2_conn_set_state(struct o2_conn *conn, enum o2_conn_state state)
{
	lockdep_assert_held(&conn->lock);
	if (WARN(!o2_conn_transition_ok(conn->state, state),
		 "o2lnd: bad conn transition %s -> %s\n",
		 o2_conn_state_name(conn->state), o2_conn_state_name(state)))
		return false;
	conn->state = state;
	return true;
}

/**
 * o2_our_connparams() - the parameters we offer
 * @cp: output
 */
void o2_our_connparams(struct o2_connparams *cp)
{
	cp->queue_depth = o2_peer_credits;
	cp->max_frags = O2_MAX_FRAGS;
	cp->max_msg_size = O2_MAX_MSG_SIZE;
}

/**
 * o2_conn_alloc() - allocate a conn in state INIT
 * @ni: our NI
 * @peer: the peer; the conn takes a reference
 * @active: we initiate it
 *
 * Return: the conn (one reference, for the caller) or NULL.
 */
struct o2_conn *o2_conn_alloc(struct o2_ni *ni, struct o2_peer *peer,
			      bool active)
{
	struct o2_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	INIT_LIST_HEAD(&conn->peer_list);
	kref_init(&conn->ref);
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->tx_queue);
	INIT_LIST_HEAD(&conn->tx_queue_rsrvd);
	INIT_LIST_HEAD(&conn->tx_queue_nocred);
	INIT_LIST_HEAD(&conn->posted);
	INIT_LIST_HEAD(&conn->txb_free);
	conn->ni = ni;
	kref_get(&peer->ref);
	conn->peer = peer;
	conn->active = active;
	conn->state = O2_CONN_INIT;
	conn->cp = peer->cp;
	conn->created = jiffies;
	atomic_inc(&o2_nconns);
	spin_lock(&ni->conns_lock);
	list_add_tail(&conn->ni_list, &ni->conns);
	spin_unlock(&ni->conns_lock);
	return conn;
}

static void o2_conn_release(struct kref *ref)
{
	struct o2_conn *conn = container_of(ref, struct o2_conn, ref);

	WARN_ON(conn->qp || conn->cq || conn->rxs || conn->dev);
	WARN_ON(!list_empty(&conn->tx_queue) ||
		!list_empty(&conn->tx_queue_rsrvd) ||
		!list_empty(&conn->tx_queue_nocred));
	spin_lock(&conn->ni->conns_lock);
	list_del(&conn->ni_list);
	spin_unlock(&conn->ni->conns_lock);
	o2_peer_put(conn->peer);
	kfree(conn);
	/* unload waits for every conn, NET_DEL for its NI's */
	atomic_dec(&o2_nconns);
	wake_up(&o2_exit_waitq);
}

/**
 * o2_conn_put() - drop a reference
 * @conn: the conn
 */
void o2_conn_put(struct o2_conn *conn)
{
	kref_put(&conn->ref, o2_conn_release);
}

/**
 * o2_conn_setup_qp() - create CQ and QP on conn->cmid and post receives
 * @conn: the conn; conn->cp holds the negotiated parameters
 *
 * Sizing: the send queue holds concurrent_sends work requests (our
 * send-queue slot budget, conn->cr.sq_size; nposted never exceeds
 * concurrent_sends) + 1 for ib_drain_qp; the receive queue holds
 * o2_rx_buffers(queue_depth) = 2 * queue_depth + 2 buffers (as o2iblnd
 * v2: credited messages, credit-less replies and out-of-band NOOPs) + 1
 * for ib_drain_qp.  The CQ takes both.
 * The CQ is polled from ib_comp_wq (IB_POLL_WORKQUEUE): completion
 * handlers run in process context.
 *
 * Return: 0 or an errno; on error o2_conn_release_qp() cleans up.
 */
int o2_conn_setup_qp(struct o2_conn *conn)
{
	struct ib_qp_init_attr attr = {};
	int qd = conn->cp.queue_depth;
	/*
	 * room for one largest bulk message: LOCAL_INV (o2_dev.reg_replayed)
	 * + REG_MR + max_frags WRITEs
	 */
	int sq = o2_concurrent_sends + conn->cp.max_frags + 2;
	int nsend = sq + 1, nrecv = o2_rx_buffers(qd) + 1;
	struct o2_dev *dev;
	int rc;

	dev = o2_dev_get(conn->cmid->device);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	conn->dev = dev;
	conn->nrx = o2_rx_buffers(qd);
	rc = o2_rx_alloc(conn);
	if (!rc)
		rc = o2_tx_bufs_alloc(conn);
	if (rc)
		return rc;
	conn->comp_vector = o2_comp_vector_pick((u32)atomic_inc_return(&dev->cqs) - 1,
						dev->ibdev->num_comp_vectors);
	conn->cq = ib_alloc_cq(dev->ibdev, conn, nsend + nrecv,
			       conn->comp_vector, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		rc = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return rc;
	}
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	/* only the messages are signaled, not bulk REG_MR and WRITEs */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = nsend;
	attr.cap.max_recv_wr = nrecv;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	rc = rdma_create_qp(conn->cmid, dev->pd, &attr);
	if (rc)
		return rc;
	conn->qp = conn->cmid->qp;
	spin_lock(&conn->lock);
	o2_credits_init(&conn->cr, qd, o2_peer_credits_hiw,
			o2_concurrent_sends, sq);
	conn->last_send = jiffies;
	spin_unlock(&conn->lock);
	return o2_rx_post_all(conn);
}

/**
 * o2_conn_release_qp() - destroy QP, CQ, rx and tx buffers, drop the device
 * @conn: the conn; its QP is drained or was never connected
 */
void o2_conn_release_qp(struct o2_conn *conn)
{
	unsigned int n;

	if (conn->qp) {
		rdma_destroy_qp(conn->cmid);
		conn->qp = NULL;
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	/* no completion can come now: what the device lost completes here */
	n = o2_conn_reclaim_posted(conn);
	if (n) {
		char nid[O2_NIDSTR_SIZE];

		pr_warn_ratelimited("o2lnd: %s: %s never completed %u sends of the connection to %s after its drain: completed as flushed once its QP was gone\n",
				    conn->ni->net, dev_name(&conn->dev->ibdev->dev),
				    n, o2_nid_format(conn->peer->nid, nid,
						     sizeof(nid)));
	}
	WARN_ON(conn->cr.nposted || conn->cr.sq_used);
	o2_rx_free(conn);
	o2_tx_bufs_free(conn);
	if (conn->dev) {
		o2_dev_put(conn->dev);
		conn->dev = NULL;
	}
}

/*
 * Errors that end a connect without it being a failure of the peer: a
 * retry already scheduled (address resolution timeout, retryable
 * reject), unload, a local abort (PEER_CLOSE), and our own connect
 * aborted because the peer's request won a race.
 */
static bool o2_connect_failed(int error)
{
	return error && error != -EAGAIN && error != -ESHUTDOWN &&
	       error != -EALREADY && error != -ECONNABORTED;
}

/**
 * o2_conn_close() - start closing a conn
 * @conn: the conn
 * @error: why (0 for an orderly close)
 *
 * Moves the conn to CLOSING, unlinks it from its peer and hands it to
 * connd for teardown.  An active connect that failed (timeout, error,
 * final reject; no retry already scheduled after a retryable reject)
 * puts the peer in BACKOFF: its queued messages wait (after a final
 * reject, -ECONNREFUSED, they fail at once), and connd
 * connects again once o2_backoff_next() (jittered) has passed and while
 * messages still wait; each message fails at its own deadline.  So a
 * dead peer gets paced attempts, never overlapping, and only while there
 * is something to send.  Otherwise, if the peer is left without conns
 * and without a reconnect, its queued txs end with @error, except for
 * -EALREADY (our connect aborted for the peer's request, or a duplicate
 * conn closed: another conn carries them).  A connection lost to the
 * fabric ends them as a dead conn's txs end (o2_tx_fail_or_resend()):
 * LNet may resend them, so an LNet ACK queued for a rail that died takes
 * another one; an operator's close (`peer close`, -ECONNABORTED) fails
 * them.
 * Idempotent; callable from any process context holding no o2lnd lock,
 * including CM and CQ callbacks.
 */
void o2_conn_close(struct o2_conn *conn, int error)
{
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	enum o2_conn_state old;
	unsigned int delay;
	LIST_HEAD(fail);
	bool closed = false;

	spin_lock(&ni->lock);
	spin_lock(&conn->lock);
	old = conn->state;
	if (conn->state < O2_CONN_CLOSING) {
		closed = o2_conn_set_state(conn, O2_CONN_CLOSING);
		conn->error = error;
	}
	spin_unlock(&conn->lock);
	if (closed && !list_empty(&conn->peer_list)) {
		list_del_init(&conn->peer_list);
		if (error && error != -EAGAIN && error != -EALREADY)
			peer->last_error = error;
		if (conn->active && old < O2_CONN_ESTABLISHED &&
		    o2_connect_failed(error))
			peer->n.connect_failures++;
		/* a failed extra connect: the next one waits, backing off */
		if (conn->extra && old < O2_CONN_ESTABLISHED &&
		    o2_connect_failed(error))
			o2_peer_grow_backoff_locked(peer);
		if (conn->active && old < O2_CONN_ESTABLISHED &&
		    o2_connect_failed(error) && !peer->reconnect &&
		    list_empty(&peer->conns) && !ni->shutdown) {
			peer->backoff_ms = o2_backoff_next(peer->backoff_ms);
			peer->reconnect = true;
			delay = o2_jitter(peer->backoff_ms, get_random_u32());
			peer->reconnect_at = jiffies + msecs_to_jiffies(delay);
			trace_o2lnd_reconnect(ni->nid, peer->nid,
					      peer->backoff_ms, delay);
			/* refused for good: no use waiting for the retry */
			if (error == -ECONNREFUSED)
				list_splice_init(&peer->tx_queue, &fail);
		} else if (list_empty(&peer->conns) && !peer->reconnect &&
			   error != -EALREADY) {
			list_splice_init(&peer->tx_queue, &fail);
		}
		o2_peer_update_state(peer);
		/* the peer list's reference passes to the teardown work */
	} else if (closed && !conn->parked) {
		kref_get(&conn->ref);
	}	/* else: a parked conn's allocation reference passes to it */
	spin_unlock(&ni->lock);
	if (!closed)
		return;
	if (conn->active && old < O2_CONN_ESTABLISHED &&
	    o2_connect_failed(error))
		o2_up->health(peer, false);
	if (o2_connect_failed(error)) {
		char nid[O2_NIDSTR_SIZE];

		pr_info_ratelimited("o2lnd: %s: connection to %s %s: %d\n",
				    ni->net, o2_nid_format(peer->nid, nid,
							   sizeof(nid)),
				    old == O2_CONN_ESTABLISHED ? "closed" :
								 "failed",
				    error);
	}
	if (!error || error == -ECONNABORTED)
		o2_tx_fail_list(&fail, -ECONNABORTED);
	else
		o2_tx_fail_or_resend(&fail, error);
	o2_bulk_conn_closed(conn);
	o2_up->conn_closed(conn);
	o2_connd_teardown(conn);
}

/**
 * o2_peer_close_stale() - close conns of an older incarnation of a peer
 * @peer: the peer
 * @incarnation: its current incarnation
 *
 * Caller holds no o2lnd lock.
 */
void o2_peer_close_stale(struct o2_peer *peer, u64 incarnation)
{
	struct o2_ni *ni = peer->ni;
	struct o2_conn *conn, *found;

	do {
		found = NULL;
		spin_lock(&ni->lock);
		list_for_each_entry(conn, &peer->conns, peer_list) {
			if (conn->peer_stamp && conn->peer_stamp != incarnation) {
				kref_get(&conn->ref);
				found = conn;
				break;
			}
		}
		spin_unlock(&ni->lock);
		if (found) {
			spin_lock(&ni->lock);
			peer->n.stale_closes++;
			spin_unlock(&ni->lock);
			o2_conn_close(found, -ESTALE);
			o2_conn_put(found);
		}
	} while (found);
}

/**
 * o2_peer_update_state() - recompute a peer's state after a change
 * @peer: the peer; caller holds ni->lock
 *
 * The state follows from the peer's conns and its reconnect schedule
 * (o2_peer_state_of()); a change the table does not allow is a bug and
 * WARNs (the state still follows the facts).
 */
void o2_peer_update_state(struct o2_peer *peer)
{
	bool established = false, connecting = false;
	enum o2_peer_state state;
	struct o2_conn *conn;

	lockdep_assert_held(&peer->ni->lock);
	list_for_each_entry(conn, &peer->conns, peer_list) {
		enum o2_conn_state cs = READ_ONCE(conn->state);

		if (cs == O2_CONN_ESTABLISHED)
			established = true;
		else if (cs < O2_CONN_ESTABLISHED)
			connecting = true;
	}
	state = o2_peer_state_of(established, connecting, peer->reconnect);
	if (state == peer->state)
		return;
	WARN(!o2_peer_transition_ok(peer->state, state),
	     "o2lnd: bad peer transition %s -> %s\n",
	     o2_peer_state_name(peer->state), o2_peer_state_name(state));
	peer->state = state;
}

/**
 * o2_peer_grow_backoff_locked() - an extra connect to @peer failed
 * @peer: the peer; caller holds ni->lock
 *
 * The next extra connect (conns_per_peer) waits for the grow backoff,
 * which doubles (o2_backoff_next()) until an extra connect succeeds.
 */
void o2_peer_grow_backoff_locked(struct o2_peer *peer)
{
	lockdep_assert_held(&peer->ni->lock);
	peer->grow_backoff_ms = o2_backoff_next(peer->grow_backoff_ms);
	peer->grow_at = jiffies + msecs_to_jiffies(peer->grow_backoff_ms);
}

/**
 * o2_peer_wants_conn_locked() - should we open one more conn to @peer?
 * @peer: the peer; caller holds ni->lock
 *
 * conns_per_peer: o2_peer_wants_conn() on its conns (a race's surplus
 * conn not counted: it closes once quiet), and not while a failed extra
 * connect's backoff runs, a reconnect is scheduled or the NI stops.
 *
 * Return: true if an extra active connect may start now.
 */
bool o2_peer_wants_conn_locked(struct o2_peer *peer)
{
	int established = 0, active = 0, others = 0;
	struct o2_conn *conn;

	lockdep_assert_held(&peer->ni->lock);
	if (o2_conns_per_peer <= 1 || peer->reconnect || peer->ni->shutdown ||
	    !READ_ONCE(peer->ni->up) ||
	    (peer->grow_backoff_ms && time_before(jiffies, peer->grow_at)))
		return false;
	list_for_each_entry(conn, &peer->conns, peer_list) {
		if (conn->surplus)
			continue;	/* a race's leftover: closes when quiet */
		if (READ_ONCE(conn->state) == O2_CONN_ESTABLISHED) {
			established++;
			active += conn->active;
		} else {
			others++;
		}
	}
	return o2_peer_wants_conn(established, active, others,
				  o2_conns_per_peer,
				  peer->nid == peer->ni->nid);
}

/**
 * o2_conn_established() - a conn reached ESTABLISHED
 * @conn: the conn (already in ESTABLISHED)
 *
 * The peer is reachable: its race, retry and backoff counts restart and
 * a scheduled reconnect is cancelled.  Moves the peer's waiting txs onto
 * the conn and starts sending.
 */
void o2_conn_established(struct o2_conn *conn)
{
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	LIST_HEAD(txs);
	struct o2_tx *tx, *tmp;

	spin_lock(&ni->lock);
	peer->races = 0;
	peer->race_claimed = false;
	peer->retries = 0;
	peer->addr_retries = 0;
	peer->backoff_ms = 0;
	if (conn->extra)
		peer->grow_backoff_ms = 0;
	peer->reconnect = false;
	o2_peer_update_state(peer);
	list_splice_init(&peer->tx_queue, &txs);
	spin_unlock(&ni->lock);

	list_for_each_entry_safe(tx, tmp, &txs, list) {
		list_del_init(&tx->list);
		if (o2_conn_queue_tx(conn, tx)) {
			tx->status = -ECONNABORTED;
			o2_tx_put(tx);
		}
	}
	o2_conn_check_sends(conn);
}
