// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd KUnit: the table of pending requests (module/lnd/pending.c): a
 * cookie finds only a request of the kind the answer is for, cookies
 * never repeat, a reserved cookie needs no memory to be added, and a
 * walk visits one kind in cookie order while it deletes; a waiting
 * caller gets the first status its request ended with, a timeout when
 * it did not end, and the table forgets the request once the wait is
 * over.  Every case leaves the table as it found it (empty).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include "lnd.h"

struct o2t_req {
	int id;
};

static bool o2t_table_empty(void)
{
	u64 c;
	int k;

	o2_pend_lock();
	for (k = 0; k < O2_PEND_KINDS; k++) {
		c = 0;
		if (o2_pend_next_locked(&c, k)) {
			o2_pend_unlock();
			return false;
		}
	}
	o2_pend_unlock();
	return true;
}

static void a_cookie_finds_only_its_own_kind(struct kunit *test)
{
	struct o2t_req *ping = kunit_kzalloc(test, sizeof(*ping), GFP_KERNEL);
	struct o2t_req *brw = kunit_kzalloc(test, sizeof(*brw), GFP_KERNEL);
	u64 c1 = o2_pend_cookie(), c2 = o2_pend_cookie();

	KUNIT_ASSERT_NOT_NULL(test, ping);
	KUNIT_ASSERT_NOT_NULL(test, brw);
	o2_pend_lock();
	KUNIT_EXPECT_EQ(test, o2_pend_add_locked(c1, ping, O2_PEND_PING), 0);
	KUNIT_EXPECT_EQ(test, o2_pend_add_locked(c2, brw, O2_PEND_BRW), 0);
	KUNIT_EXPECT_PTR_EQ(test, o2_pend_find_locked(c1, O2_PEND_PING),
			    (void *)ping);
	KUNIT_EXPECT_PTR_EQ(test, o2_pend_find_locked(c2, O2_PEND_BRW),
			    (void *)brw);
	/* an answer of another kind, or to no request, finds nothing */
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c1, O2_PEND_BRW));
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c1, O2_PEND_BULK));
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c2, O2_PEND_PING));
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c2 + 1, O2_PEND_BRW));
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(0, O2_PEND_PING));
	o2_pend_del_locked(c1);
	/* a late answer to a finished request finds nothing */
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c1, O2_PEND_PING));
	KUNIT_EXPECT_PTR_EQ(test, o2_pend_find_locked(c2, O2_PEND_BRW),
			    (void *)brw);
	o2_pend_del_locked(c2);
	o2_pend_unlock();
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
}

static void cookies_never_repeat_and_are_never_zero(struct kunit *test)
{
	u64 last = o2_pend_cookie(), c;
	int i;

	KUNIT_EXPECT_NE(test, last, 0ULL);
	for (i = 0; i < 10000; i++) {
		c = o2_pend_cookie();
		KUNIT_ASSERT_GT(test, c, last);
		last = c;
	}
}

static void a_reserved_cookie_is_empty_until_added(struct kunit *test)
{
	struct o2t_req *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	u64 c = o2_pend_cookie();

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, o2_pend_reserve(c), 0);
	o2_pend_lock();
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(c, O2_PEND_BULK));
	o2_pend_unlock();
	/* a reserved cookie is not a pending request */
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
	o2_pend_lock();
	KUNIT_EXPECT_EQ(test, o2_pend_add_locked(c, b, O2_PEND_BULK), 0);
	KUNIT_EXPECT_PTR_EQ(test, o2_pend_find_locked(c, O2_PEND_BULK),
			    (void *)b);
	o2_pend_del_locked(c);
	o2_pend_unlock();
	o2_pend_unreserve(c);	/* nothing left to release */
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());

	/* a reservation never used is released */
	c = o2_pend_cookie();
	KUNIT_ASSERT_EQ(test, o2_pend_reserve(c), 0);
	o2_pend_unreserve(c);
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
}

static void a_walk_visits_one_kind_in_cookie_order_while_deleting(struct kunit *test)
{
	struct o2t_req *r = kunit_kcalloc(test, 8, sizeof(*r), GFP_KERNEL);
	u64 cookies[8], c = 0, last = 0;
	int i, bulks = 0, pings = 0;
	void *e;

	KUNIT_ASSERT_NOT_NULL(test, r);
	o2_pend_lock();
	for (i = 0; i < 8; i++) {
		r[i].id = i;
		cookies[i] = o2_pend_cookie();
		KUNIT_EXPECT_EQ(test, o2_pend_add_locked(cookies[i], &r[i],
							 i % 3 ? O2_PEND_BULK :
							 O2_PEND_PING), 0);
	}
	/* bulks: 1 2 4 5 7, deleted as they are visited */
	while ((e = o2_pend_next_locked(&c, O2_PEND_BULK))) {
		struct o2t_req *q = e;

		KUNIT_EXPECT_NE(test, q->id % 3, 0);
		KUNIT_EXPECT_EQ(test, c, cookies[q->id]);
		KUNIT_EXPECT_GT(test, c, last);
		last = c;
		o2_pend_del_locked(c);
		bulks++;
		c++;
	}
	KUNIT_EXPECT_EQ(test, bulks, 5);
	c = 0;
	while ((e = o2_pend_next_locked(&c, O2_PEND_PING))) {
		KUNIT_EXPECT_EQ(test, ((struct o2t_req *)e)->id % 3, 0);
		o2_pend_del_locked(c);
		pings++;
		c++;
	}
	KUNIT_EXPECT_EQ(test, pings, 3);
	o2_pend_unlock();
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
}

struct o2t_wait_req {
	struct o2_pend_wait w;
	int id;
};

static void a_wait_gets_the_first_end_and_forgets_the_request(struct kunit *test)
{
	struct o2t_wait_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, o2_pend_wait_add(&r->w, r, O2_PEND_BRW), 0);
	KUNIT_EXPECT_NE(test, r->w.cookie, 0ULL);
	o2_pend_lock();
	KUNIT_EXPECT_PTR_EQ(test, o2_pend_find_locked(r->w.cookie, O2_PEND_BRW),
			    (void *)r);
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(r->w.cookie, O2_PEND_PING));
	o2_pend_wait_finish_locked(&r->w, -EIO);
	/* a later end (a late success) does not change the status */
	o2_pend_wait_finish_locked(&r->w, 0);
	o2_pend_unlock();
	/* already ended: returns at once, well before the 60 s */
	KUNIT_EXPECT_EQ(test, o2_pend_wait_end(&r->w, 60000), -EIO);
	o2_pend_lock();
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(r->w.cookie, O2_PEND_BRW));
	o2_pend_unlock();
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());

	/* a success is a status of 0 */
	KUNIT_ASSERT_EQ(test, o2_pend_wait_add(&r->w, r, O2_PEND_PING), 0);
	o2_pend_lock();
	o2_pend_wait_finish_locked(&r->w, 0);
	o2_pend_unlock();
	KUNIT_EXPECT_EQ(test, o2_pend_wait_end(&r->w, 60000), 0);
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
}

static void a_wait_that_nothing_ends_times_out_and_forgets_the_request(struct kunit *test)
{
	struct o2t_wait_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	u64 first;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, o2_pend_wait_add(&r->w, r, O2_PEND_PING), 0);
	first = r->w.cookie;
	KUNIT_EXPECT_EQ(test, o2_pend_wait_end(&r->w, 20), -ETIMEDOUT);
	KUNIT_EXPECT_FALSE(test, r->w.finished);
	/* the answer that comes too late finds nothing to end */
	o2_pend_lock();
	KUNIT_EXPECT_NULL(test, o2_pend_find_locked(first, O2_PEND_PING));
	o2_pend_unlock();
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
	/* a second request gets a cookie of its own */
	KUNIT_ASSERT_EQ(test, o2_pend_wait_add(&r->w, r, O2_PEND_PING), 0);
	KUNIT_EXPECT_GT(test, r->w.cookie, first);
	KUNIT_EXPECT_EQ(test, o2_pend_wait_end(&r->w, 1), -ETIMEDOUT);
	KUNIT_EXPECT_TRUE(test, o2t_table_empty());
}

static struct kunit_case o2_pending_cases[] = {
	KUNIT_CASE(a_cookie_finds_only_its_own_kind),
	KUNIT_CASE(cookies_never_repeat_and_are_never_zero),
	KUNIT_CASE(a_reserved_cookie_is_empty_until_added),
	KUNIT_CASE(a_walk_visits_one_kind_in_cookie_order_while_deleting),
	KUNIT_CASE(a_wait_gets_the_first_end_and_forgets_the_request),
	KUNIT_CASE(a_wait_that_nothing_ends_times_out_and_forgets_the_request),
	{}
};

static struct kunit_suite o2_pending_suite = {
	.name = "o2lnd_pending",
	.test_cases = o2_pending_cases,
};

kunit_test_suites(&o2_pending_suite);
