// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: RDMA devices in use and their shared protection domains.
 *
 * An ib_client tells us when a device goes away.  Because o2lnd
 * registers its client after rdma_cm, our .remove runs before rdma_cm's:
 * it stops the listeners on the device, closes every conn on it and waits
 * (sleeping, no busy-wait) until connd has destroyed them, then frees the
 * PD.  Unregistering the client at unload runs .remove for every device,
 * which is how the PDs are freed then.
 *
 * Each o2_dev also has an IB event handler for its port events: a port
 * that went down or came back is logged and kicks connd, whose scan marks
 * the NIs on it down or up (o2_up->tick(): LNet marks an NI whose link is
 * lost down at once) and goes on with the teardowns that waited for it
 * (connd.c: no CM message is sent on a port that is down).
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_cache.h>
#include "lnd.h"

static LIST_HEAD(o2_devs);
static DEFINE_MUTEX(o2_devs_mutex);
static DECLARE_WAIT_QUEUE_HEAD(o2_dev_waitq);
static struct ib_client o2_ib_client;
static atomic_t o2_dev_port_changed;	/* a port went down or up */

/*
 * Port events, from ib_core after it updated its port cache
 * (o2_dev_port_down() reads that cache).  Does not sleep.
 */
static void o2_dev_event(struct ib_event_handler *handler,
			 struct ib_event *event)
{
	switch (event->event) {
	case IB_EVENT_PORT_ERR:
		pr_info_ratelimited("o2lnd: %s port %u is down: connections on it close without CM messages until it is back\n",
				    dev_name(&event->device->dev),
				    event->element.port_num);
		/* connd's scan marks the NIs on it down (o2_up->tick()) */
		atomic_set(&o2_dev_port_changed, 1);
		o2_connd_kick();
		break;
	case IB_EVENT_PORT_ACTIVE:
		pr_info_ratelimited("o2lnd: %s port %u is active\n",
				    dev_name(&event->device->dev),
				    event->element.port_num);
		atomic_set(&o2_dev_port_changed, 1);
		o2_connd_kick();
		break;
	default:
		break;
	}
}

/**
 * o2_dev_port_event_take() - did a port go down or up since the last call?
 *
 * Any context.
 *
 * Return: true once per batch of port events.
 */
bool o2_dev_port_event_take(void)
{
	return atomic_xchg(&o2_dev_port_changed, 0);
}

/**
 * o2_dev_port_down() - is the port a cm_id is bound to down?
 * @id: the cm_id
 *
 * Down: ib_core's cached port state is not ACTIVE, or, on RoCE, the
 * netdev the id is bound to is not running or has no carrier (known at
 * once, where the port event first goes through ib_core's work queue).
 * An iWARP port is never down for this: its CM speaks TCP, through the
 * IP stack.  An id not bound to a device yet has no port.
 * Does not sleep.
 *
 * Return: true if the port is down.
 */
bool o2_dev_port_down(struct rdma_cm_id *id)
{
	struct ib_device *ibdev = id->device;
	enum ib_port_state state;
	struct net_device *ndev;
	u32 port = id->port_num;
	bool down = false;

	if (!ibdev || !rdma_is_port_valid(ibdev, port) ||
	    rdma_protocol_iwarp(ibdev, port))
		return false;
	if (!ib_get_cached_port_state(ibdev, port, &state) &&
	    state != IB_PORT_ACTIVE)
		return true;
	if (!rdma_protocol_roce(ibdev, port))
		return false;
	ndev = dev_get_by_index(&init_net, id->route.addr.dev_addr.bound_dev_if);
	if (ndev) {
		down = !netif_running(ndev) || !netif_carrier_ok(ndev);
		dev_put(ndev);
	}
	return down;
}

/**
 * o2_dev_get() - find or create the o2_dev of @ibdev and become a user
 * @ibdev: the device
 *
 * May sleep.
 *
 * Return: the device or an ERR_PTR.
 */
struct o2_dev *o2_dev_get(struct ib_device *ibdev)
{
	struct o2_dev *dev;

	mutex_lock(&o2_devs_mutex);
	list_for_each_entry(dev, &o2_devs, list) {
		if (dev->ibdev == ibdev) {
			if (dev->dead)
				dev = ERR_PTR(-ENODEV);
			else
				atomic_inc(&dev->users);
			goto out;
		}
	}
	/*
	 * Only a device our ib_client serves (between its add and remove
	 * callbacks): one whose removal already passed us would never be
	 * released.
	 */
	if (!ib_get_client_data(ibdev, &o2_ib_client)) {
		dev = ERR_PTR(-ENODEV);
		goto out;
	}
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		dev = ERR_PTR(-ENOMEM);
		goto out;
	}
	dev->ibdev = ibdev;
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		struct ib_pd *pd = dev->pd;

		kfree(dev);
		dev = ERR_CAST(pd);
		goto out;
	}
	o2_mr_pool_init(dev);
	atomic_set(&dev->users, 1);
	INIT_IB_EVENT_HANDLER(&dev->event_handler, ibdev, o2_dev_event);
	ib_register_event_handler(&dev->event_handler);
	list_add_tail(&dev->list, &o2_devs);
out:
	mutex_unlock(&o2_devs_mutex);
	return dev;
}

/**
 * o2_msg_buf_alloc() - one message buffer, mapped for a device
 * @ibdev: the device
 * @dir: DMA_TO_DEVICE (a send buffer) or DMA_FROM_DEVICE (a receive one)
 * @dma: set to its DMA address
 *
 * The send and receive buffers of a conn are made here, once per conn:
 * the data path maps nothing.
 *
 * Return: the buffer, O2_MAX_MSG_SIZE bytes, or NULL (no memory, or the
 * mapping failed).
 */
void *o2_msg_buf_alloc(struct ib_device *ibdev, enum dma_data_direction dir,
		       u64 *dma)
{
	void *buf = kmalloc(O2_MAX_MSG_SIZE, GFP_KERNEL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(ibdev, buf, O2_MAX_MSG_SIZE, dir);
	if (ib_dma_mapping_error(ibdev, *dma)) {
		kfree(buf);
		return NULL;
	}
	return buf;
}

/**
 * o2_msg_buf_free() - unmap and free a buffer of o2_msg_buf_alloc()
 * @ibdev: the device it was mapped for
 * @buf: the buffer
 * @dma: its DMA address
 * @dir: the direction it was mapped with
 */
void o2_msg_buf_free(struct ib_device *ibdev, void *buf, u64 dma,
		     enum dma_data_direction dir)
{
	ib_dma_unmap_single(ibdev, dma, O2_MAX_MSG_SIZE, dir);
	kfree(buf);
}

/**
 * o2_dev_put() - stop using a device
 * @dev: the device
 */
void o2_dev_put(struct o2_dev *dev)
{
	if (atomic_dec_and_test(&dev->users))
		wake_up(&o2_dev_waitq);
}

/* A device we may use: marked, for o2_dev_get() */
static int o2_dev_add(struct ib_device *ibdev)
{
	ib_set_client_data(ibdev, &o2_ib_client, ibdev);
	return 0;
}

#ifndef O2_HAVE_IB_CLIENT_ADD_INT
static void o2_dev_add_void(struct ib_device *ibdev)
{
	o2_dev_add(ibdev);
}
#endif

/*
 * A device goes away.  First no new user (o2_dev_get() refuses it from
 * here on: a connect racing the removal fails instead of setting up a
 * QP that nothing would close), then its NIs go down and its conns
 * close, then the last users are waited for.
 */
static void o2_dev_remove(struct ib_device *ibdev, void *client_data)
{
	struct o2_dev *dev, *found = NULL;

	mutex_lock(&o2_devs_mutex);
	ib_set_client_data(ibdev, &o2_ib_client, NULL);
	list_for_each_entry(dev, &o2_devs, list) {
		if (dev->ibdev == ibdev) {
			WRITE_ONCE(dev->dead, true);
			found = dev;
			break;
		}
	}
	mutex_unlock(&o2_devs_mutex);

	o2_up->device_removed(ibdev);
	if (!found)
		return;
	/* teardowns waiting for a port of it go on */
	o2_connd_kick();

	while (!wait_event_timeout(o2_dev_waitq, !atomic_read(&found->users),
				   10 * HZ))
		pr_warn("o2lnd: %s: waiting for %d connections to close\n",
			dev_name(&ibdev->dev), atomic_read(&found->users));

	mutex_lock(&o2_devs_mutex);
	list_del(&found->list);
	mutex_unlock(&o2_devs_mutex);
	ib_unregister_event_handler(&found->event_handler);
	o2_mr_pool_destroy(found);
	ib_dealloc_pd(found->pd);
	kfree(found);
}

/**
 * o2_dev_mr_stats() - MR pool figures of a device for NET_SHOW
 * @ibdev: the device, or NULL
 * @out: where to put them
 */
void o2_dev_mr_stats(struct ib_device *ibdev, struct o2lnd_ioc_net *out)
{
	struct o2_dev *dev;

	if (!ibdev)
		return;
	out->mr_max_pages = o2_mr_max_pages(ibdev);
	mutex_lock(&o2_devs_mutex);
	list_for_each_entry(dev, &o2_devs, list) {
		if (dev->ibdev != ibdev)
			continue;
		spin_lock(&dev->mr_lock);
		out->mr_pool_size = dev->mr_size;
		out->mr_pool_used = dev->mr_used;
		spin_unlock(&dev->mr_lock);
		out->mr_max_pages = dev->mr_pages;
		out->mr_recovered = atomic64_read(&dev->mr_recovered);
		break;
	}
	mutex_unlock(&o2_devs_mutex);
}

static struct ib_client o2_ib_client = {
	.name = "o2lnd",
	.add = O2_IB_CLIENT_ADD(o2_dev_add),
	.remove = o2_dev_remove,
};

/**
 * o2_dev_init() - register the ib_client
 *
 * Return: 0 or an errno.
 */
int o2_dev_init(void)
{
	return ib_register_client(&o2_ib_client);
}

/**
 * o2_dev_exit() - unregister the ib_client, freeing every PD
 *
 * Called after every conn is gone.
 */
void o2_dev_exit(void)
{
	ib_unregister_client(&o2_ib_client);
	WARN_ON(!list_empty(&o2_devs));
}
