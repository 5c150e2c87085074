// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet's message path: sending a message to a NID with its LNet
 * tx credits (per peer, per NI; queued below zero), connecting on demand,
 * resending what a dead connection did not send, peer health, and
 * dispatching a received LNet message to its owner (ping, selftest,
 * router).
 */
#include <linux/ratelimit.h>
#include "lnet.h"
#include "trace.h"

/*
 * Take the NI tx credit for @tx, which holds its peer credit.  Caller
 * holds ni->lock.  Return: true if it may be sent now, false if it waits
 * on ni->credit_q.
 */
static bool o2_tx_take_ni_credit(struct o2_ni *ni, struct o2_tx *tx)
{
	if (o2_txcr_take(&ni->txcr)) {
		tx->held |= O2_TX_HELD_NI;
		return true;
	}
	tx->held |= O2_TX_QUEUED;
	list_add_tail(&tx->list, &ni->credit_q);
	return false;
}

/*
 * A message's deadlines at its first launch, as LNet's: the message may
 * take o2_msg_timeout_of() with its resends (LNet's msg_deadline; an
 * owner's own deadline instead when it set one), and each attempt the
 * LND's timeout, within that (o2_attempt_deadline()).
 */
static void o2_tx_set_deadlines(struct o2_tx *tx)
{
	unsigned long now = jiffies;

	if (tx->has_deadline)
		tx->msg_deadline = tx->deadline;
	else
		tx->msg_deadline = now + o2_msg_timeout_of(o2_timeout,
							   o2_retry_count) * HZ;
	tx->has_deadline = true;
	tx->deadline = o2_attempt_deadline(now, o2_timeout, tx->msg_deadline);
}

/**
 * o2_ni_launch() - send a tx to @nid, connecting first if needed
 * @ni: the NI to send from
 * @nid: the destination; on another network than @ni's, the tx goes to
 *	the gateway of its route (its LNet header names @nid)
 * @tx: the tx; its reference passes to o2lnd whatever happens (a failure
 *	completes the tx with an error status)
 *
 * On its first launch a tx takes a tx credit of its peer, then one of
 * the NI, as LNet does (lnet_post_send_locked()); without one it waits
 * on the peer's or the NI's credit queue (the credits go below zero)
 * until a completing tx hands its credit over, or until its deadline
 * (connd fails it with -ETIMEDOUT).  A peer holds at most o2_credits
 * messages, in flight and waiting: one more fails with -ENOBUFS, so a
 * dead peer cannot take every tx of the NI.  A tx launched again (a
 * resend after its conn broke) keeps the credits it holds.
 *
 * May sleep.
 *
 * Return: 0 if the tx was queued, else the errno it failed with.
 */
int o2_ni_launch(struct o2_ni *ni, u64 nid, struct o2_tx *tx)
{
	struct o2_peer *peer;
	bool send = true;
	int rc;

	if (!tx->peer) {
		u64 hop = o2_route_hop(ni, nid, true);

		if (!hop) {
			tx->status = -EHOSTUNREACH;
			o2_tx_put(tx);
			return -EHOSTUNREACH;
		}
		nid = hop;
	}
	tx->nid = nid;
	if (tx->peer)	/* a resend: o2_lnet_resend() set its deadline */
		return o2_peer_send(tx->peer, tx);
	o2_tx_set_deadlines(tx);

	peer = o2_peer_find_or_create(ni, nid);
	if (!peer) {
		rc = READ_ONCE(ni->shutdown) ? -ESHUTDOWN : -ENOMEM;
		tx->status = rc;
		o2_tx_put(tx);
		return rc;
	}
	trace_o2lnd_tx_queued(ni->nid, nid, tx->type, tx->nob, 0);
	spin_lock(&ni->lock);
	if (ni->shutdown || peer->ntx >= o2_credits) {
		rc = ni->shutdown ? -ESHUTDOWN : -ENOBUFS;
		spin_unlock(&ni->lock);
		if (rc == -ENOBUFS) {
			char str[O2_NIDSTR_SIZE];

			atomic64_inc(&ni->stats.tx_no_credit_drops);
			pr_warn_ratelimited("o2lnd: %s: %d messages to %s already waiting or in flight: dropped one\n",
					    ni->net, o2_credits,
					    o2_nid_format(nid, str,
							  sizeof(str)));
		}
		o2_peer_put(peer);
		tx->status = rc;
		o2_tx_put(tx);
		return rc;
	}
	/* the caller's reference passes to the tx */
	tx->peer = peer;
	peer->ntx++;
	if (o2_txcr_take(&peer->txcr)) {
		tx->held |= O2_TX_HELD_PEER;
		send = o2_tx_take_ni_credit(ni, tx);
	} else {
		tx->held |= O2_TX_QUEUED;
		list_add_tail(&tx->list, &peer->credit_q);
		send = false;
	}
	spin_unlock(&ni->lock);
	return send ? o2_peer_send(peer, tx) : 0;
}

/**
 * o2_ni_credit_work() - send the txs that got their credits
 * @work: ni->credit_work
 *
 * Runs in o2_tx_wq.  A tx that completes hands its credits to the next
 * waiting one (o2_tx_credits_return()), which is sent from here rather
 * than from the completion: no completion sends inline, and a chain of
 * sends that fail at once never recurses.
 */
void o2_ni_credit_work(struct work_struct *work)
{
	struct o2_ni *ni = container_of(work, struct o2_ni, credit_work);
	struct o2_tx *tx;
	LIST_HEAD(ready);

	spin_lock(&ni->lock);
	list_splice_init(&ni->ready, &ready);
	spin_unlock(&ni->lock);
	while ((tx = list_first_entry_or_null(&ready, struct o2_tx, list))) {
		list_del_init(&tx->list);
		o2_peer_send(tx->peer, tx);
	}
}

/**
 * o2_tx_credits_return() - a tx completes: give back its LNet credits
 * @tx: the tx (from its release; it is on no list)
 *
 * A credit given back goes to the first tx waiting for it: a tx that
 * gets its peer credit then asks for its NI credit; one that holds both
 * is sent by ni->credit_work.
 */
void o2_tx_credits_return(struct o2_tx *tx)
{
	struct o2_peer *peer = tx->peer;
	struct o2_ni *ni = peer->ni;
	struct o2_tx *next;
	bool kick = false;

	spin_lock(&ni->lock);
	peer->ntx--;
	if ((tx->held & O2_TX_HELD_NI) && o2_txcr_return(&ni->txcr)) {
		next = list_first_entry(&ni->credit_q, struct o2_tx, list);
		list_move_tail(&next->list, &ni->ready);
		next->held = (next->held & ~O2_TX_QUEUED) | O2_TX_HELD_NI;
		kick = true;
	}
	if ((tx->held & O2_TX_HELD_PEER) && o2_txcr_return(&peer->txcr)) {
		next = list_first_entry(&peer->credit_q, struct o2_tx, list);
		list_del_init(&next->list);
		next->held = (next->held & ~O2_TX_QUEUED) | O2_TX_HELD_PEER;
		if (o2_tx_take_ni_credit(ni, next)) {
			list_add_tail(&next->list, &ni->ready);
			kick = true;
		}
	}
	tx->held = 0;
	spin_unlock(&ni->lock);
	if (kick)
		queue_work(o2_tx_wq, &ni->credit_work);
}

/*
 * Take the txs waiting on a credit queue whose deadline passed (all of
 * them if @all) off it, onto @out.  Caller holds ni->lock.
 */
static void o2_credit_q_expire(struct o2_ni *ni, struct list_head *q,
			       struct o2_txcr *cr, unsigned long now, bool all,
			       struct list_head *out)
{
	struct o2_tx *tx, *tmp;

	lockdep_assert_held(&ni->lock);
	list_for_each_entry_safe(tx, tmp, q, list) {
		if (!all && !time_after(now, tx->deadline))
			continue;
		list_move_tail(&tx->list, out);
		tx->held &= ~O2_TX_QUEUED;
		o2_txcr_unqueue(cr);
	}
}

/*
 * Move to @out the txs of @ni that wait for LNet credits past their
 * deadline at @now (or all of them, with @all).
 */
void o2_ni_take_credit_waits(struct o2_ni *ni, unsigned long now, bool all,
			     struct list_head *out)
{
	struct o2_peer *peer;
	int bkt;

	spin_lock(&ni->lock);
	o2_credit_q_expire(ni, &ni->credit_q, &ni->txcr, now, all, out);
	hash_for_each(ni->peers, bkt, peer, node)
		o2_credit_q_expire(ni, &peer->credit_q, &peer->txcr, now, all,
				   out);
	spin_unlock(&ni->lock);
}

/**
 * o2_ni_expire_credit_waits() - fail txs that waited too long for credits
 * @ni: the NI
 * @now: jiffies
 *
 * A tx still waiting for a peer or NI tx credit past its deadline fails
 * with -ETIMEDOUT (connd, every scan).  It leaves the queue without a
 * credit: the counts move back up, nobody else is woken.
 */
void o2_ni_expire_credit_waits(struct o2_ni *ni, unsigned long now)
{
	LIST_HEAD(late);

	o2_ni_take_credit_waits(ni, now, false, &late);
	o2_tx_fail_list(&late, -ETIMEDOUT);
}

/**
 * o2_peer_health() - record a success or a failure of a peer
 * @peer: the peer
 * @ok: a message came from it or a Send to it completed; else a message
 *	to it failed or a connect to it failed
 *
 * O2LND_PEER_DOWN_FAILURES failures in a row mark it down; a success
 * marks it up and raises the LNet health of its NID (discovery.c).  Any
 * context without o2lnd locks; cheap on the success path of a healthy
 * peer (no lock).
 */
void o2_peer_health(struct o2_peer *peer, bool ok)
{
	struct o2_ni *ni = peer->ni;
	char nid[O2_NIDSTR_SIZE];
	bool up = false, down = false;

	if (ok) {
		WRITE_ONCE(peer->alive, jiffies ? jiffies : 1);
		o2_lpeer_health(peer->nid, true);
		if (!READ_ONCE(peer->failures) && !READ_ONCE(peer->down))
			return;
	}
	spin_lock(&ni->lock);
	if (ok) {
		peer->failures = 0;
		up = peer->down;
		peer->down = false;
	} else if (++peer->failures >= O2LND_PEER_DOWN_FAILURES &&
		   !peer->down) {
		peer->down = true;
		peer->downs++;
		down = true;
	}
	spin_unlock(&ni->lock);
	if (up || down)
		pr_info_ratelimited("o2lnd: %s: peer %s is %s\n", ni->net,
				    o2_nid_format(peer->nid, nid, sizeof(nid)),
				    up ? "up again" : "down");
}

/* Count and log an LNet message from @conn's peer that nothing takes. */
void o2_lnet_drop(struct o2_conn *conn, const char *why)
{
	char nid[O2_NIDSTR_SIZE];

	atomic64_inc(&conn->ni->stats.drop_count);
	atomic64_inc(&conn->peer->st.drop_count);
	pr_warn_ratelimited("o2lnd: %s: dropped LNet message from %s: %s\n",
			    conn->ni->net,
			    o2_nid_format(conn->peer->nid, nid, sizeof(nid)),
			    why);
}

/**
 * o2_lnet_bulk_req() - a peer's PUT_REQ or GET_REQ (o2_up->bulk_req())
 * @conn: the conn it came on
 * @rx: its receive buffer (not held here)
 * @type: O2_MSG_PUT_REQ or O2_MSG_GET_REQ
 * @body: the request, checked (struct o2_putreq_msg, struct o2_get_msg)
 * @rd_nob: GET_REQ: the bytes its sink takes
 *
 * A PUT goes to the selftest service's sink, to a selftest read waiting
 * for its routed REPLY, or on to another node through this router; a
 * GET to the selftest service's source.
 *
 * Return: 0 (answered), or an errno to refuse it with.
 */
int o2_lnet_bulk_req(struct o2_conn *conn, struct o2_rx *rx, u8 type,
		     void *body, u32 rd_nob)
{
	const struct o2_putreq_msg *m = body;
	const struct o2_lnet_hdr *h = &m->hdr;
	u32 ltype = le32_to_cpu(h->type);
	u64 dest = le64_to_cpu(h->dest_nid);
	u32 nob = le32_to_cpu(h->payload_length);

	if (type == O2_MSG_GET_REQ)
		return o2_brw_get_src(conn, body, rd_nob);
	if ((ltype == O2_LNET_MSG_PUT || ltype == O2_LNET_MSG_REPLY) &&
	    dest != conn->ni->nid && !o2_ni_by_nid(dest))
		return o2_rtr_forward_put(conn, m);
	if (ltype == O2_LNET_MSG_REPLY && dest == conn->ni->nid &&
	    nob <= O2LND_BRW_MAX_SIZE)
		return o2_brw_reply_put(conn, m);
	if (ltype != O2_LNET_MSG_PUT || dest != conn->ni->nid ||
	    le32_to_cpu(h->msg.put.ptl_index) != O2_BRW_PORTAL ||
	    nob > O2LND_BRW_MAX_SIZE)
		return -ENODATA;	/* nobody takes it */
	return o2_brw_put_sink(conn, m);
}

/**
 * o2_bulk_launch() - send the request of an exchange of ours
 * @ni: the NI
 * @nid: the destination
 * @tx: the request (PUT_REQ, GET_REQ)
 * @b: its exchange, which waits for the peer's answer until its deadline;
 *	takes over the caller's reference
 *
 * Return: as o2_ni_launch().
 */
int o2_bulk_launch(struct o2_ni *ni, u64 nid, struct o2_tx *tx,
		   struct o2_bulk *b)
{
	o2_bulk_await(b, tx);
	return o2_ni_launch(ni, nid, tx);
}

/**
 * o2_lnet_recv() - an IMMEDIATE message's LNet part arrived
 * @conn: the conn it came on
 * @rx: its receive buffer
 * @payload: LNet header + payload
 * @nob: their length
 *
 * Called from the Receive completion; copies what it keeps.  A message
 * for another node is forwarded (router.c).
 *
 * Return: true if the router holds @rx (it reposts it), else false.
 */
bool o2_lnet_recv(struct o2_conn *conn, struct o2_rx *rx, void *payload,
		  u32 nob)
{
	const struct o2_lnet_hdr *hdr = payload;
	struct o2_ni *ni = conn->ni;
	u64 dest;
	u32 plen;

	if (nob < sizeof(*hdr)) {
		o2_lnet_drop(conn, "short LNet header");
		return false;
	}
	plen = le32_to_cpu(hdr->payload_length);
	if (plen > nob - sizeof(*hdr)) {
		o2_lnet_drop(conn, "truncated payload");
		return false;
	}
	dest = le64_to_cpu(hdr->dest_nid);
	if (dest != ni->nid) {
		if (!o2_ni_by_nid(dest))
			return o2_rtr_forward(conn, rx, payload,
					      sizeof(*hdr) + plen);
		/* a router answers pings on any of its NIDs, as LNet does */
		if (le32_to_cpu(hdr->type) == O2_LNET_MSG_GET)
			o2_ping_get_rx(conn, hdr);
		else
			o2_lnet_drop(conn, "not for this NI");
		return false;
	}
	if (o2_brw_rx_immediate(conn, hdr, hdr + 1))
		return false;
	switch (le32_to_cpu(hdr->type)) {
	case O2_LNET_MSG_PUT:
		if (le32_to_cpu(hdr->msg.put.ptl_index) ==
		    O2_LNET_RESERVED_PORTAL)
			o2_push_rx(conn, hdr, hdr + 1, plen);
		else
			o2_lnet_drop(conn, "PUT for an unknown portal");
		break;
	case O2_LNET_MSG_ACK:
		if (!o2_push_acked(le64_to_cpu(hdr->msg.ack.dst_wmd.object_cookie),
				   le64_to_cpu(hdr->src_nid)) &&
		    !o2_brw_lnet_ack(le64_to_cpu(hdr->msg.ack.dst_wmd.object_cookie),
				     le64_to_cpu(hdr->src_nid),
				     le64_to_cpu(hdr->msg.ack.match_bits),
				     le32_to_cpu(hdr->msg.ack.mlength)))
			o2_lnet_drop(conn, "ACK matches no pending PUT");
		break;
	case O2_LNET_MSG_GET:
		o2_ping_get_rx(conn, hdr);
		break;
	case O2_LNET_MSG_REPLY:
		if (!o2_ping_finish(le64_to_cpu(hdr->msg.reply.dst_wmd.object_cookie),
				    le64_to_cpu(hdr->src_nid), 0, hdr + 1, plen))
			o2_lnet_drop(conn,
				     "REPLY matches no pending ping");
		break;
	default:
		o2_lnet_drop(conn, "unsupported LNet type");
		break;
	}
	return false;
}

/**
 * o2_lnet_hdr_init() - an LNet header from @ni to @dst, the rest zero
 * @h: the header
 * @ni: our NI (its NID is the source)
 * @dst: the destination NID
 * @type: O2_LNET_MSG_*
 * @payload: payload bytes that follow
 */
void o2_lnet_hdr_init(struct o2_lnet_hdr *h, struct o2_ni *ni, u64 dst,
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

/**
 * o2_ni_for() - the local NI to send to @nid from
 * @nid: the destination
 * @src_nid: the local NID asked for, or O2LND_NID_ANY for the first NI on
 *	@nid's network
 * @rc: out: why there is none
 *
 * A @nid on no local network is reached through the gateway of its route
 * (routes=): the NI is the one on the gateway's network.
 *
 * Return: the NI, or NULL with @rc -EINVAL (@src_nid not local),
 * -EHOSTUNREACH (neither on @nid's network nor on that of a gateway to
 * it) or -ENETDOWN (NI not up).
 */
struct o2_ni *o2_ni_for(u64 nid, u64 src_nid, int *rc)
{
	struct o2_ni *ni;
	u64 hop = nid;

	*rc = 0;
	if (!o2_ni_by_net(o2_nid_net(nid)) && !o2_route_ni(nid, &hop))
		hop = 0;
	if (src_nid != O2LND_NID_ANY) {
		ni = o2_ni_by_nid(src_nid);
		if (!ni)
			*rc = -EINVAL;
		else if (!hop || o2_nid_net(ni->nid) != o2_nid_net(hop))
			*rc = -EHOSTUNREACH;
	} else {
		ni = hop ? o2_ni_toward(hop) : NULL;
		if (!ni)
			*rc = -EHOSTUNREACH;
	}
	if (!*rc && !READ_ONCE(ni->up))
		*rc = -ENETDOWN;
	return *rc ? NULL : ni;
}

/**
 * o2_ni_answer() - the NI an answer to @to leaves from
 * @ni: the NI the request came in on
 * @to: the requester (the request's src_nid)
 *
 * An answer goes back from the NI the request came in on, but for a
 * routed request (@to on another network) on a network of several NIs:
 * the last router may have delivered it to any of our NIDs there
 * (Multi-Rail), so the answer leaves from the NI that reaches the
 * gateway of @to's route, if that NI is up.
 *
 * Return: the NI to allocate the answer's tx from and send it on.
 */
struct o2_ni *o2_ni_answer(struct o2_ni *ni, u64 to)
{
	struct o2_ni *gw_ni;
	u64 hop;

	if (o2_nid_net(to) == o2_nid_net(ni->nid))
		return ni;
	gw_ni = o2_route_ni(to, &hop);
	if (!gw_ni || !READ_ONCE(gw_ni->up) ||
	    o2_nid_net(gw_ni->nid) != o2_nid_net(ni->nid))
		return ni;
	return gw_ni;
}

/*
 * May a tx that failed with @error on a dying conn be sent again?  Like
 * LNet's resend on a local or remote drop: when the conn broke under it
 * (send error, peer disconnected or rebooted, conn aborted or closed as
 * a duplicate), up to retry_count times (at least once: o2iblnd keeps a
 * message its conn never sent queued on the peer), while the message's
 * deadline holds (@msg_deadline: lnet_transaction_timeout's bound, or
 * its owner's) and the NI is up.  NOOPs only carried credits of the dead conn;
 * a bulk exchange is resent whole by its owner (o2_brw()).
 */
static bool o2_tx_may_resend(struct o2_tx *tx, int error)
{
	/* bulk messages and NOOPs belong to their conn */
	if (tx->type != O2_MSG_IMMEDIATE ||
	    tx->resends >= max(o2_retry_count, 1) || !tx->nid ||
	    READ_ONCE(tx->ni->shutdown) ||
	    time_after_eq(jiffies, tx->msg_deadline))
		return false;
	return error == -EIO || error == -ECONNRESET || error == -ESTALE ||
	       error == -ECONNABORTED || error == -EALREADY;
}

/*
 * The path of an LNet ACK to a Multi-Rail peer whose path failed is
 * chosen anew, as LNet resends on another path (o2_lnet_select(), which
 * takes another path where one is usable: the failed one's health is
 * lowered only when its tx is released): the requester takes the ACK
 * from any NID of ours
 * (o2_lpeer_same()).  A request stays on its path: its owner resends it
 * whole on a path it chooses (o2_brw()), and a ping tests one NID.
 * Another NI's path needs a tx of that NI: the message moves to a new tx
 * (its header naming the new source and destination NIDs) with its
 * owner's done, cookie, deadline and resends; the old tx ends with
 * @error and no owner, which counts against the failed path's health and
 * returns its credits.  An ACK to a router, to a peer that is not
 * Multi-Rail, or whose path did not change stays in @tx.
 *
 * Return: the tx to launch, and in *@nid its destination.
 */
static struct o2_tx *o2_tx_repath(struct o2_tx *tx, int error, u64 *nid)
{
	struct o2_lnet_hdr *h = tx->msg + sizeof(struct o2_msg_hdr);
	u32 len = tx->nob - sizeof(struct o2_msg_hdr);
	struct o2_tx *nt;
	struct o2_ni *ni;
	u64 dest;
	int rc;

	*nid = tx->nid;
	if (le32_to_cpu(h->type) != O2_LNET_MSG_ACK ||
	    le64_to_cpu(h->dest_nid) != tx->nid)	/* through a router */
		return tx;
	ni = o2_lnet_select(tx->nid, O2LND_NID_ANY, tx->nid, &dest, &rc);
	if (!ni || dest == tx->nid)
		return tx;
	nt = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!nt)
		return tx;
	memcpy(nt->msg + sizeof(struct o2_msg_hdr), h, len);
	nt->nob = tx->nob;
	h = nt->msg + sizeof(struct o2_msg_hdr);
	h->src_nid = cpu_to_le64(ni->nid);
	h->dest_nid = cpu_to_le64(dest);
	/* o2_ni_launch() keeps the message's deadline, gives a new attempt */
	nt->deadline = tx->msg_deadline;
	nt->has_deadline = true;
	nt->resends = tx->resends;
	nt->done = tx->done;
	nt->owner = tx->owner;
	nt->cookie = tx->cookie;
	tx->done = NULL;
	tx->status = error;
	o2_tx_put(tx);
	*nid = dest;
	return nt;
}

/*
 * o2_up->resend(): launch @tx again if o2_tx_may_resend() allows it, on
 * the path o2_tx_repath() chooses.  Process context, no o2lnd lock held
 * (a Send completion from ib_comp_wq, or connd).
 */
static bool o2_lnet_resend(struct o2_tx *tx, int error)
{
	u64 nid;

	if (!o2_tx_may_resend(tx, error))
		return false;
	tx->resends++;
	atomic64_inc(&tx->ni->stats.resend_count);
	tx = o2_tx_repath(tx, error, &nid);
	tx->conn = NULL;
	tx->status = 0;
	if (tx->peer)	/* the same tx: a new attempt, within the message's */
		tx->deadline = o2_attempt_deadline(jiffies, o2_timeout,
						   tx->msg_deadline);
	o2_ni_launch(tx->ni, nid, tx);
	return true;
}

/* o2_up->peer_init(): a new peer's LNet tx credits and router credits. */
static void o2_lnet_peer_init(struct o2_peer *peer)
{
	o2_txcr_init(&peer->txcr, o2_peer_credits);
	o2_txcr_init(&peer->rtrcr, o2_rtr_peer_credits());
}

/*
 * o2_up->tx_finalize(): a tx LNet launched is released.  Its end counts
 * for LNet Health (discovery.c), a timeout against its peer's health too;
 * its credits go to the next waiter.  The
 * release drops the peer reference itself, last.
 */
static void o2_lnet_tx_finalize(struct o2_tx *tx)
{
	enum o2_tx_phase phase = O2_TXP_LOCAL;

	/* unposted with no connection to its peer: it waited for a connect */
	if (tx->conn)
		phase = O2_TXP_POSTED;
	else if (READ_ONCE(tx->peer->state) != O2_PEER_ESTABLISHED)
		phase = O2_TXP_CONNECT;
	o2_health_note(tx->ni, tx->nid, tx->status, phase);
	if (tx->status == -ETIMEDOUT) {
		atomic64_inc(&tx->peer->st.tx_timeouts);
		o2_peer_health(tx->peer, false);
	}
	o2_tx_credits_return(tx);
}

/* o2_up->conn_closed(): the router messages on it end. */
static void o2_lnet_conn_closed(struct o2_conn *conn)
{
	o2_rtr_conn_closed(conn);
}

/* o2_up->tick(): LNet's deadlines, from connd's scan. */
static void o2_lnet_tick(unsigned long now, bool reattach)
{
	struct o2_ni *ni;

	if (reattach) {
		o2_nis_reattach();
		o2_nis_link_check();
		o2_health_recover();
	}
	o2_rtr_expire(now, false);
	/* messages waiting for LNet tx credits past their deadline fail */
	o2_for_each_ni(ni)
		o2_ni_expire_credit_waits(ni, now);
}

/* o2_up->ni_changed(): an NI went down or up: our ping info changed. */
static void o2_lnet_ni_changed(struct o2_ni *ni)
{
	o2_push_all();
}

/* How the transport reaches LNet (set as o2_up at load). */
const struct o2_lnet_ops o2_lnet_ops = {
	.peer_init = o2_lnet_peer_init,
	.recv = o2_lnet_recv,
	.bulk_req = o2_lnet_bulk_req,
	.health = o2_peer_health,
	.tx_finalize = o2_lnet_tx_finalize,
	.resend = o2_lnet_resend,
	.conn_closed = o2_lnet_conn_closed,
	.tick = o2_lnet_tick,
	.device_removed = o2_ni_device_removed,
	.ni_changed = o2_lnet_ni_changed,
};
