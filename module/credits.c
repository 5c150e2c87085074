// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: credit accounting (see credits.h).  Pure functions: the callers
 * hold the lock of the object the state belongs to.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/math64.h>
#include <linux/jiffies.h>
#include "wire.h"
#include "credits.h"

/**
 * o2_txq_of() - the queue a message of @type waits on
 * @type: O2_MSG_*
 *
 * Return: O2_TXQ_*; unknown types are treated as credited.
 */
enum o2_txq o2_txq_of(u8 type)
{
	switch (type) {
	case O2_MSG_PUT_REQ:
	case O2_MSG_GET_REQ:
		return O2_TXQ_RSRVD;
	case O2_MSG_NOOP:
	case O2_MSG_PUT_NAK:
	case O2_MSG_PUT_ACK:
	case O2_MSG_PUT_DONE:
	case O2_MSG_GET_DONE:
		return O2_TXQ_NOCRED;
	default:
		return O2_TXQ_CRED;
	}
}

/**
 * o2_stall_ms() - how long posted sends may go without a completion
 * @ack_timeout: the RC ack timeout exponent (4.096 us * 2^n per try)
 * @retry_count: the RC retry count
 * @timeout_s: the timeout parameter (seconds)
 *
 * A healthy HCA completes a send, or fails it once its retries are spent
 * ((@retry_count + 1) tries of the ack timeout), so sends that make no
 * progress for much longer than that sit on a QP that will never say
 * anything again (a device bug, a lost completion).  The bound is three
 * times the HCA's own budget and at least 5 s, and stays below half the
 * timeout (when that leaves more than the HCA's budget), so the
 * connection is replaced and its messages resent long before they fail.
 *
 * Return: the bound in milliseconds.
 */
u32 o2_stall_ms(int ack_timeout, int retry_count, int timeout_s)
{
	u64 hca_ms = div_u64((4096ULL << clamp(ack_timeout, 0, 31)) *
			     (clamp(retry_count, 0, 7) + 1), 1000000);
	u64 half = (u64)max(timeout_s, 1) * 500;
	u64 ms = max_t(u64, 3 * hca_ms, 5000);

	if (ms > half)
		ms = max(half, hca_ms + 1000);
	return min_t(u64, ms, U32_MAX);
}

/**
 * o2_sends_stalled() - have posted sends stopped making progress?
 * @c: the state
 * @progress: jiffies of the last send completion, or of the post that
 *	found nothing in flight
 * @now: jiffies
 * @bound: o2_stall_ms() in jiffies
 *
 * Return: true if sends are in flight and none completed within @bound.
 */
bool o2_sends_stalled(const struct o2_credits *c, unsigned long progress,
		      unsigned long now, unsigned long bound)
{
	return c->nposted > 0 && time_after(now, progress + bound);
}

/**
 * o2_nudge_due() - should an iWARP initiator send a NOOP to wake its peer?
 * @c: the conn's credit state
 * @heard: a message arrived on the conn
 * @nudges: NOOPs already sent while nothing had arrived
 * @last_send: jiffies of our last Send posted
 * @now: jiffies
 *
 * siw (MPA without peer-to-peer mode) can leave the initiator's first
 * message unread in the responder's socket: bytes that arrive between
 * the MPA reply and the moment the responder's QP takes the socket over
 * are read only when the next segment arrives.  The responder sends
 * nothing before it has heard from us (RDMAP), so nothing else would
 * come.  A NOOP O2_NUDGE_GAP after our last Send completed, up to
 * O2_NUDGES times while the peer has said nothing, is that next segment;
 * a peer that just has nothing to say costs at most O2_NUDGES NOOPs.
 *
 * Return: true if a NOOP is due.
 */
bool o2_nudge_due(const struct o2_credits *c, bool heard, u32 nudges,
		  unsigned long last_send, unsigned long now)
{
	return !heard && nudges < O2_NUDGES && !c->nposted &&
	       time_after_eq(now, last_send + O2_NUDGE_GAP);
}

/**
 * o2_rx_credit_of() - what reposting the buffer of a received @type gives
 * @type: O2_MSG_*
 *
 * A credited message returns a credit to its sender, except PUT_REQ,
 * whose credit returns when its PUT_DONE arrives (the receiver holds it
 * for the RDMA in between).  A reply that came without a credit gives
 * the requester its reserved credit back.
 *
 * Return: O2_RX_CREDIT_*.
 */
enum o2_rx_credit o2_rx_credit_of(u8 type)
{
	switch (type) {
	case O2_MSG_IMMEDIATE:
	case O2_MSG_GET_REQ:
	case O2_MSG_PUT_DONE:
		return O2_RX_CREDIT_PEER;
	case O2_MSG_PUT_NAK:
	case O2_MSG_PUT_ACK:
	case O2_MSG_GET_DONE:
		return O2_RX_CREDIT_RSRVD;
	default:
		return O2_RX_CREDIT_NONE;
	}
}

/**
 * o2_msg_expects_reply() - does a message of @type wait for a reply?
 * @type: O2_MSG_*
 *
 * Return: true for PUT_REQ (PUT_ACK/PUT_NAK) and GET_REQ (GET_DONE):
 * such a tx completes only after its Send completion and the reply.
 */
bool o2_msg_expects_reply(u8 type)
{
	return type == O2_MSG_PUT_REQ || type == O2_MSG_GET_REQ;
}

/**
 * o2_rx_buffers() - receive buffers a connection needs
 * @queue_depth: negotiated queue depth
 *
 * Credited messages, as many credit-less replies (bounded by the peer's
 * reserved credits) and the NOOPs in flight.
 *
 * Return: the number of buffers.
 */
int o2_rx_buffers(int queue_depth)
{
	return 2 * queue_depth + O2_OOB_MSGS;
}

static int o2_hiw_for(int queue_depth, int hiw)
{
	return clamp(hiw, 1, max(queue_depth - 1, 1));
}

/**
 * o2_credits_init() - accounting of a new connection
 * @c: the state
 * @queue_depth: queue depth (may still shrink: o2_credits_set_depth())
 * @hiw: the peer_credits_hiw parameter (clamped below @queue_depth)
 * @concurrent_sends: cap on Sends in flight
 * @sq_size: send-queue slots for our work requests
 */
void o2_credits_init(struct o2_credits *c, int queue_depth, int hiw,
		     int concurrent_sends, int sq_size)
{
	*c = (struct o2_credits){
		.queue_depth = queue_depth,
		.hiw = o2_hiw_for(queue_depth, hiw),
		.concurrent_sends = concurrent_sends,
		.sq_size = sq_size,
		.credits = queue_depth,
		.reserved = queue_depth,
	};
}

/**
 * o2_credits_set_depth() - the peer accepted a smaller queue depth
 * @c: the state (nothing sent yet; early grants stay counted)
 * @queue_depth: the negotiated depth
 */
void o2_credits_set_depth(struct o2_credits *c, int queue_depth)
{
	int diff = queue_depth - c->queue_depth;

	c->credits += diff;
	c->reserved += diff;
	c->hiw = o2_hiw_for(queue_depth, c->hiw);
	c->queue_depth = queue_depth;
}

/**
 * o2_need_noop() - should a NOOP go out now?
 * @c: the state
 * @nocred_queued: a credit-less message waits (it will carry the credits)
 * @cred_queued: a credited message waits
 * @keepalive_due: the connection has been idle for the keepalive period
 *
 * When we owe @hiw credits (or a keepalive is due) and no message can
 * carry them: none waits, or we have no credit to send it (both sides
 * waiting for credits would deadlock otherwise).
 *
 * Return: true if a NOOP is needed.
 */
bool o2_need_noop(const struct o2_credits *c, bool nocred_queued,
		  bool cred_queued, bool keepalive_due)
{
	if (c->outstanding < c->hiw && !keepalive_due)
		return false;
	if (nocred_queued)
		return false;
	return !cred_queued || c->credits == 0;
}

/**
 * o2_may_post() - may the head of queue @q be posted?
 * @c: the state
 * @q: its queue (O2_TXQ_RSRVD messages are moved to O2_TXQ_CRED first)
 * @noop: it is a NOOP
 * @need_noop: o2_need_noop() now
 * @wrs: work requests it posts
 *
 * Return: O2_POST_OK, O2_POST_WAIT (sends in flight at the cap, not
 * enough send-queue slots, or no credit for a credited message), or
 * O2_POST_DROP_NOOP (a NOOP that is no longer needed, or with
 * O2_OOB_MSGS NOOPs already in flight: another follows when they
 * complete if still needed).
 */
enum o2_post_verdict o2_may_post(const struct o2_credits *c, enum o2_txq q,
				 bool noop, bool need_noop, int wrs)
{
	if (c->nposted >= c->concurrent_sends ||
	    c->sq_used + wrs > c->sq_size)
		return O2_POST_WAIT;
	if (q != O2_TXQ_NOCRED && c->credits <= 0)
		return O2_POST_WAIT;
	if (noop && (!need_noop || c->noops_posted >= O2_OOB_MSGS))
		return O2_POST_DROP_NOOP;
	return O2_POST_OK;
}

/**
 * o2_credits_take_reserved() - a queued request takes a reserved credit
 * @c: the state
 *
 * A request waiting on the reserved-credit queue (O2_TXQ_RSRVD) moves to
 * the credited queue once it has one.
 *
 * Return: true if it took one.
 */
bool o2_credits_take_reserved(struct o2_credits *c)
{
	if (c->reserved <= 0)
		return false;
	c->reserved--;
	return true;
}

/**
 * o2_next_txq() - the queue whose head is considered next
 * @c: the state
 * @nocred_queued: a credit-less message (NOOP, completion) waits
 * @cred_queued: a credited message waits
 * @q: the queue, when one is chosen
 *
 * Credit-less messages go first, but alternate with credited ones when
 * both wait and a credit is there (@c->cred_turn, set by the posts).
 * The head then still has to pass o2_may_post().
 *
 * Return: false if nothing waits.
 */
bool o2_next_txq(const struct o2_credits *c, bool nocred_queued,
		 bool cred_queued, enum o2_txq *q)
{
	bool cred = cred_queued && c->credits > 0;

	if (nocred_queued && !(cred && c->cred_turn)) {
		*q = O2_TXQ_NOCRED;
		return true;
	}
	if (cred_queued) {
		*q = O2_TXQ_CRED;
		return true;
	}
	return false;
}

/**
 * o2_credits_post() - account a message being posted
 * @c: the state
 * @q: its queue
 * @noop: it is a NOOP
 * @wrs: work requests it posts
 *
 * Return: the credits it returns to the peer (its header's credits byte).
 */
u8 o2_credits_post(struct o2_credits *c, enum o2_txq q, bool noop, int wrs)
{
	u8 ret = clamp(c->outstanding, 0, 255);

	c->outstanding -= ret;
	if (q != O2_TXQ_NOCRED)
		c->credits--;
	c->nposted++;
	c->sq_used += wrs;
	if (noop)
		c->noops_posted++;
	c->cred_turn = q == O2_TXQ_NOCRED;
	return ret;
}

/**
 * o2_credits_post_local() - account a local work request (an MR
 *	invalidation): a send in flight and its slots, no credit
 * @c: the state
 * @wrs: work requests
 */
void o2_credits_post_local(struct o2_credits *c, int wrs)
{
	c->nposted++;
	c->sq_used += wrs;
	c->cred_turn = true;	/* it went from the credit-less queue */
}

/**
 * o2_chain_fate() - what a refused chain did to one of its txs
 * @taken: work requests the device took, from this tx's first on (those
 *	of the txs before it already deducted); this tx's are deducted
 * @wrs: the tx's work requests (o2_tx.wrs)
 *
 * ib_post_send() of a chain of txs' work requests that fails at one of
 * them has posted those before it and none after.  Called for each tx
 * of the chain in order, starting with @taken the count before the
 * refused one.
 *
 * Return: the tx's fate.
 */
enum o2_chain_fate o2_chain_fate(int *taken, int wrs)
{
	if (*taken >= wrs) {
		*taken -= wrs;
		return O2_CHAIN_POSTED;
	}
	if (*taken > 0) {
		*taken = 0;
		return O2_CHAIN_PARTIAL;
	}
	return O2_CHAIN_UNPOSTED;
}

/**
 * o2_credits_complete() - a posted message's Send completed
 * @c: the state
 * @noop: it was a NOOP
 * @wrs: work requests it had posted
 */
void o2_credits_complete(struct o2_credits *c, bool noop, int wrs)
{
	c->nposted--;
	c->sq_used -= wrs;
	if (noop)
		c->noops_posted--;
}

/**
 * o2_credits_receive() - credits returned by the peer on a message
 * @c: the state
 * @grant: the header's credits byte
 *
 * Return: 0, or -EPROTO when the grant would take us above the
 * negotiated depth (the peer returned credits it never had): the caller
 * closes the connection.  The state is unchanged then.
 */
int o2_credits_receive(struct o2_credits *c, int grant)
{
	int credits = o2_credits_grant(c->credits, grant, c->queue_depth);

	if (credits < 0)
		return credits;
	c->credits = credits;
	return 0;
}

/**
 * o2_credits_repost() - a receive buffer was posted again
 * @c: the state
 * @how: what the message it held gives back (o2_rx_credit_of())
 */
void o2_credits_repost(struct o2_credits *c, enum o2_rx_credit how)
{
	if (how == O2_RX_CREDIT_PEER)
		c->outstanding++;
	else if (how == O2_RX_CREDIT_RSRVD)
		c->reserved++;
}

/**
 * o2_txcr_init() - idle tx credits
 * @cr: the credits
 * @max: their number
 */
void o2_txcr_init(struct o2_txcr *cr, int max)
{
	*cr = (struct o2_txcr){ .max = max, .avail = max, .min = max };
}

/**
 * o2_txcr_take() - a message asks for a credit
 * @cr: the credits
 *
 * Return: true if it got one; false if it must queue (the count goes
 * below zero and the message is counted as queued).
 */
bool o2_txcr_take(struct o2_txcr *cr)
{
	cr->avail--;
	cr->min = min(cr->min, cr->avail);
	if (cr->avail >= 0)
		return true;
	cr->queued++;
	return false;
}

/**
 * o2_txcr_return() - a message that held a credit is done with it
 * @cr: the credits
 *
 * Return: true if a queued message now gets it (the caller takes the
 * head of the queue).
 */
bool o2_txcr_return(struct o2_txcr *cr)
{
	cr->avail++;
	if (cr->avail > 0 || !cr->queued)
		return false;
	cr->queued--;
	return true;
}

/**
 * o2_txcr_unqueue() - a queued message leaves without a credit (deadline,
 *	shutdown)
 * @cr: the credits
 */
void o2_txcr_unqueue(struct o2_txcr *cr)
{
	cr->avail++;
	cr->queued--;
}

/**
 * o2_tunables_check() - check the module parameters and fill defaults
 * @t: the parameters; 0 for peer_credits_hiw / concurrent_sends is
 *	replaced by its default
 * @why: a message naming the bad parameter, on error
 * @len: its size
 *
 * The rules (o2iblnd clamps some of these silently; a bad value here is
 * an error):
 *   peer_credits 2..255; peer_credits_hiw peer_credits/2..peer_credits-1;
 *   concurrent_sends peer_credits/2..2*peer_credits; credits 8..16384;
 *   ntx credits..65536 (every message holding a credit needs a tx);
 *   timeout 1..3600; keepalive 0..3600.
 *
 * Return: 0 or -EINVAL.
 */
int o2_tunables_check(struct o2_tunables *t, char *why, size_t len)
{
	int pc = t->peer_credits;

	if (pc < 2 || pc > 255) {
		snprintf(why, len, "peer_credits=%d out of range 2..255", pc);
		return -EINVAL;
	}
	if (!t->peer_credits_hiw)
		t->peer_credits_hiw = pc - 1;
	if (t->peer_credits_hiw < pc / 2 || t->peer_credits_hiw > pc - 1) {
		snprintf(why, len,
			 "peer_credits_hiw=%d out of range %d..%d (peer_credits/2..peer_credits-1)",
			 t->peer_credits_hiw, pc / 2, pc - 1);
		return -EINVAL;
	}
	if (!t->concurrent_sends)
		t->concurrent_sends = pc;
	if (t->concurrent_sends < max(pc / 2, 1) ||
	    t->concurrent_sends > 2 * pc) {
		snprintf(why, len,
			 "concurrent_sends=%d out of range %d..%d (peer_credits/2..2*peer_credits)",
			 t->concurrent_sends, max(pc / 2, 1), 2 * pc);
		return -EINVAL;
	}
	if (t->credits < 8 || t->credits > 16384) {
		snprintf(why, len, "credits=%d out of range 8..16384",
			 t->credits);
		return -EINVAL;
	}
	if (t->ntx < t->credits || t->ntx > 65536) {
		snprintf(why, len,
			 "ntx=%d out of range %d..65536 (at least credits: every message holding a credit needs a tx)",
			 t->ntx, t->credits);
		return -EINVAL;
	}
	if (t->timeout < 1 || t->timeout > 3600) {
		snprintf(why, len, "timeout=%d out of range 1..3600",
			 t->timeout);
		return -EINVAL;
	}
	if (t->keepalive < 0 || t->keepalive > 3600) {
		snprintf(why, len, "keepalive=%d out of range 0..3600 (0: off)",
			 t->keepalive);
		return -EINVAL;
	}
	return 0;
}
