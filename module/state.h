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
#define O2_MAX_RETRIES		3	/* STALE, NO_RESOURCES, EARLY */
#define O2_RACE_WINDOW_MS	1000	/* an older connect of ours is stuck */
#define O2_BACKOFF_MIN_MS	1000	/* first reconnect delay to a dead peer */
#define O2_BACKOFF_MAX_MS	8000	/* cap of the doubling */
#define O2_SURPLUS_QUIET_MS	1000	/* a race's second conn closes when quiet */

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

/*
 * Peer states, derived from the peer's conns and its reconnect schedule
 * by o2_peer_state_of(); the values are the uapi's O2LND_PEER_*.
 * Allowed transitions (o2_peer_transition_ok()): every change between
 * two different states except IDLE -> BACKOFF (a backoff only follows a
 * connect that failed, so the peer was CONNECTING or ESTABLISHED).
 */
enum o2_peer_state {
	O2_PEER_IDLE,
	O2_PEER_CONNECTING,
	O2_PEER_ESTABLISHED,
	O2_PEER_BACKOFF,
	O2_PEER_NSTATES
};

/* What a CONNREQ that races with our own connect gets (o2_race_decide()) */
enum o2_race_verdict {
	O2_RACE_ACCEPT,		/* accept it; ours (if any) goes on */
	O2_RACE_REJECT,		/* reject it with CONN_RACE */
	O2_RACE_ABORT_OURS,	/* accept it and abort our connect (stuck) */
	O2_RACE_YIELD,		/* accept it and withdraw our connect */
};

/**
 * struct o2_race_facts - what o2_race_decide() knows of our own connect
 * @connecting: an active connect of ours to that peer is in progress
 * @sent: its CONNREQ is on the wire (rdma_connect() was called)
 * @sent_ms: how long ago it was sent (when @sent)
 * @claimed: the peer rejected our last connect with CONN_RACE (since our
 *	last established conn to it): it believes it wins
 * @races: CONN_RACE rejects we already sent it in a row
 */
struct o2_race_facts {
	bool connecting;
	bool sent;
	unsigned int sent_ms;
	bool claimed;
	int races;
};

const char *o2_conn_state_name(enum o2_conn_state state);
const char *o2_peer_state_name(enum o2_peer_state state);
bool o2_peer_transition_ok(enum o2_peer_state from, enum o2_peer_state to);
enum o2_peer_state o2_peer_state_of(bool established, bool connecting,
				    bool backoff);
enum o2_race_verdict o2_race_decide(const struct o2_race_facts *f,
				    u64 our_nid, u64 peer_nid);
unsigned int o2_backoff_next(unsigned int cur_ms);
unsigned int o2_jitter(unsigned int ms, u32 rnd);
bool o2_conn_transition_ok(enum o2_conn_state from, enum o2_conn_state to);
unsigned long o2_phase_timeout(int timeout_s);
int o2_comp_vector_pick(u32 seq, int nvec);
bool o2_peer_connect_due(bool has_conns, bool reconnect, bool waiting);
bool o2_peer_wants_conn(int established, int active, int others, int want,
			bool self);
bool o2_teardown_waits_for_port(bool cm_message, bool port_down,
				bool dev_dead, bool stopping);
bool o2_surplus_close_due(unsigned long quiet_since, unsigned long now,
			  unsigned long quiet, bool busy);
long o2_reject_retry_ms(u8 why, const struct o2_connparams *rej_cp,
			struct o2_connparams *cp, int *races, int *retries,
			u32 rnd);

#endif /* _O2LND_STATE_H */
