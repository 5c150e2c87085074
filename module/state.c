// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the connection state transition table, the deadline of a connect
 * phase and the retry decision after a reject.  No RDMA headers here.
 */
#include <linux/kernel.h>
#include <linux/bits.h>
#include <linux/jiffies.h>
#include "state.h"

static const char * const o2_conn_state_names[] = {
	[O2_CONN_INIT] = "INIT",
	[O2_CONN_ACTIVE_CONNECT] = "ACTIVE_CONNECT",
	[O2_CONN_PASSIVE_WAIT] = "PASSIVE_WAIT",
	[O2_CONN_ESTABLISHED] = "ESTABLISHED",
	[O2_CONN_CLOSING] = "CLOSING",
	[O2_CONN_DISCONNECTED] = "DISCONNECTED",
};

/* o2_conn_allowed[from] is the bit mask of states @from may move to */
static const u8 o2_conn_allowed[O2_CONN_NSTATES] = {
	[O2_CONN_INIT] = BIT(O2_CONN_ACTIVE_CONNECT) |
			 BIT(O2_CONN_PASSIVE_WAIT) | BIT(O2_CONN_CLOSING),
	[O2_CONN_ACTIVE_CONNECT] = BIT(O2_CONN_ESTABLISHED) |
				   BIT(O2_CONN_CLOSING),
	[O2_CONN_PASSIVE_WAIT] = BIT(O2_CONN_ESTABLISHED) |
				 BIT(O2_CONN_CLOSING),
	[O2_CONN_ESTABLISHED] = BIT(O2_CONN_CLOSING),
	[O2_CONN_CLOSING] = BIT(O2_CONN_DISCONNECTED),
	[O2_CONN_DISCONNECTED] = 0,
};

static const char * const o2_peer_state_names[] = {
	[O2_PEER_IDLE] = "IDLE",
	[O2_PEER_CONNECTING] = "CONNECTING",
	[O2_PEER_ESTABLISHED] = "ESTABLISHED",
	[O2_PEER_BACKOFF] = "BACKOFF",
};

/* o2_peer_allowed[from] is the bit mask of states @from may move to */
static const u8 o2_peer_allowed[O2_PEER_NSTATES] = {
	[O2_PEER_IDLE] = BIT(O2_PEER_CONNECTING) | BIT(O2_PEER_ESTABLISHED),
	[O2_PEER_CONNECTING] = BIT(O2_PEER_IDLE) | BIT(O2_PEER_ESTABLISHED) |
			       BIT(O2_PEER_BACKOFF),
	[O2_PEER_ESTABLISHED] = BIT(O2_PEER_IDLE) | BIT(O2_PEER_CONNECTING) |
				BIT(O2_PEER_BACKOFF),
	[O2_PEER_BACKOFF] = BIT(O2_PEER_IDLE) | BIT(O2_PEER_CONNECTING) |
			    BIT(O2_PEER_ESTABLISHED),
};

/**
 * o2_peer_state_name() - printable peer state
 * @state: the state
 *
 * Return: its name, "?" for a value that is not a state.
 */
const char *o2_peer_state_name(enum o2_peer_state state)
{
	if ((unsigned int)state >= ARRAY_SIZE(o2_peer_state_names))
		return "?";
	return o2_peer_state_names[state];
}

/**
 * o2_peer_transition_ok() - may a peer move from @from to @to?
 * @from: current state
 * @to: new state (different from @from)
 *
 * Return: true if the table allows it; false for a value that is not a
 * state.
 */
bool o2_peer_transition_ok(enum o2_peer_state from, enum o2_peer_state to)
{
	if ((unsigned int)from >= O2_PEER_NSTATES ||
	    (unsigned int)to >= O2_PEER_NSTATES)
		return false;
	return o2_peer_allowed[from] & BIT(to);
}

/**
 * o2_peer_state_of() - the state a peer is in
 * @established: one of its conns is ESTABLISHED
 * @connecting: one of its conns is being set up (INIT, ACTIVE_CONNECT,
 *	PASSIVE_WAIT)
 * @backoff: a reconnect is scheduled
 *
 * Return: ESTABLISHED, else CONNECTING, else BACKOFF, else IDLE.
 */
enum o2_peer_state o2_peer_state_of(bool established, bool connecting,
				    bool backoff)
{
	if (established)
		return O2_PEER_ESTABLISHED;
	if (connecting)
		return O2_PEER_CONNECTING;
	return backoff ? O2_PEER_BACKOFF : O2_PEER_IDLE;
}

/**
 * o2_race_decide() - what to do with a CONNREQ from a peer we may be
 *	connecting to ourselves
 * @f: what we know of our own connect to that peer
 * @our_nid: our NID
 * @peer_nid: the requester's NID
 *
 * o2iblnd breaks a race by NID: the higher NID's connect wins and the
 * lower one's request is rejected with CONN_RACE (o2_race_we_win(), the
 * raw 64-bit NID as Lustre 2.15 compares it; 2.16 and later compare
 * nidhash(), which disagrees for NIDs that differ beyond the last
 * octet).  A rejected peer only retries while it has no other connect
 * under way, and a Lustre 2.15 `lctl ping` gives up after 1 s, so every
 * reject is a delay its messages feel.  We reject only when the race is
 * real and ours is winning it:
 *   - our CONNREQ is not on the wire yet (resolving the address or the
 *     route, making the QP): to the peer there is no race at all; we
 *     yield: accept its request and withdraw ours (it never leaves);
 *   - the peer already rejected ours with CONN_RACE: it believes it
 *     wins (its rule differs from ours for this NID pair); we yield, so
 *     the two rules cost one round of rejects, not O2_MAX_RACES;
 *   - ours was sent more than O2_RACE_WINDOW_MS ago while the peer,
 *     evidently alive, asks: ours is presumed stuck (LU-7646), aborted,
 *     and the peer's request accepted; so after O2_MAX_RACES rejects in
 *     a row whatever the age;
 *   - a connect to our own NID never races: its request is ours.
 *
 * Return: the verdict.
 */
enum o2_race_verdict o2_race_decide(const struct o2_race_facts *f,
				    u64 our_nid, u64 peer_nid)
{
	if (!f->connecting || our_nid == peer_nid)
		return O2_RACE_ACCEPT;
	if (!f->sent)
		return O2_RACE_YIELD;
	if (!o2_race_we_win(our_nid, peer_nid))
		return O2_RACE_ACCEPT;
	if (f->claimed)
		return O2_RACE_YIELD;
	if (f->sent_ms >= O2_RACE_WINDOW_MS || f->races >= O2_MAX_RACES)
		return O2_RACE_ABORT_OURS;
	return O2_RACE_REJECT;
}

/**
 * o2_backoff_next() - the next reconnect delay after a failed connect
 * @cur_ms: the current delay, 0 after a success
 *
 * Doubles from O2_BACKOFF_MIN_MS up to O2_BACKOFF_MAX_MS.
 *
 * Return: the delay in ms (before jitter).
 */
unsigned int o2_backoff_next(unsigned int cur_ms)
{
	if (cur_ms < O2_BACKOFF_MIN_MS)
		return O2_BACKOFF_MIN_MS;
	if (cur_ms >= O2_BACKOFF_MAX_MS / 2)
		return O2_BACKOFF_MAX_MS;
	return cur_ms * 2;
}

/**
 * o2_jitter() - spread a delay by +-25%
 * @ms: the delay
 * @rnd: a random number
 *
 * Return: a delay in [ms - ms/4, ms + ms/4] (ms/4 rounded down); no
 * overflow for any delay below UINT_MAX / 2.
 */
unsigned int o2_jitter(unsigned int ms, u32 rnd)
{
	return ms - ms / 4 + rnd % (2 * (ms / 4) + 1);
}

/**
 * o2_conn_state_name() - printable state
 * @state: the state
 *
 * Return: its name, "?" for a value that is not a state.
 */
const char *o2_conn_state_name(enum o2_conn_state state)
{
	if ((unsigned int)state >= ARRAY_SIZE(o2_conn_state_names))
		return "?";
	return o2_conn_state_names[state];
}

/**
 * o2_conn_transition_ok() - may a conn move from @from to @to?
 * @from: current state
 * @to: new state
 *
 * Return: true if the transition table allows it; false for any value
 * that is not a state.
 */
bool o2_conn_transition_ok(enum o2_conn_state from, enum o2_conn_state to)
{
	if ((unsigned int)from >= O2_CONN_NSTATES ||
	    (unsigned int)to >= O2_CONN_NSTATES)
		return false;
	return o2_conn_allowed[from] & BIT(to);
}

/**
 * o2_phase_timeout() - deadline of one connect phase
 * @timeout_s: the timeout module parameter, in seconds
 *
 * The larger of 5 s and a tenth of the timeout parameter (5 s at the
 * default 50 s), applied to each phase, resolution included, where
 * Lustre's LU-17480 bounds only the connect request, at 12 s.  A healthy
 * phase takes milliseconds (a second under emulation); the CM's own
 * first REQ retransmission comes at ~4.3 s (CMA_CM_RESPONSE_TIMEOUT), so
 * a connect that lost its first REQ still completes in time.
 *
 * Return: jiffies.
 */
unsigned long o2_phase_timeout(int timeout_s)
{
	return max(5, timeout_s / 10) * HZ;
}

/**
 * o2_teardown_waits_for_port() - must a teardown wait for its port?
 * @cm_message: destroying the conn's cm_id now sends a CM message: it
 *	has a QP (a connect request or reply was exchanged) and no DREQ
 *	went out yet (after rdma_disconnect() the destroy only cancels the
 *	DREQ's retries)
 * @port_down: the conn's port is down (port state not ACTIVE, or for
 *	RoCE its netdev not running or without carrier)
 * @dev_dead: the device is being removed
 * @stopping: the NI is stopping (module unload)
 *
 * A CM message (DREQ, REJ) sent on a port that is down reaches nobody,
 * and rdma_rxe puts its GSI QP (QP1, shared by every connection of the
 * device) in error when a send finds no route: no connection could be
 * made on the device again until it is re-added.  So the step that sends
 * one waits until the port is back.  It waits for nothing else: not when
 * the device goes away (the message cannot be sent anyway and the
 * removal waits for the conn), not at unload.
 *
 * Return: true if the teardown must wait.
 */
bool o2_teardown_waits_for_port(bool cm_message, bool port_down,
				bool dev_dead, bool stopping)
{
	return cm_message && port_down && !dev_dead && !stopping;
}

/**
 * o2_reject_retry_ms() - what a reject of our connect means
 * @why: the O2_REJECT_* reason
 * @rej_cp: the rejecter's connection parameters
 * @cp: in/out: our parameters for the next connect; smaller values of
 *	the rejecter's are adopted for a parameter reject
 * @races: in/out: consecutive CONN_RACE rejects of our connects
 * @retries: in/out: consecutive rejects of other retryable kinds
 * @rnd: a random number, for the jitter of the delay
 *
 * A parameter reject (MSG_QUEUE_SIZE, RDMA_FRAGS, CONN_UNCOMPAT) is
 * retried once, at once, and only when it let us shrink a parameter
 * (never below 2 credits or 1 fragment).  A CONN_RACE is retried after
 * 100-499 ms up to O2_MAX_RACES + 5 times (the other side stops
 * rejecting after O2_MAX_RACES), a CONN_STALE or EARLY (the peer is
 * starting) after 500-999 ms and a NO_RESOURCES after 1000-1999 ms, up
 * to O2_MAX_RETRIES times.  FATAL, INVALID_SRV_ID and anything unknown
 * are final: the queued messages fail.
 *
 * Return: the delay before reconnecting in ms, or -1 to give up.
 */
long o2_reject_retry_ms(u8 why, const struct o2_connparams *rej_cp,
			struct o2_connparams *cp, int *races, int *retries,
			u32 rnd)
{
	bool adopted = false;

	switch (why) {
	case O2_REJECT_MSG_QUEUE_SIZE:
	case O2_REJECT_RDMA_FRAGS:
	case O2_REJECT_CONN_UNCOMPAT:
		if ((*retries)++ >= 1)
			return -1;
		if (rej_cp->queue_depth >= 2 &&
		    rej_cp->queue_depth < cp->queue_depth) {
			cp->queue_depth = rej_cp->queue_depth;
			adopted = true;
		}
		if (rej_cp->max_frags >= 1 && rej_cp->max_frags < cp->max_frags) {
			cp->max_frags = rej_cp->max_frags;
			adopted = true;
		}
		return adopted ? 0 : -1;
	case O2_REJECT_CONN_RACE:
		if ((*races)++ >= O2_MAX_RACES + 5)
			return -1;
		return 100 + rnd % 400;
	case O2_REJECT_CONN_STALE:
	case O2_REJECT_EARLY:
		if ((*retries)++ >= O2_MAX_RETRIES)
			return -1;
		return 500 + rnd % 500;
	case O2_REJECT_NO_RESOURCES:
		if ((*retries)++ >= O2_MAX_RETRIES)
			return -1;
		return 1000 + rnd % 1000;
	default:
		return -1;
	}
}

/**
 * o2_comp_vector_pick() - the completion vector of a new conn's CQ
 * @seq: how many CQs the device made before this one
 * @nvec: the device's completion vectors (num_comp_vectors)
 *
 * The conns of a device take its vectors in turn, so their completions
 * are handled on as many CPUs as the device has vectors (o2iblnd spreads
 * its CQs the same way, kiblnd_get_completion_vector()).
 *
 * Return: 0..@nvec - 1; 0 when the device has at most one.
 */
int o2_comp_vector_pick(u32 seq, int nvec)
{
	return nvec > 1 ? (int)(seq % (u32)nvec) : 0;
}

/**
 * o2_peer_connect_due() - does a peer need its first connect now?
 * @has_conns: it has a conn in any state (one connecting, too)
 * @reconnect: a reconnect is scheduled (BACKOFF, or a retry after a
 *	reject): its waiting messages wait for that
 * @waiting: messages of ours wait for a conn
 *
 * A send and connd's scan each decide this under ni->lock, and
 * o2_conn_start_active() decides it again under the lock once it has
 * allocated the conn: between the two, a connect of the other may have
 * started, been rejected for good and failed the waiting messages, or
 * put the peer in BACKOFF.  Then there is nothing to connect for.
 *
 * Return: true if a connect should start.
 */
bool o2_peer_connect_due(bool has_conns, bool reconnect, bool waiting)
{
	return !has_conns && !reconnect && waiting;
}

/**
 * o2_peer_wants_conn() - may a peer get one more conn, opened by us?
 * @established: its established conns
 * @active: how many of those we opened
 * @others: its conns in any other state (a connect under way)
 * @want: conns_per_peer
 * @self: the peer is our own NID
 *
 * As o2iblnd's conns_per_peer: the side that connects opens the peer's
 * conns, one at a time, once its first is up; the other side only
 * accepts them.  So two nodes never both open extra conns, which the
 * race rule (o2_race_we_win()) would close in pairs for ever.  A connect
 * to our own NID is one conn in two halves, never more.
 *
 * Return: true if another active connect may start now.
 */
bool o2_peer_wants_conn(int established, int active, int others, int want,
			bool self)
{
	return !self && others == 0 && active > 0 && established < want;
}

/**
 * o2_surplus_close_due() - may a race's surplus conn close now?
 * @quiet_since: when it last heard from the peer, or became surplus if
 *	that was later (jiffies)
 * @now: jiffies
 * @quiet: how long it must have been quiet (jiffies)
 * @busy: something of ours is queued or posted on it
 *
 * A race that leaves two conns with a peer leaves one surplus: o2lnd
 * sends nothing new on it, but the peer may.  o2iblnd keeps both and
 * sends on each in turn, so closing it at once would fail what o2iblnd
 * has just queued on it (a reply is not sent again).  It closes once
 * the peer has sent nothing on it for @quiet and nothing of ours is on
 * it: at once for a peer that keeps to the same conn (o2lnd), never
 * while a peer that uses both has traffic.
 *
 * Return: true if it may close.
 */
bool o2_surplus_close_due(unsigned long quiet_since, unsigned long now,
			  unsigned long quiet, bool busy)
{
	return !busy && time_after_eq(now, quiet_since + quiet);
}
