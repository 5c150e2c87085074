// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet ping, as Lustre's lctl ping speaks it: the client (a GET on
 * the reserved portal, its REPLY matched by cookie) and the server (the
 * REPLY carrying our ping info); and the push, the same ping info sent
 * as a PUT on that portal, its LNet ACK matched by cookie.  Our ping info
 * says what LNet 2.12+ says: Multi-Rail and discovery, every NI with its
 * status, and the sequence number of the info in 0@lo's status.
 */
#include <linux/slab.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include <linux/swab.h>
#include "lnet.h"

#define O2_PING_BUF_SIZE (sizeof(struct o2_ping_info) + \
			  O2LND_PING_MAX_IDS * sizeof(struct o2_ping_ni))

/*
 * A REPLY cut to our buffer holds 0@lo and at most O2LND_PING_MAX_IDS - 1
 * NIDs; the view must keep every one of them, or a ping would list fewer
 * NIDs than it received.
 */
static_assert(O2_PING_VIEW_MAX + 1 >= O2LND_PING_MAX_IDS);

/**
 * struct o2_ping_req - a ping waiting for its REPLY
 * @w: its wait in the pending table (@w.cookie: the GET's return_wmd
 *	object cookie, a push's ack_wmd); it finishes when the REPLY (a
 *	push: the ACK) and the Send completion both arrived (a tx completes
 *	only after its Send completion, even when the reply is faster), or
 *	the GET (PUT) failed
 * @nid: the target
 * @push: a push waiting for its ACK, not a ping
 * @routed: @nid is on another network than @ni (its answer may come from
 *	any NID there: o2_lnet_answer_from())
 * @replied: the REPLY (ACK) arrived
 * @sent: the GET's Send completed
 * @ni: the NI it was sent from (for the early_replies count)
 * @len: reply bytes in @buf
 * @buf: the reply's ping info
 */
struct o2_ping_req {
	struct o2_pend_wait w;
	u64 nid;
	bool push;
	bool routed;
	bool replied;
	bool sent;
	struct o2_ni *ni;
	u32 len;
	u8 buf[O2_PING_BUF_SIZE];
};

static bool o2_pings_stopped;	/* o2_pend_lock(): no ping waits any more */

/**
 * o2_pings_stop() - at unload: every ping and push waiting ends now
 *	(-ESHUTDOWN), and none waits from now on
 *
 * No ioctl runs at unload (an open /dev/o2lnd holds the module): what
 * waits is the module's own (a gateway check, a recovery ping, a push),
 * which must not hold the unload for its timeout.
 */
void o2_pings_stop(void)
{
	struct o2_ping_req *ping;
	u64 cookie = 0;

	o2_pend_lock();
	o2_pings_stopped = true;
	while ((ping = o2_pend_next_locked(&cookie, O2_PEND_PING))) {
		o2_pend_wait_finish_locked(&ping->w, -ESHUTDOWN);
		cookie++;
	}
	o2_pend_unlock();
}

/*
 * Add @ping to the pending table, unless pings were stopped.
 * Return: 0, -ENOMEM or -ESHUTDOWN (nothing added).
 */
static int o2_ping_wait_add(struct o2_ping_req *ping)
{
	bool stopped;
	int rc = o2_pend_wait_add(&ping->w, ping, O2_PEND_PING);

	if (rc)
		return rc;
	/* o2_pings_stop() either sees it in the table or we see the flag */
	o2_pend_lock();
	stopped = o2_pings_stopped;
	o2_pend_unlock();
	if (!stopped)
		return 0;
	o2_pend_wait_end(&ping->w, 0);
	return -ESHUTDOWN;
}

/*
 * The NID the ping (@push: the push) with @cookie was sent to, if an
 * answer from @from may be taken for it (o2_lnet_answer_from()), else 0.
 * The peer's NIDs are looked up outside the table's lock (a leaf).
 */
static u64 o2_ping_answer_nid(u64 cookie, u64 from, bool push)
{
	struct o2_ping_req *ping;
	bool routed = false;
	u64 nid = 0;

	o2_pend_lock();
	ping = o2_pend_find_locked(cookie, O2_PEND_PING);
	if (ping && ping->push == push) {
		nid = ping->nid;
		routed = ping->routed;
	}
	o2_pend_unlock();
	return nid && o2_lnet_answer_from(nid, from, routed) ? nid : 0;
}

/*
 * Finish the ping with @cookie: with @status, or with the reply @data
 * when it came from @from, the pinged NID or one that may answer for it
 * (o2_ping_answer_nid()).  Return: false if no ping took it.
 */
bool o2_ping_finish(u64 cookie, u64 from, int status, const void *data,
		    u32 len)
{
	struct o2_ping_req *ping;
	bool found = false;
	u64 nid = 0;

	if (data) {
		nid = o2_ping_answer_nid(cookie, from, false);
		if (!nid)
			return false;
	}
	o2_pend_lock();
	ping = o2_pend_find_locked(cookie, O2_PEND_PING);
	if (ping && !ping->w.finished &&
	    !(data && (ping->push || ping->nid != nid || ping->replied))) {
		found = true;
		if (data) {
			ping->replied = true;
			ping->len = min_t(u32, len, sizeof(ping->buf));
			memcpy(ping->buf, data, ping->len);
			if (!ping->sent)
				atomic64_inc(&ping->ni->stats.early_replies);
		} else if (!status) {
			ping->sent = true;
		}
		/* done once both halves are in, or at the first error */
		if (status || (ping->replied && ping->sent))
			o2_pend_wait_finish_locked(&ping->w, status);
	}
	o2_pend_unlock();
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

/**
 * o2_push_acked() - an LNet ACK arrived: is it for a push of ours?
 * @cookie: its dst_wmd object cookie
 * @from: the NID it came from: the one pushed to, or another NID of that
 *	Multi-Rail peer (the ACK's path failed and was chosen anew)
 *
 * Return: true if it was (that push's ACK half is in).
 */
bool o2_push_acked(u64 cookie, u64 from)
{
	struct o2_ping_req *ping;
	bool found = false;
	u64 nid = o2_ping_answer_nid(cookie, from, true);

	if (!nid)
		return false;
	o2_pend_lock();
	ping = o2_pend_find_locked(cookie, O2_PEND_PING);
	if (ping && ping->push && !ping->w.finished && !ping->replied &&
	    ping->nid == nid) {
		found = true;
		ping->replied = true;
		if (ping->sent)
			o2_pend_wait_finish_locked(&ping->w, 0);
	}
	o2_pend_unlock();
	return found;
}

/* Append @n bytes of @src to @buf at @len, truncating at @size. */
static u32 o2_put_trunc(void *buf, u32 size, u32 len, const void *src, u32 n)
{
	n = min_t(u32, n, size - min(len, size));
	memcpy(buf + len, src, n);
	return len + n;
}

/**
 * o2_ping_info_fill() - our ping info, as LNet's ping target has it
 * @buf: where
 * @size: at most this many bytes (the rest is cut)
 *
 * Features: Multi-Rail and NI status always, discovery unless
 * lnet_peer_discovery_disabled=1 (as LNet clears it); RTE_DISABLED when
 * this node does not forward, as LNet sets it whenever routing is off: a
 * Lustre node that has a route through us then marks that route down
 * ("being used as a gateway but routing feature is not turned on")
 * instead of sending into our drops.
 *
 * Return: its bytes.
 */
u32 o2_ping_info_fill(void *buf, u32 size)
{
	struct o2_ping_info pi = {};
	struct o2_ping_ni ent = {};
	struct o2_ni *ni;
	u32 len, nnis = 1;	/* 0@lo */

	pi.magic = cpu_to_le32(O2_PING_MAGIC);
	pi.features = cpu_to_le32(O2_PING_FEAT_BASE | O2_PING_FEAT_NI_STATUS |
				  O2_PING_FEAT_MULTI_RAIL |
				  (o2_discovery_disabled ? 0 :
				   O2_PING_FEAT_DISCOVERY) |
				  (READ_ONCE(o2_forwarding) ? 0 :
				   O2_PING_FEAT_RTE_DISABLED));
	pi.pid = cpu_to_le32(O2LND_PID_LUSTRE);
	/* written last, with the NIs counted */
	len = min_t(u32, sizeof(pi), size);

	ent.nid = cpu_to_le64(O2LND_LO_NID);
	ent.status = cpu_to_le32(o2_ping_seqno());
	len = o2_put_trunc(buf, size, len, &ent, sizeof(ent));
	/* NET_ADD and NET_DEL may change the list meanwhile: count here */
	o2_for_each_ni(ni) {
		if (READ_ONCE(ni->shutdown))
			continue;
		ent.nid = cpu_to_le64(ni->nid);
		ent.status = cpu_to_le32(READ_ONCE(ni->up) ?
					 O2LND_NI_STATUS_UP :
					 O2LND_NI_STATUS_DOWN);
		len = o2_put_trunc(buf, size, len, &ent, sizeof(ent));
		nnis++;
	}
	pi.nnis = cpu_to_le32(nnis);
	o2_put_trunc(buf, size, 0, &pi, sizeof(pi));
	return len;
}

/*
 * A GET arrived: a ping of ours (the reserved portal, the ping match
 * bits) is answered with a REPLY carrying our ping info; any other GET is
 * dropped.
 */
void o2_ping_get_rx(struct o2_conn *conn, const struct o2_lnet_hdr *hdr)
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

/*
 * The REPLY of a ping, parsed once (o2_ping_info_unpack(): either byte
 * order, 0@lo first, no zero NID, cut to our buffer when the peer has more
 * NIDs than it holds): what the caller sees, LNet's way (0@lo first, then
 * the peer's NIDs, primary first; @n_ids all the peer listed), and what
 * discovery.c learns of the peer (its NIDs, for Multi-Rail).
 */
static int o2_ping_parse(struct o2_ping_req *ping, struct o2lnd_ioc_ping *out)
{
	struct o2_ping_view *v = kmalloc(sizeof(*v), GFP_KERNEL);
	u32 i;
	int rc;

	if (!v)
		return -ENOMEM;
	rc = o2_ping_info_unpack(ping->buf, ping->len, true, v);
	if (!rc) {
		out->pid = v->pid;
		out->n_ids = v->nnis + 1;
		out->ids[0].nid = O2LND_LO_NID;
		out->ids[0].status = v->lo_status;
		for (i = 0; i < v->n && i + 1 < out->max_ids; i++) {
			out->ids[i + 1].nid = v->ni[i].nid;
			out->ids[i + 1].status = v->ni[i].status;
		}
		o2_lpeer_learn(v, false);
	}
	kfree(v);
	return rc;
}

/**
 * o2_ping() - LNet ping of @nid
 * @nid: target (an o2ib NID, validated by the caller)
 * @src_nid: local NID to send from, or O2LND_NID_ANY
 * @any_rail: @nid names a peer, not a path: with @src_nid O2LND_NID_ANY,
 *	a Multi-Rail peer is pinged at whichever of its NIDs, from whichever
 *	NI, the selection picks (o2_lnet_select()), as LNet's `lctl ping`
 *	is; else @nid itself (discovery, recovery pings)
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
int o2_ping(u64 nid, u64 src_nid, bool any_rail, u32 timeout_ms,
	    struct o2lnd_ioc_ping *out)
{
	struct o2_lnet_hdr *hdr;
	struct o2_ping_req *ping;
	struct o2_ni *ni;
	struct o2_tx *tx;
	ktime_t start;
	int rc;

	if (any_rail)
		ni = o2_lnet_select(nid, src_nid, 0, &nid, &rc);
	else
		ni = o2_ni_for(nid, src_nid, &rc);
	if (!ni)
		return rc;

	ping = kzalloc(sizeof(*ping), GFP_KERNEL);
	if (!ping)
		return -ENOMEM;
	ping->ni = ni;
	ping->nid = nid;
	ping->routed = o2_nid_net(nid) != o2_nid_net(ni->nid);
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		kfree(ping);
		return -ENOBUFS;
	}
	rc = o2_ping_wait_add(ping);
	if (rc) {
		o2_tx_put(tx);
		kfree(ping);
		return rc;
	}
	hdr = tx->msg + sizeof(struct o2_msg_hdr);
	hdr->dest_nid = cpu_to_le64(nid);
	hdr->src_nid = cpu_to_le64(ni->nid);
	hdr->dest_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	hdr->src_pid = cpu_to_le32(O2LND_PID_LUSTRE);
	hdr->type = cpu_to_le32(O2_LNET_MSG_GET);
	hdr->payload_length = 0;
	hdr->msg.get.return_wmd.interface_cookie = cpu_to_le64(ni->stamp);
	hdr->msg.get.return_wmd.object_cookie = cpu_to_le64(ping->w.cookie);
	hdr->msg.get.match_bits = cpu_to_le64(O2_LNET_PING_MATCHBITS);
	hdr->msg.get.ptl_index = cpu_to_le32(O2_LNET_RESERVED_PORTAL);
	hdr->msg.get.src_offset = 0;
	hdr->msg.get.sink_length = cpu_to_le32(O2_PING_BUF_SIZE);
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*hdr);
	tx->cookie = ping->w.cookie;
	tx->done = o2_ping_tx_done;
	/* no use sending it once nobody waits for the reply */
	tx->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	tx->has_deadline = true;

	start = ktime_get();
	o2_ni_launch(ni, nid, tx);
	rc = o2_pend_wait_end(&ping->w, timeout_ms);
	if (!rc) {
		out->rtt_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
		rc = o2_ping_parse(ping, out);
	}
	kfree(ping);
	return rc;
}

/**
 * o2_push() - push our ping info to @nid
 * @nid: a NID of the peer (an o2ib NID)
 * @timeout_ms: how long to wait for its ACK; 0: ask for no ACK, return
 *	once it is launched
 *
 * A PUT of our ping info on the reserved portal with the ping match
 * bits, as LNet's discovery pushes.  May sleep.
 *
 * Return: 0 (ACKed, or launched); -ETIMEDOUT (no ACK), -EHOSTUNREACH,
 * -ENETDOWN, -ENOBUFS, -EINTR, the PUT's errno.
 */
int o2_push(u64 nid, u32 timeout_ms)
{
	struct o2_ping_req *req = NULL;
	struct o2_lnet_hdr *h;
	struct o2_tx *tx;
	struct o2_ni *ni;
	u32 room, len;
	int rc;

	ni = o2_ni_for(nid, O2LND_NID_ANY, &rc);
	if (!ni)
		return rc;
	if (timeout_ms) {
		req = kzalloc(sizeof(*req), GFP_KERNEL);
		if (!req)
			return -ENOMEM;
		req->ni = ni;
		req->nid = nid;
		req->push = true;
		req->routed = o2_nid_net(nid) != o2_nid_net(ni->nid);
	}
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		kfree(req);
		return -ENOBUFS;
	}
	if (req) {
		rc = o2_ping_wait_add(req);
		if (rc) {
			o2_tx_put(tx);
			kfree(req);
			return rc;
		}
	}
	h = tx->msg + sizeof(struct o2_msg_hdr);
	room = O2_MAX_MSG_SIZE - sizeof(struct o2_msg_hdr) - sizeof(*h);
	len = o2_ping_info_fill(h + 1, room);
	o2_lnet_hdr_init(h, ni, nid, O2_LNET_MSG_PUT, len);
	h->msg.put.ptl_index = cpu_to_le32(O2_LNET_RESERVED_PORTAL);
	h->msg.put.match_bits = cpu_to_le64(O2_LNET_PING_MATCHBITS);
	if (req) {
		h->msg.put.ack_wmd.interface_cookie = cpu_to_le64(ni->stamp);
		h->msg.put.ack_wmd.object_cookie = cpu_to_le64(req->w.cookie);
		tx->cookie = req->w.cookie;
		tx->done = o2_ping_tx_done;
		tx->deadline = jiffies + msecs_to_jiffies(timeout_ms);
		tx->has_deadline = true;
	} else {
		o2_lnet_wmd_set_none(&h->msg.put.ack_wmd);
	}
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h) + len;
	rc = o2_ni_launch(ni, nid, tx);
	if (!req)
		return rc;
	rc = o2_pend_wait_end(&req->w, timeout_ms);
	kfree(req);
	return rc;
}
