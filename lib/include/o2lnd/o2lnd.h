// libo2lnd: typed C++ over the o2lnd ioctl ABI (include/uapi/o2lnd.h).
#pragma once

#include "o2lnd/backend.h"  // IWYU pragma: export
#include "o2lnd/device.h"   // IWYU pragma: export
#include "o2lnd/names.h"    // IWYU pragma: export
#include "o2lnd/nid.h"      // IWYU pragma: export
#include "o2lnd/result.h"   // IWYU pragma: export
