// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: outgoing messages: allocation, queueing, credits and send-queue
 * slots, posting and Send completions.
 *
 * Credits follow o2iblnd v2: conn->credits is what the peer lets us send
 * (one per message, NOOPs excepted: they travel out of band and the
 * receiver keeps spare buffers for them); conn->outstanding is what we
 * owe the peer and rides on every message we send.  A NOOP goes out when
 * we owe queue_depth - 1 credits and nothing else can carry them.
 * conn->nposted counts posted Sends: a slot budget separate from the
 * peer's credits, freed only by Send completions.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include "o2lnd.h"

static void o2_tx_release(struct kref *ref)
{
	struct o2_tx *tx = container_of(ref, struct o2_tx, ref);

	WARN_ON(tx->ibdev);
	o2_lnet_tx_done(tx);
	atomic_dec(&tx->ni->tx_live);
	kfree(tx->msg);
	kfree(tx);
}

/**
 * o2_tx_alloc() - allocate a tx on @ni
 * @ni: the NI
 * @type: O2_MSG_*
 *
 * NOOPs are not limited by o2_credits; other messages fail once o2_credits
 * txs are alive on the NI.
 *
 * Return: the tx (one reference) or NULL.
 */
struct o2_tx *o2_tx_alloc(struct o2_ni *ni, u8 type)
{
	struct o2_tx *tx;

	if (atomic_inc_return(&ni->tx_live) > o2_credits &&
	    type != O2_MSG_NOOP) {
		atomic_dec(&ni->tx_live);
		return NULL;
	}
	tx = kzalloc(sizeof(*tx), GFP_KERNEL);
	if (tx)
		tx->msg = kzalloc(O2_MAX_MSG_SIZE, GFP_KERNEL);
	if (!tx || !tx->msg) {
		kfree(tx);
		atomic_dec(&ni->tx_live);
		return NULL;
	}
	kref_init(&tx->ref);
	INIT_LIST_HEAD(&tx->list);
	tx->ni = ni;
	tx->type = type;
	tx->nob = sizeof(struct o2_msg_hdr);
	return tx;
}

/**
 * o2_tx_put() - drop a reference; the last one completes the tx
 * @tx: the tx
 */
void o2_tx_put(struct o2_tx *tx)
{
	kref_put(&tx->ref, o2_tx_release);
}

/**
 * o2_tx_fail_list() - complete every tx of a list with @error
 * @txs: the list
 * @error: status
 */
void o2_tx_fail_list(struct list_head *txs, int error)
{
	struct o2_tx *tx, *tmp;

	list_for_each_entry_safe(tx, tmp, txs, list) {
		list_del_init(&tx->list);
		tx->status = error;
		o2_tx_put(tx);
	}
}

/**
 * o2_conn_queue_tx() - queue a tx on a conn
 * @conn: the conn
 * @tx: the tx; its reference passes to the conn on success
 *
 * A tx still waiting for credits or a send-queue slot after the timeout
 * parameter makes connd close the conn (o2_conn_tx_late()).
 *
 * Return: 0, or -ECONNABORTED when the conn is closing.
 */
int o2_conn_queue_tx(struct o2_conn *conn, struct o2_tx *tx)
{
	int rc = 0;

	spin_lock(&conn->lock);
	if (conn->state >= O2_CONN_CLOSING)
		rc = -ECONNABORTED;
	else if (tx->type == O2_MSG_NOOP)
		list_add_tail(&tx->list, &conn->tx_noops);
	else
		list_add_tail(&tx->list, &conn->tx_queue);
	tx->deadline = jiffies + o2_timeout * HZ;
	spin_unlock(&conn->lock);
	return rc;
}

static void o2_tx_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_tx *tx = container_of(wc->wr_cqe, struct o2_tx, cqe);
	struct o2_conn *conn = tx->conn;
	bool failed = wc->status != IB_WC_SUCCESS;

	ib_dma_unmap_single(tx->ibdev, tx->dma, tx->nob, DMA_TO_DEVICE);
	tx->ibdev = NULL;
	spin_lock(&conn->lock);
	conn->nposted--;
	spin_unlock(&conn->lock);

	if (failed) {
		tx->status = -EIO;
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			char nid[O2_NIDSTR_SIZE];

			pr_warn_ratelimited("o2lnd: send to %s failed: %s\n",
					    o2_nid_format(conn->peer->nid, nid,
							  sizeof(nid)),
					    ib_wc_status_msg(wc->status));
		}
	} else if (tx->type != O2_MSG_NOOP) {
		atomic64_inc(&conn->ni->stats.send_count);
		atomic64_add(tx->nob, &conn->ni->stats.send_bytes);
	}
	o2_tx_put(tx);
	if (failed)
		o2_conn_close(conn, -EIO);
	else
		o2_conn_check_sends(conn);
}

/* Caller holds conn->lock.  Return: 0 or an errno (the tx is unposted). */
static int o2_tx_post_locked(struct o2_conn *conn, struct o2_tx *tx)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int rc;

	o2_msg_pack(tx->msg, tx->type, o2_credits_return(conn->outstanding),
		    tx->nob, conn->ni->nid, conn->ni->stamp, conn->peer->nid,
		    conn->peer_stamp, false);
	tx->dma = ib_dma_map_single(ibdev, tx->msg, tx->nob, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, tx->dma))
		return -ENOMEM;
	tx->ibdev = ibdev;
	tx->conn = conn;
	tx->cqe.done = o2_tx_send_done;
	sge.addr = tx->dma;
	sge.length = tx->nob;
	sge.lkey = conn->dev->pd->local_dma_lkey;
	wr.wr_cqe = &tx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	rc = ib_post_send(conn->qp, &wr, NULL);
	if (rc) {
		ib_dma_unmap_single(ibdev, tx->dma, tx->nob, DMA_TO_DEVICE);
		tx->ibdev = NULL;
		return rc;
	}
	conn->outstanding -= o2_credits_return(conn->outstanding);
	conn->nposted++;
	if (tx->type != O2_MSG_NOOP)
		conn->credits--;
	return 0;
}

/*
 * A NOOP is needed when we owe at least queue_depth - 1 credits and no
 * queued message can carry them: none is queued, or we have no credit to
 * send it (both sides waiting for credits would otherwise deadlock).
 */
static bool o2_conn_need_noop_locked(struct o2_conn *conn)
{
	return conn->outstanding >= conn->cp.queue_depth - 1 &&
	       (list_empty(&conn->tx_queue) || conn->credits == 0);
}

/**
 * o2_conn_check_sends() - post whatever credits and slots allow
 * @conn: the conn
 *
 * Queues a NOOP when credits are owed and nothing else would carry them,
 * then posts NOOPs (no credit needed) and queued messages (one credit
 * each) while send-queue slots remain.  Only an ESTABLISHED conn posts.
 * Any context without o2lnd locks.
 */
void o2_conn_check_sends(struct o2_conn *conn)
{
	struct o2_tx *tx, *noop = NULL, *drop = NULL;
	bool want_noop;
	int rc = 0;

	spin_lock(&conn->lock);
	want_noop = conn->state == O2_CONN_ESTABLISHED &&
		    o2_conn_need_noop_locked(conn) &&
		    list_empty(&conn->tx_noops);
	spin_unlock(&conn->lock);
	if (want_noop)
		noop = o2_tx_alloc(conn->ni, O2_MSG_NOOP);

	spin_lock(&conn->lock);
	if (noop && conn->state == O2_CONN_ESTABLISHED) {
		list_add_tail(&noop->list, &conn->tx_noops);
		noop = NULL;
	}
	while (conn->state == O2_CONN_ESTABLISHED &&
	       conn->nposted < conn->cp.queue_depth) {
		if (!list_empty(&conn->tx_noops)) {
			tx = list_first_entry(&conn->tx_noops, struct o2_tx,
					      list);
			list_del_init(&tx->list);
			if (!o2_conn_need_noop_locked(conn)) {
				/* credits already returned: drop it */
				drop = tx;
				break;
			}
		} else if (!list_empty(&conn->tx_queue) && conn->credits > 0) {
			tx = list_first_entry(&conn->tx_queue, struct o2_tx,
					      list);
			list_del_init(&tx->list);
		} else {
			break;
		}
		rc = o2_tx_post_locked(conn, tx);
		if (rc) {
			tx->status = rc;
			drop = tx;
			break;
		}
	}
	spin_unlock(&conn->lock);
	if (noop)
		o2_tx_put(noop);
	if (drop)
		o2_tx_put(drop);
	if (rc)
		o2_conn_close(conn, rc);
}

/**
 * o2_conn_tx_late() - has the oldest queued tx outlived its deadline?
 * @conn: the conn; caller holds conn->lock
 * @now: jiffies
 *
 * Return: true if so (the peer stopped returning credits).
 */
bool o2_conn_tx_late(struct o2_conn *conn, unsigned long now)
{
	struct o2_tx *tx;

	lockdep_assert_held(&conn->lock);
	tx = list_first_entry_or_null(&conn->tx_queue, struct o2_tx, list);
	return tx && time_after(now, tx->deadline);
}
