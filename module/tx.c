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
#include <linux/delay.h>
#include "o2lnd.h"
#include "trace.h"

static void o2_tx_release(struct kref *ref)
{
	struct o2_tx *tx = container_of(ref, struct o2_tx, ref);

	WARN_ON(tx->ibdev);
	if (tx->status) {
		atomic64_inc(&tx->ni->stats.error_count);
		trace_o2lnd_tx_failed(tx->ni->nid, tx->nid, tx->type, tx->nob,
				      tx->status);
	}
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

/*
 * May a tx that failed with @error on a dying conn be sent again?  Like
 * LNet's resend on a local or remote drop: once, when the conn broke
 * under it (send error, peer disconnected or rebooted, conn aborted or
 * closed as a duplicate),
 * while its deadline holds and the NI is up.  NOOPs only carried credits
 * of the dead conn.
 */
static bool o2_tx_may_resend(struct o2_tx *tx, int error)
{
	if (tx->type == O2_MSG_NOOP || tx->resends >= 1 || !tx->nid ||
	    READ_ONCE(tx->ni->shutdown) || time_after(jiffies, tx->deadline))
		return false;
	return error == -EIO || error == -ECONNRESET || error == -ESTALE ||
	       error == -ECONNABORTED || error == -EALREADY;
}

/**
 * o2_tx_fail_or_resend() - complete the txs of a dead conn
 * @txs: txs that were queued or posted on it and did not complete
 * @error: why the conn died
 *
 * Each tx is launched again once towards its destination
 * (o2_tx_may_resend()), which connects anew; the others complete with
 * @error.  The caller holds no o2lnd lock and has already closed the
 * conn, so a resend never lands on it.
 */
void o2_tx_fail_or_resend(struct list_head *txs, int error)
{
	struct o2_tx *tx, *tmp;

	list_for_each_entry_safe(tx, tmp, txs, list) {
		list_del_init(&tx->list);
		if (o2_tx_may_resend(tx, error)) {
			tx->resends++;
			tx->conn = NULL;
			tx->status = 0;
			o2_ni_launch(tx->ni, tx->nid, tx);
			continue;
		}
		tx->status = error;
		o2_tx_put(tx);
	}
}

/**
 * o2_conn_queue_tx() - queue a tx on a conn
 * @conn: the conn
 * @tx: the tx; its reference passes to the conn on success
 *
 * A tx still waiting for credits or a send-queue slot past its deadline
 * (set at launch: the timeout parameter) makes connd close the conn
 * (o2_conn_tx_late()).
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
	if (tx->type == O2_MSG_NOOP)
		tx->deadline = jiffies + o2_timeout * HZ;
	spin_unlock(&conn->lock);
	return rc;
}

/*
 * The Send completion of a tx.  Tx lifetime rule, enforced here: a posted
 * tx holds a reference for its work request, dropped only by this
 * completion, after the DMA unmap; so nothing a WR may still touch is
 * freed or unmapped before the device is done with it, and a tx never
 * completes to LNet before its Send completion, however late.  A
 * SEND_DELAY fault holds the completion back (it sleeps here, in
 * ib_comp_wq: the CQ's later completions wait behind it, and
 * ib_drain_qp() waits for it).
 */
static void o2_tx_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_tx *tx = container_of(wc->wr_cqe, struct o2_tx, cqe);
	struct o2_conn *conn = tx->conn;
	bool failed = wc->status != IB_WC_SUCCESS;
	struct o2_fault_hit hit;
	LIST_HEAD(resend);

	if (o2_fault_fire(O2LND_FAULT_SEND_DELAY, 0, conn->ni->nid,
			  conn->peer->nid, &hit))
		msleep(hit.delay_ms);
	ib_dma_unmap_single(tx->ibdev, tx->dma, tx->nob, DMA_TO_DEVICE);
	tx->ibdev = NULL;
	spin_lock(&conn->lock);
	conn->nposted--;
	spin_unlock(&conn->lock);

	trace_o2lnd_tx_completed(conn->ni->nid, conn->peer->nid, tx->type,
				 tx->nob, failed ? -EIO : 0);
	if (!failed) {
		if (tx->type != O2_MSG_NOOP) {
			atomic64_inc(&conn->ni->stats.send_count);
			atomic64_add(tx->nob, &conn->ni->stats.send_bytes);
			atomic64_inc(&conn->peer->st.send_count);
			atomic64_add(tx->nob, &conn->peer->st.send_bytes);
		}
		o2_tx_put(tx);
		o2_conn_check_sends(conn);
		return;
	}
	if (wc->status != IB_WC_WR_FLUSH_ERR) {
		char nid[O2_NIDSTR_SIZE];

		atomic64_inc(&conn->peer->st.error_count);
		pr_warn_ratelimited("o2lnd: send to %s failed: %s\n",
				    o2_nid_format(conn->peer->nid, nid,
						  sizeof(nid)),
				    ib_wc_status_msg(wc->status));
	}
	/* close first, so that a resend cannot land on this conn */
	o2_conn_close(conn, -EIO);
	list_add_tail(&tx->list, &resend);
	o2_tx_fail_or_resend(&resend, -EIO);
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
	trace_o2lnd_tx_posted(conn->ni->nid, conn->peer->nid, tx->type, tx->nob,
			      0);
	conn->outstanding -= o2_credits_return(conn->outstanding);
	conn->greet = false;
	conn->nposted++;
	if (tx->type != O2_MSG_NOOP)
		conn->credits--;
	return 0;
}

/*
 * A NOOP is needed when we owe at least queue_depth - 1 credits and no
 * queued message can carry them: none is queued, or we have no credit to
 * send it (both sides waiting for credits would otherwise deadlock).  On
 * a new iWARP connection the active side also greets with a NOOP when it
 * has nothing else to send: the passive side holds its sends until it
 * has received something (conn->hold_sends).
 */
static bool o2_conn_need_noop_locked(struct o2_conn *conn)
{
	if (conn->greet)
		return list_empty(&conn->tx_queue) || conn->credits == 0;
	return conn->outstanding >= conn->cp.queue_depth - 1 &&
	       (list_empty(&conn->tx_queue) || conn->credits == 0);
}

/**
 * o2_conn_check_sends() - post whatever credits and slots allow
 * @conn: the conn
 *
 * Queues a NOOP when credits are owed and nothing else would carry them,
 * then posts NOOPs (no credit needed) and queued messages (one credit
 * each) while send-queue slots remain.  Only an ESTABLISHED conn posts,
 * and an iWARP passive one only once it has received a message.
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
	while (conn->state == O2_CONN_ESTABLISHED && !conn->hold_sends &&
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
