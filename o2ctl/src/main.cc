// o2ctl: the lctl / lnetctl of o2lnd.
#include <cstdlib>
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "o2ctl/cli.h"
#include "o2lnd/backend.h"

#ifndef O2CTL_VERSION
#define O2CTL_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  std::vector<std::string_view> args;
  std::span<char*> argv_span(argv, static_cast<std::size_t>(argc));
  for (char* a : argv_span.subspan(1)) {
    args.emplace_back(a);
  }
  o2ctl::Env env{std::cout, std::cerr, o2lnd::FdBackend::open};
  env.tool_version = O2CTL_VERSION;
  if (const char* dev = std::getenv("O2LND_DEVICE"); dev != nullptr && *dev != '\0') {
    env.device_path = dev;
  }
  int rc = o2ctl::run(args, env);
  std::cout.flush();
  return rc;
}
