/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd: fault injection rules (O2LND_IOC_FAULT_*).  The rule table and
 * its matching are plain logic (no RDMA headers) so KUnit drives them.
 */
#ifndef _O2LND_FAULT_H
#define _O2LND_FAULT_H

#include <linux/types.h>
#include <uapi/o2lnd.h>

/**
 * struct o2_fault_hit - what a rule that fired asks for
 * @delay_ms: CM_DELAY, SEND_DELAY
 * @queue_depth: REJECT: advertised queue depth (0: ours)
 * @max_frags: REJECT: advertised fragments (0: ours)
 * @arg: the rule's argument (the reject reason for REJECT)
 */
struct o2_fault_hit {
	u32 delay_ms;
	u32 queue_depth;
	u32 max_frags;
	u32 arg;
};

int o2_fault_validate(const struct o2lnd_ioc_fault *rule);
int o2_fault_add(const struct o2lnd_ioc_fault *rule, u32 *id);
int o2_fault_del(u32 id);
int o2_fault_get(u32 index, struct o2lnd_ioc_fault *out);
void o2_fault_clear(void);
bool o2_fault_fire(u32 kind, u32 arg, u64 local_nid, u64 peer_nid,
		   struct o2_fault_hit *hit);
u32 o2_fault_event_phase(u32 event);

#endif /* _O2LND_FAULT_H */
