// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the connection state machine, the connect-phase deadline
 * and the retry decision after a reject (module/state.c).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/string.h>
#include "state.h"

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
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(20), 5UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(23), 5UL * HZ);
}

static void phase_timeout_is_a_quarter_of_long_timeouts(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(24), 6UL * HZ);
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(50), 12UL * HZ);	/* default */
	KUNIT_EXPECT_EQ(test, o2_phase_timeout(3600), 900UL * HZ);	/* max */
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

static void other_rejects_are_final(struct kunit *test)
{
	static const u8 whys[] = {
		0, O2_REJECT_NO_RESOURCES, O2_REJECT_FATAL,
		O2_REJECT_INVALID_SRV_ID, O2_REJECT_EARLY, 10, 255,
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
	}
}

static struct kunit_case o2_retry_cases[] = {
	KUNIT_CASE(phase_timeout_is_at_least_five_seconds),
	KUNIT_CASE(phase_timeout_is_a_quarter_of_long_timeouts),
	KUNIT_CASE(param_reject_adopts_smaller_params_once),
	KUNIT_CASE(param_reject_without_anything_to_shrink_is_final),
	KUNIT_CASE(race_reject_retries_after_100_to_499_ms),
	KUNIT_CASE(race_rejects_give_up_after_max_races_plus_five),
	KUNIT_CASE(stale_reject_retries_max_retries_times),
	KUNIT_CASE(other_rejects_are_final),
	{}
};

static struct kunit_suite o2_retry_suite = {
	.name = "o2lnd_deadlines_retries",
	.test_cases = o2_retry_cases,
};

kunit_test_suites(&o2_state_suite, &o2_retry_suite);
