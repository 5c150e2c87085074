// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the control device /dev/o2lnd and its ioctls (see
 * include/uapi/o2lnd.h for the rules enforced here).  Views and ping need
 * no capability (what an unprivileged lctl may do); PEER_CLOSE and the
 * fault rules need CAP_NET_ADMIN, checked before the argument is read.
 * Every reply is built in a zeroed kernel buffer, so no padding or stale
 * memory reaches userspace.
 */
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/capability.h>
#include "lnet.h"

/* Copy in the whole argument and check the common header. */
static int o2_ctl_copy_in(void *karg, size_t size, void __user *uarg,
			  bool check_abi)
{
	struct o2lnd_ioc_hdr *hdr = karg;

	if (copy_from_user(karg, uarg, size))
		return -EFAULT;
	if (hdr->size != size)
		return -EINVAL;
	if (!check_abi)
		return 0;
	if (hdr->abi_version != O2LND_ABI_VERSION)
		return -EPROTO;
	if (hdr->flags || hdr->reserved)
		return -EINVAL;
	return 0;
}

static int o2_ctl_copy_out(void __user *uarg, void *karg, size_t size)
{
	return copy_to_user(uarg, karg, size) ? -EFAULT : 0;
}

static void o2_ctl_hdr_out(struct o2lnd_ioc_hdr *hdr, size_t size)
{
	hdr->abi_version = O2LND_ABI_VERSION;
	hdr->size = size;
}

static long o2_ctl_version(void __user *uarg)
{
	struct o2lnd_ioc_version *v;
	long rc;

	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	rc = o2_ctl_copy_in(v, sizeof(*v), uarg, false);
	if (!rc) {
		memset(v, 0, sizeof(*v));
		o2_ctl_hdr_out(&v->hdr, sizeof(*v));
		v->abi_version = O2LND_ABI_VERSION;
		strscpy(v->module_version, O2_VERSION,
			sizeof(v->module_version));
		rc = o2_ctl_copy_out(uarg, v, sizeof(*v));
	}
	kfree(v);
	return rc;
}

/*
 * PING errors: bad target (NID_ANY, not o2ib, 0@lo) -EINVAL; src_nid not
 * NID_ANY and not one of our NIDs -EINVAL; src_nid on another network
 * than the target, or no NI on the target's network -EHOSTUNREACH.
 */
static long o2_ctl_ping(void __user *uarg)
{
	struct o2lnd_ioc_ping *p;
	u64 nid, src;
	u32 timeout, max_ids;
	long rc;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	rc = o2_ctl_copy_in(p, sizeof(*p), uarg, true);
	if (rc)
		goto out;
	nid = p->nid;
	src = p->src_nid;
	timeout = p->timeout_ms ? p->timeout_ms : O2LND_PING_TIMEOUT_DEFAULT_MS;
	max_ids = p->max_ids;
	if (nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(nid)) != O2LND_NET_TYPE_O2IB ||
	    timeout > O2LND_PING_TIMEOUT_MAX_MS ||
	    !max_ids || max_ids > O2LND_PING_MAX_IDS) {
		rc = -EINVAL;
		goto out;
	}
	memset(p, 0, sizeof(*p));
	o2_ctl_hdr_out(&p->hdr, sizeof(*p));
	p->nid = nid;
	p->src_nid = src;
	p->timeout_ms = timeout;
	p->max_ids = max_ids;
	rc = o2_ping(nid, src, timeout, p);
	if (!rc)
		rc = o2_ctl_copy_out(uarg, p, sizeof(*p));
out:
	kfree(p);
	return rc;
}

/*
 * BRW errors: op not WRITE/READ, size above O2LND_BRW_MAX_SIZE, unknown
 * flags, nonzero pad, timeout above the maximum, a target that is not
 * o2ib: -EINVAL; then what o2_brw() returns.
 */
static long o2_ctl_brw(void __user *uarg)
{
	struct o2lnd_ioc_brw a, out;
	u32 timeout;
	long rc;

	rc = o2_ctl_copy_in(&a, sizeof(a), uarg, true);
	if (rc)
		return rc;
	timeout = a.timeout_ms ? a.timeout_ms : O2LND_PING_TIMEOUT_DEFAULT_MS;
	if ((a.op != O2LND_BRW_WRITE && a.op != O2LND_BRW_READ) ||
	    a.size > O2LND_BRW_MAX_SIZE || (a.flags & ~O2LND_BRW_F_CHECK) ||
	    a.pad || timeout > O2LND_PING_TIMEOUT_MAX_MS ||
	    a.nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(a.nid)) != O2LND_NET_TYPE_O2IB)
		return -EINVAL;
	memset(&out, 0, sizeof(out));
	o2_ctl_hdr_out(&out.hdr, sizeof(out));
	out.nid = a.nid;
	out.src_nid = a.src_nid;
	out.op = a.op;
	out.size = a.size;
	out.timeout_ms = timeout;
	out.flags = a.flags;
	out.seed = a.seed;
	rc = o2_brw(a.nid, a.src_nid, a.op, a.size, timeout, a.flags, a.seed,
		    &out);
	if (!rc)
		rc = o2_ctl_copy_out(uarg, &out, sizeof(out));
	return rc;
}

static long o2_ctl_net_show(void __user *uarg)
{
	struct o2lnd_ioc_net *n;
	struct o2_ni *ni;
	u32 index;
	long rc;

	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	rc = o2_ctl_copy_in(n, sizeof(*n), uarg, true);
	if (rc)
		goto out;
	index = n->index;
	if (index == 0) {
		/* LNet always lists the loopback NI 0@lo first. */
		memset(n, 0, sizeof(*n));
		o2_ctl_hdr_out(&n->hdr, sizeof(*n));
		n->count = o2_nnis + 1;
		n->nid = O2LND_LO_NID;
		n->status = O2LND_NI_STATUS_UP;
		strscpy(n->net, "lo", sizeof(n->net));
		rc = o2_ctl_copy_out(uarg, n, sizeof(*n));
		goto out;
	}
	rc = -ENOENT;
	list_for_each_entry(ni, &o2_nis, list) {
		if (ni->index != index - 1)
			continue;
		memset(n, 0, sizeof(*n));
		o2_ctl_hdr_out(&n->hdr, sizeof(*n));
		n->index = index;
		o2_ni_stats(ni, n);
		n->count = o2_nnis + 1;
		rc = o2_ctl_copy_out(uarg, n, sizeof(*n));
		break;
	}
out:
	kfree(n);
	return rc;
}

static long o2_ctl_peer_show(void __user *uarg)
{
	struct o2lnd_ioc_peer *p;
	u32 ni_index, index;
	long rc;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	rc = o2_ctl_copy_in(p, sizeof(*p), uarg, true);
	if (rc)
		goto out;
	ni_index = p->ni_index;
	index = p->index;
	memset(p, 0, sizeof(*p));
	o2_ctl_hdr_out(&p->hdr, sizeof(*p));
	p->ni_index = ni_index;
	p->index = index;
	rc = o2_peer_show(ni_index, index, p);
	if (!rc)
		rc = o2_ctl_copy_out(uarg, p, sizeof(*p));
out:
	kfree(p);
	return rc;
}

static long o2_ctl_route_show(void __user *uarg)
{
	struct o2lnd_ioc_route r;
	u32 index;
	long rc;

	rc = o2_ctl_copy_in(&r, sizeof(r), uarg, true);
	if (rc)
		return rc;
	index = r.index;
	memset(&r, 0, sizeof(r));
	o2_ctl_hdr_out(&r.hdr, sizeof(r));
	r.index = index;
	rc = o2_route_show(index, &r);
	return rc ? rc : o2_ctl_copy_out(uarg, &r, sizeof(r));
}

static long o2_ctl_routing_show(void __user *uarg)
{
	struct o2lnd_ioc_routing *r;
	long rc;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	rc = o2_ctl_copy_in(r, sizeof(*r), uarg, true);
	if (!rc) {
		memset(r, 0, sizeof(*r));
		o2_ctl_hdr_out(&r->hdr, sizeof(*r));
		o2_routing_show(r);
		rc = o2_ctl_copy_out(uarg, r, sizeof(*r));
	}
	kfree(r);
	return rc;
}

static long o2_ctl_conn_show(void __user *uarg)
{
	struct o2lnd_ioc_conn *c;
	u32 ni_index, index;
	long rc;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	rc = o2_ctl_copy_in(c, sizeof(*c), uarg, true);
	if (rc)
		goto out;
	ni_index = c->ni_index;
	index = c->index;
	memset(c, 0, sizeof(*c));
	o2_ctl_hdr_out(&c->hdr, sizeof(*c));
	c->ni_index = ni_index;
	c->index = index;
	rc = o2_conn_show(ni_index, index, c);
	if (!rc)
		rc = o2_ctl_copy_out(uarg, c, sizeof(*c));
out:
	kfree(c);
	return rc;
}

/*
 * PEER_CLOSE: -EINVAL for a NID that is not o2ib or a nonzero pad;
 * @closed is an output, whatever it holds on input is ignored.
 */
static long o2_ctl_peer_close(void __user *uarg)
{
	struct o2lnd_ioc_peer_close pc;
	u32 closed;
	long rc;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	rc = o2_ctl_copy_in(&pc, sizeof(pc), uarg, true);
	if (rc)
		return rc;
	if (pc.pad || pc.nid == O2LND_NID_ANY ||
	    o2_net_type(o2_nid_net(pc.nid)) != O2LND_NET_TYPE_O2IB)
		return -EINVAL;
	rc = o2_peer_close(pc.nid, pc.local_nid, &closed);
	if (rc)
		return rc;
	pc.closed = closed;
	return o2_ctl_copy_out(uarg, &pc, sizeof(pc));
}

/*
 * FAULT_ADD validates the whole rule (o2_fault_validate()); DEL and LIST
 * read only their inputs (@id, @index) and @pad, and ignore what the
 * output fields hold.  A rule whose id cannot be copied out is removed
 * again, so a failed ADD adds nothing.
 */
static long o2_ctl_fault(unsigned int cmd, void __user *uarg)
{
	struct o2lnd_ioc_fault f, out = {};
	u32 id;
	long rc;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	rc = o2_ctl_copy_in(&f, sizeof(f), uarg, true);
	if (rc)
		return rc;
	switch (cmd) {
	case O2LND_IOC_FAULT_ADD:
		rc = o2_fault_add(&f, &id);
		if (rc)
			return rc;
		out = f;
		out.id = id;
		break;
	case O2LND_IOC_FAULT_DEL:
		if (f.pad)
			return -EINVAL;
		rc = o2_fault_del(f.id);
		if (rc)
			return rc;
		out.id = f.id;
		break;
	default:	/* LIST */
		if (f.pad)
			return -EINVAL;
		rc = o2_fault_get(f.index, &out);
		if (rc)
			return rc;
		break;
	}
	o2_ctl_hdr_out(&out.hdr, sizeof(out));
	rc = o2_ctl_copy_out(uarg, &out, sizeof(out));
	if (rc && cmd == O2LND_IOC_FAULT_ADD)
		o2_fault_del(id);
	return rc;
}

static long o2_ctl_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case O2LND_IOC_VERSION:
		return o2_ctl_version(uarg);
	case O2LND_IOC_PING:
		return o2_ctl_ping(uarg);
	case O2LND_IOC_BRW:
		return o2_ctl_brw(uarg);
	case O2LND_IOC_NET_SHOW:
		return o2_ctl_net_show(uarg);
	case O2LND_IOC_PEER_SHOW:
		return o2_ctl_peer_show(uarg);
	case O2LND_IOC_CONN_SHOW:
		return o2_ctl_conn_show(uarg);
	case O2LND_IOC_ROUTE_SHOW:
		return o2_ctl_route_show(uarg);
	case O2LND_IOC_ROUTING_SHOW:
		return o2_ctl_routing_show(uarg);
	case O2LND_IOC_PEER_CLOSE:
		return o2_ctl_peer_close(uarg);
	case O2LND_IOC_FAULT_ADD:
	case O2LND_IOC_FAULT_DEL:
	case O2LND_IOC_FAULT_LIST:
		return o2_ctl_fault(cmd, uarg);
	default:
		return -ENOTTY;
	}
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
