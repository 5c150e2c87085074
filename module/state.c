// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the connection state transition table, the deadline of a connect
 * phase and the retry decision after a reject.  No RDMA headers here.
 */
#include <linux/kernel.h>
#include <linux/bits.h>
#include <linux/jiffies.h>
#include "state.h"

static const char * const o2_conn_state_names[] = {
	[O2_CONN_INIT] = "INIT",
	[O2_CONN_ACTIVE_CONNECT] = "ACTIVE_CONNECT",
	[O2_CONN_PASSIVE_WAIT] = "PASSIVE_WAIT",
	[O2_CONN_ESTABLISHED] = "ESTABLISHED",
	[O2_CONN_CLOSING] = "CLOSING",
	[O2_CONN_DISCONNECTED] = "DISCONNECTED",
};

/* o2_conn_allowed[from] is the bit mask of states @from may move to */
static const u8 o2_conn_allowed[O2_CONN_NSTATES] = {
	[O2_CONN_INIT] = BIT(O2_CONN_ACTIVE_CONNECT) |
			 BIT(O2_CONN_PASSIVE_WAIT) | BIT(O2_CONN_CLOSING),
	[O2_CONN_ACTIVE_CONNECT] = BIT(O2_CONN_ESTABLISHED) |
				   BIT(O2_CONN_CLOSING),
	[O2_CONN_PASSIVE_WAIT] = BIT(O2_CONN_ESTABLISHED) |
				 BIT(O2_CONN_CLOSING),
	[O2_CONN_ESTABLISHED] = BIT(O2_CONN_CLOSING),
	[O2_CONN_CLOSING] = BIT(O2_CONN_DISCONNECTED),
	[O2_CONN_DISCONNECTED] = 0,
};

/**
 * o2_conn_state_name() - printable state
 * @state: the state
 *
 * Return: its name, "?" for a value that is not a state.
 */
const char *o2_conn_state_name(enum o2_conn_state state)
{
	if ((unsigned int)state >= ARRAY_SIZE(o2_conn_state_names))
		return "?";
	return o2_conn_state_names[state];
}

/**
 * o2_conn_transition_ok() - may a conn move from @from to @to?
 * @from: current state
 * @to: new state
 *
 * Return: true if the transition table allows it; false for any value
 * that is not a state.
 */
bool o2_conn_transition_ok(enum o2_conn_state from, enum o2_conn_state to)
{
	if ((unsigned int)from >= O2_CONN_NSTATES ||
	    (unsigned int)to >= O2_CONN_NSTATES)
		return false;
	return o2_conn_allowed[from] & BIT(to);
}

/**
 * o2_phase_timeout() - deadline of one connect phase
 * @timeout_s: the timeout module parameter, in seconds
 *
 * The larger of 5 s and a quarter of the timeout parameter, like the
 * connect-request timeout of Lustre's LU-17480, but applied to each
 * phase, resolution included.
 *
 * Return: jiffies.
 */
unsigned long o2_phase_timeout(int timeout_s)
{
	return max(5, timeout_s / 4) * HZ;
}

/**
 * o2_reject_retry_ms() - what a reject of our connect means
 * @why: the O2_REJECT_* reason
 * @rej_cp: the rejecter's connection parameters
 * @cp: in/out: our parameters for the next connect; smaller values of
 *	the rejecter's are adopted for a parameter reject
 * @races: in/out: consecutive CONN_RACE rejects of our connects
 * @retries: in/out: consecutive rejects of other retryable kinds
 * @rnd: a random number, for the jitter of the delay
 *
 * A parameter reject (MSG_QUEUE_SIZE, RDMA_FRAGS, CONN_UNCOMPAT) is
 * retried once, at once, and only when it let us shrink a parameter.  A
 * CONN_RACE is retried after 100-499 ms up to O2_MAX_RACES + 5 times (the
 * other side stops rejecting after O2_MAX_RACES), a CONN_STALE after
 * 500-999 ms up to O2_MAX_RETRIES times.  Anything else is final.
 *
 * Return: the delay before reconnecting in ms, or -1 to give up.
 */
long o2_reject_retry_ms(u8 why, const struct o2_connparams *rej_cp,
			struct o2_connparams *cp, int *races, int *retries,
			u32 rnd)
{
	bool adopted = false;

	switch (why) {
	case O2_REJECT_MSG_QUEUE_SIZE:
	case O2_REJECT_RDMA_FRAGS:
	case O2_REJECT_CONN_UNCOMPAT:
		if ((*retries)++ >= 1)
			return -1;
		if (rej_cp->queue_depth >= 2 &&
		    rej_cp->queue_depth < cp->queue_depth) {
			cp->queue_depth = rej_cp->queue_depth;
			adopted = true;
		}
		if (rej_cp->max_frags >= 1 && rej_cp->max_frags < cp->max_frags) {
			cp->max_frags = rej_cp->max_frags;
			adopted = true;
		}
		return adopted ? 0 : -1;
	case O2_REJECT_CONN_RACE:
		if ((*races)++ >= O2_MAX_RACES + 5)
			return -1;
		return 100 + rnd % 400;
	case O2_REJECT_CONN_STALE:
		if ((*retries)++ >= O2_MAX_RETRIES)
			return -1;
		return 500 + rnd % 500;
	default:
		return -1;
	}
}
