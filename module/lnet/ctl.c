// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the control device /dev/o2lnd and its ioctls (see
 * include/uapi/o2lnd.h for the rules enforced here).  One table,
 * o2_ctl_cmds[], indexed by the command number, says for every command its
 * handler, the smallest size it accepts (the struct's first published
 * size), the kernel's size, whether it needs CAP_NET_ADMIN and whether it
 * answers any ABI (VERSION); o2_ctl_ioctl() applies the rules of the uapi
 * header from it and the handlers see only a checked, zero-extended
 * kernel copy of the argument, which they turn into the reply in place.
 * Views and ping need no capability (what an unprivileged lctl may do);
 * PEER_CLOSE, DISCOVER (it pushes our NIDs to the peer), NET_ADD, NET_DEL
 * and the fault rules need CAP_NET_ADMIN, checked before the
 * argument is read.  Every reply is built in a zeroed kernel buffer, so
 * no padding or stale memory reaches userspace.
 */
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/capability.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/nospec.h>
#include "lnet.h"

/*
 * The wire layout is the one ABI 5 published: the first counter of each
 * list at its old offset, no struct smaller than its VER0 size (a struct
 * may grow at its end: a new counter is a new last line of its list).
 */
static_assert(sizeof(struct o2lnd_ioc_version) == O2LND_IOC_VERSION_SIZE_VER1);
static_assert(offsetof(struct o2lnd_ioc_version, abi_version_min) ==
	      O2LND_IOC_VERSION_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_ping) >= O2LND_IOC_PING_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_net) >= O2LND_IOC_NET_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_peer) >= O2LND_IOC_PEER_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_conn) >= O2LND_IOC_CONN_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_peer_close) >=
	      O2LND_IOC_PEER_CLOSE_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_fault) >= O2LND_IOC_FAULT_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_brw) >= O2LND_IOC_BRW_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_route) >= O2LND_IOC_ROUTE_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_routing) >=
	      O2LND_IOC_ROUTING_SIZE_VER0);
static_assert(offsetof(struct o2lnd_ioc_net, send_count) == 176);
static_assert(offsetof(struct o2lnd_ioc_net, tx_timeouts) == 288);
static_assert(offsetof(struct o2lnd_ioc_net, rdma_bytes) == 352);
static_assert(offsetof(struct o2lnd_ioc_peer, races_received) == 80);
static_assert(offsetof(struct o2lnd_ioc_peer, stale_closes) == 124);
static_assert(offsetof(struct o2lnd_ioc_peer, send_count) == 136);
static_assert(offsetof(struct o2lnd_ioc_peer, tx_timeouts) == 216);
static_assert(offsetof(struct o2lnd_ioc_conn, keepalives) == 132);
static_assert(sizeof(struct o2lnd_ioc_conn) == O2LND_IOC_CONN_SIZE_VER1);
static_assert(offsetof(struct o2lnd_ioc_conn, comp_vector) ==
	      O2LND_IOC_CONN_SIZE_VER0);
static_assert(offsetof(struct o2lnd_ioc_conn, send_count) == 144);
static_assert(offsetof(struct o2lnd_ioc_brw, messages) ==
	      O2LND_IOC_BRW_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_brw) == O2LND_IOC_BRW_SIZE_VER1);
static_assert(offsetof(struct o2lnd_ioc_route, sent) == 48);
static_assert(offsetof(struct o2lnd_ioc_routing, forwarded) == 112);
static_assert(sizeof(struct o2lnd_ioc_net) == O2LND_IOC_NET_SIZE_VER2);
static_assert(offsetof(struct o2lnd_ioc_net, health) ==
	      O2LND_IOC_NET_SIZE_VER0);
static_assert(offsetof(struct o2lnd_ioc_net, resend_count) ==
	      O2LND_IOC_NET_SIZE_VER1);
static_assert(sizeof(struct o2lnd_ioc_lpeer) == O2LND_IOC_LPEER_SIZE_VER0);
static_assert(sizeof(struct o2lnd_ioc_net_cfg) == O2LND_IOC_NET_CFG_SIZE_VER0);
static_assert(sizeof(struct o2lnd_peer_nid) == 32);
static_assert(O2_PING_FEAT_MULTI_RAIL == O2LND_PING_FEAT_MULTI_RAIL);
static_assert(O2_PING_FEAT_DISCOVERY == O2LND_PING_FEAT_DISCOVERY);
static_assert(O2_PING_FEAT_NI_STATUS == O2LND_PING_FEAT_NI_STATUS);
static_assert(O2_PING_FEAT_RTE_DISABLED == O2LND_PING_FEAT_RTE_DISABLED);

/* ---- handlers: @arg is the checked, zero-extended kernel copy ---- */

static void o2_ctl_clear(void *arg, size_t size)
{
	memset(arg + sizeof(struct o2lnd_ioc_hdr), 0,
	       size - sizeof(struct o2lnd_ioc_hdr));
}

static long o2_ctl_version(void *arg)
{
	struct o2lnd_ioc_version *v = arg;

	o2_ctl_clear(v, sizeof(*v));
	v->abi_version = O2LND_ABI_VERSION;
	v->abi_version_min = O2LND_ABI_VERSION_MIN;
	strscpy(v->module_version, O2_VERSION, sizeof(v->module_version));
	return 0;
}

/*
 * PING errors: bad target (NID_ANY, not o2ib, 0@lo) -EINVAL; src_nid not
 * NID_ANY and not one of our NIDs -EINVAL; src_nid on another network
 * than the target, or no NI on the target's network -EHOSTUNREACH.
 */
static long o2_ctl_ping(void *arg)
{
	struct o2lnd_ioc_ping *p = arg;
	u64 nid, src;
	u32 timeout, max_ids;

	nid = p->nid;
	src = p->src_nid;
	timeout = p->timeout_ms ? p->timeout_ms : O2LND_PING_TIMEOUT_DEFAULT_MS;
	max_ids = p->max_ids;
	if (nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(nid)) != O2LND_NET_TYPE_O2IB ||
	    timeout > O2LND_PING_TIMEOUT_MAX_MS ||
	    !max_ids || max_ids > O2LND_PING_MAX_IDS)
		return -EINVAL;
	o2_ctl_clear(p, sizeof(*p));
	p->nid = nid;
	p->src_nid = src;
	p->timeout_ms = timeout;
	p->max_ids = max_ids;
	return o2_ping(nid, src, true, timeout, p);
}

/*
 * BRW errors: op not WRITE/READ, size above O2LND_BRW_MAX_SIZE, unknown
 * flags, nonzero pad, timeout above the maximum, a target that is not
 * o2ib: -EINVAL; then what o2_brw() returns.
 */
static long o2_ctl_brw(void *arg)
{
	struct o2lnd_ioc_brw *b = arg, a = *b;
	u32 timeout;

	timeout = a.timeout_ms ? a.timeout_ms : O2LND_PING_TIMEOUT_DEFAULT_MS;
	if ((a.op != O2LND_BRW_WRITE && a.op != O2LND_BRW_READ) ||
	    a.size > O2LND_BRW_MAX_SIZE ||
	    (a.flags & ~(O2LND_BRW_F_CHECK | O2LND_BRW_F_ACK)) ||
	    a.pad || a.pad2 || timeout > O2LND_PING_TIMEOUT_MAX_MS ||
	    a.nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(a.nid)) != O2LND_NET_TYPE_O2IB)
		return -EINVAL;
	o2_ctl_clear(b, sizeof(*b));
	b->nid = a.nid;
	b->src_nid = a.src_nid;
	b->op = a.op;
	b->size = a.size;
	b->timeout_ms = timeout;
	b->flags = a.flags;
	b->seed = a.seed;
	return o2_brw(a.nid, a.src_nid, a.op, a.size, timeout, a.flags, a.seed,
		      b);
}

static long o2_ctl_net_show(void *arg)
{
	struct o2lnd_ioc_net *n = arg;
	u32 index = n->index;
	struct o2_ni *ni;

	o2_ctl_clear(n, sizeof(*n));
	n->index = index;
	if (index == 0) {
		/* LNet always lists the loopback NI 0@lo first. */
		n->count = o2_nnis + 1;
		n->nid = O2LND_LO_NID;
		n->status = O2LND_NI_STATUS_UP;
		n->health = O2LND_HEALTH_MAX;
		strscpy(n->net, "lo", sizeof(n->net));
		return 0;
	}
	ni = o2_ni_by_index(index);
	if (!ni)
		return -ENOENT;
	o2_ni_stats(ni, n);
	n->count = o2_nnis + 1;
	return 0;
}

static long o2_ctl_peer_show(void *arg)
{
	struct o2lnd_ioc_peer *p = arg;
	u32 ni_index = p->ni_index, index = p->index;

	o2_ctl_clear(p, sizeof(*p));
	p->ni_index = ni_index;
	p->index = index;
	return o2_peer_show(ni_index, index, p);
}

static long o2_ctl_conn_show(void *arg)
{
	struct o2lnd_ioc_conn *c = arg;
	u32 ni_index = c->ni_index, index = c->index;

	o2_ctl_clear(c, sizeof(*c));
	c->ni_index = ni_index;
	c->index = index;
	return o2_conn_show(ni_index, index, c);
}

static long o2_ctl_route_show(void *arg)
{
	struct o2lnd_ioc_route *r = arg;
	u32 index = r->index;

	o2_ctl_clear(r, sizeof(*r));
	r->index = index;
	return o2_route_show(index, r);
}

static long o2_ctl_routing_show(void *arg)
{
	struct o2lnd_ioc_routing *r = arg;

	o2_ctl_clear(r, sizeof(*r));
	o2_routing_show(r);
	return 0;
}

/*
 * LPEER_SHOW: a nonzero @timeout_ms or @pad is -EINVAL; @nid is
 * O2LND_NID_ANY (by @index) or any NID (-ENOENT when no peer lists it).
 */
static long o2_ctl_lpeer_show(void *arg)
{
	struct o2lnd_ioc_lpeer *p = arg;
	u32 index = p->index;
	u64 nid = p->nid;
	long rc;

	if (p->timeout_ms || p->pad)
		return -EINVAL;
	rc = o2_lpeer_show(index, nid, p);
	p->index = index;
	p->nid = nid;
	return rc;
}

/*
 * DISCOVER: @nid must be an o2ib NID, @timeout_ms at most the ping
 * maximum (0: the default), @index and @pad 0 (-EINVAL); then what
 * o2_discover() returns.
 */
static long o2_ctl_discover(void *arg)
{
	struct o2lnd_ioc_lpeer *p = arg;
	u32 timeout = p->timeout_ms ? p->timeout_ms :
		O2LND_PING_TIMEOUT_DEFAULT_MS;
	u64 nid = p->nid;
	long rc;

	if (p->index || p->pad || nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(nid)) != O2LND_NET_TYPE_O2IB ||
	    timeout > O2LND_PING_TIMEOUT_MAX_MS)
		return -EINVAL;
	rc = o2_discover(nid, timeout, p);
	p->nid = nid;
	p->timeout_ms = timeout;
	return rc;
}

/*
 * PEER_CLOSE: -EINVAL for a NID that is not o2ib or a nonzero pad;
 * @closed is an output, whatever it holds on input is ignored.
 */
static long o2_ctl_peer_close(void *arg)
{
	struct o2lnd_ioc_peer_close *pc = arg;

	if (pc->pad || pc->nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(pc->nid)) != O2LND_NET_TYPE_O2IB)
		return -EINVAL;
	return o2_peer_close(pc->nid, pc->local_nid, &pc->closed);
}

/*
 * FAULT_ADD validates the whole rule (o2_fault_validate()); DEL and LIST
 * read only their inputs (@id, @index) and @pad, and ignore what the
 * output fields hold.  A rule whose id cannot be copied out is removed
 * again (o2_ctl_fault_add_undo()), so a failed ADD adds nothing.
 */
static long o2_ctl_fault_add(void *arg)
{
	struct o2lnd_ioc_fault *f = arg;
	u32 id;
	long rc;

	rc = o2_fault_add(f, &id);
	if (!rc)
		f->id = id;
	return rc;
}

static void o2_ctl_fault_add_undo(void *arg)
{
	struct o2lnd_ioc_fault *f = arg;

	o2_fault_del(f->id);
}

static long o2_ctl_fault_del(void *arg)
{
	struct o2lnd_ioc_fault *f = arg;
	u32 id = f->id;
	long rc;

	if (f->pad)
		return -EINVAL;
	rc = o2_fault_del(id);
	if (rc)
		return rc;
	o2_ctl_clear(f, sizeof(*f));
	f->id = id;
	return 0;
}

static long o2_ctl_fault_list(void *arg)
{
	struct o2lnd_ioc_fault *f = arg;
	u32 index = f->index;

	if (f->pad)
		return -EINVAL;
	o2_ctl_clear(f, sizeof(*f));
	return o2_fault_get(index, f);
}

/* ---- the dispatcher ---- */

/*
 * NET_ADD, NET_DEL: @net and @ifname NUL-terminated within their fields,
 * @pad 0 (else -EINVAL); @nid and @count are outputs, whatever they hold
 * on input is ignored.  Then what o2_ni_add() and o2_ni_del() return.
 */
static long o2_ctl_net_cfg(struct o2lnd_ioc_net_cfg *c, bool add)
{
	long rc;

	if (c->pad || !memchr(c->net, 0, sizeof(c->net)) ||
	    !memchr(c->ifname, 0, sizeof(c->ifname)))
		return -EINVAL;
	c->nid = 0;
	c->count = 0;
	if (add) {
		rc = o2_ni_add(c->net, c->ifname, &c->nid);
		if (!rc)
			c->count = 1;
		return rc;
	}
	return o2_ni_del(c->net, c->ifname, &c->count, &c->nid);
}

static long o2_ctl_net_add(void *arg)
{
	return o2_ctl_net_cfg(arg, true);
}

/* the caller never learnt of the NI: a failed NET_ADD adds nothing */
static void o2_ctl_net_add_undo(void *arg)
{
	struct o2lnd_ioc_net_cfg *c = arg;
	u32 count;
	u64 nid;

	o2_ni_del(c->net, c->ifname, &count, &nid);
}

static long o2_ctl_net_del(void *arg)
{
	return o2_ctl_net_cfg(arg, false);
}

/**
 * struct o2_ctl_cmd - one ioctl of /dev/o2lnd
 * @handler: turns the checked argument into the reply in place; 0 or a
 *	negative errno (nothing is copied out then)
 * @undo: when the reply of a successful @handler cannot be copied out,
 *	undoes what it did (NULL: nothing to undo)
 * @min_size: the smallest hdr.size accepted: the struct's VER0 size
 * @size: the kernel's sizeof() the struct
 * @admin: needs CAP_NET_ADMIN (-EPERM before the argument is read)
 * @any_abi: VERSION: no abi_version, flags, reserved or tail check
 * @name: the command, for messages
 */
struct o2_ctl_cmd {
	long (*handler)(void *arg);
	void (*undo)(void *arg);
	u32 min_size;
	u32 size;
	bool admin;
	bool any_abi;
	const char *name;
};

#define O2_CTL_CMD(cmd, fn, type, ver0, adm)				\
	[_IOC_NR(O2LND_IOC_##cmd)] = {					\
		.handler = (fn), .min_size = (ver0),			\
		.size = sizeof(type), .admin = (adm), .name = #cmd,	\
	}

static const struct o2_ctl_cmd o2_ctl_cmds[] = {
	[_IOC_NR(O2LND_IOC_VERSION)] = {
		.handler = o2_ctl_version,
		.min_size = O2LND_IOC_VERSION_SIZE_VER0,
		.size = sizeof(struct o2lnd_ioc_version),
		.any_abi = true,
		.name = "VERSION",
	},
	O2_CTL_CMD(PING, o2_ctl_ping, struct o2lnd_ioc_ping,
		   O2LND_IOC_PING_SIZE_VER0, false),
	O2_CTL_CMD(NET_SHOW, o2_ctl_net_show, struct o2lnd_ioc_net,
		   O2LND_IOC_NET_SIZE_VER0, false),
	O2_CTL_CMD(PEER_SHOW, o2_ctl_peer_show, struct o2lnd_ioc_peer,
		   O2LND_IOC_PEER_SIZE_VER0, false),
	O2_CTL_CMD(CONN_SHOW, o2_ctl_conn_show, struct o2lnd_ioc_conn,
		   O2LND_IOC_CONN_SIZE_VER0, false),
	O2_CTL_CMD(PEER_CLOSE, o2_ctl_peer_close, struct o2lnd_ioc_peer_close,
		   O2LND_IOC_PEER_CLOSE_SIZE_VER0, true),
	[_IOC_NR(O2LND_IOC_FAULT_ADD)] = {
		.handler = o2_ctl_fault_add,
		.undo = o2_ctl_fault_add_undo,
		.min_size = O2LND_IOC_FAULT_SIZE_VER0,
		.size = sizeof(struct o2lnd_ioc_fault),
		.admin = true,
		.name = "FAULT_ADD",
	},
	O2_CTL_CMD(FAULT_DEL, o2_ctl_fault_del, struct o2lnd_ioc_fault,
		   O2LND_IOC_FAULT_SIZE_VER0, true),
	O2_CTL_CMD(FAULT_LIST, o2_ctl_fault_list, struct o2lnd_ioc_fault,
		   O2LND_IOC_FAULT_SIZE_VER0, true),
	O2_CTL_CMD(BRW, o2_ctl_brw, struct o2lnd_ioc_brw,
		   O2LND_IOC_BRW_SIZE_VER0, false),
	O2_CTL_CMD(ROUTE_SHOW, o2_ctl_route_show, struct o2lnd_ioc_route,
		   O2LND_IOC_ROUTE_SIZE_VER0, false),
	O2_CTL_CMD(ROUTING_SHOW, o2_ctl_routing_show, struct o2lnd_ioc_routing,
		   O2LND_IOC_ROUTING_SIZE_VER0, false),
	O2_CTL_CMD(LPEER_SHOW, o2_ctl_lpeer_show, struct o2lnd_ioc_lpeer,
		   O2LND_IOC_LPEER_SIZE_VER0, false),
	O2_CTL_CMD(DISCOVER, o2_ctl_discover, struct o2lnd_ioc_lpeer,
		   O2LND_IOC_LPEER_SIZE_VER0, true),
	[_IOC_NR(O2LND_IOC_NET_ADD)] = {
		.handler = o2_ctl_net_add, .undo = o2_ctl_net_add_undo,
		.min_size = O2LND_IOC_NET_CFG_SIZE_VER0,
		.size = sizeof(struct o2lnd_ioc_net_cfg), .admin = true,
		.name = "NET_ADD",
	},
	O2_CTL_CMD(NET_DEL, o2_ctl_net_del, struct o2lnd_ioc_net_cfg,
		   O2LND_IOC_NET_CFG_SIZE_VER0, true),
};

/*
 * Reads the caller's struct of hdr.size bytes into a zeroed kernel one of
 * @c->size (copy_struct_from_user(): zero-extends a smaller one, -E2BIG
 * for nonzero bytes past @c->size), after the size and header rules.
 * VERSION has no inputs, so bytes it does not know are ignored.
 */
static int o2_ctl_copy_in(const struct o2_ctl_cmd *c, void *karg,
			  void __user *uarg, u32 *usize)
{
	struct o2lnd_ioc_hdr *hdr = karg;
	u32 size;
	int rc;

	/* the whole header first: an unreadable one is -EFAULT */
	if (copy_from_user(hdr, uarg, sizeof(*hdr)))
		return -EFAULT;
	size = hdr->size;
	if (size < c->min_size || size % 8)
		return -EINVAL;
	if (size > O2LND_IOC_MAX_SIZE)
		return -E2BIG;
	if (c->any_abi) {
		if (copy_from_user(karg, uarg, min_t(u32, size, c->size)))
			return -EFAULT;
	} else {
		rc = copy_struct_from_user(karg, c->size, uarg, size);
		if (rc)
			return rc;
	}
	*usize = size;
	if (c->any_abi)
		return 0;
	if (hdr->abi_version < O2LND_ABI_VERSION_MIN ||
	    hdr->abi_version > O2LND_ABI_VERSION)
		return -EPROTO;
	if (hdr->flags || hdr->reserved)
		return -EINVAL;
	return 0;
}

static long o2_ctl_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct o2_ctl_cmd *c;
	struct o2lnd_ioc_hdr *hdr;
	unsigned int nr = _IOC_NR(cmd);
	u32 usize, out;
	void *karg;
	long rc;

	if (_IOC_TYPE(cmd) != O2LND_IOC_MAGIC || nr >= ARRAY_SIZE(o2_ctl_cmds))
		return -ENOTTY;
	c = &o2_ctl_cmds[array_index_nospec(nr, ARRAY_SIZE(o2_ctl_cmds))];
	if (!c->handler)
		return -ENOTTY;
	if (c->admin && !capable(CAP_NET_ADMIN))
		return -EPERM;
	karg = kzalloc(c->size, GFP_KERNEL);
	if (!karg)
		return -ENOMEM;
	rc = o2_ctl_copy_in(c, karg, uarg, &usize);
	if (!rc)
		rc = c->handler(karg);
	if (!rc) {
		out = min(usize, c->size);
		hdr = karg;
		hdr->abi_version = O2LND_ABI_VERSION;
		hdr->size = out;
		hdr->flags = 0;
		hdr->reserved = 0;
		if (copy_to_user(uarg, karg, out)) {
			if (c->undo)
				c->undo(karg);
			rc = -EFAULT;
		}
	}
	kfree(karg);
	return rc;
}

static const struct file_operations o2_ctl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = o2_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice o2_ctl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = O2LND_DEV_NAME,
	.fops = &o2_ctl_fops,
	.mode = 0666,
};

/**
 * o2_ctl_init() - register /dev/o2lnd
 *
 * Return: 0 or an errno.
 */
int o2_ctl_init(void)
{
	return misc_register(&o2_ctl_dev);
}

/**
 * o2_ctl_exit() - deregister /dev/o2lnd
 */
void o2_ctl_exit(void)
{
	misc_deregister(&o2_ctl_dev);
}
