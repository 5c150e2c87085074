// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the network interfaces: the networks= parser, creating an NI and
 * its listener, adding and deleting NIs at run time (NET_ADD, NET_DEL),
 * attaching to and detaching from RDMA devices, and stopping and freeing
 * every NI at unload.
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
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include <linux/in.h>
#include "lnet.h"

/*
 * Serialises the NI list's writers (load, NET_ADD, NET_DEL, unload) and
 * listener destruction between them and device removal.
 */
DEFINE_MUTEX(o2_nis_mutex);

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

static int o2_ifaddr(const char *ifname, __be32 *addr, __be32 *mask)
{
	struct net_device *dev = dev_get_by_name(&init_net, ifname);
	const struct in_ifaddr *ifa = NULL;
	struct in_device *in_dev;
	int rc = -EADDRNOTAVAIL;

	if (!dev) {
		pr_err("o2lnd: networks: no interface '%s'\n", ifname);
		return -ENODEV;
	}
	rcu_read_lock();
	in_dev = __in_dev_get_rcu(dev);
	if (in_dev)
		ifa = rcu_dereference(in_dev->ifa_list);
	if (ifa) {
		*addr = ifa->ifa_local;
		*mask = ifa->ifa_mask;
		rc = 0;
	}
	rcu_read_unlock();
	dev_put(dev);
	if (rc)
		pr_err("o2lnd: networks: interface '%s' has no IPv4 address\n",
		       ifname);
	return rc;
}

/*
 * Listen on @ni's address and take its device.  @quiet: a retry of a
 * detached NI (o2_nis_reattach()), which logs nothing while no device
 * serves the interface.  Caller holds o2_nis_mutex, or is starting.
 */
static int o2_ni_listen(struct o2_ni *ni, bool quiet)
{
	struct sockaddr_in sin = {};
	struct rdma_cm_id *id;
	struct o2_dev *dev;
	char nid[O2_NIDSTR_SIZE];
	int rc;

	id = rdma_create_id(&init_net, o2_cm_handler, ni, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		pr_err("o2lnd: %s: cannot create a cm_id: %ld\n", ni->net,
		       PTR_ERR(id));
		return PTR_ERR(id);
	}
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = ni->addr;
	sin.sin_port = htons(o2_service);
	rc = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!rc && !id->device)
		rc = -ENODEV;
	if (quiet && rc)
		goto err;
	if (rc == -ENODEV || rc == -EADDRNOTAVAIL) {
		pr_err("o2lnd: %s: no RDMA device for %pI4 (%s): %d\n",
		       ni->net, &ni->addr, ni->ifname, rc);
		goto err;
	}
	if (rc) {
		pr_err("o2lnd: %s: cannot bind %pI4:%d (%s): %d\n", ni->net,
		       &ni->addr, o2_service, ni->ifname, rc);
		goto err;
	}
	/* the device first: no request is taken on one going away */
	dev = o2_dev_get(id->device);
	if (IS_ERR(dev)) {
		rc = PTR_ERR(dev);
		goto err;
	}
	rc = rdma_listen(id, 256);
	if (rc) {
		pr_err_ratelimited("o2lnd: %s: cannot listen on %pI4:%d: %d\n",
				   ni->net, &ni->addr, o2_service, rc);
		o2_dev_put(dev);
		goto err;
	}
	ni->dev = dev;
	strscpy(ni->devname, dev_name(&id->device->dev), sizeof(ni->devname));
	ni->listen_id = id;
	pr_info("o2lnd: NI %s on %s (%s), listening on port %d\n",
		o2_nid_format(ni->nid, nid, sizeof(nid)), ni->ifname,
		ni->devname, o2_service);
	return 0;
err:
	rdma_destroy_id(id);
	return rc;
}

/*
 * What a new NI starts with, before anything can see it: locks, lists,
 * its pool, its reference (o2_nis' own).
 */
static void o2_ni_init(struct o2_ni *ni)
{
	refcount_set(&ni->ref, 1);
	spin_lock_init(&ni->lock);
	spin_lock_init(&ni->conns_lock);
	INIT_LIST_HEAD(&ni->conns);
	hash_init(ni->peers);
	atomic_set(&ni->tx_live, 0);
	o2_tx_pool_init(ni);
	INIT_LIST_HEAD(&ni->credit_q);
	INIT_LIST_HEAD(&ni->ready);
	INIT_WORK(&ni->credit_work, o2_ni_credit_work);
	ni->shutdown = true;	/* until it listens */
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

static void o2_ni_stop_listening(struct o2_ni *ni)
{
	struct rdma_cm_id *id;

	lockdep_assert_held(&o2_nis_mutex);
	WRITE_ONCE(ni->up, false);
	id = ni->listen_id;
	WRITE_ONCE(ni->listen_id, NULL);
	if (id)
		rdma_destroy_id(id);
	if (ni->dev) {
		o2_dev_put(ni->dev);
		ni->dev = NULL;
	}
}

/**
 * o2_ni_get_dev() - the device of @ni, for a new registration
 * @ni: the NI
 *
 * Return: the o2_dev with a users reference (o2_dev_put() it), or
 * ERR_PTR(-ENETDOWN) while the NI has no device.
 */
struct o2_dev *o2_ni_get_dev(struct o2_ni *ni)
{
	struct o2_dev *dev = ERR_PTR(-ENETDOWN);

	mutex_lock(&o2_nis_mutex);
	if (ni->dev) {
		dev = ni->dev;
		atomic_inc(&dev->users);
	}
	mutex_unlock(&o2_nis_mutex);
	return dev;
}

/**
 * o2_nis_reattach() - attach detached NIs to a device serving their
 *	interface again
 *
 * An NI whose RDMA device went away (o2_ni_device_removed()) is
 * retried by connd once a second: when a device (the same one added
 * back, or a new one on the interface) answers for the NI's address,
 * it listens again and goes up.  Its peers reconnect on demand.  Sleeps.
 */
void o2_nis_reattach(void)
{
	char nid[O2_NIDSTR_SIZE];
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	o2_for_each_ni(ni) {
		if (!ni->detached || READ_ONCE(ni->shutdown) || ni->listen_id)
			continue;
		if (o2_ni_listen(ni, true))
			continue;
		ni->detached = false;
		ni->link_down = false;	/* o2_nis_link_check() looks again */
		WRITE_ONCE(ni->up, true);
		atomic_set(&ni->health, O2_HEALTH_MAX);
		pr_info("o2lnd: %s: NI %s up again on %s (%s)\n", ni->net,
			o2_nid_format(ni->nid, nid, sizeof(nid)), ni->devname,
			ni->ifname);
		o2_push_all();	/* our ping info changed */
	}
	mutex_unlock(&o2_nis_mutex);
}

/**
 * o2_nis_link_check() - NIs follow their link: down while its port is
 *
 * LNet marks an NI whose link is lost down at once (its ping info says
 * DOWN, so Multi-Rail peers stop choosing it, and its routes' gateways
 * checks see it) and up when the link is back.  An attached NI whose
 * listener's port is down (o2_dev_port_down(): the port, or on RoCE the
 * interface's carrier) goes down, its health to 0, and our ping info is
 * pushed; back up, it is at full health and pushed again.  Its
 * connections close as the link's loss breaks them, as before.  From
 * connd's scan once a second and at once after a port event.  Sleeps.
 */
void o2_nis_link_check(void)
{
	char nid[O2_NIDSTR_SIZE];
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	o2_for_each_ni(ni) {
		bool down;

		if (ni->detached || !ni->listen_id || READ_ONCE(ni->shutdown))
			continue;
		down = o2_dev_port_down(ni->listen_id);
		if (down == ni->link_down)
			continue;
		ni->link_down = down;
		WRITE_ONCE(ni->up, !down);
		atomic_set(&ni->health, down ? 0 : O2_HEALTH_MAX);
		/* a flapping link must not flood the log */
		pr_info_ratelimited("o2lnd: %s: NI %s %s (%s, %s)\n", ni->net,
				    o2_nid_format(ni->nid, nid, sizeof(nid)),
				    down ? "down: its link is lost" :
				    "up again: its link is back",
				    ni->ifname, ni->devname);
		o2_push_all();	/* our ping info changed */
	}
	mutex_unlock(&o2_nis_mutex);
}

/* Close every conn of @ni (or only those on @ibdev when non-NULL). */
static void o2_ni_close_conns(struct o2_ni *ni, struct ib_device *ibdev,
			      int error)
{
	struct o2_conn *conn, *found;
	struct o2_peer *peer;
	int bkt;

	do {
		found = NULL;
		spin_lock(&ni->lock);
		hash_for_each(ni->peers, bkt, peer, node) {
			list_for_each_entry(conn, &peer->conns, peer_list) {
				struct o2_dev *dev = READ_ONCE(conn->dev);

				if (ibdev && (!dev || dev->ibdev != ibdev))
					continue;
				kref_get(&conn->ref);
				found = conn;
				goto out;
			}
		}
out:
		spin_unlock(&ni->lock);
		if (!found && !ibdev) {
			/* parked requests (fault injection) */
			spin_lock(&ni->conns_lock);
			list_for_each_entry(conn, &ni->conns, ni_list) {
				if (conn->parked &&
				    READ_ONCE(conn->state) < O2_CONN_CLOSING) {
					kref_get(&conn->ref);
					found = conn;
					break;
				}
			}
			spin_unlock(&ni->conns_lock);
		}
		if (found) {
			o2_conn_close(found, error);
			o2_conn_put(found);
		}
	} while (found);
}

/**
 * o2_ni_device_removed() - an RDMA device is going away
 * @ibdev: the device
 *
 * Stops the listeners bound to it (their NIs go DOWN) and closes the
 * conns using it.  Sleeps.
 */
void o2_ni_device_removed(struct ib_device *ibdev)
{
	struct o2_ni *ni;

	mutex_lock(&o2_nis_mutex);
	o2_for_each_ni(ni) {
		if (ni->dev && ni->dev->ibdev == ibdev && ni->listen_id) {
			pr_warn("o2lnd: %s: RDMA device %s removed, NI down until a device serves %s again\n",
				ni->net, ni->devname, ni->ifname);
			o2_ni_stop_listening(ni);
			ni->detached = !READ_ONCE(ni->shutdown);
			if (ni->detached) {
				atomic_set(&ni->health, 0);
				o2_push_all();	/* our ping info changed */
			}
		}
	}
	mutex_unlock(&o2_nis_mutex);
	/* every conn of a detached NI, and the others' on @ibdev */
	o2_for_each_ni(ni)
		o2_ni_close_conns(ni, ni->detached ? NULL : ibdev, -ENODEV);
}

/*
 * Stop what a shut down NI still does: its messages waiting for credits
 * or for a conn fail with -ESHUTDOWN (nothing is handed on: nothing waits
 * for credits any more), its conns close (connd tears them down) and its
 * peers reconnect no more.
 */
static void o2_ni_close_all(struct o2_ni *ni)
{
	struct o2_peer *peer;
	LIST_HEAD(fail);
	int bkt;

	o2_ni_take_credit_waits(ni, jiffies, true, &fail);
	o2_tx_fail_list(&fail, -ESHUTDOWN);
	flush_work(&ni->credit_work);
	o2_ni_close_conns(ni, NULL, -ESHUTDOWN);
	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		peer->reconnect = false;
		o2_peer_update_state(peer);
		list_splice_init(&peer->tx_queue, &fail);
	}
	spin_unlock(&ni->lock);
	o2_tx_fail_list(&fail, -ESHUTDOWN);
}

/* Take every peer out of @ni's table (their conns are gone). */
static void o2_ni_forget_peers(struct o2_ni *ni)
{
	struct hlist_node *tmp;
	struct o2_peer *peer;
	int bkt;

	spin_lock(&ni->lock);
	hash_for_each_safe(ni->peers, bkt, tmp, peer, node) {
		hash_del(&peer->node);
		peer->in_table = false;
		o2_peer_put(peer);
	}
	spin_unlock(&ni->lock);
}

/* Free a stopped NI: nothing of it is alive any more. */
static void o2_ni_free(struct o2_ni *ni)
{
	WARN_ON(!refcount_dec_and_test(&ni->ref));
	WARN_ON(atomic_read(&ni->tx_live));
	o2_tx_pool_trim(ni);
	kfree(ni);
}

/* Are @ni's conns all freed (o2_conn_release() wakes o2_exit_waitq)? */
static bool o2_ni_conns_gone(struct o2_ni *ni)
{
	bool gone;

	spin_lock(&ni->conns_lock);
	gone = list_empty(&ni->conns);
	spin_unlock(&ni->conns_lock);
	return gone;
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
	while (!wait_event_timeout(o2_exit_waitq, o2_ni_conns_gone(ni),
				   10 * HZ))
		pr_warn("o2lnd: %s: deleting NI %s: waiting for its connections to be freed\n",
			ni->net, ni->ifname);
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
