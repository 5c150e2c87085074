// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the o2iblnd v2 message header (module/wire.c): checksum,
 * packing, and every check o2_msg_unpack() makes, for native and
 * byte-swapped senders.  Truncated messages live in buffers of exactly
 * the truncated size, so on the debug kernel KASAN also proves that no
 * check reads past what was received.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swab.h>
#include "wire.h"
#include "o2lnd_kunit.h"

#define SRCSTAMP	0x1111222233334444ULL
#define DSTSTAMP	0x5555666677778888ULL
#define BODY_NOB	100	/* an IMMEDIATE with a 52-byte body */

static const u8 o2t_types[] = {
	O2_MSG_CONNREQ, O2_MSG_CONNACK, O2_MSG_NOOP, O2_MSG_IMMEDIATE,
	O2_MSG_PUT_REQ, O2_MSG_PUT_NAK, O2_MSG_PUT_ACK, O2_MSG_PUT_DONE,
	O2_MSG_GET_REQ, O2_MSG_GET_DONE,
};

static bool o2t_is_connmsg(u8 type)
{
	return type == O2_MSG_CONNREQ || type == O2_MSG_CONNACK;
}

static void o2t_hdr_swab(struct o2_msg_hdr *h)
{
	h->magic = swab32(h->magic);
	h->version = swab16(h->version);
	h->nob = swab32(h->nob);
	h->cksum = swab32(h->cksum);
	h->srcnid = swab64(h->srcnid);
	h->srcstamp = swab64(h->srcstamp);
	h->dstnid = swab64(h->dstnid);
	h->dststamp = swab64(h->dststamp);
}

/*
 * Build a message of @nob bytes in @buf as a sender of the given byte
 * order would: body first, then the header, then the checksum over the
 * bytes as sent.
 */
static void o2t_build(void *buf, u8 type, u32 nob, bool cksum, bool swabbed)
{
	struct o2_msg_hdr *h = buf;
	u8 *p = buf;
	u32 i, sum;

	memset(buf, 0, nob);
	for (i = sizeof(*h); i < nob; i++)
		p[i] = (u8)(i * 7 + 3);
	if (o2t_is_connmsg(type) && nob >= sizeof(struct o2_connmsg)) {
		struct o2_connmsg *m = buf;

		m->cp.queue_depth = 8;
		m->cp.max_frags = 256;
		m->cp.max_msg_size = O2_MAX_MSG_SIZE;
	}
	o2_msg_pack(buf, type, 5, nob, O2T_NID_A, SRCSTAMP, O2T_NID_B,
		    type == O2_MSG_CONNREQ ? 0 : DSTSTAMP, cksum && !swabbed);
	if (!swabbed)
		return;
	o2t_hdr_swab(h);
	if (o2t_is_connmsg(type) && nob >= sizeof(struct o2_connmsg))
		o2_connparams_swab(&((struct o2_connmsg *)buf)->cp);
	if (cksum) {
		sum = o2_cksum(buf, nob);
		h->cksum = swab32(sum);
	}
}

static struct o2_msg_expect o2t_exp(u32 nob)
{
	struct o2_msg_expect exp = {
		.nob = nob, .dstnid = O2T_NID_B,
	};

	return exp;
}

/* ------------------------------------------------------------ checksum */

static void cksum_matches_reference_vectors(struct kunit *test)
{
	static const u8 abc[] = { 1, 2, 3 };
	static const u8 minus1[] = { 0xff };
	static const u8 wrap[] = { 0x80, 0x00 };
	u8 seq[256];
	int i;

	for (i = 0; i < 256; i++)
		seq[i] = i;
	KUNIT_EXPECT_EQ(test, o2_cksum(abc, sizeof(abc)), 11U);
	/* bytes count as signed chars */
	KUNIT_EXPECT_EQ(test, o2_cksum(minus1, 1), 0xffffffffU);
	/* the rotate carries the top bit round to bit 0 */
	KUNIT_EXPECT_EQ(test, o2_cksum(wrap, sizeof(wrap)), 0xffffff01U);
	KUNIT_EXPECT_EQ(test, o2_cksum(seq, sizeof(seq)), 0xf7fffeffU);
}

static void cksum_is_never_zero(struct kunit *test)
{
	static const u8 zero_sum[] = { 0x01, 0xfe };	/* sums to 0 */
	static const u8 zeros[8] = {};

	KUNIT_EXPECT_EQ(test, o2_cksum(zero_sum, 0), 1U);
	KUNIT_EXPECT_EQ(test, o2_cksum(zeros, sizeof(zeros)), 1U);
	KUNIT_EXPECT_EQ(test, o2_cksum(zero_sum, sizeof(zero_sum)), 1U);
}

/* ------------------------------------------------------------ types, pack */

static void type_valid_accepts_exactly_the_ten_v2_types(struct kunit *test)
{
	int t, i, known = 0;

	for (t = 0; t < 256; t++) {
		bool listed = false;

		for (i = 0; i < ARRAY_SIZE(o2t_types); i++)
			listed |= o2t_types[i] == t;
		known += listed;
		KUNIT_EXPECT_EQ_MSG(test, o2_msg_type_valid(t), listed,
				    "type 0x%02x", t);
	}
	KUNIT_EXPECT_EQ(test, known, 10);
}

static void pack_sets_every_header_field(struct kunit *test)
{
	struct o2_connmsg m;

	memset(&m, 0xa5, sizeof(m));
	o2_msg_pack(&m, O2_MSG_CONNACK, 7, sizeof(m), O2T_NID_A, SRCSTAMP,
		    O2T_NID_B, DSTSTAMP, false);
	KUNIT_EXPECT_EQ(test, m.hdr.magic, (u32)O2_MSG_MAGIC);
	KUNIT_EXPECT_EQ(test, m.hdr.version, (u16)O2_MSG_VERSION);
	KUNIT_EXPECT_EQ(test, m.hdr.type, (u8)O2_MSG_CONNACK);
	KUNIT_EXPECT_EQ(test, m.hdr.credits, (u8)7);
	KUNIT_EXPECT_EQ(test, m.hdr.nob, (u32)sizeof(m));
	KUNIT_EXPECT_EQ(test, m.hdr.cksum, 0U);
	KUNIT_EXPECT_EQ(test, m.hdr.srcnid, O2T_NID_A);
	KUNIT_EXPECT_EQ(test, m.hdr.srcstamp, SRCSTAMP);
	KUNIT_EXPECT_EQ(test, m.hdr.dstnid, O2T_NID_B);
	KUNIT_EXPECT_EQ(test, m.hdr.dststamp, DSTSTAMP);
	/* the body is left alone */
	KUNIT_EXPECT_EQ(test, m.cp.queue_depth, (u16)0xa5a5);
}

static void pack_checksum_covers_the_whole_message(struct kunit *test)
{
	u8 buf[BODY_NOB];
	struct o2_msg_hdr *h = (void *)buf;
	u32 sum;

	o2t_build(buf, O2_MSG_IMMEDIATE, sizeof(buf), true, false);
	sum = h->cksum;
	KUNIT_EXPECT_NE(test, sum, 0U);
	h->cksum = 0;
	KUNIT_EXPECT_EQ(test, o2_cksum(buf, sizeof(buf)), sum);
	/* the last body byte is covered */
	buf[sizeof(buf) - 1] ^= 1;
	KUNIT_EXPECT_NE(test, o2_cksum(buf, sizeof(buf)), sum);
}

/* ------------------------------------------------------------ unpack: good */

static void unpack_native_connreq_keeps_every_field(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_connmsg));
	struct o2_connmsg m;

	o2t_build(&m, O2_MSG_CONNREQ, sizeof(m), false, false);
	KUNIT_ASSERT_EQ(test, o2_msg_unpack(&m, &exp), 0);
	KUNIT_EXPECT_EQ(test, m.hdr.magic, (u32)O2_MSG_MAGIC);
	KUNIT_EXPECT_EQ(test, m.hdr.version, (u16)O2_MSG_VERSION);
	KUNIT_EXPECT_EQ(test, m.hdr.type, (u8)O2_MSG_CONNREQ);
	KUNIT_EXPECT_EQ(test, m.hdr.credits, (u8)5);
	KUNIT_EXPECT_EQ(test, m.hdr.nob, (u32)sizeof(m));
	KUNIT_EXPECT_EQ(test, m.hdr.cksum, 0U);
	KUNIT_EXPECT_EQ(test, m.hdr.srcnid, O2T_NID_A);
	KUNIT_EXPECT_EQ(test, m.hdr.srcstamp, SRCSTAMP);
	KUNIT_EXPECT_EQ(test, m.hdr.dstnid, O2T_NID_B);
	KUNIT_EXPECT_EQ(test, m.hdr.dststamp, 0ULL);
	KUNIT_EXPECT_EQ(test, m.cp.queue_depth, (u16)8);
	KUNIT_EXPECT_EQ(test, m.cp.max_frags, (u16)256);
	KUNIT_EXPECT_EQ(test, m.cp.max_msg_size, (u32)O2_MAX_MSG_SIZE);
}

static void unpack_swabbed_connack_converts_every_field(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_connmsg));
	struct o2_connmsg m;

	o2t_build(&m, O2_MSG_CONNACK, sizeof(m), false, true);
	KUNIT_ASSERT_EQ(test, m.hdr.magic, swab32(O2_MSG_MAGIC));
	KUNIT_ASSERT_EQ(test, o2_msg_unpack(&m, &exp), 0);
	KUNIT_EXPECT_EQ(test, m.hdr.magic, (u32)O2_MSG_MAGIC);
	KUNIT_EXPECT_EQ(test, m.hdr.version, (u16)O2_MSG_VERSION);
	KUNIT_EXPECT_EQ(test, m.hdr.type, (u8)O2_MSG_CONNACK);
	KUNIT_EXPECT_EQ(test, m.hdr.credits, (u8)5);
	KUNIT_EXPECT_EQ(test, m.hdr.nob, (u32)sizeof(m));
	KUNIT_EXPECT_EQ(test, m.hdr.cksum, 0U);
	KUNIT_EXPECT_EQ(test, m.hdr.srcnid, O2T_NID_A);
	KUNIT_EXPECT_EQ(test, m.hdr.srcstamp, SRCSTAMP);
	KUNIT_EXPECT_EQ(test, m.hdr.dstnid, O2T_NID_B);
	KUNIT_EXPECT_EQ(test, m.hdr.dststamp, DSTSTAMP);
	KUNIT_EXPECT_EQ(test, m.cp.queue_depth, (u16)8);
	KUNIT_EXPECT_EQ(test, m.cp.max_frags, (u16)256);
	KUNIT_EXPECT_EQ(test, m.cp.max_msg_size, (u32)O2_MAX_MSG_SIZE);
}

static void unpack_checksummed_from_either_byte_order(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(BODY_NOB);
	struct o2_msg_hdr *h;
	u8 buf[BODY_NOB];
	int swabbed;

	h = (void *)buf;
	for (swabbed = 0; swabbed < 2; swabbed++) {
		u32 sent;

		o2t_build(buf, O2_MSG_IMMEDIATE, sizeof(buf), true, swabbed);
		sent = swabbed ? swab32(h->cksum) : h->cksum;
		KUNIT_ASSERT_NE(test, sent, 0U);
		KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(buf, &exp), 0,
				    "swabbed %d", swabbed);
		/* the checksum field is kept, in host order */
		KUNIT_EXPECT_EQ(test, h->cksum, sent);
		KUNIT_EXPECT_EQ(test, buf[sizeof(buf) - 1],
				(u8)((sizeof(buf) - 1) * 7 + 3));
	}
}

static void unpack_accepts_every_type_at_its_minimum_length(struct kunit *test)
{
	u8 buf[sizeof(struct o2_connmsg)];
	int i, swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		for (i = 0; i < ARRAY_SIZE(o2t_types); i++) {
			u8 type = o2t_types[i];
			u32 nob = o2t_is_connmsg(type) ?
				  sizeof(struct o2_connmsg) :
				  sizeof(struct o2_msg_hdr);
			struct o2_msg_expect exp = o2t_exp(nob);

			o2t_build(buf, type, nob, true, swabbed);
			KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(buf, &exp), 0,
					    "type 0x%02x swabbed %d", type,
					    swabbed);
		}
	}
}

/* ------------------------------------------------------------ unpack: bad */

static void unpack_rejects_conn_messages_without_params(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_msg_hdr));
	u8 buf[sizeof(struct o2_connmsg)];
	int swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		o2t_build(buf, O2_MSG_CONNREQ, exp.nob, true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(buf, &exp), -EPROTO);
		o2t_build(buf, O2_MSG_CONNACK, exp.nob + 7, false, swabbed);
		exp.nob += 7;
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(buf, &exp), -EPROTO);
		exp.nob -= 7;
	}
}

static void unpack_rejects_unknown_types(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_connmsg));
	struct o2_connmsg m;
	int t, swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		for (t = 0; t < 256; t++) {
			if (o2_msg_type_valid(t))
				continue;
			o2t_build(&m, t, sizeof(m), true, swabbed);
			KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(&m, &exp),
					    -EPROTO, "type 0x%02x swabbed %d",
					    t, swabbed);
		}
	}
}

/*
 * A message whose header says N bytes, received in a buffer of exactly
 * L < N bytes (what the Receive completion reported), for every L.
 */
static void o2t_truncate_all(struct kunit *test, u8 type, u32 nob,
			     bool swabbed)
{
	u8 *full = kunit_kmalloc(test, nob, GFP_KERNEL);
	u32 len;

	KUNIT_ASSERT_NOT_NULL(test, full);
	o2t_build(full, type, nob, true, swabbed);
	for (len = 1; len < nob; len++) {
		struct o2_msg_expect exp = o2t_exp(len);
		u8 *cut = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, cut);
		memcpy(cut, full, len);
		KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(cut, &exp), -EPROTO,
				    "type 0x%02x nob %u received %u swabbed %d",
				    type, nob, len, swabbed);
		kunit_kfree(test, cut);
	}
	/* nothing received at all */
	{
		struct o2_msg_expect exp = o2t_exp(0);

		KUNIT_EXPECT_EQ(test, o2_msg_unpack(full, &exp), -EPROTO);
	}
}

static void unpack_rejects_truncation_at_every_length(struct kunit *test)
{
	int swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		o2t_truncate_all(test, O2_MSG_CONNREQ,
				 sizeof(struct o2_connmsg), swabbed);
		o2t_truncate_all(test, O2_MSG_NOOP, sizeof(struct o2_msg_hdr),
				 swabbed);
		o2t_truncate_all(test, O2_MSG_IMMEDIATE, BODY_NOB, swabbed);
	}
}

static void unpack_rejects_nob_other_than_received(struct kunit *test)
{
	static const u32 claims[] = {
		0, 1, sizeof(struct o2_msg_hdr) - 1, sizeof(struct o2_msg_hdr),
		BODY_NOB - 1, BODY_NOB + 1, O2_MAX_MSG_SIZE,
		O2_MAX_MSG_SIZE + 1, 0xffffffff,
	};
	struct o2_msg_expect exp = o2t_exp(BODY_NOB);
	struct o2_msg_hdr *h;
	u8 buf[BODY_NOB];
	int i, swabbed;

	h = (void *)buf;
	for (swabbed = 0; swabbed < 2; swabbed++) {
		for (i = 0; i < ARRAY_SIZE(claims); i++) {
			o2t_build(buf, O2_MSG_IMMEDIATE, sizeof(buf), false,
				  swabbed);
			h->nob = swabbed ? swab32(claims[i]) : claims[i];
			KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(buf, &exp),
					    -EPROTO, "claims %u swabbed %d",
					    claims[i], swabbed);
		}
	}
}

static void unpack_rejects_bad_magic(struct kunit *test)
{
	static const u32 magics[] = {
		0, 0xffffffff, O2_MSG_MAGIC + 1, O2_MSG_MAGIC ^ 0x80000000,
		~O2_MSG_MAGIC, 0x1b910be9 /* half-swapped */,
		0x45726963 /* LNet's acceptor magic */,
	};
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_msg_hdr));
	struct o2_msg_hdr h;
	int i;

	for (i = 0; i < ARRAY_SIZE(magics); i++) {
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), false, false);
		h.magic = magics[i];
		KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(&h, &exp), -EPROTO,
				    "magic 0x%08x", magics[i]);
	}
}

static void unpack_rejects_bad_version(struct kunit *test)
{
	static const u16 versions[] = {
		0, 0x11 /* o2iblnd v1 */, 0x13, 0x1200, 0xffff,
	};
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_msg_hdr));
	struct o2_msg_hdr h;
	int i, swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		for (i = 0; i < ARRAY_SIZE(versions); i++) {
			o2t_build(&h, O2_MSG_NOOP, sizeof(h), false, swabbed);
			h.version = swabbed ? swab16(versions[i]) : versions[i];
			KUNIT_EXPECT_EQ_MSG(test, o2_msg_unpack(&h, &exp),
					    -EPROTO, "version 0x%04x swabbed %d",
					    versions[i], swabbed);
		}
	}
	/* a swabbed magic with the version left in host order */
	o2t_build(&h, O2_MSG_NOOP, sizeof(h), false, true);
	h.version = O2_MSG_VERSION;
	KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -EPROTO);
}

/*
 * With a checksum, flipping any one bit of any byte is refused, whatever
 * field it lands in.  The one exception is a flip that turns the
 * checksum field itself into 0, which by protocol means "no checksum".
 */
static void unpack_checksum_catches_any_corrupted_byte(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_connmsg));
	const size_t cks = offsetof(struct o2_msg_hdr, cksum);
	u8 good[sizeof(struct o2_connmsg)], buf[sizeof(good)];
	int i, bit, swabbed, tried = 0;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		o2t_build(good, O2_MSG_CONNACK, sizeof(good), true, swabbed);
		for (i = 0; i < sizeof(good); i++) {
			for (bit = 0; bit < 8; bit++) {
				u32 field;

				memcpy(buf, good, sizeof(buf));
				buf[i] ^= 1 << bit;
				memcpy(&field, buf + cks, sizeof(field));
				if (i >= cks && i < cks + 4 && !field)
					continue;
				tried++;
				KUNIT_EXPECT_NE_MSG(test,
						    o2_msg_unpack(buf, &exp), 0,
						    "byte %d bit %d swabbed %d",
						    i, bit, swabbed);
			}
		}
	}
	KUNIT_EXPECT_GE(test, tried, 2 * 8 * 56 - 8);
}

static void unpack_checks_the_nids(struct kunit *test)
{
	struct o2_msg_expect exp = o2t_exp(sizeof(struct o2_msg_hdr));
	struct o2_msg_hdr h;
	int swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		/* wrong receiver */
		exp = o2t_exp(sizeof(h));
		exp.dstnid = O2T_NID_A;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -EHOSTUNREACH);
		/* the sender is only checked when one is expected */
		exp = o2t_exp(sizeof(h));
		exp.srcnid = O2T_NID_B;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -EHOSTUNREACH);
		exp.srcnid = O2T_NID_A;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), 0);
		exp.srcnid = 0;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), 0);
		/* a NID differing only in its network */
		exp.dstnid = O2T_NID_B + (1ULL << 32);
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -EHOSTUNREACH);
	}
}

static void unpack_rejects_stale_stamps(struct kunit *test)
{
	struct o2_msg_expect exp;
	struct o2_msg_hdr h;
	int swabbed;

	for (swabbed = 0; swabbed < 2; swabbed++) {
		exp = o2t_exp(sizeof(h));
		exp.srcstamp = SRCSTAMP + 1;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -ESTALE);

		exp = o2t_exp(sizeof(h));
		exp.dststamp = DSTSTAMP - 1;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -ESTALE);

		exp.srcstamp = SRCSTAMP;
		exp.dststamp = DSTSTAMP;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), 0);

		/* a wrong NID is reported before a stale stamp */
		exp.srcstamp = 1;
		exp.dstnid = O2T_NID_A;
		o2t_build(&h, O2_MSG_NOOP, sizeof(h), true, swabbed);
		KUNIT_EXPECT_EQ(test, o2_msg_unpack(&h, &exp), -EHOSTUNREACH);
	}
}

static void peek_nob_reads_either_byte_order(struct kunit *test)
{
	u8 buf[BODY_NOB];
	struct o2_msg_hdr *h = (void *)buf;

	o2t_build(buf, O2_MSG_IMMEDIATE, sizeof(buf), false, false);
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, sizeof(buf)), (u32)BODY_NOB);
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, sizeof(*h)), (u32)BODY_NOB);
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, sizeof(*h) - 1), 0U);
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, 0), 0U);
	o2t_build(buf, O2_MSG_IMMEDIATE, sizeof(buf), false, true);
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, sizeof(buf)), (u32)BODY_NOB);
	h->magic = 0;
	KUNIT_EXPECT_EQ(test, o2_msg_peek_nob(buf, sizeof(buf)), 0U);
}

static struct kunit_case o2_wire_msg_cases[] = {
	KUNIT_CASE(cksum_matches_reference_vectors),
	KUNIT_CASE(cksum_is_never_zero),
	KUNIT_CASE(type_valid_accepts_exactly_the_ten_v2_types),
	KUNIT_CASE(pack_sets_every_header_field),
	KUNIT_CASE(pack_checksum_covers_the_whole_message),
	KUNIT_CASE(unpack_native_connreq_keeps_every_field),
	KUNIT_CASE(unpack_swabbed_connack_converts_every_field),
	KUNIT_CASE(unpack_checksummed_from_either_byte_order),
	KUNIT_CASE(unpack_accepts_every_type_at_its_minimum_length),
	KUNIT_CASE(unpack_rejects_conn_messages_without_params),
	KUNIT_CASE(unpack_rejects_unknown_types),
	KUNIT_CASE(unpack_rejects_truncation_at_every_length),
	KUNIT_CASE(unpack_rejects_nob_other_than_received),
	KUNIT_CASE(unpack_rejects_bad_magic),
	KUNIT_CASE(unpack_rejects_bad_version),
	KUNIT_CASE(unpack_checksum_catches_any_corrupted_byte),
	KUNIT_CASE(unpack_checks_the_nids),
	KUNIT_CASE(unpack_rejects_stale_stamps),
	KUNIT_CASE(peek_nob_reads_either_byte_order),
	{}
};

static struct kunit_suite o2_wire_msg_suite = {
	.name = "o2lnd_wire_msg",
	.test_cases = o2_wire_msg_cases,
};

/* ------------------------------------------------------------ reject data */

static const struct o2_connparams o2t_cp = {
	.queue_depth = 4, .max_frags = 32, .max_msg_size = O2_MAX_MSG_SIZE,
};

static void rej_pack_fills_every_field_and_zeroes_padding(struct kunit *test)
{
	struct o2_rej rej;

	memset(&rej, 0xa5, sizeof(rej));
	o2_rej_pack(&rej, O2_REJECT_RDMA_FRAGS, 0x1122334455667788ULL,
		    &o2t_cp);
	KUNIT_EXPECT_EQ(test, rej.magic, (u32)O2_MSG_MAGIC);
	KUNIT_EXPECT_EQ(test, rej.version, (u16)O2_MSG_VERSION);
	KUNIT_EXPECT_EQ(test, rej.why, (u8)O2_REJECT_RDMA_FRAGS);
	KUNIT_EXPECT_EQ(test, rej.padding, (u8)0);
	KUNIT_EXPECT_EQ(test, rej.incarnation, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, rej.cp.queue_depth, o2t_cp.queue_depth);
	KUNIT_EXPECT_EQ(test, rej.cp.max_frags, o2t_cp.max_frags);
	KUNIT_EXPECT_EQ(test, rej.cp.max_msg_size, o2t_cp.max_msg_size);
}

static void rej_unpack_round_trips_every_reason(struct kunit *test)
{
	struct o2_rej rej, out;
	int why;

	for (why = O2_REJECT_CONN_RACE; why <= O2_REJECT_EARLY; why++) {
		o2_rej_pack(&rej, why, 42, &o2t_cp);
		KUNIT_ASSERT_EQ(test, o2_rej_unpack(&rej, sizeof(rej), &out), 0);
		KUNIT_EXPECT_EQ(test, memcmp(&rej, &out, sizeof(rej)), 0);
	}
}

static void rej_unpack_converts_a_swabbed_rejecter(struct kunit *test)
{
	struct o2_rej rej, out;

	o2_rej_pack(&rej, O2_REJECT_MSG_QUEUE_SIZE, 0x1122334455667788ULL,
		    &o2t_cp);
	rej.magic = swab32(rej.magic);
	rej.version = swab16(rej.version);
	rej.incarnation = swab64(rej.incarnation);
	o2_connparams_swab(&rej.cp);
	KUNIT_ASSERT_EQ(test, o2_rej_unpack(&rej, sizeof(rej), &out), 0);
	KUNIT_EXPECT_EQ(test, out.magic, (u32)O2_MSG_MAGIC);
	KUNIT_EXPECT_EQ(test, out.version, (u16)O2_MSG_VERSION);
	KUNIT_EXPECT_EQ(test, out.why, (u8)O2_REJECT_MSG_QUEUE_SIZE);
	KUNIT_EXPECT_EQ(test, out.incarnation, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, out.cp.queue_depth, o2t_cp.queue_depth);
	KUNIT_EXPECT_EQ(test, out.cp.max_frags, o2t_cp.max_frags);
	KUNIT_EXPECT_EQ(test, out.cp.max_msg_size, o2t_cp.max_msg_size);
	/* the input is not modified */
	KUNIT_EXPECT_EQ(test, rej.magic, swab32(O2_MSG_MAGIC));
}

static void rej_unpack_rejects_every_short_length(struct kunit *test)
{
	struct o2_rej rej, out;
	size_t len;

	o2_rej_pack(&rej, O2_REJECT_CONN_STALE, 7, &o2t_cp);
	KUNIT_EXPECT_EQ(test, o2_rej_unpack(NULL, 0, &out), -EPROTO);
	KUNIT_EXPECT_EQ(test, o2_rej_unpack(NULL, sizeof(rej), &out),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, o2_rej_unpack(&rej, 0, &out), -EPROTO);
	for (len = 1; len < sizeof(rej); len++) {
		u8 *cut = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, cut);
		memcpy(cut, &rej, len);
		KUNIT_EXPECT_EQ_MSG(test, o2_rej_unpack(cut, len, &out),
				    -EPROTO, "len %zu", len);
		kunit_kfree(test, cut);
	}
}

static void rej_unpack_ignores_trailing_bytes(struct kunit *test)
{
	u8 buf[sizeof(struct o2_rej) + 8];
	struct o2_rej out;

	memset(buf, 0xee, sizeof(buf));
	o2_rej_pack((struct o2_rej *)buf, O2_REJECT_NO_RESOURCES, 9, &o2t_cp);
	KUNIT_ASSERT_EQ(test, o2_rej_unpack(buf, sizeof(buf), &out), 0);
	KUNIT_EXPECT_EQ(test, out.why, (u8)O2_REJECT_NO_RESOURCES);
	KUNIT_EXPECT_EQ(test, out.incarnation, 9ULL);
}

static void rej_unpack_rejects_bad_magic(struct kunit *test)
{
	static const u32 magics[] = {
		0, 0xffffffff, O2_MSG_MAGIC + 1, 0x1b910be9, ~O2_MSG_MAGIC,
	};
	struct o2_rej rej, out;
	int i;

	for (i = 0; i < ARRAY_SIZE(magics); i++) {
		o2_rej_pack(&rej, O2_REJECT_FATAL, 1, &o2t_cp);
		rej.magic = magics[i];
		KUNIT_EXPECT_EQ_MSG(test, o2_rej_unpack(&rej, sizeof(rej), &out),
				    -EPROTO, "magic 0x%08x", magics[i]);
	}
}

static void connparams_swab_swaps_each_field_once(struct kunit *test)
{
	struct o2_connparams cp = {
		.queue_depth = 0x0102, .max_frags = 0x0304,
		.max_msg_size = 0x05060708,
	};

	o2_connparams_swab(&cp);
	KUNIT_EXPECT_EQ(test, cp.queue_depth, (u16)0x0201);
	KUNIT_EXPECT_EQ(test, cp.max_frags, (u16)0x0403);
	KUNIT_EXPECT_EQ(test, cp.max_msg_size, 0x08070605U);
	o2_connparams_swab(&cp);
	KUNIT_EXPECT_EQ(test, cp.queue_depth, (u16)0x0102);
	KUNIT_EXPECT_EQ(test, cp.max_frags, (u16)0x0304);
	KUNIT_EXPECT_EQ(test, cp.max_msg_size, 0x05060708U);
}

static void wire_structs_have_o2iblnd_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct o2_msg_hdr), (size_t)48);
	KUNIT_EXPECT_EQ(test, sizeof(struct o2_connmsg), (size_t)56);
	KUNIT_EXPECT_EQ(test, sizeof(struct o2_rej), (size_t)24);
	KUNIT_EXPECT_EQ(test, sizeof(struct o2_lnet_hdr), (size_t)72);
	KUNIT_EXPECT_EQ(test, sizeof(struct o2_ping_info), (size_t)16);
	KUNIT_EXPECT_EQ(test, offsetof(struct o2_msg_hdr, nob), (size_t)8);
	KUNIT_EXPECT_EQ(test, offsetof(struct o2_msg_hdr, srcnid), (size_t)16);
	KUNIT_EXPECT_EQ(test, offsetof(struct o2_rej, incarnation), (size_t)8);
}

static struct kunit_case o2_wire_rej_cases[] = {
	KUNIT_CASE(rej_pack_fills_every_field_and_zeroes_padding),
	KUNIT_CASE(rej_unpack_round_trips_every_reason),
	KUNIT_CASE(rej_unpack_converts_a_swabbed_rejecter),
	KUNIT_CASE(rej_unpack_rejects_every_short_length),
	KUNIT_CASE(rej_unpack_ignores_trailing_bytes),
	KUNIT_CASE(rej_unpack_rejects_bad_magic),
	KUNIT_CASE(connparams_swab_swaps_each_field_once),
	KUNIT_CASE(wire_structs_have_o2iblnd_sizes),
	{}
};

static struct kunit_suite o2_wire_rej_suite = {
	.name = "o2lnd_wire_reject",
	.test_cases = o2_wire_rej_cases,
};

kunit_test_suites(&o2_wire_msg_suite, &o2_wire_rej_suite);
