// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: KUnit test module for the pure logic of the module (wire
 * formats, NIDs, decisions, states, fault rules).
 *
 * Linux 6.1 has no EXPORT_SYMBOL_IF_KUNIT, so the units under test are
 * compiled into this test module: this file includes their sources and
 * the suites in wire_test.c, nid_test.c, decide_test.c, state_test.c,
 * fault_test.c, credits_test.c, bulk_test.c, route_test.c and
 * pending_test.c call them (pending.c: the table of pending requests,
 * pure but for its xarray).
 * Nothing is exported, so o2lnd.ko and this module can be loaded
 * together.  Built only against a kernel with CONFIG_KUNIT (Kbuild).
 */
#include <linux/module.h>
#include "../module/wire.c"
#include "../module/nid.c"
#include "../module/state.c"
#include "../module/fault.c"
#include "../module/credits.c"
#include "../module/route.c"
#include "../module/health.c"
#include "../module/lnd/pending.c"

MODULE_DESCRIPTION("o2lnd KUnit tests");
MODULE_LICENSE("GPL");
