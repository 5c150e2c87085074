#include "o2lnd/device.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2lnd {
namespace {

// A fixed-size char field of a reply; the kernel NUL-terminates it, but a
// field without a NUL is read up to its end.
template <std::size_t N>
std::string field(const char (&chars)[N]) {  // NOLINT(*-avoid-c-arrays)
  return {chars, ::strnlen(chars, N)};
}

// Guards the NET_SHOW loop against a module that never says ENOENT.
constexpr std::uint32_t kMaxNets = 1U << 16;

}  // namespace

std::string_view status_name(std::uint32_t status) {
  switch (status) {
    case O2LND_NI_STATUS_UP:
      return "up";
    case O2LND_NI_STATUS_DOWN:
      return "down";
    default:
      return "unknown";
  }
}

VersionInfo decode(const o2lnd_ioc_version& reply) {
  return VersionInfo{reply.abi_version, field(reply.module_version)};
}

PingResult decode(const o2lnd_ioc_ping& reply) {
  PingResult result;
  result.pid = reply.pid;
  result.n_ids = reply.n_ids;
  result.rtt = std::chrono::nanoseconds(reply.rtt_ns);
  std::uint32_t valid = std::min({reply.n_ids, reply.max_ids, std::uint32_t{O2LND_PING_MAX_IDS}});
  result.ids.reserve(valid);
  for (std::uint32_t i = 0; i < valid; ++i) {
    result.ids.push_back(PingId{Nid(reply.ids[i].nid), reply.ids[i].status});
  }
  return result;
}

NetInfo decode(const o2lnd_ioc_net& reply) {
  NetInfo ni;
  ni.index = reply.index;
  ni.count = reply.count;
  ni.nid = Nid(reply.nid);
  ni.status = reply.status;
  ni.net = field(reply.net);
  ni.ifname = field(reply.ifname);
  ni.devname = field(reply.devname);
  ni.incarnation = reply.incarnation;
  ni.peer_credits = reply.peer_credits;
  ni.credits = reply.credits;
  ni.timeout_s = reply.timeout_s;
  ni.max_msg_size = reply.max_msg_size;
  ni.npeers = reply.npeers;
  ni.nconns = reply.nconns;
  ni.nconns_established = reply.nconns_established;
  ni.send_count = reply.send_count;
  ni.recv_count = reply.recv_count;
  ni.drop_count = reply.drop_count;
  ni.send_bytes = reply.send_bytes;
  ni.recv_bytes = reply.recv_bytes;
  ni.connects_active = reply.connects_active;
  ni.connects_passive = reply.connects_passive;
  ni.rejects_sent = reply.rejects_sent;
  ni.rejects_received = reply.rejects_received;
  return ni;
}

Result<Device> Device::open(std::string_view path, std::string_view client) {
  auto backend = FdBackend::open(std::string(path));
  if (!backend) {
    return backend.error();
  }
  return attach(std::move(*backend), client);
}

Result<Device> Device::attach(std::unique_ptr<Backend> backend, std::string_view client) {
  Device dev(std::move(backend), std::string(client));
  auto info = dev.version();
  if (!info) {
    return info.error();
  }
  if (info->abi_version != O2LND_ABI_VERSION) {
    return Error{EPROTO, "o2lnd module ABI " + std::to_string(info->abi_version) + ", " +
                             dev.client_ + " speaks ABI " + std::to_string(O2LND_ABI_VERSION) +
                             ": upgrade " + dev.client_ + " or load a matching module"};
  }
  dev.info_ = std::move(*info);
  return dev;
}

Result<VersionInfo> Device::version() {
  auto arg = make_arg<o2lnd_ioc_version>();
  if (int err = backend_->ioctl(O2LND_IOC_VERSION, &arg); err != 0) {
    std::string message = "O2LND_IOC_VERSION on " + backend_->name() + ": " + std::strerror(err);
    if (err == ENOTTY || err == EINVAL) {
      message += " (is " + backend_->name() + " an o2lnd device?)";
    }
    return Error{err, std::move(message)};
  }
  return decode(arg);
}

Result<PingResult> Device::ping(Nid nid, std::chrono::milliseconds timeout,
                                std::optional<Nid> source, std::uint32_t max_ids) {
  auto fail = [&](int err, const std::string& why) {
    return Error{err, "failed to ping " + nid.str() + ": " + why};
  };
  if (nid.is_any()) {
    return fail(EINVAL, "LNET_NID_ANY is not a target");
  }
  if (timeout.count() < 0 || timeout.count() > O2LND_PING_TIMEOUT_MAX_MS) {
    return fail(EINVAL, "timeout " + std::to_string(timeout.count()) + " ms out of range (0.." +
                            std::to_string(O2LND_PING_TIMEOUT_MAX_MS) + ")");
  }
  if (max_ids < 1 || max_ids > O2LND_PING_MAX_IDS) {
    return fail(EINVAL, "max_ids " + std::to_string(max_ids) + " out of range (1.." +
                            std::to_string(O2LND_PING_MAX_IDS) + ")");
  }
  auto arg = make_arg<o2lnd_ioc_ping>();
  arg.nid = nid.raw();
  arg.src_nid = source ? source->raw() : O2LND_NID_ANY;
  arg.timeout_ms = static_cast<std::uint32_t>(timeout.count());
  arg.max_ids = max_ids;
  if (int err = backend_->ioctl(O2LND_IOC_PING, &arg); err != 0) {
    return fail(err, std::strerror(err));
  }
  // Trust our own max_ids, not the one in the reply.
  arg.max_ids = max_ids;
  return decode(arg);
}

Result<NetInfo> Device::net(std::uint32_t index) {
  auto arg = make_arg<o2lnd_ioc_net>();
  arg.index = index;
  if (int err = backend_->ioctl(O2LND_IOC_NET_SHOW, &arg); err != 0) {
    return Error{err,
                 "O2LND_IOC_NET_SHOW of NI " + std::to_string(index) + ": " + std::strerror(err)};
  }
  auto ni = decode(arg);
  ni.index = index;
  return ni;
}

Result<std::vector<NetInfo>> Device::nets() {
  std::vector<NetInfo> nis;
  for (std::uint32_t index = 0; index < kMaxNets; ++index) {
    auto ni = net(index);
    if (!ni) {
      if (ni.error().errnum == ENOENT) {
        return nis;
      }
      return ni.error();
    }
    nis.push_back(std::move(*ni));
  }
  return Error{EPROTO, "O2LND_IOC_NET_SHOW: no end after " + std::to_string(kMaxNets) + " NIs"};
}

}  // namespace o2lnd
