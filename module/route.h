/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: the routes= parameter (pure logic, driven by KUnit).
 */
#ifndef _O2LND_ROUTE_H
#define _O2LND_ROUTE_H

#include <linux/types.h>

struct o2_ping_view;

#define O2_MAX_ROUTES		32
#define O2_ROUTE_MAX_HOPS	255

/**
 * struct o2_route_spec - one route as given in routes=
 * @net: the remote network
 * @hops: hop count, 1..O2_ROUTE_MAX_HOPS (1 unless given)
 * @priority: priority, 0 highest (0 unless given)
 * @hops_given: @hops was given (LNet judges a route of one hop given
 *	stricter than one whose hops it does not know: o2_route_gw_alive())
 * @gw: the gateway's NID
 */
struct o2_route_spec {
	u32 net;
	u32 hops;
	u32 priority;
	bool hops_given;
	u64 gw;
};

/**
 * enum o2_route_state - what is known of a route's gateway
 * @O2_ROUTE_UP: nothing against it
 * @O2_ROUTE_DOWN: the gateway peer is down, or did not answer its last
 *	check: picked only when no other route is up, its traffic probing it
 * @O2_ROUTE_DEAD: the gateway answered that it does not route there
 *	(o2_route_gw_alive()): never picked
 */
enum o2_route_state {
	O2_ROUTE_UP,
	O2_ROUTE_DOWN,
	O2_ROUTE_DEAD,
};

int o2_routes_parse(const char *s, struct o2_route_spec *routes, int max,
		    char *err, size_t errlen);
int o2_route_pick(const struct o2_route_spec *routes, int n, u32 net,
		  const u32 *local_nets, int nlocal, const u8 *state);
bool o2_route_gw_alive(const struct o2_route_spec *r,
		       const struct o2_ping_view *v);

#endif /* _O2LND_ROUTE_H */
