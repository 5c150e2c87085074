/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: credit accounting, as pure logic KUnit drives without hardware.
 *
 * Two levels, as in LNet over o2iblnd:
 *
 * 1. Per connection (struct o2_credits, under conn->lock), the o2iblnd v2
 *    protocol, so that the numbers on the wire mean what o2iblnd means:
 *    - credits: messages the peer lets us send; a credited message
 *      (IMMEDIATE, PUT_REQ, GET_REQ) takes one;
 *    - outstanding: credits we owe the peer, returned on every message
 *      we send; a NOOP carries them when we owe @hiw or more and nothing
 *      else can (o2_need_noop());
 *    - reserved: a request whose reply comes back without a credit
 *      (PUT_REQ -> PUT_ACK/PUT_NAK, GET_REQ -> GET_DONE) first takes a
 *      reserved credit, so we never have more such replies coming than
 *      the spare receive buffers we keep for them; the reply gives it
 *      back (O2_RX_CREDIT_RSRVD);
 *    - credit-less messages (NOOP, PUT_ACK, PUT_NAK, PUT_DONE, GET_DONE)
 *      wait on their own queue and never wait for a credit;
 *    - nposted is capped at concurrent_sends, and sq_used counts the
 *      send-queue slots of our work requests: a budget of the local QP,
 *      separate from the peer's credits, freed only by completions;
 *    - at most O2_OOB_MSGS NOOPs are in flight.
 *    Receive buffers per connection: 2 * queue_depth + O2_OOB_MSGS, the
 *    most a peer that follows these rules can have in flight to us.
 *
 * 2. Per LNet peer and per NI (struct o2_txcr, under ni->lock): tx
 *    credits that go below zero as messages queue for them, with the
 *    minimum ever reached kept for the views.
 */
#ifndef _O2LND_CREDITS_H
#define _O2LND_CREDITS_H

#include <linux/types.h>

#define O2_OOB_MSGS	2	/* NOOPs in flight; spare rx buffers for them */
/* iWARP active side: NOOPs sent to a peer that has sent nothing yet */
#define O2_NUDGES	3
#define O2_NUDGE_GAP	(HZ / 2)

/* the queue a message waits on before it is posted (o2_txq_of()) */
enum o2_txq {
	O2_TXQ_CRED,	/* needs a credit: IMMEDIATE */
	O2_TXQ_RSRVD,	/* needs a reserved credit, then a credit */
	O2_TXQ_NOCRED,	/* needs no credit: NOOP and completions */
};

/* what a received message's buffer gives back once reposted */
enum o2_rx_credit {
	O2_RX_CREDIT_NONE,	/* nothing (NOOP; PUT_REQ: PUT_DONE will) */
	O2_RX_CREDIT_PEER,	/* a credit we owe the peer */
	O2_RX_CREDIT_RSRVD,	/* one of our reserved credits */
};

/* may the head of a queue be posted now (o2_may_post())? */
enum o2_post_verdict {
	O2_POST_OK,
	O2_POST_WAIT,		/* no credit, no slot: wait for one */
	O2_POST_DROP_NOOP,	/* a NOOP no longer needed: free it */
};

/* what became of a tx whose chain ib_post_send() refused (o2_chain_fate()) */
enum o2_chain_fate {
	O2_CHAIN_POSTED,	/* all its work requests were taken */
	O2_CHAIN_PARTIAL,	/* some were: it ends as the QP drains */
	O2_CHAIN_UNPOSTED,	/* none was: it is undone */
};

/**
 * struct o2_credits - one connection's credit accounting
 * @queue_depth: negotiated queue depth
 * @hiw: owed credits that make a NOOP worth sending (< @queue_depth)
 * @concurrent_sends: cap on @nposted
 * @sq_size: send-queue slots for our work requests
 * @credits: messages we may still send
 * @outstanding: credits we owe the peer
 * @reserved: reserved credits left
 * @nposted: Sends posted and not completed
 * @sq_used: send-queue slots in use
 * @noops_posted: NOOPs posted and not completed
 * @cred_turn: the last post was credit-less, so a credited message goes
 *	next if one can (o2_next_txq(): a stream of bulk completions must
 *	not starve requests)
 */
struct o2_credits {
	int queue_depth;
	int hiw;
	int concurrent_sends;
	int sq_size;
	int credits;
	int outstanding;
	int reserved;
	int nposted;
	int sq_used;
	int noops_posted;
	bool cred_turn;
};

/**
 * struct o2_txcr - LNet tx credits of a peer or an NI
 * @max: credits when idle
 * @avail: credits left; below 0, that many messages wait
 * @min: lowest @avail ever
 * @queued: messages waiting (-@avail when below zero)
 */
struct o2_txcr {
	int max;
	int avail;
	int min;
	int queued;
};

enum o2_txq o2_txq_of(u8 type);
u32 o2_stall_ms(int ack_timeout, int retry_count, int timeout_s);
bool o2_sends_stalled(const struct o2_credits *c, unsigned long progress,
		      unsigned long now, unsigned long bound);
bool o2_nudge_due(const struct o2_credits *c, bool heard, u32 nudges,
		  unsigned long last_send, unsigned long now);
enum o2_rx_credit o2_rx_credit_of(u8 type);
bool o2_msg_expects_reply(u8 type);
void o2_credits_init(struct o2_credits *c, int queue_depth, int hiw,
		     int concurrent_sends, int sq_size);
void o2_credits_set_depth(struct o2_credits *c, int queue_depth);
bool o2_need_noop(const struct o2_credits *c, bool nocred_queued,
		  bool cred_queued, bool keepalive_due);
enum o2_post_verdict o2_may_post(const struct o2_credits *c, enum o2_txq q,
				 bool noop, bool need_noop, int wrs);
bool o2_credits_take_reserved(struct o2_credits *c);
bool o2_next_txq(const struct o2_credits *c, bool nocred_queued,
		 bool cred_queued, enum o2_txq *q);
u8 o2_credits_post(struct o2_credits *c, enum o2_txq q, bool noop, int wrs);
void o2_credits_post_local(struct o2_credits *c, int wrs);
enum o2_chain_fate o2_chain_fate(int *taken, int wrs);
void o2_credits_complete(struct o2_credits *c, bool noop, int wrs);
int o2_credits_receive(struct o2_credits *c, int grant);
void o2_credits_repost(struct o2_credits *c, enum o2_rx_credit how);
int o2_rx_buffers(int queue_depth);

void o2_txcr_init(struct o2_txcr *cr, int max);
bool o2_txcr_take(struct o2_txcr *cr);
bool o2_txcr_return(struct o2_txcr *cr);
void o2_txcr_unqueue(struct o2_txcr *cr);

/**
 * struct o2_tunables - module parameters checked together at load
 * @peer_credits: per-connection queue depth and peer tx credits
 * @peer_credits_hiw: owed credits that trigger a NOOP; 0: peer_credits - 1
 * @concurrent_sends: Sends in flight per connection; 0: peer_credits
 * @credits: NI tx credits (also the most messages one peer may hold)
 * @ntx: txs alive per NI
 * @timeout: tx and connect timeout (s)
 * @keepalive: idle seconds before a keepalive NOOP; 0: none
 */
struct o2_tunables {
	int peer_credits;
	int peer_credits_hiw;
	int concurrent_sends;
	int credits;
	int ntx;
	int timeout;
	int keepalive;
};

int o2_tunables_check(struct o2_tunables *t, char *why, size_t len);

#endif /* _O2LND_CREDITS_H */
