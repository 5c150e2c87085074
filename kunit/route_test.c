// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the routes= parameter (module/route.c): LNet's syntax
 * with hops and priorities, every malformed entry refused with a message
 * naming it, and the choice among several gateways.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <uapi/o2lnd.h>
#include "nid.h"
#include "wire.h"
#include "route.h"

#define O2T_NET_O2IB0	0x00050000U
#define O2T_NET_O2IB1	0x00050001U
#define O2T_NET_O2IB2	0x00050002U
/* 192.168.1.2@o2ib0, 192.168.1.3@o2ib0, 10.0.0.1@o2ib2 */
#define O2T_GW_A	0x00050000c0a80102ULL
#define O2T_GW_B	0x00050000c0a80103ULL
#define O2T_GW_C	0x000500020a000001ULL

static void routes_in_lnet_syntax_parse(struct kunit *test)
{
	static const char in[] =
		"o2ib1 192.168.1.2@o2ib; o2ib1 2 192.168.1.3@o2ib0:3\no2ib2 192.168.1.2@o2ib ;";
	struct o2_route_spec r[O2_MAX_ROUTES];
	char err[128] = "";
	int n;

	n = o2_routes_parse(in, r, O2_MAX_ROUTES, err, sizeof(err));
	KUNIT_ASSERT_EQ_MSG(test, n, 3, "%s", err);
	KUNIT_EXPECT_EQ(test, r[0].net, O2T_NET_O2IB1);
	KUNIT_EXPECT_EQ(test, r[0].gw, O2T_GW_A);
	KUNIT_EXPECT_EQ(test, r[0].hops, 1U);
	KUNIT_EXPECT_FALSE(test, r[0].hops_given);
	KUNIT_EXPECT_EQ(test, r[0].priority, 0U);
	KUNIT_EXPECT_EQ(test, r[1].net, O2T_NET_O2IB1);
	KUNIT_EXPECT_EQ(test, r[1].gw, O2T_GW_B);
	KUNIT_EXPECT_EQ(test, r[1].hops, 2U);
	KUNIT_EXPECT_TRUE(test, r[1].hops_given);
	KUNIT_EXPECT_EQ(test, r[1].priority, 3U);
	KUNIT_EXPECT_EQ(test, r[2].net, O2T_NET_O2IB2);
	KUNIT_EXPECT_EQ(test, o2_routes_parse("", r, O2_MAX_ROUTES, err,
					      sizeof(err)), 0);
	KUNIT_EXPECT_EQ(test, o2_routes_parse(";\n;", r, O2_MAX_ROUTES, err,
					      sizeof(err)), 0);
}

static void malformed_routes_are_refused_with_a_reason(struct kunit *test)
{
	static const struct {
		const char *in;
		const char *why;
	} bad[] = {
		{ "tcp1 192.168.1.2@o2ib", "expected an o2ib network" },
		{ "o2ib1", "no gateway" },
		{ "o2ib1 0 192.168.1.2@o2ib", "bad hop count" },
		{ "o2ib1 256 192.168.1.2@o2ib", "bad hop count" },
		{ "o2ib1 x 192.168.1.2@o2ib", "bad hop count" },
		{ "o2ib1 192.168.1.2", "bad hop count" },
		{ "o2ib1 192.168.1.2@tcp", "expected a gateway" },
		{ "o2ib1 0@lo", "expected a gateway" },
		{ "o2ib1 192.168.1.2@o2ib:x", "expected a gateway" },
		{ "o2ib1 192.168.1.2@o2ib:", "expected a gateway" },
		{ "o2ib1 2", "expected a gateway" },
		{ "o2ib1 192.168.1.2@o2ib1", "on that network itself" },
		{ "o2ib1 192.168.1.2@o2ib extra", "garbage" },
		{ "o2ib1 192.168.1.2@o2ib; o2ib1 192.168.1.2@o2ib0",
		  "given twice" },
		{ "o2ib1 300.1.1.1@o2ib", "expected a gateway" },
	};
	struct o2_route_spec r[O2_MAX_ROUTES];
	char err[128];
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		KUNIT_EXPECT_EQ_MSG(test, o2_routes_parse(bad[i].in, r,
							  O2_MAX_ROUTES, err,
							  sizeof(err)),
				    -EINVAL, "accepted '%s'", bad[i].in);
		KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(err, bad[i].why),
					  "'%s' gave '%s'", bad[i].in, err);
	}
}

static void more_routes_than_room_are_refused(struct kunit *test)
{
	struct o2_route_spec r[2];
	char err[128] = "";

	KUNIT_EXPECT_EQ(test, o2_routes_parse("o2ib1 192.168.1.2@o2ib; "
					      "o2ib2 192.168.1.2@o2ib; "
					      "o2ib3 192.168.1.2@o2ib",
					      r, 2, err, sizeof(err)),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "more than 2 routes"));
}

static void the_best_reachable_gateway_is_picked(struct kunit *test)
{
	const struct o2_route_spec r[] = {
		{ .net = O2T_NET_O2IB1, .hops = 3, .gw = O2T_GW_A },
		{ .net = O2T_NET_O2IB1, .hops = 1, .gw = O2T_GW_B },
		{ .net = O2T_NET_O2IB1, .hops = 1, .gw = O2T_GW_C },
		{ .net = O2T_NET_O2IB2, .hops = 1, .priority = 1,
		  .gw = O2T_GW_A },
		{ .net = O2T_NET_O2IB2, .hops = 5, .priority = 0,
		  .gw = O2T_GW_B },
	};
	const u32 local[] = { O2T_NET_O2IB0 };
	u8 down[ARRAY_SIZE(r)] = {};

	/* fewest hops; the o2ib2 gateway is not on a local network */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 1);
	/* priority before hops */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB2,
					    local, 1, down), 4);
	/* a gateway that is down is avoided while another is up... */
	down[1] = O2_ROUTE_DOWN;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 0);
	/* ...and still used when none is, so that traffic probes it */
	down[0] = O2_ROUTE_DOWN;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 1);
	/* no route, or no local network */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), 0x00050007U,
					    local, 1, down), -1);
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 0, down), -1);
}

static void a_dead_route_is_never_picked(struct kunit *test)
{
	const struct o2_route_spec r[] = {
		{ .net = O2T_NET_O2IB1, .hops = 1, .gw = O2T_GW_A },
		{ .net = O2T_NET_O2IB1, .hops = 1, .priority = 5,
		  .gw = O2T_GW_B },
	};
	const u32 local[] = { O2T_NET_O2IB0 };
	u8 state[ARRAY_SIZE(r)] = { O2_ROUTE_DEAD, O2_ROUTE_DOWN };

	/* a down route is a last resort; a dead one is no resort */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, state), 1);
	state[1] = O2_ROUTE_DEAD;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, state), -1);
	/* and it comes back when its gateway says so */
	state[0] = O2_ROUTE_UP;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, state), 0);
}

/* the ping info of gateway A: o2ib0 up, o2ib1 with status @st1 */
static void o2t_gw_view(struct o2_ping_view *v, u32 features, u32 st1)
{
	memset(v, 0, sizeof(*v));
	v->features = features;
	v->n = 2;
	v->nnis = 2;
	v->ni[0].nid = O2T_GW_A;
	v->ni[0].status = O2LND_NI_STATUS_UP;
	v->ni[1].nid = 0x00050001c0a80202ULL;	/* 192.168.2.2@o2ib1 */
	v->ni[1].status = st1;
}

static void a_gateway_is_judged_by_its_ping_info_as_lnet_does(struct kunit *test)
{
	const u32 feat = O2_PING_FEAT_BASE | O2_PING_FEAT_NI_STATUS |
			 O2_PING_FEAT_MULTI_RAIL | O2_PING_FEAT_DISCOVERY;
	struct o2_route_spec one = { .net = O2T_NET_O2IB1, .hops = 1,
				     .hops_given = true, .gw = O2T_GW_A };
	struct o2_route_spec far = { .net = O2T_NET_O2IB2, .hops = 1,
				     .gw = O2T_GW_A };
	struct o2_ping_view *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	o2t_gw_view(v, feat, O2LND_NI_STATUS_UP);
	KUNIT_EXPECT_TRUE(test, o2_route_gw_alive(&one, v));
	/* a gateway that does not forward takes every route down */
	o2t_gw_view(v, feat | O2_PING_FEAT_RTE_DISABLED, O2LND_NI_STATUS_UP);
	KUNIT_EXPECT_FALSE(test, o2_route_gw_alive(&one, v));
	KUNIT_EXPECT_FALSE(test, o2_route_gw_alive(&far, v));
	/* its NI on the route's network down: that route goes down */
	o2t_gw_view(v, feat, O2LND_NI_STATUS_DOWN);
	KUNIT_EXPECT_FALSE(test, o2_route_gw_alive(&one, v));
	one.hops_given = false;
	KUNIT_EXPECT_FALSE(test, o2_route_gw_alive(&one, v));
	/* no NI on o2ib2: multi-hop unless hops=1 was given (LNet's rule) */
	KUNIT_EXPECT_TRUE(test, o2_route_gw_alive(&far, v));
	far.hops_given = true;
	KUNIT_EXPECT_FALSE(test, o2_route_gw_alive(&far, v));
	far.hops = 2;
	KUNIT_EXPECT_TRUE(test, o2_route_gw_alive(&far, v));
	/* no NI status (an old LNet): only RTE_DISABLED counts */
	o2t_gw_view(v, O2_PING_FEAT_BASE, O2LND_NI_STATUS_DOWN);
	KUNIT_EXPECT_TRUE(test, o2_route_gw_alive(&one, v));
}

static struct kunit_case o2_route_cases[] = {
	KUNIT_CASE(routes_in_lnet_syntax_parse),
	KUNIT_CASE(malformed_routes_are_refused_with_a_reason),
	KUNIT_CASE(more_routes_than_room_are_refused),
	KUNIT_CASE(the_best_reachable_gateway_is_picked),
	KUNIT_CASE(a_dead_route_is_never_picked),
	KUNIT_CASE(a_gateway_is_judged_by_its_ping_info_as_lnet_does),
	{}
};

static struct kunit_suite o2_route_suite = {
	.name = "o2lnd_routes",
	.test_cases = o2_route_cases,
};

kunit_test_suites(&o2_route_suite);
