// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: connd, the connection daemon.
 *
 * o2_connd_wq is an ordered work queue (WQ_MEM_RECLAIM: it frees
 * resources under memory pressure) and owns:
 *   - the first step of every active connect (cm_id creation and address
 *     resolution), so no cm_id is created inside a CM callback;
 *   - the teardown of every closed conn: rdma_disconnect -> ib_drain_qp ->
 *     fail unposted txs -> unmap/free rx -> destroy QP -> free CQ ->
 *     rdma_destroy_id, always outside that id's CM callback;
 *   - a scan every O2_SCAN_INTERVAL that closes conns whose connect phase
 *     (address resolution, route resolution, connect/accept) passed its
 *     deadline or whose oldest queued tx waited longer than the timeout
 *     parameter for credits, and restarts connects whose reconnect delay
 *     expired.
 * Being ordered, a conn's connect work always runs before its teardown.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include "o2lnd.h"

#define O2_SCAN_INTERVAL	(HZ / 4)

struct workqueue_struct *o2_connd_wq;
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

static void o2_conn_teardown_fn(struct work_struct *work)
{
	struct o2_conn *conn = container_of(work, struct o2_conn, teardown);
	LIST_HEAD(txs);

	if (conn->cmid && conn->qp)
		rdma_disconnect(conn->cmid);
	if (conn->qp)
		ib_drain_qp(conn->qp);
	/* every completion has run: nothing is posted any more */
	spin_lock(&conn->lock);
	WARN_ON(conn->nposted);
	list_splice_init(&conn->tx_queue, &txs);
	list_splice_init(&conn->tx_noops, &txs);
	spin_unlock(&conn->lock);
	o2_tx_fail_list(&txs, conn->error ? conn->error : -ECONNABORTED);
	o2_conn_release_qp(conn);
	if (conn->cmid) {
		rdma_destroy_id(conn->cmid);
		conn->cmid = NULL;
	}
	spin_lock(&conn->lock);
	o2_conn_set_state(conn, O2_CONN_DISCONNECTED);
	spin_unlock(&conn->lock);
	o2_conn_put(conn);
}

/**
 * o2_connd_teardown() - hand a CLOSING conn to connd
 * @conn: the conn; the caller's reference passes to connd
 */
void o2_connd_teardown(struct o2_conn *conn)
{
	INIT_WORK(&conn->teardown, o2_conn_teardown_fn);
	queue_work(o2_connd_wq, &conn->teardown);
}

/* One pass over the NI's peers.  Return: true if it stopped early. */
static bool o2_connd_scan_ni(struct o2_ni *ni)
{
	struct o2_conn *conn, *expired = NULL;
	struct o2_peer *peer, *reconnect = NULL;
	unsigned long now = jiffies;
	int bkt;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		list_for_each_entry(conn, &peer->conns, peer_list) {
			bool late;

			spin_lock(&conn->lock);
			late = ((conn->state == O2_CONN_ACTIVE_CONNECT ||
				 conn->state == O2_CONN_PASSIVE_WAIT) &&
				time_after(now, conn->deadline)) ||
			       (conn->state == O2_CONN_ESTABLISHED &&
				o2_conn_tx_late(conn, now));
			spin_unlock(&conn->lock);
			if (late) {
				kref_get(&conn->ref);
				expired = conn;
				goto out;
			}
		}
		if (peer->reconnect && time_after_eq(now, peer->reconnect_at) &&
		    !ni->shutdown) {
			peer->reconnect = false;
			if (list_empty(&peer->conns) &&
			    !list_empty(&peer->tx_queue)) {
				kref_get(&peer->ref);
				reconnect = peer;
				goto out;
			}
		}
	}
out:
	spin_unlock(&ni->lock);
	if (expired) {
		char nid[O2_NIDSTR_SIZE];
		static const char * const phases[] = {
			"accept or tx", "address resolution",
			"route resolution", "connect"
		};

		pr_warn_ratelimited("o2lnd: %s: %s to %s timed out\n", ni->net,
				    phases[expired->phase],
				    o2_nid_format(expired->peer->nid, nid,
						  sizeof(nid)));
		o2_conn_close(expired, -ETIMEDOUT);
		o2_conn_put(expired);
		return true;
	}
	if (reconnect) {
		LIST_HEAD(fail);
		int rc = o2_conn_start_active(reconnect);

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

static void o2_connd_scan_fn(struct work_struct *work)
{
	struct o2_ni *ni;
	int i;

	list_for_each_entry(ni, &o2_nis, list) {
		/* bounded: at most 100 actions per NI per pass */
		for (i = 0; i < 100; i++) {
			if (!o2_connd_scan_ni(ni))
				break;
		}
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
	INIT_DELAYED_WORK(&o2_connd_scan_work, o2_connd_scan_fn);
	return 0;
}

/**
 * o2_connd_start_scan() - start the periodic scan once the NIs exist
 */
void o2_connd_start_scan(void)
{
	queue_delayed_work(o2_connd_wq, &o2_connd_scan_work, O2_SCAN_INTERVAL);
}

/**
 * o2_connd_exit() - stop the scan and destroy the work queue
 *
 * Called once every conn is gone.
 */
void o2_connd_exit(void)
{
	cancel_delayed_work_sync(&o2_connd_scan_work);
	destroy_workqueue(o2_connd_wq);
}
