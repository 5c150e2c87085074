/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * o2lnd: the userspace ABI of the o2lnd kernel module.
 *
 * This is the only header shared by the kernel module and userspace.
 * Every ioctl argument is a fixed-size struct that starts with
 * struct o2lnd_ioc_hdr.  The kernel checks, on every call:
 *   - hdr.abi_version == O2LND_ABI_VERSION       (else -EPROTO)
 *   - hdr.size == sizeof(the struct of that cmd)  (else -EINVAL)
 *   - hdr.flags == 0 and every reserved/pad field that is an input is 0
 *                                                  (else -EINVAL)
 * except O2LND_IOC_VERSION, which only checks hdr.size so that any
 * userspace can learn the module's ABI before it speaks.
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

#define O2LND_ABI_VERSION	1
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
 * @abi_version: O2LND_ABI_VERSION of the caller
 * @size: sizeof() the whole argument struct
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
 * @hdr: header; only @hdr.size is checked
 * @abi_version: out: the module's O2LND_ABI_VERSION
 * @pad: out: 0
 * @module_version: out: NUL-terminated module version string
 */
struct o2lnd_ioc_version {
	struct o2lnd_ioc_hdr hdr;
	__u32 abi_version;
	__u32 pad;
	char module_version[O2LND_VERSION_LEN];
};

/**
 * struct o2lnd_ping_id - one NID of a ping reply
 * @nid: the NID
 * @status: O2LND_NI_STATUS_UP / _DOWN, or 0 if the target did not say
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
	__u64 send_count;
	__u64 recv_count;
	__u64 drop_count;
	__u64 send_bytes;
	__u64 recv_bytes;
	__u64 connects_active;
	__u64 connects_passive;
	__u64 rejects_sent;
	__u64 rejects_received;
};

#define O2LND_IOC_MAGIC		0xb2

#define O2LND_IOC_VERSION	_IOWR(O2LND_IOC_MAGIC, 1, struct o2lnd_ioc_version)
#define O2LND_IOC_PING		_IOWR(O2LND_IOC_MAGIC, 2, struct o2lnd_ioc_ping)
#define O2LND_IOC_NET_SHOW	_IOWR(O2LND_IOC_MAGIC, 3, struct o2lnd_ioc_net)

#endif /* _UAPI_O2LND_H */
