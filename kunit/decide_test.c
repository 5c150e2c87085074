// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the pure decisions of module/wire.c: which reject reason
 * a peer's connection parameters earn, who wins a connection race, and
 * credit accounting.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include "wire.h"
#include "o2lnd_kunit.h"

static const struct o2_connparams o2t_ours = {
	.queue_depth = 8, .max_frags = O2_MAX_FRAGS,
	.max_msg_size = O2_MAX_MSG_SIZE,
};

struct o2t_cp_case {
	u16 queue_depth;
	u16 max_frags;
	u32 max_msg_size;
	u8 why;
};

static void o2t_check_cases(struct kunit *test, const struct o2t_cp_case *c,
			    int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct o2_connparams p = {
			.queue_depth = c[i].queue_depth,
			.max_frags = c[i].max_frags,
			.max_msg_size = c[i].max_msg_size,
		};

		KUNIT_EXPECT_EQ_MSG(test, o2_connparams_check(&p, &o2t_ours),
				    c[i].why, "depth %u frags %u size %u",
				    p.queue_depth, p.max_frags,
				    p.max_msg_size);
	}
}

static void connparams_check_accepts_equal_or_smaller(struct kunit *test)
{
	static const struct o2t_cp_case c[] = {
		{ 8, O2_MAX_FRAGS, 4096, 0 },	/* what a Lustre node offers */
		{ 8, 256, 4096, 0 },
		{ 2, 256, 4096, 0 },	/* smallest usable queue */
		{ 7, 256, 4096, 0 },
		{ 8, 1, 4096, 0 },	/* smallest fragment count */
		{ 8, 255, 4096, 0 },
		{ 2, 1, 4096, 0 },
	};

	o2t_check_cases(test, c, ARRAY_SIZE(c));
}

static void connparams_check_deeper_queue_is_msg_queue_size(struct kunit *test)
{
	static const struct o2t_cp_case c[] = {
		{ 9, 256, 4096, O2_REJECT_MSG_QUEUE_SIZE },
		{ 0xffff, 256, 4096, O2_REJECT_MSG_QUEUE_SIZE },
		/* checked first: wins over every other problem */
		{ 9, O2_MAX_FRAGS + 1, 8192, O2_REJECT_MSG_QUEUE_SIZE },
	};

	o2t_check_cases(test, c, ARRAY_SIZE(c));
}

static void connparams_check_more_frags_is_rdma_frags(struct kunit *test)
{
	static const struct o2t_cp_case c[] = {
		{ 8, O2_MAX_FRAGS + 1, 4096, O2_REJECT_RDMA_FRAGS },
		{ 8, 0xffff, 4096, O2_REJECT_RDMA_FRAGS },
		/* wins over a wrong message size and a tiny queue */
		{ 1, O2_MAX_FRAGS + 1, 8192, O2_REJECT_RDMA_FRAGS },
	};

	o2t_check_cases(test, c, ARRAY_SIZE(c));
}

static void connparams_check_unusable_params_are_uncompat(struct kunit *test)
{
	static const struct o2t_cp_case c[] = {
		{ 8, 256, 4097, O2_REJECT_CONN_UNCOMPAT },
		{ 8, 256, 8192, O2_REJECT_CONN_UNCOMPAT },
		{ 8, 256, 4095, O2_REJECT_CONN_UNCOMPAT },
		{ 8, 256, 0, O2_REJECT_CONN_UNCOMPAT },
		{ 1, 256, 4096, O2_REJECT_CONN_UNCOMPAT },
		{ 0, 256, 4096, O2_REJECT_CONN_UNCOMPAT },
		{ 8, 0, 4096, O2_REJECT_CONN_UNCOMPAT },
	};

	o2t_check_cases(test, c, ARRAY_SIZE(c));
}

static struct kunit_case o2_connparams_cases[] = {
	KUNIT_CASE(connparams_check_accepts_equal_or_smaller),
	KUNIT_CASE(connparams_check_deeper_queue_is_msg_queue_size),
	KUNIT_CASE(connparams_check_more_frags_is_rdma_frags),
	KUNIT_CASE(connparams_check_unusable_params_are_uncompat),
	{}
};

static struct kunit_suite o2_connparams_suite = {
	.name = "o2lnd_connparams_check",
	.test_cases = o2_connparams_cases,
};

/* ------------------------------------------------------------ race */

static const u64 o2t_nids[] = {
	0, 1, O2T_NID_A, O2T_NID_B, O2T_NID_LO, 0x0005000100000001ULL,
	0x00050000ffffffffULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
	~0ULL - 1, ~0ULL,
};

static void race_higher_nid_wins(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, o2_race_we_win(O2T_NID_B, O2T_NID_A));
	KUNIT_EXPECT_FALSE(test, o2_race_we_win(O2T_NID_A, O2T_NID_B));
	/* compared as unsigned 64-bit NIDs, network included */
	KUNIT_EXPECT_TRUE(test, o2_race_we_win(0x8000000000000000ULL, 1));
	KUNIT_EXPECT_TRUE(test, o2_race_we_win(0x0005000100000001ULL,
					       0x00050000ffffffffULL));
}

static void race_exactly_one_side_wins(struct kunit *test)
{
	int i, j;

	for (i = 0; i < ARRAY_SIZE(o2t_nids); i++) {
		for (j = 0; j < ARRAY_SIZE(o2t_nids); j++) {
			bool a = o2_race_we_win(o2t_nids[i], o2t_nids[j]);
			bool b = o2_race_we_win(o2t_nids[j], o2t_nids[i]);

			if (i == j)
				continue;
			KUNIT_EXPECT_TRUE_MSG(test, a != b,
					      "0x%llx vs 0x%llx", o2t_nids[i],
					      o2t_nids[j]);
		}
	}
}

static void race_with_own_nid_never_rejects(struct kunit *test)
{
	int i;

	/* LU-7646: a connect to our own NID must not reject itself */
	for (i = 0; i < ARRAY_SIZE(o2t_nids); i++)
		KUNIT_EXPECT_FALSE_MSG(test, o2_race_we_win(o2t_nids[i],
							    o2t_nids[i]),
				       "0x%llx", o2t_nids[i]);
}

/* ------------------------------------------------------------ credits */

static void credits_grant_up_to_queue_depth(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_credits_grant(3, 5, 8), 8);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 8, 8), 8);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 1, 8), 1);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 255, 65535), 255);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(65280, 255, 65535), 65535);
}

static void credits_grant_of_zero_changes_nothing(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 0, 8), 0);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(5, 0, 8), 5);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(8, 0, 8), 8);
}

static void credits_grant_overflowing_depth_is_eproto(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_credits_grant(3, 6, 8), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(8, 1, 8), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 9, 8), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 255, 8), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(0, 1, 0), -EPROTO);
}

static void credits_grant_negative_is_eproto(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_credits_grant(5, -1, 8), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_credits_grant(5, INT_MIN, 8), -EPROTO);
}

static void credits_return_clamps_to_one_byte(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_credits_return(0), (u8)0);
	KUNIT_EXPECT_EQ(test, o2_credits_return(1), (u8)1);
	KUNIT_EXPECT_EQ(test, o2_credits_return(7), (u8)7);
	KUNIT_EXPECT_EQ(test, o2_credits_return(255), (u8)255);
	KUNIT_EXPECT_EQ(test, o2_credits_return(256), (u8)255);
	KUNIT_EXPECT_EQ(test, o2_credits_return(300), (u8)255);
	KUNIT_EXPECT_EQ(test, o2_credits_return(INT_MAX), (u8)255);
	KUNIT_EXPECT_EQ(test, o2_credits_return(-1), (u8)0);
	KUNIT_EXPECT_EQ(test, o2_credits_return(INT_MIN), (u8)0);
}

static struct kunit_case o2_race_credits_cases[] = {
	KUNIT_CASE(race_higher_nid_wins),
	KUNIT_CASE(race_exactly_one_side_wins),
	KUNIT_CASE(race_with_own_nid_never_rejects),
	KUNIT_CASE(credits_grant_up_to_queue_depth),
	KUNIT_CASE(credits_grant_of_zero_changes_nothing),
	KUNIT_CASE(credits_grant_overflowing_depth_is_eproto),
	KUNIT_CASE(credits_grant_negative_is_eproto),
	KUNIT_CASE(credits_return_clamps_to_one_byte),
	{}
};

static struct kunit_suite o2_race_credits_suite = {
	.name = "o2lnd_race_credits",
	.test_cases = o2_race_credits_cases,
};

kunit_test_suites(&o2_connparams_suite, &o2_race_credits_suite);
