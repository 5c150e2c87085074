// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: bulk data by RDMA (o2iblnd v2 PUT_REQ/PUT_ACK/PUT_NAK/PUT_DONE
 * and GET_REQ/GET_DONE), the transport's for both upper layers.  An
 * exchange belongs to an owner told of its end through o2_bulk.done (o2lnd's
 * selftest and router, Lustre's messages under o2lnd_lustre.ko); this file
 * matches the messages to exchanges, moves the data and never calls an
 * owner by name.  A peer's request (PUT_REQ, GET_REQ) goes up through
 * o2_up->bulk_req(), which answers it with the calls below or refuses it.
 *
 * A buffer is either the transport's own pages (o2_bulk_alloc()) or the
 * owner's (o2_bulk_alloc_kiov(): a bio_vec array with an offset, as
 * Lustre's LNet describes a payload), mapped with one FRWR MR.
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
 * Locking: an exchange that waits for the peer's next message is in the
 * table of pending requests (pending.c) under its cookie, with room for
 * it reserved when the cookie is made; b->waiting is guarded by that
 * table's lock (a leaf).
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/ratelimit.h>
#include <linux/random.h>
#include <linux/bvec.h>
#include "lnd.h"

/* ---- buffers ---- */

static void o2_bulk_unmap(struct o2_bulk *b)
{
	if (b->nents) {
		ib_dma_unmap_sg(b->dev->ibdev, b->sgt.sgl, b->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
		b->nents = 0;
	}
}

/**
 * o2_bulk_drop_mr() - release a bulk buffer's MR
 * @b: the buffer
 * @clean: it was invalidated (or never registered): back to the pool;
 *	else it is destroyed and replaced
 */
void o2_bulk_drop_mr(struct o2_bulk *b, bool clean)
{
	if (b->mr) {
		o2_mr_put(b->mr, clean);
		b->mr = NULL;
	}
}

/* ---- the page pool of the transport's own buffers ---- */

/*
 * Selftest buffers take their pages from a pool instead of the page
 * allocator, 256 allocations and frees per 1 MiB RPC on each side: sets
 * of O2_PSET_PAGES pages, zeroed when made, that only ever hold selftest
 * payloads (a pattern, or what a peer sent to the selftest portal).  So a
 * selftest source sent without O2LND_BRW_F_CHECK, which is not filled,
 * carries nothing else.  Router buffers hold other nodes' data: they
 * never come from the pool.  At most O2_PSET_MAX sets are kept; all are
 * freed once none was taken for O2_PSET_IDLE (LNet's tick) and at unload.
 *
 * Locking: o2_pset_lock guards the free list, its count and the time of
 * the last take; a leaf.
 */
#define O2_PSET_PAGES	(O2LND_BRW_MAX_SIZE / PAGE_SIZE)
#define O2_PSET_MAX	32
#define O2_PSET_IDLE	(30 * HZ)

struct o2_page_set {
	struct list_head list;
	struct page *pages[O2_PSET_PAGES];
};

static LIST_HEAD(o2_pset_free);
static DEFINE_SPINLOCK(o2_pset_lock);
static unsigned int o2_pset_nfree;
static unsigned long o2_pset_taken;

static void o2_pset_free_one(struct o2_page_set *ps)
{
	u32 i;

	for (i = 0; i < O2_PSET_PAGES; i++)
		if (ps->pages[i])
			__free_page(ps->pages[i]);
	kfree(ps);
}

/* A page set from the pool, or a new zeroed one; NULL without memory. */
static struct o2_page_set *o2_pset_get(void)
{
	struct o2_page_set *ps;
	u32 i;

	spin_lock(&o2_pset_lock);
	o2_pset_taken = jiffies;
	ps = list_first_entry_or_null(&o2_pset_free, struct o2_page_set,
				      list);
	if (ps) {
		list_del(&ps->list);
		o2_pset_nfree--;
	}
	spin_unlock(&o2_pset_lock);
	if (ps)
		return ps;
	ps = kzalloc(sizeof(*ps), GFP_KERNEL);
	if (!ps)
		return NULL;
	for (i = 0; i < O2_PSET_PAGES; i++) {
		ps->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!ps->pages[i]) {
			o2_pset_free_one(ps);
			return NULL;
		}
	}
	return ps;
}

static void o2_pset_put(struct o2_page_set *ps)
{
	spin_lock(&o2_pset_lock);
	if (o2_pset_nfree < O2_PSET_MAX) {
		list_add(&ps->list, &o2_pset_free);
		o2_pset_nfree++;
		ps = NULL;
	}
	spin_unlock(&o2_pset_lock);
	if (ps)
		o2_pset_free_one(ps);
}

/**
 * o2_bulk_pool_trim() - free the selftest page pool when it sits idle
 * @now: jiffies
 * @all: free every free set regardless (unload)
 */
void o2_bulk_pool_trim(unsigned long now, bool all)
{
	struct o2_page_set *ps, *tmp;
	LIST_HEAD(gone);

	spin_lock(&o2_pset_lock);
	if (all || time_after(now, o2_pset_taken + O2_PSET_IDLE)) {
		list_splice_init(&o2_pset_free, &gone);
		o2_pset_nfree = 0;
	}
	spin_unlock(&o2_pset_lock);
	list_for_each_entry_safe(ps, tmp, &gone, list)
		o2_pset_free_one(ps);
}

static void o2_bulk_release(struct kref *ref)
{
	struct o2_bulk *b = container_of(ref, struct o2_bulk, ref);
	u32 i;

	WARN_ON(b->waiting);
	o2_pend_unreserve(b->cookie);
	if (b->done)	/* abandoned without finishing: the owner learns it */
		b->done(b, -ECONNABORTED);
	o2_bulk_drop_mr(b, false);
	o2_bulk_unmap(b);
	if (b->dev)
		o2_dev_put(b->dev);
	if (b->conn)
		o2_conn_put(b->conn);
	sg_free_table(&b->sgt);
	if (b->pset) {
		o2_pset_put(b->pset);
	} else {
		for (i = 0; i < b->npages; i++)
			if (b->pages[i])
				__free_page(b->pages[i]);
		kfree(b->pages);
	}
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

/*
 * The exchange part of a new bulk buffer: one reference, @kind, @nob
 * bytes, a fresh cookie with its room in the pending table reserved, the
 * timeout parameter as deadline, no pages and no owner yet.  NULL without
 * memory.
 */
static struct o2_bulk *o2_bulk_new(struct o2_ni *ni, enum o2_bulk_kind kind,
				   u32 nob)
{
	struct o2_bulk *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	kref_init(&b->ref);
	INIT_LIST_HEAD(&b->list);
	b->kind = kind;
	b->ni = ni;
	b->nob = nob;
	b->cookie = o2_pend_cookie();
	b->deadline = jiffies + o2_timeout * HZ;
	if (o2_pend_reserve(b->cookie)) {
		kfree(b);
		return NULL;
	}
	return b;
}

/**
 * o2_bulk_alloc() - a bulk buffer of @nob bytes and its exchange
 * @ni: the NI
 * @kind: O2_BULK_*
 * @nob: bytes (at most O2LND_BRW_MAX_SIZE)
 * @seed: its pattern seed (selftest)
 * @flags: O2LND_BRW_F_*
 * @pooled: a selftest buffer: its pages come from the selftest pool (see
 *	above) and hold what the last selftest left there
 *
 * Return: the buffer (one reference, a fresh cookie, the timeout
 * parameter as deadline, no owner yet), or NULL.
 */
struct o2_bulk *o2_bulk_alloc(struct o2_ni *ni, enum o2_bulk_kind kind,
			      u32 nob, u64 seed, u32 flags, bool pooled)
{
	struct o2_bulk *b = o2_bulk_new(ni, kind, nob);
	u32 i, npages = DIV_ROUND_UP(nob, PAGE_SIZE);

	if (!b)
		return NULL;
	b->seed = seed;
	b->flags = flags;
	if (pooled) {
		b->pset = o2_pset_get();
		if (!b->pset)
			goto fail;
		b->pages = b->pset->pages;
		b->npages = npages;
	} else {
		b->pages = kcalloc(max(npages, 1U), sizeof(*b->pages),
				   GFP_KERNEL);
		if (!b->pages)
			goto fail;
		b->npages = npages;
		for (i = 0; i < npages; i++) {
			b->pages[i] = alloc_page(GFP_KERNEL);
			if (!b->pages[i])
				goto fail;
		}
	}
	if (sg_alloc_table_from_pages(&b->sgt, b->pages, npages, 0, nob,
				      GFP_KERNEL))
		goto fail;
	return b;
fail:
	o2_bulk_put(b);
	return NULL;
}

/**
 * o2_bulk_alloc_kiov() - a bulk exchange over the owner's pages
 * @ni: the NI
 * @kind: O2_BULK_*
 * @kiov: the pages (not referenced: they must outlive the exchange, as
 *	an LNet message's payload outlives its finalize)
 * @niov: entries of @kiov
 * @offset: bytes of @kiov to skip
 * @nob: payload bytes from there (1..O2LND_BRW_MAX_SIZE)
 *
 * One FRWR MR maps the payload as one virtually contiguous range, so
 * every fragment but the first must start a page and every one but the
 * last must end one (what LNet's bulk pages are).
 *
 * Return: the buffer (one reference, a fresh cookie, the timeout
 * parameter as deadline, no owner yet), ERR_PTR(-EINVAL) for a payload
 * with a gap, or ERR_PTR(-ENOMEM).
 */
struct o2_bulk *o2_bulk_alloc_kiov(struct o2_ni *ni, enum o2_bulk_kind kind,
				   const struct bio_vec *kiov, u32 niov,
				   u32 offset, u32 nob)
{
	struct scatterlist *sg;
	struct o2_bulk *b;
	u32 i, n = 0, left = nob;

	/* skip @offset, then count the fragments the payload spans */
	while (niov && offset >= kiov->bv_len) {
		offset -= kiov->bv_len;
		kiov++;
		niov--;
	}
	for (i = 0; i < niov && left; i++) {
		u32 off = kiov[i].bv_offset + (i ? 0 : offset);
		u32 len = min(left, kiov[i].bv_len - (i ? 0 : offset));

		if ((i && off % PAGE_SIZE) ||
		    (left > len && (off + len) % PAGE_SIZE))
			return ERR_PTR(-EINVAL);
		left -= len;
		n++;
	}
	if (!nob || nob > O2LND_BRW_MAX_SIZE || left)
		return ERR_PTR(-EINVAL);
	b = o2_bulk_new(ni, kind, nob);
	if (!b)
		return ERR_PTR(-ENOMEM);
	if (sg_alloc_table(&b->sgt, n, GFP_KERNEL)) {
		o2_bulk_put(b);
		return ERR_PTR(-ENOMEM);
	}
	left = nob;
	for_each_sg(b->sgt.sgl, sg, n, i) {
		u32 off = i ? 0 : offset;
		u32 len = min(left, kiov[i].bv_len - off);

		sg_set_page(sg, kiov[i].bv_page, len, kiov[i].bv_offset + off);
		left -= len;
	}
	return b;
}

/**
 * o2_bulk_map_on() - DMA-map a bulk buffer and take an MR for it
 * @b: the buffer
 * @dev: the device (o2_dev_get()), whose users reference @b takes over;
 *	an ERR_PTR is passed through (-ENODEV: -ENETDOWN)
 *
 * Return: 0, -ENOMEM (no MR free: the pool is exhausted), or an errno.
 */
int o2_bulk_map_on(struct o2_bulk *b, struct o2_dev *dev)
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
 * that conn (o2_bulk_conn_closed()), else at its deadline; a request of
 * ours is bound to its conn once it went out (o2_bulk_bind()).
 */
static void o2_bulk_wait(struct o2_bulk *b, struct o2_conn *conn)
{
	if (conn) {
		kref_get(&conn->ref);
		b->conn = conn;
	}
	kref_get(&b->ref);
	o2_pend_lock();
	/* its cookie's room is reserved: this cannot fail */
	WARN_ON_ONCE(o2_pend_add_locked(b->cookie, b, O2_PEND_BULK));
	b->waiting = true;
	o2_pend_unlock();
}

/*
 * Take the bulk of @conn's peer waiting for @cookie off the table (a
 * peer can only complete its own exchanges).
 */
static struct o2_bulk *o2_bulk_take(struct o2_conn *conn, u64 cookie,
				    enum o2_bulk_kind kind)
{
	struct o2_bulk *b;

	o2_pend_lock();
	b = o2_pend_find_locked(cookie, O2_PEND_BULK);
	if (b && b->kind == kind && b->ni == conn->ni &&
	    b->hop_nid == conn->peer->nid) {
		o2_pend_del_locked(b->cookie);
		b->waiting = false;
	} else {
		b = NULL;
	}
	o2_pend_unlock();
	return b;	/* with the table's reference */
}

/* ---- the end of an exchange ---- */

/*
 * The exchange of @b ended with @status; the MR is dealt with.  Its owner
 * learns it (b->done, called once: a selftest RPC, the selftest service,
 * a message this router forwards).
 */
static void o2_bulk_finish(struct o2_bulk *b, int status)
{
	void (*done)(struct o2_bulk *b, int status) = b->done;

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
	b->done = NULL;
	if (done)
		done(b, status);
}

/* ---- invalidation ---- */

/*
 * Invalidation of @b's MR completed (tx->inv_done, from tx.c's completion
 * of the LOCAL_INV on the conn's send queue): the MR goes back to the
 * pool if @clean, else it is recovered; the exchange ends with the
 * status it had.
 */
static void o2_bulk_inv_done(struct o2_tx *tx, bool clean)
{
	struct o2_conn *conn = tx->conn;
	struct o2_bulk *b = tx->bulk;
	struct o2_fault_hit hit;

	if (clean && o2_fault_fire(O2LND_FAULT_INV_FAIL, 0, conn->ni->nid,
				   conn->peer->nid, &hit))
		clean = false;
	tx->bulk = NULL;
	tx->done = NULL;
	o2_bulk_drop_mr(b, clean);
	o2_bulk_finish(b, b->status);
	o2_bulk_put(b);
}

static void o2_bulk_tx_done(struct o2_tx *tx);

/*
 * The request of @b (PUT_REQ, GET_REQ) went out on @conn: from now on
 * the exchange waits on that conn and dies with it, as o2iblnd keeps a
 * waiting tx on its conn, so an RPC whose conn breaks fails at once
 * (and may be resent) instead of at its deadline.  Should the conn be
 * closing already, o2_bulk_conn_closed() has run or will not see @b:
 * the exchange fails here.  Ordering: o2_conn_close() sets CLOSING
 * before it calls o2_bulk_conn_closed(), which scans under the pending
 * lock; whoever takes that lock second sees the other's work.
 */
static void o2_bulk_bind(struct o2_bulk *b, struct o2_conn *conn)
{
	bool dead = false;
	int error;

	o2_pend_lock();
	if (b->waiting && !b->conn) {
		kref_get(&conn->ref);
		b->conn = conn;
		if (READ_ONCE(conn->state) >= O2_CONN_CLOSING) {
			o2_pend_del_locked(b->cookie);
			b->waiting = false;
			dead = true;
		}
	}
	o2_pend_unlock();
	if (!dead)
		return;
	error = READ_ONCE(conn->error);
	o2_bulk_finish(b, error ? error : -ECONNABORTED);
	o2_bulk_put(b);		/* the table's */
}

/*
 * Invalidate @b's MR on @conn, then finish its exchange.  Takes over the
 * caller's reference.  When the conn cannot take it, the MR is
 * recovered instead.
 */
static void o2_bulk_invalidate(struct o2_bulk *b, struct o2_conn *conn)
{
	struct o2_tx *tx = o2_tx_alloc_inv(conn->ni, b->mr, o2_bulk_inv_done);

	if (tx) {
		tx->bulk = b;
		tx->done = o2_bulk_tx_done;
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

	tx->bulk = NULL;	/* its WRITEs go with the tx's release */
	if (ok && (tx->type == O2_MSG_PUT_DONE ||
		   tx->type == O2_MSG_GET_DONE)) {
		o2_bulk_invalidate(b, tx->conn);
		return;
	}
	if (ok && tx->conn && (tx->type == O2_MSG_PUT_REQ ||
			       tx->type == O2_MSG_GET_REQ))
		o2_bulk_bind(b, tx->conn);
	if (!ok) {
		bool removed = false, had_mr = b->mr;

		/* a request whose message failed waits no more */
		o2_pend_lock();
		if (b->waiting) {
			o2_pend_del_locked(b->cookie);
			b->waiting = false;
			removed = true;
		}
		o2_pend_unlock();
		o2_bulk_drop_mr(b, false);
		if (removed || had_mr)
			o2_bulk_finish(b, tx->status ? tx->status : -EIO);
		if (removed)
			o2_bulk_put(b);	/* the table's */
	}
	o2_bulk_put(b);
}

/* ---- sending ---- */

/**
 * o2_bulk_tx() - a tx carrying a bulk buffer
 * @ni: the NI
 * @type: O2_MSG_PUT_REQ .. O2_MSG_GET_DONE
 * @b: the buffer (the tx takes a reference), or NULL
 * @body_len: bytes of body after the header
 *
 * Return: the tx, or NULL.
 */
struct o2_tx *o2_bulk_tx(struct o2_ni *ni, u8 type, struct o2_bulk *b,
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

/**
 * o2_bulk_await() - an exchange of ours waits for the peer's answer
 * @b: the exchange; takes over the caller's reference
 * @tx: its request (PUT_REQ, GET_REQ), which the caller sends next: it
 *	gets the exchange's deadline
 *
 * The exchange waits until its deadline, and from the moment its
 * request went out, on that request's conn (o2_bulk_bind()).
 */
void o2_bulk_await(struct o2_bulk *b, struct o2_tx *tx)
{
	tx->deadline = b->deadline;
	tx->has_deadline = true;
	o2_bulk_wait(b, NULL);
	o2_bulk_put(b);		/* the table and the tx hold it */
}

/**
 * o2_bulk_desc() - the one-fragment RDMA descriptor of a mapped buffer
 * @b: the buffer, with its MR
 * @rd: filled
 */
void o2_bulk_desc(struct o2_bulk *b, struct o2_rdma_desc *rd)
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

/**
 * o2_bulk_send_completion() - answer a peer's exchange without data
 * @conn: the conn its request came on
 * @type: O2_MSG_PUT_NAK, O2_MSG_PUT_DONE or O2_MSG_GET_DONE
 * @cookie: the peer's cookie
 * @status: 0, or the negative errno it ends with
 */
void o2_bulk_send_completion(struct o2_conn *conn, u8 type, u64 cookie,
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

/**
 * o2_bulk_sink_start() - offer a sink for the PUT of @m
 * @conn: the conn its PUT_REQ came on
 * @m: the request
 * @o: who takes the data (the selftest service, a selftest read's
 *	REPLY, a router buffer): told through o->done once the exchange
 *	ends; o->cookie, if not 0, replaces the peer's cookie in
 *	b->peer_cookie
 *
 * Sends PUT_ACK with the sink's descriptor; the exchange waits for the
 * peer's PUT_DONE until its deadline.
 *
 * Return: 0, or an errno to NAK with.
 */
int o2_bulk_sink_start(struct o2_conn *conn, const struct o2_putreq_msg *m,
		       const struct o2_bulk_owner *o)
{
	u32 nob = le32_to_cpu(m->hdr.payload_length);
	struct o2_bulk *b;

	b = o2_bulk_alloc(conn->ni, O2_BULK_PUT_SINK, nob, o->seed, o->flags,
			  o->pooled);
	if (!b)
		return -ENOMEM;
	b->done = o->done;
	b->owner = o->ctx;
	if (o->cookie)
		b->peer_cookie = o->cookie;
	return o2_bulk_sink_offer(conn, m, b);
}

/**
 * o2_bulk_sink_offer() - offer a sink the owner made for the PUT of @m
 * @conn: the conn its PUT_REQ came on
 * @m: the request
 * @b: the sink (O2_BULK_PUT_SINK, its owner set; b->peer_cookie, if not
 *	0, is the owner's): takes over the caller's reference
 *
 * Sends PUT_ACK with the sink's descriptor; the exchange waits for the
 * peer's PUT_DONE until its deadline, and its owner learns its end
 * through b->done.
 *
 * Return: 0, or an errno to NAK with (the owner is not called: @b is
 * let go without its done).
 */
int o2_bulk_sink_offer(struct o2_conn *conn, const struct o2_putreq_msg *m,
		       struct o2_bulk *b)
{
	const struct o2_lnet_hdr *h = &m->hdr;
	struct o2_putack_msg *ack;
	struct o2_tx *tx;
	int rc;

	rc = o2_bulk_map(b, conn);
	tx = rc ? NULL : o2_bulk_tx(conn->ni, O2_MSG_PUT_ACK, b,
				    sizeof(*ack) + sizeof(ack->rd.frags[0]));
	if (!tx) {
		b->done = NULL;
		o2_bulk_drop_mr(b, true);	/* never registered */
		o2_bulk_put(b);
		return rc ? rc : -ENOMEM;
	}
	if (!b->peer_cookie)
		b->peer_cookie = m->cookie;
	b->peer_nid = le64_to_cpu(h->src_nid);
	b->hop_nid = conn->peer->nid;
	b->ack_wmd = h->msg.put.ack_wmd;
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
 * A PUT_REQ: the upper layer offers a sink (or forwards it, or holds
 * @rx to decide later), or refuses it.
 */
static int o2_bulk_rx_put_req(struct o2_conn *conn, struct o2_rx *rx,
			      struct o2_putreq_msg *m, bool *credit_now)
{
	int rc = o2_up->bulk_req(conn, rx, O2_MSG_PUT_REQ, m, 0);

	if (rc == O2_BULK_HELD)
		return rc;
	/* a NAK returns the credit at once; else PUT_DONE or PUT_NAK will */
	if (rc)
		o2_bulk_send_completion(conn, O2_MSG_PUT_NAK, m->cookie, rc);
	*credit_now = rc != 0;
	return 0;
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
	o2_rx_credit_return(conn, O2_RX_CREDIT_PEER);
}

/**
 * o2_bulk_rtr_send() - send on the data of a PUT this router forwards
 * @ni: the NI towards the next hop
 * @hop: the next hop
 * @hdr: the PUT's LNet header (forwarded unchanged)
 * @b: the buffer holding the data (the caller's reference passes)
 * @o: the router's message, told through o->done when the exchange
 *	ends (also when it cannot start)
 *
 * Return: the PUT_REQ, for the router to launch (its exchange waits for
 * the answer), or NULL when it cannot start (o->done was told).
 */
struct o2_tx *o2_bulk_rtr_send(struct o2_ni *ni, u64 hop,
			       const struct o2_lnet_hdr *hdr,
			       struct o2_bulk *b,
			       const struct o2_bulk_owner *o)
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
	/* a fresh cookie: no late message of the sink side can match it */
	o2_pend_unreserve(b->cookie);
	b->cookie = o2_pend_cookie();
	b->status = 0;
	b->deadline = jiffies + o2_timeout * HZ;
	b->done = o->done;
	b->owner = o->ctx;
	tx = o2_pend_reserve(b->cookie) ? NULL :
		o2_bulk_tx(ni, O2_MSG_PUT_REQ, b, sizeof(*m));
	if (!tx) {
		o2_bulk_finish(b, -ENOBUFS);
		o2_bulk_put(b);
		return NULL;
	}
	m = tx->msg + sizeof(struct o2_msg_hdr);
	m->hdr = *hdr;
	m->cookie = b->cookie;
	o2_bulk_await(b, tx);
	return tx;
}

/* A GET_REQ: the upper layer answers it with its source, or refuses it. */
static int o2_bulk_rx_get_req(struct o2_conn *conn, struct o2_rx *rx,
			      struct o2_get_msg *m, u32 rd_nob)
{
	int rc;

	if (rd_nob > le32_to_cpu(m->hdr.msg.get.sink_length)) {
		o2_bulk_refuse(conn, "descriptor beyond the GET's length");
		return -EPROTO;
	}
	rc = o2_up->bulk_req(conn, rx, O2_MSG_GET_REQ, m, rd_nob);
	if (rc < 0)
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie, rc);
	return rc == O2_BULK_HELD ? rc : 0;
}

/**
 * o2_bulk_get_reply() - RDMA-write a source into a peer's GET sink
 * @conn: the conn the GET_REQ came on
 * @m: the GET_REQ
 * @b: the source (O2_BULK_GET_SRC, filled, its owner set or not; as many
 *	bytes as the sink takes, at most): takes over the caller's
 *	reference
 *
 * The WRITEs go, then GET_DONE with the byte count; the owner learns
 * the end through b->done.  If they cannot, the peer gets GET_DONE with
 * the error and the owner b->done with it.
 */
void o2_bulk_get_reply(struct o2_conn *conn, const struct o2_get_msg *m,
		       struct o2_bulk *b)
{
	struct o2_completion_msg *done;
	struct o2_tx *tx;
	u32 i, sink = 0;
	int rc;

	/* the sink takes what the descriptor offers, no more */
	for (i = 0; i < m->rd.nfrags; i++)
		sink += m->rd.frags[i].nob;
	rc = b->nob > sink ? -EMSGSIZE : o2_bulk_map(b, conn);
	tx = rc ? NULL : o2_bulk_tx(conn->ni, O2_MSG_GET_DONE, b,
				    sizeof(*done));
	if (tx && o2_tx_set_writes(tx, &m->rd)) {
		/* its done recovers the MR and tells the owner */
		tx->status = -ENOMEM;
		o2_tx_put(tx);
		o2_bulk_put(b);
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie,
					-ENOMEM);
		return;
	}
	if (!tx) {
		rc = rc ? rc : -ENOMEM;
		o2_bulk_drop_mr(b, true);	/* never registered */
		o2_bulk_finish(b, rc);
		o2_bulk_put(b);
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie, rc);
		return;
	}
	b->peer_cookie = m->cookie;
	b->hop_nid = conn->peer->nid;
	kref_get(&conn->ref);
	b->conn = conn;
	done = tx->msg + sizeof(struct o2_msg_hdr);
	done->cookie = m->cookie;
	done->status = b->nob;
	tx->reg = true;
	o2_bulk_put(b);		/* the tx holds it */
	o2_bulk_reply(conn, tx);
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
		if (READ_ONCE(conn->state) >= O2_CONN_CLOSING)
			return 0;	/* as for a late completion, below */
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
	if (tx && o2_tx_set_writes(tx, &m->rd)) {
		tx->status = -ENOMEM;
		o2_tx_put(tx);
		tx = NULL;
		rc = -ENOMEM;
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
		/*
		 * On a closing conn it is the late answer to an exchange its
		 * close failed (o2_bulk_conn_closed()): nothing to refuse.
		 */
		if (READ_ONCE(conn->state) >= O2_CONN_CLOSING)
			return 0;
		o2_bulk_refuse(conn, "completion matches no transfer");
		return -EPROTO;
	}
	if (type == O2_MSG_PUT_NAK) {
		/*
		 * A NAK without an error (o2iblnd: nothing matched the PUT)
		 * is the peer's refusal, not a failed path: -ECANCELED, which
		 * is never resent (o2_rpc_may_resend()), as LNet does not
		 * resend a message its LND completed with a health status
		 * of OK.
		 */
		o2_bulk_finish(b, m->status < 0 ? o2_remote_status(m->status) :
						  -ECANCELED);
		o2_bulk_put(b);
		return 0;
	}
	if (m->status < 0)
		b->status = o2_remote_status(m->status);
	else if (type == O2_MSG_GET_DONE && m->status > b->nob)
		b->status = -EPROTO;
	else if (type == O2_MSG_GET_DONE)
		b->got = m->status;	/* a REPLY may be shorter than its sink */
	/* the peer is done with our memory: invalidate, then finish */
	o2_bulk_invalidate(b, conn);
	return 0;
}

/**
 * o2_bulk_rx() - a bulk message arrived
 * @conn: the conn
 * @rx: its receive buffer
 * @type: O2_MSG_PUT_REQ .. O2_MSG_GET_DONE
 * @body: its body (after the header)
 * @len: body bytes
 * @flip: the sender's byte order is not ours
 * @credit_now: out: for a PUT_REQ, whether its credit returns at once
 *	(a NAK) or with the PUT_DONE
 *
 * Receive completion context.
 *
 * Return: 0, O2_BULK_HELD if the upper layer holds @rx (it reposts it),
 * or -EPROTO for a malformed message or descriptor (the caller closes the
 * connection).
 */
int o2_bulk_rx(struct o2_conn *conn, struct o2_rx *rx, u8 type, void *body,
	       u32 len, bool flip, bool *credit_now)
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
		return o2_bulk_rx_put_req(conn, rx, body, credit_now);
	case O2_MSG_GET_REQ:
		return o2_bulk_rx_get_req(conn, rx, body, rd_nob);
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
	u64 cookie = 0;

	o2_pend_lock();
	while ((b = o2_pend_next_locked(&cookie, O2_PEND_BULK))) {
		if (conn ? b->conn == conn :
			   all || time_after(now, b->deadline)) {
			o2_pend_del_locked(cookie);
			list_add_tail(&b->list, &dead);
			b->waiting = false;
		}
		cookie++;
	}
	o2_pend_unlock();
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

