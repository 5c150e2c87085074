// `o2ctl selftest`: load generation in the spirit of lnet_selftest (lst),
// done in userspace over the module's ioctls.  Mode "ping": N threads issue
// back-to-back LNet pings (O2LND_IOC_PING) round-robin over a list of NIDs
// until a duration or a total count is reached, and the report gives the
// rate, exact latency percentiles and the errors by kind.  (Room is left for
// a later "brw" mode: a Mode value, its own worker and report fields.)
//
// The statistics are pure functions so that host unit tests check them;
// run_ping() takes the ping as a function, so that it runs on a fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/nid.h"

namespace o2ctl::selftest {

// The exact percentile `p` (0..100) of `sorted` (ascending) by the nearest
// rank method: the smallest sample such that at least p% of the samples are
// <= it (p = 0 gives the minimum, 100 the maximum).  0 for no samples.
std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double p);

// min / p50 / p99 / max of a set of samples, in the samples' unit.
struct Summary {
  std::uint64_t min = 0;
  std::uint64_t p50 = 0;
  std::uint64_t p99 = 0;
  std::uint64_t max = 0;
  bool operator==(const Summary&) const = default;
};

// Sorts `samples` and summarizes them; all zero for no samples.
Summary summarize(std::vector<std::uint64_t> samples);

// What a failed ping counts as:
//   kExpired  ETIMEDOUT: no reply before the deadline
//   kDropped  a local drop: ENOBUFS, ENOMEM, ECONNABORTED, ECONNRESET, EIO,
//             ECANCELED, ESHUTDOWN, EAGAIN, EINTR
//   kRefused  the peer or the route said no: ECONNREFUSED, EHOSTUNREACH,
//             ENETUNREACH
//   kOther    anything else (EPROTO: a malformed reply, EINVAL, ...)
enum class ErrorClass : std::uint8_t { kExpired, kDropped, kRefused, kOther };
ErrorClass classify(int errnum);
std::string_view class_name(ErrorClass c);  // "expired", "dropped", ...

// Errors that no retry can cure (a bad argument, no permission, a module
// of another ABI): the run stops at the first one.
bool fatal(int errnum);

struct ErrorCounts {
  std::uint64_t total = 0;
  std::uint64_t expired = 0;
  std::uint64_t dropped = 0;
  std::uint64_t refused = 0;
  std::uint64_t other = 0;

  void add(int errnum);
  void merge(const ErrorCounts& o);
  bool operator==(const ErrorCounts&) const = default;
};

// What one ping did: 0 and the module's round-trip time, or an errno.
struct PingOutcome {
  int errnum = 0;
  std::chrono::nanoseconds rtt{0};
};
using PingFn = std::function<PingOutcome(o2lnd::Nid)>;

inline constexpr std::uint32_t kMinConcurrency = 1;
inline constexpr std::uint32_t kMaxConcurrency = 256;
inline constexpr std::uint32_t kDefaultConcurrency = 8;
inline constexpr std::chrono::milliseconds kDefaultDuration{10000};
inline constexpr std::chrono::milliseconds kMinDuration{100};
inline constexpr std::chrono::milliseconds kMaxDuration{3600 * 1000};

struct PingConfig {
  std::vector<o2lnd::Nid> peers;     // at least one
  std::optional<o2lnd::Nid> source;  // --from
  std::uint32_t concurrency = kDefaultConcurrency;
  // Stop after `duration`, or (when set) after `count` pings in all.
  std::chrono::milliseconds duration = kDefaultDuration;
  std::optional<std::uint64_t> count;
  std::chrono::milliseconds timeout{0};  // per ping; 0: the module's default
};

struct PingReport {
  PingConfig config;
  double elapsed_s = 0;     // wall time of the whole run
  std::uint64_t rpcs = 0;   // pings finished, failed ones included
  std::uint64_t ok = 0;     // pings answered
  double rpc_per_s = 0;     // rpcs / elapsed_s
  double msg_per_s = 0;     // 2 LNet messages (GET + REPLY) per answered ping
  Summary latency_us;       // the module's rtt of the answered pings
  Summary wall_latency_us;  // wall time around the ioctl of the answered pings
  ErrorCounts errors;
  int fatal_errnum = 0;   // the error that stopped the run early, or 0
  o2lnd::Nid fatal_peer;  // ... and the NID it was pinging
};

// Runs the pings: config.concurrency std::jthreads, each taking the next
// ticket of a shared counter and pinging config.peers[ticket % size] until
// the duration passed, config.count tickets were taken, or a fatal() error
// happened.  `ping` is called from several threads at once.
PingReport run_ping(const PingConfig& config, const PingFn& ping);

// The human-readable report (several lines), and the YAML one:
//   selftest:
//       mode: ping
//       peers:
//           - 192.168.1.2@o2ib0
//       source: any
//       concurrency: 8
//       duration_s: 10.001
//       timeout_ms: 0
//       rpcs: 1234
//       rpc_per_s: 123.4
//       msg_per_s: 246.8
//       latency_us:       (min, p50, p99, max)
//       wall_latency_us:  (min, p50, p99, max)
//       errors:           (total, expired, dropped, refused, other)
std::string format_text(const PingReport& r);
std::string format_yaml(const PingReport& r);

}  // namespace o2ctl::selftest
