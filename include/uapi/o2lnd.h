/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * o2lnd: the userspace ABI of the o2lnd kernel module.
 *
 * This is the only header shared by the kernel module and userspace.
 * Every ioctl argument is a struct that starts with struct o2lnd_ioc_hdr.
 *
 * Commands.  The module dispatches on _IOC_TYPE(cmd) == O2LND_IOC_MAGIC
 * and _IOC_NR(cmd) only; the direction and size bits of cmd are ignored
 * (the O2LND_IOC_* macros still encode the current struct, for strace).
 * hdr.size, not the command, says how large the caller's struct is.  An
 * unknown type or number is -ENOTTY.
 *
 * Sizes: the structs are size-extensible, as openat2(2)'s and clone3(2)'s
 * are.  A struct only ever grows at its end, by whole 8-byte words; the
 * size it was first published with is O2LND_IOC_<CMD>_SIZE_VER0.  The
 * module reads hdr.size bytes and
 *   - hdr.size below the VER0 size of the command, or not a multiple
 *     of 8                                         -EINVAL
 *   - hdr.size above O2LND_IOC_MAX_SIZE            -E2BIG
 *   - a smaller (older) struct: the fields it lacks read as 0
 *   - a larger (newer) struct: the bytes the module does not know must be
 *     0, else -E2BIG (they would be inputs it cannot honour)
 * and writes back min(hdr.size, its own size) bytes, with hdr.size set to
 * that many: a newer caller learns which of its fields were filled.
 *
 * Versions: hdr.abi_version is the ABI the caller was built for.  The
 * module accepts every ABI from O2LND_ABI_VERSION_MIN to its
 * O2LND_ABI_VERSION (else -EPROTO) and answers each in the layout of that
 * struct's size; the reply's hdr.abi_version is the module's.  ABI 6 made
 * the structs size-extensible; ABI 5 callers use the VER0 sizes, which are
 * the ABI 5 structs byte for byte.  A new ABI adds fields and commands,
 * never changes one.
 *
 * Then, on every call, hdr.flags == 0, hdr.reserved == 0 and every
 * reserved/pad field that is an input is 0 (else -EINVAL).
 *
 * O2LND_IOC_VERSION answers anyone: it checks only the size rules above
 * (no abi_version, flags, reserved or unknown-tail check; it has no
 * inputs), so any userspace can learn the module's ABI range before it
 * speaks.
 *
 * Order: a command needing CAP_NET_ADMIN is -EPERM before its argument is
 * read; then an unreadable header is -EFAULT, the size rules apply
 * (-EINVAL, -E2BIG), the rest of the struct is read (-EFAULT, or -E2BIG
 * for an unknown nonzero tail), then abi_version (-EPROTO), flags and
 * reserved (-EINVAL), then the command's own checks.  A refused call
 * writes nothing back.
 *
 * Counters: the counters of a struct come from one list in
 * o2lnd_counters.h, e.g. O2LND_NI_COUNTERS(X), of entries
 * X(type, name, view, key, doc): the uapi
 * type and field name, where o2ctl prints it (view: see each list), its
 * YAML key and what it counts.  The kernel's counter storage and fill, the
 * library's structs and decoders, o2ctl's YAML and the man page test are
 * generated from the lists.  A struct's lists are given by the ABI that
 * added them (..._ABI1, _ABI3, ...) because fields of other kinds sit
 * between them; a new counter is a new last line of the list at the end
 * of its struct (the _TAIL list where no counter ends the struct), is
 * __u64, and the man page documents its key.
 *
 * All fields are naturally aligned, explicit padding is named, and every
 * struct size is a multiple of 8, so the layout is the same for 32- and
 * 64-bit userspace.  A NID is the LNet 64-bit NID: network in the high
 * 32 bits ((lnd type << 16) | network number), address in the low 32 bits.
 */
#ifndef _UAPI_O2LND_H
#define _UAPI_O2LND_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "o2lnd_counters.h"

#define O2LND_ABI_VERSION	11
#define O2LND_ABI_VERSION_MIN	5	/* the oldest ABI the module accepts */
#define O2LND_IOC_MAX_SIZE	4096	/* larger hdr.size: -E2BIG */
#define O2LND_DEV_NAME		"o2lnd"		/* /dev/o2lnd */

/* LNet network types (lnd types) used in NIDs */
#define O2LND_NET_TYPE_O2IB	5
#define O2LND_NET_TYPE_LO	9

#define O2LND_NID_ANY		(~(__u64)0)
#define O2LND_LO_NID		((__u64)O2LND_NET_TYPE_LO << 48)	/* 0@lo */
#define O2LND_PID_LUSTRE	12345

#define O2LND_NI_STATUS_UP	0x15aac0de
#define O2LND_NI_STATUS_DOWN	0xdeadface

#define O2LND_NAME_LEN		32	/* net, interface and device names */
#define O2LND_VERSION_LEN	32
#define O2LND_PING_MAX_IDS	16	/* NIDs returned by one ping */

/**
 * struct o2lnd_ioc_hdr - common header of every ioctl argument
 * @abi_version: in: O2LND_ABI_VERSION of the caller; out: the module's
 * @size: in: sizeof() the caller's whole argument struct; out: the bytes
 *	the module wrote back
 * @flags: must be 0
 * @reserved: must be 0
 */
struct o2lnd_ioc_hdr {
	__u32 abi_version;
	__u32 size;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct o2lnd_ioc_version - O2LND_IOC_VERSION
 * @hdr: header; only the size rules apply
 * @abi_version: out: the module's O2LND_ABI_VERSION
 * @pad: out: 0
 * @module_version: out: NUL-terminated module version string
 * @abi_version_min: out (ABI 6): the oldest ABI the module accepts
 *	(O2LND_ABI_VERSION_MIN); absent from an ABI 5 module's reply
 * @pad2: out: 0
 */
struct o2lnd_ioc_version {
	struct o2lnd_ioc_hdr hdr;
	__u32 abi_version;
	__u32 pad;
	char module_version[O2LND_VERSION_LEN];
	__u32 abi_version_min;
	__u32 pad2;
};

/**
 * struct o2lnd_ping_id - one NID of a ping reply
 * @nid: the NID
 * @status: O2LND_NI_STATUS_UP / _DOWN, or 0 if the target did not say;
 *	for 0@lo of a target that does discovery (LNet 2.11+, o2lnd: the
 *	O2LND_PING_FEAT_DISCOVERY feature), the sequence number of its ping
 *	info instead, as LNet puts it there
 * @pad: 0
 */
struct o2lnd_ping_id {
	__u64 nid;
	__u32 status;
	__u32 pad;
};

/**
 * struct o2lnd_ioc_ping - O2LND_IOC_PING: LNet ping of @nid
 * @hdr: header
 * @nid: in: target NID (not O2LND_NID_ANY)
 * @src_nid: in: local NID to send from, or O2LND_NID_ANY
 * @timeout_ms: in: 1..O2LND_PING_TIMEOUT_MAX_MS; 0 means the default
 * @max_ids: in: 1..O2LND_PING_MAX_IDS, how many of @ids to fill
 * @pid: out: the target's LNet pid (12345 for Lustre)
 * @n_ids: out: number of NIDs the target reported (may exceed @max_ids;
 *	only min(@n_ids, @max_ids) entries of @ids are valid)
 * @rtt_ns: out: round-trip time of the ping in nanoseconds
 * @ids: out: the target's NIDs, first is 0@lo as LNet reports it
 *
 * Returns 0 on a reply; -ETIMEDOUT when no reply came in time,
 * -EHOSTUNREACH when no local NI reaches @nid, -ECONNREFUSED when the
 * target rejected the connection, -EPROTO on a malformed reply, and
 * other negative errnos for local failures.
 */
struct o2lnd_ioc_ping {
	struct o2lnd_ioc_hdr hdr;
	__u64 nid;
	__u64 src_nid;
	__u32 timeout_ms;
	__u32 max_ids;
	__u32 pid;
	__u32 n_ids;
	__u64 rtt_ns;
	struct o2lnd_ping_id ids[O2LND_PING_MAX_IDS];
};

#define O2LND_PING_TIMEOUT_DEFAULT_MS	5000
#define O2LND_PING_TIMEOUT_MAX_MS	600000

/**
 * struct o2lnd_ioc_net - O2LND_IOC_NET_SHOW: one local NI by index
 * @hdr: header
 * @index: in: 0-based NI index; -ENOENT past the last NI.  Index 0 is
 *	always the loopback NI 0@lo (net "lo", no interface, zero counters),
 *	as LNet lists it; the o2ib NIs follow.
 * @count: out: number of NIs, 0@lo included
 * @nid: out: the NI's NID
 * @status: out: O2LND_NI_STATUS_UP or _DOWN
 * @pad: out: 0
 * @net: out: network name, e.g. "o2ib0"
 * @ifname: out: the netdev the NI runs on, e.g. "eth0"
 * @devname: out: the RDMA device, e.g. "rxe0" ("" until resolved)
 * @incarnation: out: the NI's incarnation stamp (ns since the epoch)
 * @peer_credits: out: tunable: per-connection queue depth
 * @credits: out: tunable: NI tx credits
 * @timeout_s: out: tunable: tx / connect timeout
 * @max_msg_size: out: largest message on this NI
 * @npeers: out: peers known on this NI
 * @nconns: out: connections of this NI (any state)
 * @nconns_established: out: connections in ESTABLISHED state
 * @pad2: out: 0
 * @send_count: out: messages sent
 * @recv_count: out: messages received
 * @drop_count: out: messages dropped
 * @send_bytes: out: payload bytes sent
 * @recv_bytes: out: payload bytes received
 * @connects_active: out: active connects started
 * @connects_passive: out: connect requests received
 * @rejects_sent: out: connect requests we rejected
 * @rejects_received: out: rejects of our connect requests
 * @error_count: out: messages that failed (send errors, timeouts,
 *	protocol errors)
 * @tx_credits: out: NI tx credits available now (LNet's ni_txcredits);
 *	below 0, that many messages wait for one
 * @tx_credits_min: out: the lowest @tx_credits ever reached
 * @tx_queued: out: messages waiting for an NI tx credit
 * @ntx: out: tunable: txs alive on the NI at most (queued ones included)
 * @tx_live: out: txs alive now
 * @peer_credits_hiw: out: tunable: credits owed before a NOOP returns them
 * @concurrent_sends: out: tunable: Sends in flight per connection
 * @keepalive_s: out: tunable: idle seconds before a keepalive NOOP (0: off)
 * @tx_timeouts: out: messages failed because their deadline passed
 * @tx_no_credit_drops: out: messages refused because a queue bound was
 *	reached (-ENOBUFS)
 * @keepalives: out: keepalive NOOPs sent
 * @early_replies: out: replies that arrived before the Send completion of
 *	their request (the request completed only after both)
 * @max_immediate: out: largest payload sent inline (IMMEDIATE); larger
 *	ones go by RDMA (PUT_REQ/PUT_ACK/PUT_DONE, GET_REQ/GET_DONE)
 * @max_frags: out: RDMA fragments offered at connect
 * @mr_pool_size: out: fast-registration MRs of the NI's device
 * @mr_pool_used: out: of them, in use
 * @mr_max_pages: out: pages one MR maps (from the device limits)
 * @cksum: out: tunable: message checksums on
 * @mr_recovered: out: MRs destroyed and replaced because their
 *	invalidation failed (never reused while possibly valid)
 * @rdma_bytes: out: payload bytes moved by RDMA write
 * @bulk_errors: out: bulk transfers failed (refused descriptor, NAK,
 *	RDMA error, verification)
 * @health: out (ABI 7): the NI's LNet health, 0..O2LND_HEALTH_MAX
 * @pad3: out: 0
 * @resend_count: out (ABI 8): messages sent again after their path failed
 *	(a broken connection, a dropped Send, our NI gone), as LNet resends
 *	them, up to the retry_count parameter
 */
struct o2lnd_ioc_net {
	struct o2lnd_ioc_hdr hdr;
	__u32 index;
	__u32 count;
	__u64 nid;
	__u32 status;
	__u32 pad;
	char net[O2LND_NAME_LEN];
	char ifname[O2LND_NAME_LEN];
	char devname[O2LND_NAME_LEN];
	__u64 incarnation;
	__u32 peer_credits;
	__u32 credits;
	__u32 timeout_s;
	__u32 max_msg_size;
	__u32 npeers;
	__u32 nconns;
	__u32 nconns_established;
	__u32 pad2;

	O2LND_NI_COUNTERS_ABI1(O2LND_COUNTER_FIELD)

	__s32 tx_credits;
	__s32 tx_credits_min;
	__u32 tx_queued;
	__u32 ntx;
	__u32 tx_live;
	__u32 peer_credits_hiw;
	__u32 concurrent_sends;
	__u32 keepalive_s;

	O2LND_NI_COUNTERS_ABI3(O2LND_COUNTER_FIELD)

	__u32 max_immediate;
	__u32 max_frags;
	__u32 mr_pool_size;
	__u32 mr_pool_used;
	__u32 mr_max_pages;
	__u32 cksum;
	__u64 mr_recovered;

	O2LND_NI_COUNTERS_ABI4(O2LND_COUNTER_FIELD)

	__u32 health;
	__u32 pad3;

	O2LND_NI_COUNTERS_TAIL(O2LND_COUNTER_FIELD)
};

/*
 * Peer states (struct o2lnd_ioc_peer.state):
 *   IDLE         no connection and nothing to send
 *   CONNECTING   a connection is being set up
 *   ESTABLISHED  at least one connection is established
 *   BACKOFF      the last connect failed; the next one is scheduled
 */
#define O2LND_PEER_IDLE		0
#define O2LND_PEER_CONNECTING	1
#define O2LND_PEER_ESTABLISHED	2
#define O2LND_PEER_BACKOFF	3
#define O2LND_PEER_NSTATES	4

/*
 * Peer health (struct o2lnd_ioc_peer.health): DOWN after
 * O2LND_PEER_DOWN_FAILURES failures in a row (a message failed, a connect
 * failed, a keepalive went unanswered), UP again on any success (a
 * message received from it or a Send to it completed).
 */
#define O2LND_HEALTH_UP		0
#define O2LND_HEALTH_DOWN	1
#define O2LND_PEER_DOWN_FAILURES	3

/*
 * Connection states (struct o2lnd_ioc_conn.state, and the index of
 * struct o2lnd_ioc_peer.conns[]).  CLOSING: being torn down by connd;
 * ZOMBIE: torn down (QP, CQ and cm_id destroyed) but not yet freed.
 */
#define O2LND_CONN_INIT			0
#define O2LND_CONN_ACTIVE_CONNECT	1
#define O2LND_CONN_PASSIVE_WAIT		2
#define O2LND_CONN_ESTABLISHED		3
#define O2LND_CONN_CLOSING		4
#define O2LND_CONN_ZOMBIE		5
#define O2LND_CONN_NSTATES		6

/* Phases of an active connect (struct o2lnd_ioc_conn.phase) */
#define O2LND_PHASE_NONE	0
#define O2LND_PHASE_ADDR	1	/* address resolution */
#define O2LND_PHASE_ROUTE	2	/* route resolution */
#define O2LND_PHASE_CONNECT	3	/* CONNREQ sent, waiting for the REP */

/**
 * struct o2lnd_ioc_peer - O2LND_IOC_PEER_SHOW: one peer of an NI by index
 * @hdr: header
 * @ni_index: in: NI index as in O2LND_IOC_NET_SHOW (1..); 0 (0@lo) and
 *	an index past the last NI give -ENOENT
 * @index: in: 0-based peer index on that NI; -ENOENT past the last
 * @count: out: peers on the NI
 * @state: out: O2LND_PEER_*
 * @nid: out: the peer's NID
 * @incarnation: out: the peer's last known incarnation, 0 if unknown
 * @conns: out: the peer's connections by O2LND_CONN_* state (8 slots,
 *	the last two are always 0)
 * @races_received: out: CONN_RACE rejects of our connects
 * @races_sent: out: CONN_RACE rejects we sent to it
 * @connects: out: active connects started
 * @connect_failures: out: active connects that failed (timeout, error,
 *	reject)
 * @rejects_sent: out: its connect requests we rejected (any reason)
 * @rejects_received: out: rejects of our connects (any reason)
 * @last_error: out: errno (negative) of the last failure, 0 if none
 * @last_reject: out: O2LND_REJECT_* of the last reject received, 0 if none
 * @next_retry_ms: out: ms until the next scheduled connect, 0 if none
 * @backoff_ms: out: the current reconnect backoff, 0 after a success
 * @tx_queued: out: messages waiting for a connection
 * @stale_closes: out: connections closed because it rebooted
 * @phase_timeouts: out: connect phases aborted by their deadline
 * @pad: out: 0
 * @send_count: out: messages sent to it (Send completed)
 * @recv_count: out: messages received from it
 * @drop_count: out: messages from it dropped
 * @error_count: out: failed sends to it and protocol errors of its
 * @send_bytes: out: bytes sent to it
 * @recv_bytes: out: bytes received from it
 * @tx_credits: out: peer tx credits available now (LNet's lpni_txcredits);
 *	below 0, that many messages wait for one
 * @tx_credits_max: out: the peer's tx credits when idle (peer_credits)
 * @tx_credits_min: out: the lowest @tx_credits ever reached
 * @credit_queued: out: messages waiting for a peer tx credit
 * @health: out: O2LND_HEALTH_UP or _DOWN
 * @failures: out: failures in a row (0 after a success)
 * @downs: out: times it was marked down
 * @alive_ms: out: ms since it was last heard from (a message received or a
 *	Send completed), ~0 if never
 * @tx_timeouts: out: messages to it failed because their deadline passed
 * @rtr_credits: out: router buffer credits of the peer on a router
 *	(LNet's lpni_rtrcredits): buffers it may still hold; below 0, that
 *	many of its messages wait for one
 * @rtr_credits_max: out: its router buffer credits when idle
 *	(peer_buffer_credits)
 * @rtr_credits_min: out: the lowest @rtr_credits ever reached
 * @rtr_queued: out: its messages waiting for a router buffer now
 */
struct o2lnd_ioc_peer {
	struct o2lnd_ioc_hdr hdr;
	__u32 ni_index;
	__u32 index;
	__u32 count;
	__u32 state;
	__u64 nid;
	__u64 incarnation;
	__u32 conns[8];

	O2LND_PEER_EVENTS_ABI1(O2LND_COUNTER_FIELD)

	__s32 last_error;
	__u32 last_reject;
	__u32 next_retry_ms;
	__u32 backoff_ms;
	__u32 tx_queued;

	O2LND_PEER_EVENTS_ABI2(O2LND_COUNTER_FIELD)

	__u32 pad;

	O2LND_PEER_TRAFFIC_ABI2(O2LND_COUNTER_FIELD)

	__s32 tx_credits;
	__u32 tx_credits_max;
	__s32 tx_credits_min;
	__u32 credit_queued;
	__u32 health;
	__u32 failures;
	__u32 downs;
	__u32 alive_ms;

	O2LND_PEER_TRAFFIC_ABI3(O2LND_COUNTER_FIELD)

	__s32 rtr_credits;
	__u32 rtr_credits_max;
	__s32 rtr_credits_min;
	__u32 rtr_queued;

	O2LND_PEER_COUNTERS_TAIL(O2LND_COUNTER_FIELD)
};

/**
 * struct o2lnd_ioc_conn - O2LND_IOC_CONN_SHOW: one connection by index
 * @hdr: header
 * @ni_index: in: NI index as in O2LND_IOC_NET_SHOW (1..)
 * @index: in: 0-based index among every connection of the NI, in any
 *	state (zombies included); -ENOENT past the last
 * @count: out: connections of the NI
 * @state: out: O2LND_CONN_*
 * @peer_nid: out: the peer's NID
 * @peer_stamp: out: the peer's incarnation on this connection (0 until
 *	known)
 * @phase: out: O2LND_PHASE_* of an active connect
 * @active: out: 1 if we initiated it
 * @age_ms: out: ms since it was created
 * @deadline_ms: out: ms left before the current connect phase times out
 *	(0 when no phase deadline runs)
 * @queue_depth: out: negotiated queue depth
 * @max_frags: out: negotiated fragments
 * @credits: out: messages we may still send
 * @outstanding: out: credits we owe the peer
 * @nposted: out: Sends posted and not completed
 * @tx_queued: out: messages queued on it
 * @error: out: why it closes (negative errno), 0 otherwise
 * @qp_num: out: local QP number, 0 without a QP
 * @nrx: out: receive buffers
 * @pad: out: 0
 * @reserved_credits: out: credits for requests whose reply the peer sends
 *	without a credit (PUT_REQ/GET_REQ; replenished by PUT_ACK, PUT_NAK
 *	and GET_DONE)
 * @concurrent_sends: out: cap on Sends in flight (@nposted)
 * @sq_size: out: send-queue slots of the QP for our work requests
 * @sq_free: out: send-queue slots free; a slot is freed only by the
 *	completion of its work request
 * @noops_posted: out: NOOPs posted and not completed (at most 2)
 * @noops_queued: out: NOOPs and credit-less messages waiting
 * @idle_ms: out: ms since the last Send was posted
 * @keepalives: out: keepalive NOOPs sent on it
 * @comp_vector: out (ABI 10): the completion vector of its CQ (the
 *	connections of a device take its vectors in turn)
 * @comp_vectors: out (ABI 10): the completion vectors of its device (0
 *	without a QP)
 * @send_count: out (ABI 10): messages posted on it (NOOPs included)
 */
struct o2lnd_ioc_conn {
	struct o2lnd_ioc_hdr hdr;
	__u32 ni_index;
	__u32 index;
	__u32 count;
	__u32 state;
	__u64 peer_nid;
	__u64 peer_stamp;
	__u32 phase;
	__u32 active;
	__u32 age_ms;
	__u32 deadline_ms;
	__u32 queue_depth;
	__u32 max_frags;
	__s32 credits;
	__s32 outstanding;
	__u32 nposted;
	__u32 tx_queued;
	__s32 error;
	__u32 qp_num;
	__u32 nrx;
	__u32 pad;
	__s32 reserved_credits;
	__u32 concurrent_sends;
	__u32 sq_size;
	__u32 sq_free;
	__u32 noops_posted;
	__u32 noops_queued;
	__u32 idle_ms;

	O2LND_CONN_COUNTERS_ABI3(O2LND_COUNTER_FIELD)

	__u32 comp_vector;
	__u32 comp_vectors;

	O2LND_CONN_COUNTERS_ABI10(O2LND_COUNTER_FIELD)
};

/**
 * struct o2lnd_ioc_peer_close - O2LND_IOC_PEER_CLOSE (CAP_NET_ADMIN)
 * @hdr: header
 * @nid: in: the peer (an o2ib NID)
 * @local_nid: in: the local NI, or O2LND_NID_ANY for every NI
 * @closed: out: connections closed
 * @pad: in: 0
 *
 * Closes every connection to @nid (as if it had failed with
 * -ECONNABORTED) and cancels a scheduled reconnect and its backoff.
 * -ENOENT when no NI knows the peer.
 */
struct o2lnd_ioc_peer_close {
	struct o2lnd_ioc_hdr hdr;
	__u64 nid;
	__u64 local_nid;
	__u32 closed;
	__u32 pad;
};

/* o2iblnd v2 reject reasons, as sent on the wire */
#define O2LND_REJECT_CONN_RACE		1
#define O2LND_REJECT_NO_RESOURCES	2
#define O2LND_REJECT_FATAL		3
#define O2LND_REJECT_CONN_UNCOMPAT	4
#define O2LND_REJECT_CONN_STALE		5
#define O2LND_REJECT_RDMA_FRAGS		6
#define O2LND_REJECT_MSG_QUEUE_SIZE	7
#define O2LND_REJECT_INVALID_SRV_ID	8
#define O2LND_REJECT_EARLY		9
#define O2LND_REJECT_MAX		9

/*
 * rdma_cm event types, with the values of enum rdma_cm_event_type, for
 * CM fault rules.
 */
#define O2LND_CM_ADDR_RESOLVED		0
#define O2LND_CM_ADDR_ERROR		1
#define O2LND_CM_ROUTE_RESOLVED		2
#define O2LND_CM_ROUTE_ERROR		3
#define O2LND_CM_CONNECT_REQUEST	4
#define O2LND_CM_CONNECT_RESPONSE	5
#define O2LND_CM_CONNECT_ERROR		6
#define O2LND_CM_UNREACHABLE		7
#define O2LND_CM_REJECTED		8
#define O2LND_CM_ESTABLISHED		9
#define O2LND_CM_DISCONNECTED		10
#define O2LND_CM_DEVICE_REMOVAL		11
#define O2LND_CM_MULTICAST_JOIN		12
#define O2LND_CM_MULTICAST_ERROR	13
#define O2LND_CM_ADDR_CHANGE		14
#define O2LND_CM_TIMEWAIT_EXIT		15
#define O2LND_CM_NEVENTS		16

/*
 * Fault kinds (struct o2lnd_ioc_fault.kind):
 *   CM_DROP      the CM event @arg is ignored (for CONNECT_REQUEST: the
 *                request is parked unanswered until its deadline)
 *   CM_DELAY     the CM event @arg is handled @delay_ms later
 *   STALL        every event ending connect phase @arg (O2LND_PHASE_*)
 *                is ignored: the LU-7646 stuck connect
 *   REJECT       connect requests are rejected with reason @arg
 *                (O2LND_REJECT_*), advertising @queue_depth / @max_frags
 *                (0: our own values)
 *   MSG_DROP     received messages of o2iblnd type @arg (0xd0..0xd7, 0
 *                for any) are dropped (their credits still count)
 *   MSG_CORRUPT  received messages of type @arg get a byte flipped
 *                before they are checked
 *   SEND_DELAY   Send completions are handled @delay_ms late (late Send
 *                completions)
 *   INV_FAIL     the local invalidation of a fast-registration MR is
 *                taken as failed (as if flushed): the MR must be
 *                destroyed and replaced, never reused (@arg 0)
 *   POST_FAIL    a chain of more than @arg work requests posted on a
 *                connection (one ib_post_send(): a message with its
 *                REG_MR and RDMA WRITEs, and the messages queued behind
 *                it) is refused at its work request @arg (from 0,
 *                0..255), as by a full send queue (-ENOMEM): those
 *                before it reach the device, the rest do not (a module
 *                that predates the kind refuses it: -EINVAL)
 */
#define O2LND_FAULT_CM_DROP	1
#define O2LND_FAULT_CM_DELAY	2
#define O2LND_FAULT_STALL	3
#define O2LND_FAULT_REJECT	4
#define O2LND_FAULT_MSG_DROP	5
#define O2LND_FAULT_MSG_CORRUPT	6
#define O2LND_FAULT_SEND_DELAY	7
#define O2LND_FAULT_INV_FAIL	8
#define O2LND_FAULT_POST_FAIL	9
#define O2LND_FAULT_MAX		9
#define O2LND_FAULT_POST_FAIL_MAX_ARG	255

#define O2LND_FAULT_MAX_RULES	32
#define O2LND_FAULT_MAX_DELAY_MS	10000
#define O2LND_FAULT_PROB_ALWAYS	1000000	/* probability is per million */

/**
 * struct o2lnd_ioc_fault - O2LND_IOC_FAULT_ADD / _DEL / _LIST
 * @hdr: header
 * @id: ADD out: the new rule's id (>0); DEL in: a rule id, or 0 for all
 *	rules; LIST out
 * @index: LIST in: 0-based rule index (-ENOENT past the last); else 0
 * @count_rules: LIST out: number of rules; else 0
 * @kind: O2LND_FAULT_* (ADD in; LIST out)
 * @peer_nid: the remote NID it applies to, O2LND_NID_ANY for all
 * @local_nid: the local NID it applies to, O2LND_NID_ANY for all
 * @arg: event, phase, reason or message type (see the kinds)
 * @count: fire this many times (a spent rule stays listed until deleted);
 *	0: no limit
 * @probability: chance of firing per match, per million
 *	(1..O2LND_FAULT_PROB_ALWAYS)
 * @delay_ms: CM_DELAY, SEND_DELAY: 1..O2LND_FAULT_MAX_DELAY_MS; else 0
 * @queue_depth: REJECT: queue depth advertised in the reject, 0: ours
 * @max_frags: REJECT: fragments advertised in the reject, 0: ours
 * @fired: LIST out: times the rule fired
 * @pad: 0
 *
 * ADD, DEL and LIST need CAP_NET_ADMIN (-EPERM).  ADD: -EINVAL for an
 * unknown kind, an @arg out of range for the kind (CM_DROP and CM_DELAY
 * refuse DEVICE_REMOVAL, STALL refuses PHASE_NONE, SEND_DELAY needs 0),
 * a probability out of range, a delay for a kind without one or missing
 * where needed, @queue_depth not 0 or 2..255 or @max_frags above 257 (or
 * either of them for a kind other than REJECT), a NID that is neither
 * o2ib nor O2LND_NID_ANY, or nonzero @id, @index, @count_rules, @fired,
 * @pad; -ENOSPC past O2LND_FAULT_MAX_RULES rules; a rule whose reply
 * cannot be copied out is not added (-EFAULT).  DEL and LIST read only
 * @id / @index and @pad (which must be 0); DEL: -ENOENT for an unknown
 * id.  Rules are listed in the order they were added; ids are never
 * reused while the module is loaded.
 */
struct o2lnd_ioc_fault {
	struct o2lnd_ioc_hdr hdr;
	__u32 id;
	__u32 index;
	__u32 count_rules;
	__u32 kind;
	__u64 peer_nid;
	__u64 local_nid;
	__u32 arg;
	__u32 count;
	__u32 probability;
	__u32 delay_ms;
	__u32 queue_depth;
	__u32 max_frags;
	__u32 fired;
	__u32 pad;
};

/* O2LND_IOC_BRW operations */
#define O2LND_BRW_WRITE		1	/* PUT @size bytes to the peer's sink */
#define O2LND_BRW_READ		2	/* GET @size bytes from the peer */
#define O2LND_BRW_MAX_SIZE	(1U << 20)
#define O2LND_BRW_F_CHECK	0x1	/* fill and verify a pattern */
/* ABI 11: a write asks for the LNet ACK even unchecked */
#define O2LND_BRW_F_ACK		0x2

/**
 * struct o2lnd_ioc_brw - O2LND_IOC_BRW: one bulk RPC of the selftest
 *	service, in the spirit of lnet_selftest's brw
 * @hdr: header
 * @nid: in: the peer (an o2ib NID; its o2lnd serves the selftest portal)
 * @src_nid: in: local NID to send from, or O2LND_NID_ANY
 * @op: in: O2LND_BRW_WRITE or O2LND_BRW_READ
 * @size: in: payload bytes, 0..O2LND_BRW_MAX_SIZE
 * @timeout_ms: in: 1..O2LND_PING_TIMEOUT_MAX_MS; 0 means the default
 * @flags: in: O2LND_BRW_F_CHECK, O2LND_BRW_F_ACK (ABI 11), or 0
 * @seed: in: pattern seed (with O2LND_BRW_F_CHECK)
 * @rtt_ns: out: time from send to completion
 * @rdma: out: 1 if the payload went by RDMA, 0 if inline
 * @pad: in: 0
 * @messages: out (ABI 11): the LNet messages of its last attempt: 2 (GET
 *	and REPLY, or PUT and ACK), or 1 (a PUT that asked for no ACK)
 * @pad2: in: 0
 *
 * A write sends an LNet PUT.  A checked write (O2LND_BRW_F_CHECK), a
 * write through a router and, from ABI 11, one with O2LND_BRW_F_ACK ask
 * for an LNet ACK, which carries the peer's verdict; any other write
 * asks for none (LNet's LNET_NOACK_REQ) and is over once the peer's
 * transport has acknowledged its last message.  A read sends an LNet GET
 * whose REPLY the peer fills.  Payloads
 * above the NI's max_immediate go by RDMA write from the side holding the
 * data, into memory registered with fast registration (FRWR).  Returns
 * 0; -EBADMSG when the pattern did not verify (at either end); -ETIMEDOUT;
 * -EHOSTUNREACH; -EPROTO (malformed reply); -ENOMEM; -EINVAL for bad
 * arguments.
 */
struct o2lnd_ioc_brw {
	struct o2lnd_ioc_hdr hdr;
	__u64 nid;
	__u64 src_nid;
	__u32 op;
	__u32 size;
	__u32 timeout_ms;
	__u32 flags;
	__u64 seed;
	__u64 rtt_ns;
	__u32 rdma;
	__u32 pad;
	__u32 messages;
	__u32 pad2;
};

/**
 * struct o2lnd_ioc_route - O2LND_IOC_ROUTE_SHOW: one route by index
 * @hdr: header
 * @index: in: 0-based route index; -ENOENT past the last
 * @count: out: routes configured (module parameter routes=)
 * @net: out: the remote network (the high 32 bits of its NIDs)
 * @hops: out: hop count (1 unless given)
 * @gateway: out: the gateway's NID (on a local network)
 * @priority: out: priority (0 highest; 0 unless given)
 * @gw_health: out: O2LND_HEALTH_UP or _DOWN: the route's state: DOWN
 *	while the gateway peer is down, its last check got no answer, or its
 *	ping info said it does not forward or has no NI up on the route's
 *	network (UP while it was never tried)
 * @sent: out: messages sent through this route
 * @dropped: out: messages for this route dropped because its gateway was
 *	down
 */
struct o2lnd_ioc_route {
	struct o2lnd_ioc_hdr hdr;
	__u32 index;
	__u32 count;
	__u32 net;
	__u32 hops;
	__u64 gateway;
	__u32 priority;
	__u32 gw_health;

	O2LND_ROUTE_COUNTERS(O2LND_COUNTER_FIELD)
};

/* router buffer pools, as LNet's: payload 0, up to a page, up to 1 MiB */
#define O2LND_RTR_TINY		0
#define O2LND_RTR_SMALL		1
#define O2LND_RTR_LARGE		2
#define O2LND_RTR_NPOOLS	3

/**
 * struct o2lnd_rtr_pool - one router buffer pool
 * @nbuffers: buffers in the pool (its credits when idle)
 * @buffer_size: payload bytes one buffer holds
 * @credits: available now; below 0, that many messages wait for one
 * @min_credits: the lowest @credits ever reached
 * @taken: buffers handed out since load
 */
struct o2lnd_rtr_pool {
	__u32 nbuffers;
	__u32 buffer_size;
	__s32 credits;
	__s32 min_credits;
	__u64 taken;
};

/**
 * struct o2lnd_ioc_routing - O2LND_IOC_ROUTING_SHOW: the router's state
 * @hdr: header
 * @forwarding: out: 1 if this node forwards between its networks
 *	(forwarding=enabled), else 0
 * @peer_buffer_credits: out: router buffers one peer may hold
 * @router_timeout_s: out: the longest a message waits for a router
 *	buffer before it is dropped
 * @waiting: out: messages waiting now (for a peer or a pool credit)
 * @waiting_max: out: the most messages ever waiting at once
 * @held_rx: out: receive buffers held now by waiting messages (each is
 *	released at once when its connection closes)
 * @pools: out: O2LND_RTR_TINY, _SMALL, _LARGE
 * @forwarded: out: messages forwarded
 * @forwarded_bytes: out: payload bytes forwarded
 * @dropped_no_route: out: messages for a network we neither are on nor
 *	route to, or received while not forwarding
 * @dropped_down: out: messages dropped because the next hop was down
 * @dropped_timeout: out: messages that waited past @router_timeout_s
 * @dropped_closed: out: waiting messages released because the connection
 *	they came on closed
 * @dropped_error: out: messages that failed on the next hop (no tx, send
 *	error, deadline)
 */
struct o2lnd_ioc_routing {
	struct o2lnd_ioc_hdr hdr;
	__u32 forwarding;
	__u32 peer_buffer_credits;
	__u32 router_timeout_s;
	__u32 waiting;
	__u32 waiting_max;
	__u32 held_rx;
	struct o2lnd_rtr_pool pools[O2LND_RTR_NPOOLS];

	O2LND_ROUTING_COUNTERS(O2LND_COUNTER_FIELD)
};

/*
 * The sizes each struct was first published with (ABI 5): the smallest
 * hdr.size a command accepts.  A struct that grows keeps its VER0 and
 * gets a _VER1 beside it.
 */
/* ABI 7: LNet peers (Multi-Rail, discovery) and LNet Health */

#define O2LND_PEER_MAX_NIDS	16	/* NIDs returned for one LNet peer */
#define O2LND_HEALTH_MAX	1000	/* LNet's largest health value */

/**
 * struct o2lnd_peer_nid - one NID of an LNet peer
 * @nid: the NID
 * @status: O2LND_NI_STATUS_UP / _DOWN as the peer reported it
 * @health: o2lnd's health of this NID, 0..O2LND_HEALTH_MAX
 * @selected: messages Multi-Rail selection sent to this NID
 * @failures: failed messages blamed on this NID (LNet Health)
 */
struct o2lnd_peer_nid {
	__u64 nid;
	__u32 status;
	__u32 health;
	__u64 selected;
	__u64 failures;
};

/* struct o2lnd_ioc_lpeer.features: LNet's ping feature bits */
#define O2LND_PING_FEAT_BASE		0x01	/* a ping */
#define O2LND_PING_FEAT_NI_STATUS	0x02	/* NIs listed with status */
#define O2LND_PING_FEAT_RTE_DISABLED	0x04	/* a router not routing */
#define O2LND_PING_FEAT_MULTI_RAIL	0x08	/* Multi-Rail aware */
#define O2LND_PING_FEAT_DISCOVERY	0x10	/* discovery and pushes */

/* struct o2lnd_ioc_lpeer.flags */
#define O2LND_LPEER_F_MULTI_RAIL	0x1	/* its ping info says so */
#define O2LND_LPEER_F_PUSHED		0x2	/* it ACKed our push */
#define O2LND_LPEER_F_PUSHED_TO_US	0x4	/* it pushed its NIDs to us */

/**
 * struct o2lnd_ioc_lpeer - O2LND_IOC_LPEER_SHOW, O2LND_IOC_DISCOVER: an
 *	LNet peer, one node with all its NIDs, as discovery learned it
 * @hdr: header
 * @index: in (LPEER_SHOW, @nid O2LND_NID_ANY): 0-based; -ENOENT past
 *	the last peer
 * @count: out: LNet peers known
 * @nid: in: LPEER_SHOW: O2LND_NID_ANY (by @index) or a NID of the peer
 *	(-ENOENT when no peer lists it); DISCOVER: the NID to discover (an
 *	o2ib NID): o2lnd pings it, learns its NIDs from the reply and, when
 *	it does discovery, pushes our NIDs to it and waits for the ACK
 * @timeout_ms: in (DISCOVER): for the ping and for the push each;
 *	1..O2LND_PING_TIMEOUT_MAX_MS, 0 the default; LPEER_SHOW: 0
 * @flags: out: O2LND_LPEER_F_*
 * @primary_nid: out: its primary NID (the first it lists)
 * @features: out: the LNet ping feature bits it advertised
 * @seqno: out: the sequence number of its ping info
 * @n_nids: out: NIDs it listed (only the first O2LND_PEER_MAX_NIDS are
 *	in @nids)
 * @pad: 0
 * @nids: out: its NIDs, primary first
 */
struct o2lnd_ioc_lpeer {
	struct o2lnd_ioc_hdr hdr;
	__u32 index;
	__u32 count;
	__u64 nid;
	__u32 timeout_ms;
	__u32 flags;
	__u64 primary_nid;
	__u32 features;
	__u32 seqno;
	__u32 n_nids;
	__u32 pad;
	struct o2lnd_peer_nid nids[O2LND_PEER_MAX_NIDS];
};

/**
 * struct o2lnd_ioc_net_cfg - O2LND_IOC_NET_ADD, O2LND_IOC_NET_DEL (ABI 9;
 *	CAP_NET_ADMIN): a network or an interface added or deleted at run
 *	time, as `lnetctl net add|del`
 * @hdr: header
 * @net: in: the network, "o2ibN" (N 0..65535), NUL-terminated
 * @ifname: in: the interface, NUL-terminated; NET_DEL: empty for every NI
 *	of @net
 * @nid: out: NET_ADD: the NID of the NI added; NET_DEL: the NID of the
 *	last NI deleted
 * @count: out: NIs added (1) or deleted
 * @pad: in: 0
 *
 * NET_ADD: -EINVAL for a malformed @net or @ifname or a nonzero @pad;
 * -ENODEV or -EADDRNOTAVAIL for an interface that does not exist, has no
 * IPv4 address or no RDMA device serving it; -EEXIST
 * when the NI exists; -ENOSPC past the module's NI limit.  The NI is up
 * when the call returns, and the peers that discovered us learn it (a
 * push).
 * NET_DEL: -EINVAL as for NET_ADD; -ENOENT when no NI matches.  The NIs
 * go down at once (no new message, connection or listener), their
 * connections are closed and freed, their queued messages fail with
 * -ESHUTDOWN and their peers are forgotten before the call returns.
 */
struct o2lnd_ioc_net_cfg {
	struct o2lnd_ioc_hdr hdr;
	char net[O2LND_NAME_LEN];
	char ifname[O2LND_NAME_LEN];
	__u64 nid;
	__u32 count;
	__u32 pad;
};

#define O2LND_IOC_VERSION_SIZE_VER0	56
#define O2LND_IOC_VERSION_SIZE_VER1	64	/* ABI 6: abi_version_min */
#define O2LND_IOC_PING_SIZE_VER0	312
#define O2LND_IOC_NET_SIZE_VER0		368
#define O2LND_IOC_PEER_SIZE_VER0	240
#define O2LND_IOC_CONN_SIZE_VER0	136
#define O2LND_IOC_PEER_CLOSE_SIZE_VER0	40
#define O2LND_IOC_FAULT_SIZE_VER0	80
#define O2LND_IOC_BRW_SIZE_VER0		72
#define O2LND_IOC_ROUTE_SIZE_VER0	64
#define O2LND_IOC_ROUTING_SIZE_VER0	168
#define O2LND_IOC_LPEER_SIZE_VER0	576	/* ABI 7 */
#define O2LND_IOC_NET_SIZE_VER1		376	/* ABI 7: health */
#define O2LND_IOC_NET_SIZE_VER2		384	/* ABI 8: resend_count */
#define O2LND_IOC_NET_CFG_SIZE_VER0	96	/* ABI 9 */
#define O2LND_IOC_CONN_SIZE_VER1	152	/* ABI 10: comp_vector(s), send_count */
#define O2LND_IOC_BRW_SIZE_VER1		80	/* ABI 11: messages */

#define O2LND_IOC_MAGIC		0xb2

#define O2LND_IOC_VERSION	_IOWR(O2LND_IOC_MAGIC, 1, struct o2lnd_ioc_version)
#define O2LND_IOC_PING		_IOWR(O2LND_IOC_MAGIC, 2, struct o2lnd_ioc_ping)
#define O2LND_IOC_NET_SHOW	_IOWR(O2LND_IOC_MAGIC, 3, struct o2lnd_ioc_net)
#define O2LND_IOC_PEER_SHOW	_IOWR(O2LND_IOC_MAGIC, 4, struct o2lnd_ioc_peer)
#define O2LND_IOC_CONN_SHOW	_IOWR(O2LND_IOC_MAGIC, 5, struct o2lnd_ioc_conn)
#define O2LND_IOC_PEER_CLOSE	_IOWR(O2LND_IOC_MAGIC, 6, \
				      struct o2lnd_ioc_peer_close)
#define O2LND_IOC_FAULT_ADD	_IOWR(O2LND_IOC_MAGIC, 7, struct o2lnd_ioc_fault)
#define O2LND_IOC_FAULT_DEL	_IOWR(O2LND_IOC_MAGIC, 8, struct o2lnd_ioc_fault)
#define O2LND_IOC_FAULT_LIST	_IOWR(O2LND_IOC_MAGIC, 9, struct o2lnd_ioc_fault)
#define O2LND_IOC_BRW		_IOWR(O2LND_IOC_MAGIC, 10, struct o2lnd_ioc_brw)
#define O2LND_IOC_ROUTE_SHOW	_IOWR(O2LND_IOC_MAGIC, 11, struct o2lnd_ioc_route)
#define O2LND_IOC_ROUTING_SHOW	_IOWR(O2LND_IOC_MAGIC, 12, \
				      struct o2lnd_ioc_routing)
#define O2LND_IOC_LPEER_SHOW	_IOWR(O2LND_IOC_MAGIC, 13, struct o2lnd_ioc_lpeer)
#define O2LND_IOC_DISCOVER	_IOWR(O2LND_IOC_MAGIC, 14, struct o2lnd_ioc_lpeer)
#define O2LND_IOC_NET_ADD	_IOWR(O2LND_IOC_MAGIC, 15, \
				      struct o2lnd_ioc_net_cfg)
#define O2LND_IOC_NET_DEL	_IOWR(O2LND_IOC_MAGIC, 16, \
				      struct o2lnd_ioc_net_cfg)

#endif /* _UAPI_O2LND_H */
