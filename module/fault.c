// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: fault injection.  Up to O2LND_FAULT_MAX_RULES rules, each
 * matching a kind, an argument (CM event, connect phase, reject reason or
 * message type) and optionally a local and a peer NID.  A rule fires with
 * its probability on each match, at most @count times (0: no limit); a
 * spent rule stays listed (with its fired count) until deleted.  The
 * hooks sit in the CM handler (cm.c), the receive path (rx.c) and the
 * Send completion (tx.c).
 *
 * Locking: o2_fault_lock is a leaf spinlock; o2_fault_nrules lets the
 * hot paths skip it while no rule exists.
 */
#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <linux/random.h>
#include <linux/errno.h>
#include <linux/string.h>
#include "compat.h"
#include "fault.h"
#include "wire.h"

struct o2_fault_rule {
	struct o2lnd_ioc_fault r;	/* as added; r.fired counts */
	bool used;
};

static DEFINE_SPINLOCK(o2_fault_lock);
static struct o2_fault_rule o2_fault_rules[O2LND_FAULT_MAX_RULES];
static atomic_t o2_fault_nrules = ATOMIC_INIT(0);
static u32 o2_fault_next_id = 1;

/**
 * o2_fault_event_phase() - the connect phase a CM event ends
 * @event: an O2LND_CM_* event
 *
 * Return: O2LND_PHASE_ADDR, _ROUTE, _CONNECT, or O2LND_PHASE_NONE for an
 * event that ends no phase.
 */
u32 o2_fault_event_phase(u32 event)
{
	switch (event) {
	case O2LND_CM_ADDR_RESOLVED:
	case O2LND_CM_ADDR_ERROR:
		return O2LND_PHASE_ADDR;
	case O2LND_CM_ROUTE_RESOLVED:
	case O2LND_CM_ROUTE_ERROR:
		return O2LND_PHASE_ROUTE;
	case O2LND_CM_CONNECT_RESPONSE:
	case O2LND_CM_CONNECT_ERROR:
	case O2LND_CM_UNREACHABLE:
	case O2LND_CM_REJECTED:
	case O2LND_CM_ESTABLISHED:
		return O2LND_PHASE_CONNECT;
	default:
		return O2LND_PHASE_NONE;
	}
}

/* O2LND_NID_ANY or an o2ib NID */
static bool o2_fault_nid_ok(u64 nid)
{
	return nid == O2LND_NID_ANY ||
	       (nid >> 48) == O2LND_NET_TYPE_O2IB;
}

static bool o2_fault_msg_type_ok(u32 type)
{
	return type == 0 || (type >= 0xd0 && type <= 0xd7);
}

/**
 * o2_fault_validate() - check a rule before it is added
 * @rule: the rule as passed to O2LND_IOC_FAULT_ADD
 *
 * The argument must suit the kind: a CM event (DEVICE_REMOVAL cannot be
 * dropped or delayed: the device would wait for us), a connect phase, a
 * reject reason other than 0, a message type (0xd0..0xd7, or 0 for any),
 * a work request of a chain (0..O2LND_FAULT_POST_FAIL_MAX_ARG).
 * A delay only for CM_DELAY and SEND_DELAY (1..O2LND_FAULT_MAX_DELAY_MS),
 * a queue depth (2..255) or fragments (1..256) only for REJECT, a
 * probability in 1..O2LND_FAULT_PROB_ALWAYS, NIDs that are o2ib or
 * O2LND_NID_ANY, and the output fields 0.
 *
 * Return: 0 or -EINVAL.
 */
int o2_fault_validate(const struct o2lnd_ioc_fault *rule)
{
	bool delay = false, arg_ok;

	switch (rule->kind) {
	case O2LND_FAULT_CM_DELAY:
		delay = true;
		fallthrough;
	case O2LND_FAULT_CM_DROP:
		arg_ok = rule->arg < O2LND_CM_NEVENTS &&
			 rule->arg != O2LND_CM_DEVICE_REMOVAL;
		break;
	case O2LND_FAULT_STALL:
		arg_ok = rule->arg >= O2LND_PHASE_ADDR &&
			 rule->arg <= O2LND_PHASE_CONNECT;
		break;
	case O2LND_FAULT_REJECT:
		arg_ok = rule->arg >= 1 && rule->arg <= O2LND_REJECT_MAX;
		break;
	case O2LND_FAULT_MSG_DROP:
	case O2LND_FAULT_MSG_CORRUPT:
		arg_ok = o2_fault_msg_type_ok(rule->arg);
		break;
	case O2LND_FAULT_SEND_DELAY:
		delay = true;
		arg_ok = rule->arg == 0;
		break;
	case O2LND_FAULT_INV_FAIL:
		arg_ok = rule->arg == 0;
		break;
	case O2LND_FAULT_POST_FAIL:
		arg_ok = rule->arg <= O2LND_FAULT_POST_FAIL_MAX_ARG;
		break;
	default:
		return -EINVAL;
	}
	if (!arg_ok)
		return -EINVAL;
	if (delay ? (!rule->delay_ms ||
		     rule->delay_ms > O2LND_FAULT_MAX_DELAY_MS) :
		    rule->delay_ms != 0)
		return -EINVAL;
	if (rule->kind != O2LND_FAULT_REJECT &&
	    (rule->queue_depth || rule->max_frags))
		return -EINVAL;
	if (rule->queue_depth && (rule->queue_depth < 2 ||
				  rule->queue_depth > 255))
		return -EINVAL;
	if (rule->max_frags > O2_MAX_FRAGS)
		return -EINVAL;
	if (!rule->probability ||
	    rule->probability > O2LND_FAULT_PROB_ALWAYS)
		return -EINVAL;
	if (rule->id || rule->index || rule->count_rules || rule->fired ||
	    rule->pad)
		return -EINVAL;
	if (!o2_fault_nid_ok(rule->peer_nid) ||
	    !o2_fault_nid_ok(rule->local_nid))
		return -EINVAL;
	return 0;
}

/**
 * o2_fault_add() - add a rule
 * @rule: the rule (validated here)
 * @id: out: its id
 *
 * Return: 0, -EINVAL for a bad rule, -ENOSPC when the table is full.
 */
int o2_fault_add(const struct o2lnd_ioc_fault *rule, u32 *id)
{
	int i, rc = o2_fault_validate(rule);

	if (rc)
		return rc;
	spin_lock(&o2_fault_lock);
	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++)
		if (!o2_fault_rules[i].used)
			break;
	if (i == O2LND_FAULT_MAX_RULES) {
		spin_unlock(&o2_fault_lock);
		return -ENOSPC;
	}
	o2_fault_rules[i].r = *rule;
	o2_fault_rules[i].r.id = o2_fault_next_id++;
	if (!o2_fault_next_id)
		o2_fault_next_id = 1;
	o2_fault_rules[i].used = true;
	*id = o2_fault_rules[i].r.id;
	atomic_inc(&o2_fault_nrules);
	spin_unlock(&o2_fault_lock);
	return 0;
}

/**
 * o2_fault_del() - delete a rule, or all of them
 * @id: the rule's id, 0 for all
 *
 * Return: 0, or -ENOENT for an id that is not in the table.
 */
int o2_fault_del(u32 id)
{
	int i, rc = id ? -ENOENT : 0;

	spin_lock(&o2_fault_lock);
	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++) {
		struct o2_fault_rule *f = &o2_fault_rules[i];

		if (!f->used || (id && f->r.id != id))
			continue;
		f->used = false;
		atomic_dec(&o2_fault_nrules);
		rc = 0;
	}
	spin_unlock(&o2_fault_lock);
	return rc;
}

/**
 * o2_fault_get() - the rule at @index, in table order
 * @index: 0-based
 * @out: filled with the rule (id, fired included) and count_rules
 *
 * Return: 0 or -ENOENT past the last rule.
 */
int o2_fault_get(u32 index, struct o2lnd_ioc_fault *out)
{
	u32 n = 0, seen = 0;
	int i, rc = -ENOENT;

	spin_lock(&o2_fault_lock);
	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++)
		n += o2_fault_rules[i].used;
	for (i = 0; i < O2LND_FAULT_MAX_RULES; i++) {
		if (!o2_fault_rules[i].used)
			continue;
		if (seen++ == index) {
			*out = o2_fault_rules[i].r;
			rc = 0;
			break;
		}
	}
	spin_unlock(&o2_fault_lock);
	out->index = index;
	out->count_rules = n;
	return rc;
}

/**
 * o2_fault_clear() - delete every rule (module unload)
 */
void o2_fault_clear(void)
{
	o2_fault_del(0);
}

static bool o2_fault_matches(const struct o2lnd_ioc_fault *r, u32 kind,
			     u32 arg, u64 local_nid, u64 peer_nid)
{
	if (r->kind != kind)
		return false;
	if (r->arg != arg && !((kind == O2LND_FAULT_MSG_DROP ||
				kind == O2LND_FAULT_MSG_CORRUPT) && !r->arg))
		return false;
	if (r->local_nid != O2LND_NID_ANY && r->local_nid != local_nid)
		return false;
	return r->peer_nid == O2LND_NID_ANY || r->peer_nid == peer_nid;
}

/**
 * o2_fault_fire() - does a rule fire for this event?
 * @kind: O2LND_FAULT_*
 * @arg: the event, phase or message type; ignored for REJECT and
 *	SEND_DELAY, which match any; for POST_FAIL the chain's work
 *	requests (a rule matches a chain longer than its own @arg)
 * @local_nid: the local NI's NID
 * @peer_nid: the remote NID
 * @hit: out: what the first rule that fired asks for
 *
 * Any context; takes only the leaf o2_fault_lock.
 *
 * Return: true if a rule fired.
 */
bool o2_fault_fire(u32 kind, u32 arg, u64 local_nid, u64 peer_nid,
		   struct o2_fault_hit *hit)
{
	bool fired = false;
	int i;

	if (!atomic_read(&o2_fault_nrules))
		return false;
	spin_lock(&o2_fault_lock);
	for (i = 0; i < O2LND_FAULT_MAX_RULES && !fired; i++) {
		struct o2_fault_rule *f = &o2_fault_rules[i];
		u32 match_arg = arg;

		if (!f->used || (f->r.count && f->r.fired >= f->r.count))
			continue;
		if (kind == O2LND_FAULT_REJECT || kind == O2LND_FAULT_SEND_DELAY)
			match_arg = f->r.arg;
		/* POST_FAIL: @arg is the chain's length, longer than the rule's */
		if (kind == O2LND_FAULT_POST_FAIL) {
			if (arg <= f->r.arg)
				continue;
			match_arg = f->r.arg;
		}
		if (!o2_fault_matches(&f->r, kind, match_arg, local_nid,
				      peer_nid))
			continue;
		if (f->r.probability < O2LND_FAULT_PROB_ALWAYS &&
		    get_random_u32_below(O2LND_FAULT_PROB_ALWAYS) >=
		    f->r.probability)
			continue;
		fired = true;
		f->r.fired++;
		hit->delay_ms = f->r.delay_ms;
		hit->queue_depth = f->r.queue_depth;
		hit->max_frags = f->r.max_frags;
		hit->arg = f->r.arg;
	}
	spin_unlock(&o2_fault_lock);
	return fired;
}
