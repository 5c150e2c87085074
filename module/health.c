// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet Health arithmetic and the Multi-Rail choice (see health.h).
 * No locks, no allocation: the callers hold what they read.
 */
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include "health.h"

/**
 * o2_health_dec() - a failure blamed on a health value
 * @health: the value, 0..O2_HEALTH_MAX
 * @sensitivity: health_sensitivity; 0 leaves health alone
 *
 * Return: @health lowered by @sensitivity, not below 0.
 */
u32 o2_health_dec(u32 health, u32 sensitivity)
{
	return health > sensitivity ? health - sensitivity : 0;
}

/**
 * o2_health_inc() - a success on a health value
 * @health: the value, 0..O2_HEALTH_MAX
 * @sensitivity: health_sensitivity; 0 leaves health alone
 *
 * Return: @health raised by @sensitivity, not above O2_HEALTH_MAX.
 */
u32 o2_health_inc(u32 health, u32 sensitivity)
{
	if (health >= O2_HEALTH_MAX || sensitivity >= O2_HEALTH_MAX - health)
		return O2_HEALTH_MAX;
	return health + sensitivity;
}

/**
 * o2_hstatus_of() - the LNet health status of a message's end
 * @status: 0 or the errno the message ended with
 * @phase: where it was: waiting locally (for a credit, or on a conn,
 *	unposted), waiting for a connection to its peer, or on the wire
 *
 * The errnos are o2lnd's: -ENETDOWN/-ENODEV/-ESHUTDOWN our NI or device
 * went away, -ECONNABORTED its connection closed under it, -EHOSTUNREACH
 * no path, -ETIMEDOUT its deadline passed, -ECONNREFUSED/-ECONNRESET the
 * peer refused or reset the connection, -EIO a failed Send completion
 * (the peer's HCA did not take it: as o2iblnd, the peer dropped it),
 * -EPROTO/-EBADMSG/-EREMOTEIO the peer answered with an error.  Anything
 * else is a local error.  A message whose connection could not be made
 * is classed as o2iblnd classes it (kiblnd_peer_connect_failed()): a
 * timeout or no route is the network's, a refusal the peer's.
 *
 * Return: the O2_HS_* class.
 */
enum o2_hstatus o2_hstatus_of(int status, enum o2_tx_phase phase)
{
	if (phase == O2_TXP_CONNECT) {
		switch (status) {
		case -ETIMEDOUT:
		case -EHOSTUNREACH:
		case -ENETUNREACH:
			return O2_HS_NETWORK_TIMEOUT;
		case -ECONNREFUSED:
		case -ECONNRESET:
			return O2_HS_REMOTE_DROPPED;
		default:
			break;
		}
	}
	switch (status) {
	case 0:
		return O2_HS_OK;
	case -EINTR:
		return O2_HS_LOCAL_INTERRUPT;
	case -ENETDOWN:
	case -ENODEV:
	case -ESHUTDOWN:
		return O2_HS_LOCAL_DROPPED;
	case -ECONNABORTED:
		return O2_HS_LOCAL_ABORTED;
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return O2_HS_LOCAL_NO_ROUTE;
	case -ETIMEDOUT:
		return phase == O2_TXP_POSTED ? O2_HS_NETWORK_TIMEOUT :
			O2_HS_LOCAL_TIMEOUT;
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -EIO:
		return O2_HS_REMOTE_DROPPED;
	case -EPROTO:
	case -EBADMSG:
	case -EREMOTEIO:
		return O2_HS_REMOTE_ERROR;
	default:
		return O2_HS_LOCAL_ERROR;
	}
}

/**
 * o2_hstatus_blame() - whose health a status lowers
 * @hs: the class
 *
 * As LNet's lnet_health_check(): local classes lower the local NI's,
 * remote ones the peer NID's, a network timeout both.
 *
 * Return: O2_BLAME_LOCAL and/or O2_BLAME_REMOTE, 0 for O2_HS_OK.
 */
unsigned int o2_hstatus_blame(enum o2_hstatus hs)
{
	switch (hs) {
	case O2_HS_OK:
	case O2_HS_COUNT:
		return 0;
	case O2_HS_REMOTE_ERROR:
	case O2_HS_REMOTE_DROPPED:
	case O2_HS_REMOTE_TIMEOUT:
		return O2_BLAME_REMOTE;
	case O2_HS_NETWORK_TIMEOUT:
		return O2_BLAME_LOCAL | O2_BLAME_REMOTE;
	default:
		return O2_BLAME_LOCAL;
	}
}

/**
 * o2_hstatus_resend() - whether a message that ended so may be resent
 * @hs: the class
 *
 * As LNet: the local failures but a local error, and a remote drop; a
 * message the peer answered with an error, or that may have arrived
 * (a timeout on the wire), is not sent twice.
 *
 * Return: true if another path may carry it.
 */
bool o2_hstatus_resend(enum o2_hstatus hs)
{
	switch (hs) {
	case O2_HS_LOCAL_INTERRUPT:
	case O2_HS_LOCAL_DROPPED:
	case O2_HS_LOCAL_ABORTED:
	case O2_HS_LOCAL_NO_ROUTE:
	case O2_HS_LOCAL_TIMEOUT:
	case O2_HS_REMOTE_DROPPED:
		return true;
	default:
		return false;
	}
}

/**
 * o2_rpc_may_resend() - may an RPC whose attempt ended so be sent again?
 * @status: how the attempt ended (0 or an errno, o2_hstatus_of()'s)
 * @resends: times it was sent again already
 * @retry_count: the retry_count parameter
 *
 * As LNet resends a message (o2_hstatus_resend()), within retry_count;
 * never when the caller stops it (a signal, the module unloading) or its
 * time is up: a timeout on the wire may have arrived, and the RPC's own
 * deadline is the transaction's.
 *
 * Return: true if another attempt may be made.
 */
bool o2_rpc_may_resend(int status, int resends, int retry_count)
{
	if (!status || resends >= retry_count || status == -EINTR ||
	    status == -ESHUTDOWN || status == -ETIMEDOUT)
		return false;
	return o2_hstatus_resend(o2_hstatus_of(status, O2_TXP_POSTED));
}

/**
 * o2_lnd_timeout_of() - the LND's timeout, as o2iblnd's kiblnd_timeout()
 * @timeout: the timeout parameter (seconds); 0 derives it from LNet's
 * @transaction_timeout: lnet_transaction_timeout (seconds)
 * @retry_count: retry_count
 *
 * The timeout parameter when it is set, else LNet's lnet_lnd_timeout:
 * (@transaction_timeout - 1) / (@retry_count + 1), at least 1 (49 s at
 * LNet's defaults of 150 s and 2).
 *
 * Return: seconds.
 */
int o2_lnd_timeout_of(int timeout, int transaction_timeout, int retry_count)
{
	if (timeout)
		return timeout;
	return max((transaction_timeout - 1) / (max(retry_count, 0) + 1), 1);
}

/**
 * o2_msg_timeout_of() - how long a message may take, its resends included
 * @lnd_timeout: the LND's timeout (o2_lnd_timeout_of()), seconds
 * @retry_count: retry_count
 *
 * As LNet's get_msg_deadline() for an LND that has a timeout: every
 * attempt may take the LND's timeout, and one second more.  So 151 s at
 * o2iblnd's default timeout of 50 s, and lnet_transaction_timeout or a
 * little less when the timeout is derived from it.
 *
 * Return: seconds.
 */
int o2_msg_timeout_of(int lnd_timeout, int retry_count)
{
	return lnd_timeout * (max(retry_count, 0) + 1) + 1;
}

/**
 * o2_attempt_deadline() - the deadline of one attempt of a message
 * @now: jiffies, when the attempt starts (a send or a resend)
 * @lnd_timeout: the LND's timeout, seconds
 * @msg_deadline: jiffies: the message's own deadline
 *
 * Return: @now plus @lnd_timeout, but never past @msg_deadline.
 */
unsigned long o2_attempt_deadline(unsigned long now, int lnd_timeout,
				  unsigned long msg_deadline)
{
	unsigned long d = now + (unsigned long)max(lnd_timeout, 1) * HZ;

	return time_before(msg_deadline, d) ? msg_deadline : d;
}

/**
 * o2_hstatus_name() - LNet's name of a class, for the logs and views
 * @hs: the class
 *
 * Return: a static string.
 */
const char *o2_hstatus_name(enum o2_hstatus hs)
{
	static const char *const names[O2_HS_COUNT] = {
		[O2_HS_OK] = "ok",
		[O2_HS_LOCAL_INTERRUPT] = "local_interrupt",
		[O2_HS_LOCAL_DROPPED] = "local_dropped",
		[O2_HS_LOCAL_ABORTED] = "local_aborted",
		[O2_HS_LOCAL_NO_ROUTE] = "local_no_route",
		[O2_HS_LOCAL_ERROR] = "local_error",
		[O2_HS_LOCAL_TIMEOUT] = "local_timeout",
		[O2_HS_REMOTE_ERROR] = "remote_error",
		[O2_HS_REMOTE_DROPPED] = "remote_dropped",
		[O2_HS_REMOTE_TIMEOUT] = "remote_timeout",
		[O2_HS_NETWORK_TIMEOUT] = "network_timeout",
	};

	return (unsigned int)hs < O2_HS_COUNT ? names[hs] : "?";
}

/**
 * o2_mr_may_answer() - may an answer from @from be taken for a request?
 * @target: the NID the request was sent to
 * @from: the answer's src_nid
 * @routed: the request went through a router
 * @same_peer: one known peer lists both @target and @from
 *
 * From @target itself, or from another NID of the same node (the answer's
 * path failed and was chosen anew, as LNet does).  A routed request may
 * also be answered from any other NID on @target's network: the last
 * router delivers it to whichever NID of a Multi-Rail destination its
 * selection picks and rewrites the header's dest_nid to it, as LNet's
 * routers do, and the destination answers from there.
 *
 * Return: true if the answer may be taken.
 */
bool o2_mr_may_answer(u64 target, u64 from, bool routed, bool same_peer)
{
	if (from == target || same_peer)
		return true;
	return routed && (from >> 32) == (target >> 32);
}

/**
 * o2_mr_pick() - the best of @n candidates, as LNet orders them
 * @c: the candidates
 * @n: how many
 * @cursor: in/out: the round-robin position; the scan starts there and
 *	the next one starts after the pick
 *
 * Among the usable ones: the highest health, then the most credits; of
 * equals, the first from @cursor on, so equal candidates take turns.
 *
 * Return: the index picked, or -1 when none is usable.
 */
int o2_mr_pick(const struct o2_mr_cand *c, int n, u32 *cursor)
{
	int best = -1, k;

	if (n <= 0)
		return -1;
	for (k = 0; k < n; k++) {
		int i = (int)((*cursor + k) % (u32)n);

		if (!c[i].usable)
			continue;
		if (best < 0 || c[i].health > c[best].health ||
		    (c[i].health == c[best].health &&
		     c[i].credits > c[best].credits))
			best = i;
	}
	if (best >= 0)
		*cursor = (u32)best + 1;
	return best;
}

/**
 * o2_mr_pick_resend() - the path of a resend: another where there is one
 * @c: the candidates (modified and restored)
 * @n: how many
 * @cursor: as o2_mr_pick()
 * @failed: the index of the path the failed attempt took, or -1
 *
 * As retry_count promises, a message resent goes on another path when
 * one is usable: the failed path's health may not be lowered yet (that
 * happens when its tx is released, which can come after the resend), so
 * health alone could pick it again.  With no other path it is taken.
 *
 * Return: the index picked, or -1 when none is usable.
 */
int o2_mr_pick_resend(struct o2_mr_cand *c, int n, u32 *cursor, int failed)
{
	int k;

	if (failed < 0 || failed >= n || !c[failed].usable)
		return o2_mr_pick(c, n, cursor);
	c[failed].usable = false;
	k = o2_mr_pick(c, n, cursor);
	c[failed].usable = true;
	return k >= 0 ? k : o2_mr_pick(c, n, cursor);
}
