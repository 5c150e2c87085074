/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the connection state machine, connect deadlines and what a
 * reject of our connect means.  Pure logic, no RDMA headers, so KUnit can
 * drive every function here directly.
 */
#ifndef _O2LND_STATE_H
#define _O2LND_STATE_H

#include <linux/types.h>
#include "wire.h"

#define O2_MAX_RACES		20	/* LU-7646: then the lower NID wins */
#define O2_MAX_RETRIES		3	/* STALE / parameter renegotiation */

/*
 * Conn states.  Allowed transitions (o2_conn_transition_ok()):
 *   INIT           -> ACTIVE_CONNECT | PASSIVE_WAIT | CLOSING
 *   ACTIVE_CONNECT -> ESTABLISHED | CLOSING
 *   PASSIVE_WAIT   -> ESTABLISHED | CLOSING
 *   ESTABLISHED    -> CLOSING
 *   CLOSING        -> DISCONNECTED
 */
enum o2_conn_state {
	O2_CONN_INIT,
	O2_CONN_ACTIVE_CONNECT,
	O2_CONN_PASSIVE_WAIT,
	O2_CONN_ESTABLISHED,
	O2_CONN_CLOSING,
	O2_CONN_DISCONNECTED,
	O2_CONN_NSTATES
};

const char *o2_conn_state_name(enum o2_conn_state state);
bool o2_conn_transition_ok(enum o2_conn_state from, enum o2_conn_state to);
unsigned long o2_phase_timeout(int timeout_s);
long o2_reject_retry_ms(u8 why, const struct o2_connparams *rej_cp,
			struct o2_connparams *cp, int *races, int *retries,
			u32 rnd);

#endif /* _O2LND_STATE_H */
