/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd under Lustre's LNet: Lustre's headers, and what differs between
 * the releases it is built against (2.15, 2.16, 2.17).  The choices
 * follow the O2L_HAVE_* results of scripts/o2l-probe.sh (o2l_probes.h),
 * which compiles a snippet per API against the Lustre build, never a
 * version number.
 */
#ifndef _O2L_COMPAT_H
#define _O2L_COMPAT_H

#include "o2l_probes.h"

/* 2.17 moved LNet's headers under include/linux/ */
#ifdef O2L_HAVE_LINUX_LNET_HEADERS
#include <linux/lnet/lib-lnet.h>
#else
#include <lnet/lib-lnet.h>
#endif

/* lnd_recv's sink: an iov_iter (2.17), else pages, offset and length */
#ifdef O2L_HAVE_RECV_ITER
#define O2L_RECV_ITER
#endif

/* Tell Lustre's LNet that an NI's link is down (1) or up (0). */
static inline void o2l_set_link_fatal(struct lnet_ni *lni, bool down)
{
#ifdef O2L_HAVE_LINK_FATAL_STATE
	lnet_set_link_fatal_state(lni, down);
#else
	atomic_set(&lni->ni_fatal_error_on, down);
#endif
}

/* libcfs_setup(): an LND sets libcfs up before it registers (2.16+) */
static inline int o2l_libcfs_setup(void)
{
#ifdef O2L_HAVE_LIBCFS_SETUP
	return libcfs_setup();
#else
	return 0;
#endif
}

/* the NI's interface, as `lnetctl net add --if` or networks= gave it */
#define O2L_NI_IFNAME(lni)	((lni)->ni_interface)
/* the NI's network, e.g. o2ib0 */
#define O2L_NI_NET(lni)		((lni)->ni_net->net_id)
/* an NI with a large (IPv6) NID cannot use o2iblnd's wire header */
#define O2L_NI_NID4_OK(lni)	nid_is_nid4(&(lni)->ni_nid)
#define O2L_NID_IS_NID4(nid)	nid_is_nid4(nid)
#define O2L_NID_TO_U64(nid)	lnet_nid_to_nid4(nid)
#define O2L_NIDSTR(nid)		libcfs_nidstr(nid)

/* a u64 NID of o2lnd's as Lustre's struct lnet_nid */
static inline void o2l_nid_from_u64(u64 nid, struct lnet_nid *out)
{
	lnet_nid4_to_nid(nid, out);
}

/* Set @lni's NID to its interface's IPv4 address @addr (network order). */
static inline void o2l_set_nid(struct lnet_ni *lni, __be32 addr)
{
	lni->ni_nid.nid_size = 0;
	lni->ni_nid.nid_addr[0] = addr;
}

/* LNet's header to and from the wire (4-byte NIDs, little endian) */
static inline void o2l_hdr_to_wire(struct lnet_hdr *hdr, void *wire)
{
	lnet_hdr_to_nid4(hdr, wire);
}

static inline void o2l_hdr_from_wire(struct lnet_hdr *hdr, void *wire)
{
	lnet_hdr_from_nid4(hdr, wire);
}

#endif /* _O2L_COMPAT_H */
