// SPDX-License-Identifier: GPL-2.0
/*
 * o2lnd: instantiates the tracepoints of trace.h.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
