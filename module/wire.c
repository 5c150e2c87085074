// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: packing, byte-swapping and validation of o2iblnd v2 messages,
 * reject data and connection parameters, plus the pure decision helpers
 * (race tie-break, credit arithmetic).  No RDMA headers here.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <uapi/o2lnd.h>
#include "wire.h"

/**
 * o2_cksum() - o2iblnd's message checksum
 * @ptr: the message, with its cksum field 0
 * @nob: its length
 *
 * A 32-bit rotate-left-by-one-and-add of every byte taken as a signed
 * char.  0 means "no checksum", so a sum of 0 is reported as 1.
 *
 * Return: the checksum, never 0.
 */
u32 o2_cksum(const void *ptr, size_t nob)
{
	const s8 *c = ptr;
	u32 sum = 0;

	while (nob-- > 0)
		sum = ((sum << 1) | (sum >> 31)) + (u32)(s32)*c++;
	return sum ? sum : 1;
}

/**
 * o2_msg_type_valid() - is @type a known o2iblnd v2 message type?
 * @type: the type byte
 *
 * Return: true if known.
 */
bool o2_msg_type_valid(u8 type)
{
	switch (type) {
	case O2_MSG_CONNREQ:
	case O2_MSG_CONNACK:
	case O2_MSG_NOOP:
	case O2_MSG_IMMEDIATE:
	case O2_MSG_PUT_REQ:
	case O2_MSG_PUT_NAK:
	case O2_MSG_PUT_ACK:
	case O2_MSG_PUT_DONE:
	case O2_MSG_GET_REQ:
	case O2_MSG_GET_DONE:
		return true;
	default:
		return false;
	}
}

/**
 * o2_msg_pack() - fill in the header of an outgoing message
 * @buf: the message; its body must already be in place
 * @type: O2_MSG_*
 * @credits: credits returned to the peer
 * @nob: bytes in the whole message
 * @srcnid: our NID
 * @srcstamp: our incarnation
 * @dstnid: the peer's NID
 * @dststamp: the peer's incarnation (0 for a CONNREQ)
 * @cksum: compute a checksum (else send 0)
 */
void o2_msg_pack(void *buf, u8 type, u8 credits, u32 nob, u64 srcnid,
		 u64 srcstamp, u64 dstnid, u64 dststamp, bool cksum)
{
	struct o2_msg_hdr *h = buf;

	h->magic = O2_MSG_MAGIC;
	h->version = O2_MSG_VERSION;
	h->type = type;
	h->credits = credits;
	h->nob = nob;
	h->cksum = 0;
	h->srcnid = srcnid;
	h->srcstamp = srcstamp;
	h->dstnid = dstnid;
	h->dststamp = dststamp;
	if (cksum)
		h->cksum = o2_cksum(buf, nob);
}

/**
 * o2_connparams_swab() - byte-swap connection parameters in place
 * @cp: the parameters
 */
void o2_connparams_swab(struct o2_connparams *cp)
{
	cp->queue_depth = swab16(cp->queue_depth);
	cp->max_frags = swab16(cp->max_frags);
	cp->max_msg_size = swab32(cp->max_msg_size);
}

static void o2_msg_hdr_swab(struct o2_msg_hdr *h)
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

/**
 * o2_msg_unpack() - validate a received message and convert it to host order
 * @buf: the message, @exp->nob bytes
 * @exp: what the header must say
 *
 * Checks, in order: length, magic (swapping a byte-swapped sender's
 * header and connection parameters), version, nob == bytes received,
 * checksum when nonzero, type, body length of the type, the NIDs and the
 * incarnation stamps.  On success the header (and a CONNREQ/CONNACK's
 * parameters) are in host order.
 *
 * Return: 0; -EPROTO for a malformed message; -ESTALE for a stamp
 * mismatch; -EHOSTUNREACH when the NIDs are not the expected ones.
 */
int o2_msg_unpack(void *buf, const struct o2_msg_expect *exp)
{
	struct o2_msg_hdr *h = buf;
	u32 sum, nob, min;
	bool flip;

	if (exp->nob < sizeof(*h))
		return -EPROTO;
	if (h->magic == O2_MSG_MAGIC)
		flip = false;
	else if (h->magic == swab32(O2_MSG_MAGIC))
		flip = true;
	else
		return -EPROTO;
	if (h->version != (flip ? swab16(O2_MSG_VERSION) : O2_MSG_VERSION))
		return -EPROTO;
	nob = flip ? swab32(h->nob) : h->nob;
	if (nob != exp->nob)
		return -EPROTO;
	sum = flip ? swab32(h->cksum) : h->cksum;
	if (sum) {
		h->cksum = 0;
		if (o2_cksum(buf, nob) != sum)
			return -EPROTO;
		h->cksum = flip ? swab32(sum) : sum;
	}
	if (flip)
		o2_msg_hdr_swab(h);
	if (!o2_msg_type_valid(h->type))
		return -EPROTO;
	switch (h->type) {
	case O2_MSG_CONNREQ:
	case O2_MSG_CONNACK:
		min = sizeof(struct o2_connmsg);
		break;
	default:
		min = sizeof(*h);
		break;
	}
	if (nob < min)
		return -EPROTO;
	if (flip && min == sizeof(struct o2_connmsg))
		o2_connparams_swab(&((struct o2_connmsg *)buf)->cp);
	if (h->dstnid != exp->dstnid ||
	    (exp->srcnid && h->srcnid != exp->srcnid))
		return -EHOSTUNREACH;
	if ((exp->srcstamp && h->srcstamp != exp->srcstamp) ||
	    (exp->dststamp && h->dststamp != exp->dststamp))
		return -ESTALE;
	return 0;
}

/**
 * o2_msg_peek_nob() - the nob a message header claims, in host order
 * @buf: the message
 * @len: bytes available
 *
 * Return: the claimed length, or 0 when @buf is too short or its magic
 * is unknown.
 */
u32 o2_msg_peek_nob(const void *buf, size_t len)
{
	const struct o2_msg_hdr *h = buf;

	if (len < sizeof(*h))
		return 0;
	if (h->magic == O2_MSG_MAGIC)
		return h->nob;
	if (h->magic == swab32(O2_MSG_MAGIC))
		return swab32(h->nob);
	return 0;
}

/**
 * o2_rej_pack() - build reject private data
 * @rej: output
 * @why: O2_REJECT_*
 * @incarnation: our incarnation
 * @cp: our connection parameters
 */
void o2_rej_pack(struct o2_rej *rej, u8 why, u64 incarnation,
		 const struct o2_connparams *cp)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = O2_MSG_MAGIC;
	rej->version = O2_MSG_VERSION;
	rej->why = why;
	rej->incarnation = incarnation;
	rej->cp = *cp;
}

/**
 * o2_rej_unpack() - validate and convert received reject data
 * @data: the consumer reject data
 * @len: its length
 * @rej: out: host-order copy
 *
 * Return: 0 or -EPROTO.
 */
int o2_rej_unpack(const void *data, size_t len, struct o2_rej *rej)
{
	if (!data || len < sizeof(*rej))
		return -EPROTO;
	memcpy(rej, data, sizeof(*rej));
	if (rej->magic == swab32(O2_MSG_MAGIC)) {
		rej->magic = O2_MSG_MAGIC;
		rej->version = swab16(rej->version);
		rej->incarnation = swab64(rej->incarnation);
		o2_connparams_swab(&rej->cp);
	}
	if (rej->magic != O2_MSG_MAGIC)
		return -EPROTO;
	return 0;
}

/**
 * o2_connparams_check() - may a peer's parameters be accepted?
 * @peer: the requester's parameters
 * @ours: our parameters
 *
 * A queue deeper than ours is refused with MSG_QUEUE_SIZE, more
 * fragments with RDMA_FRAGS, a message size other than ours (larger: we
 * could not receive it; smaller: we do not shrink our messages) or a
 * queue depth below 2 with CONN_UNCOMPAT.
 *
 * Return: 0 when acceptable, else the O2_REJECT_* reason.
 */
u8 o2_connparams_check(const struct o2_connparams *peer,
		       const struct o2_connparams *ours)
{
	if (peer->queue_depth > ours->queue_depth)
		return O2_REJECT_MSG_QUEUE_SIZE;
	if (peer->max_frags > ours->max_frags)
		return O2_REJECT_RDMA_FRAGS;
	if (peer->max_msg_size != ours->max_msg_size ||
	    peer->queue_depth < 2 || peer->max_frags < 1)
		return O2_REJECT_CONN_UNCOMPAT;
	return 0;
}

/**
 * o2_race_we_win() - connection race tie-break
 * @our_nid: our NID
 * @peer_nid: the NID of the peer that connects to us while we connect
 *	to it
 *
 * The higher NID's connect wins: the lower NID's request is rejected
 * with CONN_RACE.  A connection to our own NID never races with itself
 * (both ends are ours; rejecting would reject our own connect forever).
 *
 * Return: true if we reject the peer's request.
 */
bool o2_race_we_win(u64 our_nid, u64 peer_nid)
{
	return our_nid != peer_nid && our_nid > peer_nid;
}

/**
 * o2_credits_return() - credits a message may return
 * @outstanding: credits we owe
 *
 * Return: the value for the header's credits byte.
 */
u8 o2_credits_return(int outstanding)
{
	return clamp(outstanding, 0, 255);
}

/**
 * o2_credits_grant() - add a peer's credit grant
 * @credits: our current credits
 * @grant: credits returned by the peer
 * @queue_depth: negotiated depth
 *
 * Return: the new credit count, or -EPROTO when the grant overflows the
 * negotiated depth.
 */
int o2_credits_grant(int credits, int grant, int queue_depth)
{
	if (grant < 0 || credits + grant > queue_depth)
		return -EPROTO;
	return credits + grant;
}

static int o2_rd_unpack(struct o2_rdma_desc *rd, u32 room, bool flip,
			u32 max_frags, u32 max_nob, u32 *total)
{
	u64 sum = 0;
	u32 i, n;

	if (room < sizeof(*rd))
		return -EPROTO;
	if (flip) {
		rd->key = swab32(rd->key);
		rd->nfrags = swab32(rd->nfrags);
	}
	n = rd->nfrags;
	if (!n || n > max_frags ||
	    (room - sizeof(*rd)) / sizeof(rd->frags[0]) < n)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		if (flip) {
			rd->frags[i].nob = swab32(rd->frags[i].nob);
			rd->frags[i].addr = swab64(rd->frags[i].addr);
		}
		if (!rd->frags[i].nob)
			return -EPROTO;
		sum += rd->frags[i].nob;
	}
	if (sum > max_nob)
		return -EPROTO;
	*total = sum;
	return 0;
}

/**
 * o2_bulk_body_unpack() - check a bulk message body, convert to host order
 * @type: O2_MSG_PUT_REQ .. O2_MSG_GET_DONE
 * @body: the body (after the 48-byte header)
 * @len: its length
 * @flip: the sender's byte order is not ours
 * @max_frags: negotiated fragments: a descriptor with more is refused
 * @max_nob: the largest total a descriptor may describe
 * @rd_nob: out: the total of the descriptor (PUT_ACK, GET_REQ), else 0
 *
 * The LNet header inside PUT_REQ and GET_REQ is little-endian and left
 * as it is.  A descriptor is refused when it has no fragment or more than
 * @max_frags, a fragment of 0 bytes, more fragments than the body holds,
 * or a total above @max_nob.
 *
 * Return: 0 or -EPROTO.
 */
int o2_bulk_body_unpack(u8 type, void *body, u32 len, bool flip,
			u32 max_frags, u32 max_nob, u32 *rd_nob)
{
	*rd_nob = 0;
	switch (type) {
	case O2_MSG_PUT_REQ: {
		struct o2_putreq_msg *m = body;

		if (len < sizeof(*m))
			return -EPROTO;
		if (flip)
			m->cookie = swab64(m->cookie);
		return 0;
	}
	case O2_MSG_PUT_ACK: {
		struct o2_putack_msg *m = body;

		if (len < sizeof(*m))
			return -EPROTO;
		if (flip) {
			m->src_cookie = swab64(m->src_cookie);
			m->dst_cookie = swab64(m->dst_cookie);
		}
		return o2_rd_unpack(&m->rd, len - offsetof(typeof(*m), rd),
				    flip, max_frags, max_nob, rd_nob);
	}
	case O2_MSG_GET_REQ: {
		struct o2_get_msg *m = body;

		if (len < sizeof(*m))
			return -EPROTO;
		if (flip)
			m->cookie = swab64(m->cookie);
		return o2_rd_unpack(&m->rd, len - offsetof(typeof(*m), rd),
				    flip, max_frags, max_nob, rd_nob);
	}
	case O2_MSG_PUT_NAK:
	case O2_MSG_PUT_DONE:
	case O2_MSG_GET_DONE: {
		struct o2_completion_msg *m = body;

		if (len < sizeof(*m))
			return -EPROTO;
		if (flip) {
			m->cookie = swab64(m->cookie);
			m->status = swab32(m->status);
		}
		return 0;
	}
	default:
		return -EPROTO;
	}
}

/**
 * o2_remote_status() - a result the peer reported, as our status
 * @status: from the wire (an LNet ACK's match_bits, a completion's status)
 *
 * A peer's errno describes the peer's own trouble: passed on as it is it
 * would read as ours (a peer whose device went away answers -ENODEV,
 * which here would mean that our device is gone).  Data and transport
 * failures keep their value; what names a local resource or a bad
 * argument (the errnos o2ctl's selftest treats as hopeless, its fatal(),
 * and ENETDOWN) becomes -EREMOTEIO; nonsense becomes -EPROTO.
 *
 * Return: 0 or a negative errno.
 */
int o2_remote_status(s64 status)
{
	if (status > 0 || status < -MAX_ERRNO)
		return -EPROTO;
	switch (-status) {
	case EINVAL:
	case EPERM:
	case EACCES:
	case ENOTTY:
	case EFAULT:
	case EBADF:
	case ENODEV:
	case ENXIO:
	case ENETDOWN:
		return -EREMOTEIO;
	default:
		return status;
	}
}

/**
 * o2_brw_wants_ack() - does a selftest RPC's PUT ask for an LNet ACK?
 * @op: O2LND_BRW_WRITE or O2LND_BRW_READ
 * @flags: O2LND_BRW_F_*
 * @routed: the peer is behind a router
 *
 * A write that checks its data needs the server's verdict, which the
 * ACK carries; one with O2LND_BRW_F_ACK asks for it anyway.  A routed
 * write needs the ACK to know that the data reached the server and not
 * only the router.  Any other write (unchecked, to a peer on our
 * network) asks for none, as an LNet PUT with LNET_NOACK_REQ: it is over
 * when the peer's transport has acknowledged its last message (the
 * inline PUT, or the PUT_DONE after the RDMA write), one message sooner.
 * A refusal (PUT_NAK) still fails it.  A read's answer is its data.
 *
 * Return: true if the write must ask for an ACK.
 */
bool o2_brw_wants_ack(u32 op, u32 flags, bool routed)
{
	return op == O2LND_BRW_WRITE &&
	       ((flags & (O2LND_BRW_F_CHECK | O2LND_BRW_F_ACK)) || routed);
}

static u32 o2_pi_u32(bool flip, __le32 v)
{
	return flip ? swab32(le32_to_cpu(v)) : le32_to_cpu(v);
}

/**
 * o2_ping_info_unpack() - check and read a peer's ping info
 * @buf: the ping info (a ping REPLY's or a push PUT's payload)
 * @len: its bytes
 * @cut: it may have been cut to the receiver's buffer (a ping REPLY:
 *	LNet truncates a REPLY to the GET's sink length, and so does o2lnd):
 *	the NIs it counts beyond @len are missing, not a lie
 * @v: out: what it says
 *
 * Either byte order.  The first entry must be 0@lo, as LNet always puts
 * it (its status is the sequence number when the peer has discovery);
 * every other entry is one of the peer's NIDs, the primary first.  With
 * O2_PING_FEAT_LARGE_ADDR, @nnis counts the 64-bit NIDs and large
 * addresses may follow them: o2lnd reads the 64-bit ones.
 *
 * Return: 0, or -EPROTO (short, bad magic, more NIs than bytes unless
 * @cut, no 0@lo first, a zero or 0@lo NID among the others).
 */
int o2_ping_info_unpack(const void *buf, u32 len, bool cut,
			struct o2_ping_view *v)
{
	const struct o2_ping_info *pi = buf;
	u32 magic, nnis, avail, i;
	bool flip;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(*pi))
		return -EPROTO;
	magic = le32_to_cpu(pi->magic);
	if (magic == O2_PING_MAGIC)
		flip = false;
	else if (magic == swab32(O2_PING_MAGIC))
		flip = true;
	else
		return -EPROTO;
	nnis = o2_pi_u32(flip, pi->nnis);
	avail = (len - sizeof(*pi)) / sizeof(pi->ni[0]);
	if (!nnis || !avail || (nnis > avail && !cut))
		return -EPROTO;
	v->features = o2_pi_u32(flip, pi->features);
	v->pid = o2_pi_u32(flip, pi->pid);
	v->nnis = nnis - 1;
	for (i = 0; i < nnis && i < avail; i++) {
		u64 nid = le64_to_cpu(pi->ni[i].nid);

		if (flip)
			nid = swab64(nid);
		if (!i != (nid >> 48 == O2LND_NET_TYPE_LO))
			return -EPROTO;
		if (i == 0) {
			v->lo_status = o2_pi_u32(flip, pi->ni[0].status);
			if (v->features & O2_PING_FEAT_DISCOVERY)
				v->seqno = v->lo_status;
			continue;
		}
		if (!(u32)nid)
			return -EPROTO;
		if (v->n < O2_PING_VIEW_MAX) {
			v->ni[v->n].nid = nid;
			v->ni[v->n].status = o2_pi_u32(flip, pi->ni[i].status);
			v->n++;
		}
	}
	return 0;
}
