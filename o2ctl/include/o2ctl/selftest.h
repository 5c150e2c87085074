// `o2ctl selftest`: load generation in the spirit of lnet_selftest (lst),
// done in userspace over the module's ioctls.  N threads issue back-to-back
// RPCs round-robin over a list of NIDs until a duration or a total count is
// reached, and the report gives the rate, exact latency percentiles and the
// errors by kind.  Mode "ping": LNet pings (O2LND_IOC_PING).  Mode "brw":
// bulk RPCs (O2LND_IOC_BRW) of a fixed size, writes or reads, optionally
// pattern-checked; the report adds MiB/s, how many went by RDMA and the
// verification failures.  Both modes share the workers and the report.
//
// The statistics are pure functions so that host unit tests check them;
// run_rpcs() takes the RPC as a function, so that it runs on a fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/nid.h"
#include "o2lnd/result.h"
#include "o2lnd/uapi.h"

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
//   kVerify   EBADMSG: a brw's pattern did not verify (at either end)
//   kOther    anything else (EPROTO: a malformed reply, EINVAL, ...)
enum class ErrorClass : std::uint8_t { kExpired, kDropped, kRefused, kOther, kVerify };
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
  std::uint64_t verify = 0;  // EBADMSG (brw only; a ping never fails so)

  void add(int errnum);
  void merge(const ErrorCounts& o);
  bool operator==(const ErrorCounts&) const = default;
};

// What one RPC did: 0 and the module's round-trip time, or an errno; for
// a brw, whether its payload went by RDMA and its LNet messages (a write
// that asked for no ACK is one).
struct PingOutcome {
  int errnum = 0;
  std::chrono::nanoseconds rtt{0};
  bool rdma = false;
  std::uint32_t messages = 2;
};
using RpcOutcome = PingOutcome;
using PingFn = std::function<PingOutcome(o2lnd::Nid)>;
// An RPC of a run: the peer and the RPC's ticket (0, 1, ... over the whole
// run; a brw derives its pattern seed from it).
using RpcFn = std::function<RpcOutcome(o2lnd::Nid, std::uint64_t ticket)>;

inline constexpr std::uint32_t kMinConcurrency = 1;
inline constexpr std::uint32_t kMaxConcurrency = 256;
inline constexpr std::uint32_t kDefaultConcurrency = 8;
inline constexpr std::chrono::milliseconds kDefaultDuration{10000};
inline constexpr std::chrono::milliseconds kMinDuration{100};
inline constexpr std::chrono::milliseconds kMaxDuration{3600 * 1000};

// What a brw run moves.
struct BrwParams {
  std::uint32_t op = O2LND_BRW_WRITE;  // O2LND_BRW_WRITE or O2LND_BRW_READ
  std::uint32_t size = 0;              // bytes per RPC, 0..O2LND_BRW_MAX_SIZE
  bool check = false;                  // fill and verify a pattern
  std::uint64_t seed = 0;              // RPC number t uses seed + t
  bool ack = false;                    // a write asks for the LNet ACK even unchecked
  bool operator==(const BrwParams&) const = default;
};

// The configuration of a run: ping mode, or brw mode when `brw` is set.
struct PingConfig {
  std::vector<o2lnd::Nid> peers;     // at least one
  std::optional<o2lnd::Nid> source;  // --from
  std::uint32_t concurrency = kDefaultConcurrency;
  // Stop after `duration`, or (when set) after `count` pings in all.
  std::chrono::milliseconds duration = kDefaultDuration;
  std::optional<std::uint64_t> count;
  std::chrono::milliseconds timeout{0};  // per ping; 0: the module's default
  std::optional<BrwParams> brw;          // set: mode brw
};
using RunConfig = PingConfig;

struct PingReport {
  PingConfig config;
  double elapsed_s = 0;         // wall time of the whole run
  std::uint64_t rpcs = 0;       // pings finished, failed ones included
  std::uint64_t ok = 0;         // pings answered
  std::uint64_t not_sent = 0;   // attempts refused before anything was sent (ENETDOWN: the
                                // local NI is down); not RPCs: the worker backs off instead
  double rpc_per_s = 0;         // rpcs / elapsed_s
  double msg_per_s = 0;         // LNet messages of the answered RPCs (GET + REPLY, PUT
                                // [+ ACK]) per second
  double mib_per_s = 0;         // brw: ok * size / 2^20 / elapsed_s
  std::uint64_t rdma_rpcs = 0;  // brw: answered RPCs whose payload went by RDMA
  Summary latency_us;           // the module's rtt of the answered pings
  Summary wall_latency_us;      // wall time around the ioctl of the answered pings
  ErrorCounts errors;
  int fatal_errnum = 0;   // the error that stopped the run early, or 0
  o2lnd::Nid fatal_peer;  // ... and the NID it was pinging
};

// Runs the pings: config.concurrency std::jthreads, each taking the next
// ticket of a shared counter and pinging config.peers[ticket % size] until
// the duration passed, config.count tickets were taken, or a fatal() error
// happened.  `ping` is called from several threads at once.
PingReport run_ping(const PingConfig& config, const PingFn& ping);
// The same for any RPC (both modes): `rpc` gets the peer and the ticket.
PingReport run_rpcs(const RunConfig& config, const RpcFn& rpc);

// Parses a brw size: bytes, or with a binary suffix K, M, KiB, MiB
// (case-insensitive; "64K" = 65536, "1M" = 1048576), 0..O2LND_BRW_MAX_SIZE.
o2lnd::Result<std::uint32_t> parse_size(std::string_view text);

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
// In mode brw:
//   selftest:
//       mode: brw
//       op: write            (or read)
//       size: 1048576
//       check: true
//       ack: false           (--ack: the writes ask for the LNet ACK)
//       seed: 0
//       peers: ..., source, concurrency, duration_s, timeout_ms, rpcs,
//       rpc_per_s, msg_per_s (as above)
//       mib_per_s: 312.5     (answered RPCs * size / 2^20 / s)
//       rdma_rpcs: 1234      (answered RPCs whose payload went by RDMA)
//       latency_us, wall_latency_us (as above)
//       errors:           (total, expired, dropped, refused, verify, other)
std::string format_text(const PingReport& r);
std::string format_yaml(const PingReport& r);

}  // namespace o2ctl::selftest
