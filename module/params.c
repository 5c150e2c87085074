// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the module parameters, read by both layers.  A leaf: it calls
 * nothing.  They are read-only after load (0444); o2_init() checks their
 * ranges before anything starts and settles the derived ones
 * (peer_credits_hiw, concurrent_sends).  Under Lustre's LNet
 * (module/lustre/, built with O2_LUSTRE) LNet's own parameters (networks,
 * lnet_transaction_timeout, retry_count, discovery, health) are Lustre's
 * lnet.ko's, so they are not parameters of that module.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "o2lnd.h"

char *o2_networks = "o2ib0(eth0)";
#ifndef O2_LUSTRE
module_param_named(networks, o2_networks, charp, 0444);
MODULE_PARM_DESC(networks,
		 "networks and interfaces, e.g. \"o2ib0(eth0) o2ib1(eth1,eth2)\"");
#endif

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
MODULE_PARM_DESC(timeout,
		 "o2iblnd's timeout: seconds one attempt of a message may take, and the base of the connect phase deadlines (1..3600; 0: from lnet_transaction_timeout, as o2iblnd; reads back the value in use)");

int o2_conns_per_peer = 1;
module_param_named(conns_per_peer, o2_conns_per_peer, int, 0444);
MODULE_PARM_DESC(conns_per_peer,
		 "o2iblnd's conns_per_peer: connections the side that connects opens to each peer, messages taking them in turn (1..16; the other side accepts as many)");

int o2_transaction_timeout = 150;
#ifndef O2_LUSTRE
module_param_named(lnet_transaction_timeout, o2_transaction_timeout, int,
		   0444);
MODULE_PARM_DESC(lnet_transaction_timeout,
		 "LNet's transaction timeout: with timeout=0 a message and its resends take at most this many seconds, each attempt (this - 1) / (retry_count + 1) (1..3600, above retry_count; default 150)");
#endif

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

int o2_retry_count = 2;
#ifndef O2_LUSTRE
module_param_named(retry_count, o2_retry_count, int, 0444);
MODULE_PARM_DESC(retry_count,
		 "LNet's retry_count: times a message whose path failed is sent again, on another path where there is one, within its deadline (0..16; health_sensitivity=0 makes it 0, as LNet)");
#endif

int o2_discovery_disabled;
#ifndef O2_LUSTRE
module_param_named(lnet_peer_discovery_disabled, o2_discovery_disabled, int,
		   0444);
MODULE_PARM_DESC(lnet_peer_discovery_disabled,
		 "as LNet's: 0 (default) discovers a peer on the first selftest RPC sent to it and says in our ping info that we do discovery; 1 discovers only on o2ctl discover (0..1)");
#endif

int o2_health_sensitivity = 100;
#ifndef O2_LUSTRE
module_param_named(health_sensitivity, o2_health_sensitivity, int, 0444);
MODULE_PARM_DESC(health_sensitivity,
		 "LNet Health: how much a failure lowers, and a success raises, the health of a local NI or peer NID (0..1000 of 1000; 0: health off)");
#endif
