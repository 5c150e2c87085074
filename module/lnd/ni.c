// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the transport's part of a network interface, which every upper
 * layer (o2lnd's LNet, module/lnet/; Lustre's, module/lustre/) builds its
 * NIs with: the interface's address, the listener and the device it takes,
 * closing the NI's conns, failing what waits for a conn, waiting for the
 * conns to be freed and forgetting the peers.  The NI list itself
 * (o2_nis) and what an NI means to LNet belong to the upper layer.
 *
 * o2_nis_mutex serialises the NI list's writers (load, NET_ADD, NET_DEL,
 * unload, Lustre's lnd_startup/lnd_shutdown) and listener destruction
 * between them and device removal.
 */
#include <linux/ratelimit.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/in.h>
#include "lnd.h"
#include "health.h"

/* the NI list's writers and listener destruction (see above) */
DEFINE_MUTEX(o2_nis_mutex);

/**
 * o2_ni_lnd_init() - what a new NI starts with, before anything sees it
 * @ni: the NI, zeroed
 *
 * Its reference (the NI list's own), locks, lists and tx pool; it is shut
 * down until it listens.
 */
void o2_ni_lnd_init(struct o2_ni *ni)
{
	refcount_set(&ni->ref, 1);
	spin_lock_init(&ni->lock);
	spin_lock_init(&ni->conns_lock);
	INIT_LIST_HEAD(&ni->conns);
	hash_init(ni->peers);
	atomic_set(&ni->tx_live, 0);
	o2_tx_pool_init(ni);
	ni->shutdown = true;	/* until it listens */
}

/**
 * o2_ifaddr() - the first IPv4 address of an interface
 * @ifname: the interface
 * @addr: out: its address (network order)
 * @mask: out: its subnet's mask (network order)
 *
 * Return: 0; -ENODEV (no such interface) or -EADDRNOTAVAIL (no IPv4
 * address), after a pr_err().
 */
int o2_ifaddr(const char *ifname, __be32 *addr, __be32 *mask)
{
	struct net_device *dev = dev_get_by_name(&init_net, ifname);
	const struct in_ifaddr *ifa = NULL;
	struct in_device *in_dev;
	int rc = -EADDRNOTAVAIL;

	if (!dev) {
		pr_err("o2lnd: no interface '%s'\n", ifname);
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
		pr_err("o2lnd: interface '%s' has no IPv4 address\n",
		       ifname);
	return rc;
}

/**
 * o2_ni_listen() - listen on @ni's address and take its device
 * @ni: the NI (its addr, net and ifname set)
 * @quiet: a retry of a detached NI, which logs nothing while no device
 *	serves the interface
 *
 * Caller holds o2_nis_mutex, or is starting the NI.
 *
 * Return: 0, or an errno (logged unless @quiet).
 */
int o2_ni_listen(struct o2_ni *ni, bool quiet)
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

/**
 * o2_ni_stop_listening() - destroy @ni's listener and let go of its device
 * @ni: the NI; it goes down (not up) first
 *
 * Caller holds o2_nis_mutex.
 */
void o2_ni_stop_listening(struct o2_ni *ni)
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
 * o2_ni_close_conns() - close the conns of @ni
 * @ni: the NI
 * @ibdev: only those on this device, or NULL for all (parked connect
 *	requests included)
 * @error: why
 *
 * connd tears them down.  Process context, no o2lnd lock held.
 */
void o2_ni_close_conns(struct o2_ni *ni, struct ib_device *ibdev, int error)
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

/*
 * A conn of @ni to @nid (O2LND_NID_ANY: to any peer) made before @start,
 * with a reference, or NULL.  Each peer it looks at forgets its scheduled
 * reconnect and backoff; *@known is set if there is such a peer.
 */
static struct o2_conn *o2_ni_old_conn(struct o2_ni *ni, u64 nid,
				      unsigned long start, bool *known)
{
	struct o2_conn *conn, *found = NULL;
	struct o2_peer *peer;
	int bkt;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		if (found || (nid != O2LND_NID_ANY && peer->nid != nid))
			continue;
		*known = true;
		peer->reconnect = false;
		peer->backoff_ms = 0;
		o2_peer_update_state(peer);
		list_for_each_entry(conn, &peer->conns, peer_list) {
			if (time_after(conn->created, start))
				continue;
			kref_get(&conn->ref);
			found = conn;
			break;
		}
	}
	spin_unlock(&ni->lock);
	return found;
}

/**
 * o2_ni_close_peer() - close the conns of @ni to a peer
 * @ni: the NI
 * @nid: the peer, or O2LND_NID_ANY for every peer of @ni
 * @closed: out: incremented for each conn closed
 *
 * Closes the conns there when it is called, not those made meanwhile
 * (what a close fails may be resent on new conns, which are not closed
 * in turn), with -ECONNABORTED (an operator's close: their queued
 * messages fail).  Cancels a scheduled reconnect and the backoff too.
 * Process context; sleeps.
 *
 * Return: true if @ni knows the peer (for O2LND_NID_ANY: any peer).
 */
bool o2_ni_close_peer(struct o2_ni *ni, u64 nid, u32 *closed)
{
	unsigned long start = jiffies;
	struct o2_conn *conn;
	bool known = false;

	while ((conn = o2_ni_old_conn(ni, nid, start, &known))) {
		o2_conn_close(conn, -ECONNABORTED);
		o2_conn_put(conn);
		(*closed)++;
	}
	return known;
}

/**
 * o2_ni_peer_at() - the @index-th peer in @ni's table
 * @ni: the NI
 * @index: from 0
 * @nid: out: its NID
 * @refs: out: its references (the table's, its conns', its txs')
 *
 * Return: 0, or -ENOENT past the last.
 */
int o2_ni_peer_at(struct o2_ni *ni, u32 index, u64 *nid, u32 *refs)
{
	struct o2_peer *peer;
	int bkt, rc = -ENOENT;
	u32 n = 0;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		if (n++ != index)
			continue;
		*nid = peer->nid;
		*refs = kref_read(&peer->ref);
		rc = 0;
	}
	spin_unlock(&ni->lock);
	return rc;
}

/**
 * o2_ni_conn_at() - the @index-th conn of @ni that is not closing
 * @ni: the NI
 * @index: from 0, over its peers' conn lists
 * @nid: out: the peer's NID
 * @mtu: out: the path MTU in bytes, 0 where there is no path record
 *	(iWARP) or no cm_id yet
 *
 * Return: 0, or -ENOENT past the last.
 */
int o2_ni_conn_at(struct o2_ni *ni, u32 index, u64 *nid, u32 *mtu)
{
	struct o2_conn *conn;
	struct o2_peer *peer;
	int bkt, rc = -ENOENT;
	u32 n = 0;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		list_for_each_entry(conn, &peer->conns, peer_list) {
			struct rdma_cm_id *id = READ_ONCE(conn->cmid);

			if (n++ != index)
				continue;
			*nid = peer->nid;
			*mtu = id && id->route.path_rec ?
			       ib_mtu_enum_to_int(id->route.path_rec->mtu) : 0;
			rc = 0;
		}
	}
	spin_unlock(&ni->lock);
	return rc;
}

/**
 * o2_ni_forget_peers() - take every peer out of @ni's table
 * @ni: the NI, shut down, its conns gone (o2_ni_wait_conns())
 */
void o2_ni_forget_peers(struct o2_ni *ni)
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

/* Are @ni's conns all freed (o2_conn_release() wakes o2_exit_waitq)? */
static bool o2_ni_conns_gone(struct o2_ni *ni)
{
	bool gone;

	spin_lock(&ni->conns_lock);
	gone = list_empty(&ni->conns);
	spin_unlock(&ni->conns_lock);
	return gone;
}

/**
 * o2_ni_wait_conns() - wait until every conn of @ni is freed
 * @ni: the NI, shut down, its conns closed (o2_ni_close_conns())
 *
 * Sleeps, bounded by the conns' teardowns; says so every 10 s.
 */
void o2_ni_wait_conns(struct o2_ni *ni)
{
	while (!wait_event_timeout(o2_exit_waitq, o2_ni_conns_gone(ni),
				   10 * HZ))
		pr_warn("o2lnd: %s: stopping NI %s: waiting for its connections to be freed\n",
			ni->net, ni->ifname);
}

/**
 * o2_ni_fail_queued() - what waits for a conn of a shut down NI fails
 * @ni: the NI
 * @error: the txs' status
 *
 * Its peers reconnect no more and the txs on their queues complete with
 * @error.
 */
void o2_ni_fail_queued(struct o2_ni *ni, int error)
{
	struct o2_peer *peer;
	LIST_HEAD(fail);
	int bkt;

	spin_lock(&ni->lock);
	hash_for_each(ni->peers, bkt, peer, node) {
		peer->reconnect = false;
		o2_peer_update_state(peer);
		list_splice_init(&peer->tx_queue, &fail);
	}
	spin_unlock(&ni->lock);
	o2_tx_fail_list(&fail, error);
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
		o2_up->ni_changed(ni);
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
 * interface's carrier) goes down, its health to 0, and its upper layer
 * is told (o2_up->ni_changed(): o2lnd's LNet pushes its ping info); back
 * up, it is at full health and told again.  Its
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
		o2_up->ni_changed(ni);
	}
	mutex_unlock(&o2_nis_mutex);
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
				o2_up->ni_changed(ni);
			}
		}
	}
	mutex_unlock(&o2_nis_mutex);
	/* every conn of a detached NI, and the others' on @ibdev */
	o2_for_each_ni(ni)
		o2_ni_close_conns(ni, ni->detached ? NULL : ibdev, -ENODEV);
}
