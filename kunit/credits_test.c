// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: credit accounting (module/credits.c): which queue and
 * which credit each message type takes, the NOOP rule, what may be
 * posted, LNet tx credits below zero, the module parameter rules, and a
 * simulation of two ends of a connection exchanging random traffic
 * (IMMEDIATE, PUT and GET with their credit-less replies) that checks
 * no credit is ever exceeded or lost, no receive buffer is overrun, and
 * the exchange never deadlocks; and when posted sends count as stalled.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "wire.h"
#include "credits.h"

static void every_type_waits_on_the_o2iblnd_queue(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_IMMEDIATE), O2_TXQ_CRED);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_PUT_REQ), O2_TXQ_RSRVD);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_GET_REQ), O2_TXQ_RSRVD);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_NOOP), O2_TXQ_NOCRED);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_PUT_ACK), O2_TXQ_NOCRED);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_PUT_NAK), O2_TXQ_NOCRED);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_PUT_DONE), O2_TXQ_NOCRED);
	KUNIT_EXPECT_EQ(test, o2_txq_of(O2_MSG_GET_DONE), O2_TXQ_NOCRED);
}

static void every_type_returns_the_o2iblnd_credit(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_NOOP), O2_RX_CREDIT_NONE);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_IMMEDIATE),
			O2_RX_CREDIT_PEER);
	/* held by the RDMA until PUT_DONE returns it */
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_PUT_REQ),
			O2_RX_CREDIT_NONE);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_PUT_DONE),
			O2_RX_CREDIT_PEER);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_GET_REQ),
			O2_RX_CREDIT_PEER);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_PUT_ACK),
			O2_RX_CREDIT_RSRVD);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_PUT_NAK),
			O2_RX_CREDIT_RSRVD);
	KUNIT_EXPECT_EQ(test, o2_rx_credit_of(O2_MSG_GET_DONE),
			O2_RX_CREDIT_RSRVD);
	KUNIT_EXPECT_TRUE(test, o2_msg_expects_reply(O2_MSG_PUT_REQ));
	KUNIT_EXPECT_TRUE(test, o2_msg_expects_reply(O2_MSG_GET_REQ));
	KUNIT_EXPECT_FALSE(test, o2_msg_expects_reply(O2_MSG_IMMEDIATE));
	KUNIT_EXPECT_EQ(test, o2_rx_buffers(8), 18);
}

static void noop_only_at_high_water_or_keepalive(struct kunit *test)
{
	struct o2_credits c;

	o2_credits_init(&c, 8, 7, 8, 8);
	KUNIT_EXPECT_EQ(test, c.credits, 8);
	KUNIT_EXPECT_EQ(test, c.reserved, 8);
	c.outstanding = 6;
	KUNIT_EXPECT_FALSE(test, o2_need_noop(&c, false, false, false));
	c.outstanding = 7;
	KUNIT_EXPECT_TRUE(test, o2_need_noop(&c, false, false, false));
	/* a queued message will carry them */
	KUNIT_EXPECT_FALSE(test, o2_need_noop(&c, false, true, false));
	KUNIT_EXPECT_FALSE(test, o2_need_noop(&c, true, false, false));
	/* ... unless it has no credit to go: both sides would wait */
	c.credits = 0;
	KUNIT_EXPECT_TRUE(test, o2_need_noop(&c, false, true, false));
	/* an idle conn sends a keepalive even owing nothing */
	c.outstanding = 0;
	c.credits = 8;
	KUNIT_EXPECT_FALSE(test, o2_need_noop(&c, false, false, false));
	KUNIT_EXPECT_TRUE(test, o2_need_noop(&c, false, false, true));
}

static void hiw_is_clamped_below_a_smaller_negotiated_depth(struct kunit *test)
{
	struct o2_credits c;

	o2_credits_init(&c, 16, 15, 16, 16);
	o2_credits_set_depth(&c, 4);
	KUNIT_EXPECT_EQ(test, c.queue_depth, 4);
	KUNIT_EXPECT_EQ(test, c.credits, 4);
	KUNIT_EXPECT_EQ(test, c.reserved, 4);
	KUNIT_EXPECT_EQ(test, c.hiw, 3);
	o2_credits_init(&c, 2, 200, 2, 2);
	KUNIT_EXPECT_EQ(test, c.hiw, 1);
}

static void posting_respects_credits_cap_and_slots(struct kunit *test)
{
	struct o2_credits c;

	o2_credits_init(&c, 4, 3, 2, 2);
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_CRED, false, false, 1),
			O2_POST_OK);
	KUNIT_EXPECT_EQ(test, o2_credits_post(&c, O2_TXQ_CRED, false, 1), 0);
	c.outstanding = 3;
	/* the credits we owe ride on the next message */
	KUNIT_EXPECT_EQ(test, o2_credits_post(&c, O2_TXQ_NOCRED, false, 1), 3);
	KUNIT_EXPECT_EQ(test, c.outstanding, 0);
	KUNIT_EXPECT_EQ(test, c.credits, 3);
	/* concurrent_sends reached */
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, false, false, 1),
			O2_POST_WAIT);
	o2_credits_complete(&c, false, 1);
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, false, false, 1),
			O2_POST_OK);
	/* not enough send-queue slots for a 2-WR message */
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, false, false, 2),
			O2_POST_WAIT);
	c.credits = 0;
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_CRED, false, false, 1),
			O2_POST_WAIT);
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, false, false, 1),
			O2_POST_OK);
	/* NOOPs: dropped when not needed or with two in flight */
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, true, false, 1),
			O2_POST_DROP_NOOP);
	c.noops_posted = O2_OOB_MSGS;
	c.nposted = 0;
	c.sq_used = 0;
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, O2_TXQ_NOCRED, true, true, 1),
			O2_POST_DROP_NOOP);
}

static void credit_less_first_but_alternating_with_credited(struct kunit *test)
{
	struct o2_credits c;
	enum o2_txq q;
	int i;

	o2_credits_init(&c, 8, 0, 8, 64);
	KUNIT_EXPECT_FALSE(test, o2_next_txq(&c, false, false, &q));
	KUNIT_EXPECT_TRUE(test, o2_next_txq(&c, true, false, &q));
	KUNIT_EXPECT_EQ(test, q, O2_TXQ_NOCRED);
	KUNIT_EXPECT_TRUE(test, o2_next_txq(&c, false, true, &q));
	KUNIT_EXPECT_EQ(test, q, O2_TXQ_CRED);
	/* both wait: credit-less, credited, credit-less, ... */
	for (i = 0; i < 6; i++) {
		KUNIT_ASSERT_TRUE(test, o2_next_txq(&c, true, true, &q));
		KUNIT_EXPECT_EQ(test, q, i % 2 ? O2_TXQ_CRED : O2_TXQ_NOCRED);
		o2_credits_post(&c, q, false, 1);
	}
	/* an invalidation counts as credit-less */
	o2_credits_post_local(&c, 1);
	KUNIT_EXPECT_TRUE(test, o2_next_txq(&c, true, true, &q));
	KUNIT_EXPECT_EQ(test, q, O2_TXQ_CRED);
	/* without a credit the credit-less queue goes, turn or not */
	c.credits = 0;
	KUNIT_EXPECT_TRUE(test, o2_next_txq(&c, true, true, &q));
	KUNIT_EXPECT_EQ(test, q, O2_TXQ_NOCRED);
	/* a credited head without a credit is still chosen: may_post waits */
	KUNIT_EXPECT_TRUE(test, o2_next_txq(&c, false, true, &q));
	KUNIT_EXPECT_EQ(test, q, O2_TXQ_CRED);
	KUNIT_EXPECT_EQ(test, o2_may_post(&c, q, false, false, 1),
			O2_POST_WAIT);
}

static void reserved_credits_are_taken_until_none_is_left(struct kunit *test)
{
	struct o2_credits c;
	int n = 0;

	o2_credits_init(&c, 3, 0, 3, 64);
	while (o2_credits_take_reserved(&c))
		n++;
	KUNIT_EXPECT_EQ(test, n, 3);
	KUNIT_EXPECT_EQ(test, c.reserved, 0);
	o2_credits_repost(&c, O2_RX_CREDIT_RSRVD);
	KUNIT_EXPECT_TRUE(test, o2_credits_take_reserved(&c));
	KUNIT_EXPECT_FALSE(test, o2_credits_take_reserved(&c));
}

static void grant_beyond_the_depth_is_refused_and_changes_nothing(struct kunit *test)
{
	struct o2_credits c;

	o2_credits_init(&c, 8, 7, 8, 8);
	c.credits = 5;
	KUNIT_EXPECT_EQ(test, o2_credits_receive(&c, 3), 0);
	KUNIT_EXPECT_EQ(test, c.credits, 8);
	KUNIT_EXPECT_EQ(test, o2_credits_receive(&c, 1), -EPROTO);
	KUNIT_EXPECT_EQ(test, c.credits, 8);
	KUNIT_EXPECT_EQ(test, o2_credits_receive(&c, 255), -EPROTO);
}

static void lnet_credits_queue_below_zero_and_hand_over(struct kunit *test)
{
	struct o2_txcr cr;
	int i;

	o2_txcr_init(&cr, 2);
	KUNIT_EXPECT_TRUE(test, o2_txcr_take(&cr));
	KUNIT_EXPECT_TRUE(test, o2_txcr_take(&cr));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, o2_txcr_take(&cr));
	KUNIT_EXPECT_EQ(test, cr.avail, -3);
	KUNIT_EXPECT_EQ(test, cr.min, -3);
	KUNIT_EXPECT_EQ(test, cr.queued, 3);
	/* a waiter leaves at its deadline: nobody is handed anything */
	o2_txcr_unqueue(&cr);
	KUNIT_EXPECT_EQ(test, cr.avail, -2);
	/* each credit returned goes to a waiter while there are some */
	KUNIT_EXPECT_TRUE(test, o2_txcr_return(&cr));
	KUNIT_EXPECT_TRUE(test, o2_txcr_return(&cr));
	KUNIT_EXPECT_EQ(test, cr.queued, 0);
	KUNIT_EXPECT_FALSE(test, o2_txcr_return(&cr));
	KUNIT_EXPECT_FALSE(test, o2_txcr_return(&cr));
	KUNIT_EXPECT_EQ(test, cr.avail, cr.max);
	KUNIT_EXPECT_EQ(test, cr.min, -3);
}

static const struct o2_tunables o2t_good = {
	.peer_credits = 8, .credits = 256, .ntx = 512, .timeout = 50,
	.keepalive = 100,
};

static void stall_bound_outlasts_the_hca_retries_and_beats_the_timeout(struct kunit *test)
{
	/* ack_timeout 16, 5 retries: the HCA gives up after ~1.6 s */
	KUNIT_EXPECT_EQ(test, o2_stall_ms(16, 5, 50), 5000U);
	KUNIT_EXPECT_EQ(test, o2_stall_ms(16, 5, 20), 5000U);
	/* a long ack timeout: three times the HCA's budget (6 x 1.07 s) */
	KUNIT_EXPECT_EQ(test, o2_stall_ms(18, 5, 3600), 19326U);
	/* capped below half the timeout ... */
	KUNIT_EXPECT_EQ(test, o2_stall_ms(18, 5, 30), 15000U);
	/* ... but never below the HCA's own budget plus a second */
	KUNIT_EXPECT_EQ(test, o2_stall_ms(16, 5, 2), 2610U);
	KUNIT_EXPECT_EQ(test, o2_stall_ms(24, 7, 1), 549755U + 1000U);
	/* nonsense inputs are clamped, never overflow */
	KUNIT_EXPECT_GT(test, o2_stall_ms(-5, -1, 0), 0U);
	KUNIT_EXPECT_GT(test, o2_stall_ms(99, 99, 99999), 0U);
}

static void sends_stall_only_with_sends_in_flight_and_no_progress(struct kunit *test)
{
	struct o2_credits c;
	unsigned long t0 = jiffies, bound = 5 * HZ;

	o2_credits_init(&c, 8, 4, 8, 64);
	/* nothing in flight: never stalled, however old the last progress */
	KUNIT_EXPECT_FALSE(test, o2_sends_stalled(&c, t0, t0 + 100 * HZ, bound));
	o2_credits_post(&c, O2_TXQ_CRED, false, 1);
	KUNIT_EXPECT_FALSE(test, o2_sends_stalled(&c, t0, t0 + bound, bound));
	KUNIT_EXPECT_TRUE(test, o2_sends_stalled(&c, t0, t0 + bound + 1, bound));
	/* progress moves the bound */
	KUNIT_EXPECT_FALSE(test, o2_sends_stalled(&c, t0 + bound, t0 + bound + 1,
						  bound));
	/* jiffies wrap */
	KUNIT_EXPECT_TRUE(test, o2_sends_stalled(&c, ULONG_MAX - 10,
						 ULONG_MAX - 10 + bound + 1, bound));
	o2_credits_complete(&c, false, 1);
	KUNIT_EXPECT_FALSE(test, o2_sends_stalled(&c, t0, t0 + 100 * HZ, bound));
}

/*
 * An iWARP initiator whose peer has said nothing sends a NOOP once its
 * last Send has completed and O2_NUDGE_GAP has passed, at most
 * O2_NUDGES times; never once the peer has spoken.
 */
static void a_silent_iwarp_peer_is_nudged_a_bounded_number_of_times(struct kunit *test)
{
	unsigned long t0 = 1000;
	struct o2_credits c;

	o2_credits_init(&c, 8, 4, 8, 64);
	KUNIT_EXPECT_FALSE(test, o2_nudge_due(&c, false, 0, t0,
					      t0 + O2_NUDGE_GAP - 1));
	KUNIT_EXPECT_TRUE(test, o2_nudge_due(&c, false, 0, t0,
					     t0 + O2_NUDGE_GAP));
	KUNIT_EXPECT_TRUE(test, o2_nudge_due(&c, false, O2_NUDGES - 1, t0,
					     t0 + 100 * HZ));
	/* bounded */
	KUNIT_EXPECT_FALSE(test, o2_nudge_due(&c, false, O2_NUDGES, t0,
					      t0 + 100 * HZ));
	/* the peer has spoken: its socket is read */
	KUNIT_EXPECT_FALSE(test, o2_nudge_due(&c, true, 0, t0, t0 + 100 * HZ));
	/* a Send still in flight: wait for its completion */
	o2_credits_post(&c, O2_TXQ_CRED, false, 1);
	KUNIT_EXPECT_FALSE(test, o2_nudge_due(&c, false, 0, t0, t0 + 100 * HZ));
	o2_credits_complete(&c, false, 1);
	/* jiffies wrap */
	KUNIT_EXPECT_TRUE(test, o2_nudge_due(&c, false, 0, ULONG_MAX - 10,
					     ULONG_MAX - 10 + O2_NUDGE_GAP));
}

static void tunables_fill_defaults(struct kunit *test)
{
	struct o2_tunables t = o2t_good;
	char why[128] = "";

	KUNIT_EXPECT_EQ(test, o2_tunables_check(&t, why, sizeof(why)), 0);
	KUNIT_EXPECT_EQ(test, t.peer_credits_hiw, 7);
	KUNIT_EXPECT_EQ(test, t.concurrent_sends, 8);
}

static void tunables_refuse_bad_values_and_combinations(struct kunit *test)
{
	static const struct {
		const char *field;
		int peer_credits, hiw, cs, credits, ntx, timeout, keepalive;
	} bad[] = {
		{ "peer_credits", 1, 0, 0, 256, 512, 50, 100 },
		{ "peer_credits", 256, 0, 0, 256, 512, 50, 100 },
		{ "peer_credits_hiw", 8, 8, 0, 256, 512, 50, 100 },
		{ "peer_credits_hiw", 8, 3, 0, 256, 512, 50, 100 },
		{ "concurrent_sends", 8, 0, 17, 256, 512, 50, 100 },
		{ "concurrent_sends", 8, 0, 3, 256, 512, 50, 100 },
		{ "credits", 8, 0, 0, 7, 512, 50, 100 },
		{ "ntx", 8, 0, 0, 256, 255, 50, 100 },
		{ "ntx", 8, 0, 0, 256, 65537, 50, 100 },
		{ "timeout", 8, 0, 0, 256, 512, 0, 100 },
		{ "keepalive", 8, 0, 0, 256, 512, 50, -1 },
		{ "keepalive", 8, 0, 0, 256, 512, 50, 3601 },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct o2_tunables t = {
			.peer_credits = bad[i].peer_credits,
			.peer_credits_hiw = bad[i].hiw,
			.concurrent_sends = bad[i].cs,
			.credits = bad[i].credits, .ntx = bad[i].ntx,
			.timeout = bad[i].timeout,
			.keepalive = bad[i].keepalive,
		};
		char why[128] = "";

		KUNIT_EXPECT_EQ_MSG(test, o2_tunables_check(&t, why, sizeof(why)),
				    -EINVAL, "case %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, !strncmp(why, bad[i].field,
						     strlen(bad[i].field)),
				      "case %d: '%s' should name %s", i, why,
				      bad[i].field);
	}
}

/* ---- two ends of a connection exchanging random traffic ---- */

#define SIM_Q	512

struct sim_fifo {
	u8 type[SIM_Q];
	u8 credits[SIM_Q];
	int head, n;
};

static bool sim_push(struct sim_fifo *f, u8 type, u8 credits)
{
	int i = (f->head + f->n) % SIM_Q;

	if (f->n == SIM_Q)
		return false;
	f->type[i] = type;
	f->credits[i] = credits;
	f->n++;
	return true;
}

static u8 sim_pop(struct sim_fifo *f, u8 *credits)
{
	u8 type = f->type[f->head];

	if (credits)
		*credits = f->credits[f->head];
	f->head = (f->head + 1) % SIM_Q;
	f->n--;
	return type;
}

struct sim_side {
	struct o2_credits c;
	struct sim_fifo cred, rsrvd, nocred;	/* tx queues */
	struct sim_fifo posted;			/* Sends awaiting completion */
	int rx_posted, nrx;
	int sent[256], done[256];
};

struct sim {
	struct kunit *test;
	struct sim_side side[2];
	struct sim_fifo wire[2];	/* wire[i]: from side i */
	u32 rnd;
	bool broken;
};

static u32 sim_rand(struct sim *s)
{
	s->rnd = s->rnd * 1103515245 + 12345;
	return s->rnd >> 8;
}

static bool sim_noop_queued(struct sim_fifo *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->type[(f->head + i) % SIM_Q] == O2_MSG_NOOP)
			return true;
	return false;
}

static bool sim_other_nocred(struct sim_fifo *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->type[(f->head + i) % SIM_Q] != O2_MSG_NOOP)
			return true;
	return false;
}

/*
 * o2_conn_check_sends() on side @i: its pure decisions (reserved credits,
 * NOOP need, queue choice, may-post, credit accounting) on model queues.
 */
static void sim_check_sends(struct sim *s, int i)
{
	struct sim_side *x = &s->side[i];
	u8 type;

	while (x->rsrvd.n && o2_credits_take_reserved(&x->c))
		sim_push(&x->cred, sim_pop(&x->rsrvd, NULL), 0);
	if (o2_need_noop(&x->c, sim_other_nocred(&x->nocred), x->cred.n > 0,
			 false) && !sim_noop_queued(&x->nocred))
		sim_push(&x->nocred, O2_MSG_NOOP, 0);
	for (;;) {
		enum o2_post_verdict v;
		struct sim_fifo *q;
		enum o2_txq txq;
		bool noop;
		u8 ret;

		/* the real choice of o2_conn_check_sends() */
		if (!o2_next_txq(&x->c, x->nocred.n, x->cred.n, &txq))
			break;
		q = txq == O2_TXQ_NOCRED ? &x->nocred : &x->cred;
		type = q->type[q->head];
		noop = type == O2_MSG_NOOP;
		v = o2_may_post(&x->c, txq, noop,
				noop && o2_need_noop(&x->c,
						     sim_other_nocred(&x->nocred),
						     x->cred.n > 0, false), 1);
		if (v == O2_POST_WAIT)
			break;
		sim_pop(q, NULL);
		if (v == O2_POST_DROP_NOOP)
			continue;
		ret = o2_credits_post(&x->c, txq, noop, 1);
		sim_push(&s->wire[i], type, ret);
		sim_push(&x->posted, type, 0);
		x->sent[type]++;
	}
}

static void sim_check_invariants(struct sim *s)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct o2_credits *c = &s->side[i].c;

		if (c->credits < 0 || c->credits > c->queue_depth ||
		    c->outstanding < 0 || c->outstanding > c->queue_depth ||
		    c->reserved < 0 || c->reserved > c->queue_depth ||
		    c->nposted > c->concurrent_sends ||
		    c->sq_used > c->sq_size ||
		    c->noops_posted > O2_OOB_MSGS) {
			KUNIT_FAIL(s->test,
				   "side %d: credits %d outstanding %d reserved %d nposted %d noops %d (depth %d)",
				   i, c->credits, c->outstanding, c->reserved,
				   c->nposted, c->noops_posted, c->queue_depth);
			s->broken = true;
		}
	}
}

/* A message from side @from reaches side 1 - @from. */
static void sim_deliver(struct sim *s, int from)
{
	struct sim_side *y = &s->side[1 - from];
	struct sim_fifo *reply = &y->nocred;
	u8 credits, type = sim_pop(&s->wire[from], &credits);

	if (y->rx_posted <= 0) {
		KUNIT_FAIL(s->test, "side %d: no receive buffer for 0x%x",
			   1 - from, type);
		s->broken = true;
		return;
	}
	y->rx_posted--;
	if (o2_credits_receive(&y->c, credits)) {
		KUNIT_FAIL(s->test, "side %d: credit overflow %d + %d",
			   1 - from, y->c.credits, credits);
		s->broken = true;
		return;
	}
	y->done[type]++;
	switch (type) {
	case O2_MSG_PUT_REQ:
		sim_push(reply, O2_MSG_PUT_ACK, 0);
		break;
	case O2_MSG_PUT_ACK:
		sim_push(reply, O2_MSG_PUT_DONE, 0);
		break;
	case O2_MSG_GET_REQ:
		sim_push(reply, O2_MSG_GET_DONE, 0);
		break;
	default:
		break;
	}
	y->rx_posted++;
	o2_credits_repost(&y->c, o2_rx_credit_of(type));
	sim_check_sends(s, 1 - from);
}

static void sim_complete(struct sim *s, int i)
{
	struct sim_side *x = &s->side[i];
	u8 type = sim_pop(&x->posted, NULL);

	o2_credits_complete(&x->c, type == O2_MSG_NOOP, 1);
	sim_check_sends(s, i);
}

static void sim_run(struct kunit *test, u32 seed, int depth, int hiw, int cs)
{
	static const u8 app[] = { O2_MSG_IMMEDIATE, O2_MSG_PUT_REQ,
				  O2_MSG_GET_REQ };
	struct sim *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int step, i, quiet;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	s->rnd = seed;
	for (i = 0; i < 2; i++) {
		o2_credits_init(&s->side[i].c, depth, hiw, cs, cs);
		s->side[i].nrx = o2_rx_buffers(depth);
		s->side[i].rx_posted = s->side[i].nrx;
	}
	for (step = 0; step < 4000 && !s->broken; step++) {
		u32 r = sim_rand(s);
		int side = r & 1;
		struct sim_side *x = &s->side[side];

		switch ((r >> 1) % 4) {
		case 0:		/* the upper layer sends */
			if (x->cred.n + x->rsrvd.n < 64) {
				u8 t = app[(r >> 4) % ARRAY_SIZE(app)];

				sim_push(o2_txq_of(t) == O2_TXQ_RSRVD ?
					 &x->rsrvd : &x->cred, t, 0);
				sim_check_sends(s, side);
			}
			break;
		case 1:
		case 2:		/* the wire delivers */
			if (s->wire[side].n)
				sim_deliver(s, side);
			break;
		default:	/* a Send completes */
			if (x->posted.n)
				sim_complete(s, side);
			break;
		}
		sim_check_invariants(s);
	}
	/* quiesce: everything must drain, without a deadlock */
	for (quiet = 0; quiet < 100000 && !s->broken; quiet++) {
		bool moved = false;

		for (i = 0; i < 2; i++) {
			if (s->wire[i].n) {
				sim_deliver(s, i);
				moved = true;
			}
			if (s->side[i].posted.n) {
				sim_complete(s, i);
				moved = true;
			}
		}
		sim_check_invariants(s);
		if (!moved)
			break;
	}
	if (s->broken)
		return;
	for (i = 0; i < 2; i++) {
		struct sim_side *x = &s->side[i], *y = &s->side[1 - i];

		KUNIT_EXPECT_EQ_MSG(test, x->cred.n + x->rsrvd.n + x->nocred.n,
				    0, "seed %u side %d: messages stuck", seed,
				    i);
		/* every credit is back: ours plus what the peer owes us */
		KUNIT_EXPECT_EQ_MSG(test, x->c.credits + y->c.outstanding,
				    depth, "seed %u side %d", seed, i);
		KUNIT_EXPECT_EQ(test, x->c.reserved, depth);
		KUNIT_EXPECT_EQ(test, x->c.nposted, 0);
		KUNIT_EXPECT_EQ(test, x->rx_posted, x->nrx);
		KUNIT_EXPECT_EQ(test, x->sent[O2_MSG_IMMEDIATE],
				y->done[O2_MSG_IMMEDIATE]);
		/* every PUT and GET finished its exchange */
		KUNIT_EXPECT_EQ(test, x->sent[O2_MSG_PUT_REQ],
				x->done[O2_MSG_PUT_ACK]);
		KUNIT_EXPECT_EQ(test, x->sent[O2_MSG_PUT_DONE],
				y->done[O2_MSG_PUT_DONE]);
		KUNIT_EXPECT_EQ(test, x->sent[O2_MSG_PUT_REQ],
				x->sent[O2_MSG_PUT_DONE]);
		KUNIT_EXPECT_EQ(test, x->sent[O2_MSG_GET_REQ],
				x->done[O2_MSG_GET_DONE]);
		KUNIT_EXPECT_GT(test, x->sent[O2_MSG_IMMEDIATE], 0);
	}
}

static void random_traffic_never_exceeds_or_loses_credits(struct kunit *test)
{
	static const struct { int depth, hiw, cs; } cfg[] = {
		{ 8, 7, 8 }, { 8, 4, 4 }, { 8, 7, 16 }, { 2, 1, 1 },
		{ 3, 2, 6 }, { 32, 31, 32 },
	};
	u32 seed;
	int i;

	for (i = 0; i < ARRAY_SIZE(cfg); i++)
		for (seed = 1; seed <= 8; seed++)
			sim_run(test, seed * 7919 + i, cfg[i].depth, cfg[i].hiw,
				cfg[i].cs);
}

/*
 * A chain of three txs (a 4-WR bulk PUT_DONE, a 1-WR message, a 1-WR
 * invalidation) refused at each of its six work requests in turn: the
 * txs before the refused one are posted, the one it belongs to is
 * partial unless it is its first, and the rest are unposted.
 */
static void a_refused_chain_posts_what_came_before_and_undoes_the_rest(struct kunit *test)
{
	static const int wrs[] = { 4, 1, 1 };
	static const enum o2_chain_fate want[][3] = {
		{ O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED },
		{ O2_CHAIN_PARTIAL, O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED },
		{ O2_CHAIN_PARTIAL, O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED },
		{ O2_CHAIN_PARTIAL, O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED },
		{ O2_CHAIN_POSTED, O2_CHAIN_UNPOSTED, O2_CHAIN_UNPOSTED },
		{ O2_CHAIN_POSTED, O2_CHAIN_POSTED, O2_CHAIN_UNPOSTED },
	};
	int taken, bad, i;

	for (bad = 0; bad < ARRAY_SIZE(want); bad++) {
		taken = bad;
		for (i = 0; i < ARRAY_SIZE(wrs); i++)
			KUNIT_EXPECT_EQ_MSG(test, o2_chain_fate(&taken, wrs[i]),
					    want[bad][i], "refused at %d, tx %d",
					    bad, i);
		KUNIT_EXPECT_EQ(test, taken, 0);
	}
	/* a chain taken whole (a provider that named no bad work request) */
	taken = 6;
	for (i = 0; i < ARRAY_SIZE(wrs); i++)
		KUNIT_EXPECT_EQ(test, o2_chain_fate(&taken, wrs[i]),
				O2_CHAIN_POSTED);
}

static struct kunit_case o2_credits_cases[] = {
	KUNIT_CASE(every_type_waits_on_the_o2iblnd_queue),
	KUNIT_CASE(every_type_returns_the_o2iblnd_credit),
	KUNIT_CASE(noop_only_at_high_water_or_keepalive),
	KUNIT_CASE(hiw_is_clamped_below_a_smaller_negotiated_depth),
	KUNIT_CASE(posting_respects_credits_cap_and_slots),
	KUNIT_CASE(credit_less_first_but_alternating_with_credited),
	KUNIT_CASE(reserved_credits_are_taken_until_none_is_left),
	KUNIT_CASE(grant_beyond_the_depth_is_refused_and_changes_nothing),
	KUNIT_CASE(lnet_credits_queue_below_zero_and_hand_over),
	KUNIT_CASE(stall_bound_outlasts_the_hca_retries_and_beats_the_timeout),
	KUNIT_CASE(sends_stall_only_with_sends_in_flight_and_no_progress),
	KUNIT_CASE(a_silent_iwarp_peer_is_nudged_a_bounded_number_of_times),
	KUNIT_CASE(tunables_fill_defaults),
	KUNIT_CASE(tunables_refuse_bad_values_and_combinations),
	KUNIT_CASE(random_traffic_never_exceeds_or_loses_credits),
	KUNIT_CASE(a_refused_chain_posts_what_came_before_and_undoes_the_rest),
	{}
};

static struct kunit_suite o2_credits_suite = {
	.name = "o2lnd_credits",
	.test_cases = o2_credits_cases,
};

kunit_test_suites(&o2_credits_suite);
