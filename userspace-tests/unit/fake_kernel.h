// A fake o2lnd module behind o2lnd::Backend: answers VERSION, PING, BRW,
// NET_SHOW, PEER_SHOW, CONN_SHOW, PEER_CLOSE, FAULT_ADD/DEL/LIST,
// ROUTE_SHOW, ROUTING_SHOW, LPEER_SHOW, DISCOVER, NET_ADD and NET_DEL from
// state the test sets, applies the rules of include/uapi/o2lnd.h like the
// module does (dispatch on type and nr; hdr.size at least the VER0 size, a
// multiple of 8, at most O2LND_IOC_MAX_SIZE; an older struct zero-extended,
// a newer one's unknown tail 0 or E2BIG; abi_version in
// [abi_min, abi_max]; min(user, fake) bytes written back), and records
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
#include <optional>
#include <string>
#include <vector>

#include "o2lnd/backend.h"
#include "o2lnd/uapi.h"

namespace o2lnd::testing {

struct FakeKernel {
  struct Call {
    unsigned long cmd;  // the canonical O2LND_IOC_* of its nr (or as passed when unknown)
    o2lnd_ioc_hdr hdr;
    std::vector<unsigned char> bytes;  // the whole argument as passed in (hdr.size bytes)
    // What the command saw: the argument zero-extended (or cut) to the fake's size.
    std::vector<unsigned char> seen;
  };

  // VERSION reports abi and abi_min; the other commands accept callers of
  // abi_min..abi (the module's O2LND_ABI_VERSION_MIN..O2LND_ABI_VERSION).
  std::uint32_t abi = O2LND_ABI_VERSION;
  std::uint32_t abi_min = O2LND_ABI_VERSION_MIN;
  // Play a module of ABI 5: VERSION only at its VER0 size (else EINVAL),
  // its reply without abi_version_min.
  bool abi5_version = false;
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
  // LPEER_SHOW: lpeers[index] (nid NID_ANY), or the one listing nid;
  // ENOENT past the end / when none does.  DISCOVER: on_discover after the
  // module's argument checks (EINVAL before it).
  std::vector<o2lnd_ioc_lpeer> lpeers;
  std::function<int(o2lnd_ioc_lpeer&)> on_discover = [](o2lnd_ioc_lpeer&) { return EHOSTUNREACH; };
  // NET_ADD / NET_DEL: called after the module's argument checks (EINVAL
  // before it), with add true for NET_ADD.
  std::function<int(o2lnd_ioc_net_cfg&, bool)> on_net_cfg = [](o2lnd_ioc_net_cfg&, bool) {
    return ENOENT;
  };
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

  // The command of `nr` and its {VER0 size, size}; nullopt when unknown.
  struct Cmd {
    unsigned long cmd;
    std::uint32_t min_size;
    std::uint32_t size;
  };
  static std::optional<Cmd> command(unsigned long cmd) {
    if (_IOC_TYPE(cmd) != O2LND_IOC_MAGIC) {
      return std::nullopt;
    }
    for (Cmd c :
         {Cmd{O2LND_IOC_VERSION, O2LND_IOC_VERSION_SIZE_VER0, sizeof(o2lnd_ioc_version)},
          Cmd{O2LND_IOC_PING, O2LND_IOC_PING_SIZE_VER0, sizeof(o2lnd_ioc_ping)},
          Cmd{O2LND_IOC_NET_SHOW, O2LND_IOC_NET_SIZE_VER0, sizeof(o2lnd_ioc_net)},
          Cmd{O2LND_IOC_PEER_SHOW, O2LND_IOC_PEER_SIZE_VER0, sizeof(o2lnd_ioc_peer)},
          Cmd{O2LND_IOC_CONN_SHOW, O2LND_IOC_CONN_SIZE_VER0, sizeof(o2lnd_ioc_conn)},
          Cmd{O2LND_IOC_PEER_CLOSE, O2LND_IOC_PEER_CLOSE_SIZE_VER0, sizeof(o2lnd_ioc_peer_close)},
          Cmd{O2LND_IOC_FAULT_ADD, O2LND_IOC_FAULT_SIZE_VER0, sizeof(o2lnd_ioc_fault)},
          Cmd{O2LND_IOC_FAULT_DEL, O2LND_IOC_FAULT_SIZE_VER0, sizeof(o2lnd_ioc_fault)},
          Cmd{O2LND_IOC_FAULT_LIST, O2LND_IOC_FAULT_SIZE_VER0, sizeof(o2lnd_ioc_fault)},
          Cmd{O2LND_IOC_BRW, O2LND_IOC_BRW_SIZE_VER0, sizeof(o2lnd_ioc_brw)},
          Cmd{O2LND_IOC_ROUTE_SHOW, O2LND_IOC_ROUTE_SIZE_VER0, sizeof(o2lnd_ioc_route)},
          Cmd{O2LND_IOC_ROUTING_SHOW, O2LND_IOC_ROUTING_SIZE_VER0, sizeof(o2lnd_ioc_routing)},
          Cmd{O2LND_IOC_LPEER_SHOW, O2LND_IOC_LPEER_SIZE_VER0, sizeof(o2lnd_ioc_lpeer)},
          Cmd{O2LND_IOC_DISCOVER, O2LND_IOC_LPEER_SIZE_VER0, sizeof(o2lnd_ioc_lpeer)},
          Cmd{O2LND_IOC_NET_ADD, O2LND_IOC_NET_CFG_SIZE_VER0, sizeof(o2lnd_ioc_net_cfg)},
          Cmd{O2LND_IOC_NET_DEL, O2LND_IOC_NET_CFG_SIZE_VER0, sizeof(o2lnd_ioc_net_cfg)}}) {
      if (_IOC_NR(c.cmd) == _IOC_NR(cmd)) {
        return c;
      }
    }
    return std::nullopt;
  }

  int ioctl(unsigned long raw_cmd, void* arg) {
    std::lock_guard lock(ioctl_mutex_);
    const auto* p = static_cast<const unsigned char*>(arg);
    o2lnd_ioc_hdr uhdr{};
    std::memcpy(&uhdr, p, sizeof(uhdr));
    auto c = command(raw_cmd);
    Call call{c ? c->cmd : raw_cmd, uhdr, {}, {}};
    bool size_ok =
        c && uhdr.size >= c->min_size && uhdr.size % 8 == 0 && uhdr.size <= O2LND_IOC_MAX_SIZE;
    call.bytes.assign(p, p + (size_ok ? uhdr.size : sizeof(uhdr)));
    if (!c) {
      calls.push_back(call);
      return ENOTTY;
    }
    if (auto it = fail.find(c->cmd); it != fail.end() && c->cmd != O2LND_IOC_VERSION) {
      calls.push_back(call);
      return it->second;
    }
    if (!size_ok ||
        (abi5_version && c->cmd == O2LND_IOC_VERSION && uhdr.size != O2LND_IOC_VERSION_SIZE_VER0)) {
      calls.push_back(call);
      return uhdr.size > O2LND_IOC_MAX_SIZE && uhdr.size % 8 == 0 && uhdr.size >= c->min_size
                 ? E2BIG
                 : EINVAL;
    }
    // copy_struct_from_user(): zero-extend, or the unknown tail must be 0.
    std::vector<unsigned char> k(c->size, 0);
    std::memcpy(k.data(), p, std::min<std::size_t>(uhdr.size, c->size));
    if (c->cmd != O2LND_IOC_VERSION && uhdr.size > c->size &&
        !std::all_of(p + c->size, p + uhdr.size, [](unsigned char b) { return b == 0; })) {
      calls.push_back(call);
      return E2BIG;
    }
    call.seen = k;
    calls.push_back(call);
    if (c->cmd != O2LND_IOC_VERSION && (uhdr.abi_version < abi_min || uhdr.abi_version > abi)) {
      return EPROTO;
    }
    if (c->cmd != O2LND_IOC_VERSION && (uhdr.flags != 0 || uhdr.reserved != 0)) {
      return EINVAL;
    }
    int rc = serve(c->cmd, k.data());
    if (rc == 0) {
      auto out = static_cast<std::uint32_t>(std::min<std::size_t>(uhdr.size, c->size));
      if (abi5_version && c->cmd == O2LND_IOC_VERSION) {
        out = O2LND_IOC_VERSION_SIZE_VER0;
      }
      auto* h = reinterpret_cast<o2lnd_ioc_hdr*>(k.data());  // NOLINT(*-reinterpret-cast)
      h->abi_version = abi;
      h->size = out;
      h->flags = 0;
      h->reserved = 0;
      std::memcpy(arg, k.data(), out);
    }
    return rc;
  }

 private:
  // One command on the checked, zero-extended copy `arg` (the fake's size).
  int serve(unsigned long cmd, void* arg) {
    auto* hdr = static_cast<o2lnd_ioc_hdr*>(arg);
    switch (cmd) {
      case O2LND_IOC_VERSION: {
        if (version_err != 0) {
          return version_err;
        }
        auto* v = static_cast<o2lnd_ioc_version*>(arg);
        v->abi_version = abi;
        v->abi_version_min = abi5_version ? 0 : abi_min;
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
        if (b->pad != 0 || b->pad2 != 0 || (b->op != O2LND_BRW_WRITE && b->op != O2LND_BRW_READ) ||
            b->size > O2LND_BRW_MAX_SIZE ||
            (b->flags & ~std::uint32_t{O2LND_BRW_F_CHECK | O2LND_BRW_F_ACK}) != 0 ||
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
    switch (cmd) {
      case O2LND_IOC_PEER_SHOW:
        return show(*static_cast<o2lnd_ioc_peer*>(arg), peers);
      case O2LND_IOC_CONN_SHOW:
        return show(*static_cast<o2lnd_ioc_conn*>(arg), conns);
      case O2LND_IOC_PEER_CLOSE:
        return peer_close(*static_cast<o2lnd_ioc_peer_close*>(arg));
      case O2LND_IOC_NET_ADD:
      case O2LND_IOC_NET_DEL: {
        auto* c = static_cast<o2lnd_ioc_net_cfg*>(arg);
        if (c->pad != 0 || std::memchr(c->net, 0, sizeof(c->net)) == nullptr ||
            std::memchr(c->ifname, 0, sizeof(c->ifname)) == nullptr) {
          return EINVAL;
        }
        c->nid = 0;
        c->count = 0;
        return on_net_cfg(*c, cmd == O2LND_IOC_NET_ADD);
      }
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
      case O2LND_IOC_LPEER_SHOW:
        return lpeer_show(*static_cast<o2lnd_ioc_lpeer*>(arg));
      case O2LND_IOC_DISCOVER: {
        auto* d = static_cast<o2lnd_ioc_lpeer*>(arg);
        if (d->index != 0 || d->pad != 0 || d->nid == O2LND_NID_ANY ||
            (d->nid >> 48) != O2LND_NET_TYPE_O2IB || d->timeout_ms > O2LND_PING_TIMEOUT_MAX_MS) {
          return EINVAL;
        }
        return on_discover(*d);
      }
      default:
        return fault_list(*static_cast<o2lnd_ioc_fault*>(arg));
    }
  }

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

  int lpeer_show(o2lnd_ioc_lpeer& a) {
    if (a.timeout_ms != 0 || a.pad != 0) {
      return EINVAL;
    }
    const o2lnd_ioc_lpeer* found = nullptr;
    if (a.nid == O2LND_NID_ANY) {
      found = a.index < lpeers.size() ? &lpeers[a.index] : nullptr;
    } else {
      for (const auto& p : lpeers) {
        for (std::uint32_t i = 0; i < std::min<std::uint32_t>(p.n_nids, O2LND_PEER_MAX_NIDS); ++i) {
          if (p.nids[i].nid == a.nid && found == nullptr) {
            found = &p;
          }
        }
      }
    }
    if (found == nullptr) {
      return ENOENT;
    }
    o2lnd_ioc_hdr hdr = a.hdr;
    const std::uint32_t index = a.index;
    const std::uint64_t nid = a.nid;
    a = *found;
    a.hdr = hdr;
    a.index = index;
    a.nid = nid;
    a.count = static_cast<std::uint32_t>(lpeers.size());
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
      case O2LND_FAULT_POST_FAIL:
        return arg <= O2LND_FAULT_POST_FAIL_MAX_ARG;
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
