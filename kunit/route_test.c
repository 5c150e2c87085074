// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the routes= parameter (module/route.c): LNet's syntax
 * with hops and priorities, every malformed entry refused with a message
 * naming it, and the choice among several gateways.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "nid.h"
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
	KUNIT_EXPECT_EQ(test, r[0].priority, 0U);
	KUNIT_EXPECT_EQ(test, r[1].net, O2T_NET_O2IB1);
	KUNIT_EXPECT_EQ(test, r[1].gw, O2T_GW_B);
	KUNIT_EXPECT_EQ(test, r[1].hops, 2U);
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
	bool down[ARRAY_SIZE(r)] = {};

	/* fewest hops; the o2ib2 gateway is not on a local network */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 1);
	/* priority before hops */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB2,
					    local, 1, down), 4);
	/* a gateway that is down is avoided while another is up... */
	down[1] = true;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 0);
	/* ...and still used when none is, so that traffic probes it */
	down[0] = true;
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 1, down), 1);
	/* no route, or no local network */
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), 0x00050007U,
					    local, 1, down), -1);
	KUNIT_EXPECT_EQ(test, o2_route_pick(r, ARRAY_SIZE(r), O2T_NET_O2IB1,
					    local, 0, down), -1);
}

static struct kunit_case o2_route_cases[] = {
	KUNIT_CASE(routes_in_lnet_syntax_parse),
	KUNIT_CASE(malformed_routes_are_refused_with_a_reason),
	KUNIT_CASE(more_routes_than_room_are_refused),
	KUNIT_CASE(the_best_reachable_gateway_is_picked),
	{}
};

static struct kunit_suite o2_route_suite = {
	.name = "o2lnd_routes",
	.test_cases = o2_route_cases,
};

kunit_test_suites(&o2_route_suite);
