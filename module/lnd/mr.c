// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: fast-registration (FRWR) memory regions for bulk transfers.
 *
 * Each device has a pool of MRs, allocated on demand up to a limit taken
 * from the device (max_mr, max_fast_reg_page_list_len).  An MR is
 * registered with an IB_WR_REG_MR work request posted before the message
 * that advertises it (a fresh key each time, ib_inc_rkey()), and
 * invalidated with IB_WR_LOCAL_INV before its bulk transfer completes to
 * its owner.  A device that executes local work requests again when it
 * retransmits (o2_dev.reg_replayed: rdma_rxe) gets LOCAL_INV + REG_MR of
 * an unchanged key instead, the only registration that survives being
 * executed twice; a stale key of such a device is still refused between
 * uses, since the MR is invalidated after each transfer.  Only an MR
 * whose invalidation completed successfully goes back to the pool; one
 * whose invalidation failed or flushed, or whose transfer was abandoned,
 * may still be valid for the peer: it is destroyed and replaced
 * (o2_mr_put(..., false)), never reused.
 *
 * Locking: dev->mr_lock protects the free list and the counts; it is a
 * leaf.  ib_alloc_mr()/ib_dereg_mr() are called without it (they may
 * sleep): every caller is in process context.
 */
#include <linux/slab.h>
#include "lnd.h"

/**
 * o2_mr_max_pages() - pages one MR of a device maps
 * @ibdev: the device
 *
 * Return: enough for the largest bulk payload, or the device's limit.
 */
u32 o2_mr_max_pages(struct ib_device *ibdev)
{
	return min_t(u32, O2LND_BRW_MAX_SIZE / PAGE_SIZE + 1,
		     ibdev->attrs.max_fast_reg_page_list_len);
}

/**
 * o2_mr_pool_init() - size the pool of a new device
 * @dev: the device
 */
void o2_mr_pool_init(struct o2_dev *dev)
{
	const struct ib_device_attr *a = &dev->ibdev->attrs;

	spin_lock_init(&dev->mr_lock);
	INIT_LIST_HEAD(&dev->mr_free);
	dev->mr_pages = o2_mr_max_pages(dev->ibdev);
	dev->mr_max = min_t(u32, max(a->max_mr / 4, 1), 256);
	if (!(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		dev->mr_max = 0;
	dev->reg_replayed = o2_reg_pairs < 0 ?
			    dev->ibdev->ops.driver_id == RDMA_DRIVER_RXE :
			    o2_reg_pairs;
	if (dev->reg_replayed)
		pr_info("o2lnd: %s replays local work requests when it retransmits: registrations go as invalidate + register pairs of one key\n",
			dev_name(&dev->ibdev->dev));
}

static struct o2_mr *o2_mr_new(struct o2_dev *dev)
{
	struct o2_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	mr->mr = ib_alloc_mr(dev->pd, IB_MR_TYPE_MEM_REG, dev->mr_pages);
	if (IS_ERR(mr->mr)) {
		kfree(mr);
		return NULL;
	}
	mr->dev = dev;
	INIT_LIST_HEAD(&mr->list);
	return mr;
}

/**
 * o2_mr_get() - an MR from the pool
 * @dev: the device (the caller holds a user count on it)
 *
 * Return: the MR, or NULL when the pool is exhausted or allocation fails.
 */
struct o2_mr *o2_mr_get(struct o2_dev *dev)
{
	struct o2_mr *mr;
	bool grow;

	spin_lock(&dev->mr_lock);
	mr = list_first_entry_or_null(&dev->mr_free, struct o2_mr, list);
	if (mr)
		list_del_init(&mr->list);
	grow = !mr && dev->mr_size < dev->mr_max;
	if (mr || grow)
		dev->mr_used++;
	if (grow)
		dev->mr_size++;
	spin_unlock(&dev->mr_lock);
	if (!grow)
		return mr;
	mr = o2_mr_new(dev);
	if (!mr) {
		spin_lock(&dev->mr_lock);
		dev->mr_used--;
		dev->mr_size--;
		spin_unlock(&dev->mr_lock);
	}
	return mr;
}

/**
 * o2_mr_put() - give an MR back
 * @mr: the MR
 * @clean: its last registration was invalidated successfully; if not,
 *	it may still be valid for the peer: it is destroyed and replaced
 *
 * Process context.
 */
void o2_mr_put(struct o2_mr *mr, bool clean)
{
	struct o2_dev *dev = mr->dev;
	struct o2_mr *fresh = NULL;

	if (!clean) {
		ib_dereg_mr(mr->mr);
		kfree(mr);
		atomic64_inc(&dev->mr_recovered);
		fresh = o2_mr_new(dev);
		mr = fresh;
	}
	spin_lock(&dev->mr_lock);
	dev->mr_used--;
	if (mr)
		list_add(&mr->list, &dev->mr_free);
	else
		dev->mr_size--;
	spin_unlock(&dev->mr_lock);
}

/**
 * o2_mr_pool_destroy() - free the pool of a device being released
 * @dev: the device; no MR is in use
 */
void o2_mr_pool_destroy(struct o2_dev *dev)
{
	struct o2_mr *mr, *tmp;

	WARN_ON(dev->mr_used);
	list_for_each_entry_safe(mr, tmp, &dev->mr_free, list) {
		list_del(&mr->list);
		ib_dereg_mr(mr->mr);
		kfree(mr);
	}
	dev->mr_size = 0;
}
