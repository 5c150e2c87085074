// o2ctl's output, as pure functions of library results (tested on the host).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/device.h"

namespace o2ctl {

// `lctl ping` lines: "12345-0@lo\n12345-192.168.1.2@o2ib0\n".
std::string format_ping(const o2lnd::PingResult& result);

// `lnetctl net show` YAML of the local NIs, grouped by network in the order
// the module lists them.  `verbose` adds statistics, tunables and the RDMA
// details.  An empty list gives "net: []".
std::string format_net_show(const std::vector<o2lnd::NetInfo>& nis, bool verbose);

// `o2ctl version` YAML.  `module` is null when the module could not be asked.
std::string format_version(std::string_view tool_version, const o2lnd::VersionInfo* module);

// A YAML scalar for `text`: plain when that reads back as the same string,
// else double-quoted with escapes.
std::string yaml_scalar(std::string_view text);

}  // namespace o2ctl
