/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: on-the-wire formats.  Pure logic, no RDMA headers, so KUnit can
 * drive every function here directly.
 *
 * The LND messages follow o2iblnd's version 2 layout: every field is in
 * the SENDER's byte order and the receiver recognises a byte-swapped peer
 * by the magic.  The LNet header and the ping info are little-endian.
 */
#ifndef _O2LND_WIRE_H
#define _O2LND_WIRE_H

#include <linux/types.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>

#define O2_MSG_MAGIC		0x0be91b91
#define O2_MSG_VERSION		0x12	/* o2iblnd message version 2 */

#define O2_MSG_CONNREQ		0xc0
#define O2_MSG_CONNACK		0xc1
#define O2_MSG_NOOP		0xd0
#define O2_MSG_IMMEDIATE	0xd1
#define O2_MSG_PUT_REQ		0xd2
#define O2_MSG_PUT_NAK		0xd3
#define O2_MSG_PUT_ACK		0xd4
#define O2_MSG_PUT_DONE		0xd5
#define O2_MSG_GET_REQ		0xd6
#define O2_MSG_GET_DONE		0xd7

/* reject reasons, carried in struct o2_rej */
#define O2_REJECT_CONN_RACE		1
#define O2_REJECT_NO_RESOURCES		2
#define O2_REJECT_FATAL			3
#define O2_REJECT_CONN_UNCOMPAT		4
#define O2_REJECT_CONN_STALE		5
#define O2_REJECT_RDMA_FRAGS		6
#define O2_REJECT_MSG_QUEUE_SIZE	7
#define O2_REJECT_INVALID_SRV_ID	8
#define O2_REJECT_EARLY			9

#define O2_MAX_MSG_SIZE		4096
/*
 * RDMA fragments offered and accepted at connect: o2iblnd's
 * IBLND_MAX_RDMA_FRAGS, LNET_MAX_IOV + 1 (the 256 pages of 1 MiB plus
 * one for a first page that does not start on a page boundary).  A
 * Lustre node offers exactly this; accepting one fewer cost every
 * connection from it an RDMA_FRAGS reject round trip.
 */
#define O2_MAX_FRAGS		257

/**
 * struct o2_msg_hdr - o2iblnd v2 message header (48 bytes)
 * @magic: O2_MSG_MAGIC in the sender's byte order
 * @version: O2_MSG_VERSION
 * @type: O2_MSG_*
 * @credits: credits returned to the receiver
 * @nob: bytes in the whole message
 * @cksum: checksum of the whole message, 0 for none
 * @srcnid: sender's NID
 * @srcstamp: sender's incarnation
 * @dstnid: receiver's NID
 * @dststamp: receiver's incarnation (0 in a CONNREQ)
 */
struct o2_msg_hdr {
	u32 magic;
	u16 version;
	u8 type;
	u8 credits;
	u32 nob;
	u32 cksum;
	u64 srcnid;
	u64 srcstamp;
	u64 dstnid;
	u64 dststamp;
} __packed;

/**
 * struct o2_connparams - connection parameters of CONNREQ/CONNACK/reject
 * @queue_depth: messages in flight (credits)
 * @max_frags: RDMA fragments
 * @max_msg_size: largest message
 */
struct o2_connparams {
	u16 queue_depth;
	u16 max_frags;
	u32 max_msg_size;
} __packed;

/**
 * struct o2_connmsg - a CONNREQ or CONNACK (56 bytes: fits IB REQ data)
 * @hdr: header
 * @cp: connection parameters
 */
struct o2_connmsg {
	struct o2_msg_hdr hdr;
	struct o2_connparams cp;
} __packed;

/**
 * struct o2_rej - reject private data (24 bytes)
 * @magic: O2_MSG_MAGIC
 * @version: O2_MSG_VERSION
 * @why: O2_REJECT_*
 * @padding: 0
 * @incarnation: the rejecter's incarnation
 * @cp: the rejecter's connection parameters
 */
struct o2_rej {
	u32 magic;
	u16 version;
	u8 why;
	u8 padding;
	u64 incarnation;
	struct o2_connparams cp;
} __packed;

/* LNet message types */
#define O2_LNET_MSG_ACK		0
#define O2_LNET_MSG_PUT		1
#define O2_LNET_MSG_GET		2
#define O2_LNET_MSG_REPLY	3
#define O2_LNET_MSG_HELLO	4

#define O2_LNET_PING_MATCHBITS	0x8000000000000000ULL
#define O2_LNET_RESERVED_PORTAL	0
#define O2_PING_MAGIC		0x70696E67
#define O2_PING_FEAT_BASE	0x1
#define O2_PING_FEAT_NI_STATUS	0x2
#define O2_PING_FEAT_RTE_DISABLED 0x4	/* a router not routing */
#define O2_PING_FEAT_MULTI_RAIL	0x8	/* Multi-Rail aware */
/* answers discovery, takes pushes; ni[0].status is the seqno */
#define O2_PING_FEAT_DISCOVERY	0x10
#define O2_PING_FEAT_LARGE_ADDR	0x20	/* large-address NIDs follow */

struct o2_lnet_wmd {
	__le64 interface_cookie;
	__le64 object_cookie;
} __packed;

/* LNet's LNET_WIRE_HANDLE_COOKIE_NONE: a PUT that wants no ACK */
#define O2_LNET_WMD_NONE	(~0ULL)

/* The ack_wmd of a PUT that wants no ACK (LNET_NOACK_REQ). */
static inline void o2_lnet_wmd_set_none(struct o2_lnet_wmd *w)
{
	w->interface_cookie = cpu_to_le64(O2_LNET_WMD_NONE);
	w->object_cookie = cpu_to_le64(O2_LNET_WMD_NONE);
}

/* Does the PUT whose ack_wmd is @w want no ACK? */
static inline bool o2_lnet_wmd_is_none(const struct o2_lnet_wmd *w)
{
	return le64_to_cpu(w->object_cookie) == O2_LNET_WMD_NONE;
}

/**
 * struct o2_lnet_hdr - the LNet header (72 bytes, little-endian)
 * @dest_nid: destination NID
 * @src_nid: source NID
 * @dest_pid: destination pid
 * @src_pid: source pid
 * @type: O2_LNET_MSG_*
 * @payload_length: bytes of payload after the header
 * @msg: per-type fields
 */
struct o2_lnet_hdr {
	__le64 dest_nid;
	__le64 src_nid;
	__le32 dest_pid;
	__le32 src_pid;
	__le32 type;
	__le32 payload_length;
	union {
		struct {
			struct o2_lnet_wmd ack_wmd;
			__le64 match_bits;
			__le64 hdr_data;
			__le32 ptl_index;
			__le32 offset;
		} __packed put;
		struct {
			struct o2_lnet_wmd return_wmd;
			__le64 match_bits;
			__le32 ptl_index;
			__le32 src_offset;
			__le32 sink_length;
		} __packed get;
		struct {
			struct o2_lnet_wmd dst_wmd;
		} __packed reply;
		struct {
			struct o2_lnet_wmd dst_wmd;
			__le64 match_bits;
			__le32 mlength;
		} __packed ack;
		u8 raw[40];
	} __packed msg;
} __packed;

/**
 * struct o2_ping_ni - one NI of a ping reply (16 bytes)
 * @nid: NID
 * @status: O2LND_NI_STATUS_*
 * @msg_size: 0
 */
struct o2_ping_ni {
	__le64 nid;
	__le32 status;
	__le32 msg_size;
} __packed;

/**
 * struct o2_ping_info - LNet ping info header (16 bytes) + NIs
 * @magic: O2_PING_MAGIC
 * @features: O2_PING_FEAT_*
 * @pid: the target's pid
 * @nnis: number of NIs that follow
 * @ni: the NIs
 */
struct o2_ping_info {
	__le32 magic;
	__le32 features;
	__le32 pid;
	__le32 nnis;
	struct o2_ping_ni ni[];
} __packed;

#define O2_PING_VIEW_MAX	16	/* NIDs kept of one ping info */

/**
 * struct o2_ping_view - a peer's ping info as o2lnd keeps it
 * @features: O2_PING_FEAT_* it advertised
 * @pid: its LNet pid
 * @seqno: its ping sequence number (with O2_PING_FEAT_DISCOVERY, else 0)
 * @lo_status: the status of its 0@lo entry, as sent (the sequence number
 *	with discovery)
 * @nnis: NIDs it listed besides 0@lo (may exceed @n)
 * @n: NIDs in @ni, primary first (LNet's order)
 * @ni: the NIDs and their status (O2LND_NI_STATUS_*)
 */
struct o2_ping_view {
	u32 features;
	u32 pid;
	u32 seqno;
	u32 lo_status;
	u32 nnis;
	u32 n;
	struct {
		u64 nid;
		u32 status;
	} ni[O2_PING_VIEW_MAX];
};

/* the selftest (brw) service's portal */
#define O2_BRW_PORTAL		51
/* largest payload carried inline by an IMMEDIATE message */
#define O2_MAX_IMMEDIATE	(O2_MAX_MSG_SIZE - 48 - 72)

/**
 * struct o2_rdma_frag - one fragment of an RDMA descriptor (12 bytes)
 * @nob: bytes
 * @addr: remote address
 */
struct o2_rdma_frag {
	u32 nob;
	u64 addr;
} __packed;

/**
 * struct o2_rdma_desc - o2iblnd v2 RDMA descriptor (8 + 12 * nfrags)
 * @key: rkey of the memory
 * @nfrags: fragments that follow
 * @frags: the fragments
 */
struct o2_rdma_desc {
	u32 key;
	u32 nfrags;
	struct o2_rdma_frag frags[];
} __packed;

/* PUT_REQ body: the LNet PUT header and the sender's cookie (80 bytes) */
struct o2_putreq_msg {
	struct o2_lnet_hdr hdr;
	u64 cookie;
} __packed;

/* PUT_ACK body: both cookies and the sink's descriptor (24 + 12n) */
struct o2_putack_msg {
	u64 src_cookie;
	u64 dst_cookie;
	struct o2_rdma_desc rd;
} __packed;

/* GET_REQ body: the LNet GET header, cookie, the sink (88 + 12n) */
struct o2_get_msg {
	struct o2_lnet_hdr hdr;
	u64 cookie;
	struct o2_rdma_desc rd;
} __packed;

/* PUT_NAK, PUT_DONE, GET_DONE body (12 bytes) */
struct o2_completion_msg {
	u64 cookie;
	s32 status;
} __packed;

static inline void o2_wire_size_checks(void)
{
	BUILD_BUG_ON(sizeof(struct o2_msg_hdr) != 48);
	BUILD_BUG_ON(sizeof(struct o2_connmsg) != 56);
	BUILD_BUG_ON(sizeof(struct o2_rej) != 24);
	BUILD_BUG_ON(sizeof(struct o2_lnet_hdr) != 72);
	BUILD_BUG_ON(sizeof(struct o2_ping_info) != 16);
	BUILD_BUG_ON(sizeof(struct o2_ping_ni) != 16);
	BUILD_BUG_ON(sizeof(struct o2_rdma_frag) != 12);
	BUILD_BUG_ON(sizeof(struct o2_putreq_msg) != 80);
	BUILD_BUG_ON(sizeof(struct o2_putack_msg) != 24);
	BUILD_BUG_ON(sizeof(struct o2_get_msg) != 88);
	BUILD_BUG_ON(sizeof(struct o2_completion_msg) != 12);
	BUILD_BUG_ON(O2_MAX_IMMEDIATE != 3976);
}

/**
 * struct o2_msg_expect - what the receiver requires of a message header
 * @nob: bytes received
 * @srcnid: required sender NID, or 0 for any
 * @dstnid: required receiver NID (ours)
 * @srcstamp: required sender incarnation, or 0 for any
 * @dststamp: required receiver incarnation, or 0 for any
 */
struct o2_msg_expect {
	u32 nob;
	u64 srcnid;
	u64 dstnid;
	u64 srcstamp;
	u64 dststamp;
};

u32 o2_cksum(const void *ptr, size_t nob);
void o2_msg_pack(void *buf, u8 type, u8 credits, u32 nob, u64 srcnid,
		 u64 srcstamp, u64 dstnid, u64 dststamp, bool cksum);
int o2_msg_unpack(void *buf, const struct o2_msg_expect *exp);
u32 o2_msg_peek_nob(const void *buf, size_t len);
bool o2_msg_type_valid(u8 type);
void o2_connparams_swab(struct o2_connparams *cp);
void o2_rej_pack(struct o2_rej *rej, u8 why, u64 incarnation,
		 const struct o2_connparams *cp);
int o2_rej_unpack(const void *data, size_t len, struct o2_rej *rej);
u8 o2_connparams_check(const struct o2_connparams *peer,
		       const struct o2_connparams *ours);
bool o2_race_we_win(u64 our_nid, u64 peer_nid);
u8 o2_credits_return(int outstanding);
int o2_remote_status(s64 status);
bool o2_brw_wants_ack(u32 op, u32 flags, bool routed);
int o2_bulk_body_unpack(u8 type, void *body, u32 len, bool flip,
			u32 max_frags, u32 max_nob, u32 *rd_nob);
int o2_ping_info_unpack(const void *buf, u32 len, bool cut,
			struct o2_ping_view *v);
int o2_credits_grant(int credits, int grant, int queue_depth);

#endif /* _O2LND_WIRE_H */
