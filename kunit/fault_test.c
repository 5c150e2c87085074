// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the fault injection rules (module/fault.c): what
 * o2_fault_validate() accepts, the rule table (add, del, get, clear) and
 * which rule o2_fault_fire() fires.  The table is global: every case
 * starts and ends with o2_fault_clear() (the suites' init and exit).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/string.h>
#include "fault.h"
#include "o2lnd_kunit.h"

/* 192.168.1.3@o2ib0, and a NID of another net type (tcp, 2) */
#define O2T_NID_C	0x00050000c0a80103ULL
#define O2T_NID_TCP	0x00020000c0a80101ULL

/* A valid argument of each kind */
static const struct {
	u32 kind;
	u32 arg;
} o2t_kinds[] = {
	{ O2LND_FAULT_CM_DROP, O2LND_CM_CONNECT_REQUEST },
	{ O2LND_FAULT_CM_DELAY, O2LND_CM_ESTABLISHED },
	{ O2LND_FAULT_STALL, O2LND_PHASE_ROUTE },
	{ O2LND_FAULT_REJECT, O2LND_REJECT_NO_RESOURCES },
	{ O2LND_FAULT_MSG_DROP, 0 },
	{ O2LND_FAULT_MSG_CORRUPT, 0xd1 },
	{ O2LND_FAULT_SEND_DELAY, 0 },
	{ O2LND_FAULT_INV_FAIL, 0 },
	{ O2LND_FAULT_POST_FAIL, 2 },
};

static bool o2t_has_delay(u32 kind)
{
	return kind == O2LND_FAULT_CM_DELAY || kind == O2LND_FAULT_SEND_DELAY;
}

/* A valid rule: any NID, always, a 100 ms delay for the delay kinds */
static void o2t_rule(struct o2lnd_ioc_fault *r, u32 kind, u32 arg)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->arg = arg;
	r->peer_nid = O2LND_NID_ANY;
	r->local_nid = O2LND_NID_ANY;
	r->probability = O2LND_FAULT_PROB_ALWAYS;
	if (o2t_has_delay(kind))
		r->delay_ms = 100;
}

static int o2t_validate_arg(u32 kind, u32 arg)
{
	struct o2lnd_ioc_fault r;

	o2t_rule(&r, kind, arg);
	return o2_fault_validate(&r);
}

static u32 o2t_add(struct kunit *test, const struct o2lnd_ioc_fault *r)
{
	u32 id = 0;

	KUNIT_ASSERT_EQ(test, o2_fault_add(r, &id), 0);
	KUNIT_EXPECT_NE(test, id, 0U);
	return id;
}

static u32 o2t_add_kind(struct kunit *test, u32 kind, u32 arg)
{
	struct o2lnd_ioc_fault r;

	o2t_rule(&r, kind, arg);
	return o2t_add(test, &r);
}

/* The listed rule with id @id (its fired count), or fail the case */
static u32 o2t_fired(struct kunit *test, u32 id)
{
	struct o2lnd_ioc_fault out;
	u32 i;

	for (i = 0; o2_fault_get(i, &out) == 0; i++)
		if (out.id == id)
			return out.fired;
	KUNIT_FAIL(test, "rule %u is not listed", id);
	return U32_MAX;
}

static u32 o2t_count_rules(void)
{
	struct o2lnd_ioc_fault out;

	o2_fault_get(0, &out);
	return out.count_rules;
}

static bool o2t_fire(u32 kind, u32 arg)
{
	struct o2_fault_hit hit;

	return o2_fault_fire(kind, arg, O2T_NID_A, O2T_NID_B, &hit);
}

static int o2t_fault_init(struct kunit *test)
{
	o2_fault_clear();
	return 0;
}

static void o2t_fault_exit(struct kunit *test)
{
	o2_fault_clear();
}

/* ------------------------------------------------------------ validate */

static void fault_validate_accepts_a_minimal_rule_of_every_kind(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++)
		KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(o2t_kinds[i].kind,
							   o2t_kinds[i].arg),
				    0, "kind %u", o2t_kinds[i].kind);
	/* every kind is in the table */
	KUNIT_EXPECT_EQ(test, (int)ARRAY_SIZE(o2t_kinds), O2LND_FAULT_MAX);
}

static void fault_validate_refuses_unknown_kinds(struct kunit *test)
{
	static const u32 kinds[] = { 0, O2LND_FAULT_MAX + 1, 255, U32_MAX };
	int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(kinds[i], 0), -EINVAL,
				    "kind %u", kinds[i]);
}

static void fault_validate_refuses_device_removal_drop(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_CM_DROP,
					       O2LND_CM_DEVICE_REMOVAL),
			-EINVAL);
	/* nor may it be delayed */
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_CM_DELAY,
					       O2LND_CM_DEVICE_REMOVAL),
			-EINVAL);
}

static void fault_cm_rules_take_every_other_event_and_none_past_the_last(struct kunit *test)
{
	static const u32 kinds[] = { O2LND_FAULT_CM_DROP, O2LND_FAULT_CM_DELAY };
	static const u32 bad[] = { O2LND_CM_NEVENTS, 255, U32_MAX };
	int i;
	u32 ev;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		for (ev = 0; ev < O2LND_CM_NEVENTS; ev++) {
			if (ev == O2LND_CM_DEVICE_REMOVAL)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(kinds[i], ev),
					    0, "kind %u event %u", kinds[i], ev);
		}
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_CM_DROP,
						       bad[i]), -EINVAL);
		KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_CM_DELAY,
						       bad[i]), -EINVAL);
	}
}

static void fault_stall_takes_only_a_connect_phase(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL,
					       O2LND_PHASE_NONE), -EINVAL);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL,
					       O2LND_PHASE_ADDR), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL,
					       O2LND_PHASE_ROUTE), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL,
					       O2LND_PHASE_CONNECT), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL,
					       O2LND_PHASE_CONNECT + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_STALL, U32_MAX),
			-EINVAL);
}

static void fault_reject_takes_only_a_known_reason(struct kunit *test)
{
	u32 why;

	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_REJECT, 0), -EINVAL);
	for (why = 1; why <= O2LND_REJECT_MAX; why++)
		KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(O2LND_FAULT_REJECT, why),
				    0, "reason %u", why);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_REJECT,
					       O2LND_REJECT_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_REJECT, U32_MAX),
			-EINVAL);
}

static void fault_msg_rules_take_an_o2iblnd_type_or_zero(struct kunit *test)
{
	static const u32 kinds[] = {
		O2LND_FAULT_MSG_DROP, O2LND_FAULT_MSG_CORRUPT,
	};
	static const u32 bad[] = { 1, 0xcf, 0xd8, 0xff, 0x1d0, U32_MAX };
	int i, j;
	u32 type;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		KUNIT_EXPECT_EQ(test, o2t_validate_arg(kinds[i], 0), 0);
		for (type = 0xd0; type <= 0xd7; type++)
			KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(kinds[i], type),
					    0, "kind %u type %#x", kinds[i], type);
		for (j = 0; j < ARRAY_SIZE(bad); j++)
			KUNIT_EXPECT_EQ_MSG(test, o2t_validate_arg(kinds[i], bad[j]),
					    -EINVAL, "kind %u type %#x", kinds[i],
					    bad[j]);
	}
}

static void fault_send_delay_refuses_an_argument(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_SEND_DELAY, 0), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_SEND_DELAY, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_SEND_DELAY, 0xd1),
			-EINVAL);
}

static void fault_post_fail_takes_a_work_request_up_to_its_max(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_POST_FAIL, 0), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_POST_FAIL,
					       O2LND_FAULT_POST_FAIL_MAX_ARG), 0);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_POST_FAIL,
					       O2LND_FAULT_POST_FAIL_MAX_ARG + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, o2t_validate_arg(O2LND_FAULT_POST_FAIL, U32_MAX),
			-EINVAL);
}

static void fault_delay_kinds_need_a_delay_of_1_to_max(struct kunit *test)
{
	static const struct {
		u32 delay_ms;
		int rc;
	} d[] = {
		{ 0, -EINVAL }, { 1, 0 }, { O2LND_FAULT_MAX_DELAY_MS, 0 },
		{ O2LND_FAULT_MAX_DELAY_MS + 1, -EINVAL }, { U32_MAX, -EINVAL },
	};
	struct o2lnd_ioc_fault r;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++) {
		if (!o2t_has_delay(o2t_kinds[i].kind))
			continue;
		for (j = 0; j < ARRAY_SIZE(d); j++) {
			o2t_rule(&r, o2t_kinds[i].kind, o2t_kinds[i].arg);
			r.delay_ms = d[j].delay_ms;
			KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), d[j].rc,
					    "kind %u delay %u", r.kind,
					    r.delay_ms);
		}
	}
}

static void fault_delay_refused_for_kinds_without_one(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++) {
		if (o2t_has_delay(o2t_kinds[i].kind))
			continue;
		o2t_rule(&r, o2t_kinds[i].kind, o2t_kinds[i].arg);
		r.delay_ms = 1;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), -EINVAL,
				    "kind %u", r.kind);
	}
}

static void fault_reject_params_refused_for_other_kinds(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++) {
		if (o2t_kinds[i].kind == O2LND_FAULT_REJECT)
			continue;
		o2t_rule(&r, o2t_kinds[i].kind, o2t_kinds[i].arg);
		r.queue_depth = 8;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), -EINVAL,
				    "kind %u queue_depth", r.kind);
		o2t_rule(&r, o2t_kinds[i].kind, o2t_kinds[i].arg);
		r.max_frags = 1;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), -EINVAL,
				    "kind %u max_frags", r.kind);
	}
}

static void fault_reject_queue_depth_is_zero_or_2_to_255(struct kunit *test)
{
	static const struct {
		u32 queue_depth;
		int rc;
	} q[] = {
		{ 0, 0 }, { 1, -EINVAL }, { 2, 0 }, { 8, 0 }, { 255, 0 },
		{ 256, -EINVAL }, { U32_MAX, -EINVAL },
	};
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(q); i++) {
		o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_MSG_QUEUE_SIZE);
		r.queue_depth = q[i].queue_depth;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), q[i].rc,
				    "queue_depth %u", r.queue_depth);
	}
}

static void fault_reject_max_frags_is_zero_or_1_to_257(struct kunit *test)
{
	static const struct {
		u32 max_frags;
		int rc;
	} f[] = {
		{ 0, 0 }, { 1, 0 }, { 32, 0 }, { 256, 0 }, { 257, 0 }, { 258, -EINVAL },
		{ U32_MAX, -EINVAL },
	};
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_RDMA_FRAGS);
		r.max_frags = f[i].max_frags;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), f[i].rc,
				    "max_frags %u", r.max_frags);
	}
}

static void fault_probability_zero_refused(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++) {
		o2t_rule(&r, o2t_kinds[i].kind, o2t_kinds[i].arg);
		r.probability = 0;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), -EINVAL,
				    "kind %u", r.kind);
	}
}

static void fault_probability_above_a_million_refused(struct kunit *test)
{
	static const struct {
		u32 probability;
		int rc;
	} p[] = {
		{ 1, 0 }, { 500000, 0 }, { O2LND_FAULT_PROB_ALWAYS, 0 },
		{ O2LND_FAULT_PROB_ALWAYS + 1, -EINVAL }, { U32_MAX, -EINVAL },
	};
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		o2t_rule(&r, O2LND_FAULT_MSG_DROP, 0);
		r.probability = p[i].probability;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), p[i].rc,
				    "probability %u", r.probability);
	}
}

static void fault_output_fields_must_be_zero(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < 5; i++) {
		o2t_rule(&r, O2LND_FAULT_CM_DROP, O2LND_CM_REJECTED);
		switch (i) {
		case 0:
			r.id = 1;
			break;
		case 1:
			r.index = 1;
			break;
		case 2:
			r.count_rules = 1;
			break;
		case 3:
			r.fired = 1;
			break;
		default:
			r.pad = 1;
			break;
		}
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), -EINVAL,
				    "field %d", i);
	}
	/* count is an input: any value */
	o2t_rule(&r, O2LND_FAULT_CM_DROP, O2LND_CM_REJECTED);
	r.count = U32_MAX;
	KUNIT_EXPECT_EQ(test, o2_fault_validate(&r), 0);
}

static void fault_nids_must_be_o2ib_or_any(struct kunit *test)
{
	static const struct {
		u64 nid;
		int rc;
	} n[] = {
		{ O2LND_NID_ANY, 0 }, { O2T_NID_A, 0 }, { O2T_NID_B, 0 },
		{ 0x0005000000000000ULL, 0 },		/* 0.0.0.0@o2ib */
		{ 0x0005ffffc0a80101ULL, 0 },		/* @o2ib65535 */
		{ O2T_NID_LO, -EINVAL }, { O2T_NID_TCP, -EINVAL },
		{ 0, -EINVAL }, { O2LND_NID_ANY - 1, -EINVAL },
	};
	struct o2lnd_ioc_fault r;
	int i;

	for (i = 0; i < ARRAY_SIZE(n); i++) {
		o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_FATAL);
		r.peer_nid = n[i].nid;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), n[i].rc,
				    "peer_nid %#llx", r.peer_nid);
		o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_FATAL);
		r.local_nid = n[i].nid;
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_validate(&r), n[i].rc,
				    "local_nid %#llx", r.local_nid);
	}
}

static void fault_add_validates_and_adds_nothing_invalid(struct kunit *test)
{
	struct o2lnd_ioc_fault r, out;
	u32 id = 12345;

	o2t_rule(&r, O2LND_FAULT_CM_DROP, O2LND_CM_DEVICE_REMOVAL);
	KUNIT_EXPECT_EQ(test, o2_fault_add(&r, &id), -EINVAL);
	KUNIT_EXPECT_EQ(test, id, 12345U);
	o2t_rule(&r, O2LND_FAULT_MSG_DROP, 0);
	r.probability = 0;
	KUNIT_EXPECT_EQ(test, o2_fault_add(&r, &id), -EINVAL);
	KUNIT_EXPECT_EQ(test, o2_fault_get(0, &out), -ENOENT);
	KUNIT_EXPECT_EQ(test, out.count_rules, 0U);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_MSG_DROP, 0xd1));
}

static struct kunit_case o2_fault_validate_cases[] = {
	KUNIT_CASE(fault_validate_accepts_a_minimal_rule_of_every_kind),
	KUNIT_CASE(fault_validate_refuses_unknown_kinds),
	KUNIT_CASE(fault_validate_refuses_device_removal_drop),
	KUNIT_CASE(fault_cm_rules_take_every_other_event_and_none_past_the_last),
	KUNIT_CASE(fault_stall_takes_only_a_connect_phase),
	KUNIT_CASE(fault_reject_takes_only_a_known_reason),
	KUNIT_CASE(fault_msg_rules_take_an_o2iblnd_type_or_zero),
	KUNIT_CASE(fault_send_delay_refuses_an_argument),
	KUNIT_CASE(fault_post_fail_takes_a_work_request_up_to_its_max),
	KUNIT_CASE(fault_delay_kinds_need_a_delay_of_1_to_max),
	KUNIT_CASE(fault_delay_refused_for_kinds_without_one),
	KUNIT_CASE(fault_reject_params_refused_for_other_kinds),
	KUNIT_CASE(fault_reject_queue_depth_is_zero_or_2_to_255),
	KUNIT_CASE(fault_reject_max_frags_is_zero_or_1_to_257),
	KUNIT_CASE(fault_probability_zero_refused),
	KUNIT_CASE(fault_probability_above_a_million_refused),
	KUNIT_CASE(fault_output_fields_must_be_zero),
	KUNIT_CASE(fault_nids_must_be_o2ib_or_any),
	KUNIT_CASE(fault_add_validates_and_adds_nothing_invalid),
	{}
};

static struct kunit_suite o2_fault_validate_suite = {
	.name = "o2lnd_fault_validate",
	.init = o2t_fault_init,
	.exit = o2t_fault_exit,
	.test_cases = o2_fault_validate_cases,
};

/* ------------------------------------------------------------ table */

static void fault_add_gives_distinct_ids_listed_in_table_order(struct kunit *test)
{
	struct o2lnd_ioc_fault out;
	u32 ids[3];
	int i;

	ids[0] = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_REJECTED);
	ids[1] = o2t_add_kind(test, O2LND_FAULT_STALL, O2LND_PHASE_ADDR);
	ids[2] = o2t_add_kind(test, O2LND_FAULT_MSG_CORRUPT, 0xd5);
	KUNIT_EXPECT_NE(test, ids[0], ids[1]);
	KUNIT_EXPECT_NE(test, ids[1], ids[2]);
	KUNIT_EXPECT_NE(test, ids[0], ids[2]);

	for (i = 0; i < 3; i++) {
		memset(&out, 0xff, sizeof(out));
		KUNIT_ASSERT_EQ(test, o2_fault_get(i, &out), 0);
		KUNIT_EXPECT_EQ(test, out.id, ids[i]);
		KUNIT_EXPECT_EQ(test, out.index, (u32)i);
		KUNIT_EXPECT_EQ(test, out.count_rules, 3U);
		KUNIT_EXPECT_EQ(test, out.fired, 0U);
		KUNIT_EXPECT_EQ(test, out.peer_nid, O2LND_NID_ANY);
		KUNIT_EXPECT_EQ(test, out.probability, O2LND_FAULT_PROB_ALWAYS);
	}
	o2_fault_get(1, &out);
	KUNIT_EXPECT_EQ(test, out.kind, (u32)O2LND_FAULT_STALL);
	KUNIT_EXPECT_EQ(test, out.arg, (u32)O2LND_PHASE_ADDR);
	o2_fault_get(2, &out);
	KUNIT_EXPECT_EQ(test, out.kind, (u32)O2LND_FAULT_MSG_CORRUPT);
	KUNIT_EXPECT_EQ(test, out.arg, 0xd5U);
}

static void fault_get_past_the_last_rule_gives_enoent_and_the_count(struct kunit *test)
{
	struct o2lnd_ioc_fault out;

	KUNIT_EXPECT_EQ(test, o2_fault_get(0, &out), -ENOENT);
	KUNIT_EXPECT_EQ(test, out.count_rules, 0U);
	o2t_add_kind(test, O2LND_FAULT_SEND_DELAY, 0);
	o2t_add_kind(test, O2LND_FAULT_MSG_DROP, 0);
	KUNIT_EXPECT_EQ(test, o2_fault_get(2, &out), -ENOENT);
	KUNIT_EXPECT_EQ(test, out.index, 2U);
	KUNIT_EXPECT_EQ(test, out.count_rules, 2U);
	KUNIT_EXPECT_EQ(test, o2_fault_get(U32_MAX, &out), -ENOENT);
	KUNIT_EXPECT_EQ(test, out.count_rules, 2U);
}

static void fault_table_full_gives_enospc(struct kunit *test)
{
	struct o2lnd_ioc_fault r, out;
	u32 ids[O2LND_FAULT_MAX_RULES], id;
	int i;

	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++)
		ids[i] = o2t_add_kind(test, O2LND_FAULT_REJECT,
				      O2LND_REJECT_EARLY);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), (u32)O2LND_FAULT_MAX_RULES);
	o2t_rule(&r, O2LND_FAULT_MSG_DROP, 0);
	KUNIT_EXPECT_EQ(test, o2_fault_add(&r, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), (u32)O2LND_FAULT_MAX_RULES);
	/* a deleted rule frees its slot, in place */
	KUNIT_EXPECT_EQ(test, o2_fault_del(ids[5]), 0);
	id = o2t_add(test, &r);
	KUNIT_ASSERT_EQ(test, o2_fault_get(5, &out), 0);
	KUNIT_EXPECT_EQ(test, out.id, id);
	KUNIT_EXPECT_EQ(test, out.kind, (u32)O2LND_FAULT_MSG_DROP);
	KUNIT_EXPECT_EQ(test, o2_fault_add(&r, &id), -ENOSPC);
}

static void fault_del_removes_only_that_rule(struct kunit *test)
{
	struct o2lnd_ioc_fault out;
	u32 a, b, c;

	a = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_ADDR_ERROR);
	b = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_ROUTE_ERROR);
	c = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_UNREACHABLE);
	KUNIT_EXPECT_EQ(test, o2_fault_del(b), 0);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), 2U);
	KUNIT_ASSERT_EQ(test, o2_fault_get(0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.id, a);
	KUNIT_ASSERT_EQ(test, o2_fault_get(1, &out), 0);
	KUNIT_EXPECT_EQ(test, out.id, c);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					  O2LND_CM_ROUTE_ERROR));
	KUNIT_EXPECT_TRUE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					 O2LND_CM_ADDR_ERROR));
	KUNIT_EXPECT_TRUE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					 O2LND_CM_UNREACHABLE));
}

static void fault_del_unknown_id_gives_enoent(struct kunit *test)
{
	u32 id;

	KUNIT_EXPECT_EQ(test, o2_fault_del(1), -ENOENT);
	id = o2t_add_kind(test, O2LND_FAULT_SEND_DELAY, 0);
	KUNIT_EXPECT_EQ(test, o2_fault_del(id + 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, o2_fault_del(U32_MAX), -ENOENT);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), 1U);
	KUNIT_EXPECT_EQ(test, o2_fault_del(id), 0);
	/* deleting it twice */
	KUNIT_EXPECT_EQ(test, o2_fault_del(id), -ENOENT);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), 0U);
}

static void fault_del_zero_deletes_every_rule(struct kunit *test)
{
	struct o2lnd_ioc_fault out;

	/* even when there is none */
	KUNIT_EXPECT_EQ(test, o2_fault_del(0), 0);
	o2t_add_kind(test, O2LND_FAULT_MSG_DROP, 0);
	o2t_add_kind(test, O2LND_FAULT_SEND_DELAY, 0);
	o2t_add_kind(test, O2LND_FAULT_REJECT, O2LND_REJECT_FATAL);
	KUNIT_EXPECT_EQ(test, o2_fault_del(0), 0);
	KUNIT_EXPECT_EQ(test, o2_fault_get(0, &out), -ENOENT);
	KUNIT_EXPECT_EQ(test, out.count_rules, 0U);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_MSG_DROP, 0xd1));
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_SEND_DELAY, 0));
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_REJECT, 0));
}

static void fault_clear_empties_a_full_table(struct kunit *test)
{
	int i;

	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++)
		o2t_add_kind(test, O2LND_FAULT_STALL, O2LND_PHASE_CONNECT);
	o2_fault_clear();
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), 0U);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_STALL,
					  O2LND_PHASE_CONNECT));
	/* and the whole table is usable again */
	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++)
		o2t_add_kind(test, O2LND_FAULT_STALL, O2LND_PHASE_CONNECT);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), (u32)O2LND_FAULT_MAX_RULES);
}

static struct kunit_case o2_fault_table_cases[] = {
	KUNIT_CASE(fault_add_gives_distinct_ids_listed_in_table_order),
	KUNIT_CASE(fault_get_past_the_last_rule_gives_enoent_and_the_count),
	KUNIT_CASE(fault_table_full_gives_enospc),
	KUNIT_CASE(fault_del_removes_only_that_rule),
	KUNIT_CASE(fault_del_unknown_id_gives_enoent),
	KUNIT_CASE(fault_del_zero_deletes_every_rule),
	KUNIT_CASE(fault_clear_empties_a_full_table),
	{}
};

static struct kunit_suite o2_fault_table_suite = {
	.name = "o2lnd_fault_table",
	.init = o2t_fault_init,
	.exit = o2t_fault_exit,
	.test_cases = o2_fault_table_cases,
};

/* ------------------------------------------------------------ fire */

static void fault_fire_without_rules_fires_nothing(struct kunit *test)
{
	struct o2_fault_hit hit;
	int i;

	memset(&hit, 0xa5, sizeof(hit));
	for (i = 0; i < ARRAY_SIZE(o2t_kinds); i++)
		KUNIT_EXPECT_FALSE(test, o2_fault_fire(o2t_kinds[i].kind,
						       o2t_kinds[i].arg,
						       O2T_NID_A, O2T_NID_B,
						       &hit));
	KUNIT_EXPECT_EQ(test, hit.delay_ms, 0xa5a5a5a5U);
	KUNIT_EXPECT_EQ(test, hit.arg, 0xa5a5a5a5U);
}

static void fault_fire_matches_kind_and_argument(struct kunit *test)
{
	struct o2_fault_hit hit;
	u32 id;

	id = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_CONNECT_RESPONSE);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					  O2LND_CM_CONNECT_ERROR));
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_CM_DELAY,
					  O2LND_CM_CONNECT_RESPONSE));
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_STALL,
					  O2LND_CM_CONNECT_RESPONSE));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 0U);
	memset(&hit, 0xa5, sizeof(hit));
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_CM_DROP,
					      O2LND_CM_CONNECT_RESPONSE,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, hit.arg, (u32)O2LND_CM_CONNECT_RESPONSE);
	KUNIT_EXPECT_EQ(test, hit.delay_ms, 0U);
	KUNIT_EXPECT_EQ(test, hit.queue_depth, 0U);
	KUNIT_EXPECT_EQ(test, hit.max_frags, 0U);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 1U);
}

static void fault_cm_event_zero_is_an_event_not_a_wildcard(struct kunit *test)
{
	o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_ADDR_RESOLVED);
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					  O2LND_CM_ESTABLISHED));
	KUNIT_EXPECT_TRUE(test, o2t_fire(O2LND_FAULT_CM_DROP,
					 O2LND_CM_ADDR_RESOLVED));
}

static void fault_count_limits_fires_and_rule_stays_listed(struct kunit *test)
{
	struct o2lnd_ioc_fault r, out;
	u32 id;
	int i;

	o2t_rule(&r, O2LND_FAULT_STALL, O2LND_PHASE_CONNECT);
	r.count = 3;
	id = o2t_add(test, &r);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_TRUE_MSG(test, o2t_fire(O2LND_FAULT_STALL,
						     O2LND_PHASE_CONNECT),
				      "fire %d", i);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_STALL,
						  O2LND_PHASE_CONNECT));
	KUNIT_ASSERT_EQ(test, o2_fault_get(0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.id, id);
	KUNIT_EXPECT_EQ(test, out.count, 3U);
	KUNIT_EXPECT_EQ(test, out.fired, 3U);
	KUNIT_EXPECT_EQ(test, out.count_rules, 1U);
	/* a spent rule is deleted like any other */
	KUNIT_EXPECT_EQ(test, o2_fault_del(id), 0);
	KUNIT_EXPECT_EQ(test, o2t_count_rules(), 0U);
}

static void fault_zero_count_fires_without_limit(struct kunit *test)
{
	u32 id;
	int i;

	id = o2t_add_kind(test, O2LND_FAULT_MSG_DROP, 0xd1);
	for (i = 0; i < 1000; i++)
		if (!o2t_fire(O2LND_FAULT_MSG_DROP, 0xd1))
			break;
	KUNIT_EXPECT_EQ(test, i, 1000);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 1000U);
}

static void fault_peer_filter_matches_only_that_nid(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;
	u32 id;

	o2t_rule(&r, O2LND_FAULT_MSG_CORRUPT, 0);
	r.peer_nid = O2T_NID_B;
	id = o2t_add(test, &r);
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_MSG_CORRUPT, 0xd1,
					       O2T_NID_B, O2T_NID_A, &hit));
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_MSG_CORRUPT, 0xd1,
					       O2T_NID_A, O2T_NID_C, &hit));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 0U);
	/* any local NID */
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_MSG_CORRUPT, 0xd1,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_MSG_CORRUPT, 0xd1,
					      O2T_NID_C, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 2U);
}

static void fault_local_filter_matches_only_that_nid(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;
	u32 id;

	o2t_rule(&r, O2LND_FAULT_CM_DELAY, O2LND_CM_DISCONNECTED);
	r.local_nid = O2T_NID_A;
	id = o2t_add(test, &r);
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_CM_DELAY,
					       O2LND_CM_DISCONNECTED,
					       O2T_NID_B, O2T_NID_A, &hit));
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_CM_DELAY,
					       O2LND_CM_DISCONNECTED,
					       O2T_NID_C, O2T_NID_B, &hit));
	/* any peer NID */
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_CM_DELAY,
					      O2LND_CM_DISCONNECTED,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_CM_DELAY,
					      O2LND_CM_DISCONNECTED,
					      O2T_NID_A, O2T_NID_C, &hit));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 2U);
}

static void fault_both_nid_filters_must_match(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;

	o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_CONN_STALE);
	r.local_nid = O2T_NID_A;
	r.peer_nid = O2T_NID_B;
	o2t_add(test, &r);
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_REJECT, 0, O2T_NID_B,
					       O2T_NID_A, &hit));
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_REJECT, 0, O2T_NID_A,
					       O2T_NID_C, &hit));
	KUNIT_EXPECT_FALSE(test, o2_fault_fire(O2LND_FAULT_REJECT, 0, O2T_NID_C,
					       O2T_NID_B, &hit));
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_REJECT, 0, O2T_NID_A,
					      O2T_NID_B, &hit));
}

static void fault_any_nids_match_every_local_and_peer(struct kunit *test)
{
	static const u64 nids[] = { O2T_NID_A, O2T_NID_B, O2T_NID_C };
	struct o2_fault_hit hit;
	int i, j;
	u32 id;

	id = o2t_add_kind(test, O2LND_FAULT_SEND_DELAY, 0);
	for (i = 0; i < ARRAY_SIZE(nids); i++)
		for (j = 0; j < ARRAY_SIZE(nids); j++)
			KUNIT_EXPECT_TRUE(test,
					  o2_fault_fire(O2LND_FAULT_SEND_DELAY,
							0, nids[i], nids[j],
							&hit));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 9U);
}

static void fault_msg_any_type_matches_every_type(struct kunit *test)
{
	static const u32 kinds[] = {
		O2LND_FAULT_MSG_DROP, O2LND_FAULT_MSG_CORRUPT,
	};
	u32 type, id;
	int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		id = o2t_add_kind(test, kinds[i], 0);
		for (type = 0xd0; type <= 0xd7; type++)
			KUNIT_EXPECT_TRUE_MSG(test, o2t_fire(kinds[i], type),
					      "kind %u type %#x", kinds[i],
					      type);
		KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 8U);
		o2_fault_clear();
	}
}

static void fault_msg_type_matches_only_that_type(struct kunit *test)
{
	u32 type;

	o2t_add_kind(test, O2LND_FAULT_MSG_DROP, 0xd1);
	for (type = 0xd0; type <= 0xd7; type++)
		KUNIT_EXPECT_EQ_MSG(test, o2t_fire(O2LND_FAULT_MSG_DROP, type),
				    type == 0xd1, "type %#x", type);
	/* nor does it match the other message kind */
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_MSG_CORRUPT, 0xd1));
}

static void fault_reject_and_send_delay_match_any_argument(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;
	static const u32 args[] = { 0, 1, O2LND_REJECT_MAX, 0xd1, U32_MAX };
	int i;

	o2t_rule(&r, O2LND_FAULT_REJECT, O2LND_REJECT_CONN_UNCOMPAT);
	r.queue_depth = 4;
	r.max_frags = 16;
	o2t_add(test, &r);
	o2t_rule(&r, O2LND_FAULT_SEND_DELAY, 0);
	r.delay_ms = 250;
	o2t_add(test, &r);
	for (i = 0; i < ARRAY_SIZE(args); i++) {
		memset(&hit, 0, sizeof(hit));
		KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_REJECT, args[i],
						      O2T_NID_A, O2T_NID_B,
						      &hit));
		/* the reject reason comes from the rule */
		KUNIT_EXPECT_EQ(test, hit.arg, (u32)O2LND_REJECT_CONN_UNCOMPAT);
		KUNIT_EXPECT_EQ(test, hit.queue_depth, 4U);
		KUNIT_EXPECT_EQ(test, hit.max_frags, 16U);
		KUNIT_EXPECT_EQ(test, hit.delay_ms, 0U);
		memset(&hit, 0, sizeof(hit));
		KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_SEND_DELAY,
						      args[i], O2T_NID_A,
						      O2T_NID_B, &hit));
		KUNIT_EXPECT_EQ(test, hit.delay_ms, 250U);
		KUNIT_EXPECT_EQ(test, hit.queue_depth, 0U);
	}
}

/*
 * A POST_FAIL rule refusing work request 2 matches chains of 3 work
 * requests and more, never shorter ones (it does not count them), and
 * says where to cut.
 */
static void fault_post_fail_fires_only_on_chains_longer_than_its_cut(struct kunit *test)
{
	struct o2_fault_hit hit = {};
	u32 id = o2t_add_kind(test, O2LND_FAULT_POST_FAIL, 2);

	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_POST_FAIL, 1));
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_POST_FAIL, 2));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 0U);
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_POST_FAIL, 3,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, hit.arg, 2U);
	KUNIT_EXPECT_TRUE(test, o2t_fire(O2LND_FAULT_POST_FAIL, 40));
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 2U);
	/* and only for its own kind */
	KUNIT_EXPECT_FALSE(test, o2t_fire(O2LND_FAULT_INV_FAIL, 0));
}

static void fault_cm_delay_hit_carries_its_delay(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit = {};

	o2t_rule(&r, O2LND_FAULT_CM_DELAY, O2LND_CM_CONNECT_REQUEST);
	r.delay_ms = O2LND_FAULT_MAX_DELAY_MS;
	o2t_add(test, &r);
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_CM_DELAY,
					      O2LND_CM_CONNECT_REQUEST,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, hit.delay_ms, (u32)O2LND_FAULT_MAX_DELAY_MS);
	KUNIT_EXPECT_EQ(test, hit.arg, (u32)O2LND_CM_CONNECT_REQUEST);
}

static void fault_first_matching_rule_fires_and_alone_counts(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;
	u32 first, second;

	o2t_rule(&r, O2LND_FAULT_SEND_DELAY, 0);
	r.delay_ms = 10;
	r.count = 1;
	first = o2t_add(test, &r);
	r.delay_ms = 20;
	r.count = 0;
	second = o2t_add(test, &r);

	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_SEND_DELAY, 0,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, hit.delay_ms, 10U);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, first), 1U);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, second), 0U);
	/* the first is spent: the second fires now */
	KUNIT_EXPECT_TRUE(test, o2_fault_fire(O2LND_FAULT_SEND_DELAY, 0,
					      O2T_NID_A, O2T_NID_B, &hit));
	KUNIT_EXPECT_EQ(test, hit.delay_ms, 20U);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, first), 1U);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, second), 1U);
}

static void fault_probability_always_fires_every_time(struct kunit *test)
{
	int i, n = 0;
	u32 id;

	id = o2t_add_kind(test, O2LND_FAULT_CM_DROP, O2LND_CM_TIMEWAIT_EXIT);
	for (i = 0; i < 10000; i++)
		n += o2t_fire(O2LND_FAULT_CM_DROP, O2LND_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, n, 10000);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), 10000U);
}

/*
 * 20000 tries at 50%: 10000 expected, standard deviation ~71; the bounds
 * are 14 deviations away.  Only the fires count.
 */
static void fault_probability_half_fires_about_half_the_time(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i, n = 0;
	u32 id;

	o2t_rule(&r, O2LND_FAULT_MSG_DROP, 0xd2);
	r.probability = O2LND_FAULT_PROB_ALWAYS / 2;
	id = o2t_add(test, &r);
	for (i = 0; i < 20000; i++)
		n += o2t_fire(O2LND_FAULT_MSG_DROP, 0xd2);
	KUNIT_EXPECT_GE(test, n, 9000);
	KUNIT_EXPECT_LE(test, n, 11000);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), (u32)n);
}

/*
 * At 1 per million, 20000 tries fire 0.02 times on average; 10 or more
 * would happen with a probability below 1e-20.
 */
static void fault_probability_one_per_million_almost_never_fires(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	int i, n = 0;
	u32 id;

	o2t_rule(&r, O2LND_FAULT_MSG_DROP, 0xd2);
	r.probability = 1;
	id = o2t_add(test, &r);
	for (i = 0; i < 20000; i++)
		n += o2t_fire(O2LND_FAULT_MSG_DROP, 0xd2);
	KUNIT_EXPECT_LT(test, n, 10);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, id), (u32)n);
}

/* A matching rule that does not fire (its probability) lets the next one */
static void fault_rule_that_does_not_fire_leaves_the_next_one(struct kunit *test)
{
	struct o2lnd_ioc_fault r;
	struct o2_fault_hit hit;
	int i, n = 0;
	u32 rare, always;

	o2t_rule(&r, O2LND_FAULT_SEND_DELAY, 0);
	r.delay_ms = 1;
	r.probability = 1;
	rare = o2t_add(test, &r);
	r.delay_ms = 2;
	r.probability = O2LND_FAULT_PROB_ALWAYS;
	always = o2t_add(test, &r);
	for (i = 0; i < 1000; i++) {
		hit.delay_ms = 0;
		n += o2_fault_fire(O2LND_FAULT_SEND_DELAY, 0, O2T_NID_A,
				   O2T_NID_B, &hit);
		KUNIT_EXPECT_NE(test, hit.delay_ms, 0U);
	}
	KUNIT_EXPECT_EQ(test, n, 1000);
	KUNIT_EXPECT_EQ(test, o2t_fired(test, rare) + o2t_fired(test, always),
			1000U);
	KUNIT_EXPECT_GE(test, o2t_fired(test, always), 990U);
}

static void fault_event_phase_maps_the_events_that_end_a_phase(struct kunit *test)
{
	static const u32 phase[O2LND_CM_NEVENTS] = {
		[O2LND_CM_ADDR_RESOLVED] = O2LND_PHASE_ADDR,
		[O2LND_CM_ADDR_ERROR] = O2LND_PHASE_ADDR,
		[O2LND_CM_ROUTE_RESOLVED] = O2LND_PHASE_ROUTE,
		[O2LND_CM_ROUTE_ERROR] = O2LND_PHASE_ROUTE,
		[O2LND_CM_CONNECT_RESPONSE] = O2LND_PHASE_CONNECT,
		[O2LND_CM_CONNECT_ERROR] = O2LND_PHASE_CONNECT,
		[O2LND_CM_UNREACHABLE] = O2LND_PHASE_CONNECT,
		[O2LND_CM_REJECTED] = O2LND_PHASE_CONNECT,
		[O2LND_CM_ESTABLISHED] = O2LND_PHASE_CONNECT,
		/* the others end no phase: O2LND_PHASE_NONE (0) */
	};
	u32 ev;

	for (ev = 0; ev < O2LND_CM_NEVENTS; ev++)
		KUNIT_EXPECT_EQ_MSG(test, o2_fault_event_phase(ev), phase[ev],
				    "event %u", ev);
	KUNIT_EXPECT_EQ(test, o2_fault_event_phase(O2LND_CM_NEVENTS),
			(u32)O2LND_PHASE_NONE);
	KUNIT_EXPECT_EQ(test, o2_fault_event_phase(U32_MAX),
			(u32)O2LND_PHASE_NONE);
}

static struct kunit_case o2_fault_fire_cases[] = {
	KUNIT_CASE(fault_fire_without_rules_fires_nothing),
	KUNIT_CASE(fault_fire_matches_kind_and_argument),
	KUNIT_CASE(fault_cm_event_zero_is_an_event_not_a_wildcard),
	KUNIT_CASE(fault_count_limits_fires_and_rule_stays_listed),
	KUNIT_CASE(fault_zero_count_fires_without_limit),
	KUNIT_CASE(fault_peer_filter_matches_only_that_nid),
	KUNIT_CASE(fault_local_filter_matches_only_that_nid),
	KUNIT_CASE(fault_both_nid_filters_must_match),
	KUNIT_CASE(fault_any_nids_match_every_local_and_peer),
	KUNIT_CASE(fault_msg_any_type_matches_every_type),
	KUNIT_CASE(fault_msg_type_matches_only_that_type),
	KUNIT_CASE(fault_reject_and_send_delay_match_any_argument),
	KUNIT_CASE(fault_cm_delay_hit_carries_its_delay),
	KUNIT_CASE(fault_post_fail_fires_only_on_chains_longer_than_its_cut),
	KUNIT_CASE(fault_first_matching_rule_fires_and_alone_counts),
	KUNIT_CASE(fault_probability_always_fires_every_time),
	KUNIT_CASE(fault_probability_half_fires_about_half_the_time),
	KUNIT_CASE(fault_probability_one_per_million_almost_never_fires),
	KUNIT_CASE(fault_rule_that_does_not_fire_leaves_the_next_one),
	KUNIT_CASE(fault_event_phase_maps_the_events_that_end_a_phase),
	{}
};

static struct kunit_suite o2_fault_fire_suite = {
	.name = "o2lnd_fault_fire",
	.init = o2t_fault_init,
	.exit = o2t_fault_exit,
	.test_cases = o2_fault_fire_cases,
};

kunit_test_suites(&o2_fault_validate_suite, &o2_fault_table_suite,
		  &o2_fault_fire_suite);
