// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the LNet side: network interfaces, peers, sending a message to a
 * NID (connecting on demand), receiving LNet messages, and LNet ping
 * (a GET on the reserved portal answered by a REPLY carrying ping info,
 * compatible with Lustre's lctl ping).
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include <linux/swab.h>
#include <linux/in.h>
#include "o2lnd.h"
#include "trace.h"

#define O2_PING_BUF_SIZE (sizeof(struct o2_ping_info) + \
			  O2LND_PING_MAX_IDS * sizeof(struct o2_ping_ni))

/* serialises listener destruction between unload and device removal */
static DEFINE_MUTEX(o2_nis_mutex);

/**
 * struct o2_ping_req - a ping waiting for its REPLY
 * @list: in o2_pings
 * @nid: the target
 * @cookie: the GET's return_wmd object cookie
 * @done: completed once @finished
 * @finished: @status is final: the REPLY and the GET's Send completion
 *	both arrived (a tx completes only after its Send completion, even
 *	when the reply is faster), or the GET failed
 * @replied: the REPLY arrived
 * @sent: the GET's Send completed
 * @ni: the NI it was sent from (for the early_replies count)
 * @status: 0 or an errno
 * @len: reply bytes in @buf
 * @buf: the reply's ping info
 */
struct o2_ping_req {
	struct list_head list;
	u64 nid;
	u64 cookie;
	struct completion done;
	bool finished;
	bool replied;
	bool sent;
	struct o2_ni *ni;
	int status;
	u32 len;
	u8 buf[O2_PING_BUF_SIZE];
};

static LIST_HEAD(o2_pings);
static DEFINE_SPINLOCK(o2_ping_lock);
static atomic64_t o2_ping_cookie = ATOMIC64_INIT(0);

/*
 * Send a tx that holds its LNet credits to its peer: on an ESTABLISHED
 * conn, or queued for one (connecting first if nothing is under way).
 * Return: 0 if it was queued, else the errno it failed with.
 */
static int o2_peer_send(struct o2_peer *peer, struct o2_tx *tx)
{
	struct o2_conn *conn = NULL, *c;
	struct o2_ni *ni = peer->ni;
	bool connect = false;
	LIST_HEAD(fail);
	int rc = 0, tries = 0;

again:
	spin_lock(&ni->lock);
	if (ni->shutdown) {
		spin_unlock(&ni->lock);
		tx->status = -ESHUTDOWN;
		o2_tx_put(tx);
		return -ESHUTDOWN;
	}
	list_for_each_entry(c, &peer->conns, peer_list) {
		if (READ_ONCE(c->state) == O2_CONN_ESTABLISHED) {
			conn = c;
			kref_get(&conn->ref);
			break;
		}
	}
	if (!conn) {
		list_add_tail(&tx->list, &peer->tx_queue);
		/* in BACKOFF the tx waits: connd connects when it ends */
		connect = list_empty(&peer->conns) && !peer->reconnect;
		if (connect)
			peer->addr_retries = 0;
	}
	spin_unlock(&ni->lock);

	if (conn) {
		rc = o2_conn_queue_tx(conn, tx);
		if (!rc)
			o2_conn_check_sends(conn);
		o2_conn_put(conn);
		if (rc && tries++ < 3) {
			/* it started closing meanwhile: take another */
			conn = NULL;
			goto again;
		}
		if (rc) {
			tx->status = rc;
			o2_tx_put(tx);
		}
	} else if (connect) {
		rc = o2_conn_start_active(peer);
		if (rc) {
			spin_lock(&ni->lock);
			if (list_empty(&peer->conns))
				list_splice_init(&peer->tx_queue, &fail);
			spin_unlock(&ni->lock);
			o2_tx_fail_list(&fail, rc);
		}
	}
	return rc;
}

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
	if (!tx->has_deadline) {
		tx->deadline = jiffies + o2_timeout * HZ;
		tx->has_deadline = true;
	}
	if (tx->peer)
		return o2_peer_send(tx->peer, tx);	/* a resend */

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
static void o2_credit_q_expire(struct list_head *q, struct o2_txcr *cr,
			       unsigned long now, bool all,
			       struct list_head *out)
{
	struct o2_tx *tx, *tmp;

	list_for_each_entry_safe(tx, tmp, q, list) {
		if (!all && !time_after(now, tx->deadline))
			continue;
		list_move_tail(&tx->list, out);
		tx->held &= ~O2_TX_QUEUED;
		o2_txcr_unqueue(cr);
	}
}

static void o2_ni_take_credit_waits(struct o2_ni *ni, unsigned long now,
				    bool all, struct list_head *out)
{
	struct o2_peer *peer;
	int bkt;

	spin_lock(&ni->lock);
	o2_credit_q_expire(&ni->credit_q, &ni->txcr, now, all, out);
	hash_for_each(ni->peers, bkt, peer, node)
		o2_credit_q_expire(&peer->credit_q, &peer->txcr, now, all,
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
 * marks it up.  Any context without o2lnd locks; cheap on the success
 * path of a healthy peer (no lock).
 */
void o2_peer_health(struct o2_peer *peer, bool ok)
{
	struct o2_ni *ni = peer->ni;
	char nid[O2_NIDSTR_SIZE];
	bool up = false, down = false;

	if (ok) {
		WRITE_ONCE(peer->alive, jiffies ? jiffies : 1);
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

/*
 * Finish the ping with @cookie: with @status, or with the reply @data
 * when it came from the pinged NID @from.  Return: false if no ping
 * took it.
 */
static bool o2_ping_finish(u64 cookie, u64 from, int status,
			   const void *data, u32 len)
{
	struct o2_ping_req *ping;
	bool found = false;

	spin_lock(&o2_ping_lock);
	list_for_each_entry(ping, &o2_pings, list) {
		if (ping->cookie != cookie || ping->finished ||
		    (data && (ping->nid != from || ping->replied)))
			continue;
		found = true;
		if (data) {
			ping->replied = true;
			ping->len = min_t(u32, len, sizeof(ping->buf));
			memcpy(ping->buf, data, ping->len);
			if (!ping->sent)
				atomic64_inc(&ping->ni->stats.early_replies);
		} else if (status) {
			ping->status = status;
		} else {
			ping->sent = true;
		}
		/* done once both halves are in, or at the first error */
		if (ping->status || (ping->replied && ping->sent)) {
			ping->finished = true;
			complete(&ping->done);
		}
		break;
	}
	spin_unlock(&o2_ping_lock);
	return found;
}

/*
 * A ping's GET is done (tx->done): sent counts, a failed GET fails the
 * ping.
 */
static void o2_ping_tx_done(struct o2_tx *tx)
{
	o2_ping_finish(tx->cookie, 0, tx->status, NULL, 0);
}

static void o2_lnet_drop(struct o2_conn *conn, const char *why)
{
	char nid[O2_NIDSTR_SIZE];

	atomic64_inc(&conn->ni->stats.drop_count);
	atomic64_inc(&conn->peer->st.drop_count);
	pr_warn_ratelimited("o2lnd: %s: dropped LNet message from %s: %s\n",
			    conn->ni->net,
			    o2_nid_format(conn->peer->nid, nid, sizeof(nid)),
			    why);
}

/* Append @n bytes of @src to @buf at @len, truncating at @size. */
static u32 o2_put_trunc(void *buf, u32 size, u32 len, const void *src, u32 n)
{
	n = min_t(u32, n, size - min(len, size));
	memcpy(buf + len, src, n);
	return len + n;
}

/* Build our ping info into @buf (at most @size bytes).  Return: bytes. */
static u32 o2_ping_info_fill(void *buf, u32 size)
{
	struct o2_ping_info pi = {};
	struct o2_ping_ni ent = {};
	struct o2_ni *ni;
	u32 len;

	pi.magic = cpu_to_le32(O2_PING_MAGIC);
	pi.features = cpu_to_le32(O2_PING_FEAT_BASE | O2_PING_FEAT_NI_STATUS);
	pi.pid = cpu_to_le32(O2LND_PID_LUSTRE);
	pi.nnis = cpu_to_le32(1 + o2_nnis);
	len = o2_put_trunc(buf, size, 0, &pi, sizeof(pi));

	ent.nid = cpu_to_le64(O2LND_LO_NID);
	ent.status = cpu_to_le32(O2LND_NI_STATUS_UP);
	len = o2_put_trunc(buf, size, len, &ent, sizeof(ent));
	list_for_each_entry(ni, &o2_nis, list) {
		ent.nid = cpu_to_le64(ni->nid);
		ent.status = cpu_to_le32(READ_ONCE(ni->up) ?
					 O2LND_NI_STATUS_UP :
					 O2LND_NI_STATUS_DOWN);
		len = o2_put_trunc(buf, size, len, &ent, sizeof(ent));
	}
	return len;
}

static void o2_lnet_handle_get(struct o2_conn *conn,
			       const struct o2_lnet_hdr *hdr)
{
	struct o2_ni *ni = conn->ni;
	struct o2_lnet_hdr *rep;
	struct o2_tx *tx;
	u32 room, len;

	if (le32_to_cpu(hdr->msg.get.ptl_index) != O2_LNET_RESERVED_PORTAL ||
	    le64_to_cpu(hdr->msg.get.match_bits) != O2_LNET_PING_MATCHBITS ||
	    le32_to_cpu(hdr->dest_pid) != O2LND_PID_LUSTRE) {
		o2_lnet_drop(conn, "GET for an unknown portal");
		return;
	}
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		o2_lnet_drop(conn, "no tx for the ping reply");
		return;
	}
	rep = tx->msg + sizeof(struct o2_msg_hdr);
	room = O2_MAX_MSG_SIZE - sizeof(struct o2_msg_hdr) - sizeof(*rep);
	room = min(room, le32_to_cpu(hdr->msg.get.sink_length));
	len = o2_ping_info_fill(rep + 1, room);
	rep->dest_nid = hdr->src_nid;
	rep->src_nid = hdr->dest_nid;	/* the NID asked: ours */
	rep->dest_pid = hdr->src_pid;
	rep->src_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	rep->type = cpu_to_le32(O2_LNET_MSG_REPLY);
	rep->payload_length = cpu_to_le32(len);
	rep->msg.reply.dst_wmd = hdr->msg.get.return_wmd;
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*rep) + len;
	o2_ni_launch(ni, conn->peer->nid, tx);
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
			o2_lnet_handle_get(conn, hdr);
		else
			o2_lnet_drop(conn, "not for this NI");
		return false;
	}
	if (o2_brw_rx_immediate(conn, hdr, hdr + 1))
		return false;
	switch (le32_to_cpu(hdr->type)) {
	case O2_LNET_MSG_ACK:
		if (!o2_brw_lnet_ack(le64_to_cpu(hdr->msg.ack.dst_wmd.object_cookie),
				     le64_to_cpu(hdr->src_nid),
				     le64_to_cpu(hdr->msg.ack.match_bits),
				     le32_to_cpu(hdr->msg.ack.mlength)))
			o2_lnet_drop(conn, "ACK matches no pending PUT");
		break;
	case O2_LNET_MSG_GET:
		o2_lnet_handle_get(conn, hdr);
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

static u32 o2_pi32(bool flip, __le32 v)
{
	return flip ? swab32(le32_to_cpu(v)) : le32_to_cpu(v);
}

static u64 o2_pi64(bool flip, __le64 v)
{
	return flip ? swab64(le64_to_cpu(v)) : le64_to_cpu(v);
}

static int o2_ping_parse(struct o2_ping_req *ping, struct o2lnd_ioc_ping *out,
			 u32 max_ids)
{
	struct o2_ping_info *pi = (struct o2_ping_info *)ping->buf;
	u32 nnis, avail, i, magic;
	bool flip;

	if (ping->len < sizeof(*pi))
		return -EPROTO;
	magic = le32_to_cpu(pi->magic);
	if (magic == O2_PING_MAGIC)
		flip = false;
	else if (magic == swab32(O2_PING_MAGIC))
		flip = true;
	else
		return -EPROTO;
	nnis = o2_pi32(flip, pi->nnis);
	out->pid = o2_pi32(flip, pi->pid);
	out->n_ids = nnis;
	avail = (ping->len - sizeof(*pi)) / sizeof(pi->ni[0]);
	for (i = 0; i < nnis && i < avail && i < max_ids; i++) {
		out->ids[i].nid = o2_pi64(flip, pi->ni[i].nid);
		out->ids[i].status = o2_pi32(flip, pi->ni[i].status);
	}
	return 0;
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
		ni = hop ? o2_ni_by_net(o2_nid_net(hop)) : NULL;
		if (!ni)
			*rc = -EHOSTUNREACH;
	}
	if (!*rc && !READ_ONCE(ni->up))
		*rc = -ENETDOWN;
	return *rc ? NULL : ni;
}

/**
 * o2_ping() - LNet ping of @nid
 * @nid: target (an o2ib NID, validated by the caller)
 * @src_nid: local NID to send from, or O2LND_NID_ANY
 * @timeout_ms: how long to wait (validated by the caller)
 * @out: zeroed output; filled on success
 *
 * Sends a GET on the reserved portal with the ping match bits as an
 * IMMEDIATE message (connecting if needed, to our own NID too) and waits,
 * interruptibly, for the REPLY that carries our cookie.
 *
 * Return: 0; -EINVAL (@src_nid not local), -EHOSTUNREACH (no NI on the
 * target's network), -ETIMEDOUT, -EINTR, -ECONNREFUSED, -EPROTO, ...
 */
int o2_ping(u64 nid, u64 src_nid, u32 timeout_ms, struct o2lnd_ioc_ping *out)
{
	struct o2_lnet_hdr *hdr;
	struct o2_ping_req *ping;
	struct o2_ni *ni;
	struct o2_tx *tx;
	ktime_t start;
	long left;
	int rc;

	ni = o2_ni_for(nid, src_nid, &rc);
	if (!ni)
		return rc;

	ping = kzalloc(sizeof(*ping), GFP_KERNEL);
	if (!ping)
		return -ENOMEM;
	init_completion(&ping->done);
	ping->ni = ni;
	ping->nid = nid;
	ping->cookie = atomic64_inc_return(&o2_ping_cookie);
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		kfree(ping);
		return -ENOBUFS;
	}
	hdr = tx->msg + sizeof(struct o2_msg_hdr);
	hdr->dest_nid = cpu_to_le64(nid);
	hdr->src_nid = cpu_to_le64(ni->nid);
	hdr->dest_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	hdr->src_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	hdr->type = cpu_to_le32(O2_LNET_MSG_GET);
	hdr->payload_length = 0;
	hdr->msg.get.return_wmd.interface_cookie = cpu_to_le64(ni->stamp);
	hdr->msg.get.return_wmd.object_cookie = cpu_to_le64(ping->cookie);
	hdr->msg.get.match_bits = cpu_to_le64(O2_LNET_PING_MATCHBITS);
	hdr->msg.get.ptl_index = cpu_to_le32(O2_LNET_RESERVED_PORTAL);
	hdr->msg.get.src_offset = 0;
	hdr->msg.get.sink_length = cpu_to_le32(O2_PING_BUF_SIZE);
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*hdr);
	tx->cookie = ping->cookie;
	tx->done = o2_ping_tx_done;
	/* no use sending it once nobody waits for the reply */
	tx->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	tx->has_deadline = true;

	spin_lock(&o2_ping_lock);
	list_add_tail(&ping->list, &o2_pings);
	spin_unlock(&o2_ping_lock);

	start = ktime_get();
	o2_ni_launch(ni, nid, tx);
	left = msecs_to_jiffies(timeout_ms);
	left = wait_for_completion_interruptible_timeout(&ping->done, left);

	spin_lock(&o2_ping_lock);
	list_del(&ping->list);
	if (ping->finished)
		rc = ping->status;
	else if (left < 0)
		rc = -EINTR;
	else
		rc = -ETIMEDOUT;
	spin_unlock(&o2_ping_lock);

	if (!rc) {
		out->rtt_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
		rc = o2_ping_parse(ping, out, out->max_ids);
	}
	kfree(ping);
	return rc;
}

/**
 * o2_ni_stats() - fill NET_SHOW output for @ni, but its counters
 * @ni: the NI
 * @out: zeroed output
 *
 * ctl.c fills the counters of O2LND_NI_COUNTERS from @ni->stats.
 */
void o2_ni_stats(struct o2_ni *ni, struct o2lnd_ioc_net *out)
{
	struct o2_peer *peer;
	struct o2_conn *conn;
	u32 npeers = 0, nconns = 0, nest = 0;
	int bkt;

	out->count = o2_nnis;
	out->nid = ni->nid;
	out->status = READ_ONCE(ni->up) ? O2LND_NI_STATUS_UP :
					  O2LND_NI_STATUS_DOWN;
	strscpy(out->net, ni->net, sizeof(out->net));
	strscpy(out->ifname, ni->ifname, sizeof(out->ifname));
	strscpy(out->devname, ni->devname, sizeof(out->devname));
	out->incarnation = ni->stamp;
	out->peer_credits = o2_peer_credits;
	out->credits = o2_credits;
	out->timeout_s = o2_timeout;
	out->max_msg_size = O2_MAX_MSG_SIZE;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node)
		npeers++;
	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		nconns++;
		if (READ_ONCE(conn->state) == O2_CONN_ESTABLISHED)
			nest++;
	}
	spin_unlock(&ni->conns_lock);
	spin_unlock(&ni->lock);
	out->npeers = npeers;
	out->nconns = nconns;
	out->nconns_established = nest;
	spin_lock(&ni->lock);
	out->tx_credits = ni->txcr.avail;
	out->tx_credits_min = ni->txcr.min;
	out->tx_queued = ni->txcr.queued;
	spin_unlock(&ni->lock);
	out->ntx = o2_ntx;
	out->tx_live = atomic_read(&ni->tx_live);
	out->peer_credits_hiw = o2_peer_credits_hiw;
	out->concurrent_sends = o2_concurrent_sends;
	out->keepalive_s = o2_keepalive;
	out->max_immediate = O2_MAX_IMMEDIATE;
	out->max_frags = O2_MAX_FRAGS;
	out->cksum = o2_cksum_param;
	mutex_lock(&o2_nis_mutex);
	if (ni->dev)
		o2_dev_mr_stats(ni->dev->ibdev, out);
	mutex_unlock(&o2_nis_mutex);
}

/* ---- NI setup and teardown ---- */

struct o2_ni_spec {
	u32 net;
	char ifname[IFNAMSIZ];
};

static bool o2_is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ',';
}

/* Parse "o2ib0(eth0) o2ib1(eth1,eth2)".  Return: number of specs or errno */
static int o2_networks_parse(const char *s, struct o2_ni_spec *specs, int max)
{
	int n = 0, i;

	for (;;) {
		const char *name, *end;
		u32 net;

		while (*s && o2_is_sep(*s))
			s++;
		if (!*s)
			break;
		name = s;
		while (*s && *s != '(' && !o2_is_sep(*s))
			s++;
		if (*s != '(' || o2_net_parse(name, s - name, &net) ||
		    o2_net_type(net) != O2LND_NET_TYPE_O2IB) {
			pr_err("o2lnd: networks: expected o2ibN(interface,...) at '%s'\n",
			       name);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (specs[i].net == net) {
				pr_err("o2lnd: networks: network '%.*s' given twice\n",
				       (int)(s - name), name);
				return -EINVAL;
			}
		}
		s++;
		for (;;) {
			while (*s == ' ')
				s++;
			end = s;
			while (*end && *end != ',' && *end != ')' && *end != ' ')
				end++;
			if (end == s || end - s >= IFNAMSIZ) {
				pr_err("o2lnd: networks: bad interface name at '%s'\n",
				       s);
				return -EINVAL;
			}
			if (n >= max) {
				pr_err("o2lnd: networks: more than %d interfaces\n",
				       max);
				return -EINVAL;
			}
			specs[n].net = net;
			memcpy(specs[n].ifname, s, end - s);
			specs[n].ifname[end - s] = '\0';
			n++;
			s = end;
			while (*s == ' ')
				s++;
			if (*s == ')')
				break;
			if (*s != ',') {
				pr_err("o2lnd: networks: missing ')' in '%s'\n",
				       name);
				return -EINVAL;
			}
			s++;
		}
		s++;
		if (*s && !o2_is_sep(*s)) {
			pr_err("o2lnd: networks: garbage after ')' at '%s'\n", s);
			return -EINVAL;
		}
	}
	if (!n) {
		pr_err("o2lnd: networks: no network given\n");
		return -EINVAL;
	}
	return n;
}

static int o2_ifaddr(const char *ifname, __be32 *addr)
{
	struct net_device *dev = dev_get_by_name(&init_net, ifname);
	const struct in_ifaddr *ifa = NULL;
	struct in_device *in_dev;
	int rc = -EADDRNOTAVAIL;

	if (!dev) {
		pr_err("o2lnd: networks: no interface '%s'\n", ifname);
		return -ENODEV;
	}
	rcu_read_lock();
	in_dev = __in_dev_get_rcu(dev);
	if (in_dev)
		ifa = rcu_dereference(in_dev->ifa_list);
	if (ifa) {
		*addr = ifa->ifa_local;
		rc = 0;
	}
	rcu_read_unlock();
	dev_put(dev);
	if (rc)
		pr_err("o2lnd: networks: interface '%s' has no IPv4 address\n",
		       ifname);
	return rc;
}

/*
 * Listen on @ni's address and take its device.  @quiet: a retry of a
 * detached NI (o2_nis_reattach()), which logs nothing while no device
 * serves the interface.  Caller holds o2_nis_mutex, or is starting.
 */
static int o2_ni_listen(struct o2_ni *ni, bool quiet)
{
	struct sockaddr_in sin = {};
	struct rdma_cm_id *id;
	struct o2_dev *dev;
	char nid[O2_NIDSTR_SIZE];
	int rc;

	id = rdma_create_id(&init_net, o2_cm_handler, ni, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		pr_err("o2lnd: %s: cannot create a cm_id: %ld\n", ni->net,
		       PTR_ERR(id));
		return PTR_ERR(id);
	}
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = ni->addr;
	sin.sin_port = htons(o2_service);
	rc = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!rc && !id->device)
		rc = -ENODEV;
	if (quiet && rc)
		goto err;
	if (rc == -ENODEV || rc == -EADDRNOTAVAIL) {
		pr_err("o2lnd: %s: no RDMA device for %pI4 (%s): %d\n",
		       ni->net, &ni->addr, ni->ifname, rc);
		goto err;
	}
	if (rc) {
		pr_err("o2lnd: %s: cannot bind %pI4:%d (%s): %d\n", ni->net,
		       &ni->addr, o2_service, ni->ifname, rc);
		goto err;
	}
	rc = rdma_listen(id, 256);
	if (rc) {
		pr_err_ratelimited("o2lnd: %s: cannot listen on %pI4:%d: %d\n",
				   ni->net, &ni->addr, o2_service, rc);
		goto err;
	}
	dev = o2_dev_get(id->device);
	if (IS_ERR(dev)) {
		rc = PTR_ERR(dev);
		goto err;
	}
	ni->dev = dev;
	strscpy(ni->devname, dev_name(&id->device->dev), sizeof(ni->devname));
	ni->listen_id = id;
	pr_info("o2lnd: NI %s on %s (%s), listening on port %d\n",
		o2_nid_format(ni->nid, nid, sizeof(nid)), ni->ifname,
		ni->devname, o2_service);
	return 0;
err:
	rdma_destroy_id(id);
	return rc;
}

static int o2_ni_create(const struct o2_ni_spec *spec, u32 index)
{
	struct o2_ni *ni;
	__be32 addr;
	u64 nid;
	int rc;

	rc = o2_ifaddr(spec->ifname, &addr);
	if (rc)
		return rc;
	nid = o2_make_nid(spec->net, ntohl(addr));
	if (o2_ni_by_nid(nid)) {
		pr_err("o2lnd: networks: interface '%s' given twice in a network\n",
		       spec->ifname);
		return -EINVAL;
	}
	ni = kzalloc(sizeof(*ni), GFP_KERNEL);
	if (!ni)
		return -ENOMEM;
	refcount_set(&ni->ref, 1);
	spin_lock_init(&ni->lock);
	spin_lock_init(&ni->conns_lock);
	INIT_LIST_HEAD(&ni->conns);
	hash_init(ni->peers);
	atomic_set(&ni->tx_live, 0);
	o2_tx_pool_init(ni);
	o2_txcr_init(&ni->txcr, o2_credits);
	INIT_LIST_HEAD(&ni->credit_q);
	INIT_LIST_HEAD(&ni->ready);
	INIT_WORK(&ni->credit_work, o2_ni_credit_work);
	ni->index = index;
	ni->nid = nid;
	ni->addr = addr;
	ni->stamp = ktime_get_real_ns();
	o2_net_format(spec->net, ni->net, sizeof(ni->net));
	strscpy(ni->ifname, spec->ifname, sizeof(ni->ifname));
	rc = o2_ni_listen(ni, false);
	if (rc) {
		kfree(ni);
		return rc;
	}
	list_add_tail(&ni->list, &o2_nis);
	o2_nnis++;
	return 0;
}

/**
 * o2_nis_start() - create the NIs of the networks parameter
 * @networks: e.g. "o2ib0(eth0) o2ib1(eth1)"
 *
 * Return: 0, or an errno after a pr_err() and with nothing left behind.
 */
int o2_nis_start(const char *networks)
{
	struct o2_ni_spec *specs;
	struct o2_ni *ni;
	int n, i, rc = 0;

	specs = kcalloc(O2_MAX_NETS, sizeof(*specs), GFP_KERNEL);
	if (!specs)
		return -ENOMEM;
	n = o2_networks_parse(networks, specs, O2_MAX_NETS);
	if (n < 0)
		rc = n;
	for (i = 0; i < n && !rc; i++)
		rc = o2_ni_create(&specs[i], i);
	kfree(specs);
	if (rc) {
		o2_nis_stop();
		o2_nis_free();
		return rc;
	}
	rc = o2_rtr_init();
	if (rc) {
		o2_nis_stop();
		o2_nis_free();
		return rc;
	}
	list_for_each_entry(ni, &o2_nis, list)
		WRITE_ONCE(ni->up, true);
	return 0;
}

static void o2_ni_stop_listening(struct o2_ni *ni)
{
	struct rdma_cm_id *id;

	lockdep_assert_held(&o2_nis_mutex);
	WRITE_ONCE(ni->up, false);
	id = ni->listen_id;
	WRITE_ONCE(ni->listen_id, NULL);
	if (id)
		rdma_destroy_id(id);
	if (ni->dev) {
		o2_dev_put(ni->dev);
		ni->dev = NULL;
	}
}

/**
 * o2_ni_get_dev() - the device of @ni, for a new registration
 * @ni: the NI
 *
 * Return: the o2_dev with a users reference (o2_dev_put() it), or
 * ERR_PTR(-ENETDOWN) while the NI has no device.
 */
struct o2_dev *o2_ni_get_dev(struct o2_ni *ni)
{
	struct o2_dev *dev = ERR_PTR(-ENETDOWN);

	mutex_lock(&o2_nis_mutex);
	if (ni->dev) {
		dev = ni->dev;
		atomic_inc(&dev->users);
	}
	mutex_unlock(&o2_nis_mutex);
	return dev;
}

/**
 * o2_nis_reattach() - attach detached NIs to a device serving their
 *	interface again
 *
 * An NI whose RDMA device went away (o2_ni_device_removed()) is
 * retried by connd once a second: when a device (the same one added
 * back, or a new one on the interface) answers for the NI's address,
 * it listens again and goes up.  Its peers reconnect on demand.  Sleeps.
 */
void o2_nis_reattach(void)
{
	char nid[O2_NIDSTR_SIZE];
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	list_for_each_entry(ni, &o2_nis, list) {
		if (!ni->detached || READ_ONCE(ni->shutdown) || ni->listen_id)
			continue;
		if (o2_ni_listen(ni, true))
			continue;
		ni->detached = false;
		WRITE_ONCE(ni->up, true);
		pr_info("o2lnd: %s: NI %s up again on %s (%s)\n", ni->net,
			o2_nid_format(ni->nid, nid, sizeof(nid)), ni->devname,
			ni->ifname);
	}
	mutex_unlock(&o2_nis_mutex);
}

/* Close every conn of @ni (or only those on @ibdev when non-NULL). */
static void o2_ni_close_conns(struct o2_ni *ni, struct ib_device *ibdev,
			      int error)
{
	struct o2_conn *conn, *found;
	struct o2_peer *peer;
	int bkt;

	do {
		found = NULL;
		spin_lock(&ni->lock);
		hash_for_each(ni->peers, bkt, peer, node) {
			list_for_each_entry(conn, &peer->conns, peer_list) {
				struct o2_dev *dev = READ_ONCE(conn->dev);

				if (ibdev && (!dev || dev->ibdev != ibdev))
					continue;
				kref_get(&conn->ref);
				found = conn;
				goto out;
			}
		}
out:
		spin_unlock(&ni->lock);
		if (!found && !ibdev) {
			/* parked requests (fault injection) */
			spin_lock(&ni->conns_lock);
			list_for_each_entry(conn, &ni->conns, ni_list) {
				if (conn->parked &&
				    READ_ONCE(conn->state) < O2_CONN_CLOSING) {
					kref_get(&conn->ref);
					found = conn;
					break;
				}
			}
			spin_unlock(&ni->conns_lock);
		}
		if (found) {
			o2_conn_close(found, error);
			o2_conn_put(found);
		}
	} while (found);
}

/**
 * o2_ni_device_removed() - an RDMA device is going away
 * @ibdev: the device
 *
 * Stops the listeners bound to it (their NIs go DOWN) and closes the
 * conns using it.  Sleeps.
 */
void o2_ni_device_removed(struct ib_device *ibdev)
{
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	list_for_each_entry(ni, &o2_nis, list) {
		if (ni->dev && ni->dev->ibdev == ibdev && ni->listen_id) {
			pr_warn("o2lnd: %s: RDMA device %s removed, NI down until a device serves %s again\n",
				ni->net, ni->devname, ni->ifname);
			o2_ni_stop_listening(ni);
			ni->detached = !READ_ONCE(ni->shutdown);
		}
	}
	mutex_unlock(&o2_nis_mutex);
	/* every conn of a detached NI, and the others' on @ibdev */
	list_for_each_entry(ni, &o2_nis, list)
		o2_ni_close_conns(ni, ni->detached ? NULL : ibdev, -ENODEV);
}

/* The NI of a NET_SHOW index (1..), or NULL. */
static struct o2_ni *o2_ni_by_index(u32 ni_index)
{
	struct o2_ni *ni;

	list_for_each_entry(ni, &o2_nis, list)
		if (ni_index && ni->index == ni_index - 1)
			return ni;
	return NULL;
}

/* uapi O2LND_CONN_* of a conn state: DISCONNECTED is a zombie */
static u32 o2_conn_state_uapi(enum o2_conn_state state)
{
	return state == O2_CONN_DISCONNECTED ? O2LND_CONN_ZOMBIE : state;
}

static u32 o2_ms_left(unsigned long deadline, unsigned long now)
{
	return time_after(deadline, now) ? jiffies_to_msecs(deadline - now) :
					   0;
}

/**
 * o2_peer_show() - PEER_SHOW: the @index-th peer of an NI
 * @ni_index: NET_SHOW index of the NI (1..)
 * @index: 0-based peer index in the NI's peer table
 * @out: zeroed output
 *
 * Counts the peer's conns by state over every conn of the NI, so closing
 * and zombie conns (no longer on the peer's list) are included.
 *
 * Return: 0 or -ENOENT.
 */
int o2_peer_show(u32 ni_index, u32 index, struct o2lnd_ioc_peer *out)
{
	struct o2_ni *ni = o2_ni_by_index(ni_index);
	unsigned long now = jiffies;
	struct o2_peer *peer, *found = NULL;
	struct o2_conn *conn;
	u32 n = 0;
	int bkt;

	if (!ni)
		return -ENOENT;
	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		if (n++ == index)
			found = peer;
	}
	out->count = n;
	if (found) {
		peer = found;
		out->state = peer->state;
		out->nid = peer->nid;
		out->incarnation = peer->incarnation;
		spin_lock(&ni->conns_lock);
		list_for_each_entry(conn, &ni->conns, ni_list)
			if (conn->peer == peer)
				out->conns[o2_conn_state_uapi(READ_ONCE(conn->state))]++;
		spin_unlock(&ni->conns_lock);
		o2_ctl_peer_counters(peer, out);
		out->last_error = peer->last_error;
		out->last_reject = peer->last_reject;
		out->next_retry_ms = peer->reconnect ?
				     o2_ms_left(peer->reconnect_at, now) : 0;
		out->backoff_ms = peer->backoff_ms;
		out->tx_queued = list_count_nodes(&peer->tx_queue);
		out->tx_credits = peer->txcr.avail;
		out->tx_credits_max = peer->txcr.max;
		out->tx_credits_min = peer->txcr.min;
		out->credit_queued = peer->txcr.queued;
		out->health = peer->down ? O2LND_HEALTH_DOWN : O2LND_HEALTH_UP;
		out->failures = peer->failures;
		out->downs = peer->downs;
		out->alive_ms = READ_ONCE(peer->alive) ?
				jiffies_to_msecs(now - READ_ONCE(peer->alive)) :
				~0U;
		o2_rtr_peer_show(peer, out);
	}
	spin_unlock(&ni->lock);
	return found ? 0 : -ENOENT;
}

/**
 * o2_conn_show() - CONN_SHOW: the @index-th conn of an NI, any state
 * @ni_index: NET_SHOW index of the NI (1..)
 * @index: 0-based index in the NI's conn list
 * @out: zeroed output
 *
 * Return: 0 or -ENOENT.
 */
int o2_conn_show(u32 ni_index, u32 index, struct o2lnd_ioc_conn *out)
{
	struct o2_ni *ni = o2_ni_by_index(ni_index);
	struct o2_conn *conn, *found = NULL;
	unsigned long now = jiffies;
	u32 n = 0;

	if (!ni)
		return -ENOENT;
	spin_lock(&ni->conns_lock);
	list_for_each_entry(conn, &ni->conns, ni_list) {
		if (n++ == index)
			found = conn;
	}
	out->count = n;
	if (found) {
		conn = found;
		spin_lock(&conn->lock);
		out->state = o2_conn_state_uapi(conn->state);
		out->peer_nid = conn->peer->nid;
		out->peer_stamp = conn->peer_stamp;
		out->phase = conn->phase;
		out->active = conn->active;
		out->age_ms = jiffies_to_msecs(now - conn->created);
		if (conn->state == O2_CONN_ACTIVE_CONNECT ||
		    conn->state == O2_CONN_PASSIVE_WAIT)
			out->deadline_ms = o2_ms_left(conn->deadline, now);
		out->queue_depth = conn->cp.queue_depth;
		out->max_frags = conn->cp.max_frags;
		out->credits = conn->cr.credits;
		out->outstanding = conn->cr.outstanding;
		out->nposted = conn->cr.nposted;
		out->tx_queued = list_count_nodes(&conn->tx_queue) +
				 list_count_nodes(&conn->tx_queue_rsrvd);
		out->reserved_credits = conn->cr.reserved;
		out->concurrent_sends = conn->cr.concurrent_sends;
		out->sq_size = conn->cr.sq_size;
		out->sq_free = conn->cr.sq_size - conn->cr.sq_used;
		out->noops_posted = conn->cr.noops_posted;
		out->noops_queued = list_count_nodes(&conn->tx_queue_nocred);
		out->idle_ms = conn->last_send ?
			       jiffies_to_msecs(now - conn->last_send) : 0;
		o2_ctl_conn_counters(conn, out);
		out->error = conn->error;
		out->qp_num = conn->qp ? conn->qp->qp_num : 0;
		out->nrx = conn->rxs ? conn->nrx : 0;
		spin_unlock(&conn->lock);
	}
	spin_unlock(&ni->conns_lock);
	return found ? 0 : -ENOENT;
}

/**
 * o2_peer_close() - PEER_CLOSE: close every conn to @nid
 * @nid: the peer
 * @local_nid: the local NI, or O2LND_NID_ANY
 * @closed: out: conns closed
 *
 * Cancels a scheduled reconnect and the backoff too.  Sleeps.
 *
 * Return: 0, or -ENOENT when no NI (of @local_nid) knows the peer.
 */
int o2_peer_close(u64 nid, u64 local_nid, u32 *closed)
{
	struct o2_conn *conn, *found;
	struct o2_peer *peer;
	bool known = false;
	struct o2_ni *ni;

	*closed = 0;
	list_for_each_entry(ni, &o2_nis, list) {
		if (local_nid != O2LND_NID_ANY && ni->nid != local_nid)
			continue;
		do {
			found = NULL;
			spin_lock(&ni->lock);
			peer = o2_peer_find_locked(ni, nid);
			if (peer) {
				known = true;
				peer->reconnect = false;
				peer->backoff_ms = 0;
				o2_peer_update_state(peer);
				conn = list_first_entry_or_null(&peer->conns,
								struct o2_conn,
								peer_list);
				if (conn) {
					kref_get(&conn->ref);
					found = conn;
				}
			}
			spin_unlock(&ni->lock);
			if (found) {
				o2_conn_close(found, -ECONNABORTED);
				o2_conn_put(found);
				(*closed)++;
			}
		} while (found);
	}
	return known ? 0 : -ENOENT;
}

static void o2_wait_zero(atomic_t *count, const char *what)
{
	while (!wait_event_timeout(o2_exit_waitq, !atomic_read(count),
				   10 * HZ))
		pr_warn("o2lnd: waiting for %d %s to be freed\n",
			atomic_read(count), what);
}

/**
 * o2_nis_stop() - stop every NI and free everything hanging off it
 *
 * Stops listening, closes every conn (connd tears them down), fails the
 * txs still waiting for a conn, and waits until every conn and peer is
 * freed.  Sleeps; bounded by the teardowns.
 */
void o2_nis_stop(void)
{
	struct o2_peer *peer;
	struct hlist_node *tmp;
	struct o2_ni *ni;
	LIST_HEAD(fail);
	int bkt;

	mutex_lock(&o2_nis_mutex);
	list_for_each_entry(ni, &o2_nis, list) {
		spin_lock(&ni->lock);
		ni->shutdown = true;
		spin_unlock(&ni->lock);
		o2_ni_stop_listening(ni);
	}
	mutex_unlock(&o2_nis_mutex);

	list_for_each_entry(ni, &o2_nis, list) {
		/* nothing waits for credits any more, so nothing is handed on */
		o2_ni_take_credit_waits(ni, jiffies, true, &fail);
		o2_tx_fail_list(&fail, -ESHUTDOWN);
		flush_work(&ni->credit_work);
		o2_ni_close_conns(ni, NULL, -ESHUTDOWN);
		spin_lock(&ni->lock);
		hash_for_each(ni->peers, bkt, peer, node) {
			peer->reconnect = false;
			o2_peer_update_state(peer);
			list_splice_init(&peer->tx_queue, &fail);
		}
		spin_unlock(&ni->lock);
		o2_tx_fail_list(&fail, -ESHUTDOWN);
	}
	/* exchanges still waiting hold conns and device users */
	o2_rtr_expire(jiffies, true);
	o2_bulk_expire(jiffies, true);
	o2_wait_zero(&o2_nconns, "connections");

	list_for_each_entry(ni, &o2_nis, list) {
		spin_lock(&ni->lock);
		hash_for_each_safe(ni->peers, bkt, tmp, peer, node) {
			hash_del(&peer->node);
			peer->in_table = false;
			o2_peer_put(peer);
		}
		spin_unlock(&ni->lock);
	}
	o2_wait_zero(&o2_npeers, "peers");
}

/**
 * o2_nis_free() - free the stopped NIs
 *
 * Called after o2_nis_stop() once connd and the ib_client are gone.
 */
void o2_nis_free(void)
{
	struct o2_ni *ni, *next;

	list_for_each_entry_safe(ni, next, &o2_nis, list) {
		list_del(&ni->list);
		WARN_ON(!refcount_dec_and_test(&ni->ref));
		WARN_ON(atomic_read(&ni->tx_live));
		o2_tx_pool_free(ni);
		kfree(ni);
	}
	o2_nnis = 0;
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
	/* bulk messages and NOOPs belong to their conn */
	if (tx->type != O2_MSG_IMMEDIATE || tx->resends >= 1 || !tx->nid ||
	    READ_ONCE(tx->ni->shutdown) || time_after(jiffies, tx->deadline))
		return false;
	return error == -EIO || error == -ECONNRESET || error == -ESTALE ||
	       error == -ECONNABORTED || error == -EALREADY;
}

/* o2_up->resend(): launch @tx again if o2_tx_may_resend() allows it. */
static bool o2_lnet_resend(struct o2_tx *tx, int error)
{
	if (!o2_tx_may_resend(tx, error))
		return false;
	tx->resends++;
	tx->conn = NULL;
	tx->status = 0;
	o2_ni_launch(tx->ni, tx->nid, tx);
	return true;
}

/* o2_up->peer_init(): a new peer's LNet tx credits and router credits. */
static void o2_lnet_peer_init(struct o2_peer *peer)
{
	o2_txcr_init(&peer->txcr, o2_peer_credits);
	o2_txcr_init(&peer->rtrcr, o2_rtr_peer_credits());
}

/*
 * o2_up->tx_finalize(): a tx LNet launched is released.  A timeout counts
 * against its peer's health; its credits go to the next waiter.  The
 * release drops the peer reference itself, last.
 */
static void o2_lnet_tx_finalize(struct o2_tx *tx)
{
	if (tx->status == -ETIMEDOUT) {
		atomic64_inc(&tx->peer->st.tx_timeouts);
		o2_peer_health(tx->peer, false);
	}
	o2_tx_credits_return(tx);
}

/* o2_up->conn_closed(): the bulk exchanges and router messages on it end. */
static void o2_lnet_conn_closed(struct o2_conn *conn)
{
	o2_bulk_conn_closed(conn);
	o2_rtr_conn_closed(conn);
}

/* o2_up->tick(): LNet's deadlines, from connd's scan. */
static void o2_lnet_tick(unsigned long now, bool reattach)
{
	struct o2_ni *ni;

	if (reattach)
		o2_nis_reattach();
	o2_bulk_expire(now, false);
	o2_rtr_expire(now, false);
	/* messages waiting for LNet tx credits past their deadline fail */
	list_for_each_entry(ni, &o2_nis, list)
		o2_ni_expire_credit_waits(ni, now);
}

/* How the transport reaches LNet (set as o2_up at load). */
const struct o2_lnet_ops o2_lnet_ops = {
	.peer_init = o2_lnet_peer_init,
	.recv = o2_lnet_recv,
	.bulk_rx = o2_bulk_rx,
	.health = o2_peer_health,
	.tx_finalize = o2_lnet_tx_finalize,
	.resend = o2_lnet_resend,
	.conn_closed = o2_lnet_conn_closed,
	.tick = o2_lnet_tick,
	.device_removed = o2_ni_device_removed,
};
