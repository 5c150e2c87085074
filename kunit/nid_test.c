// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: NID and network parsing and formatting (module/nid.c).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <uapi/o2lnd.h>
#include "nid.h"
#include "o2lnd_kunit.h"

struct o2t_nid_case {
	const char *str;
	u64 nid;
};

static const struct o2t_nid_case o2t_valid[] = {
	{ "192.168.1.1@o2ib0", O2T_NID_A },
	{ "192.168.1.2@o2ib0", O2T_NID_B },
	{ "10.0.0.2@o2ib3", 0x000500030a000002ULL },
	{ "0.0.0.0@o2ib0", 0x0005000000000000ULL },
	{ "255.255.255.255@o2ib0", 0x00050000ffffffffULL },
	{ "1.2.3.4@o2ib65534", 0x0005fffe01020304ULL },
	{ "0@lo", O2T_NID_LO },
};

static void nid_parse_accepts_valid_nids(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_valid); i++) {
		u64 nid = 0;

		KUNIT_EXPECT_EQ_MSG(test, o2_nid_parse(o2t_valid[i].str, &nid),
				    0, "%s", o2t_valid[i].str);
		KUNIT_EXPECT_EQ_MSG(test, nid, o2t_valid[i].nid, "%s",
				    o2t_valid[i].str);
	}
}

static void nid_parse_accepts_bare_o2ib_as_network_zero(struct kunit *test)
{
	u64 nid;

	KUNIT_ASSERT_EQ(test, o2_nid_parse("192.168.1.1@o2ib", &nid), 0);
	KUNIT_EXPECT_EQ(test, nid, O2T_NID_A);
	KUNIT_ASSERT_EQ(test, o2_nid_parse("192.168.1.1@o2ib00", &nid), 0);
	KUNIT_EXPECT_EQ(test, nid, O2T_NID_A);
}

static void nid_parse_rejects_malformed_strings(struct kunit *test)
{
	static const char * const bad[] = {
		"", "@", "@o2ib0", "192.168.1.1", "192.168.1.1@",
		"192.168.1@o2ib0", "192.168.1.1.1@o2ib0", "192..168.1@o2ib0",
		".192.168.1@o2ib0", "192.168.1.@o2ib0", "192.168.1.256@o2ib0",
		"256.0.0.0@o2ib0", "4294967296.0.0.0@o2ib0",
		"192.168.1.-1@o2ib0", "192.168.1.x@o2ib0", "a.b.c.d@o2ib0",
		"192.168.1.1@tcp0", "192.168.1.1@tcp", "192.168.1.1@O2IB0",
		"192.168.1.1@o2ib-1", "192.168.1.1@o2ibx", "192.168.1.1@o2ib0 ",
		"192.168.1.1@o2ib 0", "192.168.1.1@o2ib65535",
		"192.168.1.1@o2ib4294967296", "192.168.1.1@o2ib0@o2ib0",
		"1.2.3@4@o2ib0", "1@lo", "00@lo", "@lo", "0@lo0",
		"192.168.1.1@lo", "000000000001.2.3.4@o2ib0",
		"+1.2.3.4@o2ib0", "1.2.3.+4@o2ib0", "1.+2.3.4@o2ib0",
		"1.2.3.4@o2ib+1", "+0@lo",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		u64 nid = 0x1234;

		KUNIT_EXPECT_EQ_MSG(test, o2_nid_parse(bad[i], &nid), -EINVAL,
				    "\"%s\"", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, nid, 0x1234ULL,
				    "\"%s\" wrote the output", bad[i]);
	}
}

static void nid_format_always_names_the_network(struct kunit *test)
{
	char buf[O2_NIDSTR_SIZE];
	int i;

	for (i = 0; i < ARRAY_SIZE(o2t_valid); i++)
		KUNIT_EXPECT_STREQ(test, o2_nid_format(o2t_valid[i].nid, buf,
						       sizeof(buf)),
				   o2t_valid[i].str);
}

static void nid_format_of_special_and_unknown_nids(struct kunit *test)
{
	char buf[O2_NIDSTR_SIZE];

	KUNIT_EXPECT_STREQ(test, o2_nid_format(O2LND_NID_ANY, buf,
					       sizeof(buf)), "<?>");
	KUNIT_EXPECT_STREQ(test, o2_nid_format(O2LND_LO_NID, buf, sizeof(buf)),
			   "0@lo");
	/* an LND type o2lnd does not speak (2 = tcp) */
	KUNIT_EXPECT_STREQ(test, o2_nid_format(0x0002000100000007ULL, buf,
					       sizeof(buf)), "7@<2:1>");
}

static void nid_format_truncates_into_small_buffers(struct kunit *test)
{
	char buf[O2_NIDSTR_SIZE];

	memset(buf, 'x', sizeof(buf));
	KUNIT_EXPECT_STREQ(test, o2_nid_format(O2T_NID_A, buf, 8), "192.168");
	KUNIT_EXPECT_EQ(test, buf[8], 'x');
	KUNIT_EXPECT_STREQ(test, o2_nid_format(O2T_NID_A, buf, 1), "");
	/* the longest NID fits O2_NIDSTR_SIZE */
	KUNIT_EXPECT_STREQ(test, o2_nid_format(0x0005fffeffffffffULL, buf,
					       sizeof(buf)),
			   "255.255.255.255@o2ib65534");
}

static void nid_round_trips_format_then_parse(struct kunit *test)
{
	static const u64 nids[] = {
		O2T_NID_A, O2T_NID_LO, 0x0005000000000000ULL,
		0x00050000ffffffffULL, 0x0005fffe00000001ULL,
		0x00050001800000ffULL,
	};
	char buf[O2_NIDSTR_SIZE];
	int i;

	for (i = 0; i < ARRAY_SIZE(nids); i++) {
		u64 back = 0;

		o2_nid_format(nids[i], buf, sizeof(buf));
		KUNIT_EXPECT_EQ_MSG(test, o2_nid_parse(buf, &back), 0, "%s",
				    buf);
		KUNIT_EXPECT_EQ_MSG(test, back, nids[i], "%s", buf);
	}
}

static void nid_helpers_split_and_join(struct kunit *test)
{
	u32 net = o2_make_net(O2LND_NET_TYPE_O2IB, 3);

	KUNIT_EXPECT_EQ(test, net, 0x00050003U);
	KUNIT_EXPECT_EQ(test, o2_net_type(net), (u32)O2LND_NET_TYPE_O2IB);
	KUNIT_EXPECT_EQ(test, o2_net_num(net), 3U);
	KUNIT_EXPECT_EQ(test, o2_make_nid(net, 0x0a000002), 0x000500030a000002ULL);
	KUNIT_EXPECT_EQ(test, o2_nid_net(O2T_NID_A), 0x00050000U);
	KUNIT_EXPECT_EQ(test, o2_nid_addr(O2T_NID_A), 0xc0a80101U);
	/* the network number is masked to 16 bits */
	KUNIT_EXPECT_EQ(test, o2_make_net(O2LND_NET_TYPE_O2IB, 0x10001),
			0x00050001U);
	KUNIT_EXPECT_EQ(test, O2LND_LO_NID, O2T_NID_LO);
}

static void net_parse_uses_only_len_bytes(struct kunit *test)
{
	u32 net = 0;

	KUNIT_EXPECT_EQ(test, o2_net_parse("o2ib12,o2ib1", 6, &net), 0);
	KUNIT_EXPECT_EQ(test, net, o2_make_net(O2LND_NET_TYPE_O2IB, 12));
	KUNIT_EXPECT_EQ(test, o2_net_parse("o2ib0(eth0)", 5, &net), 0);
	KUNIT_EXPECT_EQ(test, net, o2_make_net(O2LND_NET_TYPE_O2IB, 0));
	KUNIT_EXPECT_EQ(test, o2_net_parse("o2ib7", 4, &net), 0);
	KUNIT_EXPECT_EQ(test, net, o2_make_net(O2LND_NET_TYPE_O2IB, 0));
	KUNIT_EXPECT_EQ(test, o2_net_parse("lo0", 2, &net), 0);
	KUNIT_EXPECT_EQ(test, net, o2_make_net(O2LND_NET_TYPE_LO, 0));
	KUNIT_EXPECT_EQ(test, o2_net_parse("o2ib65534", 9, &net), 0);
	KUNIT_EXPECT_EQ(test, net, o2_make_net(O2LND_NET_TYPE_O2IB, 65534));
}

static void net_parse_rejects_bad_names(struct kunit *test)
{
	static const char * const bad[] = {
		"", "o", "o2i", "o2ib65535", "o2ib99999999999", "o2ib-1",
		"o2ibx", "O2IB0", "tcp0", "lo0", "l", "o2ib0x", "ib0",
		"o2ib+1", "o2ib+0",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		u32 net = 0x77;

		KUNIT_EXPECT_EQ_MSG(test, o2_net_parse(bad[i], strlen(bad[i]),
						       &net),
				    -EINVAL, "\"%s\"", bad[i]);
		KUNIT_EXPECT_EQ(test, net, 0x77U);
	}
}

static void net_format_names_each_type(struct kunit *test)
{
	char buf[16];

	KUNIT_EXPECT_STREQ(test, o2_net_format(0x00050000, buf, sizeof(buf)),
			   "o2ib0");
	KUNIT_EXPECT_STREQ(test, o2_net_format(0x0005fffe, buf, sizeof(buf)),
			   "o2ib65534");
	KUNIT_EXPECT_STREQ(test, o2_net_format(0x00090000, buf, sizeof(buf)),
			   "lo");
	KUNIT_EXPECT_STREQ(test, o2_net_format(0x00020001, buf, sizeof(buf)),
			   "<2:1>");
}

static struct kunit_case o2_nid_cases[] = {
	KUNIT_CASE(nid_parse_accepts_valid_nids),
	KUNIT_CASE(nid_parse_accepts_bare_o2ib_as_network_zero),
	KUNIT_CASE(nid_parse_rejects_malformed_strings),
	KUNIT_CASE(nid_format_always_names_the_network),
	KUNIT_CASE(nid_format_of_special_and_unknown_nids),
	KUNIT_CASE(nid_format_truncates_into_small_buffers),
	KUNIT_CASE(nid_round_trips_format_then_parse),
	KUNIT_CASE(nid_helpers_split_and_join),
	KUNIT_CASE(net_parse_uses_only_len_bytes),
	KUNIT_CASE(net_parse_rejects_bad_names),
	KUNIT_CASE(net_format_names_each_type),
	{}
};

static struct kunit_suite o2_nid_suite = {
	.name = "o2lnd_nid",
	.test_cases = o2_nid_cases,
};

kunit_test_suite(o2_nid_suite);
