// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: rdma_cm events.  o2_cm_handler() only dispatches; each event has
 * a small helper.  Helpers never destroy a cm_id: failures close the conn
 * (connd destroys the id later), except a refused CONNECT_REQUEST, where
 * the handler returns non-zero and the CM destroys the new id itself.
 */
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/in.h>
#include <linux/delay.h>
#include "lnd.h"
#include "trace.h"

#define O2_CM_RNR_RETRY_COUNT	6

static void o2_conn_param_init(struct rdma_conn_param *param,
			       const struct o2_connmsg *msg)
{
	memset(param, 0, sizeof(*param));
	param->private_data = msg;
	param->private_data_len = sizeof(*msg);
	param->retry_count = O2_CM_RETRY_COUNT;
	param->rnr_retry_count = O2_CM_RNR_RETRY_COUNT;
	param->flow_control = 1;
}

static const char *o2_peer_str(struct o2_peer *peer, char *buf)
{
	return o2_nid_format(peer->nid, buf, O2_NIDSTR_SIZE);
}

/* connd: the first step of an active connect, out of any CM callback */
static void o2_conn_connect_work(struct o2_conn *conn)
{
	struct sockaddr_in src = {}, dst = {};
	struct rdma_cm_id *id;
	int rc;

	spin_lock(&conn->lock);
	rc = conn->state == O2_CONN_ACTIVE_CONNECT ? 0 : -ECONNABORTED;
	spin_unlock(&conn->lock);
	if (rc)
		return;

	id = rdma_create_id(&init_net, o2_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		o2_conn_close(conn, PTR_ERR(id));
		return;
	}
	conn->cmid = id;
	rc = rdma_set_ack_timeout(id, o2_ack_timeout);
	if (rc) {
		o2_conn_close(conn, rc);
		return;
	}
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = conn->ni->addr;
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(o2_nid_addr(conn->peer->nid));
	dst.sin_port = htons(o2_service);
	rc = rdma_resolve_addr(id, (struct sockaddr *)&src,
			       (struct sockaddr *)&dst, O2_ADDR_TIMEOUT_MS);
	if (rc)
		o2_conn_close(conn, rc);
}

static void o2_conn_connect_fn(struct work_struct *work)
{
	struct o2_conn *conn = container_of(work, struct o2_conn,
					    connect_work);

	o2_conn_connect_work(conn);
	o2_conn_put(conn);
}

/**
 * o2_conn_start_active() - start an active connect to @peer
 * @peer: the peer
 * @extra: a connect beyond the peer's first (conns_per_peer)
 *
 * The conn enters ACTIVE_CONNECT on the peer's list at once (so later
 * sends queue behind it); connd creates the cm_id and resolves the
 * address.  The conn's teardown waits for this step (flush_work()).
 *
 * Callers decide to connect (o2_peer_connect_due()) under ni->lock, but
 * call this after dropping it (the conn's allocation may sleep): a send
 * and connd's scan can both decide so for one peer.  The decision is
 * taken again here, under the lock: a peer that has a conn by now gets
 * no second one, and its waiting messages go on the conn it has; a peer
 * whose connect (the other caller's) was rejected for good or put it in
 * BACKOFF meanwhile gets none either (its messages failed, or wait for
 * the reconnect).  An
 * @extra connect (conns_per_peer, from connd's scan) starts only while
 * o2_peer_wants_conn_locked() holds.
 *
 * Return: 0 (also when the peer has a conn already) or an errno.
 */
int o2_conn_start_active(struct o2_peer *peer, bool extra)
{
	struct o2_ni *ni = peer->ni;
	struct o2_conn *conn;

	conn = o2_conn_alloc(ni, peer, true);
	if (!conn)
		return -ENOMEM;
	/* before anyone can close it: its teardown flushes this work */
	INIT_WORK(&conn->connect_work, o2_conn_connect_fn);
	spin_lock(&ni->lock);
	if (ni->shutdown) {
		spin_unlock(&ni->lock);
		o2_conn_put(conn);
		return -ESHUTDOWN;
	}
	/* an NI whose device went away connects again once it is back */
	if (!READ_ONCE(ni->up)) {
		spin_unlock(&ni->lock);
		o2_conn_put(conn);
		return -ENETDOWN;
	}
	if (extra ? !o2_peer_wants_conn_locked(peer) :
		    !o2_peer_connect_due(!list_empty(&peer->conns),
					 peer->reconnect,
					 !list_empty(&peer->tx_queue))) {
		spin_unlock(&ni->lock);
		o2_conn_put(conn);
		return 0;
	}
	conn->extra = extra;
	spin_lock(&conn->lock);
	o2_conn_set_state(conn, O2_CONN_ACTIVE_CONNECT);
	conn->phase = O2_PHASE_ADDR;
	conn->deadline = jiffies + o2_connect_timeout();
	spin_unlock(&conn->lock);
	/* the allocation's reference becomes the peer list's */
	list_add_tail(&conn->peer_list, &peer->conns);
	peer->n.connects++;
	o2_peer_update_state(peer);
	trace_o2lnd_connect_phase(ni->nid, peer->nid, O2_PHASE_ADDR,
				  jiffies_to_msecs(o2_connect_timeout()));
	kref_get(&conn->ref);	/* for the connect work */
	spin_unlock(&ni->lock);
	atomic64_inc(&ni->stats.connects_active);

	queue_work(o2_connd_wq, &conn->connect_work);
	return 0;
}

/* Move to the next active phase; false if the conn is no longer active. */
static bool o2_conn_next_phase(struct o2_conn *conn, enum o2_conn_phase phase)
{
	bool ok;

	spin_lock(&conn->lock);
	ok = conn->state == O2_CONN_ACTIVE_CONNECT;
	if (ok) {
		conn->in_setup = phase == O2_PHASE_CONNECT;
		conn->phase = phase;
		conn->deadline = jiffies + o2_connect_timeout();
	}
	spin_unlock(&conn->lock);
	if (ok)
		trace_o2lnd_connect_phase(conn->ni->nid, conn->peer->nid, phase,
					  jiffies_to_msecs(o2_connect_timeout()));
	return ok;
}

static void o2_cm_addr_resolved(struct o2_conn *conn, struct rdma_cm_id *id)
{
	int rc;

	pr_debug("o2lnd: conn %p: address resolved\n", conn);
	if (!o2_conn_next_phase(conn, O2_PHASE_ROUTE))
		return;
	rc = rdma_resolve_route(id, O2_RESOLVE_TIMEOUT_MS);
	if (rc)
		o2_conn_close(conn, rc);
}

static void o2_cm_route_resolved(struct o2_conn *conn, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct o2_connmsg req = {};
	struct o2_fault_hit hit;
	int rc;

	pr_debug("o2lnd: conn %p: route resolved\n", conn);
	/* from here to the request, the teardown waits (conn->in_setup) */
	if (!o2_conn_next_phase(conn, O2_PHASE_CONNECT))
		return;
	/*
	 * CM_DELAY on ROUTE_RESOLVED: a device slow to make the QP, after
	 * the connect phase began, so a close may fall in between.
	 */
	if (o2_fault_fire(O2LND_FAULT_CM_DELAY, RDMA_CM_EVENT_ROUTE_RESOLVED,
			  conn->ni->nid, conn->peer->nid, &hit)) {
		msleep(hit.delay_ms);
		/* closed meanwhile: no QP, no request */
		if (READ_ONCE(conn->state) != O2_CONN_ACTIVE_CONNECT) {
			rc = 0;
			goto out;
		}
	}
	/*
	 * The port went down since the address was resolved: no connect
	 * request on it (connd.c: no CM message on a port that is down);
	 * the reconnect comes after the backoff.
	 */
	if (o2_dev_port_down(id)) {
		rc = -ENETDOWN;
		goto out;
	}
	rc = o2_conn_setup_qp(conn);
	/*
	 * The request goes out unless a race verdict withdrew this connect
	 * meanwhile (o2_cm_race(): the peer's request came first and was
	 * accepted) or it was closed: checked and marked at once, so a
	 * verdict sees either a request on the wire or one that never
	 * leaves.
	 */
	if (!rc) {
		spin_lock(&conn->lock);
		if (conn->req_barred || conn->state != O2_CONN_ACTIVE_CONNECT) {
			rc = -EALREADY;
		} else {
			conn->req_sent = true;
			conn->req_sent_at = jiffies;
		}
		spin_unlock(&conn->lock);
	}
	if (!rc) {
		req.cp = conn->cp;
		o2_msg_pack(&req, O2_MSG_CONNREQ, 0, sizeof(req), conn->ni->nid,
			    conn->ni->stamp, conn->peer->nid, 0, false);
		o2_conn_param_init(&param, &req);
		rc = rdma_connect_locked(id, &param);
	}
out:
	/* the QP is made: a teardown may go on (o2_conn_teardown_fn()) */
	spin_lock(&conn->lock);
	conn->in_setup = false;
	spin_unlock(&conn->lock);
	wake_up_all(&o2_exit_waitq);
	if (rc)
		o2_conn_close(conn, rc);
}

/* Validate a CONNACK; fill *ack.  Return: 0 or an errno. */
static int o2_connack_check(struct o2_conn *conn,
			    const struct rdma_conn_param *param,
			    struct o2_connmsg *ack)
{
	struct o2_msg_expect exp = {};
	u32 nob;
	int rc;

	nob = o2_msg_peek_nob(param->private_data, param->private_data_len);
	if (nob != sizeof(*ack) || param->private_data_len < nob)
		return -EPROTO;
	memcpy(ack, param->private_data, sizeof(*ack));
	exp.nob = nob;
	exp.srcnid = conn->peer->nid;
	exp.dstnid = conn->ni->nid;
	exp.dststamp = conn->ni->stamp;
	rc = o2_msg_unpack(ack, &exp);
	if (rc)
		return rc;
	if (ack->hdr.type != O2_MSG_CONNACK)
		return -EPROTO;
	if (ack->cp.queue_depth > conn->cp.queue_depth ||
	    ack->cp.queue_depth < 2 ||
	    ack->cp.max_frags > conn->cp.max_frags ||
	    ack->cp.max_msg_size != O2_MAX_MSG_SIZE)
		return -EPROTO;
	return 0;
}

/*
 * Both sides' connects can cross so that each accepts the other's (a
 * request that arrives while the receiver's own accept is still being
 * set up slips past the race check, and where Lustre's race rule and
 * o2lnd's disagree, each side yields to the other).  o2lnd then sends on
 * the conn opened by the higher NID (o2_race_we_win()), as another o2lnd
 * does, and marks the other surplus: it is closed once quiet
 * (o2_surplus_close_due(), connd), not now, as o2iblnd may already have
 * queued messages on it (it sends on all its conns in turn).  A connect
 * to our own NID has its two halves on one peer: they are one
 * connection.  Caller holds ni->lock.
 * Return: the conn made surplus, or NULL.
 */
static struct o2_conn *o2_peer_mark_surplus_locked(struct o2_conn *conn)
{
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	struct o2_conn *other, *spare;

	lockdep_assert_held(&ni->lock);
	if (peer->nid == ni->nid)
		return NULL;
	list_for_each_entry(other, &peer->conns, peer_list) {
		if (other == conn || other->active == conn->active ||
		    READ_ONCE(other->state) != O2_CONN_ESTABLISHED ||
		    other->surplus)
			continue;
		spare = conn->active == o2_race_we_win(ni->nid, peer->nid) ?
			other : conn;
		spare->surplus_at = jiffies;
		WRITE_ONCE(spare->surplus, true);
		return spare;
	}
	return NULL;
}

static void o2_cm_established(struct o2_conn *conn,
			      struct rdma_cm_event *event)
{
	struct o2_conn *spare = NULL;
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	char nid[O2_NIDSTR_SIZE];
	struct o2_connmsg ack;
	bool ok, stale = false;
	u64 stamp = 0;
	int rc;

	if (conn->active) {
		rc = o2_connack_check(conn, &event->param.conn, &ack);
		if (rc) {
			pr_warn_ratelimited("o2lnd: bad CONNACK from %s: %d\n",
					    o2_peer_str(peer, nid), rc);
			o2_conn_close(conn, rc);
			return;
		}
		stamp = ack.hdr.srcstamp;
	}

	spin_lock(&ni->lock);
	spin_lock(&conn->lock);
	ok = conn->state == O2_CONN_ACTIVE_CONNECT ||
	     conn->state == O2_CONN_PASSIVE_WAIT;
	if (ok) {
		if (conn->active) {
			/*
			 * Nothing was sent yet; grants that arrived early
			 * (before this event) stay counted.
			 */
			o2_credits_set_depth(&conn->cr, ack.cp.queue_depth);
			conn->cp.queue_depth = ack.cp.queue_depth;
			conn->cp.max_frags = ack.cp.max_frags;
			conn->peer_stamp = stamp;
			stale = peer->incarnation && peer->incarnation != stamp;
			peer->incarnation = stamp;
		}
		conn->phase = O2_PHASE_NONE;
		/* RDMAP: the initiator sends first (hold_sends: accept) */
		conn->greet = conn->active &&
			      rdma_protocol_iwarp(conn->cmid->device,
						  conn->cmid->port_num);
		conn->nudge = conn->greet;
		o2_conn_set_state(conn, O2_CONN_ESTABLISHED);
	}
	spin_unlock(&conn->lock);
	if (ok) {
		o2_peer_update_state(peer);
		spare = o2_peer_mark_surplus_locked(conn);
	}
	spin_unlock(&ni->lock);
	if (!ok)
		return;
	if (spare)
		pr_info_ratelimited("o2lnd: %s: two connections with %s after a race; the one %s opened closes once quiet\n",
				    ni->net, o2_peer_str(peer, nid),
				    spare->active ? "we" : "it");
	trace_o2lnd_connect_phase(ni->nid, peer->nid, O2_PHASE_NONE, 0);
	pr_info_ratelimited("o2lnd: %s: connected to %s (%s, queue depth %u)\n",
			    ni->net, o2_peer_str(peer, nid),
			    conn->active ? "active" : "passive",
			    conn->cp.queue_depth);
	if (stale)
		o2_peer_close_stale(peer, stamp);
	o2_conn_established(conn);
}

/* Decide what a reject means (o2_reject_retry_ms() in state.c).  Caller
 * holds ni->lock.  Return: retry delay in jiffies, or -1 to give up.
 */
static long o2_reject_decide(struct o2_conn *conn, const struct o2_rej *rej)
{
	struct o2_peer *peer = conn->peer;
	long ms = o2_reject_retry_ms(rej->why, &rej->cp, &peer->cp,
				     &peer->races, &peer->retries,
				     get_random_u32());

	return ms < 0 ? -1 : (long)msecs_to_jiffies(ms);
}

static const char * const o2_reject_names[] = {
	[O2_REJECT_CONN_RACE] = "CONN_RACE",
	[O2_REJECT_NO_RESOURCES] = "NO_RESOURCES",
	[O2_REJECT_FATAL] = "FATAL",
	[O2_REJECT_CONN_UNCOMPAT] = "CONN_UNCOMPAT",
	[O2_REJECT_CONN_STALE] = "CONN_STALE",
	[O2_REJECT_RDMA_FRAGS] = "RDMA_FRAGS",
	[O2_REJECT_MSG_QUEUE_SIZE] = "MSG_QUEUE_SIZE",
	[O2_REJECT_INVALID_SRV_ID] = "INVALID_SRV_ID",
	[O2_REJECT_EARLY] = "EARLY",
};

static const char *o2_reject_name(u8 why)
{
	if (why >= ARRAY_SIZE(o2_reject_names) || !o2_reject_names[why])
		return "unknown";
	return o2_reject_names[why];
}

/*
 * Our connect was rejected.  The reject data is o2iblnd's (reason,
 * rejecter's incarnation and parameters); o2_reject_retry_ms() decides:
 * retry (renegotiated, after a delay) or fail the queued messages with
 * -ECONNREFUSED.  A passive conn sees REJECTED when the requester gave
 * up on its REP: that is only a failed accept.
 */
static void o2_cm_rejected(struct o2_conn *conn, struct rdma_cm_id *id,
			   struct rdma_cm_event *event)
{
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	char nid[O2_NIDSTR_SIZE];
	const void *data;
	struct o2_rej rej;
	long delay = -1;
	u8 len = 0;

	if (!conn->active) {
		o2_conn_close(conn, -ECONNRESET);
		return;
	}
	atomic64_inc(&ni->stats.rejects_received);
	data = rdma_consumer_reject_data(id, event, &len);
	/*
	 * siw reports an MPA reject with -ECONNRESET, which
	 * rdma_consumer_reject_data() does not take for a consumer reject
	 * on iWARP; the reject data is there all the same (and
	 * o2_rej_unpack() checks that it is ours).
	 */
	if (!data && rdma_protocol_iwarp(id->device, id->port_num) &&
	    event->param.conn.private_data_len) {
		data = event->param.conn.private_data;
		len = event->param.conn.private_data_len;
	}
	if (!data && event->status == IB_CM_REJ_STALE_CONN) {
		/*
		 * The peer's CM still holds a connection from our previous
		 * incarnation with the same QP number; it has now been told
		 * to drop it, so a retry shortly after succeeds.
		 */
		memset(&rej, 0, sizeof(rej));
		rej.why = O2_REJECT_CONN_STALE;
	} else if (!data || o2_rej_unpack(data, len, &rej)) {
		pr_warn_ratelimited("o2lnd: %s: connection to %s rejected: %s\n",
				    ni->net, o2_peer_str(peer, nid),
				    rdma_reject_msg(id, event->status));
		spin_lock(&ni->lock);
		peer->n.rejects_received++;
		spin_unlock(&ni->lock);
		o2_conn_close(conn, -ECONNREFUSED);
		return;
	}
	spin_lock(&ni->lock);
	peer->n.rejects_received++;
	peer->last_reject = rej.why;
	if (rej.why == O2_REJECT_CONN_RACE) {
		peer->n.races_received++;
		peer->race_claimed = true;
	}
	delay = o2_reject_decide(conn, &rej);
	trace_o2lnd_reject_received(ni->nid, peer->nid, rej.why,
				    delay >= 0 ? (long)jiffies_to_msecs(delay) :
						 -1L);
	if (delay >= 0) {
		peer->reconnect = true;
		peer->reconnect_at = jiffies + delay;
	}
	spin_unlock(&ni->lock);
	if (delay < 0 || rej.why != O2_REJECT_CONN_RACE)
		pr_info_ratelimited("o2lnd: %s: %s rejected our connection: %s%s\n",
				    ni->net, o2_peer_str(peer, nid),
				    o2_reject_name(rej.why),
				    delay >= 0 ? ", retrying" : "");
	o2_conn_close(conn, delay >= 0 ? -EAGAIN : -ECONNREFUSED);
}

static void o2_cm_addr_error(struct o2_conn *conn, struct rdma_cm_event *event)
{
	struct o2_peer *peer = conn->peer;
	struct o2_ni *ni = conn->ni;
	bool retry = false;

	if (event->status == -ETIMEDOUT) {
		spin_lock(&ni->lock);
		retry = peer->addr_retries++ < O2_ADDR_RETRIES;
		if (retry) {
			peer->reconnect = true;
			peer->reconnect_at = jiffies;
		}
		spin_unlock(&ni->lock);
	}
	if (retry)
		pr_debug("o2lnd: conn %p: address resolution timed out, retrying\n",
			 conn);
	o2_conn_close(conn, retry ? -EAGAIN : -EHOSTUNREACH);
}

static int o2_cm_error_errno(struct rdma_cm_event *event, int dflt)
{
	return event->status == -ETIMEDOUT ? -ETIMEDOUT : dflt;
}

/*
 * Reject a CONNECT_REQUEST with @why, advertising @cp (NULL: ours);
 * @peer_nid for the tracepoint (0 when the request was unreadable).
 * Return: non-zero, so that the CM destroys the new id.
 */
static int o2_cm_reject_cp(struct o2_ni *ni, struct rdma_cm_id *id, u8 why,
			   const struct o2_connparams *cp, u64 peer_nid)
{
	struct o2_connparams ours;
	struct o2_rej rej;

	if (!cp) {
		o2_our_connparams(&ours);
		cp = &ours;
	}
	o2_rej_pack(&rej, why, ni->stamp, cp);
	o2_rdma_reject(id, &rej, sizeof(rej));
	atomic64_inc(&ni->stats.rejects_sent);
	trace_o2lnd_reject_sent(ni->nid, peer_nid, why, -1);
	return -ECONNREFUSED;
}

/*
 * Reject a request whose sender is not known (unreadable, or we are not
 * ready for it).  The log names the address it came from.
 */
static int o2_cm_reject(struct o2_ni *ni, struct rdma_cm_id *id, u8 why)
{
	struct sockaddr *sa = (struct sockaddr *)&id->route.addr.dst_addr;

	if (why != O2_REJECT_FATAL)	/* FATAL: o2_connreq_check() said why */
		pr_info_ratelimited("o2lnd: %s: rejected a connection from %pISc: %s\n",
				    ni->net, sa, o2_reject_name(why));
	return o2_cm_reject_cp(ni, id, why, NULL, 0);
}

/*
 * Reject a known peer's request, counting it on the peer.  @req: the
 * parameters it offered, named in the log of a parameter reject.  Race
 * rejects are the protocol at work and log at debug level only; every
 * other reject is logged (ratelimited) with the peer's NID.
 */
static int o2_cm_reject_peer(struct o2_peer *peer, struct rdma_cm_id *id,
			     u8 why, const struct o2_connparams *cp,
			     const struct o2_connparams *req)
{
	struct o2_ni *ni = peer->ni;
	struct o2_connparams ours;
	char nid[O2_NIDSTR_SIZE];

	spin_lock(&ni->lock);
	peer->n.rejects_sent++;
	if (why == O2_REJECT_CONN_RACE)
		peer->n.races_sent++;
	spin_unlock(&ni->lock);
	o2_nid_format(peer->nid, nid, sizeof(nid));
	if (why == O2_REJECT_CONN_RACE) {
		pr_debug("o2lnd: %s: rejected %s's connection: CONN_RACE\n",
			 ni->net, nid);
	} else if (req) {
		o2_our_connparams(&ours);
		pr_info_ratelimited("o2lnd: %s: rejected %s's connection: %s (it offers queue depth %u, %u fragments, %u-byte messages; ours %u, %u, %u)\n",
				    ni->net, nid, o2_reject_name(why),
				    req->queue_depth, req->max_frags,
				    req->max_msg_size, ours.queue_depth,
				    ours.max_frags, ours.max_msg_size);
	} else {
		pr_info_ratelimited("o2lnd: %s: rejected %s's connection: %s\n",
				    ni->net, nid, o2_reject_name(why));
	}
	return o2_cm_reject_cp(ni, id, why, cp, peer->nid);
}

/*
 * Validate a CONNREQ from @id.  A malformed request, a bad magic or
 * version, a non-o2ib source, a dstnid that is not this NI, or a srcnid
 * on another network than this NI or whose address is not the IPv4
 * address the request came from are all
 * FATAL (the requester is misconfigured, or claims another node's NID:
 * an o2iblnd node always connects from its NI's address, so this costs
 * no compatibility and stops a third node from passing for a peer and
 * closing its connections as "rebooted").  Logs name the source address.
 * The parameters are checked once the peer is known
 * (o2_connparams_check() in o2_cm_connect_request()), so that their
 * rejects are counted on the peer and logged with its NID.
 * Return: 0 or O2_REJECT_FATAL.
 */
static u8 o2_connreq_check(struct o2_ni *ni, struct rdma_cm_id *id,
			   const struct rdma_conn_param *param,
			   struct o2_connmsg *req)
{
	struct sockaddr *sa = (struct sockaddr *)&id->route.addr.dst_addr;
	struct o2_msg_expect exp = {};
	char nid[O2_NIDSTR_SIZE];
	__be32 from = 0;
	u32 nob;
	int rc;

	if (sa->sa_family == AF_INET)
		from = ((struct sockaddr_in *)sa)->sin_addr.s_addr;
	nob = o2_msg_peek_nob(param->private_data, param->private_data_len);
	if (nob != sizeof(*req) || param->private_data_len < nob) {
		pr_warn_ratelimited("o2lnd: %s: malformed CONNREQ from %pI4 (%u bytes)\n",
				    ni->net, &from, param->private_data_len);
		return O2_REJECT_FATAL;
	}
	memcpy(req, param->private_data, sizeof(*req));
	exp.nob = nob;
	exp.dstnid = ni->nid;
	rc = o2_msg_unpack(req, &exp);
	if (rc || req->hdr.type != O2_MSG_CONNREQ) {
		pr_warn_ratelimited("o2lnd: %s: bad CONNREQ from %pI4: %d\n",
				    ni->net, &from, rc ? rc : -EPROTO);
		return O2_REJECT_FATAL;
	}
	if (o2_net_type(o2_nid_net(req->hdr.srcnid)) != O2LND_NET_TYPE_O2IB) {
		pr_warn_ratelimited("o2lnd: %s: CONNREQ from %pI4 with a non-o2ib NID (%#llx)\n",
				    ni->net, &from, req->hdr.srcnid);
		return O2_REJECT_FATAL;
	}
	if (sa->sa_family != AF_INET ||
	    o2_nid_net(req->hdr.srcnid) != o2_nid_net(ni->nid) ||
	    o2_nid_addr(req->hdr.srcnid) != ntohl(from)) {
		pr_warn_ratelimited("o2lnd: %s: CONNREQ from %pI4 claims NID %s\n",
				    ni->net, &from,
				    o2_nid_format(req->hdr.srcnid, nid,
						  sizeof(nid)));
		return O2_REJECT_FATAL;
	}
	return 0;
}

/* Our active connect to @peer in progress, or NULL.  Caller holds
 * ni->lock.
 */
static struct o2_conn *o2_peer_connecting_locked(struct o2_peer *peer)
{
	struct o2_conn *conn;

	lockdep_assert_held(&peer->ni->lock);
	list_for_each_entry(conn, &peer->conns, peer_list)
		if (conn->active &&
		    READ_ONCE(conn->state) == O2_CONN_ACTIVE_CONNECT)
			return conn;
	return NULL;
}

/*
 * A fault rule dropped this CONNECT_REQUEST: hold it unanswered, as a
 * peer that never replies would, on a PASSIVE_WAIT conn without a QP.
 * The conn is not on the peer's list (it carries nothing and must not
 * hold back our own connects); connd finds it on ni->conns, closes it
 * at its deadline and destroys the id (the CM then rejects the request).
 * The allocation's reference passes to the teardown at close.
 * Return: 0 (the id is ours now).
 */
static int o2_cm_park(struct o2_conn *conn, struct rdma_cm_id *id)
{
	struct o2_ni *ni = conn->ni;
	bool parked;

	conn->cmid = id;
	id->context = conn;
	spin_lock(&ni->lock);
	spin_lock(&conn->lock);
	parked = !ni->shutdown;
	if (parked) {
		conn->parked = true;
		o2_conn_set_state(conn, O2_CONN_PASSIVE_WAIT);
		conn->deadline = jiffies + o2_connect_timeout();
	}
	spin_unlock(&conn->lock);
	spin_unlock(&ni->lock);
	if (!parked) {
		o2_conn_close(conn, -ESHUTDOWN);
		o2_conn_put(conn);
	}
	return 0;
}

/*
 * Race check for a valid request from @peer (o2_race_decide()).  Return:
 * the verdict, with *ours set (and referenced) when our connect must be
 * aborted or withdrawn.  A withdrawn connect whose request has not left
 * is barred from sending it (conn->req_barred, under its lock, as
 * o2_cm_route_resolved() checks it).
 */
static enum o2_race_verdict o2_cm_race(struct o2_ni *ni, struct o2_peer *peer,
				       struct o2_conn **ours)
{
	struct o2_race_facts f = {};
	enum o2_race_verdict v;
	struct o2_conn *c;

	*ours = NULL;
	spin_lock(&ni->lock);
	c = o2_peer_connecting_locked(peer);
	f.connecting = !!c;
	f.claimed = peer->race_claimed;
	f.races = peer->races;
	if (c) {
		spin_lock(&c->lock);
		f.sent = c->req_sent;
		if (f.sent)
			f.sent_ms = jiffies_to_msecs(jiffies - c->req_sent_at);
	}
	v = o2_race_decide(&f, ni->nid, peer->nid);
	if (c) {
		if (v == O2_RACE_YIELD)
			c->req_barred = true;
		spin_unlock(&c->lock);
	}
	if (v == O2_RACE_REJECT) {
		peer->races++;
	} else if (v == O2_RACE_ABORT_OURS || v == O2_RACE_YIELD) {
		kref_get(&c->ref);
		*ours = c;
	}
	spin_unlock(&ni->lock);
	return v;
}

/*
 * DISCONNECTED: the peer's DREQ, the DREP to ours, or our DREQ's
 * timeout.  A DREQ is answered (DREP) here, in the callback, before the
 * close and the teardown: the peer's disconnect completes as soon as the
 * CM can carry it, whatever o2lnd's work queues hold (the teardown's own
 * rdma_disconnect() is then a no-op).  Lustre 2.15 has a window in its
 * own shutdown, where kiblnd_destroy_conn() drops the peer before it
 * counts the conn gone and kiblnd_shutdown() asserts in between; on the
 * test bed a DREP sent from the teardown saw that LBUG in 4 of 51 rounds
 * of a 2.15 node going down, one sent from here in 1 of 90.  For the
 * DREP or a timeout, rdma_disconnect() sends nothing.  No CM message on
 * a port that is down (connd.c): the teardown sends it once the port is
 * back.
 */
static void o2_cm_disconnected(struct o2_conn *conn, struct rdma_cm_id *id)
{
	if (!o2_dev_port_down(id) && o2_conn_claim_disconnect(conn))
		rdma_disconnect(id);
	o2_conn_close(conn, -ECONNRESET);
}

/*
 * Close our connect that lost a race to the peer's request (if any): a
 * stuck one (ABORT_OURS) is worth a line in the log; a withdrawn one
 * (YIELD) is the protocol at work.
 */
static void o2_cm_abort_ours(struct o2_ni *ni, struct o2_conn *ours,
			     enum o2_race_verdict v)
{
	char nid[O2_NIDSTR_SIZE];
	unsigned int ms;

	if (!ours)
		return;
	o2_nid_format(ours->peer->nid, nid, sizeof(nid));
	ms = jiffies_to_msecs(jiffies - ours->created);
	if (v == O2_RACE_ABORT_OURS)
		pr_info_ratelimited("o2lnd: %s: %s is connecting to us; aborting our own connect, stuck for %u ms\n",
				    ni->net, nid, ms);
	else
		pr_debug("o2lnd: %s: %s is connecting to us; withdrawing our own connect (%u ms old)\n",
			 ni->net, nid, ms);
	o2_conn_close(ours, -EALREADY);
	o2_conn_put(ours);
}

static int o2_cm_connect_request(struct o2_ni *ni, struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	struct o2_connparams rcp, *fcp = NULL;
	struct rdma_conn_param param;
	struct o2_connmsg req, ack = {};
	struct o2_conn *conn, *ours;
	enum o2_race_verdict race;
	char nid[O2_NIDSTR_SIZE];
	struct o2_fault_hit hit;
	struct o2_peer *peer;
	bool stale, added;
	u8 why;
	int rc;

	atomic64_inc(&ni->stats.connects_passive);
	if (READ_ONCE(ni->shutdown))
		return o2_cm_reject(ni, id, O2_REJECT_NO_RESOURCES);
	if (!READ_ONCE(ni->up))
		return o2_cm_reject(ni, id, O2_REJECT_EARLY);
	why = o2_connreq_check(ni, id, &event->param.conn, &req);
	if (why)
		return o2_cm_reject(ni, id, why);

	peer = o2_peer_find_or_create(ni, req.hdr.srcnid);
	if (!peer)
		return o2_cm_reject(ni, id, O2_REJECT_NO_RESOURCES);
	o2_our_connparams(&rcp);
	why = o2_connparams_check(&req.cp, &rcp);
	if (why) {
		rc = o2_cm_reject_peer(peer, id, why, NULL, &req.cp);
		o2_peer_put(peer);
		return rc;
	}

	if (o2_fault_fire(O2LND_FAULT_CM_DELAY, O2LND_CM_CONNECT_REQUEST,
			  ni->nid, peer->nid, &hit))
		msleep(hit.delay_ms);
	if (o2_fault_fire(O2LND_FAULT_REJECT, 0, ni->nid, peer->nid, &hit)) {
		o2_our_connparams(&rcp);
		if (hit.queue_depth)
			rcp.queue_depth = hit.queue_depth;
		if (hit.max_frags)
			rcp.max_frags = hit.max_frags;
		fcp = &rcp;
		rc = o2_cm_reject_peer(peer, id, hit.arg, fcp, NULL);
		o2_peer_put(peer);
		return rc;
	}
	conn = o2_conn_alloc(ni, peer, false);
	if (!conn) {
		rc = o2_cm_reject_peer(peer, id, O2_REJECT_NO_RESOURCES, NULL,
				       NULL);
		o2_peer_put(peer);
		return rc;
	}
	if (o2_fault_fire(O2LND_FAULT_CM_DROP, O2LND_CM_CONNECT_REQUEST,
			  ni->nid, peer->nid, &hit)) {
		o2_peer_put(peer);
		return o2_cm_park(conn, id);
	}

	/*
	 * Race tie-break (o2_race_decide()): when we are connecting to the
	 * requester too, we reject its request with CONN_RACE only if ours
	 * is on the wire, winning by NID, young and not already claimed by
	 * the peer; else its request is accepted and ours withdrawn or
	 * aborted (closed below, once the accepted conn is on the peer).
	 */
	race = o2_cm_race(ni, peer, &ours);
	if (race == O2_RACE_REJECT) {
		o2_conn_put(conn);
		rc = o2_cm_reject_peer(peer, id, O2_REJECT_CONN_RACE, NULL,
				       NULL);
		o2_peer_put(peer);
		return rc;
	}

	spin_lock(&ni->lock);
	stale = peer->incarnation && peer->incarnation != req.hdr.srcstamp;
	peer->incarnation = req.hdr.srcstamp;
	spin_unlock(&ni->lock);
	if (stale) {
		pr_info_ratelimited("o2lnd: %s: %s rebooted, closing its old connections\n",
				    ni->net, o2_nid_format(peer->nid, nid,
							   sizeof(nid)));
		o2_peer_close_stale(peer, req.hdr.srcstamp);
	}

	conn->cmid = id;
	conn->cp = req.cp;
	conn->peer_stamp = req.hdr.srcstamp;
	/*
	 * iWARP: the responder may not send before the initiator has
	 * (RDMAP); set before any receive is posted, as the first message
	 * may complete before ESTABLISHED is delivered.
	 */
	conn->hold_sends = rdma_protocol_iwarp(id->device, id->port_num);
	rc = rdma_set_ack_timeout(id, o2_ack_timeout);
	if (!rc)
		rc = o2_conn_setup_qp(conn);
	if (rc) {
		o2_conn_release_qp(conn);
		conn->cmid = NULL;
		o2_conn_put(conn);
		rc = o2_cm_reject_peer(peer, id, O2_REJECT_NO_RESOURCES, NULL,
				       NULL);
		o2_peer_put(peer);
		o2_cm_abort_ours(ni, ours, race);
		return rc;
	}
	id->context = conn;

	ack.cp = req.cp;
	o2_msg_pack(&ack, O2_MSG_CONNACK, 0, sizeof(ack), ni->nid, ni->stamp,
		    peer->nid, req.hdr.srcstamp, false);
	o2_conn_param_init(&param, &ack);
	rc = rdma_accept(id, &param);
	if (rc) {
		pr_warn_ratelimited("o2lnd: %s: accept of %s failed: %d\n",
				    ni->net, o2_nid_format(peer->nid, nid,
							   sizeof(nid)), rc);
		o2_conn_release_qp(conn);
		conn->cmid = NULL;
		o2_conn_put(conn);
		o2_peer_put(peer);
		o2_cm_abort_ours(ni, ours, race);
		return rc;	/* the CM destroys the id */
	}

	spin_lock(&ni->lock);
	spin_lock(&conn->lock);
	added = conn->state == O2_CONN_INIT && !ni->shutdown;
	if (added) {
		o2_conn_set_state(conn, O2_CONN_PASSIVE_WAIT);
		conn->deadline = jiffies + o2_connect_timeout();
		list_add_tail(&conn->peer_list, &peer->conns);
	}
	spin_unlock(&conn->lock);
	if (added)
		o2_peer_update_state(peer);
	spin_unlock(&ni->lock);
	o2_peer_put(peer);
	/*
	 * Only now, with the accepted conn on the peer's list: closing ours
	 * earlier would leave the peer without a conn while its messages
	 * wait, and connd would start a new connect in between.
	 */
	o2_cm_abort_ours(ni, ours, race);
	if (!added) {
		/* connd destroys the id once this callback has returned */
		o2_conn_close(conn, -ESHUTDOWN);
		o2_conn_put(conn);
	}
	return 0;
}

static int o2_cm_conn_event(struct o2_conn *conn, struct rdma_cm_id *id,
			    struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		o2_cm_addr_resolved(conn, id);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		o2_cm_route_resolved(conn, id);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		o2_cm_established(conn, event);
		break;
	case RDMA_CM_EVENT_REJECTED:
		o2_cm_rejected(conn, id, event);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		o2_cm_addr_error(conn, event);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		o2_conn_close(conn, o2_cm_error_errno(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		o2_cm_disconnected(conn, id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		o2_conn_close(conn, -ENODEV);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		o2_conn_close(conn, -EADDRNOTAVAIL);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Fault rules on a conn's CM event: CM_DELAY sleeps in the handler (the
 * CM's work queue waits, as with a slow CM; at most
 * O2LND_FAULT_MAX_DELAY_MS), CM_DROP and STALL (an event that ends an
 * active connect phase) make the event vanish: the phase deadline in
 * connd must then abort the connect.  DEVICE_REMOVAL is never dropped
 * (o2_fault_validate() refuses it).  Return: true to ignore the event.
 */
static bool o2_cm_fault(struct o2_conn *conn, enum rdma_cm_event_type ev)
{
	u64 local = conn->ni->nid, remote = conn->peer->nid;
	char nid[O2_NIDSTR_SIZE];
	struct o2_fault_hit hit;
	u32 phase;

	if ((u32)ev >= O2LND_CM_NEVENTS)
		return false;
	/* ROUTE_RESOLVED's delay falls inside its callback (below) */
	if (ev != RDMA_CM_EVENT_ROUTE_RESOLVED &&
	    o2_fault_fire(O2LND_FAULT_CM_DELAY, ev, local, remote, &hit))
		msleep(hit.delay_ms);
	phase = o2_fault_event_phase(ev);
	if (o2_fault_fire(O2LND_FAULT_CM_DROP, ev, local, remote, &hit) ||
	    (conn->active && phase != O2LND_PHASE_NONE &&
	     o2_fault_fire(O2LND_FAULT_STALL, phase, local, remote, &hit))) {
		pr_info_ratelimited("o2lnd: %s: fault: %s from %s dropped\n",
				    conn->ni->net, rdma_event_msg(ev),
				    o2_nid_format(remote, nid, sizeof(nid)));
		return true;
	}
	return false;
}

/**
 * o2_cm_handler() - the rdma_cm event handler of every o2lnd cm_id
 * @id: the cm_id
 * @event: the event
 *
 * A listener's context is its NI; a conn's is the conn.  CONNECT_REQUEST
 * arrives on a new id that still carries the listener's context.
 *
 * Return: 0, or non-zero (only for a refused CONNECT_REQUEST) to have
 * the CM destroy @id.
 */
int o2_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	struct o2_conn *conn;
	struct o2_ni *ni;

	pr_debug("o2lnd: cm_id %p: %s (%d)\n", id,
		 rdma_event_msg(event->event), event->status);
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return o2_cm_connect_request(id->context, id, event);

	/*
	 * A listener's context is its NI (o2_ni_listen()), a conn's its conn.
	 * Told by the context, not by ni->listen_id: a listener gets events
	 * (DEVICE_REMOVAL, ADDR_CHANGE) also while it is not, or no longer,
	 * ni->listen_id (being set up by a reattach, or being destroyed), and
	 * taking it for a conn would read the NI as one.  The NI or the
	 * device removal destroys it.
	 */
	o2_for_each_ni(ni) {
		if (id->context == ni)
			return 0;
	}
	conn = id->context;
	if (o2_cm_fault(conn, event->event))
		return 0;
	return o2_cm_conn_event(conn, id, event);
}
