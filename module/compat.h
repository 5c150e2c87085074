/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the one place where o2lnd adapts to the kernel it is built
 * for.  Every decision here follows a feature probe (scripts/o2-probe.sh,
 * run by Kbuild before the first object: its results are the O2_HAVE_*
 * macros of the generated o2_probes.h, printed at build time as
 * "o2lnd: probe <name>: yes|no"), never a version number: distributions
 * backport RDMA API changes into older kernels.
 *
 * An API o2lnd cannot do without stops the build here with its name; one
 * with an older equivalent is mapped onto it.  The kernels o2lnd is
 * tested on (Debian 12's 6.1 and 6.12) take none of the fallbacks.
 */
#ifndef O2LND_COMPAT_H
#define O2LND_COMPAT_H

#include <linux/random.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "o2_probes.h"

#ifndef O2_HAVE_RDMA_SET_ACK_TIMEOUT
#error "o2lnd needs rdma_set_ack_timeout() (Linux 4.19 or a backport): see the probe lines above"
#endif
#ifndef O2_HAVE_IB_ALLOC_CQ_CTX
#error "o2lnd needs ib_alloc_cq() with a poll context (Linux 4.5 or a backport)"
#endif
#ifndef O2_HAVE_IB_MAP_MR_SG_OFFSET
#error "o2lnd needs ib_map_mr_sg() with an sg offset (Linux 4.7 or a backport)"
#endif

/*
 * Before 5.10, rdma_connect() did not take the CM handler's lock, so it
 * was what a handler called; rdma_connect_locked() is its name since.
 */
#ifndef O2_HAVE_RDMA_CONNECT_LOCKED
#define rdma_connect_locked(id, param) rdma_connect(id, param)
#endif

/**
 * o2_rdma_reject() - reject a connect request with private data.
 * @id: the request's cm_id.
 * @priv: the private data (o2iblnd's reject message).
 * @len: its length.
 *
 * Since 5.8 rdma_reject() takes the IB reject reason; o2iblnd's peers read
 * a consumer-defined reject with private data either way.
 *
 * Return: 0 or a negative errno.
 */
static inline int o2_rdma_reject(struct rdma_cm_id *id, const void *priv,
				 u8 len)
{
#ifdef O2_HAVE_RDMA_REJECT_REASON
	return rdma_reject(id, priv, len, IB_CM_REJ_CONSUMER_DEFINED);
#else
	return rdma_reject(id, priv, len);
#endif
}

#ifndef O2_HAVE_GET_RANDOM_U32_BELOW
static inline u32 get_random_u32_below(u32 ceil)
{
	return prandom_u32_max(ceil);
}
#endif

/*
 * ib_client.add returns an error since 5.8; o2_dev_add() does, and an
 * older kernel calls it through a void wrapper (dev.c).
 */
#ifdef O2_HAVE_IB_CLIENT_ADD_INT
#define O2_IB_CLIENT_ADD(fn) (fn)
#else
#define O2_IB_CLIENT_ADD(fn) (fn##_void)
#endif

#endif /* O2LND_COMPAT_H */
