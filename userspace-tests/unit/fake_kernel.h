// A fake o2lnd module behind o2lnd::Backend: answers VERSION, PING and
// NET_SHOW from state the test sets, and records every call as it came in.
#pragma once

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/uapi.h"

namespace o2lnd::testing {

struct FakeKernel {
  struct Call {
    unsigned long cmd;
    o2lnd_ioc_hdr hdr;
    std::vector<unsigned char> bytes;  // the whole argument as passed in
  };

  std::uint32_t abi = O2LND_ABI_VERSION;
  std::string module_version = "0.1.0-fake";
  int version_err = 0;
  // PING: fills the reply or returns an errno.
  std::function<int(o2lnd_ioc_ping&)> on_ping = [](o2lnd_ioc_ping&) { return EHOSTUNREACH; };
  // NET_SHOW: nis[index], ENOENT past the end; net_err at net_err_index.
  std::vector<o2lnd_ioc_net> nis;
  int net_err = 0;
  std::uint32_t net_err_index = 0;
  bool net_never_ends = false;

  std::vector<Call> calls;
  int opens = 0;

  int ioctl(unsigned long cmd, void* arg) {
    auto* hdr = static_cast<o2lnd_ioc_hdr*>(arg);
    Call call{cmd, *hdr, {}};
    const auto* p = static_cast<const unsigned char*>(arg);
    call.bytes.assign(p, p + _IOC_SIZE(cmd));
    calls.push_back(call);
    switch (cmd) {
      case O2LND_IOC_VERSION: {
        if (version_err != 0) {
          return version_err;
        }
        auto* v = static_cast<o2lnd_ioc_version*>(arg);
        v->abi_version = abi;
        std::memset(v->module_version, 0, sizeof(v->module_version));
        // Deliberately not NUL-terminated when the string fills the field.
        std::copy_n(module_version.begin(),
                    std::min(module_version.size(), sizeof(v->module_version)),
                    std::begin(v->module_version));
        return 0;
      }
      case O2LND_IOC_PING:
        return on_ping(*static_cast<o2lnd_ioc_ping*>(arg));
      case O2LND_IOC_NET_SHOW: {
        auto* n = static_cast<o2lnd_ioc_net*>(arg);
        std::uint32_t index = n->index;
        if (net_err != 0 && index == net_err_index) {
          return net_err;
        }
        if (net_never_ends) {
          *n = o2lnd_ioc_net{};
          n->index = index;
          return 0;
        }
        if (index >= nis.size()) {
          return ENOENT;
        }
        *n = nis[index];
        n->hdr = *hdr;
        n->index = index;
        n->count = static_cast<std::uint32_t>(nis.size());
        return 0;
      }
      default:
        return ENOTTY;
    }
  }
};

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(std::shared_ptr<FakeKernel> kernel) : kernel_(std::move(kernel)) {}
  int ioctl(unsigned long cmd, void* arg) override { return kernel_->ioctl(cmd, arg); }
  [[nodiscard]] std::string name() const override { return "/dev/o2lnd"; }

 private:
  std::shared_ptr<FakeKernel> kernel_;
};

inline void set_string(char* dst, std::size_t size, const std::string& s) {
  std::memset(dst, 0, size);
  std::copy_n(s.begin(), std::min(s.size(), size), dst);
}

// An NI as the module would report it.
inline o2lnd_ioc_net make_ni(std::uint64_t nid, const std::string& net, const std::string& ifname,
                             const std::string& devname = "") {
  o2lnd_ioc_net n{};
  n.nid = nid;
  n.status = O2LND_NI_STATUS_UP;
  set_string(n.net, sizeof(n.net), net);
  set_string(n.ifname, sizeof(n.ifname), ifname);
  set_string(n.devname, sizeof(n.devname), devname);
  return n;
}

}  // namespace o2lnd::testing
