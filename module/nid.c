// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet NID parsing and formatting.
 *
 * Only the two network types o2lnd speaks are known: "o2ib" (type 5,
 * address is an IPv4 address in host order) and "lo" (type 9, address 0).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/kstrtox.h>
#include <linux/ctype.h>
#include <uapi/o2lnd.h>
#include "nid.h"

/**
 * o2_parse_u32() - parse a decimal number of @len characters
 * @s: the digits (not necessarily NUL-terminated; no sign, no blanks)
 * @len: their count
 * @max: the largest value accepted
 * @val: out: the value
 *
 * Return: 0 or -EINVAL.
 */
int o2_parse_u32(const char *s, size_t len, u32 max, u32 *val)
{
	char tmp[12];

	/* kstrtou32() takes a leading '+': a NID has digits only. */
	if (len == 0 || len >= sizeof(tmp) || !isdigit(s[0]))
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (kstrtou32(tmp, 10, val) || *val > max)
		return -EINVAL;
	return 0;
}

/**
 * o2_net_parse() - parse a network name such as "o2ib0", "o2ib" or "lo"
 * @str: the name (not necessarily NUL-terminated)
 * @len: its length
 * @net: out: the LNet network number
 *
 * Return: 0 or -EINVAL.
 */
int o2_net_parse(const char *str, size_t len, u32 *net)
{
	u32 num = 0;

	if (len == 2 && !memcmp(str, "lo", 2)) {
		*net = o2_make_net(O2LND_NET_TYPE_LO, 0);
		return 0;
	}
	if (len < 4 || memcmp(str, "o2ib", 4))
		return -EINVAL;
	if (len > 4 && o2_parse_u32(str + 4, len - 4, 0xfffe, &num))
		return -EINVAL;
	*net = o2_make_net(O2LND_NET_TYPE_O2IB, num);
	return 0;
}

/**
 * o2_nid_parse() - parse "a.b.c.d@o2ibN" or "0@lo"
 * @str: NUL-terminated string
 * @nid: out: the NID
 *
 * Return: 0 or -EINVAL.
 */
int o2_nid_parse(const char *str, u64 *nid)
{
	const char *at = strchr(str, '@');
	u32 net, addr = 0, part;
	const char *p = str;
	int i;

	if (!at || o2_net_parse(at + 1, strlen(at + 1), &net))
		return -EINVAL;
	if (o2_net_type(net) == O2LND_NET_TYPE_LO) {
		if (at - str != 1 || str[0] != '0')
			return -EINVAL;
		*nid = o2_make_nid(net, 0);
		return 0;
	}
	for (i = 0; i < 4; i++) {
		const char *end = (i < 3) ? strchr(p, '.') : at;

		if (!end || end > at)
			return -EINVAL;
		if (o2_parse_u32(p, end - p, 255, &part))
			return -EINVAL;
		addr = (addr << 8) | part;
		p = end + 1;
	}
	*nid = o2_make_nid(net, addr);
	return 0;
}

/**
 * o2_net_format() - format a network number as "o2ibN" / "lo"
 * @net: the network
 * @buf: output buffer
 * @size: its size
 *
 * Return: @buf.
 */
char *o2_net_format(u32 net, char *buf, size_t size)
{
	switch (o2_net_type(net)) {
	case O2LND_NET_TYPE_O2IB:
		snprintf(buf, size, "o2ib%u", o2_net_num(net));
		break;
	case O2LND_NET_TYPE_LO:
		snprintf(buf, size, "lo");
		break;
	default:
		snprintf(buf, size, "<%u:%u>", o2_net_type(net), o2_net_num(net));
		break;
	}
	return buf;
}

/**
 * o2_nid_format() - format a NID as "a.b.c.d@o2ibN" or "0@lo"
 * @nid: the NID
 * @buf: output buffer, O2_NIDSTR_SIZE bytes are enough
 * @size: its size
 *
 * Return: @buf.
 */
char *o2_nid_format(u64 nid, char *buf, size_t size)
{
	u32 addr = o2_nid_addr(nid);
	char net[16];

	o2_net_format(o2_nid_net(nid), net, sizeof(net));
	if (nid == O2LND_NID_ANY)
		snprintf(buf, size, "<?>");
	else if (o2_net_type(o2_nid_net(nid)) == O2LND_NET_TYPE_O2IB)
		snprintf(buf, size, "%u.%u.%u.%u@%s", addr >> 24,
			 (addr >> 16) & 0xff, (addr >> 8) & 0xff, addr & 0xff,
			 net);
	else
		snprintf(buf, size, "%u@%s", addr, net);
	return buf;
}
