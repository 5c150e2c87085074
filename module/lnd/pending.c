// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: the one table of what waits for a peer's answer, keyed by cookie.
 *
 * A ping waits for its REPLY (ping.c), a selftest RPC for its LNet ACK or
 * REPLY (selftest.c), a bulk exchange for the peer's PUT_ACK, PUT_DONE,
 * GET_DONE or PUT_NAK (bulk.c).  Each is found by the cookie it put on
 * the wire: one xarray, indexed by the cookie itself, whose entries are
 * the waiting objects, each marked with its kind (one XArray mark per
 * kind), so a lookup in O(log n) also checks that the cookie names the
 * kind of request the answer is for, and a walk of one kind skips the
 * others.  Cookies come from one counter, so no two
 * requests of any kind share one, and a late answer to a finished
 * request finds nothing (or an object of another kind, which it treats
 * as nothing).
 *
 * Locking: the table's lock (o2_pend_lock()) guards the table and the
 * matching state of every object in it (a ping's replied/finished, an
 * RPC's answered/status, a bulk's waiting).  It is a leaf: nothing is
 * taken under it, and it is held only for the lookup and those updates.
 * The index is an unsigned long: o2lnd builds for 64-bit kernels only
 * (o2_pend_cookie()), as LNet's 64-bit cookies need.
 */
#include <linux/xarray.h>
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/completion.h>
#include "lnd.h"

static DEFINE_XARRAY(o2_pend);
static atomic64_t o2_pend_last = ATOMIC64_INIT(0);

/* a kind is one of the XArray's three marks */
static xa_mark_t o2_pend_mark(enum o2_pend_kind kind)
{
	BUILD_BUG_ON(O2_PEND_KINDS > 3);
	return (__force xa_mark_t)kind;
}

/**
 * o2_pend_cookie() - a fresh cookie for a request of any kind
 *
 * Return: a cookie that was never returned before (never 0).
 */
u64 o2_pend_cookie(void)
{
	BUILD_BUG_ON(sizeof(unsigned long) < sizeof(u64));
	return atomic64_inc_return(&o2_pend_last);
}

/* Take and release the table's lock (a leaf). */
void o2_pend_lock(void)
{
	xa_lock(&o2_pend);
}

void o2_pend_unlock(void)
{
	xa_unlock(&o2_pend);
}

/**
 * o2_pend_reserve() - make room for @cookie before it is needed
 * @cookie: from o2_pend_cookie()
 *
 * For a request that must not fail when it starts to wait (a bulk
 * exchange: its owner is told of its end only through its done
 * callback): adding it later needs no memory.  Process context, no lock
 * held.
 *
 * Return: 0 or -ENOMEM.
 */
int o2_pend_reserve(u64 cookie)
{
	return xa_reserve(&o2_pend, cookie, GFP_KERNEL);
}

/**
 * o2_pend_unreserve() - @cookie's room is not needed (any more)
 * @cookie: as reserved; nothing happens if an object is stored there
 */
void o2_pend_unreserve(u64 cookie)
{
	xa_release(&o2_pend, cookie);
}

/**
 * o2_pend_add_locked() - @obj waits for the answer to @cookie
 * @cookie: from o2_pend_cookie()
 * @obj: the waiting object (kmalloc'ed: 4-byte aligned, as the XArray
 *	needs)
 * @kind: O2_PEND_*
 *
 * Caller holds the table's lock.  Never sleeps (GFP_ATOMIC); cannot fail
 * for a reserved cookie (o2_pend_reserve()).
 *
 * Return: 0 or -ENOMEM (no memory for the table).
 */
int o2_pend_add_locked(u64 cookie, void *obj, enum o2_pend_kind kind)
{
	void *old;

	lockdep_assert_held(&o2_pend.xa_lock);
	old = __xa_store(&o2_pend, cookie, obj, GFP_ATOMIC);
	if (xa_is_err(old))
		return xa_err(old);
	WARN_ON_ONCE(old);	/* cookies are unique: a bug */
	__xa_set_mark(&o2_pend, cookie, o2_pend_mark(kind));
	return 0;
}

/**
 * o2_pend_find_locked() - the object of @kind waiting for @cookie
 * @cookie: from the answer
 * @kind: the kind of request the answer is for
 *
 * Caller holds the table's lock.  Return: the object, or NULL.
 */
void *o2_pend_find_locked(u64 cookie, enum o2_pend_kind kind)
{
	lockdep_assert_held(&o2_pend.xa_lock);
	if (!xa_get_mark(&o2_pend, cookie, o2_pend_mark(kind)))
		return NULL;
	return xa_load(&o2_pend, cookie);
}

/**
 * o2_pend_del_locked() - @cookie waits no more
 * @cookie: as added
 *
 * Caller holds the table's lock.
 */
void o2_pend_del_locked(u64 cookie)
{
	lockdep_assert_held(&o2_pend.xa_lock);
	__xa_erase(&o2_pend, cookie);
}

/**
 * o2_pend_next_locked() - the next waiting object of @kind
 * @cookie: in: where to start looking (inclusive); out: the object's
 *	cookie
 * @kind: O2_PEND_*
 *
 * Walks the table in cookie order; the caller may delete the returned
 * object and continue from *@cookie + 1.  Caller holds the table's lock.
 *
 * Return: the object, or NULL when none is left.
 */
void *o2_pend_next_locked(u64 *cookie, enum o2_pend_kind kind)
{
	unsigned long i = *cookie;
	void *e;

	lockdep_assert_held(&o2_pend.xa_lock);
	e = xa_find(&o2_pend, &i, ULONG_MAX, o2_pend_mark(kind));
	if (e)
		*cookie = i;
	return e;
}

/**
 * o2_pend_wait_add() - a caller's request starts waiting for its answer
 * @w: the wait, inside @obj
 * @obj: the request (kmalloc'ed), what o2_pend_find_locked() will find
 * @kind: O2_PEND_PING or O2_PEND_BRW
 *
 * Gives @w a fresh cookie (w->cookie, for the wire) and adds @obj under
 * it, before anything is sent: an answer can find it from then on.
 * Never sleeps.
 *
 * Return: 0, or -ENOMEM with nothing added.
 */
int o2_pend_wait_add(struct o2_pend_wait *w, void *obj,
		     enum o2_pend_kind kind)
{
	int rc;

	init_completion(&w->done);
	w->finished = false;
	w->status = 0;
	w->cookie = o2_pend_cookie();
	xa_lock(&o2_pend);
	rc = o2_pend_add_locked(w->cookie, obj, kind);
	xa_unlock(&o2_pend);
	return rc;
}

/**
 * o2_pend_wait_finish_locked() - the request of @w ended
 * @w: as added
 * @status: 0 or an errno
 *
 * Wakes the caller; the first end counts, later ones are ignored.
 * Caller holds the table's lock.
 */
void o2_pend_wait_finish_locked(struct o2_pend_wait *w, int status)
{
	lockdep_assert_held(&o2_pend.xa_lock);
	if (w->finished)
		return;
	w->status = status;
	w->finished = true;
	complete(&w->done);
}

/**
 * o2_pend_wait_end() - sleep until @w's request ends, then take it out
 * @w: as added by o2_pend_wait_add()
 * @timeout_ms: how long to sleep at most
 *
 * Interruptible.  Once it returned, no answer finds the request: the
 * caller may free it (a late answer finds nothing, as for any unknown
 * cookie).  May sleep.
 *
 * Return: the request's status; -ETIMEDOUT if it had not ended in
 * time, -EINTR if a signal came first.
 */
int o2_pend_wait_end(struct o2_pend_wait *w, u32 timeout_ms)
{
	long left;
	int rc;

	left = wait_for_completion_interruptible_timeout(&w->done,
							 msecs_to_jiffies(timeout_ms));
	xa_lock(&o2_pend);
	__xa_erase(&o2_pend, w->cookie);
	if (w->finished)
		rc = w->status;
	else if (left < 0)
		rc = -EINTR;
	else
		rc = -ETIMEDOUT;
	xa_unlock(&o2_pend);
	return rc;
}

/**
 * o2_pend_exit() - at unload, after every request has ended
 *
 * A request still in the table now is a leak: warned, then the table is
 * emptied (its objects are not freed: their owners are gone).
 */
void o2_pend_exit(void)
{
	WARN_ON(!xa_empty(&o2_pend));
	xa_destroy(&o2_pend);
}
