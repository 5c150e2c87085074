// o2ctl's command line: a table of commands ("ping", "net show", ...), each
// a function of its arguments and an Env.  main() only builds the real Env;
// tests build one with a fake backend and string streams.
//
// Exit codes: 0 success, 1 the operation failed, 2 usage error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  // The module's parameters in sysfs (export reads the tunables there).
  std::string params_dir = "/sys/module/o2lnd/parameters";
  // Runs a program, argv[0] looked up in PATH, and returns its exit status
  // (-1: it could not be started); import loads the module with it.  Unset:
  // posix_spawnp.
  std::function<int(const std::vector<std::string>&)> run_program{};
};

// Runs o2ctl with `args` (argv without argv[0]).
int run(std::span<const std::string_view> args, Env& env);

// Parses a number of seconds: "5", "0.5", ".25" (at most millisecond
// precision), in min..max.
o2lnd::Result<std::chrono::milliseconds> parse_seconds(std::string_view text,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max);

// Parses a timeout in seconds: "5", "0.5", "2.125" (at most millisecond
// precision), > 0 and <= O2LND_PING_TIMEOUT_MAX_MS / 1000.
o2lnd::Result<std::chrono::milliseconds> parse_timeout(std::string_view text);

// Parses a probability given as a fraction 0 < P <= 1 ("1", "0.5", ".25",
// "0.000001") into parts per million (O2LND_FAULT_PROB_ALWAYS = 1).  At most
// six decimals.
o2lnd::Result<std::uint32_t> parse_probability(std::string_view text);

// Parses a decimal integer in min..max (no sign, no leading '+', no blanks).
o2lnd::Result<std::uint32_t> parse_uint(std::string_view text, std::uint32_t min,
                                        std::uint32_t max);

// The names of every command ("ping", "net show", "peer show", ...), in the
// order of `o2ctl --help`.
std::vector<std::string_view> command_names();

}  // namespace o2ctl
