// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: bulk message bodies and RDMA descriptors from the peer
 * (o2_bulk_body_unpack() in module/wire.c): every body too short, every
 * bad descriptor refused, both byte orders.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <uapi/o2lnd.h>
#include "wire.h"

#define O2T_MAX_NOB	O2LND_BRW_MAX_SIZE

/* A PUT_ACK body with @n fragments of @nob bytes in @buf. */
static u32 o2t_putack(u8 *buf, u32 n, u32 nob, bool flip)
{
	struct o2_putack_msg *m = (struct o2_putack_msg *)buf;
	u32 i;

	m->src_cookie = flip ? swab64(7) : 7;
	m->dst_cookie = flip ? swab64(9) : 9;
	m->rd.key = flip ? swab32(0x1234) : 0x1234;
	m->rd.nfrags = flip ? swab32(n) : n;
	for (i = 0; i < n; i++) {
		m->rd.frags[i].nob = flip ? swab32(nob) : nob;
		m->rd.frags[i].addr = flip ? swab64(0x1000ULL * i) :
					     0x1000ULL * i;
	}
	return sizeof(*m) + n * sizeof(m->rd.frags[0]);
}

static void good_descriptor_in_either_byte_order(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct o2_putack_msg *m = (struct o2_putack_msg *)buf;
	u32 len, nob = 0;
	int flip;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (flip = 0; flip < 2; flip++) {
		len = o2t_putack(buf, 3, 4096, flip);
		KUNIT_EXPECT_EQ(test, o2_bulk_body_unpack(O2_MSG_PUT_ACK, buf,
							  len, flip, 256,
							  O2T_MAX_NOB, &nob),
				0);
		KUNIT_EXPECT_EQ(test, nob, 3 * 4096U);
		KUNIT_EXPECT_EQ(test, m->src_cookie, 7ULL);
		KUNIT_EXPECT_EQ(test, m->dst_cookie, 9ULL);
		KUNIT_EXPECT_EQ(test, m->rd.key, 0x1234U);
		KUNIT_EXPECT_EQ(test, m->rd.frags[2].addr, 0x2000ULL);
	}
}

static void bad_descriptors_are_refused(struct kunit *test)
{
	static const struct {
		const char *what;
		u32 nfrags, nob, max_frags, trim;
	} bad[] = {
		{ "no fragment", 0, 4096, 256, 0 },
		{ "more fragments than negotiated", 5, 4096, 4, 0 },
		{ "an empty fragment", 2, 0, 256, 0 },
		{ "a total above the maximum", 2, O2T_MAX_NOB, 256, 0 },
		{ "more fragments than the body holds", 3, 4096, 256, 1 },
	};
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u32 i, len, nob;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		len = o2t_putack(buf, bad[i].nfrags, bad[i].nob, false);
		KUNIT_EXPECT_EQ_MSG(test,
				    o2_bulk_body_unpack(O2_MSG_PUT_ACK, buf,
							len - bad[i].trim,
							false,
							bad[i].max_frags,
							O2T_MAX_NOB, &nob),
				    -EPROTO, "%s", bad[i].what);
	}
	/* GET_REQ carries the same descriptor after the LNet header */
	memset(buf, 0, 4096);
	KUNIT_EXPECT_EQ(test, o2_bulk_body_unpack(O2_MSG_GET_REQ, buf,
						  sizeof(struct o2_get_msg),
						  false, 256, O2T_MAX_NOB,
						  &nob), -EPROTO);
}

static void short_bodies_are_refused(struct kunit *test)
{
	static const struct { u8 type; u32 min; } t[] = {
		{ O2_MSG_PUT_REQ, sizeof(struct o2_putreq_msg) },
		{ O2_MSG_PUT_ACK, sizeof(struct o2_putack_msg) },
		{ O2_MSG_GET_REQ, sizeof(struct o2_get_msg) },
		{ O2_MSG_PUT_NAK, sizeof(struct o2_completion_msg) },
		{ O2_MSG_PUT_DONE, sizeof(struct o2_completion_msg) },
		{ O2_MSG_GET_DONE, sizeof(struct o2_completion_msg) },
	};
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u32 i, nob;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    o2_bulk_body_unpack(t[i].type, buf,
							t[i].min - 1, false,
							256, O2T_MAX_NOB,
							&nob),
				    -EPROTO, "type 0x%x", t[i].type);
	KUNIT_EXPECT_EQ(test, o2_bulk_body_unpack(O2_MSG_IMMEDIATE, buf, 100,
						  false, 256, O2T_MAX_NOB,
						  &nob), -EPROTO);
}

static void completion_status_is_swabbed(struct kunit *test)
{
	struct o2_completion_msg m = { .cookie = swab64(5),
				       .status = swab32((u32)-ENOMEM) };
	u32 nob;

	KUNIT_EXPECT_EQ(test, o2_bulk_body_unpack(O2_MSG_PUT_DONE, &m,
						  sizeof(m), true, 256,
						  O2T_MAX_NOB, &nob), 0);
	KUNIT_EXPECT_EQ(test, m.cookie, 5ULL);
	KUNIT_EXPECT_EQ(test, m.status, -ENOMEM);
}

static void peer_statuses_never_read_as_local_hopeless_errors(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_remote_status(0), 0);
	/* data and transport failures keep their class */
	KUNIT_EXPECT_EQ(test, o2_remote_status(-EBADMSG), -EBADMSG);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-ETIMEDOUT), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-ENOMEM), -ENOMEM);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-ECONNABORTED), -ECONNABORTED);
	/* the peer's device or arguments are not ours */
	KUNIT_EXPECT_EQ(test, o2_remote_status(-ENODEV), -EREMOTEIO);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-ENETDOWN), -EREMOTEIO);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-EINVAL), -EREMOTEIO);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-EPERM), -EREMOTEIO);
	/* nonsense */
	KUNIT_EXPECT_EQ(test, o2_remote_status(1), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_remote_status(-MAX_ERRNO - 1), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_remote_status(S64_MIN), -EPROTO);
}

static void only_checked_acked_or_routed_writes_ask_for_an_ack(struct kunit *test)
{
	const u32 w = O2LND_BRW_WRITE, r = O2LND_BRW_READ;
	const u32 chk = O2LND_BRW_F_CHECK, ack = O2LND_BRW_F_ACK;

	/* an unchecked write to our network: the transport's ack is enough */
	KUNIT_EXPECT_FALSE(test, o2_brw_wants_ack(w, 0, false));
	/* the server's verdict, asked for, or the end beyond a router */
	KUNIT_EXPECT_TRUE(test, o2_brw_wants_ack(w, chk, false));
	KUNIT_EXPECT_TRUE(test, o2_brw_wants_ack(w, ack, false));
	KUNIT_EXPECT_TRUE(test, o2_brw_wants_ack(w, chk | ack, false));
	KUNIT_EXPECT_TRUE(test, o2_brw_wants_ack(w, 0, true));
	/* a read's answer is its data, never an ACK */
	KUNIT_EXPECT_FALSE(test, o2_brw_wants_ack(r, 0, false));
	KUNIT_EXPECT_FALSE(test, o2_brw_wants_ack(r, chk | ack, true));
}

static struct kunit_case o2_bulk_cases[] = {
	KUNIT_CASE(only_checked_acked_or_routed_writes_ask_for_an_ack),
	KUNIT_CASE(peer_statuses_never_read_as_local_hopeless_errors),
	KUNIT_CASE(good_descriptor_in_either_byte_order),
	KUNIT_CASE(bad_descriptors_are_refused),
	KUNIT_CASE(short_bodies_are_refused),
	KUNIT_CASE(completion_status_is_swabbed),
	{}
};

static struct kunit_suite o2_bulk_suite = {
	.name = "o2lnd_bulk_wire",
	.test_cases = o2_bulk_cases,
};

kunit_test_suites(&o2_bulk_suite);
