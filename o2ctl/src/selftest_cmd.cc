// o2ctl selftest ping, selftest brw: the command line of the selftest
// modes (the workers, percentiles and reports are selftest.cc's).

#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/selftest.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"

namespace o2ctl::cmd {
namespace {

// Modes are commands of the "selftest" group: "o2ctl selftest" lists them
// (ping, brw), and an unknown one is a usage error that lists them.  Both
// share the options below, the workers (selftest::run_rpcs) and the report.

constexpr Option kSelftestPingOptions[] = {
    {"--from", "", true},  {"--concurrency", "", true}, {"--duration", "", true},
    {"--count", "", true}, {"--timeout", "", true},     {"--yaml", "-y", false},
};

constexpr Option kSelftestBrwOptions[] = {
    {"--from", "", true},  {"--concurrency", "", true}, {"--duration", "", true},
    {"--count", "", true}, {"--timeout", "", true},     {"--yaml", "-y", false},
    {"--size", "", true},  {"--check", "", false},      {"--seed", "", true},
    {"--ack", "", false},
};

// The NIDs and the options common to every mode, into `config`; false after
// a usage error.
bool parse_selftest_common(Env& env, std::string_view cmd, const Opts& opts,
                           std::span<const std::string_view> nids, selftest::RunConfig& config) {
  namespace st = selftest;
  if (nids.empty()) {
    usage_error(env, cmd, "expected at least one NID");
    return false;
  }
  for (std::string_view text : nids) {
    auto nid = parse_nid_arg(env, text);
    if (!nid) {
      return false;
    }
    config.peers.push_back(*nid);
  }
  bool bad = false;
  config.source = nid_option(env, opts, "--from", bad);
  if (bad) {
    return false;
  }
  if (!uint_option(env, cmd, opts, "--concurrency", st::kMinConcurrency, st::kMaxConcurrency,
                   config.concurrency)) {
    return false;
  }
  if (opts.contains("--duration") && opts.contains("--count")) {
    usage_error(env, cmd, "--duration and --count exclude each other");
    return false;
  }
  if (auto it = opts.find("--duration"); it != opts.end()) {
    auto d = parse_seconds(it->second, st::kMinDuration, st::kMaxDuration);
    if (!d) {
      usage_error(env, cmd,
                  "invalid --duration '" + std::string(it->second) + "': " + d.error().message);
      return false;
    }
    config.duration = *d;
  }
  if (opts.contains("--count")) {
    std::uint32_t count = 0;
    if (!uint_option(env, cmd, opts, "--count", 1, UINT32_MAX, count)) {
      return false;
    }
    config.count = count;
  }
  std::uint32_t timeout_ms = 0;
  if (!uint_option(env, cmd, opts, "--timeout", 1, O2LND_PING_TIMEOUT_MAX_MS, timeout_ms)) {
    return false;
  }
  config.timeout = std::chrono::milliseconds(timeout_ms);
  return true;
}

// Runs the RPCs and prints the report; exit 0 when every RPC succeeded.
int run_selftest(Env& env, std::string_view cmd, const Opts& opts,
                 const selftest::RunConfig& config, const selftest::RpcFn& rpc) {
  namespace st = selftest;
  st::PingReport report = st::run_rpcs(config, rpc);
  env.out << (opts.contains("--yaml") ? st::format_yaml(report) : st::format_text(report));
  if (report.fatal_errnum != 0) {
    env.err << "o2ctl: " << cmd << ": stopped: " << (config.brw ? "brw" : "ping") << " of "
            << report.fatal_peer.str() << " failed with " << std::strerror(report.fatal_errnum)
            << ", which no retry can cure\n";
  }
  if (report.not_sent != 0) {
    env.err << "o2ctl: " << cmd << ": " << report.not_sent
            << " attempts were not sent: the local NI was down (Network is down)\n";
  }
  return report.errors.total == 0 && report.not_sent == 0 ? kExitOk : kExitFailure;
}

int run_selftest_ping(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "selftest ping";
  namespace st = selftest;
  st::RunConfig config;
  if (!parse_selftest_common(env, kCmd, opts, positional, config)) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto ping = [&dev = *dev, &config](o2lnd::Nid nid, std::uint64_t /*ticket*/) {
    // One NID back is enough: the reply is not shown.
    auto r = dev.ping(nid, config.timeout, config.source, 1);
    return r ? st::RpcOutcome{0, r->rtt} : st::RpcOutcome{r.error().errnum, {}};
  };
  return run_selftest(env, kCmd, opts, config, ping);
}

int run_selftest_brw(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "selftest brw";
  namespace st = selftest;
  if (positional.empty()) {
    return usage_error(env, kCmd, "expected write or read, then at least one NID");
  }
  st::BrwParams brw;
  if (positional[0] == "write") {
    brw.op = O2LND_BRW_WRITE;
  } else if (positional[0] == "read") {
    brw.op = O2LND_BRW_READ;
  } else {
    return usage_error(
        env, kCmd,
        "unknown operation '" + std::string(positional[0]) + "' (expected write or read)");
  }
  auto size_it = opts.find("--size");
  if (size_it == opts.end()) {
    return usage_error(env, kCmd, "--size is required");
  }
  auto size = st::parse_size(size_it->second);
  if (!size) {
    return usage_error(
        env, kCmd,
        "invalid --size '" + std::string(size_it->second) + "': " + size.error().message);
  }
  brw.size = *size;
  brw.check = opts.contains("--check");
  brw.ack = opts.contains("--ack");
  if (brw.ack && brw.op != O2LND_BRW_WRITE) {
    return usage_error(env, kCmd, "--ack applies to write only (a read's answer is its data)");
  }
  if (auto it = opts.find("--seed"); it != opts.end()) {
    std::uint64_t seed = 0;
    bool ok = !it->second.empty() && it->second.size() <= 19;
    for (char c : it->second) {
      ok = ok && c >= '0' && c <= '9';
      seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok) {
      return usage_error(env, kCmd,
                         "invalid --seed '" + std::string(it->second) +
                             "': not a number (0..9999999999999999999)");
    }
    brw.seed = seed;
  }
  st::RunConfig config;
  config.brw = brw;
  if (!parse_selftest_common(env, kCmd, opts, std::span(positional).subspan(1), config)) {
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto rpc = [&dev = *dev, &config, brw](o2lnd::Nid nid, std::uint64_t ticket) {
    o2lnd::BrwRequest req;
    req.nid = nid;
    req.source = config.source;
    req.op = brw.op;
    req.size = brw.size;
    req.timeout = config.timeout;
    req.check = brw.check;
    req.ack = brw.ack;
    req.seed = brw.seed + ticket;
    auto r = dev.brw(req);
    // an older module (ABI < 11) does not say: its writes all asked for an ACK
    return r ? st::RpcOutcome{0, r->rtt, r->rdma, r->messages != 0 ? r->messages : 2}
             : st::RpcOutcome{r.error().errnum, {}};
  };
  return run_selftest(env, kCmd, opts, config, rpc);
}

}  // namespace

constinit const Command kSelftestPingCommand = {
    "selftest ping",
    "NID [NID...] [--from NID] [--concurrency N] [--duration S | --count N] [--timeout MS] [-y]",
    "ping load test of peers, like 'lst' (lnet_selftest)",
    "Runs N threads that each ping (LNet GET + REPLY, as 'o2ctl ping') back to\n"
    "back, round-robin over the NIDs, until the duration passed or --count pings\n"
    "were made, then reports: rpcs (pings made, failed ones included), rpc/s,\n"
    "msg/s (2 LNet messages per answered ping), the latency of the answered\n"
    "pings in microseconds (min, p50, p99, max; the module's round-trip time,\n"
    "and the wall time around each ioctl), and the ping errors: expired (timed\n"
    "out), dropped (a local drop: no buffer, no memory, connection aborted, I/O\n"
    "error), refused (connection refused, no route) and other.  Stops at once\n"
    "on an error no retry can cure (invalid argument, permission denied).\n"
    "Exits 0 when every ping was answered, 1 otherwise (the report is printed\n"
    "either way).  See also 'selftest brw'.\n"
    "\n"
    "      --from NID        the local NID to send from (default: the module picks)\n"
    "      --concurrency N   threads pinging at once, 1..256 (default 8)\n"
    "      --duration S      seconds to run, 0.1..3600 (default 10)\n"
    "      --count N         stop after N pings in all (instead of --duration)\n"
    "      --timeout MS      per ping, 1..600000 ms (default: the module's, 5 s)\n"
    "  -y, --yaml            the report as YAML ('selftest:' ...)\n",
    kSelftestPingOptions,
    run_selftest_ping};

constinit const Command kSelftestBrwCommand = {
    "selftest brw",
    "write|read NID [NID...] --size SIZE [--check] [--ack] [--seed N] [--from NID] [--concurrency "
    "N] "
    "[--duration S | --count N] [--timeout MS] [-y]",
    "bulk read/write load test of peers, like lnet_selftest's brw",
    "Runs N threads that each make bulk RPCs back to back, round-robin over the\n"
    "NIDs: a write PUTs SIZE bytes to the peer's selftest service; a read\n"
    "GETs SIZE bytes from it.  A checked or routed write (or one with --ack)\n"
    "asks the service for an LNet ACK with its verdict; any other write is\n"
    "over once the peer's transport has acknowledged it.  Payloads above the NI's\n"
    "max_immediate go by RDMA ('net show -v', bulk).  Reports as 'selftest\n"
    "ping' does, plus MiB/s (answered RPCs x SIZE / 2^20 / s), rdma rpcs (how\n"
    "many went by RDMA) and, among the brw errors, verify (the pattern did not\n"
    "verify at either end: EBADMSG).  Exits 0 when every RPC succeeded.\n"
    "\n"
    "  write|read            PUT to the peer, or GET from it\n"
    "      --size SIZE       bytes per RPC, 0..1M; suffixes K, M, KiB, MiB\n"
    "                        (binary: 64K = 65536) (required)\n"
    "      --check           fill the payload with a pattern and verify it at\n"
    "                        the receiving end\n"
    "      --ack             a write asks for the LNet ACK even unchecked\n"
    "      --seed N          the pattern's seed: RPC number i uses N + i (default 0)\n"
    "      --from NID        the local NID to send from (default: the module picks)\n"
    "      --concurrency N   RPCs in flight, 1..256 (default 8)\n"
    "      --duration S      seconds to run, 0.1..3600 (default 10)\n"
    "      --count N         stop after N RPCs in all (instead of --duration)\n"
    "      --timeout MS      per RPC, 1..600000 ms (default: the module's, 5 s)\n"
    "  -y, --yaml            the report as YAML ('selftest:' with mode brw, op,\n"
    "                        size, check, ack, seed, mib_per_s, rdma_rpcs, ...)\n",
    kSelftestBrwOptions,
    run_selftest_brw};

}  // namespace o2ctl::cmd
