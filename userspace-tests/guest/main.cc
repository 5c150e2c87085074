// o2lnd_guest_abi_tests: raw ioctls against a loaded o2lnd module, checking
// the rules of include/uapi/o2lnd.h.  Runs inside a test-bed guest; see
// guest_env.h for its settings.
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "guest_env.h"

namespace o2lnd::guest {
namespace {

Settings g_settings;  // NOLINT(*-avoid-non-const-global-variables): set once in main

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);  // NOLINT(*-mt-unsafe): before any thread
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace

const Settings& settings() { return g_settings; }

}  // namespace o2lnd::guest

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto& s = o2lnd::guest::g_settings;
  s.device = o2lnd::guest::env_or("O2LND_DEVICE", s.device);
  s.peer_nid = o2lnd::guest::env_or("O2LND_PEER_NID", "");
  s.unowned_nid = o2lnd::guest::env_or("O2LND_UNOWNED_NID", "");
  s.ping_self = o2lnd::guest::env_or("O2LND_PING_SELF", "") == "1";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];  // NOLINT(*-pointer-arithmetic)
    auto value = [&](std::string_view flag) { return std::string(a.substr(flag.size())); };
    if (a.starts_with("--device=")) {
      s.device = value("--device=");
    } else if (a.starts_with("--peer-nid=")) {
      s.peer_nid = value("--peer-nid=");
    } else if (a.starts_with("--unowned-nid=")) {
      s.unowned_nid = value("--unowned-nid=");
    } else if (a == "--ping-self") {
      s.ping_self = true;
    } else {
      std::cerr << "o2lnd_guest_abi_tests: unknown argument '" << a
                << "'\nUsage: o2lnd_guest_abi_tests [gtest flags] [--device=PATH] "
                   "[--peer-nid=NID] [--unowned-nid=NID] [--ping-self]\n";
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
