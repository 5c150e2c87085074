// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: outgoing messages: allocation, queueing, credits and send-queue
 * slots, posting and Send completions.
 *
 * Per-connection credits follow o2iblnd v2; the accounting rules are in
 * credits.h/credits.c (pure, KUnit-tested) and this file applies them
 * under conn->lock: three queues (credited, reserved-credit requests,
 * credit-less), a NOOP when owed credits reach peer_credits_hiw or the
 * conn has been idle for the keepalive period, sends in flight capped
 * at concurrent_sends and send-queue slots freed only by completions.
 *
 * Tx lifetime rule: a tx is freed, unmapped and completed to its owner
 * only by its last reference.  A posted tx holds one for its work
 * request, dropped only by its Send completion after the DMA unmap
 * (o2_tx_send_done()); the LNet tx credits it holds go back at that
 * point (o2_tx_credits_return(), from the release), never earlier.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include <linux/delay.h>
#include "lnd.h"
#include "trace.h"

/**
 * o2_tx_pool_init() - an NI's empty tx pool
 * @ni: the NI, being created
 */
void o2_tx_pool_init(struct o2_ni *ni)
{
	spin_lock_init(&ni->tx_pool_lock);
	INIT_LIST_HEAD(&ni->tx_pool);
	ni->tx_pool_n = 0;
}

/**
 * o2_tx_pool_trim() - free the txs an NI kept
 * @ni: the NI: being freed (no tx of it is alive), or deleted and shut
 *	down (a tx released later still goes back to its pool, freed with
 *	it at unload)
 */
void o2_tx_pool_trim(struct o2_ni *ni)
{
	struct o2_tx *tx, *tmp;
	LIST_HEAD(free);

	spin_lock(&ni->tx_pool_lock);
	list_splice_init(&ni->tx_pool, &free);
	ni->tx_pool_n = 0;
	spin_unlock(&ni->tx_pool_lock);
	list_for_each_entry_safe(tx, tmp, &free, list) {
		list_del(&tx->list);
		kfree(tx->msg);
		kfree(tx);
	}
}

/*
 * A tx from @ni's pool, as new: the struct zeroed, its message buffer
 * already zero (o2_tx_pool_put()).  NULL if the pool is empty.
 */
static struct o2_tx *o2_tx_pool_get(struct o2_ni *ni)
{
	struct o2_tx *tx;
	void *msg;

	spin_lock(&ni->tx_pool_lock);
	tx = list_first_entry_or_null(&ni->tx_pool, struct o2_tx, list);
	if (tx) {
		list_del(&tx->list);
		ni->tx_pool_n--;
	}
	spin_unlock(&ni->tx_pool_lock);
	if (!tx)
		return NULL;
	msg = tx->msg;
	memset(tx, 0, sizeof(*tx));
	tx->msg = msg;
	return tx;
}

/*
 * Keep a released tx for reuse, its buffer zeroed again as far as it was
 * written (a message is written only within its @nob bytes), or free it
 * when the pool already holds o2_ntx.
 */
static void o2_tx_pool_put(struct o2_ni *ni, struct o2_tx *tx)
{
	memset(tx->msg, 0, min_t(u32, tx->nob, O2_MAX_MSG_SIZE));
	spin_lock(&ni->tx_pool_lock);
	if (ni->tx_pool_n < o2_ntx) {
		list_add(&tx->list, &ni->tx_pool);
		ni->tx_pool_n++;
		tx = NULL;
	}
	spin_unlock(&ni->tx_pool_lock);
	if (tx) {
		kfree(tx->msg);
		kfree(tx);
	}
}

static void o2_tx_release(struct kref *ref)
{
	struct o2_tx *tx = container_of(ref, struct o2_tx, ref);
	struct o2_ni *ni = tx->ni;
	struct o2_peer *peer;

	WARN_ON(tx->txb);
	if (tx->status) {
		atomic64_inc(&ni->stats.error_count);
		if (tx->status == -ETIMEDOUT)
			atomic64_inc(&ni->stats.tx_timeouts);
		trace_o2lnd_tx_failed(ni->nid, tx->nid, tx->type, tx->nob,
				      tx->status);
	}
	if (tx->done)	/* its owner learns how it ended */
		tx->done(tx);
	if (tx->writes != tx->writes_inline)	/* o2_tx_set_writes() */
		kfree(tx->writes);
	peer = tx->peer;
	if (peer)	/* launched by LNet: its credits */
		o2_up->tx_finalize(tx);
	if (tx->counted)
		atomic_dec(&ni->tx_live);
	o2_tx_pool_put(ni, tx);
	/* last: the peer pins the NI (and so its pool) until here */
	if (peer)
		o2_peer_put(peer);
}

/*
 * A tx on @ni, from its pool or new; @counted: bounded by ntx.  Return:
 * the tx (one reference, on no queue) or NULL.
 */
static struct o2_tx *o2_tx_get(struct o2_ni *ni, bool counted)
{
	struct o2_tx *tx;

	if (counted && atomic_inc_return(&ni->tx_live) > o2_ntx) {
		atomic_dec(&ni->tx_live);
		atomic64_inc(&ni->stats.tx_no_credit_drops);
		return NULL;
	}
	tx = o2_tx_pool_get(ni);
	if (!tx) {
		tx = kzalloc(sizeof(*tx), GFP_KERNEL);
		if (tx)
			tx->msg = kzalloc(O2_MAX_MSG_SIZE, GFP_KERNEL);
	}
	if (!tx || !tx->msg) {
		kfree(tx);
		if (counted)
			atomic_dec(&ni->tx_live);
		return NULL;
	}
	kref_init(&tx->ref);
	INIT_LIST_HEAD(&tx->list);
	tx->ni = ni;
	tx->counted = counted;
	tx->wrs = 1;
	return tx;
}

/**
 * o2_tx_alloc() - allocate a tx for a message on @ni
 * @ni: the NI
 * @type: O2_MSG_*
 *
 * Messages are bounded by the ntx parameter: once ntx txs are alive on
 * the NI (queued ones included) allocation fails and the drop is
 * counted.  NOOPs are not counted: at most O2_OOB_MSGS are posted per
 * conn and one waits.
 *
 * Return: the tx (one reference) or NULL.
 */
struct o2_tx *o2_tx_alloc(struct o2_ni *ni, u8 type)
{
	struct o2_tx *tx = o2_tx_get(ni, type != O2_MSG_NOOP);

	if (tx) {
		tx->type = type;
		tx->q = o2_txq_of(type);
		tx->nob = sizeof(struct o2_msg_hdr);
	}
	return tx;
}

/**
 * o2_tx_alloc_inv() - a tx that invalidates @mr through a conn's send queue
 * @ni: the NI
 * @mr: the MR, registered on the conn the tx will be queued on
 * @inv_done: the owner's part of the LOCAL_INV's completion
 *
 * It carries no message: posted, it is one signaled LOCAL_INV, which
 * waits with the credit-less messages for a send-queue slot and the
 * sends-in-flight cap, and is not bounded by ntx (it ends an exchange
 * whose messages were).  At its completion tx.c does the conn's
 * accounting, calls @inv_done, closes the conn on an error other than a
 * flush, and drops the work request's reference.  Unposted, it ends as
 * any tx: through tx->done with an error status.
 *
 * Return: the tx (one reference) or NULL.
 */
struct o2_tx *o2_tx_alloc_inv(struct o2_ni *ni, struct o2_mr *mr,
			      void (*inv_done)(struct o2_tx *tx, bool clean))
{
	struct o2_tx *tx = o2_tx_get(ni, false);

	if (tx) {
		tx->q = O2_TXQ_NOCRED;
		tx->inv_mr = mr;
		tx->inv_done = inv_done;
	}
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
 * o2_tx_fail_or_resend() - complete the txs of a dead conn
 * @txs: txs that were queued or posted on it and did not complete
 * @error: why the conn died
 *
 * LNet may take each tx for a resend towards its destination
 * (o2_up->resend()), which connects anew; the others complete with
 * @error.  The caller holds no o2lnd lock and has already closed the
 * conn, so a resend never lands on it.
 */
void o2_tx_fail_or_resend(struct list_head *txs, int error)
{
	struct o2_tx *tx, *tmp;

	list_for_each_entry_safe(tx, tmp, txs, list) {
		list_del_init(&tx->list);
		if (o2_up->resend(tx, error))
			continue;
		tx->status = error;
		o2_tx_put(tx);
	}
}

/**
 * o2_conn_queue_tx() - queue a tx on a conn
 * @conn: the conn
 * @tx: the tx; its reference passes to the conn on success
 *
 * It waits on the queue its type needs (o2_txq_of()).  A tx still
 * waiting for credits or a send-queue slot past its deadline (set at
 * launch: the timeout parameter) makes connd close the conn
 * (o2_conn_tx_late()).
 *
 * Return: 0, or -ECONNABORTED when the conn is closing.
 */
int o2_conn_queue_tx(struct o2_conn *conn, struct o2_tx *tx)
{
	struct list_head *q;
	int rc = 0;

	/* (LOCAL_INV,) REG_MR and RDMA WRITEs go before the message itself */
	tx->wrs = 1 + tx->reg * (1 + conn->dev->reg_replayed) + tx->nwrites;
	switch (tx->q) {
	case O2_TXQ_RSRVD:
		q = &conn->tx_queue_rsrvd;
		break;
	case O2_TXQ_NOCRED:
		q = &conn->tx_queue_nocred;
		break;
	default:
		q = &conn->tx_queue;
		break;
	}
	spin_lock(&conn->lock);
	if (conn->state >= O2_CONN_CLOSING)
		rc = -ECONNABORTED;
	else
		list_add_tail(&tx->list, q);
	if (tx->type == O2_MSG_NOOP)
		tx->deadline = jiffies + o2_timeout * HZ;
	spin_unlock(&conn->lock);
	return rc;
}

/**
 * o2_tx_bufs_alloc() - allocate and map the conn's send buffers
 * @conn: the conn, with conn->dev set
 *
 * Return: 0 or -ENOMEM; partial allocations are undone by
 * o2_tx_bufs_free().
 */
int o2_tx_bufs_alloc(struct o2_conn *conn)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	int i;

	conn->txbs = kcalloc(o2_concurrent_sends, sizeof(*conn->txbs),
			     GFP_KERNEL);
	if (!conn->txbs)
		return -ENOMEM;
	for (i = 0; i < o2_concurrent_sends; i++) {
		struct o2_txbuf *txb = &conn->txbs[i];

		txb->buf = o2_msg_buf_alloc(ibdev, DMA_TO_DEVICE, &txb->dma);
		if (!txb->buf)
			return -ENOMEM;
		conn->ntxb++;
		list_add_tail(&txb->list, &conn->txb_free);
	}
	return 0;
}

/**
 * o2_tx_bufs_free() - unmap and free the send buffers
 * @conn: the conn; its QP and CQ are destroyed and no tx is posted
 */
void o2_tx_bufs_free(struct o2_conn *conn)
{
	int i;

	if (!conn->txbs)
		return;
	for (i = 0; i < conn->ntxb; i++) {
		o2_msg_buf_free(conn->dev->ibdev, conn->txbs[i].buf,
				conn->txbs[i].dma, DMA_TO_DEVICE);
	}
	INIT_LIST_HEAD(&conn->txb_free);
	kfree(conn->txbs);
	conn->txbs = NULL;
	conn->ntxb = 0;
}

/*
 * The Send completion of a tx.  Tx lifetime rule, enforced here: a posted
 * tx holds a reference for its work request, dropped only by this
 * completion, after the DMA unmap; so nothing a WR may still touch is
 * freed or unmapped before the device is done with it, and a tx never
 * completes to LNet before its Send completion, however late.  Its slots
 * and the sends-in-flight count are given back here and nowhere else.
 */
static void o2_tx_send_finish(struct o2_tx *tx, enum ib_wc_status status)
{
	struct o2_conn *conn = tx->conn;
	bool failed = status != IB_WC_SUCCESS;
	LIST_HEAD(resend);

	spin_lock(&conn->lock);
	list_add(&tx->txb->list, &conn->txb_free);
	tx->txb = NULL;
	list_del_init(&tx->list);	/* off conn->posted */
	o2_credits_complete(&conn->cr, tx->type == O2_MSG_NOOP, tx->wrs);
	conn->send_progress = jiffies;
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
		o2_up->health(conn->peer, true);
		o2_tx_put(tx);
		o2_conn_check_sends(conn);
		return;
	}
	if (status != IB_WC_WR_FLUSH_ERR) {
		char nid[O2_NIDSTR_SIZE];

		atomic64_inc(&conn->peer->st.error_count);
		pr_warn_ratelimited("o2lnd: send to %s failed: %s\n",
				    o2_nid_format(conn->peer->nid, nid,
						  sizeof(nid)),
				    ib_wc_status_msg(status));
		/* a keepalive or message the peer never acknowledged */
		o2_up->health(conn->peer, false);
	}
	/* close first, so that a resend cannot land on this conn */
	o2_conn_close(conn, -EIO);
	list_add_tail(&tx->list, &resend);
	o2_tx_fail_or_resend(&resend, -EIO);
}

/* A Send completion held back by a SEND_DELAY fault, handled now. */
static void o2_tx_late_fn(struct work_struct *work)
{
	struct o2_tx *tx = container_of(to_delayed_work(work), struct o2_tx,
					late_work);
	struct o2_conn *conn = tx->conn;

	kref_get(&conn->ref);
	o2_tx_send_finish(tx, tx->late_status);
	if (atomic_dec_and_test(&conn->late_sends))
		wake_up(&o2_exit_waitq);
	o2_conn_put(conn);
}

/*
 * A SEND_DELAY fault models a late Send completion: the completion is
 * handled @delay_ms later from o2_tx_wq, while the CQ goes on (so the
 * peer's reply to this very message may be handled first).  Teardown
 * waits for held completions after the drain (conn->late_sends), so the
 * QP, CQ and device outlive them.
 */
static void o2_tx_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_tx *tx = container_of(wc->wr_cqe, struct o2_tx, cqe);
	struct o2_conn *conn = tx->conn;
	struct o2_fault_hit hit;

	if (o2_fault_fire(O2LND_FAULT_SEND_DELAY, 0, conn->ni->nid,
			  conn->peer->nid, &hit)) {
		tx->late_status = wc->status;
		atomic_inc(&conn->late_sends);
		INIT_DELAYED_WORK(&tx->late_work, o2_tx_late_fn);
		queue_delayed_work(o2_tx_wq, &tx->late_work,
				   msecs_to_jiffies(hit.delay_ms));
		return;
	}
	o2_tx_send_finish(tx, wc->status);
}

/* An unsignaled REG_MR or RDMA WRITE failed: the QP is in error now. */
static void o2_tx_bulk_wr_err(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("o2lnd: bulk work request failed: %s\n",
				    ib_wc_status_msg(wc->status));
}

/**
 * o2_tx_set_writes() - the RDMA WRITEs of a tx's bulk data into a sink
 * @tx: a tx whose bulk buffer is mapped (tx->bulk->mr)
 * @rd: the peer's descriptor of its sink (checked by the caller: no
 *	more bytes than the buffer, no more fragments than negotiated)
 *
 * One WRITE per fragment, from consecutive ranges of the buffer, until
 * the buffer's bytes are placed; built here, once, and posted ahead of
 * the message without being signaled (o2_tx_chain_locked()).  The usual
 * one-fragment descriptor needs no allocation (O2_TX_WRITES_INLINE).
 *
 * Return: 0, or -ENOMEM (the tx is unchanged).
 */
int o2_tx_set_writes(struct o2_tx *tx, const struct o2_rdma_desc *rd)
{
	struct o2_bulk *b = tx->bulk;
	struct ib_mr *mr = b->mr->mr;
	struct o2_write_wr *ws = tx->writes_inline;
	u32 i, n, off;

	for (n = 0, off = 0; n < rd->nfrags && off < b->nob; n++)
		off += min_t(u32, rd->frags[n].nob, b->nob - off);
	if (n > O2_TX_WRITES_INLINE) {
		ws = kcalloc(n, sizeof(*ws), GFP_KERNEL);
		if (!ws)
			return -ENOMEM;
	}
	b->write_cqe.done = o2_tx_bulk_wr_err;
	for (i = 0, off = 0; i < n; i++) {
		struct o2_write_wr *w = &ws[i];

		w->sge.addr = mr->iova + off;
		w->sge.length = min_t(u32, rd->frags[i].nob, b->nob - off);
		w->sge.lkey = mr->lkey;
		w->wr.wr.wr_cqe = &b->write_cqe;
		w->wr.wr.opcode = IB_WR_RDMA_WRITE;
		w->wr.wr.sg_list = &w->sge;
		w->wr.wr.num_sge = 1;
		w->wr.remote_addr = rd->frags[i].addr;
		w->wr.rkey = rd->key;
		off += w->sge.length;
	}
	tx->writes = ws;
	tx->nwrites = n;
	return 0;
}

/**
 * struct o2_post_chain - work requests chained for one ib_post_send()
 * @head: the first, or NULL
 * @tail: where the next one is linked
 * @first: the first tx whose work requests are in it (the txs from it to
 *	the end of conn->posted are)
 * @ntx: txs in it
 * @nwr: work requests in it
 *
 * o2_conn_check_sends() posts every tx it can in one call, as o2iblnd
 * posts a tx's RDMA and message work requests in one: one doorbell for
 * all of them on hardware that rings one per call (mlx5).  The work
 * requests live in their txs until the call; a device copies them.
 */
struct o2_post_chain {
	struct ib_send_wr *head;
	struct ib_send_wr **tail;
	struct o2_tx *first;
	int ntx;
	int nwr;
};

static void o2_chain_add(struct o2_post_chain *pc, struct ib_send_wr *wr)
{
	wr->next = NULL;
	*pc->tail = wr;
	pc->tail = &wr->next;
	pc->nwr++;
}

/*
 * A POST_FAIL fault: the chain is refused at its work request @n (from
 * 0; it is longer).  Return: that work request, unlinked from those
 * before it, which alone are posted.
 */
static struct ib_send_wr *o2_chain_cut(struct o2_post_chain *pc, u32 n)
{
	struct ib_send_wr *wr = pc->head, *prev = NULL;

	while (n--) {
		prev = wr;
		wr = wr->next;
	}
	if (prev)
		prev->next = NULL;
	return wr;
}

/*
 * Chain a message tx's bulk work requests: the REG_MR of tx->bulk's MR
 * (tx->reg) and the RDMA WRITEs of its data (o2_tx_set_writes()).  None
 * is signaled: the message's completion covers them, and an error
 * completes them with o2_tx_bulk_wr_err().  On a device that replays
 * local work requests (o2_dev.reg_replayed) the REG_MR follows a
 * LOCAL_INV of the same key: executed once or twice, the pair leaves the
 * MR registered.  Caller holds conn->lock, so nothing lands between.
 */
static void o2_tx_chain_bulk_locked(struct o2_conn *conn, struct o2_tx *tx,
				    struct o2_post_chain *pc)
{
	struct o2_bulk *b = tx->bulk;
	u32 i;

	lockdep_assert_held(&conn->lock);
	if (tx->reg) {
		struct ib_mr *mr = b->mr->mr;

		b->reg_cqe.done = o2_tx_bulk_wr_err;
		if (conn->dev->reg_replayed) {
			tx->wr_inv = (struct ib_send_wr) {
				.wr_cqe = &b->reg_cqe,
				.opcode = IB_WR_LOCAL_INV,
				.ex.invalidate_rkey = mr->rkey,
			};
			o2_chain_add(pc, &tx->wr_inv);
		}
		tx->wr_reg = (struct ib_reg_wr) {
			.wr.wr_cqe = &b->reg_cqe,
			.wr.opcode = IB_WR_REG_MR,
			.mr = mr,
			.key = mr->rkey,
			.access = IB_ACCESS_LOCAL_WRITE,
		};
		if (b->kind == O2_BULK_PUT_SINK || b->kind == O2_BULK_GET_SINK)
			tx->wr_reg.access |= IB_ACCESS_REMOTE_WRITE;
		o2_chain_add(pc, &tx->wr_reg.wr);
	}
	for (i = 0; i < tx->nwrites; i++)
		o2_chain_add(pc, &tx->writes[i].wr.wr);
}

/* The LOCAL_INV of an invalidation tx completed (o2_tx_alloc_inv()). */
static void o2_tx_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_tx *tx = container_of(wc->wr_cqe, struct o2_tx, cqe);
	struct o2_conn *conn = tx->conn;

	spin_lock(&conn->lock);
	list_del_init(&tx->list);	/* off conn->posted */
	o2_credits_complete(&conn->cr, false, tx->wrs);
	conn->send_progress = jiffies;
	spin_unlock(&conn->lock);
	tx->inv_done(tx, wc->status == IB_WC_SUCCESS);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		o2_conn_close(conn, -EIO);
	o2_tx_put(tx);
	o2_conn_check_sends(conn);
}

/*
 * Chain the tx's work requests and account it as posted: an invalidation
 * tx's one signaled LOCAL_INV of tx->inv_mr (its completion is
 * o2_tx_inv_done()), or a message's bulk work requests and its signaled
 * Send, from a send buffer of the conn.  It goes on conn->posted now;
 * o2_chain_post_locked() undoes what the device refused.  Caller holds
 * conn->lock.  Return: 0, or -ENOBUFS (a broken slot count: nothing is
 * done).
 */
static int o2_tx_chain_locked(struct o2_conn *conn, struct o2_tx *tx,
			      enum o2_txq q, struct o2_post_chain *pc)
{
	bool noop = tx->type == O2_MSG_NOOP;
	struct o2_txbuf *txb;

	lockdep_assert_held(&conn->lock);
	/* nposted < concurrent_sends == ntxb: one is free (o2_may_post()) */
	if (!tx->inv_mr && WARN_ON_ONCE(list_empty(&conn->txb_free)))
		return -ENOBUFS;
	if (!pc->first)
		pc->first = tx;
	pc->ntx++;
	tx->conn = conn;
	tx->unposted = false;
	if (!conn->cr.nposted)
		conn->send_progress = jiffies;
	list_add_tail(&tx->list, &conn->posted);
	if (tx->inv_mr) {
		tx->cqe.done = o2_tx_inv_done;
		tx->wr_inv = (struct ib_send_wr) {
			.wr_cqe = &tx->cqe,
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = tx->inv_mr->mr->rkey,
		};
		o2_chain_add(pc, &tx->wr_inv);
		o2_credits_post_local(&conn->cr, tx->wrs);
		return 0;
	}
	if (tx->bulk)
		o2_tx_chain_bulk_locked(conn, tx, pc);

	/* the credits byte is taken from the state as it is posted */
	o2_msg_pack(tx->msg, tx->type, o2_credits_return(conn->cr.outstanding),
		    tx->nob, conn->ni->nid, conn->ni->stamp, conn->peer->nid,
		    conn->peer_stamp, o2_cksum_param);
	txb = list_first_entry(&conn->txb_free, struct o2_txbuf, list);
	list_del(&txb->list);
	tx->txb = txb;
	memcpy(txb->buf, tx->msg, tx->nob);
	ib_dma_sync_single_for_device(conn->dev->ibdev, txb->dma, tx->nob,
				      DMA_TO_DEVICE);
	tx->cqe.done = o2_tx_send_done;
	tx->sge.addr = txb->dma;
	tx->sge.length = tx->nob;
	tx->sge.lkey = conn->dev->pd->local_dma_lkey;
	tx->wr_send = (struct ib_send_wr) {
		.wr_cqe = &tx->cqe,
		.sg_list = &tx->sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	o2_chain_add(pc, &tx->wr_send);
	trace_o2lnd_tx_posted(conn->ni->nid, conn->peer->nid, tx->type, tx->nob,
			      0);
	o2_credits_post(&conn->cr, q, noop, tx->wrs);
	conn->greet = false;
	if (noop && conn->nudge && !conn->heard && conn->nudges < U8_MAX)
		conn->nudges++;
	conn->last_send = jiffies;
	conn->send_count++;
	if (tx->keepalive) {
		conn->keepalives++;
		atomic64_inc(&conn->ni->stats.keepalives);
	}
	return 0;
}

/**
 * o2_chain_post_locked() - post a chain in one call, undo what failed
 * @conn: the conn; caller holds conn->lock
 * @pc: the chain (o2_tx_chain_locked())
 * @failed: gets the txs none of whose work requests the device took
 *
 * When ib_post_send() refuses a work request, those before it are
 * posted and it and those after are not.  A tx all of whose work
 * requests are posted completes as usual; a tx none of whose are leaves
 * conn->posted, its send buffer and send-queue slots come back, and it
 * goes on @failed (the caller completes it with the error and closes
 * the conn).  A tx with only some posted (its REG_MR, not its Send)
 * stays on conn->posted marked unposted: its posted part completes,
 * flushed, only as the QP drains, and o2_conn_reclaim_posted() completes
 * the tx once the QP is gone.
 *
 * Return: 0 or the error of ib_post_send().
 */
static int o2_chain_post_locked(struct o2_conn *conn, struct o2_post_chain *pc,
				struct list_head *failed)
{
	struct ib_send_wr *wr, *cut = NULL;
	const struct ib_send_wr *bad = NULL;
	struct o2_fault_hit hit;
	struct o2_tx *tx, *tmp;
	int rc = 0, taken = 0;

	lockdep_assert_held(&conn->lock);
	if (!pc->head)
		return 0;
	if (o2_fault_fire(O2LND_FAULT_POST_FAIL, pc->nwr, conn->ni->nid,
			  conn->peer->nid, &hit))
		cut = o2_chain_cut(pc, hit.arg);
	if (cut != pc->head)
		rc = ib_post_send(conn->qp, pc->head, &bad);
	if (!rc && cut) {
		rc = -ENOMEM;	/* what a full send queue answers */
		bad = cut;
	}
	trace_o2lnd_send_chain(conn->ni->nid, conn->peer->nid, pc->ntx,
			       pc->nwr, rc);
	if (!rc)
		return 0;
	for (wr = pc->head; wr && wr != bad; wr = wr->next)
		taken++;
	tx = pc->first;
	list_for_each_entry_safe_from(tx, tmp, &conn->posted, list) {
		enum o2_chain_fate f = o2_chain_fate(&taken, tx->wrs);

		if (f == O2_CHAIN_POSTED)
			continue;
		if (f == O2_CHAIN_PARTIAL) {
			tx->unposted = true;
			continue;
		}
		list_move_tail(&tx->list, failed);
		o2_credits_complete(&conn->cr, tx->type == O2_MSG_NOOP,
				    tx->wrs);
		if (tx->txb) {	/* an invalidation tx has none */
			list_add(&tx->txb->list, &conn->txb_free);
			tx->txb = NULL;
		}
	}
	return rc;
}

static bool o2_conn_keepalive_due(struct o2_conn *conn, unsigned long now)
{
	/* a surplus conn is left quiet to close (o2_surplus_close_due()) */
	return o2_keepalive && !conn->cr.nposted && !READ_ONCE(conn->surplus) &&
	       time_after_eq(now, conn->last_send + o2_keepalive * HZ);
}

/*
 * Does an iWARP initiator owe its silent peer a NOOP (o2_nudge_due())?
 * @conn is ESTABLISHED or not: the caller checks.  Caller holds
 * conn->lock.
 */
static bool o2_conn_nudge_due_locked(struct o2_conn *conn, unsigned long now)
{
	lockdep_assert_held(&conn->lock);
	return conn->nudge && o2_nudge_due(&conn->cr, conn->heard,
					   conn->nudges, conn->last_send, now);
}

static bool o2_conn_noop_queued_locked(struct o2_conn *conn)
{
	struct o2_tx *tx;

	list_for_each_entry(tx, &conn->tx_queue_nocred, list)
		if (tx->type == O2_MSG_NOOP)
			return true;
	return false;
}

/**
 * o2_conn_noop_due_locked() - does an idle conn owe its peer a NOOP?
 * @conn: the conn
 * @now: jiffies
 *
 * An ESTABLISHED conn, its sends not held, with nothing posted and no
 * NOOP waiting, whose keepalive period passed since its last send, or an
 * iWARP initiator's whose peer has said nothing (o2_nudge_due()):
 * o2_conn_check_sends() sends a NOOP then (connd asks, every scan).
 * Caller holds conn->lock.
 *
 * Return: true if a NOOP is due.
 */
bool o2_conn_noop_due_locked(struct o2_conn *conn, unsigned long now)
{
	lockdep_assert_held(&conn->lock);
	return conn->state == O2_CONN_ESTABLISHED && !conn->hold_sends &&
	       !conn->cr.nposted &&
	       (o2_conn_keepalive_due(conn, now) ||
		o2_conn_nudge_due_locked(conn, now)) &&
	       !o2_conn_noop_queued_locked(conn);
}

/*
 * Is a NOOP needed (o2_need_noop())?  On a new iWARP connection the
 * active side also greets with a NOOP when nothing else can go at once:
 * the passive side holds its sends until it has received something
 * (conn->hold_sends).
 */
static bool o2_conn_need_noop_locked(struct o2_conn *conn, bool *keepalive)
{
	bool cred = !list_empty(&conn->tx_queue);
	bool nocred = false;
	struct o2_tx *tx;

	/* queued NOOPs and invalidations carry no credits */
	list_for_each_entry(tx, &conn->tx_queue_nocred, list) {
		if (!tx->inv_mr && tx->type != O2_MSG_NOOP) {
			nocred = true;
			break;
		}
	}
	*keepalive = o2_conn_keepalive_due(conn, jiffies);
	if (conn->greet)
		return !nocred && (!cred || conn->cr.credits == 0);
	if (o2_conn_nudge_due_locked(conn, jiffies))
		return true;
	return o2_need_noop(&conn->cr, nocred, cred, *keepalive);
}

/**
 * o2_conn_check_sends() - post whatever credits and slots allow
 * @conn: the conn
 *
 * Moves requests that got a reserved credit to the credited queue,
 * queues a NOOP when credits are owed (or a keepalive is due) and
 * nothing else would carry them, then posts credit-less messages first
 * and credited ones while credits, the sends-in-flight cap and
 * send-queue slots allow (o2_may_post()).  Only an ESTABLISHED conn
 * posts, and an iWARP passive one only once it has received a message.
 * Any context without o2lnd locks.
 */
void o2_conn_check_sends(struct o2_conn *conn)
{
	struct o2_post_chain pc = {};
	struct o2_tx *tx, *tmp, *noop = NULL;
	bool want_noop, keepalive;
	LIST_HEAD(failed);
	LIST_HEAD(noops);
	int rc = 0, post_rc;

	spin_lock(&conn->lock);
	want_noop = conn->state == O2_CONN_ESTABLISHED &&
		    o2_conn_need_noop_locked(conn, &keepalive) &&
		    !o2_conn_noop_queued_locked(conn);
	spin_unlock(&conn->lock);
	if (want_noop)
		noop = o2_tx_alloc(conn->ni, O2_MSG_NOOP);

	pc.tail = &pc.head;
	spin_lock(&conn->lock);
	if (noop && conn->state == O2_CONN_ESTABLISHED) {
		noop->keepalive = keepalive &&
				  conn->cr.outstanding < conn->cr.hiw;
		noop->deadline = jiffies + o2_timeout * HZ;
		list_add_tail(&noop->list, &conn->tx_queue_nocred);
		noop = NULL;
	}
	while (!list_empty(&conn->tx_queue_rsrvd) &&
	       o2_credits_take_reserved(&conn->cr))
		list_move_tail(conn->tx_queue_rsrvd.next, &conn->tx_queue);
	while (conn->state == O2_CONN_ESTABLISHED && !conn->hold_sends) {
		enum o2_post_verdict v;
		enum o2_txq q;

		/* the choice KUnit's credit simulation drives too */
		if (!o2_next_txq(&conn->cr,
				 !list_empty(&conn->tx_queue_nocred),
				 !list_empty(&conn->tx_queue), &q))
			break;
		tx = list_first_entry(q == O2_TXQ_NOCRED ?
				      &conn->tx_queue_nocred : &conn->tx_queue,
				      struct o2_tx, list);
		if (tx->type == O2_MSG_NOOP) {
			bool ka, need = o2_conn_need_noop_locked(conn, &ka);

			v = o2_may_post(&conn->cr, q, true, need, tx->wrs);
		} else {
			v = o2_may_post(&conn->cr, q, false, false, tx->wrs);
		}
		if (v == O2_POST_WAIT)
			break;
		if (v == O2_POST_DROP_NOOP) {
			/* credits already returned, or enough NOOPs in flight */
			list_move_tail(&tx->list, &noops);
			continue;
		}
		list_del_init(&tx->list);
		rc = o2_tx_chain_locked(conn, tx, q, &pc);
		if (rc) {
			list_add_tail(&tx->list, &failed);
			break;
		}
	}
	post_rc = o2_chain_post_locked(conn, &pc, &failed);
	rc = rc ? rc : post_rc;
	spin_unlock(&conn->lock);
	if (noop)
		o2_tx_put(noop);
	list_for_each_entry_safe(tx, tmp, &noops, list) {
		list_del_init(&tx->list);
		o2_tx_put(tx);
	}
	if (rc) {
		o2_tx_fail_list(&failed, rc);
		o2_conn_close(conn, rc);
	}
}

/**
 * o2_conn_reclaim_posted() - complete the sends a device never completed
 * @conn: a closed conn whose QP and CQ are destroyed
 *
 * ib_drain_qp() returns once every work request posted before it has
 * completed.  A device that breaks that promise (siw, removed under
 * load: a Send it was transmitting never completes) would leave its txs
 * holding their buffers, MRs and a user of the device for good, and the
 * device's removal would wait for them forever.  With the QP and the CQ
 * destroyed no completion can come any more, so the txs still on
 * conn->posted complete here, as flushed (their messages fail or are
 * resent like those of any broken conn).
 *
 * Return: the number of txs completed here.
 */
unsigned int o2_conn_reclaim_posted(struct o2_conn *conn)
{
	struct o2_tx *tx, *tmp;
	unsigned int n = 0;
	LIST_HEAD(orphans);

	spin_lock(&conn->lock);
	list_splice_init(&conn->posted, &orphans);
	spin_unlock(&conn->lock);
	list_for_each_entry_safe(tx, tmp, &orphans, list) {
		struct ib_wc wc = {
			.wr_cqe = &tx->cqe,
			.status = IB_WC_WR_FLUSH_ERR,
		};

		list_del_init(&tx->list);
		n += !tx->unposted;	/* a failed post is no lost send */
		/* not through o2_tx_send_done(): no fault may delay it now */
		if (tx->cqe.done == o2_tx_send_done)
			o2_tx_send_finish(tx, IB_WC_WR_FLUSH_ERR);
		else
			tx->cqe.done(NULL, &wc);
	}
	return n;
}

/**
 * o2_conn_tx_late() - has the oldest queued tx outlived its deadline?
 * @conn: the conn; caller holds conn->lock
 * @now: jiffies
 *
 * Return: true if so (the peer stopped returning credits, or sends do
 * not complete).
 */
bool o2_conn_tx_late(struct o2_conn *conn, unsigned long now)
{
	struct list_head *qs[] = { &conn->tx_queue, &conn->tx_queue_rsrvd,
				   &conn->tx_queue_nocred };
	struct o2_tx *tx;
	int i;

	lockdep_assert_held(&conn->lock);
	for (i = 0; i < ARRAY_SIZE(qs); i++) {
		tx = list_first_entry_or_null(qs[i], struct o2_tx, list);
		if (tx && time_after(now, tx->deadline))
			return true;
	}
	return false;
}
