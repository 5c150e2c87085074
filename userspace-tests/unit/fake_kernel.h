// A fake o2lnd module behind o2lnd::Backend: answers VERSION, PING, BRW,
// NET_SHOW, PEER_SHOW, CONN_SHOW, PEER_CLOSE, FAULT_ADD/DEL/LIST,
// ROUTE_SHOW and ROUTING_SHOW from
// state the test sets, checks the header like the module does, and records
// every call as it came in.  ioctl() holds a mutex, so that several
// threads (o2ctl selftest's workers) may call it at once.
#pragma once

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
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
  // BRW: called after the module's argument checks (EINVAL before it).
  std::function<int(o2lnd_ioc_brw&)> on_brw = [](o2lnd_ioc_brw&) { return EHOSTUNREACH; };
  // NET_SHOW: nis[index], ENOENT past the end; net_err at net_err_index.
  std::vector<o2lnd_ioc_net> nis;
  int net_err = 0;
  std::uint32_t net_err_index = 0;
  bool net_never_ends = false;

  // PEER_SHOW / CONN_SHOW: peers[ni_index] / conns[ni_index] (ENOENT past
  // the end, for NI 0 and for an NI that has no entry).
  std::map<std::uint32_t, std::vector<o2lnd_ioc_peer>> peers;
  std::map<std::uint32_t, std::vector<o2lnd_ioc_conn>> conns;
  // PEER_CLOSE: closes (forgets) the conns to nid, on every NI or on the NI
  // of local_nid; ENOENT when no NI knows the peer.
  // FAULT_*: a rule table with the module's checks (EINVAL, ENOSPC, ENOENT).
  std::vector<o2lnd_ioc_fault> faults;
  std::uint32_t next_fault_id = 1;
  // ROUTE_SHOW: routes[index], ENOENT past the end.  ROUTING_SHOW: routing
  // (its header is the caller's).
  std::vector<o2lnd_ioc_route> routes;
  o2lnd_ioc_routing routing{};
  // An errno to return for a command instead of serving it (EPERM, ENOTTY).
  std::map<unsigned long, int> fail;

  std::vector<Call> calls;
  int opens = 0;

  // The last call of `cmd` as it came in (zeroed if there was none).
  template <typename T>
  [[nodiscard]] T last(unsigned long cmd) const {
    T arg{};
    for (const auto& c : calls) {
      if (c.cmd == cmd && c.bytes.size() == sizeof(T)) {
        std::memcpy(&arg, c.bytes.data(), sizeof(T));
      }
    }
    return arg;
  }
  [[nodiscard]] std::size_t count(unsigned long cmd) const {
    return static_cast<std::size_t>(
        std::count_if(calls.begin(), calls.end(), [cmd](const Call& c) { return c.cmd == cmd; }));
  }

  int ioctl(unsigned long cmd, void* arg) {
    std::lock_guard lock(ioctl_mutex_);
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
      case O2LND_IOC_BRW: {
        auto* b = static_cast<o2lnd_ioc_brw*>(arg);
        if (hdr->abi_version != O2LND_ABI_VERSION) {
          return EPROTO;
        }
        if (hdr->size != sizeof(*b) || hdr->flags != 0 || hdr->reserved != 0 || b->pad != 0 ||
            (b->op != O2LND_BRW_WRITE && b->op != O2LND_BRW_READ) || b->size > O2LND_BRW_MAX_SIZE ||
            (b->flags & ~std::uint32_t{O2LND_BRW_F_CHECK}) != 0 ||
            b->timeout_ms > O2LND_PING_TIMEOUT_MAX_MS) {
          return EINVAL;
        }
        return on_brw(*b);
      }
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
        break;
    }
    if (cmd != O2LND_IOC_PEER_SHOW && cmd != O2LND_IOC_CONN_SHOW && cmd != O2LND_IOC_PEER_CLOSE &&
        cmd != O2LND_IOC_FAULT_ADD && cmd != O2LND_IOC_FAULT_DEL && cmd != O2LND_IOC_FAULT_LIST &&
        cmd != O2LND_IOC_ROUTE_SHOW && cmd != O2LND_IOC_ROUTING_SHOW) {
      return ENOTTY;
    }
    if (auto it = fail.find(cmd); it != fail.end()) {
      return it->second;
    }
    if (hdr->abi_version != O2LND_ABI_VERSION) {
      return EPROTO;
    }
    if (hdr->size != _IOC_SIZE(cmd) || hdr->flags != 0 || hdr->reserved != 0) {
      return EINVAL;
    }
    switch (cmd) {
      case O2LND_IOC_PEER_SHOW:
        return show(*static_cast<o2lnd_ioc_peer*>(arg), peers);
      case O2LND_IOC_CONN_SHOW:
        return show(*static_cast<o2lnd_ioc_conn*>(arg), conns);
      case O2LND_IOC_PEER_CLOSE:
        return peer_close(*static_cast<o2lnd_ioc_peer_close*>(arg));
      case O2LND_IOC_FAULT_ADD:
        return fault_add(*static_cast<o2lnd_ioc_fault*>(arg));
      case O2LND_IOC_FAULT_DEL:
        return fault_del(*static_cast<o2lnd_ioc_fault*>(arg));
      case O2LND_IOC_ROUTE_SHOW:
        return route_show(*static_cast<o2lnd_ioc_route*>(arg));
      case O2LND_IOC_ROUTING_SHOW: {
        auto* r = static_cast<o2lnd_ioc_routing*>(arg);
        *r = routing;
        r->hdr = *hdr;
        return 0;
      }
      default:
        return fault_list(*static_cast<o2lnd_ioc_fault*>(arg));
    }
  }

 private:
  std::mutex ioctl_mutex_;

  template <typename T>
  static int show(T& a, const std::map<std::uint32_t, std::vector<T>>& table) {
    auto it = table.find(a.ni_index);
    if (a.ni_index == 0 || it == table.end() || a.index >= it->second.size()) {
      return ENOENT;
    }
    o2lnd_ioc_hdr hdr = a.hdr;
    std::uint32_t ni_index = a.ni_index;
    std::uint32_t index = a.index;
    a = it->second[index];
    a.hdr = hdr;
    a.ni_index = ni_index;
    a.index = index;
    a.count = static_cast<std::uint32_t>(it->second.size());
    return 0;
  }

  int route_show(o2lnd_ioc_route& a) {
    std::uint32_t index = a.index;
    if (index >= routes.size()) {
      return ENOENT;
    }
    o2lnd_ioc_hdr hdr = a.hdr;
    a = routes[index];
    a.hdr = hdr;
    a.index = index;
    a.count = static_cast<std::uint32_t>(routes.size());
    return 0;
  }

  int peer_close(o2lnd_ioc_peer_close& a) {
    if (a.pad != 0) {
      return EINVAL;
    }
    bool known = false;
    std::uint32_t closed = 0;
    for (auto& [ni_index, list] : peers) {
      if (ni_index >= nis.size() ||
          (a.local_nid != O2LND_NID_ANY && nis[ni_index].nid != a.local_nid)) {
        continue;
      }
      known = known || std::any_of(list.begin(), list.end(),
                                   [&](const o2lnd_ioc_peer& p) { return p.nid == a.nid; });
      auto& cl = conns[ni_index];
      auto n = std::erase_if(cl, [&](const o2lnd_ioc_conn& c) { return c.peer_nid == a.nid; });
      closed += static_cast<std::uint32_t>(n);
    }
    if (!known) {
      return ENOENT;
    }
    a.closed = closed;
    return 0;
  }

  static bool fault_arg_ok(std::uint32_t kind, std::uint32_t arg) {
    switch (kind) {
      case O2LND_FAULT_CM_DROP:
      case O2LND_FAULT_CM_DELAY:
        return arg < O2LND_CM_NEVENTS;
      case O2LND_FAULT_STALL:
        return arg >= O2LND_PHASE_ADDR && arg <= O2LND_PHASE_CONNECT;
      case O2LND_FAULT_REJECT:
        return arg >= 1 && arg <= O2LND_REJECT_MAX;
      case O2LND_FAULT_MSG_DROP:
      case O2LND_FAULT_MSG_CORRUPT:
        return arg == 0 || (arg >= 0xd0 && arg <= 0xd7);
      default:
        return arg == 0;
    }
  }

  int fault_add(o2lnd_ioc_fault& a) {
    bool delay = a.kind == O2LND_FAULT_CM_DELAY || a.kind == O2LND_FAULT_SEND_DELAY;
    if (a.id != 0 || a.index != 0 || a.count_rules != 0 || a.fired != 0 || a.pad != 0 ||
        a.kind < 1 || a.kind > O2LND_FAULT_MAX || !fault_arg_ok(a.kind, a.arg) ||
        a.probability < 1 || a.probability > O2LND_FAULT_PROB_ALWAYS ||
        (delay && (a.delay_ms < 1 || a.delay_ms > O2LND_FAULT_MAX_DELAY_MS)) ||
        (!delay && a.delay_ms != 0)) {
      return EINVAL;
    }
    if (faults.size() >= O2LND_FAULT_MAX_RULES) {
      return ENOSPC;
    }
    a.id = next_fault_id++;
    faults.push_back(a);
    return 0;
  }

  int fault_del(o2lnd_ioc_fault& a) {
    if (a.id == 0) {
      faults.clear();
      return 0;
    }
    auto n = std::erase_if(faults, [&](const o2lnd_ioc_fault& f) { return f.id == a.id; });
    return n == 0 ? ENOENT : 0;
  }

  int fault_list(o2lnd_ioc_fault& a) {
    if (a.index >= faults.size()) {
      return ENOENT;
    }
    o2lnd_ioc_hdr hdr = a.hdr;
    std::uint32_t index = a.index;
    a = faults[index];
    a.hdr = hdr;
    a.index = index;
    a.count_rules = static_cast<std::uint32_t>(faults.size());
    return 0;
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

// A peer as the module would report it.
inline o2lnd_ioc_peer make_peer(std::uint64_t nid, std::uint32_t state) {
  o2lnd_ioc_peer p{};
  p.nid = nid;
  p.state = state;
  return p;
}

// A route as the module would report it.
inline o2lnd_ioc_route make_route(std::uint32_t net, std::uint64_t gateway,
                                  std::uint32_t health = O2LND_HEALTH_UP) {
  o2lnd_ioc_route r{};
  r.net = net;
  r.hops = 1;
  r.gateway = gateway;
  r.gw_health = health;
  return r;
}

// The router state of an idle node that does not forward: pools full, as
// the module would report it.
inline o2lnd_ioc_routing make_routing(bool forwarding) {
  o2lnd_ioc_routing r{};
  r.forwarding = forwarding ? 1 : 0;
  r.peer_buffer_credits = 8;
  r.router_timeout_s = 50;
  const std::uint32_t sizes[] = {0, 4096, 1U << 20};  // NOLINT(*-avoid-c-arrays)
  const std::uint32_t counts[] = {512, 256, 32};      // NOLINT(*-avoid-c-arrays)
  for (std::uint32_t i = 0; i < O2LND_RTR_NPOOLS; ++i) {
    r.pools[i].nbuffers = counts[i];                            // NOLINT(*-constant-array-index)
    r.pools[i].buffer_size = sizes[i];                          // NOLINT(*-constant-array-index)
    r.pools[i].credits = static_cast<std::int32_t>(counts[i]);  // NOLINT
    r.pools[i].min_credits = static_cast<std::int32_t>(counts[i]);  // NOLINT
  }
  return r;
}

// A connection as the module would report it.
inline o2lnd_ioc_conn make_conn(std::uint64_t peer_nid, std::uint32_t state) {
  o2lnd_ioc_conn c{};
  c.peer_nid = peer_nid;
  c.state = state;
  return c;
}

}  // namespace o2lnd::testing
