#include "o2ctl/selftest.h"

#include <algorithm>
#include <array>
#include <atomic>
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
#include "o2lnd/nid.h"

namespace o2ctl::selftest {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kNsPerUs = 1000;
constexpr double kP50 = 50;
constexpr double kP99 = 99;
// LNet messages per ping: the GET and its REPLY.
constexpr double kMessagesPerPing = 2;

// What one worker saw.
struct WorkerResult {
  std::vector<std::uint64_t> rtt_ns;
  std::vector<std::uint64_t> wall_ns;
  ErrorCounts errors;
  std::uint64_t rpcs = 0;
};

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
  }
}

void ErrorCounts::merge(const ErrorCounts& o) {
  total += o.total;
  expired += o.expired;
  dropped += o.dropped;
  refused += o.refused;
  other += o.other;
}

PingReport run_ping(const PingConfig& config, const PingFn& ping) {
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
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint64_t ticket = tickets.fetch_add(1, std::memory_order_relaxed);
      if (config.count ? ticket >= *config.count : Clock::now() >= deadline) {
        break;
      }
      o2lnd::Nid peer = config.peers[ticket % config.peers.size()];
      auto t0 = Clock::now();
      PingOutcome outcome = ping(peer);
      auto wall = Clock::now() - t0;
      ++mine.rpcs;
      if (outcome.errnum == 0) {
        mine.rtt_ns.push_back(static_cast<std::uint64_t>(std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.rtt).count())));
        mine.wall_ns.push_back(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count()));
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

  std::vector<std::uint64_t> rtt;
  std::vector<std::uint64_t> wall;
  for (auto& r : results) {
    report.rpcs += r.rpcs;
    report.errors.merge(r.errors);
    rtt.insert(rtt.end(), r.rtt_ns.begin(), r.rtt_ns.end());
    wall.insert(wall.end(), r.wall_ns.begin(), r.wall_ns.end());
    r = WorkerResult{};  // free as we go
  }
  report.ok = report.rpcs - report.errors.total;
  report.latency_us = summarize(to_us(rtt));
  report.wall_latency_us = summarize(to_us(wall));
  if (report.elapsed_s > 0) {
    report.rpc_per_s = static_cast<double>(report.rpcs) / report.elapsed_s;
    report.msg_per_s = kMessagesPerPing * static_cast<double>(report.ok) / report.elapsed_s;
  }
  return report;
}

std::string format_text(const PingReport& r) {
  std::string peers;
  for (const auto& p : r.config.peers) {
    peers += (peers.empty() ? "" : " ") + p.str();
  }
  std::string out;
  out += "selftest ping: " + std::to_string(r.config.peers.size()) +
         (r.config.peers.size() == 1 ? " peer" : " peers") + ", concurrency " +
         std::to_string(r.config.concurrency) + ", " + fixed(r.elapsed_s, 3) + " s\n";
  out += "  peers:            " + peers + "\n";
  out += "  from:             " + (r.config.source ? r.config.source->str() : "any") + "\n";
  out += "  rpcs:             " + std::to_string(r.rpcs) + "\n";
  out += "  rpc/s:            " + fixed(r.rpc_per_s, 1) + "\n";
  out += "  msg/s:            " + fixed(r.msg_per_s, 1) + "\n";
  out += "  latency us:       " + summary_line(r.latency_us) + "\n";
  out += "  wall latency us:  " + summary_line(r.wall_latency_us) + "\n";
  out += "  ping errors:      " + std::to_string(r.errors.total) + " (expired " +
         std::to_string(r.errors.expired) + ", dropped " + std::to_string(r.errors.dropped) +
         ", refused " + std::to_string(r.errors.refused) + ", other " +
         std::to_string(r.errors.other) + ")\n";
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
  kv(kField, "mode", "ping");
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
  kv(kField, "rpc_per_s", fixed(r.rpc_per_s, 1));
  kv(kField, "msg_per_s", fixed(r.msg_per_s, 1));
  summary("latency_us", r.latency_us);
  summary("wall_latency_us", r.wall_latency_us);
  out += std::string(kField) + "errors:\n";
  kv(kSub, "total", std::to_string(r.errors.total));
  kv(kSub, "expired", std::to_string(r.errors.expired));
  kv(kSub, "dropped", std::to_string(r.errors.dropped));
  kv(kSub, "refused", std::to_string(r.errors.refused));
  kv(kSub, "other", std::to_string(r.errors.other));
  return out;
}

}  // namespace o2ctl::selftest
