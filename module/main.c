// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: load and unload (the parameters are in params.c, checked here).
 *
 * Load order: ib_client (devices), connd, NIs (listeners), the connd
 * scan, /dev/o2lnd.  Unload in reverse: the char device goes first (an
 * open file holds the module, so no ioctl can be running), the pushes to
 * peers stop (discovery.c), then NIs stop
 * (listeners destroyed, conns closed, waits until every conn and peer is
 * freed), connd, the ib_client (frees the PDs), and the NIs and the LNet
 * peers are freed.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "lnet.h"

static int o2_check_param(const char *name, int val, int min, int max)
{
	if (val >= min && val <= max)
		return 0;
	pr_err("o2lnd: %s=%d out of range %d..%d\n", name, val, min, max);
	return -EINVAL;
}

static int __init o2_init(void)
{
	struct o2_tunables t = {
		.peer_credits = o2_peer_credits,
		.peer_credits_hiw = o2_peer_credits_hiw,
		.concurrent_sends = o2_concurrent_sends,
		.credits = o2_credits,
		.ntx = o2_ntx,
		.keepalive = o2_keepalive,
	};
	char why[128];
	int rc;

	o2_wire_size_checks();
	if (o2_check_param("service", o2_service, 1, 65535) ||
	    o2_check_param("ack_timeout", o2_ack_timeout, 12, 24) ||
	    o2_check_param("cksum", o2_cksum_param, 0, 1) ||
	    o2_check_param("reg_pairs", o2_reg_pairs, -1, 1) ||
	    o2_check_param("health_sensitivity", o2_health_sensitivity, 0,
			   O2LND_HEALTH_MAX) ||
	    o2_check_param("retry_count", o2_retry_count, 0, O2_RETRY_MAX) ||
	    o2_check_param("lnet_peer_discovery_disabled",
			   o2_discovery_disabled, 0, 1) ||
	    o2_check_param("lnet_transaction_timeout", o2_transaction_timeout,
			   1, 3600) ||
	    o2_check_param("timeout", o2_timeout, 0, 3600) ||
	    o2_check_param("conns_per_peer", o2_conns_per_peer, 1,
			   O2_CONNS_PER_PEER_MAX))
		return -EINVAL;
	/* LNet's rule: each attempt must have at least a second */
	if (o2_transaction_timeout <= o2_retry_count) {
		pr_err("o2lnd: lnet_transaction_timeout=%d must be greater than retry_count=%d, as LNet requires\n",
		       o2_transaction_timeout, o2_retry_count);
		return -EINVAL;
	}
	/* as LNet: with health off, nothing is resent */
	if (!o2_health_sensitivity)
		o2_retry_count = 0;
	/* as o2iblnd: timeout=0 takes LNet's share of the transaction */
	if (!o2_timeout) {
		o2_timeout = o2_lnd_timeout_of(0, o2_transaction_timeout,
					       o2_retry_count);
		pr_info("o2lnd: timeout=0: %d s per attempt, from lnet_transaction_timeout=%d and retry_count=%d\n",
			o2_timeout, o2_transaction_timeout, o2_retry_count);
	}
	t.timeout = o2_timeout;
	if (o2_tunables_check(&t, why, sizeof(why))) {
		pr_err("o2lnd: %s\n", why);
		return -EINVAL;
	}
	o2_peer_credits_hiw = t.peer_credits_hiw;
	o2_concurrent_sends = t.concurrent_sends;

	o2_up = &o2_lnet_ops;	/* before any device or NI */
	rc = o2_dev_init();
	if (rc) {
		pr_err("o2lnd: cannot register the ib_client: %d\n", rc);
		return rc;
	}
	rc = o2_connd_init();
	if (rc)
		goto err_dev;
	rc = o2_nis_start(o2_networks ? o2_networks : "");
	if (rc)
		goto err_connd;
	o2_connd_start_scan();
	rc = o2_ctl_init();
	if (rc) {
		pr_err("o2lnd: cannot register /dev/%s: %d\n", O2LND_DEV_NAME,
		       rc);
		goto err_nis;
	}
	pr_info("o2lnd: version %s loaded\n", O2_VERSION);
	return 0;

err_nis:
	o2_rtr_stop();
	o2_lpeers_stop();
	o2_nis_stop();
	o2_lpeers_free();
err_connd:
	o2_connd_exit();
err_dev:
	o2_dev_exit();
	o2_nis_free();
	return rc;
}

static void __exit o2_exit(void)
{
	o2_ctl_exit();
	o2_rtr_stop();
	o2_lpeers_stop();
	o2_nis_stop();
	o2_connd_exit();
	o2_dev_exit();
	o2_nis_free();
	o2_lpeers_free();
	o2_pend_exit();
	o2_fault_clear();
	pr_info("o2lnd: unloaded\n");
}

module_init(o2_init);
module_exit(o2_exit);

MODULE_AUTHOR("o2lnd developers");
MODULE_DESCRIPTION("o2lnd: an LNet-style network driver over RDMA");
MODULE_VERSION(O2_VERSION);
MODULE_LICENSE("GPL");
