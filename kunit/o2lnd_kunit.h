/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2lnd KUnit: constants shared by the suites.
 */
#ifndef _O2LND_KUNIT_H
#define _O2LND_KUNIT_H

#include <linux/types.h>

/* 192.168.1.1@o2ib0 and 192.168.1.2@o2ib0 */
#define O2T_NID_A	0x00050000c0a80101ULL
#define O2T_NID_B	0x00050000c0a80102ULL
/* 0@lo */
#define O2T_NID_LO	0x0009000000000000ULL

#endif /* _O2LND_KUNIT_H */
