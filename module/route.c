// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the routes= parameter, as LNet's:
 *
 *	routes="<net> [<hops>] <gateway NID>[:<priority>][; ...]"
 *
 * e.g. "o2ib1 192.168.1.2@o2ib" or "o2ib1 2 192.168.1.2@o2ib0:1;
 * o2ib2 192.168.1.3@o2ib".  Entries are separated by ';' or newlines.
 * Pure logic (no RDMA), driven by KUnit: the checks that need the local
 * networks (the gateway must be on one, the remote network must not be
 * one) are done by router.c at load.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <uapi/o2lnd.h>
#include "nid.h"
#include "wire.h"
#include "route.h"

static bool o2_route_sep(char c)
{
	return c == ';' || c == '\n';
}

/* the next blank-separated token of an entry: [*s, *end) */
static const char *o2_route_token(const char *s, const char **end)
{
	while (*s == ' ' || *s == '\t')
		s++;
	*end = s;
	while (**end && **end != ' ' && **end != '\t' && !o2_route_sep(**end))
		(*end)++;
	return s;
}

/* "a.b.c.d@net[:priority]" of @len bytes */
static int o2_route_gw(const char *s, size_t len, u64 *gw, u32 *priority)
{
	const char *colon = memchr(s, ':', len);
	char tmp[O2_NIDSTR_SIZE];
	size_t nidlen = colon ? colon - s : len;

	*priority = 0;
	if (colon && o2_parse_u32(colon + 1, len - nidlen - 1, U32_MAX,
				  priority))
		return -EINVAL;
	if (!nidlen || nidlen >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, nidlen);
	tmp[nidlen] = '\0';
	return o2_nid_parse(tmp, gw);
}

/**
 * o2_routes_parse() - parse the routes= parameter
 * @s: the parameter (NUL-terminated; may be empty)
 * @routes: out: the routes
 * @max: room in @routes
 * @err: out: on error, what is wrong and where (NUL-terminated)
 * @errlen: size of @err
 *
 * Every network and gateway must be o2ib; a route cannot lead to its own
 * gateway's network; hops are 1..O2_ROUTE_MAX_HOPS; a network may have
 * several gateways but the same gateway only once.
 *
 * Return: the number of routes (0 for an empty parameter) or -EINVAL.
 */
int o2_routes_parse(const char *s, struct o2_route_spec *routes, int max,
		    char *err, size_t errlen)
{
	int n = 0, i;

	for (;;) {
		struct o2_route_spec r = { .hops = 1 };
		const char *tok, *end, *entry;
		const char *t2, *e2;

		while (*s == ' ' || *s == '\t' || o2_route_sep(*s))
			s++;
		if (!*s)
			break;
		entry = s;
		tok = o2_route_token(s, &end);
		if (o2_net_parse(tok, end - tok, &r.net) ||
		    o2_net_type(r.net) != O2LND_NET_TYPE_O2IB) {
			snprintf(err, errlen, "expected an o2ib network at '%s'",
				 entry);
			return -EINVAL;
		}
		t2 = o2_route_token(end, &e2);
		if (t2 == e2) {
			snprintf(err, errlen, "no gateway for '%.*s'",
				 (int)(end - tok), tok);
			return -EINVAL;
		}
		if (!memchr(t2, '@', e2 - t2)) {
			if (o2_parse_u32(t2, e2 - t2, O2_ROUTE_MAX_HOPS,
					 &r.hops) || !r.hops) {
				snprintf(err, errlen,
					 "bad hop count at '%s' (1..%d)", t2,
					 O2_ROUTE_MAX_HOPS);
				return -EINVAL;
			}
			r.hops_given = true;
			t2 = o2_route_token(e2, &e2);
		}
		if (t2 == e2 || o2_route_gw(t2, e2 - t2, &r.gw, &r.priority) ||
		    o2_net_type(o2_nid_net(r.gw)) != O2LND_NET_TYPE_O2IB) {
			snprintf(err, errlen,
				 "expected a gateway NID[:priority] at '%s'",
				 t2);
			return -EINVAL;
		}
		if (o2_nid_net(r.gw) == r.net) {
			snprintf(err, errlen,
				 "gateway of '%.*s' is on that network itself",
				 (int)(end - tok), tok);
			return -EINVAL;
		}
		s = o2_route_token(e2, &end);
		if (s != end) {
			snprintf(err, errlen, "garbage at '%s'", s);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (routes[i].net == r.net && routes[i].gw == r.gw) {
				snprintf(err, errlen,
					 "route given twice at '%s'", entry);
				return -EINVAL;
			}
		}
		if (n >= max) {
			snprintf(err, errlen, "more than %d routes", max);
			return -EINVAL;
		}
		routes[n++] = r;
	}
	return n;
}

/**
 * o2_route_pick() - choose the route to a remote network
 * @routes: the routes
 * @n: how many
 * @net: the destination's network
 * @local_nets: our networks
 * @nlocal: how many
 * @state: per route, enum o2_route_state
 *
 * Among the routes to @net whose gateway is on a local network and is not
 * dead, prefers one that is up, then the lowest priority number, then
 * the fewest hops, then the first given (LNet's order, without its
 * round robin).  A route that is down is still picked when no other is
 * up, so that its traffic probes the gateway; a dead one never is: its
 * gateway said it would drop the traffic.
 *
 * Return: the index in @routes, or -1 if none leads to @net.
 */
int o2_route_pick(const struct o2_route_spec *routes, int n, u32 net,
		  const u32 *local_nets, int nlocal, const u8 *state)
{
	int best = -1, i, j;

	for (i = 0; i < n; i++) {
		const struct o2_route_spec *r = &routes[i], *b;
		bool local = false;

		if (r->net != net || state[i] == O2_ROUTE_DEAD)
			continue;
		for (j = 0; j < nlocal; j++)
			local |= local_nets[j] == o2_nid_net(r->gw);
		if (!local)
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		b = &routes[best];
		if (state[best] != state[i]) {
			if (state[i] == O2_ROUTE_UP)
				best = i;
			continue;
		}
		if (r->priority != b->priority) {
			if (r->priority < b->priority)
				best = i;
			continue;
		}
		if (r->hops < b->hops)
			best = i;
	}
	return best;
}

/**
 * o2_route_gw_alive() - does the gateway's ping info keep route @r alive?
 * @r: a route
 * @v: the ping info of its gateway (from a check, a discovery or a push)
 *
 * As LNet judges a gateway's ping reply: a gateway that does not forward
 * (RTE_DISABLED) takes every route through it down; and, as LNet's
 * avoid_asym_router_failure (on by default) has it, a route given one
 * hop, or whose gateway lists an NI on the route's network, is alive only
 * if one of those NIs is up.  A route whose hops were not given and whose
 * gateway lists no NI on its network may be multi-hop: it stays alive.
 * A gateway that gives no NI status (an old LNet) is taken at its word.
 *
 * Return: true if the route may be used.
 */
bool o2_route_gw_alive(const struct o2_route_spec *r,
		       const struct o2_ping_view *v)
{
	bool listed = false;
	u32 i;

	if (v->features & O2_PING_FEAT_RTE_DISABLED)
		return false;
	if (!(v->features & O2_PING_FEAT_NI_STATUS))
		return true;
	for (i = 0; i < v->n; i++) {
		if (o2_nid_net(v->ni[i].nid) != r->net)
			continue;
		if (v->ni[i].status == O2LND_NI_STATUS_UP)
			return true;
		listed = true;
	}
	return !listed && !(r->hops_given && r->hops == 1);
}
