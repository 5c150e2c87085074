// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the network interfaces of o2lnd's own LNet: the networks= parser,
 * creating an NI, adding and deleting NIs at run time (NET_ADD, NET_DEL),
 * and stopping and freeing every NI at unload.  The transport's part of an
 * NI (its listener and device, attaching again after a device came back,
 * following its link, closing its conns) is lnd/ni.c's, shared with the
 * Lustre glue.
 *
 * The NI list (o2_nis) and deleted NIs.  Writers (load, NET_ADD, NET_DEL,
 * unload) hold o2_nis_mutex; readers walk o2_nis without a lock and keep
 * the NIs they find for as long as their work takes (a ping, an RPC, a
 * connd scan).  So an NI deleted at run time is unlinked with
 * list_del_rcu() (a reader standing on it walks on), set shutdown (no new
 * peer, message or connection, under ni->lock), and everything it holds is
 * closed and freed: listener, connections, queued messages, peers, its
 * pooled txs.  Its struct itself stays, on o2_nis_retired, until unload: a
 * reader that found it before the delete then sees a shut down NI, never
 * freed memory.  Adding the same NID again takes that struct back, so
 * add/delete cycles do not grow the list.
 */
#include <linux/slab.h>
#include <linux/ratelimit.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include "lnet.h"

/* deleted NIs, by ni->retired, kept until unload (o2_nis_mutex) */
static LIST_HEAD(o2_nis_retired);

struct o2_ni_spec {
	u32 net;
	char ifname[IFNAMSIZ];
};

static bool o2_is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ',';
}

/* Parse "o2ib0(eth0) o2ib1(eth1,eth2)".  Return: number of specs or errno */
static int o2_networks_parse(const char *s, struct o2_ni_spec *specs, int max)
{
	int n = 0, i;

	for (;;) {
		const char *name, *end;
		u32 net;

		while (*s && o2_is_sep(*s))
			s++;
		if (!*s)
			break;
		name = s;
		while (*s && *s != '(' && !o2_is_sep(*s))
			s++;
		if (*s != '(' || o2_net_parse(name, s - name, &net) ||
		    o2_net_type(net) != O2LND_NET_TYPE_O2IB) {
			pr_err("o2lnd: networks: expected o2ibN(interface,...) at '%s'\n",
			       name);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (specs[i].net == net) {
				pr_err("o2lnd: networks: network '%.*s' given twice\n",
				       (int)(s - name), name);
				return -EINVAL;
			}
		}
		s++;
		for (;;) {
			while (*s == ' ')
				s++;
			end = s;
			while (*end && *end != ',' && *end != ')' && *end != ' ')
				end++;
			if (end == s || end - s >= IFNAMSIZ) {
				pr_err("o2lnd: networks: bad interface name at '%s'\n",
				       s);
				return -EINVAL;
			}
			if (n >= max) {
				pr_err("o2lnd: networks: more than %d interfaces\n",
				       max);
				return -EINVAL;
			}
			specs[n].net = net;
			memcpy(specs[n].ifname, s, end - s);
			specs[n].ifname[end - s] = '\0';
			n++;
			s = end;
			while (*s == ' ')
				s++;
			if (*s == ')')
				break;
			if (*s != ',') {
				pr_err("o2lnd: networks: missing ')' in '%s'\n",
				       name);
				return -EINVAL;
			}
			s++;
		}
		s++;
		if (*s && !o2_is_sep(*s)) {
			pr_err("o2lnd: networks: garbage after ')' at '%s'\n", s);
			return -EINVAL;
		}
	}
	if (!n) {
		pr_err("o2lnd: networks: no network given\n");
		return -EINVAL;
	}
	return n;
}

/*
 * What a new NI starts with, before anything can see it: locks, lists,
 * its pool, its reference (o2_nis' own).
 */
static void o2_ni_init(struct o2_ni *ni)
{
	o2_ni_lnd_init(ni);
	INIT_LIST_HEAD(&ni->credit_q);
	INIT_LIST_HEAD(&ni->ready);
	INIT_WORK(&ni->credit_work, o2_ni_credit_work);
}

/*
 * What an NI (new, or deleted and added again) is configured with.  A
 * deleted NI is empty (o2_ni_drain()), but a reader that found it before
 * its delete may still take its locks: they are not initialised again,
 * the rest changes under ni->lock.
 */
static void o2_ni_setup(struct o2_ni *ni, const struct o2_ni_spec *spec,
			u64 nid, __be32 addr, __be32 mask)
{
	spin_lock(&ni->lock);
	atomic_set(&ni->health, O2_HEALTH_MAX);
	o2_txcr_init(&ni->txcr, o2_credits);
	memset(&ni->stats, 0, sizeof(ni->stats));
	ni->nid = nid;
	ni->addr = addr;
	ni->mask = mask;
	/* a new incarnation: peers close what they had with the old one */
	ni->stamp = ktime_get_real_ns();
	ni->detached = false;
	ni->probe_at = 0;
	o2_net_format(spec->net, ni->net, sizeof(ni->net));
	strscpy(ni->ifname, spec->ifname, sizeof(ni->ifname));
	spin_unlock(&ni->lock);
}

/*
 * Create the NI of @spec, listening, on o2_nis (not yet up).  A deleted
 * NI of the same NID is taken back.  Caller holds o2_nis_mutex, or is
 * loading.  Return: 0 or an errno, after a pr_err().
 */
static int o2_ni_create(const struct o2_ni_spec *spec, struct o2_ni **out)
{
	struct o2_ni *ni, *old = NULL;
	__be32 addr, mask;
	u64 nid;
	int rc;

	rc = o2_ifaddr(spec->ifname, &addr, &mask);
	if (rc)
		return rc;
	nid = o2_make_nid(spec->net, ntohl(addr));
	if (o2_ni_by_nid(nid)) {
		pr_err("o2lnd: networks: interface '%s' given twice in a network\n",
		       spec->ifname);
		return -EEXIST;
	}
	list_for_each_entry(ni, &o2_nis_retired, retired) {
		/* nothing of its old life (tx, peer) is alive any more */
		if (ni->nid == nid && !atomic_read(&ni->tx_live) &&
		    refcount_read(&ni->ref) == 1) {
			old = ni;
			break;
		}
	}
	ni = old;
	if (!ni) {
		ni = kzalloc(sizeof(*ni), GFP_KERNEL);
		if (!ni)
			return -ENOMEM;
		o2_ni_init(ni);
	}
	o2_ni_setup(ni, spec, nid, addr, mask);
	rc = o2_ni_listen(ni, false);
	if (rc) {
		if (!old)
			kfree(ni);
		return rc;
	}
	spin_lock(&ni->lock);
	ni->shutdown = false;
	spin_unlock(&ni->lock);
	if (old)
		list_del(&old->retired);
	list_add_tail_rcu(&ni->list, &o2_nis);
	o2_nnis++;
	*out = ni;
	return 0;
}

/**
 * o2_nis_start() - create the NIs of the networks parameter
 * @networks: e.g. "o2ib0(eth0) o2ib1(eth1)"
 *
 * Return: 0, or an errno after a pr_err() and with nothing left behind.
 */
int o2_nis_start(const char *networks)
{
	struct o2_ni_spec *specs;
	struct o2_ni *ni;
	int n, i, rc = 0;

	specs = kcalloc(O2_MAX_NETS, sizeof(*specs), GFP_KERNEL);
	if (!specs)
		return -ENOMEM;
	n = o2_networks_parse(networks, specs, O2_MAX_NETS);
	if (n < 0)
		rc = n;
	for (i = 0; i < n && !rc; i++)
		rc = o2_ni_create(&specs[i], &ni);
	if (rc == -EEXIST)
		rc = -EINVAL;	/* a bad parameter, as insmod reports it */
	kfree(specs);
	if (rc) {
		o2_nis_stop();
		o2_nis_free();
		return rc;
	}
	rc = o2_rtr_init();
	if (rc) {
		o2_nis_stop();
		o2_nis_free();
		return rc;
	}
	o2_for_each_ni(ni)
		WRITE_ONCE(ni->up, true);
	return 0;
}

/*
 * Stop what a shut down NI still does: its messages waiting for credits
 * or for a conn fail with -ESHUTDOWN (nothing is handed on: nothing waits
 * for credits any more), its conns close (connd tears them down) and its
 * peers reconnect no more.
 */
static void o2_ni_close_all(struct o2_ni *ni)
{
	LIST_HEAD(fail);

	o2_ni_take_credit_waits(ni, jiffies, true, &fail);
	o2_tx_fail_list(&fail, -ESHUTDOWN);
	flush_work(&ni->credit_work);
	o2_ni_close_conns(ni, NULL, -ESHUTDOWN);
	o2_ni_fail_queued(ni, -ESHUTDOWN);
}

/* Free a stopped NI: nothing of it is alive any more. */
static void o2_ni_free(struct o2_ni *ni)
{
	WARN_ON(!refcount_dec_and_test(&ni->ref));
	WARN_ON(atomic_read(&ni->tx_live));
	o2_tx_pool_trim(ni);
	kfree(ni);
}

/*
 * Close and free what a deleted NI holds (it is shutdown and unlinked):
 * its messages waiting for credits or a conn fail with -ESHUTDOWN, its
 * conns close (their exchanges and forwarded messages end with them) and
 * are freed, its peers leave its table.  Sleeps, bounded by the conns'
 * teardowns.
 */
static void o2_ni_drain(struct o2_ni *ni)
{
	o2_ni_close_all(ni);
	o2_ni_wait_conns(ni);
	o2_ni_forget_peers(ni);
	o2_tx_pool_trim(ni);
}

/* "o2ibN" and an interface name, as NET_ADD and NET_DEL take them. */
static int o2_ni_spec_parse(const char *net, const char *ifname,
			    bool if_required, struct o2_ni_spec *spec)
{
	size_t nlen = strnlen(net, O2LND_NAME_LEN);
	size_t ilen = strnlen(ifname, O2LND_NAME_LEN);

	if (!nlen || nlen == O2LND_NAME_LEN || ilen >= IFNAMSIZ ||
	    (if_required && !ilen) ||
	    o2_net_parse(net, nlen, &spec->net) ||
	    o2_net_type(spec->net) != O2LND_NET_TYPE_O2IB)
		return -EINVAL;
	strscpy(spec->ifname, ifname, sizeof(spec->ifname));
	return 0;
}

/**
 * o2_ni_add() - NET_ADD: a network or an interface added at run time
 * @net: "o2ibN"
 * @ifname: the interface
 * @nid: out: the new NI's NID
 *
 * The NI listens and is up when this returns; the peers that know us
 * learn it (o2_push_all()).  Sleeps.
 *
 * Return: 0; -EINVAL (malformed), -ENODEV, -EADDRNOTAVAIL (no interface,
 * no IPv4 address, no RDMA device), -EEXIST, -ENOSPC (O2_MAX_NETS NIs),
 * -ESHUTDOWN (unloading), -ENOMEM.
 */
int o2_ni_add(const char *net, const char *ifname, u64 *nid)
{
	struct o2_ni_spec spec;
	struct o2_ni *ni;
	char str[O2_NIDSTR_SIZE];
	int rc;

	rc = o2_ni_spec_parse(net, ifname, true, &spec);
	if (rc)
		return rc;
	mutex_lock(&o2_nis_mutex);
	if (o2_nnis >= O2_MAX_NETS)
		rc = -ENOSPC;
	else
		rc = o2_ni_create(&spec, &ni);
	if (!rc) {
		WRITE_ONCE(ni->up, true);
		*nid = ni->nid;
		o2_push_all();	/* our ping info changed */
	}
	mutex_unlock(&o2_nis_mutex);
	if (!rc)
		pr_info("o2lnd: %s: NI %s added on %s\n", ni->net,
			o2_nid_format(*nid, str, sizeof(str)), ifname);
	return rc;
}

/**
 * o2_ni_del() - NET_DEL: delete the NIs of a network, or one interface
 * @net: "o2ibN"
 * @ifname: the interface, or "" for every NI of @net
 * @count: out: NIs deleted
 * @nid: out: the NID of the last one
 *
 * The NIs go down and leave o2_nis at once; what they hold is closed and
 * freed before this returns (o2_ni_drain()); their structs are kept on
 * o2_nis_retired (see the top of this file).  Sleeps.
 *
 * Return: 0, -EINVAL (malformed) or -ENOENT (no NI matches).
 */
int o2_ni_del(const char *net, const char *ifname, u32 *count, u64 *nid)
{
	struct o2_ni *gone[O2_MAX_NETS], *ni, *tmp;
	struct o2_ni_spec spec;
	char str[O2_NIDSTR_SIZE];
	u32 n = 0, i;
	int rc;

	rc = o2_ni_spec_parse(net, ifname, false, &spec);
	if (rc)
		return rc;
	mutex_lock(&o2_nis_mutex);
	list_for_each_entry_safe(ni, tmp, &o2_nis, list) {
		if (o2_nid_net(ni->nid) != spec.net ||
		    (spec.ifname[0] && strcmp(ni->ifname, spec.ifname)) ||
		    n == ARRAY_SIZE(gone))
			continue;
		spin_lock(&ni->lock);
		ni->shutdown = true;
		spin_unlock(&ni->lock);
		o2_ni_stop_listening(ni);
		ni->detached = false;
		list_del_rcu(&ni->list);
		o2_nnis--;
		gone[n++] = ni;
	}
	if (n)
		o2_push_all();	/* our ping info changed */
	mutex_unlock(&o2_nis_mutex);
	if (!n)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		o2_ni_drain(gone[i]);
		pr_info("o2lnd: %s: NI %s (%s) deleted\n", gone[i]->net,
			o2_nid_format(gone[i]->nid, str, sizeof(str)),
			gone[i]->ifname);
	}
	mutex_lock(&o2_nis_mutex);
	for (i = 0; i < n; i++)
		list_add_tail(&gone[i]->retired, &o2_nis_retired);
	mutex_unlock(&o2_nis_mutex);
	*count = n;
	*nid = gone[n - 1]->nid;
	return 0;
}

static void o2_wait_zero(atomic_t *count, const char *what)
{
	while (!wait_event_timeout(o2_exit_waitq, !atomic_read(count),
				   10 * HZ))
		pr_warn("o2lnd: waiting for %d %s to be freed\n",
			atomic_read(count), what);
}

/**
 * o2_nis_stop() - stop every NI and free everything hanging off it
 *
 * Stops listening, closes every conn (connd tears them down), fails the
 * txs still waiting for a conn, and waits until every conn and peer is
 * freed.  Sleeps; bounded by the teardowns.
 */
void o2_nis_stop(void)
{
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	o2_for_each_ni(ni) {
		spin_lock(&ni->lock);
		ni->shutdown = true;
		spin_unlock(&ni->lock);
		o2_ni_stop_listening(ni);
	}
	mutex_unlock(&o2_nis_mutex);

	o2_for_each_ni(ni)
		o2_ni_close_all(ni);
	/* exchanges still waiting hold conns and device users */
	o2_rtr_expire(jiffies, true);
	o2_bulk_expire(jiffies, true);
	o2_wait_zero(&o2_nconns, "connections");

	o2_for_each_ni(ni)
		o2_ni_forget_peers(ni);
	o2_wait_zero(&o2_npeers, "peers");
}

/**
 * o2_nis_free() - free the stopped NIs
 *
 * Called after o2_nis_stop() once connd and the ib_client are gone.
 */
void o2_nis_free(void)
{
	struct o2_ni *ni, *next;

	list_for_each_entry_safe(ni, next, &o2_nis, list) {
		list_del(&ni->list);
		o2_ni_free(ni);
	}
	o2_nnis = 0;
	/* deleted at run time: drained then, their last peers gone since */
	list_for_each_entry_safe(ni, next, &o2_nis_retired, retired) {
		list_del(&ni->retired);
		o2_ni_free(ni);
	}
	/* no exchange is left to hold a selftest page set */
	o2_bulk_pool_trim(jiffies, true);
}
