// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd under Lustre's own LNet: o2lnd's transport (module/lnd/) registered
 * with Lustre's lnet.ko as the o2ib LND, in place of ko2iblnd.  Lustre's
 * LNet keeps what is LNet's (NIs and their credits, peers, routing,
 * Multi-Rail, discovery, health, resends); o2lnd keeps the wire: its
 * connections, their deadlines, the race rule, the queue bounds, reaping
 * and healing.
 *
 * What it carries: every LNet message, as o2iblnd does.  One whose LNet
 * header and payload fit one o2iblnd message goes inline (IMMEDIATE); a
 * larger PUT or REPLY goes by PUT_REQ, and a GET whose REPLY would not fit
 * by GET_REQ, their payloads moved by RDMA from and into the pages Lustre's
 * LNet describes (msg_kiov, the MD's md_kiov), by the transport's exchanges
 * (module/lnd/bulk.c).  A peer's PUT_REQ or GET_REQ is parsed by LNet as an
 * RDMA request; its buffer is held until lnd_recv() offers the sink or
 * writes the source.
 *
 * Objects and lifetimes.  An NI of Lustre's (struct lnet_ni) gets an
 * o2l_ni, which embeds the transport's o2_ni and points back at it
 * (o2l_ni.lni, under o2_nis_mutex; NULL once shut down).  The o2_ni is on
 * the transport's NI list (o2_nis) from startup to shutdown; lock-free
 * walkers of that list may still stand on it after, so a shut down o2l_ni
 * is kept on o2l_retired (taken back by the next startup of its NID) and
 * freed at unload.  A message of Lustre's (struct lnet_msg) being sent
 * is the owner of one tx (tx->owner), finalized exactly once, by the tx's
 * done callback, or of one bulk exchange (b->owner: a GET's is an o2l_get
 * with its REPLY), finalized by the exchange's done callback.  A received
 * message is held in its receive buffer from
 * lnet_parse() to lnd_recv(), which reposts it; the conn counts it held
 * (conn->rtr_held), and its teardown waits for it.
 *
 * The LNet header on the wire is the 4-byte-NID one (struct
 * lnet_hdr_nid4): an NI must have an IPv4 NID.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/ratelimit.h>
#include <linux/sched/mm.h>
#include "o2l_compat.h"
#include "lnd.h"
#include "health.h"

/**
 * struct o2l_ni - an o2ib NI of Lustre's LNet
 * @ni: the transport's NI (on o2_nis while started)
 * @lni: Lustre's NI, NULL once shut down (o2_nis_mutex)
 */
struct o2l_ni {
	struct o2_ni ni;
	struct lnet_ni *lni;
};

/* shut down NIs, by ni.retired, freed at unload (o2_nis_mutex) */
static LIST_HEAD(o2l_retired);

/* LNet's header on o2iblnd's wire */
#define O2L_LNET_HDR_SIZE	sizeof(struct lnet_hdr_nid4)

static struct o2l_ni *o2l_of(struct o2_ni *ni)
{
	return container_of(ni, struct o2l_ni, ni);
}

/* ---- receiving ---- */

/*
 * Hand the message in @rx (its LNet header on the wire at @wire) to
 * Lustre's LNet, as an RDMA request if @rdma: @rx is held until LNet
 * calls o2l_recv() for it.  Receive completion.  Return: 0, or LNet's
 * error: it will not call o2l_recv(), and @rx is the caller's again.
 */
static int o2l_parse(struct lnet_ni *lni, struct o2_conn *conn,
		     struct o2_rx *rx, void *wire, bool rdma)
{
	struct lnet_nid src;
	struct lnet_hdr hdr;
	int rc;

	o2l_hdr_from_wire(&hdr, wire);
	o2l_nid_from_u64(conn->peer->nid, &src);
	atomic_inc(&conn->rtr_held);
	rc = lnet_parse(lni, &hdr, &src, rx, rdma);
	if (rc < 0)
		o2_rx_unhold(conn);
	return rc < 0 ? rc : 0;
}

/*
 * o2_up->recv(): an IMMEDIATE message arrived on @conn: its LNet header
 * and payload at @payload, @nob bytes.  Lustre's LNet parses it and calls
 * o2l_recv() for it (now, or later when it has waited for credits or a
 * router buffer), which reposts @rx.  Receive completion (ib_comp_wq).
 * Return: true if @rx is held until then.
 */
static bool o2l_rx(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		   u32 nob)
{
	struct o2l_ni *n = o2l_of(conn->ni);
	struct lnet_ni *lni = READ_ONCE(n->lni);
	struct lnet_hdr_nid4 *wire = payload;
	char nid[O2_NIDSTR_SIZE];
	u32 plen;

	if (!lni || nob < O2L_LNET_HDR_SIZE) {
		pr_warn_ratelimited("o2lnd: %s: dropped a message from %s: %s\n",
				    conn->ni->net,
				    o2_nid_format(conn->peer->nid, nid,
						  sizeof(nid)),
				    lni ? "shorter than an LNet header" :
				    "its NI is shutting down");
		return false;
	}
	plen = le32_to_cpu(((struct o2_lnet_hdr *)payload)->payload_length);
	if (plen > nob - O2L_LNET_HDR_SIZE) {
		pr_warn_ratelimited("o2lnd: %s: dropped a message from %s: payload of %u bytes in %u\n",
				    conn->ni->net,
				    o2_nid_format(conn->peer->nid, nid,
						  sizeof(nid)),
				    plen, nob - (u32)O2L_LNET_HDR_SIZE);
		return false;
	}
	return !o2l_parse(lni, conn, rx, wire, false);
}

/*
 * b->done of an exchange a peer asked for (our PUT sink, our GET source):
 * Lustre's message (the PUT, the REPLY) is finalized with its end.
 */
static void o2l_bulk_in_done(struct o2_bulk *b, int status)
{
	lnet_finalize(b->owner, status);
}

/*
 * lnd_recv of a peer's PUT_REQ (@m): offer the sink LNet gave (@mlen
 * bytes of @kiov from @offset; none: nothing matched, a NAK), or refuse.
 * Return: the credit reposting the buffer gives, or an errno (then LNet
 * finalizes @msg).
 */
static int o2l_recv_put(struct o2_conn *conn, const struct o2_putreq_msg *m,
			struct lnet_msg *msg, const struct bio_vec *kiov,
			u32 niov, u32 offset, u32 mlen, int *credit)
{
	struct o2_bulk *b;
	int rc;

	*credit = O2_RX_CREDIT_PEER;
	if (!mlen) {
		if (msg)
			lnet_finalize(msg, 0);
		o2_bulk_send_completion(conn, O2_MSG_PUT_NAK, m->cookie, 0);
		return 0;
	}
	b = o2_bulk_alloc_kiov(conn->ni, O2_BULK_PUT_SINK, kiov, niov, offset,
			       mlen);
	if (IS_ERR(b)) {
		rc = PTR_ERR(b);
	} else {
		b->done = o2l_bulk_in_done;
		b->owner = msg;
		rc = o2_bulk_sink_offer(conn, m, b);
	}
	if (rc) {
		o2_bulk_send_completion(conn, O2_MSG_PUT_NAK, m->cookie, rc);
		return rc;
	}
	*credit = O2_RX_CREDIT_NONE;	/* it returns with PUT_DONE */
	return 0;
}

/*
 * lnd_recv of a peer's GET_REQ (@m): RDMA-write the REPLY LNet made
 * (@msg, its payload from msg_kiov) into the peer's sink, or tell the
 * peer nothing matched.  Return: 0, or an errno (LNet finalizes @msg).
 */
static int o2l_recv_get(struct o2_conn *conn, const struct o2_get_msg *m,
			struct lnet_msg *msg)
{
	struct o2_bulk *b;

	if (!msg) {
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie,
					-ENODATA);
		return 0;
	}
	if (!msg->msg_len) {
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie, 0);
		lnet_finalize(msg, 0);
		return 0;
	}
	b = o2_bulk_alloc_kiov(conn->ni, O2_BULK_GET_SRC, msg->msg_kiov,
			       msg->msg_niov, msg->msg_offset, msg->msg_len);
	if (IS_ERR(b)) {
		o2_bulk_send_completion(conn, O2_MSG_GET_DONE, m->cookie,
					PTR_ERR(b));
		return PTR_ERR(b);
	}
	b->done = o2l_bulk_in_done;
	b->owner = msg;
	o2_bulk_get_reply(conn, m, b);	/* every end reaches b->done */
	return 0;
}

/*
 * What Lustre's LNet wants of a received message held in @rx (the sink:
 * @mlen bytes of @kiov from @offset; @rlen: what the peer sent): an
 * IMMEDIATE's payload is copied, a PUT_REQ's sink offered, a GET_REQ's
 * REPLY written; then the buffer is reposted.  Return: 0, or an errno
 * for LNet to finalize @msg with.
 */
static int o2l_recv_rx(struct o2_rx *rx, struct lnet_msg *msg,
		       const struct bio_vec *kiov, u32 niov, u32 offset,
		       u32 mlen, u32 rlen)
{
	struct o2_conn *conn = rx->conn;
	struct o2_msg_hdr *h = rx->msg;
	void *body = rx->msg + sizeof(*h);
	int credit = O2_RX_CREDIT_PEER;
	struct iov_iter to;
	int rc = 0;

	switch (h->type) {
	case O2_MSG_PUT_REQ:
		rc = o2l_recv_put(conn, body, msg, kiov, niov, offset, mlen,
				  &credit);
		break;
	case O2_MSG_GET_REQ:
		rc = o2l_recv_get(conn, body, msg);
		break;
	default:
		/* o2l_rx() checked that the payload LNet was told of arrived */
		if (mlen > rlen) {
			rc = -EPROTO;
			break;
		}
		if (!mlen) {
			if (msg)
				lnet_finalize(msg, 0);
			break;
		}
		iov_iter_bvec(&to, READ, kiov, niov, offset + mlen);
		iov_iter_advance(&to, offset);
		if (copy_to_iter(body + O2L_LNET_HDR_SIZE, mlen, &to) != mlen)
			rc = -EFAULT;
		else
			lnet_finalize(msg, 0);
		break;
	}
	o2_rx_repost(rx, credit);
	o2_rx_unhold(conn);
	return rc;
}

#ifdef O2L_RECV_ITER
/* lnd_recv (2.17): the sink is a bio_vec iterator */
static int o2l_recv(struct lnet_ni *lni, void *private, struct lnet_msg *msg,
		    int delayed, struct iov_iter *to, unsigned int rlen)
{
	return o2l_recv_rx(private, msg, to->bvec, to->nr_segs,
			   to->iov_offset, iov_iter_count(to), rlen);
}
#else
/* lnd_recv (2.15, 2.16): the sink is @niov pages from @offset */
static int o2l_recv(struct lnet_ni *lni, void *private, struct lnet_msg *msg,
		    int delayed, unsigned int niov, struct bio_vec *kiov,
		    unsigned int offset, unsigned int mlen, unsigned int rlen)
{
	return o2l_recv_rx(private, msg, kiov, niov, offset, mlen, rlen);
}
#endif

/*
 * o2_up->bulk_req(): a peer's PUT_REQ or GET_REQ: Lustre's LNet parses its
 * LNet header as an RDMA request and calls o2l_recv() for it, now or
 * later; @rx is held until then.  Receive completion (ib_comp_wq).
 * Return: O2_BULK_HELD, or an errno to refuse it with.
 */
static int o2l_bulk_req(struct o2_conn *conn, struct o2_rx *rx, u8 type,
			void *body, u32 rd_nob)
{
	struct lnet_ni *lni = READ_ONCE(o2l_of(conn->ni)->lni);
	/* a PUT_REQ and a GET_REQ both start with the LNet header */
	struct o2_putreq_msg *m = body;
	int rc;

	BUILD_BUG_ON(offsetof(struct o2_get_msg, hdr) != 0);
	if (!lni)
		return -ESHUTDOWN;
	rc = o2l_parse(lni, conn, rx, &m->hdr, true);
	return rc ? rc : O2_BULK_HELD;
}

/* ---- sending ---- */

/**
 * struct o2l_get - a GET of Lustre's sent by GET_REQ
 * @lni: the NI it is sent from
 * @get: the GET
 * @reply: its REPLY (lnet_create_reply_msg()), whose payload the peer
 *	RDMA-writes into the GET's MD
 */
struct o2l_get {
	struct lnet_ni *lni;
	struct lnet_msg *get;
	struct lnet_msg *reply;
};

/* Lustre's health status of a message of ours that ended with @status. */
static void o2l_set_hstatus(struct lnet_msg *msg, int status,
			    enum o2_tx_phase phase)
{
	msg->msg_health_status = (enum lnet_msg_hstatus)
				 o2_hstatus_of(status, phase);
}

/*
 * b->done of an exchange of ours (our PUT's source, our GET's sink): the
 * PUT, or the GET and its REPLY (as long as the peer's GET_DONE said),
 * are finalized with its end.  An exchange whose request never went out
 * ended waiting for a connection; else on the wire.
 */
static void o2l_bulk_out_done(struct o2_bulk *b, int status)
{
	enum o2_tx_phase phase = b->conn ? O2_TXP_POSTED : O2_TXP_CONNECT;
	struct o2l_get *g = b->owner;

	if (b->kind == O2_BULK_PUT_SRC) {
		o2l_set_hstatus(b->owner, status, phase);
		lnet_finalize(b->owner, status);
		return;
	}
	if (!status)
		lnet_set_reply_msg_len(g->lni, g->reply, b->got);
	o2l_set_hstatus(g->get, status, phase);
	lnet_finalize(g->get, status);
	lnet_finalize(g->reply, status);
	kfree(g);
}

/* tx->done of a Lustre message: LNet learns how it ended. */
static void o2l_tx_done(struct o2_tx *tx)
{
	struct lnet_msg *msg = tx->owner;
	enum o2_tx_phase phase = O2_TXP_LOCAL;

	if (tx->conn)
		phase = O2_TXP_POSTED;
	else if (tx->peer && READ_ONCE(tx->peer->state) != O2_PEER_ESTABLISHED)
		phase = O2_TXP_CONNECT;
	o2l_set_hstatus(msg, tx->status, phase);
	lnet_finalize(msg, tx->status);
}

/*
 * The request of an exchange of ours: a PUT_REQ carrying @msg's header
 * with @msg's payload as source, or a GET_REQ offering its MD as sink
 * (@g its GET and REPLY).  Return: the tx, its exchange waiting, or an
 * ERR_PTR before anything was sent.
 */
static struct o2_tx *o2l_bulk_request(struct o2l_ni *n, struct lnet_msg *msg,
				      struct o2l_get *g)
{
	struct lnet_libmd *md = msg->msg_md;
	struct o2_putreq_msg *put;
	struct o2_get_msg *get;
	struct o2_bulk *b;
	struct o2_tx *tx;
	int rc;

	if (g)
		b = o2_bulk_alloc_kiov(&n->ni, O2_BULK_GET_SINK, md->md_kiov,
				       md->md_niov, 0, md->md_length);
	else
		b = o2_bulk_alloc_kiov(&n->ni, O2_BULK_PUT_SRC, msg->msg_kiov,
				       msg->msg_niov, msg->msg_offset,
				       msg->msg_len);
	if (IS_ERR(b))
		return ERR_CAST(b);
	if (!g) {
		tx = o2_bulk_tx(&n->ni, O2_MSG_PUT_REQ, b, sizeof(*put));
		if (!tx) {
			o2_bulk_put(b);
			return ERR_PTR(-ENOMEM);
		}
		put = tx->msg + sizeof(struct o2_msg_hdr);
		o2l_hdr_to_wire(&msg->msg_hdr, &put->hdr);
		put->cookie = b->cookie;
		b->owner = msg;
	} else {
		rc = o2_bulk_map_on(b, o2_ni_get_dev(&n->ni));
		tx = rc ? NULL : o2_bulk_tx(&n->ni, O2_MSG_GET_REQ, b,
					    sizeof(*get) +
					    sizeof(get->rd.frags[0]));
		if (!tx) {
			o2_bulk_drop_mr(b, true);	/* never registered */
			o2_bulk_put(b);
			return ERR_PTR(rc ? rc : -ENOMEM);
		}
		get = tx->msg + sizeof(struct o2_msg_hdr);
		o2l_hdr_to_wire(&msg->msg_hdr, &get->hdr);
		get->cookie = b->cookie;
		o2_bulk_desc(b, &get->rd);
		tx->reg = true;
		b->owner = g;
	}
	b->peer_nid = O2L_NID_TO_U64(&msg->msg_target.nid);
	b->hop_nid = b->peer_nid;
	b->done = o2l_bulk_out_done;
	o2_bulk_await(b, tx);
	return tx;
}

/*
 * Send @msg to its target (or the router LNet chose): inline
 * when it fits one message, else by RDMA (a PUT or REPLY by PUT_REQ; a
 * GET whose REPLY would not fit inline by GET_REQ, unless it is routed,
 * whose REPLY comes back inline or by the router's PUT).  Once the tx
 * exists every outcome, an immediate failure included, reaches LNet
 * through o2l_tx_done() or its exchange's o2l_bulk_out_done(): 0 is
 * returned.  Return: 0, or an errno before anything was sent (LNet
 * finalizes).
 */
static int o2l_send_nofs(struct lnet_ni *lni, struct lnet_msg *msg)
{
	const u32 room = O2_MAX_MSG_SIZE - sizeof(struct o2_msg_hdr) -
			 O2L_LNET_HDR_SIZE;
	struct o2l_ni *n = lni->ni_data;
	u32 nob = msg->msg_len;
	struct o2l_get *g = NULL;
	struct o2_peer *peer;
	struct iov_iter from;
	struct o2_tx *tx;
	bool rdma = false;
	void *buf;
	u64 dst;

	if (!O2L_NID_IS_NID4(&msg->msg_target.nid))
		return -EAFNOSUPPORT;
	dst = O2L_NID_TO_U64(&msg->msg_target.nid);
	switch (msg->msg_type) {
	case LNET_MSG_GET:
		rdma = !msg->msg_routing && !msg->msg_target_is_router &&
		       msg->msg_md->md_length > room;
		break;
	case LNET_MSG_PUT:
	case LNET_MSG_REPLY:
		rdma = nob > room;
		break;
	default:
		break;
	}
	if (nob > room && !rdma)
		return -EMSGSIZE;	/* an ACK or GET with a payload */
	if (rdma && msg->msg_type == LNET_MSG_GET) {
		g = kmalloc(sizeof(*g), GFP_KERNEL);
		if (!g)
			return -ENOMEM;
		g->lni = lni;
		g->get = msg;
		g->reply = lnet_create_reply_msg(lni, msg);
		if (!g->reply) {
			kfree(g);
			return -EIO;
		}
	}
	if (rdma) {
		tx = o2l_bulk_request(n, msg, g);
		if (IS_ERR(tx)) {
			if (g) {
				/* as o2iblnd: LNet finalizes the GET */
				lnet_finalize(g->reply, PTR_ERR(tx));
				kfree(g);
			}
			return PTR_ERR(tx);
		}
	} else {
		tx = o2_tx_alloc(&n->ni, O2_MSG_IMMEDIATE);
		if (!tx)
			return -ENOMEM;
		buf = tx->msg + sizeof(struct o2_msg_hdr);
		o2l_hdr_to_wire(&msg->msg_hdr, buf);
		if (nob) {
			iov_iter_bvec(&from, WRITE, msg->msg_kiov,
				      msg->msg_niov, msg->msg_offset + nob);
			iov_iter_advance(&from, msg->msg_offset);
			if (copy_from_iter(buf + O2L_LNET_HDR_SIZE, nob,
					   &from) != nob) {
				o2_tx_put(tx);
				return -EFAULT;
			}
		}
		tx->nob = sizeof(struct o2_msg_hdr) + O2L_LNET_HDR_SIZE + nob;
		tx->owner = msg;
		tx->done = o2l_tx_done;
		tx->deadline = jiffies + o2_timeout * HZ;
		tx->has_deadline = true;
	}
	/* from here on LNet hears of it through the tx or its exchange */
	peer = o2_peer_find_or_create(&n->ni, dst);
	if (!peer) {
		tx->status = READ_ONCE(n->ni.shutdown) ? -ESHUTDOWN : -ENOMEM;
		o2_tx_put(tx);
		return 0;
	}
	tx->peer = peer;	/* the find's reference */
	tx->nid = dst;
	tx->msg_deadline = tx->deadline;
	o2_peer_send(peer, tx);
	return 0;
}

/*
 * lnd_send: as o2l_send_nofs(), whose allocations must not recurse into
 * a file system (a Lustre client sends from its writeback).
 */
static int o2l_send(struct lnet_ni *lni, void *private, struct lnet_msg *msg)
{
	unsigned int nofs = memalloc_nofs_save();
	int rc = o2l_send_nofs(lni, msg);

	memalloc_nofs_restore(nofs);
	return rc;
}

/* ---- the transport's way up ---- */

/* o2_up->peer_init(): Lustre's LNet keeps the LNet credits. */
static void o2l_peer_init(struct o2_peer *peer)
{
	o2_txcr_init(&peer->txcr, o2_peer_credits);
	o2_txcr_init(&peer->rtrcr, 0);
}

/* o2_up->health(): Lustre's LNet keeps peer health (from finalize). */
static void o2l_health(struct o2_peer *peer, bool ok)
{
}

/* o2_up->tx_finalize(): nothing of LNet's is held by a tx here. */
static void o2l_tx_finalize(struct o2_tx *tx)
{
}

/* o2_up->resend(): Lustre's LNet resends by its own health rules. */
static bool o2l_resend(struct o2_tx *tx, int error)
{
	return false;
}

/* o2_up->conn_closed(): the transport ends the exchanges on it. */
static void o2l_conn_closed(struct o2_conn *conn)
{
}

/* o2_up->tick(): detached NIs attach again; links are followed. */
static void o2l_tick(unsigned long now, bool reattach)
{
	if (reattach) {
		o2_nis_reattach();
		o2_nis_link_check();
	}
}

/* o2_up->ni_changed(): Lustre's LNet learns the NI's link state. */
static void o2l_ni_changed(struct o2_ni *ni)
{
	struct lnet_ni *lni = o2l_of(ni)->lni;

	lockdep_assert_held(&o2_nis_mutex);
	if (lni)
		o2l_set_link_fatal(lni, !READ_ONCE(ni->up));
}

static const struct o2_lnet_ops o2l_ops = {
	.peer_init = o2l_peer_init,
	.recv = o2l_rx,
	.bulk_req = o2l_bulk_req,
	.health = o2l_health,
	.tx_finalize = o2l_tx_finalize,
	.resend = o2l_resend,
	.conn_closed = o2l_conn_closed,
	.tick = o2l_tick,
	.device_removed = o2_ni_device_removed,
	.ni_changed = o2l_ni_changed,
};

/* ---- NIs ---- */

/* Refuse an o2ib tunable of Lustre's that differs from o2lnd's @ours. */
static int o2l_tunable_is(const char *net, const char *ifname,
			  const char *name, u32 asked, int ours)
{
	if (!asked || asked == ours)
		return 0;
	pr_err("o2lnd: %s(%s): %s %u asked for, but o2lnd's connections have %s=%d (its module parameter): set that instead\n",
	       net, ifname, name, asked, name, ours);
	return -EINVAL;
}

/*
 * The o2ib tunables `lnetctl net show -v` prints and `lnetctl import`
 * sets: o2lnd's, from its module parameters; one set to another value is
 * refused (0 means the default).
 */
static int o2l_lnd_tunables(struct lnet_ni *lni, const char *net,
			    const char *ifname)
{
	struct lnet_ioctl_config_o2iblnd_tunables *t =
		&lni->ni_lnd_tunables.lnd_tun_u.lnd_o2ib;

	if (lni->ni_lnd_tunables_set &&
	    (o2l_tunable_is(net, ifname, "peercredits_hiw",
			    t->lnd_peercredits_hiw, o2_peer_credits_hiw) ||
	     o2l_tunable_is(net, ifname, "concurrent_sends",
			    t->lnd_concurrent_sends, o2_concurrent_sends) ||
	     o2l_tunable_is(net, ifname, "conns_per_peer",
			    t->lnd_conns_per_peer, o2_conns_per_peer)))
		return -EINVAL;
	t->lnd_version = 1;
	t->lnd_peercredits_hiw = o2_peer_credits_hiw;
	t->lnd_concurrent_sends = o2_concurrent_sends;
	t->lnd_conns_per_peer = o2_conns_per_peer;
	t->lnd_ntx = min_t(int, o2_ntx, U16_MAX);
	return 0;
}

/*
 * Lustre's per-network tunables: those left at -1 take o2lnd's values;
 * a queue depth other than o2lnd's peer_credits is refused (o2lnd's
 * connections all have one, from its module parameter).
 */
static int o2l_tunables(struct lnet_ni *lni, const char *net,
			const char *ifname)
{
	struct lnet_ioctl_config_lnd_cmn_tunables *t = &lni->ni_net->net_tunables;

	if (t->lct_peer_timeout == -1)
		t->lct_peer_timeout = 180;
	if (t->lct_max_tx_credits == -1)
		t->lct_max_tx_credits = o2_credits;
	if (t->lct_peer_tx_credits == -1)
		t->lct_peer_tx_credits = o2_peer_credits;
	if (t->lct_peer_rtr_credits == -1)
		t->lct_peer_rtr_credits = 0;
	if (o2l_tunable_is(net, ifname, "peer credits", t->lct_peer_tx_credits,
			   o2_peer_credits))
		return -EINVAL;
	return o2l_lnd_tunables(lni, net, ifname);
}

/*
 * An o2l_ni for @nid: a shut down one of the same NID taken back (nothing
 * of its old life is alive any more), else a new one.  Caller holds
 * o2_nis_mutex.
 */
static struct o2l_ni *o2l_ni_get(u64 nid)
{
	struct o2l_ni *n;

	lockdep_assert_held(&o2_nis_mutex);
	list_for_each_entry(n, &o2l_retired, ni.retired) {
		if (n->ni.nid == nid && !atomic_read(&n->ni.tx_live) &&
		    refcount_read(&n->ni.ref) == 1) {
			list_del(&n->ni.retired);
			return n;
		}
	}
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (n)
		o2_ni_lnd_init(&n->ni);
	return n;
}

/* lnd_startup: an o2ib NI of Lustre's on its interface, listening. */
static int o2l_startup(struct lnet_ni *lni)
{
	const char *ifname = O2L_NI_IFNAME(lni);
	char netstr[O2LND_NAME_LEN];
	__be32 addr, mask;
	struct o2l_ni *n;
	struct o2_ni *ni;
	u32 net = O2L_NI_NET(lni);
	u64 nid;
	int rc;

	if (!ifname || !*ifname) {
		pr_err("o2lnd: an o2ib network needs its interface (lnetctl net add --net o2ibN --if IFACE, or networks=\"o2ibN(IFACE)\")\n");
		return -EINVAL;
	}
	if (!O2L_NI_NID4_OK(lni)) {
		pr_err("o2lnd: %s: only IPv4 NIDs go on o2iblnd's wire (4-byte NIDs in its LNet header)\n",
		       ifname);
		return -EAFNOSUPPORT;
	}
	o2_net_format(net, netstr, sizeof(netstr));
	rc = o2l_tunables(lni, netstr, ifname);
	if (rc)
		return rc;
	rc = o2_ifaddr(ifname, &addr, &mask);
	if (rc)
		return rc;
	nid = o2_make_nid(net, ntohl(addr));
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;

	mutex_lock(&o2_nis_mutex);
	if (o2_ni_by_nid(nid)) {
		mutex_unlock(&o2_nis_mutex);
		module_put(THIS_MODULE);
		pr_err("o2lnd: %s: an NI on %s is already up\n", ifname, ifname);
		return -EEXIST;
	}
	n = o2l_ni_get(nid);
	if (!n) {
		mutex_unlock(&o2_nis_mutex);
		module_put(THIS_MODULE);
		return -ENOMEM;
	}
	ni = &n->ni;
	spin_lock(&ni->lock);
	atomic_set(&ni->health, O2_HEALTH_MAX);
	memset(&ni->stats, 0, sizeof(ni->stats));
	ni->nid = nid;
	ni->addr = addr;
	ni->mask = mask;
	ni->stamp = ktime_get_real_ns();
	ni->detached = false;
	ni->link_down = false;
	o2_net_format(net, ni->net, sizeof(ni->net));
	strscpy(ni->ifname, ifname, sizeof(ni->ifname));
	spin_unlock(&ni->lock);
	rc = o2_ni_listen(ni, false);
	if (rc) {
		list_add_tail(&ni->retired, &o2l_retired);
		mutex_unlock(&o2_nis_mutex);
		module_put(THIS_MODULE);
		return rc;
	}
	n->lni = lni;
	lni->ni_data = n;
	o2l_set_nid(lni, addr);
	spin_lock(&ni->lock);
	ni->shutdown = false;
	spin_unlock(&ni->lock);
	list_add_tail_rcu(&ni->list, &o2_nis);
	o2_nnis++;
	WRITE_ONCE(ni->up, true);
	mutex_unlock(&o2_nis_mutex);
	return 0;
}

/* Has everything that held @ni (peers, txs) let go of it? */
static bool o2l_ni_idle(struct o2_ni *ni)
{
	return refcount_read(&ni->ref) == 1 && !atomic_read(&ni->tx_live);
}

/*
 * lnd_shutdown: LNet has no message on @lni any more (its references
 * drained).  The listener goes, every conn closes and is freed, what
 * waited for a conn fails (LNet hears of it), the peers go; then nothing
 * of the NI is alive and it is kept for the next startup of its NID.
 */
static void o2l_shutdown(struct lnet_ni *lni)
{
	struct o2l_ni *n = lni->ni_data;
	struct o2_ni *ni;

	if (!n)
		return;
	ni = &n->ni;
	mutex_lock(&o2_nis_mutex);
	spin_lock(&ni->lock);
	ni->shutdown = true;
	spin_unlock(&ni->lock);
	o2_ni_stop_listening(ni);
	ni->detached = false;
	list_del_rcu(&ni->list);
	o2_nnis--;
	mutex_unlock(&o2_nis_mutex);

	o2_ni_close_conns(ni, NULL, -ESHUTDOWN);
	o2_ni_fail_queued(ni, -ESHUTDOWN);
	o2_ni_wait_conns(ni);
	o2_ni_forget_peers(ni);
	while (!wait_event_timeout(o2_exit_waitq, o2l_ni_idle(ni), HZ))
		pr_warn_ratelimited("o2lnd: %s: stopping NI %s: waiting for its peers and messages to be freed\n",
				    ni->net, ni->ifname);
	o2_tx_pool_trim(ni);

	mutex_lock(&o2_nis_mutex);
	n->lni = NULL;
	lni->ni_data = NULL;
	list_add_tail(&ni->retired, &o2l_retired);
	mutex_unlock(&o2_nis_mutex);
	module_put(THIS_MODULE);
}

/*
 * lnd_ctl: what `lctl --net o2ib peer_list`, `conn_list`, `disconnect`
 * and `del_peer` ask of the LND, answered as ko2iblnd answers them: a
 * peer by index with its reference count, a conn by index with its path
 * MTU, and closing the conns to a NID (LNET_NID_ANY: to every peer).  A
 * peer whose conns are closed stays in the table until it is idle, as
 * o2lnd's peers do.
 */
static int o2l_ctl(struct lnet_ni *lni, unsigned int cmd, void *arg)
{
	struct libcfs_ioctl_data *data = arg;
	struct o2l_ni *n = lni->ni_data;
	u32 refs = 0, mtu = 0, closed = 0;
	bool known;
	u64 nid;
	int rc;

	if (!n)
		return -ESHUTDOWN;
	switch (cmd) {
	case IOC_LIBCFS_GET_PEER:
		rc = o2_ni_peer_at(&n->ni, data->ioc_count, &nid, &refs);
		if (!rc) {
			data->ioc_nid = nid;
			data->ioc_count = refs;
		}
		return rc;
	case IOC_LIBCFS_GET_CONN:
		rc = o2_ni_conn_at(&n->ni, data->ioc_count, &nid, &mtu);
		if (!rc) {
			data->ioc_nid = nid;
			data->ioc_u32[0] = mtu;
		}
		return rc;
	case IOC_LIBCFS_CLOSE_CONNECTION:
	case IOC_LIBCFS_DEL_PEER:
		nid = data->ioc_nid == LNET_NID_ANY ? O2LND_NID_ANY :
						      data->ioc_nid;
		known = o2_ni_close_peer(&n->ni, nid, &closed);
		return known || nid == O2LND_NID_ANY ? 0 : -ENOENT;
	default:
		return -EINVAL;
	}
}

#ifdef O2L_HAVE_LND_GET_TIMEOUT
/* lnd_get_timeout: the time o2lnd gives one attempt of a message. */
static int o2l_get_timeout(void)
{
	return o2_timeout;
}
#endif

static const struct lnet_lnd o2l_lnd = {
	.lnd_type = O2IBLND,
	.lnd_startup = o2l_startup,
	.lnd_shutdown = o2l_shutdown,
	.lnd_send = o2l_send,
	.lnd_recv = o2l_recv,
	.lnd_ctl = o2l_ctl,
#ifdef O2L_HAVE_LND_GET_TIMEOUT
	.lnd_get_timeout = o2l_get_timeout,
#endif
};

static int o2l_check_param(const char *name, int val, int min, int max)
{
	if (val >= min && val <= max)
		return 0;
	pr_err("o2lnd: %s=%d out of range %d..%d\n", name, val, min, max);
	return -EINVAL;
}

static int __init o2l_init(void)
{
	struct o2_tunables t = {
		.peer_credits = o2_peer_credits,
		.peer_credits_hiw = o2_peer_credits_hiw,
		.concurrent_sends = o2_concurrent_sends,
		.credits = o2_credits,
		.ntx = o2_ntx,
		.keepalive = o2_keepalive,
	};
	char why[128];
	int rc;

	o2_wire_size_checks();
	BUILD_BUG_ON(sizeof(struct lnet_hdr_nid4) != sizeof(struct o2_lnet_hdr));
	if (o2l_check_param("service", o2_service, 1, 65535) ||
	    o2l_check_param("ack_timeout", o2_ack_timeout, 12, 24) ||
	    o2l_check_param("cksum", o2_cksum_param, 0, 1) ||
	    o2l_check_param("reg_pairs", o2_reg_pairs, -1, 1) ||
	    o2l_check_param("timeout", o2_timeout, 0, 3600) ||
	    o2l_check_param("conns_per_peer", o2_conns_per_peer, 1,
			    O2_CONNS_PER_PEER_MAX))
		return -EINVAL;
	/* as o2iblnd: timeout=0 takes LNet's share of the transaction */
	if (!o2_timeout)
		o2_timeout = lnet_get_lnd_timeout();
	t.timeout = o2_timeout;
	if (o2_tunables_check(&t, why, sizeof(why))) {
		pr_err("o2lnd: %s\n", why);
		return -EINVAL;
	}
	o2_peer_credits_hiw = t.peer_credits_hiw;
	o2_concurrent_sends = t.concurrent_sends;

	rc = o2l_libcfs_setup();
	if (rc)
		return rc;
	o2_up = &o2l_ops;	/* before any device or NI */
	rc = o2_dev_init();
	if (rc) {
		pr_err("o2lnd: cannot register the ib_client: %d\n", rc);
		return rc;
	}
	rc = o2_connd_init();
	if (rc) {
		o2_dev_exit();
		return rc;
	}
	o2_connd_start_scan();
	lnet_register_lnd(&o2l_lnd);
	pr_info("o2lnd: version %s loaded as Lustre's o2ib LND\n", O2_VERSION);
	return 0;
}

static void __exit o2l_exit(void)
{
	struct o2l_ni *n, *next;

	/* no NI is left: each held the module until its shutdown */
	lnet_unregister_lnd(&o2l_lnd);
	o2_connd_exit();
	o2_dev_exit();
	list_for_each_entry_safe(n, next, &o2l_retired, ni.retired) {
		list_del(&n->ni.retired);
		WARN_ON(!o2l_ni_idle(&n->ni));
		o2_tx_pool_trim(&n->ni);
		kfree(n);
	}
	o2_bulk_pool_trim(jiffies, true);
	o2_pend_exit();
	o2_fault_clear();
	pr_info("o2lnd: unloaded (Lustre's o2ib LND)\n");
}

module_init(o2l_init);
module_exit(o2l_exit);

MODULE_AUTHOR("o2lnd");
MODULE_DESCRIPTION("o2lnd: an RDMA LND for Lustre's LNet, wire-compatible with ko2iblnd");
MODULE_LICENSE("GPL");
MODULE_VERSION(O2_VERSION);
