// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the selftest (brw) service and client, beside LNet: bulk RPCs to
 * the selftest portal (O2_BRW_PORTAL) that check their payload end to
 * end with a seeded pattern.
 *
 *   write: PUT to the portal (inline, or by RDMA: bulk.c's PUT exchange);
 *          the server checks the data and answers with an LNet ACK whose
 *          match_bits carry its result, if the PUT asked for one (a
 *          checked, routed or O2LND_BRW_F_ACK write: o2_brw_wants_ack());
 *   read:  GET on the portal; the server answers with the data (inline
 *          REPLY, an RDMA write into our sink, or, through a router, a
 *          REPLY sent as a PUT).
 *
 * The RDMA exchanges are bulk.c's; this file owns them through their
 * done callbacks (struct o2_bulk_owner) and never looks inside them
 * beyond their pages.  A pending RPC waits in the table of pending
 * requests (pending.c) under its cookie; its matching state is guarded by
 * that table's lock.
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/ratelimit.h>
#include "lnet.h"

/**
 * struct o2_brw_req - a selftest RPC waiting for completion
 * @w: its wait in the pending table (@w.cookie matches the LNet ACK of
 *	a write or the REPLY of a read); it finishes at the first error, or
 *	once @data_done and @answered
 * @nid: the peer
 * @data_done: our part of the bulk exchange is over (sent and
 *	invalidated, or received, invalidated and checked)
 * @answered: the peer's answer arrived (LNet ACK of a write; the data of
 *	a read), or none is awaited (@noack)
 * @noack: a write that asks for no LNet ACK (o2_brw_wants_ack())
 * @ni: the NI
 * @op: O2LND_BRW_*
 * @nob: payload bytes
 * @seed: pattern seed
 * @flags: O2LND_BRW_F_*
 * @rdma: the payload went by RDMA
 * @routed: the peer is behind a router: a read goes as an inline GET and
 *	a payload above the inline maximum comes back as a PUT of an LNet
 *	REPLY (as LNet does: no RDMA GET through a router)
 * @deadline: jiffies: the RPC's, which its messages and its bulk
 *	exchange never outlive
 */
struct o2_brw_req {
	struct o2_pend_wait w;
	u64 nid;
	bool data_done;
	bool answered;
	bool noack;
	struct o2_ni *ni;
	u32 op;
	u32 nob;
	u64 seed;
	u32 flags;
	bool rdma;
	bool routed;
	unsigned long deadline;
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

/*
 * An RPC's part is over (@data: our side of the exchange, @answer: the
 * peer's answer), or it failed (@status): it finishes at the first error,
 * or once both parts are over.  Caller holds the pending table's lock.
 */
static void o2_brw_update_locked(struct o2_brw_req *r, int status, bool data,
				 bool answer)
{
	if (r->w.finished)
		return;
	r->data_done |= data;
	r->answered |= answer;
	if (status || (r->data_done && r->answered))
		o2_pend_wait_finish_locked(&r->w, status);
}

static void o2_brw_update(u64 cookie, int status, bool data, bool answer)
{
	struct o2_brw_req *r;

	o2_pend_lock();
	r = o2_pend_find_locked(cookie, O2_PEND_BRW);
	if (r)
		o2_brw_update_locked(r, status, data, answer);
	o2_pend_unlock();
}

/*
 * The LNet ACK of a PUT to the selftest portal: match_bits carry the
 * result (0, or a negative errno such as -EBADMSG), mlength the bytes.
 * None if the PUT asked for none (an unchecked write: the writer learns
 * nothing from it that its transport has not told it).
 */
static void o2_brw_send_ack(struct o2_ni *ni, u64 to,
			    const struct o2_lnet_wmd *wmd, int status, u32 nob)
{
	struct o2_lnet_hdr *h;
	struct o2_tx *tx;

	if (o2_lnet_wmd_is_none(wmd))
		return;		/* the writer asked for none */
	ni = o2_ni_answer(ni, to);
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);

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

/**
 * o2_brw_fill() - fill a bulk source with its pattern (b->seed)
 * @b: the buffer, from the selftest pool
 *
 * Only when the RPC checks its data (O2LND_BRW_F_CHECK): filling 1 MiB
 * word by word costs more than moving it, and a pool buffer holds
 * nothing but earlier selftest payloads (o2_bulk_alloc()).
 */
void o2_brw_fill(struct o2_bulk *b)
{
	if (b->flags & O2LND_BRW_F_CHECK)
		o2_bulk_pattern(b, false);
}

/* b->done of the service's sink: check the data, answer with an ACK. */
static void o2_brw_sink_done(struct o2_bulk *b, int status)
{
	if (!status && (b->flags & O2LND_BRW_F_CHECK) &&
	    !o2_bulk_pattern(b, true))
		status = -EBADMSG;
	if (status == -EBADMSG)
		atomic64_inc(&b->ni->stats.bulk_errors);
	o2_brw_send_ack(b->ni, b->peer_nid, &b->ack_wmd, status, b->nob);
}

/**
 * o2_brw_put_sink() - a PUT_REQ for the selftest portal: take its data
 * @conn: the conn it came on
 * @m: the request (checked: a PUT to us, on the portal, not too large)
 *
 * Return: 0, or an errno to NAK with.
 */
int o2_brw_put_sink(struct o2_conn *conn, const struct o2_putreq_msg *m)
{
	const struct o2_bulk_owner o = {
		.done = o2_brw_sink_done,
		.seed = le64_to_cpu(m->hdr.msg.put.hdr_data),
		.flags = (u32)le64_to_cpu(m->hdr.msg.put.match_bits),
		.pooled = true,
	};

	return o2_bulk_sink_start(conn, m, &o);
}

/*
 * b->done of our own RPC's exchange (b->peer_cookie: its cookie): a
 * write's data is sent (the RPC still waits for the LNet ACK); a read's
 * data is in, and checked.
 */
static void o2_brw_bulk_done(struct o2_bulk *b, int status)
{
	if (b->kind == O2_BULK_PUT_SRC) {
		o2_brw_update(b->peer_cookie, status, true, false);
		return;
	}
	/* a read's REPLY by GET_DONE is as long as its sink */
	if (!status && b->kind == O2_BULK_GET_SINK && b->got != b->nob)
		status = -EPROTO;
	if (!status && (b->flags & O2LND_BRW_F_CHECK) &&
	    !o2_bulk_pattern(b, true))
		status = -EBADMSG;
	o2_brw_update(b->peer_cookie, status, true, true);
}

/**
 * o2_brw_get_src() - answer a GET_REQ of the selftest portal
 * @conn: the conn it came on
 * @m: the request (its descriptor checked against its length)
 * @rd_nob: the bytes its sink takes
 *
 * RDMA-writes the pattern of the GET's seed (its match bits) into the
 * peer's sink, then GET_DONE.
 *
 * Return: 0 (answered), or an errno to answer with.
 */
int o2_brw_get_src(struct o2_conn *conn, const struct o2_get_msg *m,
		   u32 rd_nob)
{
	const struct o2_lnet_hdr *h = &m->hdr;
	u64 mb = le64_to_cpu(h->msg.get.match_bits);
	struct o2_bulk *b;

	if (le32_to_cpu(h->type) != O2_LNET_MSG_GET ||
	    le64_to_cpu(h->dest_nid) != conn->ni->nid ||
	    le32_to_cpu(h->msg.get.ptl_index) != O2_BRW_PORTAL)
		return -ENODATA;
	b = o2_bulk_alloc(conn->ni, O2_BULK_GET_SRC, rd_nob, mb >> 1,
			  (u32)mb & O2LND_BRW_F_CHECK, true);
	if (!b)
		return -ENOMEM;
	o2_brw_fill(b);
	o2_bulk_get_reply(conn, m, b);
	return 0;
}

/*
 * The NID the brw RPC with @cookie was sent to, if an answer from @from
 * may be taken for it (o2_lnet_answer_from()), else 0.
 */
static u64 o2_brw_answer_nid(u64 cookie, u64 from)
{
	struct o2_brw_req *r;
	bool routed = false;
	u64 nid = 0;

	o2_pend_lock();
	r = o2_pend_find_locked(cookie, O2_PEND_BRW);
	if (r) {
		nid = r->nid;
		routed = r->routed;
	}
	o2_pend_unlock();
	return nid && o2_lnet_answer_from(nid, from, routed) ? nid : 0;
}

/**
 * o2_brw_reply_put() - a PUT_REQ carrying an LNet REPLY for us
 * @conn: the conn it came on
 * @m: the request: the data of a routed selftest read
 *
 * Return: 0 or an errno to NAK with.
 */
int o2_brw_reply_put(struct o2_conn *conn, const struct o2_putreq_msg *m)
{
	const struct o2_lnet_hdr *h = &m->hdr;
	u64 cookie = le64_to_cpu(h->msg.reply.dst_wmd.object_cookie);
	u64 from = le64_to_cpu(h->src_nid);
	struct o2_bulk_owner o = { .done = o2_brw_bulk_done, .pooled = true };
	struct o2_brw_req *r;
	bool found = false;
	u64 nid;

	nid = o2_brw_answer_nid(cookie, from);
	if (!nid)
		return -ENODATA;
	o2_pend_lock();
	r = o2_pend_find_locked(cookie, O2_PEND_BRW);
	if (r && r->nid == nid && r->routed && r->op == O2LND_BRW_READ &&
	    !r->w.finished && r->nob == le32_to_cpu(h->payload_length)) {
		o.cookie = r->w.cookie;
		o.seed = r->seed;
		o.flags = r->flags;
		found = true;
	}
	o2_pend_unlock();
	if (!found)
		return -ENODATA;
	return o2_bulk_sink_start(conn, m, &o);
}

/* ---- the selftest service over IMMEDIATE messages, and answers ---- */

/**
 * o2_brw_lnet_ack() - an LNet ACK arrived: a selftest write is answered
 * @cookie: its dst_wmd object cookie
 * @from: the sender: the NID the write went to, or another NID of that
 *	Multi-Rail peer (the ACK's path failed and was chosen anew)
 * @match_bits: the peer's result (0 or a negative errno)
 * @mlength: bytes the peer took
 *
 * Return: false if no RPC waits for it.
 */
bool o2_brw_lnet_ack(u64 cookie, u64 from, u64 match_bits, u32 mlength)
{
	struct o2_brw_req *r;
	bool found;
	/*
	 * from any NID of the peer: its ACK may have been resent on another
	 * rail, or a router delivered the write to another of its NIDs
	 */
	u64 nid = o2_brw_answer_nid(cookie, from);

	if (!nid)
		return false;
	o2_pend_lock();
	r = o2_pend_find_locked(cookie, O2_PEND_BRW);
	found = r && r->nid == nid && r->op == O2LND_BRW_WRITE;
	if (found)
		o2_brw_update_locked(r, o2_remote_status((s64)match_bits),
				     false, true);
	o2_pend_unlock();
	return found;
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

	ni = o2_ni_answer(ni, to);
	b = o2_bulk_alloc(ni, O2_BULK_PUT_SRC, nob, mb >> 1,
			  (u32)mb & O2LND_BRW_F_CHECK, true);
	if (!b) {
		atomic64_inc(&ni->stats.bulk_errors);
		return;
	}
	o2_brw_fill(b);
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
	u64 from = le64_to_cpu(hdr->src_nid);
	struct o2_ni *ni = conn->ni;

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
		ni = o2_ni_answer(ni, from);
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
		u64 nid = o2_brw_answer_nid(cookie, from);

		if (!nid)
			return false;
		o2_pend_lock();
		r = o2_pend_find_locked(cookie, O2_PEND_BRW);
		if (r && r->nid == nid && r->op == O2LND_BRW_READ &&
		    !r->rdma) {
			status = plen != r->nob ? -EPROTO : 0;
			if (!status && (r->flags & O2LND_BRW_F_CHECK) &&
			    !o2_pattern((void *)payload, 0, plen, r->seed,
					true))
				status = -EBADMSG;
		}
		o2_pend_unlock();
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

/* Launch @tx, an IMMEDIATE message of RPC @r, which it never outlives. */
static int o2_brw_launch(struct o2_ni *ni, struct o2_brw_req *r,
			 struct o2_tx *tx)
{
	tx->cookie = r->w.cookie;
	tx->done = o2_brw_tx_done;
	tx->deadline = r->deadline;
	tx->has_deadline = true;
	return o2_ni_launch(ni, r->nid, tx);
}

/*
 * The LNet header of a selftest write: a PUT to the portal, asking for
 * an ACK unless @r->noack.
 */
static void o2_brw_put_hdr(struct o2_lnet_hdr *h, struct o2_ni *ni,
			   const struct o2_brw_req *r)
{
	o2_lnet_hdr_init(h, ni, r->nid, O2_LNET_MSG_PUT, r->nob);
	if (r->noack)
		o2_lnet_wmd_set_none(&h->msg.put.ack_wmd);
	else
		h->msg.put.ack_wmd.object_cookie = cpu_to_le64(r->w.cookie);
	h->msg.put.match_bits = cpu_to_le64(r->flags);
	h->msg.put.hdr_data = cpu_to_le64(r->seed);
	h->msg.put.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
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
		o2_brw_put_hdr(h, ni, r);
		o2_pattern(h + 1, 0, r->nob, r->seed, false);
		tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h) + r->nob;
		return o2_brw_launch(ni, r, tx);
	}
	if (r->op == O2LND_BRW_READ && (!r->rdma || r->routed)) {
		tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
		if (!tx)
			return -ENOBUFS;
		h = tx->msg + sizeof(struct o2_msg_hdr);
		o2_lnet_hdr_init(h, ni, r->nid, O2_LNET_MSG_GET, 0);
		h->msg.get.return_wmd.object_cookie = cpu_to_le64(r->w.cookie);
		h->msg.get.match_bits = cpu_to_le64(mb);
		h->msg.get.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		h->msg.get.sink_length = cpu_to_le32(r->nob);
		tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h);
		return o2_brw_launch(ni, r, tx);
	}

	b = o2_bulk_alloc(ni, r->op == O2LND_BRW_WRITE ? O2_BULK_PUT_SRC :
							 O2_BULK_GET_SINK,
			  r->nob, r->seed, r->flags, true);
	if (!b)
		return -ENOMEM;
	/* the LND's timeout for the exchange, but not past the RPC */
	if (time_before(r->deadline, b->deadline))
		b->deadline = r->deadline;
	b->peer_nid = r->nid;
	b->hop_nid = o2_route_hop(ni, r->nid, false);
	b->peer_cookie = r->w.cookie;
	if (r->op == O2LND_BRW_WRITE) {
		struct o2_putreq_msg *m;

		o2_brw_fill(b);
		tx = o2_bulk_tx(ni, O2_MSG_PUT_REQ, b, sizeof(*m));
		if (!tx) {
			o2_bulk_put(b);
			return -ENOBUFS;
		}
		m = tx->msg + sizeof(struct o2_msg_hdr);
		o2_brw_put_hdr(&m->hdr, ni, r);
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
			cpu_to_le64(r->w.cookie);
		m->hdr.msg.get.match_bits = cpu_to_le64(mb);
		m->hdr.msg.get.ptl_index = cpu_to_le32(O2_BRW_PORTAL);
		m->hdr.msg.get.sink_length = cpu_to_le32(r->nob);
		m->cookie = b->cookie;
		o2_bulk_desc(b, &m->rd);
		tx->reg = true;
	}
	b->done = o2_brw_bulk_done;
	return o2_bulk_launch(ni, r->nid, tx, b);
}

/**
 * o2_brw() - one selftest bulk RPC (O2LND_IOC_BRW)
 * @nid: the peer (o2ib, validated by the caller)
 * @src_nid: local NID or O2LND_NID_ANY
 * @op: O2LND_BRW_WRITE or O2LND_BRW_READ
 * @size: payload bytes (validated)
 * @timeout_ms: how long to wait (validated): the RPC's deadline, its
 *	resends included (LNet's transaction timeout for this RPC)
 * @flags: O2LND_BRW_F_*
 * @seed: pattern seed
 * @out: zeroed output
 *
 * An RPC whose attempt failed on its path (its connection broke under
 * it, our NI or device went away, the peer's HCA dropped it) is sent
 * again, as LNet resends a message, up to retry_count times while its
 * deadline holds: each attempt chooses its path anew (o2_lnet_select()),
 * and a resend to a Multi-Rail peer takes another rail than the failed
 * attempt's where one is usable (the failed path's health may not be
 * lowered yet: its txs may still be in flight).  Each attempt has a
 * cookie of its own: an answer to an abandoned attempt finds nothing.  A
 * write sent twice writes the same pattern twice; a read reads it twice.
 *
 * Return: 0 or an errno (see struct o2lnd_ioc_brw).
 */
int o2_brw(u64 nid, u64 src_nid, u32 op, u32 size, u32 timeout_ms,
	   u32 flags, u64 seed, struct o2lnd_ioc_brw *out)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct o2_brw_req *r;
	struct o2_ni *ni;
	int resends = 0;
	ktime_t start;
	u64 dest = 0;
	int rc;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	/* a PUT or GET to a peer not yet known: discover it (beside) */
	o2_discover_on_send(nid);
	start = ktime_get();
	for (;;) {
		long left = (long)(deadline - jiffies);

		/* a Multi-Rail peer: one of its NIDs (discovery.c) */
		ni = o2_lnet_select(nid, src_nid, resends ? dest : 0, &dest,
				    &rc);
		if (!ni)
			break;
		memset(r, 0, sizeof(*r));
		r->nid = dest;
		r->ni = ni;
		r->op = op;
		r->nob = size;
		r->seed = seed & (U64_MAX >> 1);
		r->flags = flags;
		r->rdma = size > O2_MAX_IMMEDIATE;
		r->routed = o2_nid_net(dest) != o2_nid_net(ni->nid);
		r->noack = op == O2LND_BRW_WRITE &&
			   !o2_brw_wants_ack(op, flags, r->routed);
		r->answered = r->noack;	/* no answer to wait for */
		r->deadline = deadline;
		rc = o2_pend_wait_add(&r->w, r, O2_PEND_BRW);
		if (rc)
			break;
		rc = o2_brw_start(ni, r);
		if (rc)
			o2_brw_update(r->w.cookie, rc, true, true);
		rc = o2_pend_wait_end(&r->w, left > 0 ?
				      jiffies_to_msecs(left) : 1);
		if (!o2_rpc_may_resend(rc, resends, o2_retry_count) ||
		    time_after_eq(jiffies, deadline))
			break;
		resends++;
		atomic64_inc(&ni->stats.resend_count);
	}
	out->rtt_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	out->rdma = r->rdma;
	/* the PUT alone, or the PUT and its ACK, or the GET and its REPLY */
	out->messages = r->noack ? 1 : 2;
	kfree(r);
	return rc;
}
