/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: LNet NIDs (parse and format).  Pure logic, no RDMA headers.
 */
#ifndef _O2LND_NID_H
#define _O2LND_NID_H

#include <linux/types.h>

#define O2_NIDSTR_SIZE	32

/* A NID is (net << 32) | addr; net is (lnd type << 16) | network number. */
static inline u32 o2_nid_net(u64 nid)
{
	return (u32)(nid >> 32);
}

static inline u32 o2_nid_addr(u64 nid)
{
	return (u32)nid;
}

static inline u32 o2_net_type(u32 net)
{
	return net >> 16;
}

static inline u32 o2_net_num(u32 net)
{
	return net & 0xffff;
}

static inline u32 o2_make_net(u32 type, u32 num)
{
	return (type << 16) | (num & 0xffff);
}

static inline u64 o2_make_nid(u32 net, u32 addr)
{
	return ((u64)net << 32) | addr;
}

int o2_parse_u32(const char *s, size_t len, u32 max, u32 *val);
int o2_nid_parse(const char *str, u64 *nid);
char *o2_nid_format(u64 nid, char *buf, size_t size);
int o2_net_parse(const char *str, size_t len, u32 *net);
char *o2_net_format(u32 net, char *buf, size_t size);

#endif /* _O2LND_NID_H */
