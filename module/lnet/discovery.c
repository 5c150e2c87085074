// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: LNet peers as Multi-Rail and discovery know them: one peer, many
 * NIDs.
 *
 * A peer (struct o2_lpeer) is learned from its ping info: the REPLY of a
 * ping or discovery of ours (ping.c calls o2_lpeer_learn()), or a PUSH
 * it sends us when its NIs change (a PUT of its ping info on the reserved
 * portal with the ping match bits, o2_push_rx(), ACKed as LNet does).
 * Its NIDs are listed primary first, each with the status the peer gave
 * it and the health o2lnd keeps for it (health.h).  o2lnd pushes its own
 * ping info to the peers that do discovery: when it discovers one
 * (o2_discover(), as `lnetctl discover`) and whenever a local NI goes
 * down or up (o2_push_all(), from a work item).
 *
 * The per-NI peers of the LND (struct o2_peer, one per local NI and peer
 * NID: connections and credits) stay what they are; an o2_lpeer only
 * groups their NIDs, which is what Multi-Rail selection reads.
 *
 * Locking: o2_lpeers_lock (a spinlock; every user runs in process
 * context, receive completions included: IB_POLL_WORKQUEUE) protects the
 * list, the NID hash and every field of every o2_lpeer.  Nobody keeps a
 * pointer to an o2_lpeer outside the lock: readers copy out what they
 * need, so a peer can be merged into another or freed under the lock
 * alone, with no reference count.  The table is bounded (O2_LPEERS_MAX):
 * a full table learns no new peer, it counts and logs the refusal.
 */
#include <linux/slab.h>
#include <linux/hashtable.h>
#include <linux/ratelimit.h>
#include <linux/workqueue.h>
#include "lnet.h"

#define O2_LPEERS_MAX		4096

/**
 * struct o2_lpeer_nid - one NID of an LNet peer
 * @hnode: in o2_lpeer_by_nid (its key: @nid)
 * @lp: the peer it belongs to
 * @nid: the NID
 * @status: O2LND_NI_STATUS_* as the peer reported it
 * @health: 0..O2_HEALTH_MAX, o2lnd's view of this NID
 * @selected: times Multi-Rail chose it
 * @failures: failures blamed on it
 * @probe_at: jiffies of its next recovery ping while it is unhealthy
 * @probe_gap: seconds between its recovery pings (1, doubling to 60)
 */
struct o2_lpeer_nid {
	struct hlist_node hnode;
	struct o2_lpeer *lp;
	u64 nid;
	u32 status;
	u32 health;
	u64 selected;
	u64 failures;
	unsigned long probe_at;
	u32 probe_gap;
};

/**
 * struct o2_lpeer - an LNet peer: its NIDs, primary first
 * @list: in o2_lpeers
 * @features: O2_PING_FEAT_* of its last ping info
 * @seqno: the sequence number of its last ping info
 * @nnis: NIDs its ping info listed (may exceed @n)
 * @n: NIDs in @nids
 * @flags: O2LND_LPEER_F_*
 * @cursor: round robin among its NIDs
 * @nids: the NIDs
 */
struct o2_lpeer {
	struct list_head list;
	u32 features;
	u32 seqno;
	u32 nnis;
	u32 n;
	u32 flags;
	u32 cursor;
	struct o2_lpeer_nid nids[O2_PING_VIEW_MAX];
};

static DEFINE_SPINLOCK(o2_lpeers_lock);
static LIST_HEAD(o2_lpeers);
static DEFINE_HASHTABLE(o2_lpeer_by_nid, 8);
static u32 o2_nlpeers;
static atomic_t o2_lpeer_unhealthy;	/* NIDs below O2_HEALTH_MAX */
static atomic_t o2_seqno = ATOMIC_INIT(1);

/*
 * Discovery on first send (o2_discover_on_send()): NIDs to discover, or
 * whose discovery failed and waits O2_AUTODISC_RETRY before another
 * (o2_lpeers_lock).  A NID leaves once a peer lists it.
 */
#define O2_AUTODISC_MAX		16
#define O2_AUTODISC_RETRY	(60 * HZ)
#define O2_AUTODISC_TIMEOUT_MS	5000
static struct {
	u64 nid;		/* 0: a free slot */
	unsigned long at;	/* jiffies of the last try */
	bool queued;		/* waits for o2_autodisc_work */
} o2_autodisc[O2_AUTODISC_MAX];

static void o2_push_work_fn(struct work_struct *work);
static DECLARE_WORK(o2_push_work, o2_push_work_fn);
static void o2_autodisc_work_fn(struct work_struct *work);
static DECLARE_WORK(o2_autodisc_work, o2_autodisc_work_fn);
static void o2_recovery_work_fn(struct work_struct *work);
static DECLARE_WORK(o2_recovery_work, o2_recovery_work_fn);
static bool o2_push_stopped;	/* o2_lpeers_lock: no more pushes, probes */

static struct o2_lpeer_nid *o2_lpeer_nid_find_locked(u64 nid)
{
	struct o2_lpeer_nid *e;

	lockdep_assert_held(&o2_lpeers_lock);
	hash_for_each_possible(o2_lpeer_by_nid, e, hnode, nid)
		if (e->nid == nid)
			return e;
	return NULL;
}

/* Take @lp's NIDs out of the hash (the peer keeps them). */
static void o2_lpeer_unhash_locked(struct o2_lpeer *lp)
{
	u32 i;

	lockdep_assert_held(&o2_lpeers_lock);
	for (i = 0; i < lp->n; i++)
		hash_del(&lp->nids[i].hnode);
}

static void o2_lpeer_hash_locked(struct o2_lpeer *lp)
{
	u32 i;

	lockdep_assert_held(&o2_lpeers_lock);
	for (i = 0; i < lp->n; i++) {
		lp->nids[i].lp = lp;
		hash_add(o2_lpeer_by_nid, &lp->nids[i].hnode, lp->nids[i].nid);
	}
}

/* @e leaves the table: it no longer counts as unhealthy. */
static void o2_lpeer_nid_gone_locked(const struct o2_lpeer_nid *e)
{
	lockdep_assert_held(&o2_lpeers_lock);
	if (e->health < O2_HEALTH_MAX)
		atomic_dec(&o2_lpeer_unhealthy);
}

/* Free @lp, whose NIDs are not hashed.  Caller holds o2_lpeers_lock. */
static void o2_lpeer_free_locked(struct o2_lpeer *lp)
{
	lockdep_assert_held(&o2_lpeers_lock);
	list_del(&lp->list);
	o2_nlpeers--;
	kfree(lp);
}

/*
 * Drop @nid from @lp (another peer now lists it); a peer left with no
 * NID goes.  Caller holds o2_lpeers_lock; @lp's NIDs are hashed.
 */
static void o2_lpeer_drop_nid_locked(struct o2_lpeer *lp, u64 nid)
{
	u32 i, j = 0;

	lockdep_assert_held(&o2_lpeers_lock);
	o2_lpeer_unhash_locked(lp);
	for (i = 0; i < lp->n; i++) {
		if (lp->nids[i].nid != nid)
			lp->nids[j++] = lp->nids[i];
		else
			o2_lpeer_nid_gone_locked(&lp->nids[i]);
	}
	lp->n = j;
	if (!lp->n) {
		o2_lpeer_free_locked(lp);
		return;
	}
	o2_lpeer_hash_locked(lp);
}

/**
 * o2_lpeer_learn() - what a peer's ping info says about it
 * @v: its ping info, unpacked (o2_ping_info_unpack())
 * @push: it came in a push (else in a ping REPLY of ours)
 *
 * The peer listing @v's NIDs becomes exactly those NIDs, primary first,
 * with their status; a NID it kept keeps its health and counts, a new one
 * starts healthy.  A NID another peer listed moves to this one.  A push
 * older than what is known (a lower sequence number) changes nothing.
 *
 * Return: 0; -EPROTO (no NID), -ENOSPC (a new peer, table full),
 * -ENOMEM.
 */
int o2_lpeer_learn(const struct o2_ping_view *v, bool push)
{
	struct o2_lpeer *lp = NULL, *fresh;
	struct o2_lpeer_nid old[O2_PING_VIEW_MAX], *e;
	u32 i, j, nold;

	if (!v->n)
		return -EPROTO;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&o2_lpeers_lock);
	for (i = 0; i < v->n && !lp; i++) {
		e = o2_lpeer_nid_find_locked(v->ni[i].nid);
		if (e)
			lp = e->lp;
	}
	if (lp && push && (lp->features & O2_PING_FEAT_DISCOVERY) &&
	    (v->features & O2_PING_FEAT_DISCOVERY) && v->seqno < lp->seqno) {
		spin_unlock(&o2_lpeers_lock);
		kfree(fresh);
		return 0;
	}
	if (!lp) {
		if (o2_nlpeers >= O2_LPEERS_MAX) {
			spin_unlock(&o2_lpeers_lock);
			kfree(fresh);
			pr_warn_ratelimited("o2lnd: %d LNet peers known already: not learning another\n",
					    O2_LPEERS_MAX);
			return -ENOSPC;
		}
		lp = fresh;
		fresh = NULL;
		list_add_tail(&lp->list, &o2_lpeers);
		o2_nlpeers++;
	}
	/* the NIDs this peer now lists leave any other peer */
	for (i = 0; i < v->n; i++) {
		e = o2_lpeer_nid_find_locked(v->ni[i].nid);
		if (e && e->lp != lp)
			o2_lpeer_drop_nid_locked(e->lp, v->ni[i].nid);
	}
	o2_lpeer_unhash_locked(lp);
	nold = lp->n;
	memcpy(old, lp->nids, nold * sizeof(old[0]));
	for (i = 0; i < v->n; i++) {
		struct o2_lpeer_nid *n = &lp->nids[i];

		memset(n, 0, sizeof(*n));
		n->nid = v->ni[i].nid;
		n->status = v->ni[i].status;
		n->health = O2_HEALTH_MAX;
		for (j = 0; j < nold; j++) {
			if (old[j].nid == n->nid) {
				n->health = old[j].health;
				n->selected = old[j].selected;
				n->failures = old[j].failures;
				n->probe_at = old[j].probe_at;
				n->probe_gap = old[j].probe_gap;
				old[j].health = O2_HEALTH_MAX;	/* kept */
				break;
			}
		}
	}
	for (j = 0; j < nold; j++)
		o2_lpeer_nid_gone_locked(&old[j]);
	lp->n = v->n;
	lp->nnis = v->nnis;
	lp->features = v->features;
	lp->seqno = v->seqno;
	if (push)
		lp->flags |= O2LND_LPEER_F_PUSHED_TO_US;
	if (v->features & O2_PING_FEAT_MULTI_RAIL)
		lp->flags |= O2LND_LPEER_F_MULTI_RAIL;
	else
		lp->flags &= ~O2LND_LPEER_F_MULTI_RAIL;
	o2_lpeer_hash_locked(lp);
	spin_unlock(&o2_lpeers_lock);
	kfree(fresh);
	/* is it a gateway of ours?  It may have stopped forwarding. */
	o2_route_gw_heard(v);
	return 0;
}

/**
 * o2_lpeer_health() - a success or a failure of @nid: its NID's health
 * @nid: a peer NID
 * @ok: raise its health, else lower it (and count the failure)
 *
 * By o2_health_sensitivity; a NID no peer lists is ignored.  A success
 * of a NID at full health (the common case) takes no lock.
 */
void o2_lpeer_health(u64 nid, bool ok)
{
	struct o2_lpeer_nid *e;
	u32 was;

	if (!o2_health_sensitivity ||
	    (ok && !atomic_read(&o2_lpeer_unhealthy)))
		return;
	spin_lock(&o2_lpeers_lock);
	e = o2_lpeer_nid_find_locked(nid);
	if (e) {
		was = e->health;
		if (ok) {
			e->health = o2_health_inc(was, o2_health_sensitivity);
		} else {
			e->health = o2_health_dec(was, o2_health_sensitivity);
			e->failures++;
		}
		if (was == O2_HEALTH_MAX && e->health < O2_HEALTH_MAX) {
			atomic_inc(&o2_lpeer_unhealthy);
			e->probe_at = jiffies + HZ;	/* the first probe */
			e->probe_gap = 0;
		} else if (was < O2_HEALTH_MAX &&
			   e->health == O2_HEALTH_MAX) {
			atomic_dec(&o2_lpeer_unhealthy);
		}
	}
	spin_unlock(&o2_lpeers_lock);
}

/* Raise or lower the health of local NI @ni by the sensitivity. */
static void o2_ni_health(struct o2_ni *ni, bool ok)
{
	int old = atomic_read(&ni->health), new;

	do {
		new = ok ? o2_health_inc(old, o2_health_sensitivity) :
			o2_health_dec(old, o2_health_sensitivity);
		if (new == old)
			return;
	} while (!atomic_try_cmpxchg(&ni->health, &old, new));
	if (old == O2_HEALTH_MAX) {
		/* its first recovery step in a second (racy, harmless) */
		WRITE_ONCE(ni->probe_at, jiffies + HZ);
	}
}

/**
 * o2_health_note() - LNet Health: how a message of ours ended
 * @ni: the local NI it was sent from
 * @nid: the peer NID it was sent to
 * @status: 0 or its errno
 * @phase: where it was when it ended
 *
 * Classified as LNet does (o2_hstatus_of()): a success raises the local
 * NI's health, a failure lowers the health of the side it is blamed on,
 * the local NI's, the peer NID's or both (o2_hstatus_blame()).  Any
 * context without o2lnd locks.
 */
void o2_health_note(struct o2_ni *ni, u64 nid, int status,
		    enum o2_tx_phase phase)
{
	enum o2_hstatus hs = o2_hstatus_of(status, phase);
	unsigned int blame = o2_hstatus_blame(hs);

	if (!o2_health_sensitivity)
		return;
	if (hs == O2_HS_OK) {
		if (atomic_read(&ni->health) < O2_HEALTH_MAX)
			o2_ni_health(ni, true);
		return;
	}
	if (blame & O2_BLAME_LOCAL)
		o2_ni_health(ni, false);
	if (blame & O2_BLAME_REMOTE)
		o2_lpeer_health(nid, false);
}

/**
 * o2_lpeer_same() - are @a and @b NIDs of one node?
 * @a: a NID
 * @b: another
 *
 * An answer to a message may come from any NID of a Multi-Rail peer (its
 * path was chosen anew after a failure, as LNet does).
 *
 * Return: true if @a == @b or one LNet peer lists both.
 */
bool o2_lpeer_same(u64 a, u64 b)
{
	struct o2_lpeer_nid *ea, *eb;
	bool same;

	if (a == b)
		return true;
	spin_lock(&o2_lpeers_lock);
	ea = o2_lpeer_nid_find_locked(a);
	eb = o2_lpeer_nid_find_locked(b);
	same = ea && eb && ea->lp == eb->lp;
	spin_unlock(&o2_lpeers_lock);
	return same;
}

/**
 * o2_lnet_answer_from() - may the answer to a request come from @from?
 * @target: the NID the request was sent to
 * @from: the answer's src_nid
 * @routed: the request went through a router
 *
 * o2_mr_may_answer() with the peers o2lnd knows (o2_lpeer_same()).  LNet
 * itself matches answers by their MD cookie alone.
 *
 * Return: true if the answer may be taken.  May not be called under the
 * pending table's lock (a leaf).
 */
bool o2_lnet_answer_from(u64 target, u64 from, bool routed)
{
	return o2_mr_may_answer(target, from, routed,
				from != target && o2_lpeer_same(target, from));
}

/**
 * o2_lnet_select() - Multi-Rail: the path a message to @nid takes
 * @nid: the NID the caller named
 * @src_nid: the local NID asked for, or O2LND_NID_ANY
 * @failed: a resend: the peer NID its failed attempt went to (another
 *	is taken where one is usable, o2_mr_pick_resend()), else 0
 * @dest: out: the peer NID to send to
 * @rc: out: why there is none (as o2_ni_for())
 *
 * To a Multi-Rail peer that o2lnd knows (discovery, a ping, a push), with
 * no source asked for: every NID of the peer that it reports up, each
 * reached from the local NI whose subnet holds it (o2_ni_toward()), if
 * that NI is up, is a path; the path of the best health (the lower of
 * the local NI's and the peer NID's), then of the most NI tx credits, is
 * taken, equal ones in turns (o2_mr_pick(), as LNet's selection orders
 * them).  Any other message goes to @nid itself from o2_ni_for()'s NI:
 * a peer that is not Multi-Rail knows us by one NID only.
 *
 * Return: the local NI, or NULL with @rc set.
 */
struct o2_ni *o2_lnet_select(u64 nid, u64 src_nid, u64 failed, u64 *dest,
			     int *rc)
{
	struct o2_mr_cand c[O2_PING_VIEW_MAX];
	struct o2_ni *nis[O2_PING_VIEW_MAX], *ni = NULL;
	struct o2_lpeer_nid *e;
	struct o2_lpeer *lp;
	int k = -1, f = -1;
	u32 i;

	*dest = nid;
	*rc = 0;
	if (src_nid == O2LND_NID_ANY) {
		spin_lock(&o2_lpeers_lock);
		e = o2_lpeer_nid_find_locked(nid);
		lp = e ? e->lp : NULL;
		if (lp && (lp->flags & O2LND_LPEER_F_MULTI_RAIL)) {
			for (i = 0; i < lp->n; i++) {
				struct o2_lpeer_nid *pn = &lp->nids[i];
				struct o2_ni *n = o2_ni_toward(pn->nid);

				nis[i] = n;
				c[i].usable = n && READ_ONCE(n->up) &&
					pn->status != O2LND_NI_STATUS_DOWN;
				c[i].health = n ? min_t(u32, atomic_read(&n->health),
							pn->health) : 0;
				c[i].credits = n ? READ_ONCE(n->txcr.avail) : 0;
				if (failed && pn->nid == failed)
					f = i;
			}
			k = o2_mr_pick_resend(c, lp->n, &lp->cursor, f);
			if (k >= 0) {
				*dest = lp->nids[k].nid;
				lp->nids[k].selected++;
				ni = nis[k];
			}
		}
		spin_unlock(&o2_lpeers_lock);
		if (ni)
			return ni;
	}
	return o2_ni_for(nid, src_nid, rc);
}

/* NIs on @ni's network: the rails a message may take */
static int o2_ni_rails(struct o2_ni *ni)
{
	struct o2_ni *n;
	int rails = 0;

	o2_for_each_ni(n)
		rails += o2_nid_net(n->nid) == o2_nid_net(ni->nid);
	return rails;
}

#define O2_PROBE_GAP_MAX	60	/* seconds between recovery pings, at most */
#define O2_PROBES_PER_RUN	8	/* recovery pings of one run, at most */
#define O2_PROBE_TIMEOUT_MS	1000

/* When to probe again after a probe: 1 s, doubling up to a minute. */
static void o2_probe_backoff(unsigned long *at, u32 *gap)
{
	*gap = *gap ? min_t(u32, *gap * 2, O2_PROBE_GAP_MAX) : 1;
	*at = jiffies + *gap * HZ;
}

/*
 * LNet Health's recovery, where health steers a choice: on a network with
 * several local NIs, and for Multi-Rail peers with several NIDs.  Every
 * unhealthy such peer NID is pinged from the NI toward it, at most once
 * per its gap, which doubles up to a minute while its pings fail; a ping
 * that gets through raises its health (o2_peer_health()) and brings the
 * gap back to a second, so a rail that healed climbs back to full health
 * a step a second and gets its traffic back.  An unhealthy local NI that
 * is up (it has its device) gains health once a second, as the ping of
 * its own NID that LNet sends would (through its own device) and we do
 * not (it would open a connection to ourselves).  Nothing is probed for a
 * single-rail node or peer, whose health chooses nothing.
 */
static void o2_recovery_work_fn(struct work_struct *work)
{
	struct o2lnd_ioc_ping *out;
	struct {
		u64 nid;
		u64 src;
	} probe[O2_PROBES_PER_RUN];
	struct o2_lpeer *lp;
	struct o2_ni *ni;
	int n = 0, i;
	u32 k;

	spin_lock(&o2_lpeers_lock);
	if (o2_push_stopped) {
		spin_unlock(&o2_lpeers_lock);
		return;
	}
	o2_for_each_ni(ni) {
		/* o2_ni_health() takes no lock */
		if (READ_ONCE(ni->up) && o2_ni_rails(ni) > 1 &&
		    atomic_read(&ni->health) < O2_HEALTH_MAX &&
		    time_after_eq(jiffies, ni->probe_at)) {
			ni->probe_at = jiffies + HZ;
			o2_ni_health(ni, true);
		}
	}
	list_for_each_entry(lp, &o2_lpeers, list) {
		if (lp->n < 2 || !(lp->flags & O2LND_LPEER_F_MULTI_RAIL))
			continue;
		for (k = 0; k < lp->n && n < O2_PROBES_PER_RUN; k++) {
			struct o2_lpeer_nid *e = &lp->nids[k];

			if (e->health >= O2_HEALTH_MAX ||
			    e->status == O2LND_NI_STATUS_DOWN ||
			    time_before(jiffies, e->probe_at))
				continue;
			o2_probe_backoff(&e->probe_at, &e->probe_gap);
			probe[n].nid = e->nid;
			probe[n++].src = O2LND_NID_ANY;
		}
	}
	spin_unlock(&o2_lpeers_lock);
	if (!n)
		return;
	out = kzalloc(sizeof(*out), GFP_KERNEL);
	if (!out)
		return;
	for (i = 0; i < n; i++) {
		struct o2_lpeer_nid *e;

		memset(out, 0, sizeof(*out));
		out->max_ids = 1;
		if (o2_ping(probe[i].nid, probe[i].src, false,
			    O2_PROBE_TIMEOUT_MS, out))
			continue;
		/* it answers: probe it again in a second, until healthy */
		spin_lock(&o2_lpeers_lock);
		e = o2_lpeer_nid_find_locked(probe[i].nid);
		if (e) {
			e->probe_gap = 0;
			e->probe_at = jiffies + HZ;
		}
		spin_unlock(&o2_lpeers_lock);
	}
	kfree(out);
}

/**
 * o2_health_recover() - from connd's scan, once a second: probe what is
 *	unhealthy (o2_recovery_work_fn(), on system_long_wq)
 */
void o2_health_recover(void)
{
	struct o2_ni *ni;
	bool any = atomic_read(&o2_lpeer_unhealthy) > 0;

	if (!o2_health_sensitivity)
		return;
	o2_for_each_ni(ni)
		any |= atomic_read(&ni->health) < O2_HEALTH_MAX;
	if (!any)
		return;
	spin_lock(&o2_lpeers_lock);
	if (!o2_push_stopped)
		queue_work(system_long_wq, &o2_recovery_work);
	spin_unlock(&o2_lpeers_lock);
}

/* Fill @out from @lp.  Caller holds o2_lpeers_lock. */
static void o2_lpeer_fill_locked(struct o2_lpeer *lp,
				 struct o2lnd_ioc_lpeer *out)
{
	u32 i;

	lockdep_assert_held(&o2_lpeers_lock);
	out->primary_nid = lp->nids[0].nid;
	out->features = lp->features;
	out->seqno = lp->seqno;
	out->flags = lp->flags;
	out->n_nids = lp->nnis;
	for (i = 0; i < lp->n && i < O2LND_PEER_MAX_NIDS; i++) {
		out->nids[i].nid = lp->nids[i].nid;
		out->nids[i].status = lp->nids[i].status;
		out->nids[i].health = lp->nids[i].health;
		out->nids[i].selected = lp->nids[i].selected;
		out->nids[i].failures = lp->nids[i].failures;
	}
}

/**
 * o2_lpeer_show() - one LNet peer, by index or by one of its NIDs
 * @index: 0-based, when @nid is O2LND_NID_ANY
 * @nid: a NID of the peer, or O2LND_NID_ANY
 * @out: the reply: everything after its header is rewritten
 *
 * Return: 0, or -ENOENT (no such index, no peer lists @nid).
 */
int o2_lpeer_show(u32 index, u64 nid, struct o2lnd_ioc_lpeer *out)
{
	struct o2_lpeer *lp = NULL, *p;
	struct o2_lpeer_nid *e;
	u32 i = 0;

	memset((u8 *)out + sizeof(out->hdr), 0, sizeof(*out) - sizeof(out->hdr));
	spin_lock(&o2_lpeers_lock);
	out->count = o2_nlpeers;
	if (nid != O2LND_NID_ANY) {
		e = o2_lpeer_nid_find_locked(nid);
		lp = e ? e->lp : NULL;
	} else {
		list_for_each_entry(p, &o2_lpeers, list) {
			if (i++ == index) {
				lp = p;
				break;
			}
		}
	}
	if (lp)
		o2_lpeer_fill_locked(lp, out);
	spin_unlock(&o2_lpeers_lock);
	return lp ? 0 : -ENOENT;
}

/* ---- push: our ping info to a peer, a peer's to us ---- */

/**
 * o2_ping_seqno() - the sequence number of our ping info
 *
 * Return: it; it grows whenever a local NI goes down or up.
 */
u32 o2_ping_seqno(void)
{
	return atomic_read(&o2_seqno);
}

/**
 * o2_push_rx() - a PUT on the reserved portal: a peer's push
 * @conn: the conn it came on
 * @hdr: its LNet header (a PUT with the ping match bits)
 * @payload: the peer's ping info
 * @plen: its bytes
 *
 * The peer's NIDs are learned (o2_lpeer_learn()) and the PUT is ACKed
 * when its sender asked for it.  A push that does not parse, or whose
 * source is not one of the NIDs it lists, is dropped with a message and
 * not ACKed: its sender sees the push fail.
 */
void o2_push_rx(struct o2_conn *conn, const struct o2_lnet_hdr *hdr,
		const void *payload, u32 plen)
{
	struct o2_ping_view *v;
	struct o2_lnet_hdr *h;
	struct o2_ni *ni;
	struct o2_tx *tx;
	u64 from = le64_to_cpu(hdr->src_nid);
	bool listed = false;
	u32 i;
	int rc;

	if (le64_to_cpu(hdr->msg.put.match_bits) != O2_LNET_PING_MATCHBITS) {
		o2_lnet_drop(conn, "PUT on the reserved portal with unknown match bits");
		return;
	}
	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v) {
		o2_lnet_drop(conn, "no memory for a push");
		return;
	}
	rc = o2_ping_info_unpack(payload, plen, false, v);
	for (i = 0; !rc && i < v->n; i++)
		listed |= v->ni[i].nid == from;
	if (rc || !listed) {
		kfree(v);
		o2_lnet_drop(conn, rc ? "malformed push (bad ping info)" :
			     "push from a NID its ping info does not list");
		return;
	}
	rc = o2_lpeer_learn(v, true);
	kfree(v);
	if (rc) {
		o2_lnet_drop(conn, "push not learned (peer table full or no memory)");
		return;
	}
	if (o2_lnet_wmd_is_none(&hdr->msg.put.ack_wmd))
		return;
	ni = o2_ni_answer(conn->ni, from);
	tx = o2_tx_alloc(ni, O2_MSG_IMMEDIATE);
	if (!tx) {
		o2_lnet_drop(conn, "no tx for the push's ACK");
		return;
	}
	h = tx->msg + sizeof(struct o2_msg_hdr);
	o2_lnet_hdr_init(h, ni, from, O2_LNET_MSG_ACK, 0);
	h->src_nid = hdr->dest_nid;
	h->msg.ack.dst_wmd = hdr->msg.put.ack_wmd;
	h->msg.ack.match_bits = hdr->msg.put.match_bits;
	h->msg.ack.mlength = cpu_to_le32(plen);
	tx->nob = sizeof(struct o2_msg_hdr) + sizeof(*h);
	o2_ni_launch(ni, from, tx);
}

/**
 * o2_discover() - discover the peer of @nid, as `lnetctl discover`
 * @nid: a NID of the peer
 * @timeout_ms: for the ping and for the push's ACK each
 * @out: zeroed reply: the peer as then known
 *
 * Pings @nid (the REPLY teaches its NIDs, ping.c); a peer that does
 * discovery is then sent our ping info in a push, and its ACK awaited.
 * May sleep.
 *
 * Return: 0; the ping's errno; the push's (-ETIMEDOUT: no ACK).
 */
int o2_discover(u64 nid, u32 timeout_ms, struct o2lnd_ioc_lpeer *out)
{
	struct o2lnd_ioc_ping *ping;
	struct o2_lpeer_nid *e;
	int rc;

	ping = kzalloc(sizeof(*ping), GFP_KERNEL);
	if (!ping)
		return -ENOMEM;
	ping->max_ids = 1;
	rc = o2_ping(nid, O2LND_NID_ANY, false, timeout_ms, ping);
	kfree(ping);
	if (rc)
		return rc;
	rc = o2_lpeer_show(0, nid, out);
	if (rc)
		return rc;
	if (!(out->features & O2_PING_FEAT_DISCOVERY))
		return 0;
	rc = o2_push(nid, timeout_ms);
	if (rc)
		return rc;
	spin_lock(&o2_lpeers_lock);
	e = o2_lpeer_nid_find_locked(nid);
	if (e)
		e->lp->flags |= O2LND_LPEER_F_PUSHED;
	spin_unlock(&o2_lpeers_lock);
	return o2_lpeer_show(0, nid, out);
}

/**
 * o2_discover_on_send() - a selftest RPC goes to @nid: discover its peer
 *	first, as LNet does on the first PUT or GET to a peer
 * @nid: the NID the RPC was sent to
 *
 * LNet holds such a message until discovery ends; o2lnd sends it at once
 * to the NID named and discovers beside it (o2_autodisc_work, one NID at
 * a time, O2_AUTODISC_TIMEOUT_MS for its ping and for its push), so that
 * a peer that does not answer never delays traffic: its discovery fails,
 * and is tried again no sooner than O2_AUTODISC_RETRY later.  Nothing
 * happens for a peer that is up to date (known, and pushed to unless it
 * does no discovery), one of our NIDs, or while O2_AUTODISC_MAX NIDs
 * wait.  Pings (the reserved portal), answers and
 * forwarded messages never call it, as in LNet.  Never sleeps.
 */
void o2_discover_on_send(u64 nid)
{
	struct o2_lpeer_nid *e;
	int i, slot = -1;

	if (o2_discovery_disabled || o2_ni_by_nid(nid))
		return;
	spin_lock(&o2_lpeers_lock);
	e = o2_lpeer_nid_find_locked(nid);
	/* up to date: known, and pushed to unless it does no discovery */
	if (o2_push_stopped ||
	    (e && ((e->lp->flags & O2LND_LPEER_F_PUSHED) ||
		   !(e->lp->features & O2_PING_FEAT_DISCOVERY))))
		goto out;
	for (i = 0; i < O2_AUTODISC_MAX; i++) {
		if (o2_autodisc[i].nid == nid) {
			if (o2_autodisc[i].queued ||
			    time_before(jiffies, o2_autodisc[i].at +
					O2_AUTODISC_RETRY))
				goto out;
			slot = i;
			break;
		}
		if (slot < 0 && (!o2_autodisc[i].nid ||
				 (!o2_autodisc[i].queued &&
				  time_after_eq(jiffies, o2_autodisc[i].at +
						O2_AUTODISC_RETRY))))
			slot = i;
	}
	if (slot < 0)
		goto out;
	o2_autodisc[slot].nid = nid;
	o2_autodisc[slot].at = jiffies;
	o2_autodisc[slot].queued = true;
	queue_work(system_long_wq, &o2_autodisc_work);
out:
	spin_unlock(&o2_lpeers_lock);
}

/* Discover the NIDs o2_discover_on_send() queued, one at a time. */
static void o2_autodisc_work_fn(struct work_struct *work)
{
	struct o2lnd_ioc_lpeer *out;
	char a[O2_NIDSTR_SIZE];
	int i, rc;

	out = kmalloc(sizeof(*out), GFP_KERNEL);
	if (!out)
		return;
	for (;;) {
		u64 nid = 0;

		spin_lock(&o2_lpeers_lock);
		for (i = 0; i < O2_AUTODISC_MAX && !o2_push_stopped; i++) {
			if (o2_autodisc[i].queued) {
				o2_autodisc[i].queued = false;
				nid = o2_autodisc[i].nid;
				break;
			}
		}
		spin_unlock(&o2_lpeers_lock);
		if (!nid)
			break;
		memset(out, 0, sizeof(*out));
		rc = o2_discover(nid, O2_AUTODISC_TIMEOUT_MS, out);
		spin_lock(&o2_lpeers_lock);
		for (i = 0; i < O2_AUTODISC_MAX; i++) {
			if (o2_autodisc[i].nid == nid &&
			    !o2_autodisc[i].queued) {
				o2_autodisc[i].at = jiffies;
				if (!rc)
					o2_autodisc[i].nid = 0;
			}
		}
		spin_unlock(&o2_lpeers_lock);
		if (rc && rc != -ESHUTDOWN)
			pr_info_ratelimited("o2lnd: discovery of %s on first send failed: %d (tried again in %d s at the earliest)\n",
					    o2_nid_format(nid, a, sizeof(a)),
					    rc, O2_AUTODISC_RETRY / HZ);
	}
	kfree(out);
}

/*
 * Push our ping info to every peer that does discovery, each on its
 * primary NID, no ACK asked: what LNet does when its NIs change.
 */
static void o2_push_work_fn(struct work_struct *work)
{
	u64 *nids;
	u32 n = 0, i;
	struct o2_lpeer *lp;

	nids = kcalloc(O2_LPEERS_MAX, sizeof(*nids), GFP_KERNEL);
	if (!nids)
		return;
	spin_lock(&o2_lpeers_lock);
	list_for_each_entry(lp, &o2_lpeers, list)
		if (lp->features & O2_PING_FEAT_DISCOVERY)
			nids[n++] = lp->nids[0].nid;
	spin_unlock(&o2_lpeers_lock);
	for (i = 0; i < n; i++)
		o2_push(nids[i], 0);
	kfree(nids);
}

/**
 * o2_push_all() - a local NI went down or up: tell the peers
 *
 * Bumps our ping info's sequence number and queues the pushes (a work
 * item: the callers hold o2_nis_mutex).  Any context.
 */
void o2_push_all(void)
{
	atomic_inc(&o2_seqno);
	spin_lock(&o2_lpeers_lock);
	if (!o2_push_stopped)
		schedule_work(&o2_push_work);
	spin_unlock(&o2_lpeers_lock);
}

/**
 * o2_lpeers_stop() - at unload, before the NIs stop: no more pushes and
 *	no more recovery pings
 */
void o2_lpeers_stop(void)
{
	spin_lock(&o2_lpeers_lock);
	o2_push_stopped = true;
	spin_unlock(&o2_lpeers_lock);
	cancel_work_sync(&o2_push_work);
	cancel_work_sync(&o2_recovery_work);
	cancel_work_sync(&o2_autodisc_work);
}

/**
 * o2_lpeers_free() - at unload: forget every LNet peer
 */
void o2_lpeers_free(void)
{
	struct o2_lpeer *lp, *tmp;

	spin_lock(&o2_lpeers_lock);
	list_for_each_entry_safe(lp, tmp, &o2_lpeers, list) {
		u32 i;

		for (i = 0; i < lp->n; i++)
			o2_lpeer_nid_gone_locked(&lp->nids[i]);
		o2_lpeer_unhash_locked(lp);
		o2_lpeer_free_locked(lp);
	}
	o2_push_stopped = false;
	memset(o2_autodisc, 0, sizeof(o2_autodisc));
	spin_unlock(&o2_lpeers_lock);
}
