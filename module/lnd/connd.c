// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: connd, the connection daemon.
 *
 * o2_connd_wq is an ordered work queue (WQ_MEM_RECLAIM: it frees
 * resources under memory pressure) and owns:
 *   - the first step of every active connect (cm_id creation and address
 *     resolution), so no cm_id is created inside a CM callback;
 *   - a scan every O2_SCAN_INTERVAL that closes conns whose connect phase
 *     (address resolution, route resolution, connect/accept) passed its
 *     deadline, whose oldest queued tx waited longer than the timeout
 *     parameter for credits, or whose posted sends made no progress for
 *     o2_stall_ms() (a QP the device will never complete again; its
 *     messages are resent on a new conn), fails messages that waited for
 *     a conn or for LNet tx credits past their deadline, sends a
 *     keepalive NOOP on a conn idle for the keepalive period, closes a
 *     race's surplus conn once it is quiet (o2_surplus_close_due()), and
 *     starts the connect of a peer whose messages
 *     wait without a conn once its reconnect delay (a reject's retry
 *     delay or the backoff after a failed connect) has expired.  Only
 *     connd starts a reconnect, so attempts to a peer never overlap.
 *     Once a second it also attaches NIs whose RDMA device went away to
 *     a device serving their interface again (o2_up->tick()).
 *
 * o2_reap_wq (unordered, WQ_MEM_RECLAIM) runs the teardown of every
 * closed conn: rdma_disconnect -> ib_drain_qp -> fail unposted txs ->
 * unmap/free rx -> destroy QP -> free CQ -> rdma_destroy_id, always
 * outside that id's CM callback.  A teardown may block for long: rxe's
 * destroy_qp waits up to 50 s for packets stuck in a stalled netdev (a
 * paused peer), so teardowns never run on connd, whose deadlines must
 * keep firing, nor behind each other.  A teardown first waits for the
 * conn's connect work (flush_work()), so it never races with it.
 * While the conn's port is down, the steps that send a CM message
 * (rdma_disconnect's DREQ, the REJ of destroying a connecting id) wait
 * on o2_port_waits until it is back; the drain and the hand-off of the
 * conn's messages do not wait.  connd's scan (and a PORT_ACTIVE event,
 * through o2_connd_kick()) queues them again.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include "lnd.h"
#include "trace.h"

#define O2_SCAN_INTERVAL	(HZ / 4)

struct workqueue_struct *o2_connd_wq;
static struct workqueue_struct *o2_reap_wq;
/* sends txs that got their LNet credits from a completing tx (lnet.c) */
struct workqueue_struct *o2_tx_wq;
static struct delayed_work o2_connd_scan_work;

/*
 * o2_connect_timeout() - deadline of one connect phase for the current
 * timeout parameter (o2_phase_timeout() in state.c).
 * Return: jiffies.
 */
unsigned long o2_connect_timeout(void)
{
	return o2_phase_timeout(o2_timeout);
}

/*
 * Teardowns waiting for their port to come back, before the step that
 * sends a CM message (o2_teardown_waits_for_port()).  Added by the
 * teardown work, taken off only by connd's scan (o2_port_waits_check()),
 * which queues the teardown again once the port is back, the device is
 * going away or the NI stops.  Each entry holds the teardown's reference.
 */
static LIST_HEAD(o2_port_waits);
static DEFINE_SPINLOCK(o2_port_waits_lock);

/* Does the next CM step of @conn's teardown have to wait for its port? */
static bool o2_conn_waits_for_port(struct o2_conn *conn)
{
	bool cm_message = conn->cmid && conn->qp && !READ_ONCE(conn->disconnected);

	return o2_teardown_waits_for_port(cm_message,
					  cm_message &&
					  o2_dev_port_down(conn->cmid),
					  conn->dev && READ_ONCE(conn->dev->dead),
					  READ_ONCE(conn->ni->shutdown));
}

/* Park @conn's teardown until its port is back; its reference goes along */
static void o2_conn_wait_port(struct o2_conn *conn)
{
	char nid[O2_NIDSTR_SIZE];

	pr_info_ratelimited("o2lnd: %s: closing the connection to %s waits for %s port %u to come back (no CM message on a port that is down)\n",
			    conn->ni->net,
			    o2_nid_format(conn->peer->nid, nid, sizeof(nid)),
			    dev_name(&conn->cmid->device->dev),
			    conn->cmid->port_num);
	spin_lock(&o2_port_waits_lock);
	list_add_tail(&conn->port_wait, &o2_port_waits);
	spin_unlock(&o2_port_waits_lock);
}

/*
 * connd: queue again the parked teardowns that may go on.  Only connd
 * takes entries off the list, so the ones checked outside the lock stay
 * valid.
 */
static void o2_port_waits_check(void)
{
	struct o2_conn *conn, *tmp;
	LIST_HEAD(waiting);
	LIST_HEAD(go);

	spin_lock(&o2_port_waits_lock);
	list_splice_init(&o2_port_waits, &waiting);
	spin_unlock(&o2_port_waits_lock);
	if (list_empty(&waiting))
		return;
	list_for_each_entry_safe(conn, tmp, &waiting, port_wait)
		if (!o2_conn_waits_for_port(conn))
			list_move_tail(&conn->port_wait, &go);
	spin_lock(&o2_port_waits_lock);
	list_splice(&waiting, &o2_port_waits);
	spin_unlock(&o2_port_waits_lock);
	list_for_each_entry_safe(conn, tmp, &go, port_wait) {
		list_del_init(&conn->port_wait);
		queue_work(o2_reap_wq, &conn->teardown);
	}
}

/*
 * Drain the QP of a closing conn and hand on what it still holds: every
 * completion has run afterwards, and the txs never posted are failed or
 * go to a new conn.  Sends nothing on the wire.
 */
static void o2_conn_drain(struct o2_conn *conn)
{
	LIST_HEAD(txs);

	if (conn->qp)
		ib_drain_qp(conn->qp);
	/* completions held back by a fault are handled (bounded delay) */
	wait_event(o2_exit_waitq, !atomic_read(&conn->late_sends));
	/*
	 * a receive buffer being copied out by the router (its waiting
	 * messages were released by o2_conn_close(): no more can come)
	 */
	wait_event(o2_exit_waitq, !atomic_read(&conn->rtr_held));
	/*
	 * every completion has run: nothing is posted any more (a device
	 * that lost some: o2_conn_reclaim_posted() once the QP is gone)
	 */
	spin_lock(&conn->lock);
	list_splice_init(&conn->tx_queue_nocred, &txs);
	list_splice_init(&conn->tx_queue, &txs);
	list_splice_init(&conn->tx_queue_rsrvd, &txs);
	spin_unlock(&conn->lock);
	/* never posted: sent again on a new conn where LNet would resend */
	o2_tx_fail_or_resend(&txs, conn->error ? conn->error : -ECONNABORTED);
}

/**
 * o2_conn_claim_disconnect() - take the one rdma_disconnect() of a conn
 * @conn: a conn with a QP
 *
 * A conn's DREQ (or its DREP to the peer's DREQ) is sent once: by the
 * DISCONNECTED callback (o2_cm_disconnected()) or by the teardown,
 * whichever comes first; rdma_disconnect() itself may not be called
 * under @conn->lock.
 *
 * Return: true if the caller is to call rdma_disconnect().
 */
bool o2_conn_claim_disconnect(struct o2_conn *conn)
{
	bool first;

	spin_lock(&conn->lock);
	first = conn->cmid && conn->qp && !conn->disconnected;
	if (first)
		conn->disconnected = true;
	spin_unlock(&conn->lock);
	return first;
}

/* The DREQ of a connected conn, once (a later destroy sends nothing) */
static void o2_conn_disconnect_once(struct o2_conn *conn)
{
	if (o2_conn_claim_disconnect(conn))
		rdma_disconnect(conn->cmid);
}

/* Is an active connect's CM callback making @conn's QP (conn->in_setup)? */
static bool o2_conn_in_setup(struct o2_conn *conn)
{
	bool busy;

	spin_lock(&conn->lock);
	busy = conn->in_setup;
	spin_unlock(&conn->lock);
	return busy;
}

/*
 * The teardown of a closed conn.  The normal order is rdma_disconnect
 * (a DREQ), drain, release.  While the conn's port is down, the DREQ (or
 * the REJ rdma_destroy_id() would send) waits: the QP is drained and its
 * messages handed on at once, then the teardown parks on o2_port_waits
 * and connd runs it again (from the disconnect on) once the port is back.
 */
static void o2_conn_teardown_fn(struct work_struct *work)
{
	struct o2_conn *conn = container_of(work, struct o2_conn, teardown);

	/*
	 * A close from elsewhere (PEER_CLOSE, a stale incarnation, a race
	 * lost) may come while the ROUTE_RESOLVED callback makes the QP:
	 * wait for it, or the QP would be made after its release and leak.
	 */
	wait_event(o2_exit_waitq, !o2_conn_in_setup(conn));
	if (!conn->drained) {
		if (conn->active)
			flush_work(&conn->connect_work);
		if (!o2_conn_waits_for_port(conn))
			o2_conn_disconnect_once(conn);
		o2_conn_drain(conn);
		conn->drained = true;
	}
	if (o2_conn_waits_for_port(conn)) {
		o2_conn_wait_port(conn);
		return;
	}
	o2_conn_disconnect_once(conn);
	o2_conn_release_qp(conn);
	if (conn->cmid) {
		rdma_destroy_id(conn->cmid);
		conn->cmid = NULL;
	}
	spin_lock(&conn->lock);
	o2_conn_set_state(conn, O2_CONN_DISCONNECTED);
	spin_unlock(&conn->lock);
	trace_o2lnd_conn_reaped(conn->ni->nid, conn->peer->nid, conn->active,
				conn->error,
				jiffies_to_msecs(jiffies - conn->created));
	o2_conn_put(conn);
}

/**
 * o2_connd_teardown() - hand a CLOSING conn to connd
 * @conn: the conn; the caller's reference passes to connd
 */
void o2_connd_teardown(struct o2_conn *conn)
{
	INIT_WORK(&conn->teardown, o2_conn_teardown_fn);
	queue_work(o2_reap_wq, &conn->teardown);
}

/* Fail the txs of @peer's queue that are past their deadline. */
static void o2_peer_expire_txs(struct o2_peer *peer, unsigned long now,
			       struct list_head *fail)
{
	struct o2_tx *tx, *tmp;

	list_for_each_entry_safe(tx, tmp, &peer->tx_queue, list)
		if (time_after(now, tx->deadline))
			list_move_tail(&tx->list, fail);
}

/* Does @conn owe its peer a NOOP now (o2_conn_noop_due_locked())? */
static bool o2_conn_wants_keepalive(struct o2_conn *conn, unsigned long now)
{
	bool want;

	spin_lock(&conn->lock);
	want = o2_conn_noop_due_locked(conn, now);
	spin_unlock(&conn->lock);
	return want;
}

#define O2_CONND_BATCH	16

/*
 * Up to O2_CONND_BATCH of the NI's conns for which @want(conn, @now)
 * holds, each referenced, in @out (the rest wait for the next scan).
 * Return: how many.
 */
static int o2_connd_collect(struct o2_ni *ni,
			    bool (*want)(struct o2_conn *, unsigned long),
			    unsigned long now, struct o2_conn **out)
{
	struct o2_conn *conn;
	int n = 0;

	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		if (n == O2_CONND_BATCH)
			break;
		if (want(conn, now)) {
			kref_get(&conn->ref);
			out[n++] = conn;
		}
	}
	spin_unlock(&ni->conns_lock);
	return n;
}

/*
 * Send keepalive NOOPs on the NI's idle conns (and nudges, above), at
 * most O2_CONND_BATCH per scan.
 */
static void o2_connd_keepalives(struct o2_ni *ni)
{
	struct o2_conn *idle[O2_CONND_BATCH];
	int i, n;

	n = o2_connd_collect(ni, o2_conn_wants_keepalive, jiffies, idle);
	for (i = 0; i < n; i++) {
		o2_conn_check_sends(idle[i]);
		o2_conn_put(idle[i]);
	}
}

/*
 * One pass over the NI's peers: at most one action (a conn closed or a
 * connect started), as those need ni->lock dropped.
 * Return: true if it stopped early for an action.
 */
static bool o2_connd_scan_ni(struct o2_ni *ni)
{
	struct o2_conn *conn, *expired = NULL;
	struct o2_peer *peer, *reconnect = NULL;
	unsigned long now = jiffies;
	bool grow = false;
	unsigned long stall = msecs_to_jiffies(o2_stall_ms(o2_ack_timeout,
							   O2_CM_RETRY_COUNT,
							   o2_timeout));
	bool stalled = false;
	LIST_HEAD(late);
	int bkt;

	/* parked requests (fault injection) are only on ni->conns */
	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		if (conn->parked &&
		    READ_ONCE(conn->state) == O2_CONN_PASSIVE_WAIT &&
		    time_after(now, conn->deadline)) {
			kref_get(&conn->ref);
			expired = conn;
			break;
		}
	}
	spin_unlock(&ni->conns_lock);
	if (expired)
		goto close;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		list_for_each_entry(conn, &peer->conns, peer_list) {
			bool late_phase, late_tx;

			spin_lock(&conn->lock);
			late_phase = (conn->state == O2_CONN_ACTIVE_CONNECT ||
				      conn->state == O2_CONN_PASSIVE_WAIT) &&
				     time_after(now, conn->deadline);
			late_tx = conn->state == O2_CONN_ESTABLISHED &&
				  o2_conn_tx_late(conn, now);
			/* completions held by a send-delay fault did come */
			stalled = conn->state == O2_CONN_ESTABLISHED &&
				  !atomic_read(&conn->late_sends) &&
				  o2_sends_stalled(&conn->cr,
						   conn->send_progress, now,
						   stall);
			spin_unlock(&conn->lock);
			if (late_phase || late_tx || stalled) {
				if (late_phase && conn->active)
					peer->n.phase_timeouts++;
				kref_get(&conn->ref);
				expired = conn;
				goto out;
			}
		}
		/* messages waiting for a conn past their deadline fail */
		o2_peer_expire_txs(peer, now, &late);
		if (peer->reconnect && time_after_eq(now, peer->reconnect_at) &&
		    !ni->shutdown) {
			peer->reconnect = false;
			o2_peer_update_state(peer);
		}
		/*
		 * Messages wait, no conn, no retry scheduled: connect (a
		 * reconnect whose delay expired, or messages left behind by
		 * an aborted connect).
		 */
		if (o2_peer_connect_due(!list_empty(&peer->conns),
					peer->reconnect,
					!list_empty(&peer->tx_queue)) &&
		    !ni->shutdown) {
			kref_get(&peer->ref);
			reconnect = peer;
			goto out;
		}
		/* conns_per_peer: one more conn, once the others are up */
		if (o2_peer_wants_conn_locked(peer)) {
			kref_get(&peer->ref);
			reconnect = peer;
			grow = true;
			goto out;
		}
	}
out:
	spin_unlock(&ni->lock);
	o2_tx_fail_list(&late, -ETIMEDOUT);
close:
	if (expired) {
		char nid[O2_NIDSTR_SIZE];
		static const char * const phases[] = {
			"accept or tx", "address resolution",
			"route resolution", "connect"
		};

		trace_o2lnd_phase_timeout(ni->nid, expired->peer->nid,
					  expired->phase, expired->active);
		if (stalled)
			pr_warn_ratelimited("o2lnd: %s: sends to %s made no progress for %u ms: reconnecting\n",
					    ni->net,
					    o2_nid_format(expired->peer->nid,
							  nid, sizeof(nid)),
					    jiffies_to_msecs(stall));
		else
			pr_warn_ratelimited("o2lnd: %s: %s to %s timed out\n",
					    ni->net, phases[expired->phase],
					    o2_nid_format(expired->peer->nid,
							  nid, sizeof(nid)));
		o2_conn_close(expired, -ETIMEDOUT);
		o2_conn_put(expired);
		return true;
	}
	if (reconnect && grow) {
		if (o2_conn_start_active(reconnect, true)) {
			/* not now (no memory, NI down): back off */
			spin_lock(&ni->lock);
			o2_peer_grow_backoff_locked(reconnect);
			spin_unlock(&ni->lock);
		}
		o2_peer_put(reconnect);
		return true;
	}
	if (reconnect) {
		LIST_HEAD(fail);
		int rc;

		trace_o2lnd_reconnect(ni->nid, reconnect->nid,
				      reconnect->backoff_ms, 0);
		rc = o2_conn_start_active(reconnect, false);

		if (rc) {
			spin_lock(&ni->lock);
			if (list_empty(&reconnect->conns))
				list_splice_init(&reconnect->tx_queue, &fail);
			spin_unlock(&ni->lock);
			o2_tx_fail_list(&fail, rc);
		}
		o2_peer_put(reconnect);
		return true;
	}
	return false;
}

/* Is something of ours queued or posted on @conn?  Caller holds its lock. */
static bool o2_conn_busy_locked(struct o2_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	return conn->cr.nposted || !list_empty(&conn->tx_queue) ||
	       !list_empty(&conn->tx_queue_rsrvd) ||
	       !list_empty(&conn->tx_queue_nocred) ||
	       !list_empty(&conn->posted);
}

/* Should surplus @conn close now (o2_surplus_close_due())? */
static bool o2_conn_surplus_due(struct o2_conn *conn, unsigned long now)
{
	struct o2_ni *ni = conn->ni;
	unsigned long since;
	bool due = false;

	spin_lock(&ni->lock);
	spin_lock(&conn->lock);
	if (conn->surplus && conn->state == O2_CONN_ESTABLISHED) {
		since = conn->surplus_at;
		if (conn->heard && time_after(conn->last_rx, since))
			since = conn->last_rx;
		due = o2_surplus_close_due(since, now,
					   msecs_to_jiffies(O2_SURPLUS_QUIET_MS),
					   o2_conn_busy_locked(conn));
	}
	spin_unlock(&conn->lock);
	spin_unlock(&ni->lock);
	return due;
}

/* Is @conn a race's surplus conn (o2_connd_collect())? */
static bool o2_conn_is_surplus(struct o2_conn *conn, unsigned long now)
{
	return READ_ONCE(conn->surplus);
}

/*
 * Close the NI's surplus conns that have gone quiet (a race left them
 * beside another; o2_cm_established()), at most O2_CONND_BATCH per scan.
 */
static void o2_connd_surplus(struct o2_ni *ni)
{
	struct o2_conn *spare[O2_CONND_BATCH];
	unsigned long now = jiffies;
	int i, n;

	n = o2_connd_collect(ni, o2_conn_is_surplus, now, spare);
	for (i = 0; i < n; i++) {
		if (o2_conn_surplus_due(spare[i], now))
			o2_conn_close(spare[i], -EALREADY);
		o2_conn_put(spare[i]);
	}
}

static void o2_connd_scan_fn(struct work_struct *work)
{
	static unsigned int pass;
	struct o2_ni *ni;
	int i;

	/*
	 * Bulk deadlines, then LNet's (credit waits, router); once a second,
	 * and at once after a port event, NIs whose device went away try to
	 * attach again and NIs follow their link's state
	 */
	o2_bulk_expire(jiffies, false);
	o2_bulk_pool_trim(jiffies, false);
	o2_up->tick(jiffies, ++pass % (HZ / O2_SCAN_INTERVAL) == 0 ||
		    o2_dev_port_event_take());
	o2_port_waits_check();
	o2_for_each_ni(ni) {
		/* bounded: at most 100 actions per NI per pass */
		for (i = 0; i < 100; i++) {
			if (!o2_connd_scan_ni(ni))
				break;
		}
		o2_connd_keepalives(ni);
		o2_connd_surplus(ni);
	}
	queue_delayed_work(o2_connd_wq, &o2_connd_scan_work, O2_SCAN_INTERVAL);
}

/**
 * o2_connd_init() - create connd's work queue
 *
 * Return: 0 or -ENOMEM.
 */
int o2_connd_init(void)
{
	o2_connd_wq = alloc_ordered_workqueue("o2lnd_connd", WQ_MEM_RECLAIM);
	if (!o2_connd_wq)
		return -ENOMEM;
	o2_tx_wq = alloc_workqueue("o2lnd_tx", WQ_MEM_RECLAIM, 0);
	o2_reap_wq = alloc_workqueue("o2lnd_reap", WQ_MEM_RECLAIM, 0);
	if (!o2_tx_wq || !o2_reap_wq) {
		if (o2_tx_wq)
			destroy_workqueue(o2_tx_wq);
		if (o2_reap_wq)
			destroy_workqueue(o2_reap_wq);
		destroy_workqueue(o2_connd_wq);
		return -ENOMEM;
	}
	INIT_DELAYED_WORK(&o2_connd_scan_work, o2_connd_scan_fn);
	return 0;
}

/* the scan runs (o2_connd_kick() may queue it) */
static bool o2_connd_scanning;
static DEFINE_SPINLOCK(o2_connd_kick_lock);

/**
 * o2_connd_start_scan() - start the periodic scan once the NIs exist
 */
void o2_connd_start_scan(void)
{
	spin_lock_irq(&o2_connd_kick_lock);
	o2_connd_scanning = true;
	spin_unlock_irq(&o2_connd_kick_lock);
	queue_delayed_work(o2_connd_wq, &o2_connd_scan_work, O2_SCAN_INTERVAL);
}

/**
 * o2_connd_kick() - run connd's scan now rather than at its next tick
 *
 * For a port that came back (its parked teardowns go on) or a device
 * going away.  Callable from any context, also before the scan started
 * and after it stopped (then it does nothing).
 */
void o2_connd_kick(void)
{
	unsigned long flags;

	spin_lock_irqsave(&o2_connd_kick_lock, flags);
	if (o2_connd_scanning)
		mod_delayed_work(o2_connd_wq, &o2_connd_scan_work, 0);
	spin_unlock_irqrestore(&o2_connd_kick_lock, flags);
}

/**
 * o2_connd_exit() - stop the scan and destroy the work queue
 *
 * Called once every conn is gone.
 */
void o2_connd_exit(void)
{
	spin_lock_irq(&o2_connd_kick_lock);
	o2_connd_scanning = false;
	spin_unlock_irq(&o2_connd_kick_lock);
	cancel_delayed_work_sync(&o2_connd_scan_work);
	WARN_ON(!list_empty(&o2_port_waits));
	destroy_workqueue(o2_reap_wq);
	destroy_workqueue(o2_tx_wq);
	destroy_workqueue(o2_connd_wq);
}
