// o2ctl's command line: a table of commands ("ping", "net show", ...), each
// a function of its arguments and an Env.  main() only builds the real Env;
// tests build one with a fake backend and string streams.
//
// Exit codes: 0 success, 1 the operation failed, 2 usage error.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "o2lnd/backend.h"
#include "o2lnd/result.h"

namespace o2ctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Env {
  std::ostream& out;
  std::ostream& err;
  // Opens the device at a path (the real one: o2lnd::FdBackend::open).
  std::function<o2lnd::Result<std::unique_ptr<o2lnd::Backend>>(const std::string&)> open_backend;
  std::string device_path = "/dev/o2lnd";
  std::string tool_version = "0";
};

// Runs o2ctl with `args` (argv without argv[0]).
int run(std::span<const std::string_view> args, Env& env);

// Parses a timeout in seconds: "5", "0.5", "2.125" (at most millisecond
// precision), > 0 and <= O2LND_PING_TIMEOUT_MAX_MS / 1000.
o2lnd::Result<std::chrono::milliseconds> parse_timeout(std::string_view text);

}  // namespace o2ctl
