// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: bulk data by RDMA (o2iblnd v2 PUT_REQ/PUT_ACK/PUT_NAK/PUT_DONE
 * and GET_REQ/GET_DONE) and the selftest (brw) service that uses it.
 *
 * The side holding the data RDMA-writes it, as o2iblnd does:
 *   PUT: A -> PUT_REQ(LNet PUT, cookie)          (credited, reserved)
 *        B -> PUT_ACK(cookies, sink descriptor)  (credit-less; REG_MR
 *             of the sink posted before it)
 *        A -> RDMA WRITE(s) + PUT_DONE(cookie)   (credit-less; REG_MR of
 *             the source first)
 *        B: invalidates its MR, checks, answers with an LNet ACK
 *   GET: A -> GET_REQ(LNet GET, cookie, sink descriptor) (REG_MR first)
 *        B -> RDMA WRITE(s) + GET_DONE(cookie, nob)
 *        A: invalidates its MR, checks
 * Payloads up to O2_MAX_IMMEDIATE bytes travel inline instead (LNet PUT
 * or GET as IMMEDIATE, the REPLY as IMMEDIATE).
 *
 * Lifetime: a bulk buffer (struct o2_bulk) is referenced by its owner,
 * by the waiting table while a message for it is expected, and by each
 * tx carrying it; its MR is invalidated (IB_WR_LOCAL_INV, through the
 * conn's send queue like any message) before the exchange completes to
 * its owner, and the pages are unmapped after that.  An exchange that is
 * abandoned (conn closed, deadline, error) never invalidates: its MR is
 * destroyed and replaced (o2_mr_put(..., false)).  A descriptor from the
 * peer is checked before anything is written: fragments 1..max_frags,
 * none empty, a total no larger than what was offered; otherwise the
 * connection is closed with -EPROTO.
 *
 * Locking: o2_bulk_lock (the waiting table and the RPC list) is a leaf.
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/ratelimit.h>
#include <linux/random.h>
#include "o2lnd.h"

static LIST_HEAD(o2_bulks);
static LIST_HEAD(o2_brws);
static DEFINE_SPINLOCK(o2_bulk_lock);
static atomic64_t o2_bulk_cookie = ATOMIC64_INIT(0);

/**
 * struct o2_brw_req - a selftest RPC waiting for completion
 * @list: in o2_brws
 * @cookie: matches the LNet ACK (write) or REPLY (read)
 * @nid: the peer
 * @done: completed once @finished
 * @finished: @status is final
 * @data_done: our part of the bulk exchange is over (sent and
 *	invalidated, or received, invalidated and checked)
 * @answered: the peer's answer arrived (LNet ACK of a write; the data of
 *	a read)
 * @status: 0 or an errno
 * @ni: the NI
 * @op: O2LND_BRW_*
 * @nob: payload bytes
 * @seed: pattern seed
 * @flags: O2LND_BRW_F_*
 * @rdma: the payload went by RDMA
 * @routed: the peer is behind a router: a read goes as an inline GET and
 *	a payload above the inline maximum comes back as a PUT of an LNet
 *	REPLY (as LNet does: no RDMA GET through a router)
 */
struct o2_brw_req {
	struct list_head list;
	u64 cookie;
	u64 nid;
	struct completion done;
	bool finished;
	bool data_done;
	bool answered;
	int status;
	struct o2_ni *ni;
	u32 op;
	u32 nob;
	u64 seed;
	u32 flags;
	bool rdma;
	bool routed;
};

/* ---- payload pattern ---- */

static u32 o2_pattern_word(u64 seed, u32 i)
{
	return (u32)seed ^ (u32)(seed >> 32) ^ (i * 0x9e3779b1U);
}

/*
 * Fill or check @len bytes at byte offset @off of a pattern: word by
 * word while aligned (whole pages are), byte by byte for the rest.
 */
static bool o2_pattern(void *buf, u32 off, u32 len, u64 seed, bool check)
{
	u8 *p = buf;
	u32 i = 0;

	if (!(off % 4) && IS_ALIGNED((unsigned long)buf, 4)) {
		__le32 *w = buf;

		for (; i + 4 <= len; i += 4) {
			__le32 want = cpu_to_le32(o2_pattern_word(seed,
								  (off + i) / 4));

			if (!check)
				w[i / 4] = want;
			else if (w[i / 4] != want)
				return false;
		}
	}
	for (; i < len; i++) {
		u32 pos = off + i;
		u8 want = o2_pattern_word(seed, pos / 4) >> (8 * (pos % 4));

		if (!check)
			p[i] = want;
		else if (p[i] != want)
			return false;
	}
	return true;
}

static bool o2_bulk_pattern(struct o2_bulk *b, bool check)
{
	u32 i, off = 0;

	for (i = 0; i < b->npages && off < b->nob; i++) {
		u32 n = min_t(u32, PAGE_SIZE, b->nob - off);
		void *va = kmap_local_page(b->pages[i]);
		bool ok = o2_pattern(va, off, n, b->seed, check);

		kunmap_local(va);
		if (!ok)
			return false;
		off += n;
	}
	return true;
}

/* ---- buffers ---- */

static void o2_bulk_unmap(struct o2_bulk *b)
{
	if (b->nents) {
		ib_dma_unmap_sg(b->dev->ibdev, b->sgt.sgl, b->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
		b->nents = 0;
	}
}

/*
 * Release the MR: back to the pool after a successful invalidation
 * (@clean), else destroyed and replaced.
 */
static void o2_bulk_drop_mr(struct o2_bulk *b, bool clean)
{
	if (b->mr) {
		o2_mr_put(b->mr, clean);
		b->mr = NULL;
	}
}

static void o2_bulk_release(struct kref *ref)
{
	struct o2_bulk *b = container_of(ref, struct o2_bulk, ref);
	u32 i;

	WARN_ON(b->waiting);
	if (b->rtr)	/* abandoned without finishing */
		o2_rtr_msg_done(b->rtr, -ECONNABORTED);
	o2_bulk_drop_mr(b, false);
	o2_bulk_unmap(b);
	if (b->dev)
		o2_dev_put(b->dev);
	if (b->conn)
		o2_conn_put(b->conn);
	sg_free_table(&b->sgt);
	for (i = 0; i < b->npages; i++)
		if (b->pages[i])
			__free_page(b->pages[i]);
	kfree(b->pages);
	kfree(b);
}

/**
 * o2_bulk_put() - drop a reference to a bulk buffer
 * @b: the buffer
 */
void o2_bulk_put(struct o2_bulk *b)
{
	kref_put(&b->ref, o2_bulk_release);
}

static struct o2_bulk *o2_bulk_alloc(struct o2_ni *ni, enum o2_bulk_kind kind,
				     u32 nob, u64 seed, u32 flags)
{
	struct o2_bulk *b = kzalloc(sizeof(*b), GFP_KERNEL);
	u32 i, npages = DIV_ROUND_UP(nob, PAGE_SIZE);

	if (!b)
		return NULL;
	kref_init(&b->ref);
	INIT_LIST_HEAD(&b->list);
	b->kind = kind;
	b->ni = ni;
	b->nob = nob;
	b->seed = seed;
	b->flags = flags;
	b->cookie = atomic64_inc_return(&o2_bulk_cookie);
	b->deadline = jiffies + o2_timeout * HZ;
	b->pages = kcalloc(max(npages, 1U), sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		goto fail;
	b->npages = npages;
	for (i = 0; i < npages; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		if (!b->pages[i])
			goto fail;
	}
	if (sg_alloc_table_from_pages(&b->sgt, b->pages, npages, 0, nob,
				      GFP_KERNEL))
		goto fail;
	return b;
fail:
	o2_bulk_put(b);
	return NULL;
}

/*
 * DMA-map @b on @dev, whose users reference it takes over, and take an
 * MR for it.  Return: 0, -ENOMEM (no MR free: the pool is exhausted),
 * or an errno.
 */
static int o2_bulk_map_on(struct o2_bulk *b, struct o2_dev *dev)
{
	int n;

	/* a device being removed: for the NI, the network is down */
	if (IS_ERR(dev))
		return PTR_ERR(dev) == -ENODEV ? -ENETDOWN : PTR_ERR(dev);
	b->dev = dev;
	b->nents = ib_dma_map_sg(dev->ibdev, b->sgt.sgl, b->sgt.orig_nents,
				 DMA_BIDIRECTIONAL);
	if (!b->nents)
		return -ENOMEM;
	b->mr = o2_mr_get(dev);
	if (!b->mr)
		return -ENOMEM;
	n = ib_map_mr_sg(b->mr->mr, b->sgt.sgl, b->nents, NULL, PAGE_SIZE);
	if (n != b->nents) {
		/* never registered: the MR can go back as it is */
		o2_bulk_drop_mr(b, true);
		return n < 0 ? n : -EINVAL;
	}
	/* a fresh key, unless a replayed REG_MR must find the same one */
	if (!dev->reg_replayed)
		ib_update_fast_reg_key(b->mr->mr, ib_inc_rkey(b->mr->mr->rkey));
	return 0;
}

static int o2_bulk_map(struct o2_bulk *b, struct o2_conn *conn)
{
	return o2_bulk_map_on(b, o2_dev_get(conn->dev->ibdev));
}

/* ---- the waiting table ---- */

/*
 * @b waits for the peer's message; with @conn, the exchange dies with
 * that conn (o2_bulk_conn_closed()), else at its deadline.
 */
static void o2_bulk_wait(struct o2_bulk *b, struct o2_conn *conn)
{
	if (conn) {
		kref_get(&conn->ref);
		b->conn = conn;
	}
	kref_get(&b->ref);
	spin_lock(&o2_bulk_lock);
	b->waiting = true;
	list_add_tail(&b->list, &o2_bulks);
	spin_unlock(&o2_bulk_lock);
}

/*
 * Take the bulk of @conn's peer waiting for @cookie off the table (a
 * peer can only complete its own exchanges).
 */
static struct o2_bulk *o2_bulk_take(struct o2_conn *conn, u64 cookie,
				    enum o2_bulk_kind kind)
{
	struct o2_bulk *b, *found = NULL;

	spin_lock(&o2_bulk_lock);
	list_for_each_entry(b, &o2_bulks, list) {
		if (b->cookie == cookie && b->kind == kind &&
		    b->ni == conn->ni && b->hop_nid == conn->peer->nid) {
			list_del_init(&b->list);
			b->waiting = false;
			found = b;
			break;
		}
	}
	spin_unlock(&o2_bulk_lock);
	return found;	/* with the table's reference */
}

static void o2_bulk_answer_put(struct o2_bulk *b, int status);

/* ---- RPCs ---- */

static void o2_brw_update(u64 cookie, int status, bool data, bool answer)
{
	struct o2_brw_req *r;

	spin_lock(&o2_bulk_lock);
	list_for_each_entry(r, &o2_brws, list) {
		if (r->cookie != cookie || r->finished)
			continue;
		if (status && !r->status)
			r->status = status;
		r->data_done |= data;
		r->answered |= answer;
		if (r->status || (r->data_done && r->answered)) {
			r->finished = true;
			complete(&r->done);
		}
		break;
	}
	spin_unlock(&o2_bulk_lock);
}

/* The exchange of @b ended with @status; the MR is dealt with. */
static void o2_bulk_finish(struct o2_bulk *b, int status)
{
	struct o2_ni *ni = b->ni;

	if (status)
		atomic64_inc(&ni->stats.bulk_errors);
	else if (b->kind == O2_BULK_PUT_SRC || b->kind == O2_BULK_GET_SRC)
		atomic64_add(b->nob, &ni->stats.rdma_bytes);
	/*
	 * A failed exchange stays mapped until its release: a work request
	 * of a closing conn, or the peer through a still valid MR, may still
	 * reach its pages.
	 */
	if (!status)
		o2_bulk_unmap(b);
	if (b->rtr) {
		struct o2_rtr_msg *m = b->rtr;

		/* a PUT this router forwards: in, then out */
		b->rtr = NULL;
		if (b->kind == O2_BULK_PUT_SINK && !status) {
			kref_get(&b->ref);
			o2_rtr_put_arrived(m, b);
		} else {
			o2_rtr_msg_done(m, status);
		}
		return;
	}
	switch (b->kind) {
	case O2_BULK_PUT_SRC:
		/* sent: the RPC still waits for the peer's LNet ACK */
		o2_brw_update(b->peer_cookie, status, true, false);
		break;
	case O2_BULK_GET_SINK:
		if (!status && (b->flags & O2LND_BRW_F_CHECK) &&
		    !o2_bulk_pattern(b, true))
			status = -EBADMSG;
		o2_brw_update(b->peer_cookie, status, true, true);
		break;
	case O2_BULK_PUT_SINK:
		if (!b->reply) {
			o2_bulk_answer_put(b, status);
			break;
		}
		/* the REPLY of a routed read: the data of our RPC */
		if (!status && (b->flags & O2LND_BRW_F_CHECK) &&
		    !o2_bulk_pattern(b, true))
			status = -EBADMSG;
		o2_brw_update(b->peer_cookie, status, true, true);
		break;
	case O2_BULK_GET_SRC:
		break;
	}
}

/* ---- invalidation ---- */

/* Invalidation of @b's MR completed (from the conn's send queue). */
static void o2_bulk_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct o2_tx *tx = container_of(wc->wr_cqe, struct o2_tx, cqe);
	struct o2_conn *conn = tx->conn;
	struct o2_bulk *b = tx->bulk;
	struct o2_fault_hit hit;
	bool clean = wc->status == IB_WC_SUCCESS;

	spin_lock(&conn->lock);
	list_del_init(&tx->list);	/* off conn->posted */
	o2_credits_complete(&conn->cr, false, tx->wrs);
	conn->send_progress = jiffies;
	spin_unlock(&conn->lock);
	if (clean && o2_fault_fire(O2LND_FAULT_INV_FAIL, 0, conn->ni->nid,
				   conn->peer->nid, &hit))
		clean = false;
	tx->bulk = NULL;
	tx->done = NULL;
	o2_bulk_drop_mr(b, clean);
	o2_bulk_finish(b, b->status);
	o2_bulk_put(b);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		o2_conn_close(conn, -EIO);
	o2_tx_put(tx);
	o2_conn_check_sends(conn);
}

static void o2_bulk_tx_done(struct o2_tx *tx);

/*
 * Invalidate @b's MR on @conn, then finish its exchange.  Takes over the
 * caller's reference.  When the conn cannot take it, the MR is
 * recovered instead.
 */
static void o2_bulk_invalidate(struct o2_bulk *b, struct o2_conn *conn)
{
	struct o2_tx *tx = o2_tx_alloc(conn->ni, O2_TX_INV);

	if (tx) {
		tx->bulk = b;
		tx->done = o2_bulk_tx_done;
		tx->cqe.done = o2_bulk_inv_done;	/* its LOCAL_INV's */
		tx->deadline = jiffies + o2_timeout * HZ;
		tx->has_deadline = true;
		if (!o2_conn_queue_tx(conn, tx)) {
			o2_conn_check_sends(conn);
			return;
		}
		tx->bulk = NULL;
		tx->done = NULL;
		tx->status = -ECONNABORTED;
		o2_tx_put(tx);
	}
	o2_bulk_drop_mr(b, false);
	o2_bulk_finish(b, b->status ? b->status : -ECONNABORTED);
	o2_bulk_put(b);
}

/*
 * A tx carrying a bulk buffer is done (tx->done, from its release: after
 * its Send completion, or never posted).
 *
 * A source whose data went (PUT_DONE, GET_DONE) is invalidated next; a
 * sink advertised by the tx (PUT_ACK, GET_REQ) now waits for the peer's
 * completion message.  On failure the exchange fails and the MR, which
 * may be registered, is recovered.
 */
static void o2_bulk_tx_done(struct o2_tx *tx)
{
	struct o2_bulk *b = tx->bulk;
	bool ok = !tx->status;

	tx->bulk = NULL;
	kfree(tx->rd);
	tx->rd = NULL;
	if (ok && (tx->type == O2_MSG_PUT_DONE ||
		   tx->type == O2_MSG_GET_DONE)) {
		o2_bulk_invalidate(b, tx->conn);
		return;
	}
	if (!ok) {
		bool removed = false, had_mr = b->mr;

		/* a request whose message failed waits no more */
		spin_lock(&o2_bulk_lock);
		if (b->waiting) {
			list_del_init(&b->list);
			b->waiting = false;
			removed = true;
		}
		spin_unlock(&o2_bulk_lock);
		o2_bulk_drop_mr(b, false);
		if (removed || had_mr)
			o2_bulk_finish(b, tx->status ? tx->status : -EIO);
		if (removed)
			o2_bulk_put(b);	/* the table's */
	}
	o2_bulk_put(b);
}

/* ---- sending ---- */

/* A tx for @b (its bulk reference taken), with @body_len bytes of body. */
static struct o2_tx *o2_bulk_tx(struct o2_ni *ni, u8 type, struct o2_bulk *b,
				u32 body_len)
{
	struct o2_tx *tx = o2_tx_alloc(ni, type);

	if (!tx)
		return NULL;
	tx->nob = sizeof(struct o2_msg_hdr) + body_len;
	if (b) {
		kref_get(&b->ref);
		tx->bulk = b;
		tx->done = o2_bulk_tx_done;
	}
	return tx;
}

/*
 * Send @tx, a request for exchange @b of ours (PUT_REQ, GET_REQ), to
 * @nid: @b waits for the peer's answer until its deadline.  Takes over
 * the caller's reference to @b.  Return: as o2_ni_launch().
 */
static int o2_bulk_launch(struct o2_ni *ni, u64 nid, struct o2_tx *tx,
			  struct o2_bulk *b)
{
	tx->deadline = b->deadline;
	tx->has_deadline = true;
	o2_bulk_wait(b, NULL);
	o2_bulk_put(b);		/* the table and the tx hold it */
	return o2_ni_launch(ni, nid, tx);
}

static void o2_bulk_desc(struct o2_bulk *b, struct o2_rdma_desc *rd)
{
	rd->key = b->mr->mr->rkey;
	rd->nfrags = 1;
	rd->frags[0].nob = b->nob;
	rd->frags[0].addr = b->mr->mr->iova;
}

/* Queue a credit-less reply on @conn; failures complete the tx. */
static void o2_bulk_reply(struct o2_conn *conn, struct o2_tx *tx)
{
	tx->nid = conn->peer->nid;
	tx->deadline = jiffies + o2_timeout * HZ;
	tx->has_deadline = true;
	if (o2_conn_queue_tx(conn, tx)) {
		tx->status = -ECONNABORTED;
		o2_tx_put(tx);
		return;
	}
	o2_conn_check_sends(conn);
}

static void o2_bulk_send_completion(struct o2_conn *conn, u8 type, u64 cookie,
				    int status)
{
	struct o2_completion_msg *m;
	struct o2_tx *tx = o2_bulk_tx(conn->ni, type, NULL, sizeof(*m));

	if (!tx)
		return;
	m = tx->msg + sizeof(struct o2_msg_hdr);
	m->cookie = cookie;
	m->status = status;
	o2_bulk_reply(conn, tx);
}

/* ---- LNet headers ---- */

static void o2_lnet_hdr_init(struct o2_lnet_hdr *h, struct o2_ni *ni, u64 dst,
			     u32 type, u32 payload)
{
	memset(h, 0, sizeof(*h));
	h->dest_nid = cpu_to_le64(dst);
	h->src_nid = cpu_to_le64(ni->nid);
	h->dest_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	h->src_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	h->type = cpu_to_le32(type);
	h->payload_length = cpu_to_le32(payload);
}

/*
 * The LNet ACK of a PUT to the selftest portal: match_bits carry the
 * result (0, or a negative errno such as -EBADMSG), mlength the bytes.
 */
static void o2_brw_send_ack(struct o2_ni *ni, u64 to,
			    const struct o2_lnet_wmd *wmd, int status, u32 nob)
{
	struct o2_lnet_hdr *h;
	struct o2_tx *tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);

	if (!tx) {
		atomic64_inc(&ni->stats.drop_count);
		return;
	}
	h = tx->msg + sizeof(struct o2_msg_hdr);
	o2_lnet_hdr_init(h, ni, to, O2_LNET_MSG_ACK, 0);
	h->msg.ack.dst_wmd = *wmd;
	h->msg.ack.match_bits = cpu_to_le64((u64)(s64)status);
	h->msg.ack.mlength = cpu_to_le32(nob);
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h);
	o2_ni_launch(ni, to, tx);
}

static void o2_bulk_answer_put(struct o2_bulk *b, int status)
{
	if (!status && (b->flags & O2LND_BRW_F_CHECK) &&
	    !o2_bulk_pattern(b, true))
		status = -EBADMSG;
	if (status == -EBADMSG)
		atomic64_inc(&b->ni->stats.bulk_errors);
	o2_brw_send_ack(b->ni, b->peer_nid, &b->ack_wmd, status, b->nob);
}

/* ---- receiving: called by rx.c for the bulk message types ---- */

static void o2_bulk_refuse(struct o2_conn *conn, const char *why)
{
	char nid[O2_NIDSTR_SIZE];

	atomic64_inc(&conn->ni->stats.bulk_errors);
	pr_warn_ratelimited("o2lnd: %s: bulk from %s refused: %s, closing connection\n",
			    conn->ni->net,
			    o2_nid_format(conn->peer->nid, nid, sizeof(nid)),
			    why);
}

/*
 * Offer a sink for the PUT of @m (PUT_ACK with its descriptor): for our
 * selftest portal, or (@rtr) a large router buffer of a PUT forwarded.
 * Return: 0, or an errno to NAK with.
 */
static int o2_bulk_sink_start(struct o2_conn *conn,
			      const struct o2_putreq_msg *m,
			      struct o2_rtr_msg *rtr, const struct o2_brw_req *r)
{
	const struct o2_lnet_hdr *h = &m->hdr;
	u32 nob = le32_to_cpu(h->payload_length);
	struct o2_putack_msg *ack;
	struct o2_bulk *b;
	struct o2_tx *tx;
	int rc;

	if (r)
		b = o2_bulk_alloc(conn->ni, O2_BULK_PUT_SINK, nob, r->seed,
				  r->flags);
	else
		b = o2_bulk_alloc(conn->ni, O2_BULK_PUT_SINK, nob,
				  rtr ? 0 : le64_to_cpu(h->msg.put.hdr_data),
				  rtr ? 0 :
				  (u32)le64_to_cpu(h->msg.put.match_bits));
	rc = b ? o2_bulk_map(b, conn) : -ENOMEM;
	tx = rc ? NULL : o2_bulk_tx(conn->ni, O2_MSG_PUT_ACK, b,
				    sizeof(*ack) + sizeof(ack->rd.frags[0]));
	if (!tx) {
		if (b)
			o2_bulk_put(b);
		return rc ? rc : -ENOMEM;
	}
	b->peer_cookie = m->cookie;
	b->peer_nid = le64_to_cpu(h->src_nid);
	b->hop_nid = conn->peer->nid;
	b->ack_wmd = h->msg.put.ack_wmd;
	b->rtr = rtr;
	if (r) {
		b->reply = true;
		b->peer_cookie = r->cookie;
	}
	ack = tx->msg + sizeof(struct o2_msg_hdr);
	ack->src_cookie = m->cookie;
	ack->dst_cookie = b->cookie;
	o2_bulk_desc(b, &ack->rd);
	tx->reg = true;
	o2_bulk_wait(b, conn);
	o2_bulk_put(b);		/* the table and the tx hold it */
	o2_bulk_reply(conn, tx);
	return 0;
}

/*
 * A PUT_REQ carrying an LNet REPLY for us: the data of a routed selftest
 * read.  Return: 0 or an errno to NAK with.
 */
static int o2_brw_reply_put(struct o2_conn *conn, const struct o2_putreq_msg *m)
{
	const struct o2_lnet_hdr *h = &m->hdr;
	u64 cookie = le64_to_cpu(h->msg.reply.dst_wmd.object_cookie);
	u64 from = le64_to_cpu(h->src_nid);
	struct o2_brw_req *r, copy;
	bool found = false;

	spin_lock(&o2_bulk_lock);
	list_for_each_entry(r, &o2_brws, list) {
		if (r->cookie == cookie && r->nid == from && r->routed &&
		    r->op == O2LND_BRW_READ && !r->finished &&
		    r->nob == le32_to_cpu(h->payload_length)) {
			copy = *r;
			found = true;
			break;
		}
	}
	spin_unlock(&o2_bulk_lock);
	if (!found)
		return -ENODATA;
	return o2_bulk_sink_start(conn, m, NULL, &copy);
}

/*
 * A PUT_REQ: the peer has data for our selftest sink, or for another
 * node through this router.
 */
static int o2_bulk_rx_put_req(struct o2_conn *conn, struct o2_putreq_msg *m,
			      bool *credit_now)
{
	struct o2_lnet_hdr *h = &m->hdr;
	u32 type = le32_to_cpu(h->type);
	u64 dest = le64_to_cpu(h->dest_nid);
	u32 nob = le32_to_cpu(h->payload_length);
	int rc;

	if ((type == O2_LNET_MSG_PUT || type == O2_LNET_MSG_REPLY) &&
	    dest != conn->ni->nid && !o2_ni_by_nid(dest))
		rc = o2_rtr_forward_put(conn, m);
	else if (type == O2_LNET_MSG_REPLY && dest == conn->ni->nid &&
		 nob <= O2LND_BRW_MAX_SIZE)
		rc = o2_brw_reply_put(conn, m);
	else if (type != O2_LNET_MSG_PUT || dest != conn->ni->nid ||
		 le32_to_cpu(h->msg.put.ptl_index) != O2_BRW_PORTAL ||
		 nob > O2LND_BRW_MAX_SIZE)
		rc = -ENODATA;	/* nobody takes it */
	else
		rc = o2_bulk_sink_start(conn, m, NULL, NULL);
	/* a NAK returns the credit at once; else PUT_DONE or PUT_NAK will */
	if (rc)
		o2_bulk_send_completion(conn, O2_MSG_PUT_NAK, m->cookie, rc);
	*credit_now = rc != 0;
	return 0;
}

/**
 * o2_bulk_rtr_sink() - take the data of a PUT this router forwards
 * @conn: the conn the PUT_REQ came on
 * @m: the request
 * @rtr: the router's message, which holds a large buffer credit; it is
 *	completed (o2_rtr_put_arrived() or o2_rtr_msg_done()) once this
 *	returns 0
 *
 * Return: 0, or an errno (the caller NAKs).
 */
int o2_bulk_rtr_sink(struct o2_conn *conn, const struct o2_putreq_msg *m,
		     struct o2_rtr_msg *rtr)
{
	return o2_bulk_sink_start(conn, m, rtr, NULL);
}

/**
 * o2_bulk_rtr_nak() - refuse a PUT this router was to forward
 * @conn: the conn its PUT_REQ came on
 * @m: the request
 * @status: why (negative errno)
 *
 * Sends PUT_NAK and gives back the credit the PUT_REQ kept.
 */
void o2_bulk_rtr_nak(struct o2_conn *conn, const struct o2_putreq_msg *m,
		     int status)
{
	o2_bulk_send_completion(conn, O2_MSG_PUT_NAK, m->cookie, status);
	spin_lock(&conn->lock);
	o2_credits_repost(&conn->cr, O2_RX_CREDIT_PEER);
	spin_unlock(&conn->lock);
	o2_conn_check_sends(conn);
}

/**
 * o2_bulk_rtr_send() - send on the data of a PUT this router forwards
 * @ni: the NI towards the next hop
 * @hop: the next hop
 * @hdr: the PUT's LNet header (forwarded unchanged)
 * @b: the buffer holding the data (the caller's reference passes)
 * @rtr: the router's message, completed when the exchange ends
 */
void o2_bulk_rtr_send(struct o2_ni *ni, u64 hop, const struct o2_lnet_hdr *hdr,
		      struct o2_bulk *b, struct o2_rtr_msg *rtr)
{
	struct o2_putreq_msg *m;
	struct o2_tx *tx;

	/* the sink side is over: its device and conn are let go */
	if (b->dev) {
		o2_dev_put(b->dev);
		b->dev = NULL;
	}
	if (b->conn) {
		o2_conn_put(b->conn);
		b->conn = NULL;
	}
	b->kind = O2_BULK_PUT_SRC;
	b->ni = ni;
	b->hop_nid = hop;
	b->peer_nid = le64_to_cpu(hdr->dest_nid);
	b->peer_cookie = 0;
	b->cookie = atomic64_inc_return(&o2_bulk_cookie);
	b->status = 0;
	b->deadline = jiffies + o2_timeout * HZ;
	tx = o2_bulk_tx(ni, O2_MSG_PUT_REQ, b, sizeof(*m));
	if (!tx) {
		o2_bulk_put(b);
		o2_rtr_msg_done(rtr, -ENOBUFS);
		return;
	}
	b->rtr = rtr;
	m = tx->msg + sizeof(struct o2_msg_hdr);
	m->hdr = *hdr;
	m->cookie = b->cookie;
	o2_bulk_launch(ni, hop, tx, b);
}

/* A GET_REQ: RDMA-write our selftest source into the peer's sink. */
static int o2_bulk_rx_get_req(struct o2_conn *conn, struct o2_get_msg *m,
			      u32 rd_nob)
{
	struct o2_lnet_hdr *h = &m->hdr;
	struct o2_completion_msg *done;
	u64 mb = le64_to_cpu(h->msg.get.match_bits);
	struct o2_bulk *b;
	struct o2_tx *tx;
	size_t rdlen;
	int rc;

	if (le32_to_cpu(h->type) != O2_LNET_MSG_GET ||
	    le64_to_cpu(h->dest_nid) != conn->ni->nid ||
	    le32_to_cpu(h->msg.get.ptl_index) != O2_BRW_PORTAL) {
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie,
					-ENODATA);
		return 0;
	}
	if (rd_nob > le32_to_cpu(h->msg.get.sink_length)) {
		o2_bulk_refuse(conn, "descriptor beyond the GET's length");
		return -EPROTO;
	}
	b = o2_bulk_alloc(conn->ni, O2_BULK_GET_SRC, rd_nob, mb >> 1,
			  (u32)mb & O2LND_BRW_F_CHECK);
	rc = b ? o2_bulk_map(b, conn) : -ENOMEM;
	tx = rc ? NULL : o2_bulk_tx(conn->ni, O2_MSG_GET_DONE, b,
				    sizeof(*done));
	rdlen = struct_size(&m->rd, frags, m->rd.nfrags);
	if (tx) {
		tx->rd = kmemdup(&m->rd, rdlen, GFP_KERNEL);
		if (!tx->rd) {
			tx->status = -ENOMEM;
			o2_tx_put(tx);
			tx = NULL;
		}
	}
	if (!tx) {
		if (b)
			o2_bulk_put(b);
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie,
					rc ? rc : -ENOMEM);
		return 0;
	}
	o2_bulk_pattern(b, false);
	b->peer_cookie = m->cookie;
	kref_get(&conn->ref);
	b->conn = conn;
	done = tx->msg + sizeof(struct o2_msg_hdr);
	done->cookie = m->cookie;
	done->status = rd_nob;
	tx->reg = true;
	o2_bulk_put(b);		/* the tx holds it */
	o2_bulk_reply(conn, tx);
	return 0;
}

/* A PUT_ACK: RDMA-write our PUT's data into the peer's sink. */
static int o2_bulk_rx_put_ack(struct o2_conn *conn, struct o2_putack_msg *m,
			      u32 rd_nob)
{
	struct o2_completion_msg *done;
	struct o2_bulk *b;
	struct o2_tx *tx;
	int rc;

	b = o2_bulk_take(conn, m->src_cookie, O2_BULK_PUT_SRC);
	if (!b) {
		o2_bulk_refuse(conn, "PUT_ACK matches no PUT");
		return -EPROTO;
	}
	if (rd_nob > b->nob) {
		o2_bulk_refuse(conn, "descriptor beyond the PUT's length");
		b->status = -EPROTO;
		o2_bulk_finish(b, -EPROTO);
		o2_bulk_put(b);
		return -EPROTO;
	}
	rc = o2_bulk_map(b, conn);
	tx = rc ? NULL : o2_bulk_tx(conn->ni, O2_MSG_PUT_DONE, b,
				    sizeof(*done));
	if (tx) {
		tx->rd = kmemdup(&m->rd, struct_size(&m->rd, frags,
						     m->rd.nfrags),
				 GFP_KERNEL);
		if (!tx->rd) {
			tx->status = -ENOMEM;
			o2_tx_put(tx);
			tx = NULL;
			rc = -ENOMEM;
		}
	}
	if (!tx) {
		o2_bulk_drop_mr(b, true);	/* never registered */
		o2_bulk_finish(b, rc ? rc : -ENOMEM);
		/* the peer's sink waits in vain: tell it */
		o2_bulk_send_completion(conn, O2_MSG_PUT_DONE, m->dst_cookie,
					rc ? rc : -ENOMEM);
		o2_bulk_put(b);
		return 0;
	}
	done = tx->msg + sizeof(struct o2_msg_hdr);
	done->cookie = m->dst_cookie;
	done->status = 0;
	tx->reg = true;
	o2_bulk_put(b);		/* the table's: the tx holds it now */
	o2_bulk_reply(conn, tx);
	return 0;
}

/* PUT_NAK, PUT_DONE, GET_DONE: the end of an exchange of ours. */
static int o2_bulk_rx_completion(struct o2_conn *conn, u8 type,
				 struct o2_completion_msg *m)
{
	enum o2_bulk_kind kind = type == O2_MSG_PUT_NAK ? O2_BULK_PUT_SRC :
				 type == O2_MSG_PUT_DONE ? O2_BULK_PUT_SINK :
							   O2_BULK_GET_SINK;
	struct o2_bulk *b = o2_bulk_take(conn, m->cookie, kind);

	if (!b) {
		o2_bulk_refuse(conn, "completion matches no transfer");
		return -EPROTO;
	}
	if (type == O2_MSG_PUT_NAK) {
		o2_bulk_finish(b, m->status < 0 ? o2_remote_status(m->status) :
						  -EIO);
		o2_bulk_put(b);
		return 0;
	}
	if (m->status < 0)
		b->status = o2_remote_status(m->status);
	else if (type == O2_MSG_GET_DONE && m->status != b->nob)
		b->status = -EPROTO;
	/* the peer is done with our memory: invalidate, then finish */
	o2_bulk_invalidate(b, conn);
	return 0;
}

/**
 * o2_bulk_rx() - a bulk message arrived
 * @conn: the conn
 * @type: O2_MSG_PUT_REQ .. O2_MSG_GET_DONE
 * @body: its body (after the header)
 * @len: body bytes
 * @flip: the sender's byte order is not ours
 * @credit_now: out: for a PUT_REQ, whether its credit returns at once
 *	(a NAK) or with the PUT_DONE
 *
 * Receive completion context.
 *
 * Return: 0, or -EPROTO for a malformed message or descriptor (the caller
 * closes the connection).
 */
int o2_bulk_rx(struct o2_conn *conn, u8 type, void *body, u32 len,
	       bool flip, bool *credit_now)
{
	u32 rd_nob;
	int rc;

	rc = o2_bulk_body_unpack(type, body, len, flip, conn->cp.max_frags,
				 O2LND_BRW_MAX_SIZE, &rd_nob);
	if (rc) {
		o2_bulk_refuse(conn, "malformed message or descriptor");
		return rc;
	}
	*credit_now = true;
	switch (type) {
	case O2_MSG_PUT_REQ:
		return o2_bulk_rx_put_req(conn, body, credit_now);
	case O2_MSG_GET_REQ:
		return o2_bulk_rx_get_req(conn, body, rd_nob);
	case O2_MSG_PUT_ACK:
		return o2_bulk_rx_put_ack(conn, body, rd_nob);
	default:
		return o2_bulk_rx_completion(conn, type, body);
	}
}

/*
 * Fail the waiting exchanges of @conn (if not NULL), or those past their
 * deadline at @now, or all of them (@all), with @error.  Their MRs may
 * still be valid for the peer: they are recovered, once no work request
 * can touch them any more.
 */
static void o2_bulk_fail_waiting(struct o2_conn *conn, unsigned long now,
				 bool all, int error)
{
	struct o2_bulk *b, *tmp;
	LIST_HEAD(dead);

	spin_lock(&o2_bulk_lock);
	list_for_each_entry_safe(b, tmp, &o2_bulks, list) {
		if (conn ? b->conn == conn :
			   all || time_after(now, b->deadline)) {
			list_move_tail(&b->list, &dead);
			b->waiting = false;
		}
	}
	spin_unlock(&o2_bulk_lock);
	list_for_each_entry_safe(b, tmp, &dead, list) {
		list_del_init(&b->list);
		/*
		 * The MR stays until the last reference goes (o2_bulk_release()
		 * recovers it): a tx still posted on a closing conn may have a
		 * LOCAL_INV, REG_MR or RDMA WRITE of it in the send queue, which
		 * the device executes or flushes later.
		 */
		o2_bulk_finish(b, error);
		o2_bulk_put(b);
	}
}

/**
 * o2_bulk_conn_closed() - fail the exchanges waiting on a closed conn
 * @conn: the conn
 */
void o2_bulk_conn_closed(struct o2_conn *conn)
{
	o2_bulk_fail_waiting(conn, 0, false,
			     conn->error ? conn->error : -ECONNABORTED);
}

/**
 * o2_bulk_expire() - fail exchanges past their deadline
 * @now: jiffies
 * @all: fail every waiting exchange (unload)
 *
 * connd, every scan; and at unload, once every conn is closed.
 */
void o2_bulk_expire(unsigned long now, bool all)
{
	o2_bulk_fail_waiting(NULL, now, all, -ETIMEDOUT);
}

/* ---- the selftest service over IMMEDIATE messages, and answers ---- */

/**
 * o2_bulk_lnet_ack() - an LNet ACK arrived: a selftest write is answered
 * @cookie: its dst_wmd object cookie
 * @from: the sender
 * @match_bits: the peer's result (0 or a negative errno)
 * @mlength: bytes the peer took
 *
 * Return: false if no RPC waits for it.
 */
bool o2_bulk_lnet_ack(u64 cookie, u64 from, u64 match_bits, u32 mlength)
{
	struct o2_brw_req *r;
	bool found = false;
	int status = o2_remote_status((s64)match_bits);

	spin_lock(&o2_bulk_lock);
	list_for_each_entry(r, &o2_brws, list)
		if (r->cookie == cookie && r->nid == from &&
		    r->op == O2LND_BRW_WRITE)
			found = true;
	spin_unlock(&o2_bulk_lock);
	if (!found)
		return false;
	o2_brw_update(cookie, status, false, true);
	return true;
}

/*
 * Answer an inline GET of the selftest portal asking for more than fits
 * inline (it came through a router) with an LNet REPLY sent as a PUT:
 * PUT_REQ to the next hop, which RDMA-reads nothing: it offers a sink
 * (PUT_ACK) that we RDMA-write.
 */
static void o2_brw_reply_by_put(struct o2_ni *ni, const struct o2_lnet_hdr *get,
				u64 to, u32 nob, u64 mb)
{
	struct o2_putreq_msg *m;
	struct o2_bulk *b;
	struct o2_tx *tx;

	b = o2_bulk_alloc(ni, O2_BULK_PUT_SRC, nob, mb >> 1,
			  (u32)mb & O2LND_BRW_F_CHECK);
	if (!b) {
		atomic64_inc(&ni->stats.bulk_errors);
		return;
	}
	o2_bulk_pattern(b, false);
	b->peer_nid = to;
	b->hop_nid = o2_route_hop(ni, to, false);
	tx = o2_bulk_tx(ni, O2_MSG_PUT_REQ, b, sizeof(*m));
	if (!tx) {
		atomic64_inc(&ni->stats.bulk_errors);
		o2_bulk_put(b);
		return;
	}
	m = tx->msg + sizeof(struct o2_msg_hdr);
	o2_lnet_hdr_init(&m->hdr, ni, to, O2_LNET_MSG_REPLY, nob);
	m->hdr.msg.reply.dst_wmd = get->msg.get.return_wmd;
	m->cookie = b->cookie;
	o2_bulk_launch(ni, to, tx, b);
}

/**
 * o2_brw_rx_immediate() - an IMMEDIATE LNet message for the selftest
 *	portal, or a REPLY for a selftest read
 * @conn: the conn
 * @hdr: its LNet header
 * @payload: its payload (payload_length bytes, checked by the caller)
 *
 * Return: true if it was ours.
 */
bool o2_brw_rx_immediate(struct o2_conn *conn, const struct o2_lnet_hdr *hdr,
			 const void *payload)
{
	u32 type = le32_to_cpu(hdr->type);
	u32 plen = le32_to_cpu(hdr->payload_length);
	struct o2_ni *ni = conn->ni;
	u64 from = le64_to_cpu(hdr->src_nid);

	if (type == O2_LNET_MSG_PUT &&
	    le32_to_cpu(hdr->msg.put.ptl_index) == O2_BRW_PORTAL) {
		u64 mb = le64_to_cpu(hdr->msg.put.match_bits);
		int status = 0;

		if ((mb & O2LND_BRW_F_CHECK) &&
		    !o2_pattern((void *)payload, 0, plen,
				le64_to_cpu(hdr->msg.put.hdr_data), true)) {
			status = -EBADMSG;
			atomic64_inc(&ni->stats.bulk_errors);
		}
		o2_brw_send_ack(ni, from, &hdr->msg.put.ack_wmd, status, plen);
		return true;
	}
	if (type == O2_LNET_MSG_GET &&
	    le32_to_cpu(hdr->msg.get.ptl_index) == O2_BRW_PORTAL) {
		u32 want = le32_to_cpu(hdr->msg.get.sink_length);
		u64 mb = le64_to_cpu(hdr->msg.get.match_bits);
		struct o2_lnet_hdr *rep;
		struct o2_tx *tx;

		if (want > O2LND_BRW_MAX_SIZE) {
			atomic64_inc(&ni->stats.bulk_errors);
			return true;
		}
		if (want > O2_MAX_IMMEDIATE) {
			/* a routed read: the REPLY goes by PUT */
			o2_brw_reply_by_put(ni, hdr, from, want, mb);
			return true;
		}
		tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
		if (!tx)
			return true;
		rep = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(rep, ni, from, O2_LNET_MSG_REPLY, want);
		rep->msg.reply.dst_wmd = hdr->msg.get.return_wmd;
		o2_pattern(rep + 1, 0, want, mb >> 1, false);
		tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*rep) + want;
		o2_ni_launch(ni, from, tx);
		return true;
	}
	if (type == O2_LNET_MSG_REPLY) {
		u64 cookie = le64_to_cpu(hdr->msg.reply.dst_wmd.object_cookie);
		struct o2_brw_req *r;
		int status = -ENOENT;

		spin_lock(&o2_bulk_lock);
		list_for_each_entry(r, &o2_brws, list) {
			if (r->cookie != cookie || r->nid != from ||
			    r->op != O2LND_BRW_READ || r->rdma)
				continue;
			status = plen != r->nob ? -EPROTO : 0;
			if (!status && (r->flags & O2LND_BRW_F_CHECK) &&
			    !o2_pattern((void *)payload, 0, plen, r->seed,
					true))
				status = -EBADMSG;
			break;
		}
		spin_unlock(&o2_bulk_lock);
		if (status == -ENOENT)
			return false;
		o2_brw_update(cookie, status, false, true);
		return true;
	}
	return false;
}

/* ---- the selftest client ---- */

/* The request of an inline selftest RPC is done (tx->done). */
static void o2_brw_tx_done(struct o2_tx *tx)
{
	o2_brw_update(tx->cookie, tx->status, true, false);
}

static int o2_brw_start(struct o2_ni *ni, struct o2_brw_req *r)
{
	struct o2_lnet_hdr *h;
	struct o2_bulk *b = NULL;
	struct o2_tx *tx;
	u64 mb = (r->seed << 1) | (r->flags & O2LND_BRW_F_CHECK);
	int rc;

	if (r->op == O2LND_BRW_WRITE && !r->rdma) {
		tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
		if (!tx)
			return -ENOBUFS;
		h = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(h, ni, r->nid, O2_LNET_MSG_PUT, r->nob);
		h->msg.put.ack_wmd.object_cookie = cpu_to_le64(r->cookie);
		h->msg.put.match_bits = cpu_to_le64(r->flags);
		h->msg.put.hdr_data = cpu_to_le64(r->seed);
		h->msg.put.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		o2_pattern(h + 1, 0, r->nob, r->seed, false);
		tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h) + r->nob;
		tx->cookie = r->cookie;
		tx->done = o2_brw_tx_done;
		return o2_ni_launch(ni, r->nid, tx);
	}
	if (r->op == O2LND_BRW_READ && (!r->rdma || r->routed)) {
		tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
		if (!tx)
			return -ENOBUFS;
		h = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(h, ni, r->nid, O2_LNET_MSG_GET, 0);
		h->msg.get.return_wmd.object_cookie = cpu_to_le64(r->cookie);
		h->msg.get.match_bits = cpu_to_le64(mb);
		h->msg.get.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		h->msg.get.sink_length = cpu_to_le32(r->nob);
		tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h);
		tx->cookie = r->cookie;
		tx->done = o2_brw_tx_done;
		return o2_ni_launch(ni, r->nid, tx);
	}

	b = o2_bulk_alloc(ni, r->op == O2LND_BRW_WRITE ? O2_BULK_PUT_SRC :
							 O2_BULK_GET_SINK,
			  r->nob, r->seed, r->flags);
	if (!b)
		return -ENOMEM;
	b->peer_nid = r->nid;
	b->hop_nid = o2_route_hop(ni, r->nid, false);
	b->peer_cookie = r->cookie;
	if (r->op == O2LND_BRW_WRITE) {
		struct o2_putreq_msg *m;

		o2_bulk_pattern(b, false);
		tx = o2_bulk_tx(ni, O2_MSG_PUT_REQ, b, sizeof(*m));
		if (!tx) {
			o2_bulk_put(b);
			return -ENOBUFS;
		}
		m = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(&m->hdr, ni, r->nid, O2_LNET_MSG_PUT, r->nob);
		m->hdr.msg.put.ack_wmd.object_cookie = cpu_to_le64(r->cookie);
		m->hdr.msg.put.match_bits = cpu_to_le64(r->flags);
		m->hdr.msg.put.hdr_data = cpu_to_le64(r->seed);
		m->hdr.msg.put.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		m->cookie = b->cookie;
	} else {
		struct o2_get_msg *m;

		rc = o2_bulk_map_on(b, o2_ni_get_dev(ni));
		tx = rc ? NULL : o2_bulk_tx(ni, O2_MSG_GET_REQ, b,
					    sizeof(*m) +
					    sizeof(m->rd.frags[0]));
		if (!tx) {
			o2_bulk_drop_mr(b, true);	/* never registered */
			o2_bulk_put(b);
			return rc ? rc : -ENOBUFS;
		}
		m = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(&m->hdr, ni, r->nid, O2_LNET_MSG_GET, 0);
		m->hdr.msg.get.return_wmd.object_cookie =
			cpu_to_le64(r->cookie);
		m->hdr.msg.get.match_bits = cpu_to_le64(mb);
		m->hdr.msg.get.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		m->hdr.msg.get.sink_length = cpu_to_le32(r->nob);
		m->cookie = b->cookie;
		o2_bulk_desc(b, &m->rd);
		tx->reg = true;
	}
	return o2_bulk_launch(ni, r->nid, tx, b);
}

/**
 * o2_brw() - one selftest bulk RPC (O2LND_IOC_BRW)
 * @nid: the peer (o2ib, validated by the caller)
 * @src_nid: local NID or O2LND_NID_ANY
 * @op: O2LND_BRW_WRITE or O2LND_BRW_READ
 * @size: payload bytes (validated)
 * @timeout_ms: how long to wait (validated)
 * @flags: O2LND_BRW_F_*
 * @seed: pattern seed
 * @out: zeroed output
 *
 * Return: 0 or an errno (see struct o2lnd_ioc_brw).
 */
int o2_brw(u64 nid, u64 src_nid, u32 op, u32 size, u32 timeout_ms,
	   u32 flags, u64 seed, struct o2lnd_ioc_brw *out)
{
	struct o2_brw_req *r;
	struct o2_ni *ni;
	ktime_t start;
	long left;
	int rc;

	ni = o2_ni_for(nid, src_nid, &rc);
	if (!ni)
		return rc;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	init_completion(&r->done);
	r->cookie = atomic64_inc_return(&o2_bulk_cookie) | BIT_ULL(62);
	r->nid = nid;
	r->ni = ni;
	r->op = op;
	r->nob = size;
	r->seed = seed & (U64_MAX >> 1);
	r->flags = flags;
	r->rdma = size > O2_MAX_IMMEDIATE;
	r->routed = o2_nid_net(nid) != o2_nid_net(ni->nid);
	spin_lock(&o2_bulk_lock);
	list_add_tail(&r->list, &o2_brws);
	spin_unlock(&o2_bulk_lock);

	start = ktime_get();
	rc = o2_brw_start(ni, r);
	if (rc)
		o2_brw_update(r->cookie, rc, true, true);
	left = wait_for_completion_interruptible_timeout(&r->done,
							 msecs_to_jiffies(timeout_ms));
	spin_lock(&o2_bulk_lock);
	list_del(&r->list);
	if (r->finished)
		rc = r->status;
	else if (left < 0)
		rc = -EINTR;
	else
		rc = -ETIMEDOUT;
	spin_unlock(&o2_bulk_lock);
	out->rtt_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	out->rdma = r->rdma;
	kfree(r);
	return rc;
}
