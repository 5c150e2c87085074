// Device: the o2lnd char device, typed.  Every call fills the ioctl header
// (abi_version = O2LND_ABI_VERSION, size = sizeof the struct, flags and
// reserved 0) and zeroes every other input byte.
#pragma once

#include <linux/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"
#include "o2lnd/uapi.h"

namespace o2lnd {

inline constexpr std::string_view kDefaultDevicePath = "/dev/o2lnd";
inline constexpr std::uint32_t kAbiVersion = O2LND_ABI_VERSION;

struct VersionInfo {
  std::uint32_t abi_version = 0;  // the module's
  std::string module_version;
};

// An NI status word as the module reports it: "up", "down", or "unknown".
std::string_view status_name(std::uint32_t status);

struct PingId {
  Nid nid;
  std::uint32_t status = 0;  // O2LND_NI_STATUS_UP/_DOWN, 0 if not reported
  bool operator==(const PingId&) const = default;
};

struct PingResult {
  std::uint32_t pid = 0;
  // How many NIDs the target reported; may exceed ids.size() when the
  // target has more NIDs than were asked for (see truncated()).
  std::uint32_t n_ids = 0;
  std::vector<PingId> ids;  // min(n_ids, max_ids) entries; the first is 0@lo
  std::chrono::nanoseconds rtt{0};

  [[nodiscard]] bool truncated() const { return n_ids > ids.size(); }
};

// One local NI (O2LND_IOC_NET_SHOW).
struct NetInfo {
  std::uint32_t index = 0;
  std::uint32_t count = 0;  // NIs the module had when this one was read
  Nid nid;
  std::uint32_t status = 0;
  std::string net;      // "o2ib0"
  std::string ifname;   // "eth0", "" for lo
  std::string devname;  // "rxe0", "" until resolved
  std::uint64_t incarnation = 0;
  std::uint32_t peer_credits = 0;
  std::uint32_t credits = 0;
  std::uint32_t timeout_s = 0;
  std::uint32_t max_msg_size = 0;
  std::uint32_t npeers = 0;
  std::uint32_t nconns = 0;
  std::uint32_t nconns_established = 0;
  std::uint64_t send_count = 0;
  std::uint64_t recv_count = 0;
  std::uint64_t drop_count = 0;
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
  std::uint64_t connects_active = 0;
  std::uint64_t connects_passive = 0;
  std::uint64_t rejects_sent = 0;
  std::uint64_t rejects_received = 0;

  [[nodiscard]] bool up() const { return status == O2LND_NI_STATUS_UP; }
};

// Decoders of kernel replies (public so tests can feed them odd replies).
VersionInfo decode(const o2lnd_ioc_version& reply);
PingResult decode(const o2lnd_ioc_ping& reply);
NetInfo decode(const o2lnd_ioc_net& reply);

// A zeroed ioctl argument with its header filled for this ABI.
template <typename T>
T make_arg() {
  T arg{};
  arg.hdr.abi_version = O2LND_ABI_VERSION;
  arg.hdr.size = sizeof(T);
  return arg;
}

class Device {
 public:
  // Opens the device and checks the module's ABI (see attach()).  `client`
  // names the program in the ABI mismatch message ("o2ctl").
  static Result<Device> open(std::string_view path = kDefaultDevicePath,
                             std::string_view client = "libo2lnd");

  // Takes over `backend` and asks the module its ABI (O2LND_IOC_VERSION).
  // Fails with EPROTO when the module speaks another ABI:
  //   "o2lnd module ABI 2, o2ctl speaks ABI 1: upgrade o2ctl or load a
  //    matching module"
  static Result<Device> attach(std::unique_ptr<Backend> backend,
                               std::string_view client = "libo2lnd");

  // Asks the module again (O2LND_IOC_VERSION).
  Result<VersionInfo> version();
  // What the module said when the device was opened.
  [[nodiscard]] const VersionInfo& module_info() const { return info_; }

  // LNet ping of `nid`.  timeout 0 lets the module apply its default
  // (O2LND_PING_TIMEOUT_DEFAULT_MS); at most O2LND_PING_TIMEOUT_MAX_MS.
  // `source`: the local NID to send from (any when empty).  `max_ids`:
  // 1..O2LND_PING_MAX_IDS NIDs to return.  On failure errnum is the
  // module's (ETIMEDOUT, EHOSTUNREACH, ECONNREFUSED, ...), the message
  // "failed to ping NID: STRERROR".
  Result<PingResult> ping(Nid nid, std::chrono::milliseconds timeout = {},
                          std::optional<Nid> source = std::nullopt,
                          std::uint32_t max_ids = O2LND_PING_MAX_IDS);

  // One local NI by index; ENOENT past the last.
  Result<NetInfo> net(std::uint32_t index);
  // All local NIs: NET_SHOW from index 0 until ENOENT.  Any other error
  // is returned as is.
  Result<std::vector<NetInfo>> nets();

 private:
  Device(std::unique_ptr<Backend> backend, std::string client)
      : backend_(std::move(backend)), client_(std::move(client)) {}

  std::unique_ptr<Backend> backend_;
  std::string client_;
  VersionInfo info_;
};

}  // namespace o2lnd
