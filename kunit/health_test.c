// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: LNet Health and Multi-Rail (module/health.c) and the ping
 * info a peer sends in a ping REPLY or a push (o2_ping_info_unpack(),
 * module/wire.c): the health arithmetic at its bounds, the class of every
 * errno o2lnd ends a message with and whom it blames, the order of the
 * Multi-Rail choice, and every ping info LNet may send or a peer may
 * forge.  Truncated ping infos live in buffers of exactly that size, so
 * on the debug kernel KASAN also proves nothing reads past them.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <uapi/o2lnd.h>
#include "health.h"
#include "wire.h"

/* ---------------------------------------------------------------- health */

static void health_moves_by_sensitivity_within_bounds(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_health_dec(O2_HEALTH_MAX, 100), 900U);
	KUNIT_EXPECT_EQ(test, o2_health_dec(50, 100), 0U);
	KUNIT_EXPECT_EQ(test, o2_health_dec(0, 100), 0U);
	KUNIT_EXPECT_EQ(test, o2_health_inc(900, 100), O2_HEALTH_MAX);
	KUNIT_EXPECT_EQ(test, o2_health_inc(950, 100), O2_HEALTH_MAX);
	KUNIT_EXPECT_EQ(test, o2_health_inc(O2_HEALTH_MAX, 100),
			O2_HEALTH_MAX);
	KUNIT_EXPECT_EQ(test, o2_health_inc(0, 1000), O2_HEALTH_MAX);
	KUNIT_EXPECT_EQ(test, o2_health_inc(0, 0xffffffffU), O2_HEALTH_MAX);
}

static void zero_sensitivity_leaves_health_alone(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_health_dec(700, 0), 700U);
	KUNIT_EXPECT_EQ(test, o2_health_inc(700, 0), 700U);
}

static void ten_failures_take_a_healthy_nid_to_zero(struct kunit *test)
{
	u32 h = O2_HEALTH_MAX;
	int i;

	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_GT(test, h, 0U);
		h = o2_health_dec(h, 100);
	}
	KUNIT_EXPECT_EQ(test, h, 0U);
	for (i = 0; i < 10; i++)
		h = o2_health_inc(h, 100);
	KUNIT_EXPECT_EQ(test, h, O2_HEALTH_MAX);
}

static void every_errno_gets_lnets_class(struct kunit *test)
{
	static const struct {
		int status;
		enum o2_tx_phase phase;
		enum o2_hstatus hs;
	} c[] = {
		{ 0, O2_TXP_POSTED, O2_HS_OK },
		{ -EINTR, O2_TXP_LOCAL, O2_HS_LOCAL_INTERRUPT },
		{ -ENETDOWN, O2_TXP_LOCAL, O2_HS_LOCAL_DROPPED },
		{ -ENODEV, O2_TXP_POSTED, O2_HS_LOCAL_DROPPED },
		{ -ESHUTDOWN, O2_TXP_CONNECT, O2_HS_LOCAL_DROPPED },
		{ -ECONNABORTED, O2_TXP_POSTED, O2_HS_LOCAL_ABORTED },
		{ -EHOSTUNREACH, O2_TXP_LOCAL, O2_HS_LOCAL_NO_ROUTE },
		{ -ETIMEDOUT, O2_TXP_LOCAL, O2_HS_LOCAL_TIMEOUT },
		{ -ETIMEDOUT, O2_TXP_POSTED, O2_HS_NETWORK_TIMEOUT },
		{ -ECONNREFUSED, O2_TXP_LOCAL, O2_HS_REMOTE_DROPPED },
		{ -EIO, O2_TXP_POSTED, O2_HS_REMOTE_DROPPED },
		{ -EPROTO, O2_TXP_POSTED, O2_HS_REMOTE_ERROR },
		{ -EREMOTEIO, O2_TXP_POSTED, O2_HS_REMOTE_ERROR },
		{ -ENOMEM, O2_TXP_LOCAL, O2_HS_LOCAL_ERROR },
		{ -ENOBUFS, O2_TXP_LOCAL, O2_HS_LOCAL_ERROR },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, o2_hstatus_of(c[i].status, c[i].phase),
				    c[i].hs, "errno %d phase %d", c[i].status,
				    c[i].phase);
}

static void a_failed_connect_is_classed_as_o2iblnd_classes_it(struct kunit *test)
{
	/* kiblnd_peer_connect_failed(): timeout or no route: the network */
	KUNIT_EXPECT_EQ(test, o2_hstatus_of(-ETIMEDOUT, O2_TXP_CONNECT),
			O2_HS_NETWORK_TIMEOUT);
	KUNIT_EXPECT_EQ(test, o2_hstatus_of(-EHOSTUNREACH, O2_TXP_CONNECT),
			O2_HS_NETWORK_TIMEOUT);
	/* refused: the peer, and another path may take the message */
	KUNIT_EXPECT_EQ(test, o2_hstatus_of(-ECONNREFUSED, O2_TXP_CONNECT),
			O2_HS_REMOTE_DROPPED);
	/* our own NI going away is still ours */
	KUNIT_EXPECT_EQ(test, o2_hstatus_of(-ENETDOWN, O2_TXP_CONNECT),
			O2_HS_LOCAL_DROPPED);
	KUNIT_EXPECT_EQ(test, o2_hstatus_blame(o2_hstatus_of(-ETIMEDOUT,
							     O2_TXP_CONNECT)),
			(unsigned int)(O2_BLAME_LOCAL | O2_BLAME_REMOTE));
}

static void local_classes_blame_the_ni_remote_ones_the_peer(struct kunit *test)
{
	int hs;

	KUNIT_EXPECT_EQ(test, o2_hstatus_blame(O2_HS_OK), 0U);
	for (hs = O2_HS_LOCAL_INTERRUPT; hs <= O2_HS_LOCAL_TIMEOUT; hs++)
		KUNIT_EXPECT_EQ_MSG(test, o2_hstatus_blame(hs),
				    (unsigned int)O2_BLAME_LOCAL, "%s",
				    o2_hstatus_name(hs));
	for (hs = O2_HS_REMOTE_ERROR; hs <= O2_HS_REMOTE_TIMEOUT; hs++)
		KUNIT_EXPECT_EQ_MSG(test, o2_hstatus_blame(hs),
				    (unsigned int)O2_BLAME_REMOTE, "%s",
				    o2_hstatus_name(hs));
	KUNIT_EXPECT_EQ(test, o2_hstatus_blame(O2_HS_NETWORK_TIMEOUT),
			(unsigned int)(O2_BLAME_LOCAL | O2_BLAME_REMOTE));
}

static void only_what_cannot_have_arrived_is_resent(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, o2_hstatus_resend(O2_HS_LOCAL_DROPPED));
	KUNIT_EXPECT_TRUE(test, o2_hstatus_resend(O2_HS_LOCAL_TIMEOUT));
	KUNIT_EXPECT_TRUE(test, o2_hstatus_resend(O2_HS_REMOTE_DROPPED));
	KUNIT_EXPECT_FALSE(test, o2_hstatus_resend(O2_HS_OK));
	KUNIT_EXPECT_FALSE(test, o2_hstatus_resend(O2_HS_LOCAL_ERROR));
	KUNIT_EXPECT_FALSE(test, o2_hstatus_resend(O2_HS_REMOTE_ERROR));
	KUNIT_EXPECT_FALSE(test, o2_hstatus_resend(O2_HS_NETWORK_TIMEOUT));
	KUNIT_EXPECT_STREQ(test, o2_hstatus_name(O2_HS_NETWORK_TIMEOUT),
			   "network_timeout");
	KUNIT_EXPECT_STREQ(test, o2_hstatus_name(O2_HS_COUNT), "?");
}

/*
 * An RPC is sent again when its path broke under it (its connection, our
 * NI, the peer's HCA), up to retry_count; never once answered with an
 * error, timed out, interrupted, or while the module stops.
 */
static void an_rpc_is_resent_only_when_its_path_failed(struct kunit *test)
{
	static const int resent[] = { -ECONNABORTED, -EIO, -ECONNRESET,
				      -ENETDOWN, -ENODEV, -ECONNREFUSED };
	static const int kept[] = { 0, -ETIMEDOUT, -EINTR, -ESHUTDOWN,
				    -ECANCELED, -EBADMSG, -EPROTO, -EREMOTEIO,
				    -ENOMEM, -ENOBUFS, -EINVAL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(resent); i++) {
		KUNIT_EXPECT_TRUE_MSG(test, o2_rpc_may_resend(resent[i], 0, 2),
				      "errno %d", resent[i]);
		KUNIT_EXPECT_TRUE(test, o2_rpc_may_resend(resent[i], 1, 2));
		/* retry_count bounds it; 0 (or health off) sends once */
		KUNIT_EXPECT_FALSE(test, o2_rpc_may_resend(resent[i], 2, 2));
		KUNIT_EXPECT_FALSE(test, o2_rpc_may_resend(resent[i], 0, 0));
	}
	for (i = 0; i < ARRAY_SIZE(kept); i++)
		KUNIT_EXPECT_FALSE_MSG(test, o2_rpc_may_resend(kept[i], 0, 16),
				       "errno %d", kept[i]);
}

/* LNet's lnet_lnd_timeout and o2iblnd's kiblnd_timeout() */
static void timeout_zero_takes_lnets_share_of_the_transaction(struct kunit *test)
{
	/* LNet's defaults: (150 - 1) / (2 + 1) */
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(0, 150, 2), 49);
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(0, 31, 4), 6);
	/* health off: one attempt has it all but the last second */
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(0, 150, 0), 149);
	/* never below a second */
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(0, 4, 3), 1);
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(0, 2, 16), 1);
	/* a timeout that is set wins, as o2iblnd's */
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(50, 150, 2), 50);
	KUNIT_EXPECT_EQ(test, o2_lnd_timeout_of(3, 3600, 16), 3);
}

/* LNet's get_msg_deadline() for an LND with a timeout */
static void a_message_may_take_every_attempt_and_a_second(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, o2_msg_timeout_of(50, 2), 151);
	/* derived from 150: 49 * 3 + 1, within the transaction timeout */
	KUNIT_EXPECT_EQ(test, o2_msg_timeout_of(o2_lnd_timeout_of(0, 150, 2), 2),
			148);
	KUNIT_EXPECT_EQ(test, o2_msg_timeout_of(o2_lnd_timeout_of(0, 31, 4), 4),
			31);
	KUNIT_EXPECT_EQ(test, o2_msg_timeout_of(10, 0), 11);
}

static void an_attempt_never_outlives_its_message(struct kunit *test)
{
	unsigned long now = jiffies;

	/* the first attempt: the LND's timeout */
	KUNIT_EXPECT_EQ(test, o2_attempt_deadline(now, 3, now + 31 * HZ),
			now + 3 * HZ);
	/* a resend late in the message is cut off at its deadline */
	KUNIT_EXPECT_EQ(test, o2_attempt_deadline(now, 3, now + HZ), now + HZ);
	KUNIT_EXPECT_EQ(test, o2_attempt_deadline(now, 3, now), now);
	/* across the jiffies wrap */
	now = ULONG_MAX - HZ;
	KUNIT_EXPECT_EQ(test, o2_attempt_deadline(now, 3, now + 10 * HZ),
			now + 3 * HZ);
	KUNIT_EXPECT_EQ(test, o2_attempt_deadline(now, 3, now + 2 * HZ),
			now + 2 * HZ);
}

/* ---------------------------------------------------------- Multi-Rail */

/* retry_count's promise: another path where there is one */
static void a_resend_takes_another_path_where_there_is_one(struct kunit *test)
{
	struct o2_mr_cand c[3] = {
		{ true, O2_HEALTH_MAX, 8 }, { true, O2_HEALTH_MAX, 8 },
		{ true, 500, 8 },
	};
	u32 cur = 0;
	int i;

	/* the failed path has not lost health yet: it still is not taken */
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, 0), 1);
	KUNIT_EXPECT_TRUE(test, c[0].usable);	/* restored */
	/* a less healthy path beats the failed one */
	c[1].usable = false;
	KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, 0), 2);
	/* the only usable path is taken again */
	c[2].usable = false;
	KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, 0), 0);
	KUNIT_EXPECT_TRUE(test, c[0].usable);
	/* none usable; no failed path given: a plain pick */
	c[0].usable = false;
	KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, 0), -1);
	c[0].usable = true;
	c[1].usable = true;
	cur = 0;
	KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, -1), 0);
	KUNIT_EXPECT_EQ(test, o2_mr_pick_resend(c, 3, &cur, 7), 1);
}

static void equal_candidates_take_turns(struct kunit *test)
{
	struct o2_mr_cand c[3] = {
		{ true, O2_HEALTH_MAX, 8 }, { true, O2_HEALTH_MAX, 8 },
		{ true, O2_HEALTH_MAX, 8 },
	};
	u32 cur = 0;
	int counts[3] = {}, i;

	for (i = 0; i < 300; i++)
		counts[o2_mr_pick(c, 3, &cur)]++;
	KUNIT_EXPECT_EQ(test, counts[0], 100);
	KUNIT_EXPECT_EQ(test, counts[1], 100);
	KUNIT_EXPECT_EQ(test, counts[2], 100);
}

static void the_healthiest_wins_then_the_most_credits(struct kunit *test)
{
	struct o2_mr_cand c[3] = {
		{ true, 900, 100 }, { true, O2_HEALTH_MAX, 1 },
		{ true, O2_HEALTH_MAX, 5 },
	};
	u32 cur = 0;
	int i;

	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 3, &cur), 2);
	c[2].credits = -3;	/* messages wait on it now */
	KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 3, &cur), 1);
	c[1].health = 0;
	c[2].health = 0;
	KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 3, &cur), 0);
}

static void an_unusable_candidate_is_never_picked(struct kunit *test)
{
	struct o2_mr_cand c[2] = {
		{ false, O2_HEALTH_MAX, 100 }, { true, 0, -50 },
	};
	u32 cur = 0;
	int i;

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 2, &cur), 1);
	c[1].usable = false;
	KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 2, &cur), -1);
	KUNIT_EXPECT_EQ(test, o2_mr_pick(c, 0, &cur), -1);
}

/*
 * An answer is taken from the NID asked, from another NID of the same
 * known node, and for a routed request from another NID on the target's
 * network (the last router picked it); never from another network, nor
 * from a stranger's NID of a request that went direct.
 */
static void an_answer_comes_from_the_target_its_node_or_past_a_router(struct kunit *test)
{
	const u64 t = 0x00050001c0a80201ULL;	/* 192.168.2.1@o2ib1 */
	const u64 rail = 0x00050001c0a80301ULL;	/* 192.168.3.1@o2ib1 */
	const u64 other_net = 0x00050000c0a80301ULL;	/* 192.168.3.1@o2ib0 */

	KUNIT_EXPECT_TRUE(test, o2_mr_may_answer(t, t, false, false));
	KUNIT_EXPECT_TRUE(test, o2_mr_may_answer(t, t, true, false));
	KUNIT_EXPECT_TRUE(test, o2_mr_may_answer(t, rail, false, true));
	KUNIT_EXPECT_TRUE(test, o2_mr_may_answer(t, other_net, false, true));
	KUNIT_EXPECT_TRUE(test, o2_mr_may_answer(t, rail, true, false));
	KUNIT_EXPECT_FALSE(test, o2_mr_may_answer(t, rail, false, false));
	KUNIT_EXPECT_FALSE(test, o2_mr_may_answer(t, other_net, true, false));
	KUNIT_EXPECT_FALSE(test, o2_mr_may_answer(t, O2LND_NID_ANY, true,
						  false));
}

/* ------------------------------------------------------------ ping info */

#define O2T_LO		((u64)O2LND_NET_TYPE_LO << 48)
#define O2T_NID_A	0x00050000c0a80101ULL	/* 192.168.1.1@o2ib0 */
#define O2T_NID_B	0x00050000c0a80201ULL	/* 192.168.2.1@o2ib0 */

/* A ping info of @n NIDs after 0@lo, in a buffer of exactly its size. */
static struct o2_ping_info *o2t_pi(struct kunit *test, u32 n, u32 feat,
				   u32 seqno, bool swab, u32 *len)
{
	struct o2_ping_info *pi;
	u32 i;

	*len = sizeof(*pi) + (n + 1) * sizeof(pi->ni[0]);
	pi = kunit_kzalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pi);
	pi->magic = cpu_to_le32(O2_PING_MAGIC);
	pi->features = cpu_to_le32(feat);
	pi->pid = cpu_to_le32(O2LND_PID_LUSTRE);
	pi->nnis = cpu_to_le32(n + 1);
	pi->ni[0].nid = cpu_to_le64(O2T_LO);
	pi->ni[0].status = cpu_to_le32(seqno);
	for (i = 1; i <= n; i++) {
		pi->ni[i].nid = cpu_to_le64(i == 1 ? O2T_NID_A : O2T_NID_B + i);
		pi->ni[i].status = cpu_to_le32(O2LND_NI_STATUS_UP);
	}
	if (swab) {
		pi->magic = cpu_to_le32(swab32(O2_PING_MAGIC));
		pi->features = cpu_to_le32(swab32(feat));
		pi->pid = cpu_to_le32(swab32(O2LND_PID_LUSTRE));
		pi->nnis = cpu_to_le32(swab32(n + 1));
		for (i = 0; i <= n; i++) {
			pi->ni[i].nid = cpu_to_le64(swab64(le64_to_cpu(pi->ni[i].nid)));
			pi->ni[i].status = cpu_to_le32(swab32(le32_to_cpu(pi->ni[i].status)));
		}
	}
	return pi;
}

static void lnets_ping_info_reads_in_either_byte_order(struct kunit *test)
{
	const u32 feat = O2_PING_FEAT_BASE | O2_PING_FEAT_NI_STATUS |
		O2_PING_FEAT_MULTI_RAIL | O2_PING_FEAT_DISCOVERY;
	struct o2_ping_view v;
	int swab;

	for (swab = 0; swab <= 1; swab++) {
		u32 len;
		struct o2_ping_info *pi = o2t_pi(test, 2, feat, 7, swab, &len);

		KUNIT_ASSERT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), 0);
		KUNIT_EXPECT_EQ(test, v.features, feat);
		KUNIT_EXPECT_EQ(test, v.pid, (u32)O2LND_PID_LUSTRE);
		KUNIT_EXPECT_EQ(test, v.seqno, 7U);
		KUNIT_EXPECT_EQ(test, v.nnis, 2U);
		KUNIT_EXPECT_EQ(test, v.n, 2U);
		KUNIT_EXPECT_EQ(test, v.ni[0].nid, O2T_NID_A);
		KUNIT_EXPECT_EQ(test, v.ni[0].status, (u32)O2LND_NI_STATUS_UP);
		KUNIT_EXPECT_EQ(test, v.ni[1].nid, O2T_NID_B + 2);
	}
}

static void without_discovery_lo_status_is_no_seqno(struct kunit *test)
{
	struct o2_ping_view v;
	u32 len;
	struct o2_ping_info *pi = o2t_pi(test, 1, O2_PING_FEAT_NI_STATUS,
					 O2LND_NI_STATUS_UP, false, &len);

	KUNIT_ASSERT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), 0);
	KUNIT_EXPECT_EQ(test, v.seqno, 0U);
	KUNIT_EXPECT_EQ(test, v.n, 1U);
}

static void more_nids_than_kept_are_counted(struct kunit *test)
{
	struct o2_ping_view v;
	u32 len;
	struct o2_ping_info *pi = o2t_pi(test, O2_PING_VIEW_MAX + 4, 0, 0,
					 false, &len);

	KUNIT_ASSERT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), 0);
	KUNIT_EXPECT_EQ(test, v.nnis, O2_PING_VIEW_MAX + 4U);
	KUNIT_EXPECT_EQ(test, v.n, (u32)O2_PING_VIEW_MAX);
}

/*
 * A ping REPLY cut to the GET's sink (LNet truncates a REPLY so, and a
 * peer may have more NIDs than our buffer holds) reads the NIDs it
 * holds and counts all it listed; a push (never cut) may not be.
 */
static void a_reply_cut_to_our_buffer_reads_the_nids_it_holds(struct kunit *test)
{
	struct o2_ping_view v;
	u32 len, head = sizeof(struct o2_ping_info);
	struct o2_ping_info *pi = o2t_pi(test, 6, 0, 0, false, &len);
	u32 three = head + 4 * sizeof(struct o2_ping_ni);

	KUNIT_ASSERT_EQ(test, o2_ping_info_unpack(pi, three, true, &v), 0);
	KUNIT_EXPECT_EQ(test, v.nnis, 6U);
	KUNIT_EXPECT_EQ(test, v.n, 3U);
	KUNIT_EXPECT_EQ(test, v.ni[2].nid, le64_to_cpu(pi->ni[3].nid));
	/* half an entry more reads the same */
	KUNIT_ASSERT_EQ(test, o2_ping_info_unpack(pi, three + 6, true, &v), 0);
	KUNIT_EXPECT_EQ(test, v.n, 3U);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, three, false, &v),
			-EPROTO);
	/* not even 0@lo, or not 0@lo first: refused however cut */
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, head, true, &v), -EPROTO);
	pi->ni[0].nid = pi->ni[1].nid;
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, three, true, &v),
			-EPROTO);
}

static void forged_ping_infos_are_refused(struct kunit *test)
{
	struct o2_ping_view v;
	struct o2_ping_info *pi;
	u32 len;

	/* shorter than its header, and each byte short of its NIs */
	pi = o2t_pi(test, 2, 0, 0, false, &len);
	for (; len > 0; len--) {
		void *cut = kunit_kzalloc(test, len - 1 ? len - 1 : 1,
					  GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, cut);
		memcpy(cut, pi, len - 1);
		KUNIT_EXPECT_EQ_MSG(test,
				    o2_ping_info_unpack(cut, len - 1, false,
							&v),
				    -EPROTO, "%u bytes", len - 1);
	}
	/* bad magic */
	pi = o2t_pi(test, 1, 0, 0, false, &len);
	pi->magic = cpu_to_le32(0x12345678);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
	/* no NI at all */
	pi = o2t_pi(test, 1, 0, 0, false, &len);
	pi->nnis = 0;
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
	/* more NIs than bytes */
	pi = o2t_pi(test, 1, 0, 0, false, &len);
	pi->nnis = cpu_to_le32(0xffffffffU);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
	/* 0@lo not first */
	pi = o2t_pi(test, 1, 0, 0, false, &len);
	pi->ni[0].nid = cpu_to_le64(O2T_NID_B);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
	/* 0@lo again later */
	pi = o2t_pi(test, 2, 0, 0, false, &len);
	pi->ni[2].nid = cpu_to_le64(O2T_LO);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
	/* an address-less NID */
	pi = o2t_pi(test, 1, 0, 0, false, &len);
	pi->ni[1].nid = cpu_to_le64(O2T_NID_A & ~0xffffffffULL);
	KUNIT_EXPECT_EQ(test, o2_ping_info_unpack(pi, len, false, &v), -EPROTO);
}

static struct kunit_case o2_health_cases[] = {
	KUNIT_CASE(health_moves_by_sensitivity_within_bounds),
	KUNIT_CASE(zero_sensitivity_leaves_health_alone),
	KUNIT_CASE(ten_failures_take_a_healthy_nid_to_zero),
	KUNIT_CASE(every_errno_gets_lnets_class),
	KUNIT_CASE(a_failed_connect_is_classed_as_o2iblnd_classes_it),
	KUNIT_CASE(local_classes_blame_the_ni_remote_ones_the_peer),
	KUNIT_CASE(only_what_cannot_have_arrived_is_resent),
	KUNIT_CASE(an_rpc_is_resent_only_when_its_path_failed),
	KUNIT_CASE(timeout_zero_takes_lnets_share_of_the_transaction),
	KUNIT_CASE(a_message_may_take_every_attempt_and_a_second),
	KUNIT_CASE(an_attempt_never_outlives_its_message),
	KUNIT_CASE(equal_candidates_take_turns),
	KUNIT_CASE(a_resend_takes_another_path_where_there_is_one),
	KUNIT_CASE(the_healthiest_wins_then_the_most_credits),
	KUNIT_CASE(an_unusable_candidate_is_never_picked),
	KUNIT_CASE(an_answer_comes_from_the_target_its_node_or_past_a_router),
	{}
};

static struct kunit_case o2_ping_info_cases[] = {
	KUNIT_CASE(lnets_ping_info_reads_in_either_byte_order),
	KUNIT_CASE(without_discovery_lo_status_is_no_seqno),
	KUNIT_CASE(more_nids_than_kept_are_counted),
	KUNIT_CASE(a_reply_cut_to_our_buffer_reads_the_nids_it_holds),
	KUNIT_CASE(forged_ping_infos_are_refused),
	{}
};

static struct kunit_suite o2_health_suite = {
	.name = "o2lnd_health",
	.test_cases = o2_health_cases,
};

static struct kunit_suite o2_ping_info_suite = {
	.name = "o2lnd_ping_info",
	.test_cases = o2_ping_info_cases,
};

kunit_test_suites(&o2_health_suite, &o2_ping_info_suite);
