/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the routes= parameter (pure logic, driven by KUnit).
 */
#ifndef _O2LND_ROUTE_H
#define _O2LND_ROUTE_H

#include <linux/types.h>

#define O2_MAX_ROUTES		32
#define O2_ROUTE_MAX_HOPS	255

/**
 * struct o2_route_spec - one route as given in routes=
 * @net: the remote network
 * @hops: hop count, 1..O2_ROUTE_MAX_HOPS (1 unless given)
 * @priority: priority, 0 highest (0 unless given)
 * @gw: the gateway's NID
 */
struct o2_route_spec {
	u32 net;
	u32 hops;
	u32 priority;
	u64 gw;
};

int o2_routes_parse(const char *s, struct o2_route_spec *routes, int max,
		    char *err, size_t errlen);
int o2_route_pick(const struct o2_route_spec *routes, int n, u32 net,
		  const u32 *local_nets, int nlocal, const bool *gw_down);

#endif /* _O2LND_ROUTE_H */
