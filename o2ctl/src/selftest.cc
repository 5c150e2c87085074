#include "o2ctl/selftest.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "o2ctl/format.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2ctl::selftest {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kNsPerUs = 1000;
constexpr double kP50 = 50;
constexpr double kP99 = 99;
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// What one worker saw.
struct WorkerResult {
  std::vector<std::uint64_t> rtt_ns;
  std::vector<std::uint64_t> wall_ns;
  ErrorCounts errors;
  std::uint64_t rpcs = 0;
  std::uint64_t rdma = 0;
  std::uint64_t messages = 0;  // LNet messages of the answered RPCs
  std::uint64_t not_sent = 0;
};

// The local NI is down: the RPC never left this node.
bool not_sent_error(int errnum) { return errnum == ENETDOWN; }

// Back-off of a worker whose RPCs cannot be sent: 1 ms, doubling to 200 ms.
constexpr std::chrono::milliseconds kFirstBackoff{1};
constexpr std::chrono::milliseconds kMaxBackoff{200};

std::vector<std::uint64_t> to_us(const std::vector<std::uint64_t>& ns) {
  std::vector<std::uint64_t> us;
  us.reserve(ns.size());
  for (std::uint64_t v : ns) {
    us.push_back(v / kNsPerUs);
  }
  return us;
}

// A fixed-point number: "123.4" for decimals 1.
std::string fixed(double v, int decimals) {
  if (!std::isfinite(v) || v < 0) {
    v = 0;
  }
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", decimals, v);  // NOLINT(*-vararg)
  return buf.data();
}

std::string summary_line(const Summary& s) {
  return "min " + std::to_string(s.min) + "  p50 " + std::to_string(s.p50) + "  p99 " +
         std::to_string(s.p99) + "  max " + std::to_string(s.max);
}

}  // namespace

std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double p) {
  if (sorted.empty()) {
    return 0;
  }
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank: ceil(p / 100 * n), 1-based, at least 1.
  auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Summary summarize(std::vector<std::uint64_t> samples) {
  if (samples.empty()) {
    return {};
  }
  std::sort(samples.begin(), samples.end());
  return {samples.front(), percentile(samples, kP50), percentile(samples, kP99), samples.back()};
}

ErrorClass classify(int errnum) {
  switch (errnum) {
    case ETIMEDOUT:
      return ErrorClass::kExpired;
    case ENOBUFS:
    case ENOMEM:
    case ECONNABORTED:
    case ECONNRESET:
    case EIO:
    case ECANCELED:
    case ESHUTDOWN:
    case EAGAIN:
    case EINTR:
      return ErrorClass::kDropped;
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
      return ErrorClass::kRefused;
    case EBADMSG:
      return ErrorClass::kVerify;
    default:
      return ErrorClass::kOther;
  }
}

std::string_view class_name(ErrorClass c) {
  switch (c) {
    case ErrorClass::kExpired:
      return "expired";
    case ErrorClass::kDropped:
      return "dropped";
    case ErrorClass::kRefused:
      return "refused";
    case ErrorClass::kOther:
      return "other";
    case ErrorClass::kVerify:
      return "verify";
  }
  return "other";
}

bool fatal(int errnum) {
  switch (errnum) {
    case EINVAL:
    case EPERM:
    case EACCES:
    case ENOTTY:
    case EFAULT:
    case EBADF:
    case ENODEV:
    case ENXIO:
      return true;
    default:
      return false;
  }
}

void ErrorCounts::add(int errnum) {
  ++total;
  switch (classify(errnum)) {
    case ErrorClass::kExpired:
      ++expired;
      break;
    case ErrorClass::kDropped:
      ++dropped;
      break;
    case ErrorClass::kRefused:
      ++refused;
      break;
    case ErrorClass::kOther:
      ++other;
      break;
    case ErrorClass::kVerify:
      ++verify;
      break;
  }
}

void ErrorCounts::merge(const ErrorCounts& o) {
  total += o.total;
  expired += o.expired;
  dropped += o.dropped;
  refused += o.refused;
  other += o.other;
  verify += o.verify;
}

PingReport run_ping(const PingConfig& config, const PingFn& ping) {
  return run_rpcs(config, [&ping](o2lnd::Nid nid, std::uint64_t /*ticket*/) { return ping(nid); });
}

PingReport run_rpcs(const RunConfig& config, const RpcFn& rpc) {
  PingReport report;
  report.config = config;
  if (config.peers.empty() || config.concurrency == 0) {
    return report;
  }
  std::atomic<std::uint64_t> tickets{0};
  std::atomic<bool> stop{false};
  std::mutex fatal_mutex;
  std::vector<WorkerResult> results(config.concurrency);
  const auto start = Clock::now();
  const auto deadline = start + config.duration;

  auto worker = [&](WorkerResult& mine) {
    std::chrono::milliseconds backoff{0};
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint64_t ticket = tickets.fetch_add(1, std::memory_order_relaxed);
      if (config.count ? ticket >= *config.count : Clock::now() >= deadline) {
        break;
      }
      o2lnd::Nid peer = config.peers[ticket % config.peers.size()];
      auto t0 = Clock::now();
      RpcOutcome outcome = rpc(peer, ticket);
      auto wall = Clock::now() - t0;
      if (not_sent_error(outcome.errnum)) {
        // nothing was sent: not an RPC; wait before trying again, so a
        // node whose NI is down does not spin
        ++mine.not_sent;
        backoff = std::min(kMaxBackoff, backoff.count() == 0 ? kFirstBackoff : 2 * backoff);
        auto wake = Clock::now() + backoff;
        if (!config.count && wake > deadline) {
          wake = deadline;
        }
        std::this_thread::sleep_until(wake);
        continue;
      }
      backoff = std::chrono::milliseconds{0};
      ++mine.rpcs;
      if (outcome.errnum == 0) {
        mine.rtt_ns.push_back(static_cast<std::uint64_t>(std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.rtt).count())));
        mine.wall_ns.push_back(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count()));
        mine.rdma += outcome.rdma ? 1 : 0;
        mine.messages += outcome.messages;
        continue;
      }
      mine.errors.add(outcome.errnum);
      if (fatal(outcome.errnum)) {
        std::lock_guard lock(fatal_mutex);
        if (report.fatal_errnum == 0) {
          report.fatal_errnum = outcome.errnum;
          report.fatal_peer = peer;
        }
        stop.store(true, std::memory_order_relaxed);
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(config.concurrency);
    for (auto& r : results) {
      threads.emplace_back(worker, std::ref(r));
    }
  }  // joined
  report.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();

  std::uint64_t messages = 0;
  std::vector<std::uint64_t> rtt;
  std::vector<std::uint64_t> wall;
  for (auto& r : results) {
    report.rpcs += r.rpcs;
    report.errors.merge(r.errors);
    report.rdma_rpcs += r.rdma;
    messages += r.messages;
    report.not_sent += r.not_sent;
    rtt.insert(rtt.end(), r.rtt_ns.begin(), r.rtt_ns.end());
    wall.insert(wall.end(), r.wall_ns.begin(), r.wall_ns.end());
    r = WorkerResult{};  // free as we go
  }
  report.ok = report.rpcs - report.errors.total;
  report.latency_us = summarize(to_us(rtt));
  report.wall_latency_us = summarize(to_us(wall));
  if (report.elapsed_s > 0) {
    report.rpc_per_s = static_cast<double>(report.rpcs) / report.elapsed_s;
    report.msg_per_s = static_cast<double>(messages) / report.elapsed_s;
    if (config.brw) {
      report.mib_per_s = static_cast<double>(report.ok) * static_cast<double>(config.brw->size) /
                         kBytesPerMiB / report.elapsed_s;
    }
  }
  return report;
}

o2lnd::Result<std::uint32_t> parse_size(std::string_view text) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  std::size_t i = 0;
  std::uint64_t value = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (value > O2LND_BRW_MAX_SIZE) {
      return invalid("too large (at most 1M = " + std::to_string(O2LND_BRW_MAX_SIZE) + " bytes)");
    }
  }
  if (i == 0) {
    return invalid("not a size (bytes, or with K, M, KiB, MiB)");
  }
  std::string suffix;
  for (char c : text.substr(i)) {
    suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::uint64_t scale = 1;
  if (suffix == "k" || suffix == "kib") {
    scale = 1024;
  } else if (suffix == "m" || suffix == "mib") {
    scale = std::uint64_t{1024} * 1024;
  } else if (!suffix.empty()) {
    return invalid("unknown unit '" + std::string(text.substr(i)) + "' (K, M, KiB or MiB)");
  }
  value *= scale;
  if (value > O2LND_BRW_MAX_SIZE) {
    return invalid("too large (at most 1M = " + std::to_string(O2LND_BRW_MAX_SIZE) + " bytes)");
  }
  return static_cast<std::uint32_t>(value);
}

std::string format_text(const PingReport& r) {
  std::string peers;
  for (const auto& p : r.config.peers) {
    peers += (peers.empty() ? "" : " ") + p.str();
  }
  const auto& brw = r.config.brw;
  std::string out;
  out += "selftest " +
         (brw ? "brw " + o2lnd::brw_op_name(brw->op) + ", size " + std::to_string(brw->size) +
                    (brw->check ? ", check" : "") + (brw->ack ? ", ack" : "") + ","
              : std::string("ping:")) +
         " " + std::to_string(r.config.peers.size()) +
         (r.config.peers.size() == 1 ? " peer" : " peers") + ", concurrency " +
         std::to_string(r.config.concurrency) + ", " + fixed(r.elapsed_s, 3) + " s\n";
  out += "  peers:            " + peers + "\n";
  out += "  from:             " + (r.config.source ? r.config.source->str() : "any") + "\n";
  out += "  rpcs:             " + std::to_string(r.rpcs) + "\n";
  out += "  not sent:         " + std::to_string(r.not_sent) +
         (r.not_sent != 0 ? " (the local NI was down)" : "") + "\n";
  out += "  rpc/s:            " + fixed(r.rpc_per_s, 1) + "\n";
  out += "  msg/s:            " + fixed(r.msg_per_s, 1) + "\n";
  if (brw) {
    out += "  MiB/s:            " + fixed(r.mib_per_s, 1) + "\n";
    out += "  rdma rpcs:        " + std::to_string(r.rdma_rpcs) + "\n";
  }
  out += "  latency us:       " + summary_line(r.latency_us) + "\n";
  out += "  wall latency us:  " + summary_line(r.wall_latency_us) + "\n";
  // A ping has no verify class: an EBADMSG there counts as other.
  out += std::string(brw ? "  brw errors:       " : "  ping errors:      ") +
         std::to_string(r.errors.total) + " (expired " + std::to_string(r.errors.expired) +
         ", dropped " + std::to_string(r.errors.dropped) + ", refused " +
         std::to_string(r.errors.refused) +
         (brw ? ", verify " + std::to_string(r.errors.verify) + ", other " +
                    std::to_string(r.errors.other)
              : ", other " + std::to_string(r.errors.other + r.errors.verify)) +
         ")\n";
  return out;
}

std::string format_yaml(const PingReport& r) {
  constexpr std::string_view kField = "    ";
  constexpr std::string_view kSub = "        ";
  std::string out = "selftest:\n";
  auto kv = [&](std::string_view indent, std::string_view key, const std::string& value) {
    out += std::string(indent) + std::string(key) + ": " + value + "\n";
  };
  auto summary = [&](std::string_view key, const Summary& s) {
    out += std::string(kField) + std::string(key) + ":\n";
    kv(kSub, "min", std::to_string(s.min));
    kv(kSub, "p50", std::to_string(s.p50));
    kv(kSub, "p99", std::to_string(s.p99));
    kv(kSub, "max", std::to_string(s.max));
  };
  const auto& brw = r.config.brw;
  kv(kField, "mode", brw ? "brw" : "ping");
  if (brw) {
    kv(kField, "op", o2lnd::brw_op_name(brw->op));
    kv(kField, "size", std::to_string(brw->size));
    kv(kField, "check", brw->check ? "true" : "false");
    kv(kField, "ack", brw->ack ? "true" : "false");
    kv(kField, "seed", std::to_string(brw->seed));
  }
  if (r.config.peers.empty()) {
    kv(kField, "peers", "[]");
  } else {
    out += std::string(kField) + "peers:\n";
    for (const auto& p : r.config.peers) {
      out += std::string(kSub) + "- " + yaml_scalar(p.str()) + "\n";
    }
  }
  kv(kField, "source", r.config.source ? yaml_scalar(r.config.source->str()) : "any");
  kv(kField, "concurrency", std::to_string(r.config.concurrency));
  kv(kField, "duration_s", fixed(r.elapsed_s, 3));
  kv(kField, "timeout_ms", std::to_string(r.config.timeout.count()));
  kv(kField, "rpcs", std::to_string(r.rpcs));
  kv(kField, "not_sent", std::to_string(r.not_sent));
  kv(kField, "rpc_per_s", fixed(r.rpc_per_s, 1));
  kv(kField, "msg_per_s", fixed(r.msg_per_s, 1));
  if (brw) {
    kv(kField, "mib_per_s", fixed(r.mib_per_s, 1));
    kv(kField, "rdma_rpcs", std::to_string(r.rdma_rpcs));
  }
  summary("latency_us", r.latency_us);
  summary("wall_latency_us", r.wall_latency_us);
  out += std::string(kField) + "errors:\n";
  kv(kSub, "total", std::to_string(r.errors.total));
  kv(kSub, "expired", std::to_string(r.errors.expired));
  kv(kSub, "dropped", std::to_string(r.errors.dropped));
  kv(kSub, "refused", std::to_string(r.errors.refused));
  if (brw) {
    kv(kSub, "verify", std::to_string(r.errors.verify));
    kv(kSub, "other", std::to_string(r.errors.other));
  } else {
    kv(kSub, "other", std::to_string(r.errors.other + r.errors.verify));
  }
  return out;
}

}  // namespace o2ctl::selftest
