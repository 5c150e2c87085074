// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: module parameters, load and unload.
 *
 * Load order: ib_client (devices), connd, NIs (listeners), the connd
 * scan, /dev/o2lnd.  Unload in reverse: the char device goes first (an
 * open file holds the module, so no ioctl can be running), then NIs stop
 * (listeners destroyed, conns closed, waits until every conn and peer is
 * freed), connd, the ib_client (frees the PDs), and the NIs are freed.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "o2lnd.h"

static char *networks = "o2ib0(eth0)";
module_param(networks, charp, 0444);
MODULE_PARM_DESC(networks,
		 "networks and interfaces, e.g. \"o2ib0(eth0) o2ib1(eth1,eth2)\"");

int o2_service = 987;
module_param_named(service, o2_service, int, 0444);
MODULE_PARM_DESC(service, "rdma_cm service (port) number (1..65535)");

int o2_peer_credits = 8;
module_param_named(peer_credits, o2_peer_credits, int, 0444);
MODULE_PARM_DESC(peer_credits, "messages in flight per connection (2..255)");

int o2_peer_credits_hiw;
module_param_named(peer_credits_hiw, o2_peer_credits_hiw, int, 0444);
MODULE_PARM_DESC(peer_credits_hiw,
		 "credits owed before a NOOP returns them (peer_credits/2..peer_credits-1; 0: peer_credits-1)");

int o2_concurrent_sends;
module_param_named(concurrent_sends, o2_concurrent_sends, int, 0444);
MODULE_PARM_DESC(concurrent_sends,
		 "Sends in flight per connection (peer_credits/2..2*peer_credits; 0: peer_credits)");

int o2_ntx = 512;
module_param_named(ntx, o2_ntx, int, 0444);
MODULE_PARM_DESC(ntx, "messages alive per NI, queued ones included (credits..65536)");

int o2_keepalive = 100;
module_param_named(keepalive, o2_keepalive, int, 0444);
MODULE_PARM_DESC(keepalive,
		 "idle seconds before a keepalive NOOP (0..3600; 0: off)");

int o2_cksum_param;
module_param_named(cksum, o2_cksum_param, int, 0444);
MODULE_PARM_DESC(cksum,
		 "checksum every message, as o2iblnd's cksum (0 off, 1 on); bulk payloads are checked end to end by the selftest pattern");

int o2_timeout = 50;
module_param_named(timeout, o2_timeout, int, 0444);
MODULE_PARM_DESC(timeout, "tx and connect timeout in seconds (1..3600)");

int o2_credits = 256;
module_param_named(credits, o2_credits, int, 0444);
MODULE_PARM_DESC(credits,
		 "NI tx credits: messages in flight per NI, and the most one peer may hold (8..16384)");

int o2_ack_timeout = 16;
module_param_named(ack_timeout, o2_ack_timeout, int, 0444);
MODULE_PARM_DESC(ack_timeout,
		 "RC ack timeout exponent: 4.096 us * 2^n per retry (12..24; 16 = 268 ms, so a dead peer fails a send in ~1.6 s)");

int o2_reg_pairs = -1;
module_param_named(reg_pairs, o2_reg_pairs, int, 0444);
MODULE_PARM_DESC(reg_pairs,
		 "post each memory registration as LOCAL_INV + REG_MR of one key, which a device that replays local work requests on retransmission needs (-1: on rdma_rxe only, 0: never, 1: always)");

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
		.timeout = o2_timeout,
		.keepalive = o2_keepalive,
	};
	char why[128];
	int rc;

	o2_wire_size_checks();
	if (o2_check_param("service", o2_service, 1, 65535) ||
	    o2_check_param("ack_timeout", o2_ack_timeout, 12, 24) ||
	    o2_check_param("cksum", o2_cksum_param, 0, 1) ||
	    o2_check_param("reg_pairs", o2_reg_pairs, -1, 1))
		return -EINVAL;
	if (o2_tunables_check(&t, why, sizeof(why))) {
		pr_err("o2lnd: %s\n", why);
		return -EINVAL;
	}
	o2_peer_credits_hiw = t.peer_credits_hiw;
	o2_concurrent_sends = t.concurrent_sends;

	rc = o2_dev_init();
	if (rc) {
		pr_err("o2lnd: cannot register the ib_client: %d\n", rc);
		return rc;
	}
	rc = o2_connd_init();
	if (rc)
		goto err_dev;
	rc = o2_nis_start(networks ? networks : "");
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
	o2_nis_stop();
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
	o2_nis_stop();
	o2_connd_exit();
	o2_dev_exit();
	o2_nis_free();
	o2_fault_clear();
	pr_info("o2lnd: unloaded\n");
}

module_init(o2_init);
module_exit(o2_exit);

MODULE_AUTHOR("o2lnd developers");
MODULE_DESCRIPTION("o2lnd: an LNet-style network driver over RDMA");
MODULE_VERSION(O2_VERSION);
MODULE_LICENSE("GPL");
