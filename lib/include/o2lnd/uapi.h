// The kernel's ABI header, seen from C++.
#pragma once

#include <linux/types.h>

#include "uapi/o2lnd.h"  // IWYU pragma: export
