// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the conn and peer state machines, the connection race
 * verdict, the reconnect backoff and its jitter, the connect-phase
 * deadline and the retry decision after a reject (module/state.c).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/string.h>
#include "state.h"
#include "o2lnd_kunit.h"

/* The documented table, written out independently of state.c's. */
static const bool o2t_allowed[O2_CONN_NSTATES][O2_CONN_NSTATES] = {
	[O2_CONN_INIT] = {
		[O2_CONN_ACTIVE_CONNECT] = true,
		[O2_CONN_PASSIVE_WAIT] = true,
		[O2_CONN_CLOSING] = true,
	},
	[O2_CONN_ACTIVE_CONNECT] = {
		[O2_CONN_ESTABLISHED] = true,
		[O2_CONN_CLOSING] = true,
	},
	[O2_CONN_PASSIVE_WAIT] = {
		[O2_CONN_ESTABLISHED] = true,
		[O2_CONN_CLOSING] = true,
	},
	[O2_CONN_ESTABLISHED] = {
		[O2_CONN_CLOSING] = true,
	},
	[O2_CONN_CLOSING] = {
		[O2_CONN_DISCONNECTED] = true,
	},
};

static void transition_table_allows_exactly_the_documented_pairs(struct kunit *test)
{
	int from, to, allowed = 0;

	for (from = 0; from < O2_CONN_NSTATES; from++) {
		for (to = 0; to < O2_CONN_NSTATES; to++) {
			bool ok = o2_conn_transition_ok(from, to);

			allowed += ok;
			KUNIT_EXPECT_EQ_MSG(test, ok, o2t_allowed[from][to],
					    "%s -> %s", o2_conn_state_name(from),
					    o2_conn_state_name(to));
		}
	}
	KUNIT_EXPECT_EQ(test, allowed, 9);
}

static void transition_to_the_same_state_is_forbidden(struct kunit *test)
{
	int s;

	for (s = 0; s < O2_CONN_NSTATES; s++)
		KUNIT_EXPECT_FALSE_MSG(test, o2_conn_transition_ok(s, s), "%s",
				       o2_conn_state_name(s));
}

static void every_live_state_can_close_and_only_closing_ends(struct kunit *test)
{
	int s;

	for (s = O2_CONN_INIT; s <= O2_CONN_ESTABLISHED; s++) {
		KUNIT_EXPECT_TRUE(test, o2_conn_transition_ok(s, O2_CONN_CLOSING));
		KUNIT_EXPECT_FALSE(test,
				   o2_conn_transition_ok(s, O2_CONN_DISCONNECTED));
	}
	KUNIT_EXPECT_TRUE(test, o2_conn_transition_ok(O2_CONN_CLOSING,
						      O2_CONN_DISCONNECTED));
	/* no way back from CLOSING or DISCONNECTED */
	for (s = 0; s < O2_CONN_NSTATES; s++) {
		if (s != O2_CONN_DISCONNECTED)
			KUNIT_EXPECT_FALSE(test,
					   o2_conn_transition_ok(O2_CONN_CLOSING, s));
		KUNIT_EXPECT_FALSE(test,
				   o2_conn_transition_ok(O2_CONN_DISCONNECTED, s));
	}
}

static void transition_rejects_values_that_are_not_states(struct kunit *test)
{
	static const int bad[] = { -1, O2_CONN_NSTATES, 8, 255, INT_MAX };
	int i, s;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		for (s = 0; s < O2_CONN_NSTATES; s++) {
			KUNIT_EXPECT_FALSE(test, o2_conn_transition_ok(bad[i], s));
			KUNIT_EXPECT_FALSE(test, o2_conn_transition_ok(s, bad[i]));
		}
	}
}

static void state_names_are_distinct_and_bounded(struct kunit *test)
{
	int a, b;

	for (a = 0; a < O2_CONN_NSTATES; a++) {
		KUNIT_EXPECT_STRNEQ(test, o2_conn_state_name(a), "?");
		for (b = a + 1; b < O2_CONN_NSTATES; b++)
			KUNIT_EXPECT_STRNEQ(test, o2_conn_state_name(a),
					    o2_conn_state_name(b));
	}
	KUNIT_EXPECT_STREQ(test, o2_conn_state_name(O2_CONN_ESTABLISHED),
			   "ESTABLISHED");
	KUNIT_EXPECT_STREQ(test, o2_conn_state_name(O2_CONN_NSTATES), "?");
	KUNIT_EXPECT_STREQ(test, o2_conn_state_name(-1), "?");
}

static struct kunit_case o2_state_cases[] = {
	KUNIT_CASE(transition_table_allows_exactly_the_documented_pairs),
	KUNIT_CASE(transition_to_the_same_state_is_forbidden),
	KUNIT_CASE(every_live_state_can_close_and_only_closing_ends),
	KUNIT_CASE(transition_rejects_values_that_are_not_states),
	KUNIT_CASE(state_names_are_distinct_and_bounded),
	{}
};

static struct kunit_suite o2_state_suite = {
	.name = "o2lnd_conn_state",
	.test_cases = o2_state_cases,
};

/* ------------------------------------------------------------ deadlines */

static void phase_timeout_is_at_least_five_seconds(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(0), 5UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(1), 5UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(50), 5UL * HZ);	/* default */
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(59), 5UL * HZ);
}

/* conns_per_peer: only the side that connects opens more, one at a time */
static void only_the_connecting_side_opens_more_conns(struct kunit *test)
{
	/* one conn of ours up, two wanted: one more */
	KUNIT_EXPECT_TRUE(test, o2_peer_wants_conn(1, 1, 0, 2, false));
	KUNIT_EXPECT_TRUE(test, o2_peer_wants_conn(3, 1, 0, 4, false));
	/* enough */
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(2, 2, 0, 2, false));
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(3, 1, 0, 2, false));
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(1, 1, 0, 1, false));
	/* one at a time: not while a connect is under way */
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(1, 1, 1, 4, false));
	/* the accepting side never opens conns of its own beside the peer's */
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(1, 0, 0, 4, false));
	/* nothing up yet: the first connect is not ours to decide here */
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(0, 0, 0, 4, false));
	/* our own NID: one conn in two halves */
	KUNIT_EXPECT_FALSE(test, o2_peer_wants_conn(2, 1, 0, 4, true));
}

/*
 * A send and connd's scan both decided to connect a peer: the second to
 * get the lock finds the first's connect under way, or already refused
 * for good (its messages failed) or backing off, and starts none.
 */
static void a_first_connect_starts_only_for_waiting_messages(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, o2_peer_connect_due(false, false, true));
	/* a connect is under way: the messages go on its conn */
	KUNIT_EXPECT_FALSE(test, o2_peer_connect_due(true, false, true));
	/* refused for good: the messages failed, none wait */
	KUNIT_EXPECT_FALSE(test, o2_peer_connect_due(false, true, false));
	KUNIT_EXPECT_FALSE(test, o2_peer_connect_due(false, false, false));
	/* BACKOFF: the messages wait for the scheduled reconnect */
	KUNIT_EXPECT_FALSE(test, o2_peer_connect_due(false, true, true));
}

/* the conns of a device take its completion vectors in turn */
static void cqs_take_the_completion_vectors_in_turn(struct kunit *test)
{
	int seen[4] = {}, i;

	for (i = 0; i < 8; i++)
		seen[o2_comp_vector_pick(i, 4)]++;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, seen[i], 2);
	KUNIT_EXPECT_EQ(test, o2_comp_vector_pick(5, 2), 1);
	/* one vector, none reported, or a bogus count: vector 0 */
	KUNIT_EXPECT_EQ(test, o2_comp_vector_pick(7, 1), 0);
	KUNIT_EXPECT_EQ(test, o2_comp_vector_pick(7, 0), 0);
	KUNIT_EXPECT_EQ(test, o2_comp_vector_pick(7, -3), 0);
	/* the count wraps without leaving the range */
	KUNIT_EXPECT_EQ(test, o2_comp_vector_pick(U32_MAX, 3), 0);
	KUNIT_EXPECT_LT(test, o2_comp_vector_pick(U32_MAX, 64), 64);
}

static void phase_timeout_is_a_tenth_of_long_timeouts(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(60), 6UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(120), 12UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(3600), 360UL * HZ);	/* max */
}

/* ------------------------------------------------------------ rejects */

static const struct o2_connparams o2t_ours = {
	.queue_depth = 8, .max_frags = 256, .max_msg_size = 4096,
};

static void param_reject_adopts_smaller_params_once(struct kunit *test)
{
	struct o2_connparams rej = { 4, 32, 4096 }, cp = o2t_ours;
	int races = 0, retries = 0;

	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_MSG_QUEUE_SIZE, &rej,
						 &cp, &races, &retries, 7), 0L);
	KUNIT_EXPECT_EQ(test, cp.queue_depth, (u16)4);
	KUNIT_EXPECT_EQ(test, cp.max_frags, (u16)32);
	KUNIT_EXPECT_EQ(test, cp.max_msg_size, 4096U);
	KUNIT_EXPECT_EQ(test, retries, 1);
	KUNIT_EXPECT_EQ(test, races, 0);
	/* a second parameter reject is final */
	rej.queue_depth = 2;
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_RDMA_FRAGS, &rej,
						 &cp, &races, &retries, 7), -1L);
	KUNIT_EXPECT_EQ(test, cp.queue_depth, (u16)4);
}

static void param_reject_without_anything_to_shrink_is_final(struct kunit *test)
{
	static const u8 whys[] = {
		O2_REJECT_MSG_QUEUE_SIZE, O2_REJECT_RDMA_FRAGS,
		O2_REJECT_CONN_UNCOMPAT,
	};
	/* equal, larger, or unusable (depth < 2, no frags) values */
	static const struct o2_connparams rejs[] = {
		{ 8, 256, 4096 }, { 16, 512, 8192 }, { 1, 0, 4096 }, { 0, 0, 0 },
	};
	int i, j;

	for (i = 0; i < ARRAY_SIZE(whys); i++) {
		for (j = 0; j < ARRAY_SIZE(rejs); j++) {
			struct o2_connparams cp = o2t_ours;
			int races = 0, retries = 0;

			KUNIT_EXPECT_EQ_MSG(test,
					    o2_reject_retry_ms(whys[i], &rejs[j],
							       &cp, &races,
							       &retries, 0),
					    -1L, "why %u rej %d", whys[i], j);
			KUNIT_EXPECT_EQ(test, memcmp(&cp, &o2t_ours, sizeof(cp)),
					0);
		}
	}
}

static void race_reject_retries_after_100_to_499_ms(struct kunit *test)
{
	static const u32 rnds[] = { 0, 1, 399, 400, 12345, U32_MAX };
	struct o2_connparams cp = o2t_ours;
	int i, races = 0, retries = 0;

	for (i = 0; i < ARRAY_SIZE(rnds); i++) {
		long ms = o2_reject_retry_ms(O2_REJECT_CONN_RACE, &o2t_ours, &cp,
					     &races, &retries, rnds[i]);

		KUNIT_EXPECT_GE(test, ms, 100L);
		KUNIT_EXPECT_LE(test, ms, 499L);
	}
	KUNIT_EXPECT_EQ(test, races, (int)ARRAY_SIZE(rnds));
	KUNIT_EXPECT_EQ(test, retries, 0);
}

static void race_rejects_give_up_after_max_races_plus_five(struct kunit *test)
{
	struct o2_connparams cp = o2t_ours;
	int i, races = 0, retries = 0;

	for (i = 0; i < O2_MAX_RACES + 5; i++)
		KUNIT_EXPECT_GE(test, o2_reject_retry_ms(O2_REJECT_CONN_RACE,
							 &o2t_ours, &cp, &races,
							 &retries, i), 100L);
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_CONN_RACE, &o2t_ours,
						 &cp, &races, &retries, 0),
			-1L);
}

static void stale_reject_retries_max_retries_times(struct kunit *test)
{
	struct o2_connparams cp = o2t_ours;
	int i, races = 0, retries = 0;

	for (i = 0; i < O2_MAX_RETRIES; i++) {
		long ms = o2_reject_retry_ms(O2_REJECT_CONN_STALE, &o2t_ours, &cp,
					     &races, &retries, U32_MAX - i);

		KUNIT_EXPECT_GE(test, ms, 500L);
		KUNIT_EXPECT_LE(test, ms, 999L);
	}
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_CONN_STALE, &o2t_ours,
						 &cp, &races, &retries, 0),
			-1L);
	KUNIT_EXPECT_EQ(test, races, 0);
}

static void early_reject_retries_after_500_to_999_ms(struct kunit *test)
{
	static const u32 rnds[] = { 0, 499, 500, U32_MAX };
	static const long want[] = { 500, 999, 500, 795 };
	struct o2_connparams cp = o2t_ours;
	int i, races = 0, retries = 0;

	for (i = 0; i < O2_MAX_RETRIES; i++) {
		KUNIT_EXPECT_EQ_MSG(test,
				    o2_reject_retry_ms(O2_REJECT_EARLY, &o2t_ours,
						       &cp, &races, &retries,
						       rnds[i]),
				    want[i], "rnd %u", rnds[i]);
		KUNIT_EXPECT_EQ(test, retries, i + 1);
	}
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_EARLY, &o2t_ours,
						 &cp, &races, &retries, 0),
			-1L);
	KUNIT_EXPECT_EQ(test, races, 0);
	KUNIT_EXPECT_EQ(test, memcmp(&cp, &o2t_ours, sizeof(cp)), 0);
	/* U32_MAX % 500 == 295 */
	retries = 0;
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_EARLY, &o2t_ours,
						 &cp, &races, &retries,
						 rnds[3]), want[3]);
}

static void no_resources_reject_retries_after_1000_to_1999_ms(struct kunit *test)
{
	static const u32 rnds[] = { 0, 999, 1000, U32_MAX };
	static const long want[] = { 1000, 1999, 1000, 1295 };
	struct o2_connparams cp = o2t_ours;
	int i, races = 0, retries = 0;

	for (i = 0; i < O2_MAX_RETRIES; i++) {
		KUNIT_EXPECT_EQ_MSG(test,
				    o2_reject_retry_ms(O2_REJECT_NO_RESOURCES,
						       &o2t_ours, &cp, &races,
						       &retries, rnds[i]),
				    want[i], "rnd %u", rnds[i]);
		KUNIT_EXPECT_EQ(test, retries, i + 1);
	}
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_NO_RESOURCES,
						 &o2t_ours, &cp, &races,
						 &retries, 0), -1L);
	KUNIT_EXPECT_EQ(test, races, 0);
	KUNIT_EXPECT_EQ(test, memcmp(&cp, &o2t_ours, sizeof(cp)), 0);
	/* U32_MAX % 1000 == 295 */
	retries = 0;
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_NO_RESOURCES,
						 &o2t_ours, &cp, &races,
						 &retries, rnds[3]), want[3]);
}

static void stale_early_and_no_resources_share_max_retries(struct kunit *test)
{
	struct o2_connparams cp = o2t_ours;
	int races = 0, retries = 0;

	KUNIT_EXPECT_GE(test, o2_reject_retry_ms(O2_REJECT_CONN_STALE, &o2t_ours,
						 &cp, &races, &retries, 1), 500L);
	KUNIT_EXPECT_GE(test, o2_reject_retry_ms(O2_REJECT_EARLY, &o2t_ours,
						 &cp, &races, &retries, 2), 500L);
	KUNIT_EXPECT_GE(test, o2_reject_retry_ms(O2_REJECT_NO_RESOURCES,
						 &o2t_ours, &cp, &races,
						 &retries, 3), 1000L);
	KUNIT_EXPECT_EQ(test, retries, O2_MAX_RETRIES);
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_NO_RESOURCES,
						 &o2t_ours, &cp, &races,
						 &retries, 0), -1L);
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_EARLY, &o2t_ours,
						 &cp, &races, &retries, 0),
			-1L);
	KUNIT_EXPECT_EQ(test, o2_reject_retry_ms(O2_REJECT_CONN_STALE, &o2t_ours,
						 &cp, &races, &retries, 0),
			-1L);
	/* CONN_RACE has its own budget */
	KUNIT_EXPECT_GE(test, o2_reject_retry_ms(O2_REJECT_CONN_RACE, &o2t_ours,
						 &cp, &races, &retries, 0),
			100L);
	KUNIT_EXPECT_EQ(test, races, 1);
}

static void fatal_invalid_srv_id_and_unknown_rejects_are_final(struct kunit *test)
{
	static const u8 whys[] = {
		0, O2_REJECT_FATAL, O2_REJECT_INVALID_SRV_ID, 10, 255,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(whys); i++) {
		struct o2_connparams cp = o2t_ours;
		int races = 0, retries = 0;

		KUNIT_EXPECT_EQ_MSG(test, o2_reject_retry_ms(whys[i], &o2t_ours,
							     &cp, &races,
							     &retries, 0),
				    -1L, "why %u", whys[i]);
		KUNIT_EXPECT_EQ(test, races + retries, 0);
		KUNIT_EXPECT_EQ(test, memcmp(&cp, &o2t_ours, sizeof(cp)), 0);
	}
}

/* ------------------------------------------------ teardown and ports */

static void teardown_waits_only_for_a_cm_message_on_a_down_port(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, o2_teardown_waits_for_port(true, true, false,
							   false));
	/* port up: the DREQ goes now */
	KUNIT_EXPECT_FALSE(test, o2_teardown_waits_for_port(true, false, false,
							    false));
	/* nothing to send (no QP, or the DREQ went out before) */
	KUNIT_EXPECT_FALSE(test, o2_teardown_waits_for_port(false, true, false,
							    false));
}

static void teardown_never_waits_for_a_removed_device_or_an_unload(struct kunit *test)
{
	int i;

	for (i = 0; i < 4; i++) {
		bool cm = i & 1, down = i & 2;

		KUNIT_EXPECT_FALSE(test, o2_teardown_waits_for_port(cm, down,
								    true,
								    false));
		KUNIT_EXPECT_FALSE(test, o2_teardown_waits_for_port(cm, down,
								    false,
								    true));
		KUNIT_EXPECT_FALSE(test, o2_teardown_waits_for_port(cm, down,
								    true,
								    true));
	}
}

static void surplus_conn_closes_only_when_quiet_and_idle(struct kunit *test)
{
	unsigned long since = 1000, quiet = 250;

	/* the peer spoke on it less than @quiet ago: it stays */
	KUNIT_EXPECT_FALSE(test, o2_surplus_close_due(since, since, quiet,
						      false));
	KUNIT_EXPECT_FALSE(test, o2_surplus_close_due(since, since + quiet - 1,
						      quiet, false));
	/* quiet long enough, nothing of ours on it: it closes */
	KUNIT_EXPECT_TRUE(test, o2_surplus_close_due(since, since + quiet,
						     quiet, false));
	/* something of ours queued or posted on it: it stays */
	KUNIT_EXPECT_FALSE(test, o2_surplus_close_due(since, since + 10 * quiet,
						      quiet, true));
}

static void surplus_quiet_survives_jiffies_wrap(struct kunit *test)
{
	unsigned long since = ULONG_MAX - 10, quiet = 250;

	KUNIT_EXPECT_FALSE(test, o2_surplus_close_due(since, since + 100,
						      quiet, false));
	KUNIT_EXPECT_TRUE(test, o2_surplus_close_due(since, since + quiet,
						     quiet, false));
}

static struct kunit_case o2_retry_cases[] = {
	KUNIT_CASE(surplus_conn_closes_only_when_quiet_and_idle),
	KUNIT_CASE(surplus_quiet_survives_jiffies_wrap),
	KUNIT_CASE(phase_timeout_is_at_least_five_seconds),
	KUNIT_CASE(phase_timeout_is_a_tenth_of_long_timeouts),
	KUNIT_CASE(cqs_take_the_completion_vectors_in_turn),
	KUNIT_CASE(only_the_connecting_side_opens_more_conns),
	KUNIT_CASE(a_first_connect_starts_only_for_waiting_messages),
	KUNIT_CASE(teardown_waits_only_for_a_cm_message_on_a_down_port),
	KUNIT_CASE(teardown_never_waits_for_a_removed_device_or_an_unload),
	KUNIT_CASE(param_reject_adopts_smaller_params_once),
	KUNIT_CASE(param_reject_without_anything_to_shrink_is_final),
	KUNIT_CASE(race_reject_retries_after_100_to_499_ms),
	KUNIT_CASE(race_rejects_give_up_after_max_races_plus_five),
	KUNIT_CASE(stale_reject_retries_max_retries_times),
	KUNIT_CASE(early_reject_retries_after_500_to_999_ms),
	KUNIT_CASE(no_resources_reject_retries_after_1000_to_1999_ms),
	KUNIT_CASE(stale_early_and_no_resources_share_max_retries),
	KUNIT_CASE(fatal_invalid_srv_id_and_unknown_rejects_are_final),
	{}
};

static struct kunit_suite o2_retry_suite = {
	.name = "o2lnd_deadlines_retries",
	.test_cases = o2_retry_cases,
};

/* ------------------------------------------------------------ peer states */

/* The documented table, written out independently of state.c's. */
static const bool o2t_peer_allowed[O2_PEER_NSTATES][O2_PEER_NSTATES] = {
	[O2_PEER_IDLE] = {
		[O2_PEER_CONNECTING] = true,
		[O2_PEER_ESTABLISHED] = true,
	},
	[O2_PEER_CONNECTING] = {
		[O2_PEER_IDLE] = true,
		[O2_PEER_ESTABLISHED] = true,
		[O2_PEER_BACKOFF] = true,
	},
	[O2_PEER_ESTABLISHED] = {
		[O2_PEER_IDLE] = true,
		[O2_PEER_CONNECTING] = true,
		[O2_PEER_BACKOFF] = true,
	},
	[O2_PEER_BACKOFF] = {
		[O2_PEER_IDLE] = true,
		[O2_PEER_CONNECTING] = true,
		[O2_PEER_ESTABLISHED] = true,
	},
};

static void peer_table_allows_every_change_but_idle_to_backoff(struct kunit *test)
{
	int from, to, allowed = 0;

	for (from = 0; from < O2_PEER_NSTATES; from++) {
		for (to = 0; to < O2_PEER_NSTATES; to++) {
			bool ok = o2_peer_transition_ok(from, to);

			allowed += ok;
			KUNIT_EXPECT_EQ_MSG(test, ok, o2t_peer_allowed[from][to],
					    "%s -> %s", o2_peer_state_name(from),
					    o2_peer_state_name(to));
		}
	}
	/* 4 x 3 changes between different states, less IDLE -> BACKOFF */
	KUNIT_EXPECT_EQ(test, allowed, 11);
}

static void peer_table_forbids_idle_to_backoff(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, o2_peer_transition_ok(O2_PEER_IDLE,
						       O2_PEER_BACKOFF));
	/* but a failed connect may back off, and a backoff may end idle */
	KUNIT_EXPECT_TRUE(test, o2_peer_transition_ok(O2_PEER_CONNECTING,
						      O2_PEER_BACKOFF));
	KUNIT_EXPECT_TRUE(test, o2_peer_transition_ok(O2_PEER_ESTABLISHED,
						      O2_PEER_BACKOFF));
	KUNIT_EXPECT_TRUE(test, o2_peer_transition_ok(O2_PEER_BACKOFF,
						      O2_PEER_IDLE));
}

static void peer_transition_to_the_same_state_is_forbidden(struct kunit *test)
{
	int s;

	for (s = 0; s < O2_PEER_NSTATES; s++)
		KUNIT_EXPECT_FALSE_MSG(test, o2_peer_transition_ok(s, s), "%s",
				       o2_peer_state_name(s));
}

static void peer_transition_rejects_values_that_are_not_states(struct kunit *test)
{
	static const int bad[] = { -1, O2_PEER_NSTATES, 8, 255, INT_MAX };
	int i, s;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		for (s = 0; s < O2_PEER_NSTATES; s++) {
			KUNIT_EXPECT_FALSE(test, o2_peer_transition_ok(bad[i], s));
			KUNIT_EXPECT_FALSE(test, o2_peer_transition_ok(s, bad[i]));
		}
	}
}

static void peer_state_names_are_distinct_and_bounded(struct kunit *test)
{
	static const char * const names[O2_PEER_NSTATES] = {
		"IDLE", "CONNECTING", "ESTABLISHED", "BACKOFF",
	};
	int s;

	for (s = 0; s < O2_PEER_NSTATES; s++)
		KUNIT_EXPECT_STREQ(test, o2_peer_state_name(s), names[s]);
	KUNIT_EXPECT_STREQ(test, o2_peer_state_name(O2_PEER_NSTATES), "?");
	KUNIT_EXPECT_STREQ(test, o2_peer_state_name(-1), "?");
	KUNIT_EXPECT_STREQ(test, o2_peer_state_name(INT_MAX), "?");
}

static void peer_state_of_prefers_established_then_connecting_then_backoff(struct kunit *test)
{
	int m;

	/* bit 2: established, bit 1: connecting, bit 0: backoff */
	for (m = 0; m < 8; m++) {
		enum o2_peer_state want;

		if (m & 4)
			want = O2_PEER_ESTABLISHED;
		else if (m & 2)
			want = O2_PEER_CONNECTING;
		else if (m & 1)
			want = O2_PEER_BACKOFF;
		else
			want = O2_PEER_IDLE;
		KUNIT_EXPECT_EQ_MSG(test, o2_peer_state_of(m & 4, m & 2, m & 1),
				    want, "established %d connecting %d backoff %d",
				    !!(m & 4), !!(m & 2), !!(m & 1));
	}
}

static struct kunit_case o2_peer_state_cases[] = {
	KUNIT_CASE(peer_table_allows_every_change_but_idle_to_backoff),
	KUNIT_CASE(peer_table_forbids_idle_to_backoff),
	KUNIT_CASE(peer_transition_to_the_same_state_is_forbidden),
	KUNIT_CASE(peer_transition_rejects_values_that_are_not_states),
	KUNIT_CASE(peer_state_names_are_distinct_and_bounded),
	KUNIT_CASE(peer_state_of_prefers_established_then_connecting_then_backoff),
	{}
};

static struct kunit_suite o2_peer_state_suite = {
	.name = "o2lnd_peer_state",
	.test_cases = o2_peer_state_cases,
};

/* ------------------------------------------------------------ races */

/* O2T_NID_B > O2T_NID_A: B wins a race, A's request is rejected by B */

/* o2_race_decide() on our connect: sent @sent_ms ago (-1: not sent) */
static enum o2_race_verdict race(int sent_ms, bool claimed, int races,
				 u64 ours, u64 theirs)
{
	struct o2_race_facts f = {
		.connecting = true,
		.sent = sent_ms >= 0,
		.sent_ms = sent_ms >= 0 ? (unsigned int)sent_ms : 0,
		.claimed = claimed,
		.races = races,
	};

	return o2_race_decide(&f, ours, theirs);
}

static void race_without_our_connect_is_accepted(struct kunit *test)
{
	static const int races[] = { 0, O2_MAX_RACES - 1, O2_MAX_RACES };
	struct o2_race_facts f = {};
	int j, claimed;

	for (j = 0; j < ARRAY_SIZE(races); j++)
		for (claimed = 0; claimed < 2; claimed++) {
			f.races = races[j];
			f.claimed = claimed;
			KUNIT_EXPECT_EQ(test, o2_race_decide(&f, O2T_NID_B,
							     O2T_NID_A),
					O2_RACE_ACCEPT);
		}
}

/*
 * Our CONNREQ has not left (address, route, QP): to the peer there is no
 * race; whoever wins by NID, its request is accepted and ours withdrawn
 * (the Lustre 2.15 `lctl ping` of 1 s that a reject made fail).
 */
static void race_before_our_request_left_yields(struct kunit *test)
{
	static const int races[] = { 0, O2_MAX_RACES - 1, O2_MAX_RACES };
	int j;

	for (j = 0; j < ARRAY_SIZE(races); j++) {
		KUNIT_EXPECT_EQ(test, race(-1, false, races[j], O2T_NID_B,
					   O2T_NID_A), O2_RACE_YIELD);
		KUNIT_EXPECT_EQ(test, race(-1, false, races[j], O2T_NID_A,
					   O2T_NID_B), O2_RACE_YIELD);
	}
}

static void race_higher_nid_request_is_accepted(struct kunit *test)
{
	static const int ages[] = { 0, 999, 1000, INT_MAX };
	static const int races[] = { 0, O2_MAX_RACES - 1, O2_MAX_RACES };
	int i, j;

	/* we are A, our request is out: B's request wins, ours goes on */
	for (i = 0; i < ARRAY_SIZE(ages); i++)
		for (j = 0; j < ARRAY_SIZE(races); j++)
			KUNIT_EXPECT_EQ_MSG(test,
					    race(ages[i], false, races[j],
						 O2T_NID_A, O2T_NID_B),
					    O2_RACE_ACCEPT, "age %d races %d",
					    ages[i], races[j]);
}

static void race_lower_nid_fresh_request_is_rejected(struct kunit *test)
{
	static const int ages[] = { 0, 1, O2_RACE_WINDOW_MS - 1 };
	static const int races[] = { 0, 1, O2_MAX_RACES - 1 };
	int i, j;

	/* we are B, our request is out: A's request loses while ours is young */
	for (i = 0; i < ARRAY_SIZE(ages); i++)
		for (j = 0; j < ARRAY_SIZE(races); j++)
			KUNIT_EXPECT_EQ_MSG(test,
					    race(ages[i], false, races[j],
						 O2T_NID_B, O2T_NID_A),
					    O2_RACE_REJECT, "age %d races %d",
					    ages[i], races[j]);
}

/*
 * The peer rejected ours with CONN_RACE although we win by our rule: its
 * rule differs (nidhash() of 2.16+ against the raw NID of 2.15 for NIDs
 * that differ beyond the last octet); we yield rather than reject back.
 */
static void race_claimed_by_the_peer_yields(struct kunit *test)
{
	static const int ages[] = { 0, 1, O2_RACE_WINDOW_MS - 1 };
	int i;

	for (i = 0; i < ARRAY_SIZE(ages); i++)
		KUNIT_EXPECT_EQ_MSG(test, race(ages[i], true, 0, O2T_NID_B,
					       O2T_NID_A),
				    O2_RACE_YIELD, "age %d", ages[i]);
	/* where we lose anyway, nothing changes */
	KUNIT_EXPECT_EQ(test, race(0, true, 0, O2T_NID_A, O2T_NID_B),
			O2_RACE_ACCEPT);
}

static void race_older_than_window_aborts_ours(struct kunit *test)
{
	static const int ages[] = {
		O2_RACE_WINDOW_MS, O2_RACE_WINDOW_MS + 1, 60000, INT_MAX,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(ages); i++)
		KUNIT_EXPECT_EQ_MSG(test, race(ages[i], false, 0, O2T_NID_B,
					       O2T_NID_A),
				    O2_RACE_ABORT_OURS, "age %d", ages[i]);
}

static void race_after_max_races_aborts_ours(struct kunit *test)
{
	static const int races[] = { O2_MAX_RACES, O2_MAX_RACES + 1, INT_MAX };
	int i;

	for (i = 0; i < ARRAY_SIZE(races); i++)
		KUNIT_EXPECT_EQ_MSG(test, race(0, false, races[i], O2T_NID_B,
					       O2T_NID_A),
				    O2_RACE_ABORT_OURS, "races %d", races[i]);
	KUNIT_EXPECT_EQ(test, race(0, false, O2_MAX_RACES - 1, O2T_NID_B,
				   O2T_NID_A),
			O2_RACE_REJECT);
}

static void race_with_our_own_nid_is_accepted(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, race(0, false, 0, O2T_NID_A, O2T_NID_A),
			O2_RACE_ACCEPT);
	KUNIT_EXPECT_EQ(test, race(-1, true, O2_MAX_RACES, O2T_NID_A,
				   O2T_NID_A),
			O2_RACE_ACCEPT);
	KUNIT_EXPECT_EQ(test, race(INT_MAX, true, O2_MAX_RACES, O2T_NID_A,
				   O2T_NID_A),
			O2_RACE_ACCEPT);
}

/* ------------------------------------------------------------ backoff */

static void backoff_starts_at_one_second(struct kunit *test)
{
	static const unsigned int cur[] = { 0, 1, O2_BACKOFF_MIN_MS - 1 };
	int i;

	for (i = 0; i < ARRAY_SIZE(cur); i++)
		KUNIT_EXPECT_EQ_MSG(test, o2_backoff_next(cur[i]),
				    (unsigned int)O2_BACKOFF_MIN_MS, "cur %u",
				    cur[i]);
}

static void backoff_doubles_to_cap(struct kunit *test)
{
	static const unsigned int want[] = {
		1000, 2000, 4000, 8000, 8000, 8000,
	};
	unsigned int ms = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		ms = o2_backoff_next(ms);
		KUNIT_EXPECT_EQ_MSG(test, ms, want[i], "step %d", i);
	}
	KUNIT_EXPECT_EQ(test, o2_backoff_next(1500), 3000U);
	KUNIT_EXPECT_EQ(test, o2_backoff_next(3999), 7998U);
}

static void backoff_never_exceeds_cap(struct kunit *test)
{
	static const unsigned int cur[] = {
		4001, 5000, O2_BACKOFF_MAX_MS, O2_BACKOFF_MAX_MS + 1,
		O2_BACKOFF_MAX_MS + O2_BACKOFF_MAX_MS / 4, 65535, 1000000,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cur); i++)
		KUNIT_EXPECT_EQ_MSG(test, o2_backoff_next(cur[i]),
				    (unsigned int)O2_BACKOFF_MAX_MS, "cur %u",
				    cur[i]);
}

static const u32 o2t_rnds[] = {
	0, 1, 2, 3, 250, 499, 500, 501, 1000, 1001, 4000, 65535, 123456789,
	U32_MAX - 1, U32_MAX,
};

/* the fixed random numbers, then ms / 2 and ms / 2 + 1 (the extremes) */
static void o2t_check_jitter(struct kunit *test, unsigned int ms)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_rnds) + 2; i++) {
		u32 rnd = i < ARRAY_SIZE(o2t_rnds) ? o2t_rnds[i] :
			  ms / 2 + i - ARRAY_SIZE(o2t_rnds);
		unsigned int j = o2_jitter(ms, rnd);

		KUNIT_EXPECT_GE_MSG(test, j, ms - ms / 4, "ms %u rnd %u: %u",
				    ms, rnd, j);
		KUNIT_EXPECT_LE_MSG(test, j, ms + ms / 4, "ms %u rnd %u: %u",
				    ms, rnd, j);
	}
}

static void jitter_stays_within_a_quarter(struct kunit *test)
{
	/* the backoff delays, and others that are 0 or 1 mod 4 */
	static const unsigned int ms[] = {
		0, 1, 4, 5, 100, 1000, 1001, 2000, 4000, 8000, 10000,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(ms); i++)
		o2t_check_jitter(test, ms[i]);
}

static void jitter_stays_within_a_quarter_of_any_delay(struct kunit *test)
{
	/* 2 or 3 mod 4: ms / 2 > 2 * (ms / 4) */
	static const unsigned int ms[] = { 2, 3, 6, 7, 1002, 1003, 7999 };
	int i;

	for (i = 0; i < ARRAY_SIZE(ms); i++)
		o2t_check_jitter(test, ms[i]);
}

static void jitter_spans_the_whole_range(struct kunit *test)
{
	/* rnd 0 gives the low end, rnd ms / 2 the high end, then it wraps */
	KUNIT_EXPECT_EQ(test, o2_jitter(1000, 0), 750U);
	KUNIT_EXPECT_EQ(test, o2_jitter(1000, 250), 1000U);
	KUNIT_EXPECT_EQ(test, o2_jitter(1000, 500), 1250U);
	KUNIT_EXPECT_EQ(test, o2_jitter(1000, 501), 750U);
	KUNIT_EXPECT_EQ(test, o2_jitter(8000, 0), 6000U);
	KUNIT_EXPECT_EQ(test, o2_jitter(8000, 4000), 10000U);
	KUNIT_EXPECT_EQ(test, o2_jitter(0, U32_MAX), 0U);
}

static struct kunit_case o2_race_backoff_cases[] = {
	KUNIT_CASE(race_without_our_connect_is_accepted),
	KUNIT_CASE(race_before_our_request_left_yields),
	KUNIT_CASE(race_higher_nid_request_is_accepted),
	KUNIT_CASE(race_lower_nid_fresh_request_is_rejected),
	KUNIT_CASE(race_claimed_by_the_peer_yields),
	KUNIT_CASE(race_older_than_window_aborts_ours),
	KUNIT_CASE(race_after_max_races_aborts_ours),
	KUNIT_CASE(race_with_our_own_nid_is_accepted),
	KUNIT_CASE(backoff_starts_at_one_second),
	KUNIT_CASE(backoff_doubles_to_cap),
	KUNIT_CASE(backoff_never_exceeds_cap),
	KUNIT_CASE(jitter_stays_within_a_quarter),
	KUNIT_CASE(jitter_stays_within_a_quarter_of_any_delay),
	KUNIT_CASE(jitter_spans_the_whole_range),
	{}
};

static struct kunit_suite o2_race_backoff_suite = {
	.name = "o2lnd_race_backoff",
	.test_cases = o2_race_backoff_cases,
};

kunit_test_suites(&o2_state_suite, &o2_peer_state_suite,
		  &o2_race_backoff_suite, &o2_retry_suite);
