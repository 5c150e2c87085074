/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: LNet Health and Multi-Rail selection, as pure logic KUnit drives
 * without hardware (module/health.c).
 *
 * Health, as LNet defines it: every local NI and every NID of a peer has
 * a health value from 0 to O2_HEALTH_MAX.  A failure lowers the value of
 * the side it is blamed on by health_sensitivity, a success raises it by
 * as much (never above the maximum); a sensitivity of 0 turns health
 * off.  The message's outcome is first classified into LNet's
 * lnet_msg_hstatus classes (o2_hstatus_of()), which say which side is
 * blamed (o2_hstatus_blame()) and whether the message may be resent on
 * another path (o2_hstatus_resend()).
 *
 * Selection, as LNet's lnet_select_pathway() orders it: among the usable
 * candidates the healthiest wins, then the one with the most credits,
 * then round robin from a cursor (o2_mr_pick()); o2lnd picks the local NI
 * that way first, then the peer's NID on that NI's network.
 */
#ifndef _O2LND_HEALTH_H
#define _O2LND_HEALTH_H

#include <linux/types.h>

#define O2_HEALTH_MAX		1000	/* LNET_MAX_HEALTH_VALUE */

/* LNet's lnet_msg_hstatus, same order and meaning */
enum o2_hstatus {
	O2_HS_OK,
	O2_HS_LOCAL_INTERRUPT,
	O2_HS_LOCAL_DROPPED,
	O2_HS_LOCAL_ABORTED,
	O2_HS_LOCAL_NO_ROUTE,
	O2_HS_LOCAL_ERROR,
	O2_HS_LOCAL_TIMEOUT,
	O2_HS_REMOTE_ERROR,
	O2_HS_REMOTE_DROPPED,
	O2_HS_REMOTE_TIMEOUT,
	O2_HS_NETWORK_TIMEOUT,
	O2_HS_COUNT
};

/* where a message was when it ended (o2_hstatus_of()) */
enum o2_tx_phase {
	O2_TXP_LOCAL,		/* waiting for a credit or on a conn, unposted */
	O2_TXP_CONNECT,		/* waiting for a connection to its peer */
	O2_TXP_POSTED,		/* on the wire */
};

/* which health a status lowers: the local NI's, the peer NID's, or both */
#define O2_BLAME_LOCAL		0x1
#define O2_BLAME_REMOTE		0x2

/**
 * struct o2_mr_cand - one candidate of a Multi-Rail choice
 * @usable: up (an NI with a device; a peer NID the peer says is up)
 * @health: 0..O2_HEALTH_MAX
 * @credits: its tx credits now (may be negative: messages wait)
 */
struct o2_mr_cand {
	bool usable;
	u32 health;
	s32 credits;
};

u32 o2_health_dec(u32 health, u32 sensitivity);
u32 o2_health_inc(u32 health, u32 sensitivity);
enum o2_hstatus o2_hstatus_of(int status, enum o2_tx_phase phase);
unsigned int o2_hstatus_blame(enum o2_hstatus hs);
bool o2_hstatus_resend(enum o2_hstatus hs);
bool o2_rpc_may_resend(int status, int resends, int retry_count);
int o2_lnd_timeout_of(int timeout, int transaction_timeout, int retry_count);
int o2_msg_timeout_of(int lnd_timeout, int retry_count);
unsigned long o2_attempt_deadline(unsigned long now, int lnd_timeout,
				  unsigned long msg_deadline);
const char *o2_hstatus_name(enum o2_hstatus hs);
int o2_mr_pick(const struct o2_mr_cand *c, int n, u32 *cursor);
int o2_mr_pick_resend(struct o2_mr_cand *c, int n, u32 *cursor, int failed);
bool o2_mr_may_answer(u64 target, u64 from, bool routed, bool same_peer);

#endif /* _O2LND_HEALTH_H */
