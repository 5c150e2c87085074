// o2lnd_ioctl_fuzz: a seeded, reproducible fuzzer of the /dev/o2lnd ioctl
// ABI, run inside a test-bed guest with the module loaded.
//
// Every iteration picks a command (a valid one, a neighbour of one with
// another size / direction / magic / number, or a random number), a
// pointer (a good buffer, misaligned, NULL, unmapped, kernel addresses,
// non-canonical, a struct straddling an unmapped page, a read-only page)
// and field values (a valid template mutated towards edges: 0, 1, max,
// wrong ABI, nonzero flags / reserved / pads).  Oracles:
//   - the errno of a refused call is one the command may legitimately
//     return, and the exact one where the rules of include/uapi/o2lnd.h
//     decide it (bad pointer: EFAULT; header: EINVAL / EPROTO; unknown
//     command: ENOTTY; no CAP_NET_ADMIN: EPERM);
//   - a refused call leaves every byte of the user buffer (and 64 guard
//     bytes either side) as it was;
//   - a successful reply has the right header, zero pads and reserved
//     slots, NUL-padded strings, echoed inputs, and no 64-bit word that
//     looks like a kernel pointer; guard bytes are untouched;
//   - a refused call changes neither the fault rules nor the peer lists.
// Safety: fault rules and PEER_CLOSE only ever name 192.0.2.x (TEST-NET-1),
// which no real peer uses; rules that pass validation are deleted at once;
// pings that would go on the wire only go to --peer-nid or our own NIDs.
//
// Usage: o2lnd_ioctl_fuzz [--seed=N] [--iterations=N] [--max-seconds=S]
//          [--peer-nid=NID] [--device=PATH] [--json=PATH] [--markdown=PATH]
// Exit: 0 no violation, 1 violations (listed), 2 setup problem.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "o2lnd/nid.h"
#include "o2lnd/uapi.h"

namespace {

using u32 = __u32;
using u64 = __u64;

constexpr unsigned char kFill = 0xa5;  // pattern of the user buffer
constexpr std::size_t kGuard = 64;     // guard bytes checked either side
constexpr u64 kO2ib0 = u64{O2LND_NET_TYPE_O2IB} << 48U;
constexpr u64 kTestNet = 0xc0000200ULL;  // 192.0.2.0/24
constexpr u64 kTcpNid = 0x00020000c0a80102ULL;
constexpr u64 kUnconfigured = (u64{(O2LND_NET_TYPE_O2IB << 16U) | 7U} << 32U) | 0x0a090909ULL;

// ---- commands ---------------------------------------------------------------

struct CmdInfo {
  unsigned long cmd;
  const char* name;
  std::size_t size;
  bool admin;  // needs CAP_NET_ADMIN
  std::vector<int> allowed;
  // Offsets of __u32 out fields whose documented value may be ~0 (e.g.
  // "~0 if never"): such a half is not part of a pointer-looking word.
  std::vector<std::size_t> all_ones_u32 = {};
  // Offsets of __s32 out fields that may be below 0 (credits, errnos): such
  // a half, when negative, is not part of a pointer-looking word either
  // (two of them side by side, e.g. credits -1 and min credits -3, make
  // 0xfffffffdffffffff).
  std::vector<std::size_t> negative_s32 = {};
};

// The credits and min credits of every router buffer pool.
std::vector<std::size_t> pool_credit_offsets() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < O2LND_RTR_NPOOLS; ++i) {
    const std::size_t pool = offsetof(o2lnd_ioc_routing, pools) + i * sizeof(o2lnd_rtr_pool);
    out.push_back(pool + offsetof(o2lnd_rtr_pool, credits));
    out.push_back(pool + offsetof(o2lnd_rtr_pool, min_credits));
  }
  return out;
}

const std::vector<CmdInfo>& commands() {
  static const std::vector<CmdInfo> v = {
      {O2LND_IOC_VERSION, "VERSION", sizeof(o2lnd_ioc_version), false, {EINVAL, E2BIG, EFAULT}},
      {O2LND_IOC_PING,
       "PING",
       sizeof(o2lnd_ioc_ping),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, EHOSTUNREACH, ETIMEDOUT, ENETDOWN, ECONNREFUSED}},
      {O2LND_IOC_BRW,
       "BRW",
       sizeof(o2lnd_ioc_brw),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, EHOSTUNREACH, ETIMEDOUT, ENETDOWN, ECONNREFUSED, EBADMSG,
        ENOMEM, ENOBUFS, ECONNABORTED, ECONNRESET, EIO}},
      {O2LND_IOC_NET_SHOW,
       "NET_SHOW",
       sizeof(o2lnd_ioc_net),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, ENOENT},
       {},
       {offsetof(o2lnd_ioc_net, tx_credits), offsetof(o2lnd_ioc_net, tx_credits_min)}},
      {O2LND_IOC_PEER_SHOW,
       "PEER_SHOW",
       sizeof(o2lnd_ioc_peer),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, ENOENT},
       {offsetof(o2lnd_ioc_peer, alive_ms)},
       {offsetof(o2lnd_ioc_peer, last_error), offsetof(o2lnd_ioc_peer, tx_credits),
        offsetof(o2lnd_ioc_peer, tx_credits_min), offsetof(o2lnd_ioc_peer, rtr_credits),
        offsetof(o2lnd_ioc_peer, rtr_credits_min)}},
      {O2LND_IOC_CONN_SHOW,
       "CONN_SHOW",
       sizeof(o2lnd_ioc_conn),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, ENOENT},
       {},
       {offsetof(o2lnd_ioc_conn, credits), offsetof(o2lnd_ioc_conn, outstanding),
        offsetof(o2lnd_ioc_conn, error), offsetof(o2lnd_ioc_conn, reserved_credits)}},
      {O2LND_IOC_ROUTE_SHOW,
       "ROUTE_SHOW",
       sizeof(o2lnd_ioc_route),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
      {O2LND_IOC_ROUTING_SHOW,
       "ROUTING_SHOW",
       sizeof(o2lnd_ioc_routing),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO},
       {},
       pool_credit_offsets()},
      {O2LND_IOC_LPEER_SHOW,
       "LPEER_SHOW",
       sizeof(o2lnd_ioc_lpeer),
       false,
       {EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
      {O2LND_IOC_PEER_CLOSE,
       "PEER_CLOSE",
       sizeof(o2lnd_ioc_peer_close),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
      // Only names that exist nowhere: a fuzzed call never adds or deletes.
      {O2LND_IOC_NET_ADD,
       "NET_ADD",
       sizeof(o2lnd_ioc_net_cfg),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENODEV, EADDRNOTAVAIL}},
      {O2LND_IOC_NET_DEL,
       "NET_DEL",
       sizeof(o2lnd_ioc_net_cfg),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
      {O2LND_IOC_FAULT_ADD,
       "FAULT_ADD",
       sizeof(o2lnd_ioc_fault),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENOSPC}},
      {O2LND_IOC_FAULT_DEL,
       "FAULT_DEL",
       sizeof(o2lnd_ioc_fault),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
      {O2LND_IOC_FAULT_LIST,
       "FAULT_LIST",
       sizeof(o2lnd_ioc_fault),
       true,
       {EPERM, EINVAL, E2BIG, EFAULT, EPROTO, ENOENT}},
  };
  return v;
}

// ABI 6: the module dispatches on the type and number only.
const CmdInfo* find_cmd(unsigned long cmd) {
  for (const auto& c : commands()) {
    if (_IOC_TYPE(c.cmd) == _IOC_TYPE(cmd) && _IOC_NR(c.cmd) == _IOC_NR(cmd)) {
      return &c;
    }
  }
  return nullptr;
}

// The first published size of a command's struct: the smallest hdr.size.
u32 ver0_size(const CmdInfo& c) {
  switch (c.cmd) {
    case O2LND_IOC_VERSION:
      return O2LND_IOC_VERSION_SIZE_VER0;
    case O2LND_IOC_PING:
      return O2LND_IOC_PING_SIZE_VER0;
    case O2LND_IOC_BRW:
      return O2LND_IOC_BRW_SIZE_VER0;
    case O2LND_IOC_NET_SHOW:
      return O2LND_IOC_NET_SIZE_VER0;
    case O2LND_IOC_PEER_SHOW:
      return O2LND_IOC_PEER_SIZE_VER0;
    case O2LND_IOC_CONN_SHOW:
      return O2LND_IOC_CONN_SIZE_VER0;
    case O2LND_IOC_ROUTE_SHOW:
      return O2LND_IOC_ROUTE_SIZE_VER0;
    case O2LND_IOC_ROUTING_SHOW:
      return O2LND_IOC_ROUTING_SIZE_VER0;
    case O2LND_IOC_PEER_CLOSE:
      return O2LND_IOC_PEER_CLOSE_SIZE_VER0;
    case O2LND_IOC_NET_ADD:
    case O2LND_IOC_NET_DEL:
      return O2LND_IOC_NET_CFG_SIZE_VER0;
    case O2LND_IOC_LPEER_SHOW:
      return O2LND_IOC_LPEER_SIZE_VER0;
    default:
      return O2LND_IOC_FAULT_SIZE_VER0;
  }
}

// Generic ioctls the VFS answers before the driver sees them: never used as
// "random" numbers (their answers are not o2lnd's).
bool vfs_generic(unsigned long cmd) {
  const unsigned type = _IOC_TYPE(cmd);
  return type == 'T' || type == 'X' || type == 'f' || type == 0x94 || type == 0x15;
}

std::string errno_sym(int err) {
  if (err == 0) {
    return "ok";
  }
  const char* s = ::strerrorname_np(err);
  return s != nullptr ? s : "E" + std::to_string(err);
}

// ---- the run ---------------------------------------------------------------

struct Options {
  u64 seed = 0;
  bool seed_given = false;
  long iterations = 5000;
  double max_seconds = 60;
  std::string device = "/dev/o2lnd";
  std::string json;
  std::string markdown;
  u64 peer_nid = 0;  // 0: none
};

enum class Ptr {
  kGood,
  kMisaligned,
  kReadOnly,
  kStraddle,
  kNull,
  kUnmapped,
  kKernelDirectMap,
  kKernelText,
  kNonCanonical,
  kLowAddress,
  kAllOnes,
};
constexpr std::array<const char*, 11> kPtrNames = {"good",
                                                   "misaligned",
                                                   "read_only",
                                                   "straddle_unmapped",
                                                   "null",
                                                   "unmapped",
                                                   "kernel_0xffff888000000000",
                                                   "kernel_0xffffffff81000000",
                                                   "non_canonical",
                                                   "low_0x1000",
                                                   "all_ones"};

struct State {
  std::set<std::pair<u32, u64>> peers;                     // (NI index, peer NID)
  std::vector<std::tuple<u32, u32, u64, u64, u32>> rules;  // id, kind, peer, local, arg
  bool operator==(const State&) const = default;
};

class Fuzzer {
 public:
  explicit Fuzzer(Options o) : o_(std::move(o)), rng_(o_.seed) {}

  int run();

 private:
  // helpers
  u64 r64() { return rng_(); }
  u32 below(u32 n) { return n == 0 ? 0 : static_cast<u32>(rng_() % n); }
  bool chance(u32 percent) { return below(100) < percent; }
  template <typename T>
  T pick(const std::vector<T>& v) {
    return v[below(static_cast<u32>(v.size()))];
  }
  u32 edge32(u32 lo, u32 hi);
  u64 any_nid();
  u64 testnet_nid() { return kO2ib0 | kTestNet | (1U + below(254)); }
  void mutate_header(o2lnd_ioc_hdr& h, std::size_t size, std::string& what);

  int sys(unsigned long cmd, void* arg) const {
    return ::ioctl(fd_, cmd, arg) == 0 ? 0 : errno;  // NOLINT(*-vararg)
  }
  bool setup();
  State snapshot();
  void violation(const std::string& what);
  void count(const std::string& cat, const std::string& row, const std::string& outcome) {
    counts_[cat][row][outcome]++;
  }

  // argument generators: fill `arg` (the struct of `c`), return a label
  void gen_arg(const CmdInfo& c, std::vector<unsigned char>& arg, std::string& what);
  void check_reply(const CmdInfo& c, const std::vector<unsigned char>& in, const unsigned char* out,
                   const std::string& ctx);
  void one(long iter);
  void full_table_phase();
  [[nodiscard]] bool admin_ok(const o2lnd_ioc_fault& f) const;
  [[nodiscard]] std::string json() const;
  [[nodiscard]] std::string markdown() const;

  Options o_;
  std::mt19937_64 rng_;
  int fd_ = -1;
  bool privileged_ = false;
  long page_ = 4096;
  unsigned char* map_ = nullptr;  // 4 pages: RW, RW, none, read-only
  std::vector<u64> own_nids_;
  u32 nnis_ = 0;
  u32 nroutes_ = 0;  // ROUTE_SHOW's count at setup
  // category -> row -> outcome ("ok" or the errno's name) -> calls
  std::map<std::string, std::map<std::string, std::map<std::string, long>>> counts_;
  std::vector<std::string> violations_;
  long violation_count_ = 0;
  long done_ = 0;
  long buffers_checked_ = 0, replies_checked_ = 0, state_checks_ = 0, rules_added_ = 0;
  double seconds_ = 0;
  bool full_phase_done_ = false;
};

u32 Fuzzer::edge32(u32 lo, u32 hi) {
  switch (below(10)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return lo == 0 ? 0 : lo - 1;
    case 3:
      return lo;
    case 4:
      return hi;
    case 5:
      return hi + 1;
    case 6:
      return 0xffffffffU;
    case 7:
      return pick<u32>({0x7fffffffU, 0x80000000U, 0xffffU, 0x10000U, 0x100U});
    case 8:
      return static_cast<u32>(r64());
    default:
      return lo + below(hi - lo + 1);
  }
}

u64 Fuzzer::any_nid() {
  switch (below(11)) {
    case 0:
      return O2LND_NID_ANY;
    case 1:
      return 0;
    case 2:
      return O2LND_LO_NID;
    case 3:
      return kTcpNid;
    case 4:
      return testnet_nid();
    case 5:
      return o_.peer_nid != 0 ? o_.peer_nid : testnet_nid();
    case 6:
      return own_nids_.empty() ? testnet_nid() : pick(own_nids_);
    case 7:
      return kUnconfigured;
    case 8:
      return pick<u64>({0xffff888000000000ULL, 0xffffffff81000000ULL, 0x8000000000000000ULL});
    case 9:
      return kO2ib0 | static_cast<u32>(r64());  // any address on o2ib0: sanitized below
    default:
      return r64();
  }
}

void Fuzzer::mutate_header(o2lnd_ioc_hdr& h, std::size_t size, std::string& what) {
  h.abi_version = O2LND_ABI_VERSION;
  h.size = static_cast<u32>(size);
  h.flags = 0;
  h.reserved = 0;
  if (chance(10)) {
    h.abi_version = pick<u32>({0, 1, O2LND_ABI_VERSION_MIN - 1, O2LND_ABI_VERSION_MIN,
                               O2LND_ABI_VERSION + 1, 0xffffffffU, static_cast<u32>(r64())});
    what += " abi";
  }
  if (chance(10)) {
    const auto s = static_cast<u32>(size);
    h.size = pick<u32>({0, s - 1, s + 1, s - 8, s + 8, sizeof(o2lnd_ioc_hdr), 0xffffffffU,
                        static_cast<u32>(r64())});
    what += h.size == size ? "" : " size";
  }
  if (chance(8)) {
    h.flags = pick<u32>({1, 0x80000000U, 0xffffffffU, static_cast<u32>(r64()) | 1U});
    what += " flags";
  }
  if (chance(8)) {
    h.reserved = pick<u32>({1, 0x80000000U, 0xffffffffU, static_cast<u32>(r64()) | 1U});
    what += " reserved";
  }
}

bool Fuzzer::setup() {
  fd_ = ::open(o_.device.c_str(), O_RDWR | O_CLOEXEC);  // NOLINT(*-vararg)
  if (fd_ < 0) {
    std::cerr << "o2lnd_ioctl_fuzz: cannot open " << o_.device << ": " << std::strerror(errno)
              << "\n";
    return false;
  }
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, 2> data{};
  if (::syscall(SYS_capget, &hdr, data.data()) == 0) {  // NOLINT(*-vararg)
    privileged_ = (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
  }
  page_ = ::sysconf(_SC_PAGESIZE);
  void* m = ::mmap(nullptr, 4 * static_cast<std::size_t>(page_), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    return false;
  }
  map_ = static_cast<unsigned char*>(m);
  ::mprotect(map_ + 2 * page_, page_, PROT_NONE);  // NOLINT(*-pointer-arithmetic)
  ::mprotect(map_ + 3 * page_, page_, PROT_READ);  // NOLINT(*-pointer-arithmetic)
  auto n = o2lnd_ioc_net{};
  n.hdr = {O2LND_ABI_VERSION, sizeof(n), 0, 0};
  if (sys(O2LND_IOC_NET_SHOW, &n) != 0) {
    std::cerr << "o2lnd_ioctl_fuzz: NET_SHOW 0 failed: " << std::strerror(errno) << "\n";
    return false;
  }
  nnis_ = n.count;
  for (u32 i = 1; i < nnis_; ++i) {
    n = {};
    n.hdr = {O2LND_ABI_VERSION, sizeof(n), 0, 0};
    n.index = i;
    if (sys(O2LND_IOC_NET_SHOW, &n) == 0) {
      own_nids_.push_back(n.nid);
    }
  }
  auto rt = o2lnd_ioc_route{};
  rt.hdr = {O2LND_ABI_VERSION, sizeof(rt), 0, 0};
  if (sys(O2LND_IOC_ROUTE_SHOW, &rt) == 0) {
    nroutes_ = rt.count;
  }
  if (privileged_ && !snapshot().rules.empty()) {
    std::cerr << "o2lnd_ioctl_fuzz: fault rules exist; run with none (it deletes 'all')\n";
    return false;
  }
  return true;
}

State Fuzzer::snapshot() {
  State s;
  for (u32 ni = 1; ni < nnis_; ++ni) {
    for (u32 i = 0; i < 4096; ++i) {
      o2lnd_ioc_peer p{};
      p.hdr = {O2LND_ABI_VERSION, sizeof(p), 0, 0};
      p.ni_index = ni;
      p.index = i;
      if (sys(O2LND_IOC_PEER_SHOW, &p) != 0) {
        break;
      }
      s.peers.emplace(ni, p.nid);
    }
  }
  if (!privileged_) {
    return s;
  }
  for (u32 i = 0; i < 4096; ++i) {
    o2lnd_ioc_fault f{};
    f.hdr = {O2LND_ABI_VERSION, sizeof(f), 0, 0};
    f.index = i;
    if (sys(O2LND_IOC_FAULT_LIST, &f) != 0) {
      break;
    }
    s.rules.emplace_back(f.id, f.kind, f.peer_nid, f.local_nid, f.arg);
  }
  return s;
}

void Fuzzer::violation(const std::string& what) {
  violation_count_++;
  if (violations_.size() < 50) {
    violations_.push_back(what);
  }
  std::cerr << "VIOLATION: " << what << "\n";
}

// A rule that names no real NI or peer: one of its NIDs is 192.0.2.x.
bool Fuzzer::admin_ok(const o2lnd_ioc_fault& f) const {
  auto testnet = [](u64 nid) {
    return nid != O2LND_NID_ANY && (nid >> 48U) == O2LND_NET_TYPE_O2IB &&
           (nid & 0xffffff00ULL) == kTestNet;
  };
  return testnet(f.peer_nid) || testnet(f.local_nid);
}

void Fuzzer::gen_arg(const CmdInfo& c, std::vector<unsigned char>& arg, std::string& what) {
  // Fields are mutated towards edges with these odds (percent).
  constexpr u32 kMut = 15;
  auto hdr_of = [&]<typename T>(T& a) { mutate_header(a.hdr, sizeof(T), what); };
  auto put = [&]<typename T>(const T& a) { std::memcpy(arg.data(), &a, sizeof(T)); };
  auto nid_field = [&](u64& f, u64 def) {
    f = def;
    if (chance(kMut)) {
      f = any_nid();
      what += " nid";
    }
  };
  auto u32_field = [&](u32& f, u32 def, u32 lo, u32 hi, const char* name) {
    f = def;
    if (chance(kMut)) {
      f = edge32(lo, hi);
      what += std::string(" ") + name;
    }
  };
  auto pad_field = [&](u32& f, const char* name) {
    f = 0;
    if (chance(10)) {
      f = pick<u32>({1, 0x80000000U, 0xffffffffU});
      what += std::string(" ") + name;
    }
  };
  const u64 peer = o_.peer_nid != 0 ? o_.peer_nid : (own_nids_.empty() ? 0 : own_nids_[0]);

  switch (c.cmd) {
    case O2LND_IOC_VERSION: {
      o2lnd_ioc_version a{};
      hdr_of(a);
      u32_field(a.abi_version, 0, 0, 3, "out_abi");
      pad_field(a.pad, "pad");
      if (chance(10)) {
        std::memset(a.module_version, 'x', sizeof(a.module_version));
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_PING: {
      o2lnd_ioc_ping a{};
      hdr_of(a);
      nid_field(a.nid, peer);
      nid_field(a.src_nid, O2LND_NID_ANY);
      u32_field(a.timeout_ms, 1000, 1, O2LND_PING_TIMEOUT_MAX_MS, "timeout");
      u32_field(a.max_ids, O2LND_PING_MAX_IDS, 1, O2LND_PING_MAX_IDS, "max_ids");
      u32_field(a.pid, 0, 0, 12345, "out_pid");
      u32_field(a.n_ids, 0, 0, 16, "out_n_ids");
      if (chance(10)) {
        a.rtt_ns = r64();
        a.ids[below(O2LND_PING_MAX_IDS)].pad = 1;
        what += " junk_out";
      }
      // A ping whose target is on a configured net may go on the wire: only
      // to the honest peer or our own NIDs, and never for long.  Whatever
      // the header says: the module also accepts older ABIs and sizes (a
      // ping sent with ABI 5 and a VER0 size is as real as a current one),
      // so this fuzzer does not guess which headers pass.
      const u32 timeout = a.timeout_ms == 0 ? O2LND_PING_TIMEOUT_DEFAULT_MS : a.timeout_ms;
      bool configured = false;
      for (u64 n : own_nids_) {
        configured = configured || (n >> 32U) == (a.nid >> 32U);
      }
      const bool honest = a.nid == o_.peer_nid ||
                          std::find(own_nids_.begin(), own_nids_.end(), a.nid) != own_nids_.end();
      if (configured && !honest) {
        a.nid = peer;
        what += " (target->peer)";
      }
      // (a timeout above the maximum stays: the module must refuse it)
      if (configured && timeout > 3000 && timeout <= O2LND_PING_TIMEOUT_MAX_MS) {
        a.timeout_ms = 3000;
      }
      put(a);
      break;
    }
    case O2LND_IOC_BRW: {
      o2lnd_ioc_brw a{};
      hdr_of(a);
      nid_field(a.nid, peer);
      nid_field(a.src_nid, O2LND_NID_ANY);
      u32_field(a.op, O2LND_BRW_READ, 0, 3, "op");
      u32_field(a.size, pick<u32>({0, 1, 3976, 3977, 65536}), 0, O2LND_BRW_MAX_SIZE + 1, "size");
      u32_field(a.timeout_ms, 1000, 1, O2LND_PING_TIMEOUT_MAX_MS, "timeout");
      u32_field(a.flags, O2LND_BRW_F_CHECK, 0, 0xffffffffU, "flags");
      pad_field(a.pad, "pad");
      pad_field(a.pad2, "pad2");
      a.seed = r64();
      if (chance(10)) {
        a.rtt_ns = r64();
        a.rdma = 7;
        a.messages = 9;
        what += " junk_out";
      }
      // As for PING: only the honest peer or our own NIDs, never for long.
      const bool configured = std::any_of(own_nids_.begin(), own_nids_.end(),
                                          [&a](u64 n) { return (n >> 32U) == (a.nid >> 32U); });
      const bool honest = a.nid == o_.peer_nid ||
                          std::find(own_nids_.begin(), own_nids_.end(), a.nid) != own_nids_.end();
      if (configured && !honest) {
        a.nid = peer;
        what += " (target->peer)";
      }
      if (configured && (a.timeout_ms == 0 ||
                         (a.timeout_ms > 3000 && a.timeout_ms <= O2LND_PING_TIMEOUT_MAX_MS))) {
        a.timeout_ms = 3000;
      }
      put(a);
      break;
    }
    case O2LND_IOC_NET_SHOW: {
      o2lnd_ioc_net a{};
      hdr_of(a);
      u32_field(a.index, below(nnis_ + 1), 0, nnis_, "index");
      u32_field(a.count, 0, 0, 16, "out_count");
      pad_field(a.pad, "pad");
      pad_field(a.pad2, "pad2");
      if (chance(10)) {
        a.nid = r64();
        a.send_count = r64();
        std::memset(a.ifname, 'x', sizeof(a.ifname));
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_PEER_SHOW: {
      o2lnd_ioc_peer a{};
      hdr_of(a);
      u32_field(a.ni_index, 1 + below(nnis_), 0, nnis_, "ni_index");
      u32_field(a.index, below(3), 0, 4, "index");
      pad_field(a.pad, "pad");
      pad_field(a.conns[7], "conns7");
      if (chance(10)) {
        a.nid = r64();
        a.last_error = -1;
        a.rtr_credits = -1;
        a.rtr_credits_max = 0xffffffffU;
        a.rtr_queued = 7;
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_ROUTE_SHOW: {
      o2lnd_ioc_route a{};
      hdr_of(a);
      // Mostly 0..count (the routes and the ENOENT after them).
      u32_field(a.index, below(nroutes_ + 2), 0, nroutes_, "index");
      if (chance(10)) {
        a.count = 0xffffffffU;
        a.gateway = r64();
        a.gw_health = 7;
        a.sent = r64();
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_ROUTING_SHOW: {
      o2lnd_ioc_routing a{};
      hdr_of(a);
      if (chance(10)) {
        a.forwarding = 0xffffffffU;
        a.pools[below(O2LND_RTR_NPOOLS)].credits = -1;
        a.dropped_error = r64();
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_CONN_SHOW: {
      o2lnd_ioc_conn a{};
      hdr_of(a);
      u32_field(a.ni_index, 1 + below(nnis_), 0, nnis_, "ni_index");
      u32_field(a.index, below(3), 0, 4, "index");
      pad_field(a.pad, "pad");
      if (chance(10)) {
        a.peer_nid = r64();
        a.qp_num = 7;
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_LPEER_SHOW: {
      o2lnd_ioc_lpeer a{};
      hdr_of(a);
      u32_field(a.index, below(3), 0, 4, "index");
      nid_field(a.nid, O2LND_NID_ANY);
      u32_field(a.timeout_ms, 0, 0, 1, "timeout_ms");
      pad_field(a.pad, "pad");
      if (chance(10)) {
        a.primary_nid = r64();
        a.n_nids = 0xffffffffU;
        a.nids[below(O2LND_PEER_MAX_NIDS)].health = 7;
        what += " junk_out";
      }
      put(a);
      break;
    }
    case O2LND_IOC_PEER_CLOSE: {
      o2lnd_ioc_peer_close a{};
      hdr_of(a);
      nid_field(a.nid, testnet_nid());
      nid_field(a.local_nid, O2LND_NID_ANY);
      u32_field(a.closed, 0, 0, 1, "out_closed");
      pad_field(a.pad, "pad");
      // Never close a real peer's connections.
      if (a.nid != O2LND_NID_ANY && (a.nid >> 48U) == O2LND_NET_TYPE_O2IB) {
        a.nid = (a.nid & ~0xffffffffULL) | kTestNet | (1U + below(254));
      }
      put(a);
      break;
    }
    case O2LND_IOC_NET_ADD:
    case O2LND_IOC_NET_DEL: {
      o2lnd_ioc_net_cfg a{};
      hdr_of(a);
      // A network no test bed uses (o2ib20..o2ib29) or a malformed one, on
      // an interface no guest has (fz0..fz9), or malformed names: never a
      // real NI ("o2ib" alone is o2ib0, so it is not among them).
      // (no real interface: not even lo, which has no RDMA device here)
      auto name = [&](char* f, std::size_t size, const std::string& good,
                      const std::vector<std::string>& bad_names, const char* label) {
        std::string v = good;
        switch (below(8)) {
          case 0:
            v = pick(bad_names);
            what += std::string(" ") + label;
            break;
          case 1:  // no NUL in the field
            std::memset(f, 'x', size);
            what += std::string(" ") + label + "_unterminated";
            return;
          case 2:  // junk after a NUL
            std::memset(f, 'y', size);
            f[0] = 'x';
            f[1 + below(static_cast<u32>(size) - 2)] = 0;
            what += std::string(" ") + label + "_junk";
            return;
          default:
            break;
        }
        std::memcpy(f, v.data(), std::min(v.size(), size - 1));
      };
      name(a.net, sizeof(a.net), "o2ib" + std::to_string(20 + below(10)),
           {"", "tcp0", "lo", "o2ib70000", "o2ibx", "o2ib20 ", "x"}, "net");
      name(a.ifname, sizeof(a.ifname), "fz" + std::to_string(below(10)),
           {"", "fz 0", "sixteen-chars-xx", "fz0/"}, "ifname");
      nid_field(a.nid, 0);  // outputs: ignored
      u32_field(a.count, 0, 0, 1, "out_count");
      pad_field(a.pad, "pad");
      put(a);
      break;
    }
    default: {  // the fault commands
      o2lnd_ioc_fault a{};
      hdr_of(a);
      if (c.cmd == O2LND_IOC_FAULT_ADD) {
        a.kind = 1 + below(O2LND_FAULT_MAX);
        u32_field(a.kind, a.kind, 1, O2LND_FAULT_MAX, "kind");
        nid_field(a.peer_nid, testnet_nid());
        nid_field(a.local_nid, O2LND_NID_ANY);
        u32_field(a.arg, below(4), 0, 16, "arg");
        u32_field(a.count, below(3), 0, 10, "count");
        u32_field(a.probability, O2LND_FAULT_PROB_ALWAYS, 1, O2LND_FAULT_PROB_ALWAYS, "prob");
        const bool delayed = a.kind == O2LND_FAULT_CM_DELAY || a.kind == O2LND_FAULT_SEND_DELAY;
        u32_field(a.delay_ms, delayed ? 1 + below(100) : 0, 1, O2LND_FAULT_MAX_DELAY_MS, "delay");
        u32_field(a.queue_depth, 0, 2, 255, "queue_depth");
        u32_field(a.max_frags, 0, 1, 257, "max_frags");  // o2iblnd: LNET_MAX_IOV + 1
        u32_field(a.id, 0, 1, 2, "id");
        u32_field(a.index, 0, 0, 1, "index");
        u32_field(a.count_rules, 0, 0, 1, "count_rules");
        u32_field(a.fired, 0, 0, 1, "fired");
        pad_field(a.pad, "pad");
        // Only rules that match nobody real: a 192.0.2.x NID on one side.
        auto to_testnet = [&](u64& nid) {
          if (nid != O2LND_NID_ANY && (nid >> 48U) == O2LND_NET_TYPE_O2IB) {
            nid = (nid & ~0xffffffffULL) | kTestNet | (1U + below(254));
          }
        };
        to_testnet(a.peer_nid);
        to_testnet(a.local_nid);
        if (!admin_ok(a)) {
          a.peer_nid = testnet_nid();
        }
      } else if (c.cmd == O2LND_IOC_FAULT_DEL) {
        u32_field(a.id, 0xfffff000U + below(100), 0, 64, "id");
        pad_field(a.pad, "pad");
        if (chance(20)) {  // ignored fields
          a.kind = static_cast<u32>(r64());
          a.peer_nid = r64();
          what += " junk_ignored";
        }
      } else {
        u32_field(a.index, below(2), 0, O2LND_FAULT_MAX_RULES, "index");
        pad_field(a.pad, "pad");
        if (chance(20)) {
          a.kind = static_cast<u32>(r64());
          a.fired = 5;
          what += " junk_ignored";
        }
      }
      put(a);
      break;
    }
  }
}

// A user pointer made of a number (kernel, non-canonical, low addresses).
unsigned char* at(u64 v) {
  return reinterpret_cast<unsigned char*>(v);  // NOLINT(*-reinterpret-cast,*-no-int-to-ptr)
}

bool bad_ptr_of(std::size_t mapped, std::size_t size) { return mapped < size; }

// 64-bit words a kernel pointer could be: the kernel half of the address
// space, but not ~0 (LNET_NID_ANY) and not an o2ib / lo NID.
bool kernelish(u64 v) { return v >= 0xffff800000000000ULL && v != ~0ULL; }

void Fuzzer::check_reply(const CmdInfo& c, const std::vector<unsigned char>& in,
                         const unsigned char* out, const std::string& ctx) {
  replies_checked_++;
  auto bad = [&](const std::string& why) { violation(ctx + ": reply " + why); };
  o2lnd_ioc_hdr h{};
  std::memcpy(&h, out, sizeof(h));
  o2lnd_ioc_hdr hin{};
  std::memcpy(&hin, in.data(), sizeof(hin));
  const std::size_t written = std::min<std::size_t>(hin.size, c.size);
  if (h.abi_version != O2LND_ABI_VERSION || h.size != written || h.flags != 0 || h.reserved != 0) {
    bad("header not {abi, min(size, the module's), 0, 0}");
  }
  for (std::size_t off = 0; off + 8 <= written; off += 8) {
    u64 w = 0, echoed = 0;
    std::memcpy(&w, out + off, 8);             // NOLINT(*-pointer-arithmetic)
    std::memcpy(&echoed, in.data() + off, 8);  // NOLINT(*-pointer-arithmetic)
    for (std::size_t f : c.all_ones_u32) {
      if (f >= off && f + 4 <= off + 8 &&
          ((w >> ((f - off) * 8)) & 0xffffffffULL) == 0xffffffffULL) {
        w &= ~(0xffffffffULL << ((f - off) * 8));
      }
    }
    for (std::size_t f : c.negative_s32) {
      if (f >= off && f + 4 <= off + 8 && ((w >> ((f - off) * 8)) & 0x80000000ULL) != 0) {
        w &= ~(0xffffffffULL << ((f - off) * 8));
      }
    }
    // (an echoed input, e.g. count 0xffffffff next to arg, is not a leak)
    if (kernelish(w) && w != echoed) {
      std::ostringstream os;
      os << "word at offset " << off << " looks like a kernel pointer: 0x" << std::hex << w;
      bad(os.str());
    }
  }
  auto clean = [&](const char* s, std::size_t n, const char* name) {
    std::size_t len = ::strnlen(s, n);
    if (len == n) {
      bad(std::string(name) + " not NUL-terminated");
      return;
    }
    for (std::size_t i = len; i < n; ++i) {
      if (s[i] != 0) {  // NOLINT(*-pointer-arithmetic)
        bad(std::string(name) + " has bytes after its NUL");
        return;
      }
    }
  };
  switch (c.cmd) {
    case O2LND_IOC_VERSION: {
      o2lnd_ioc_version v{};
      std::memcpy(&v, out, sizeof(v));
      if (v.abi_version != O2LND_ABI_VERSION || v.pad != 0) {
        bad("abi_version / pad");
      }
      clean(v.module_version, sizeof(v.module_version), "module_version");
      break;
    }
    case O2LND_IOC_PING: {
      o2lnd_ioc_ping p{}, q{};
      std::memcpy(&p, out, sizeof(p));
      std::memcpy(&q, in.data(), sizeof(q));
      if (p.nid != q.nid || p.max_ids != q.max_ids) {
        bad("nid / max_ids not echoed");
      }
      const u32 valid = std::min(p.n_ids, p.max_ids);
      for (u32 i = 0; i < O2LND_PING_MAX_IDS; ++i) {
        const auto& id = p.ids[i];  // NOLINT(*-constant-array-index)
        if (id.pad != 0 || (i >= valid && (id.nid != 0 || id.status != 0))) {
          bad("ids[" + std::to_string(i) + "] pad or past the valid ones not 0");
        }
      }
      if (valid > 0 && p.ids[0].nid != O2LND_LO_NID) {
        bad("ids[0] is not 0@lo");
      }
      break;
    }
    case O2LND_IOC_BRW: {
      o2lnd_ioc_brw b{}, q{};
      std::memcpy(&b, out, sizeof(b));
      std::memcpy(&q, in.data(), sizeof(q));
      if (b.nid != q.nid || b.op != q.op || b.size != q.size || b.seed != q.seed) {
        bad("nid / op / size / seed not echoed");
      }
      if (b.pad != 0 || b.rdma > 1 || b.rdma != (b.size > 3976U ? 1U : 0U)) {
        bad("pad not 0 or rdma not what the size says");
      }
      // ABI 11: the PUT alone (a write that asked for no ACK), else two
      const bool put_alone =
          b.op == O2LND_BRW_WRITE && (b.flags & (O2LND_BRW_F_CHECK | O2LND_BRW_F_ACK)) == 0;
      if (written >= O2LND_IOC_BRW_SIZE_VER1 &&
          (b.pad2 != 0 || (b.messages != 1 && b.messages != 2) ||
           (b.messages == 1 && !put_alone))) {
        bad("pad2 not 0 or messages not what the op and flags say");
      }
      break;
    }
    case O2LND_IOC_NET_SHOW: {
      o2lnd_ioc_net n{}, q{};
      std::memcpy(&n, out, sizeof(n));
      std::memcpy(&q, in.data(), sizeof(q));
      if (n.pad != 0 || n.pad2 != 0) {
        bad("pad / pad2 not 0");
      }
      if (n.index != q.index || n.count != nnis_) {
        bad("index not echoed or count changed");
      }
      clean(n.net, sizeof(n.net), "net");
      clean(n.ifname, sizeof(n.ifname), "ifname");
      clean(n.devname, sizeof(n.devname), "devname");
      if (n.status != O2LND_NI_STATUS_UP && n.status != O2LND_NI_STATUS_DOWN) {
        bad("status");
      }
      break;
    }
    case O2LND_IOC_PEER_SHOW: {
      o2lnd_ioc_peer p{}, q{};
      std::memcpy(&p, out, sizeof(p));
      std::memcpy(&q, in.data(), sizeof(q));
      if (p.pad != 0 || p.conns[6] != 0 || p.conns[7] != 0) {
        bad("pad / conns[6..7] not 0");
      }
      if (p.ni_index != q.ni_index || p.index != q.index || p.index >= p.count ||
          p.state >= O2LND_PEER_NSTATES) {
        bad("index not echoed, or state / count out of range");
      }
      if (static_cast<std::int64_t>(p.rtr_credits) > std::int64_t{p.rtr_credits_max}) {
        bad("rtr_credits above rtr_credits_max");
      }
      break;
    }
    case O2LND_IOC_ROUTE_SHOW: {
      o2lnd_ioc_route rt{}, q{};
      std::memcpy(&rt, out, sizeof(rt));
      std::memcpy(&q, in.data(), sizeof(q));
      if (rt.index != q.index || rt.index >= rt.count) {
        bad("index not echoed or not below count");
      }
      if (rt.gw_health != O2LND_HEALTH_UP && rt.gw_health != O2LND_HEALTH_DOWN) {
        bad("gw_health neither up nor down");
      }
      if (rt.hops == 0 || rt.gateway == O2LND_NID_ANY ||
          (rt.gateway >> 48U) != O2LND_NET_TYPE_O2IB) {
        bad("hops 0 or a gateway that is not an o2ib NID");
      }
      break;
    }
    case O2LND_IOC_ROUTING_SHOW: {
      o2lnd_ioc_routing rt{};
      std::memcpy(&rt, out, sizeof(rt));
      if (rt.forwarding > 1) {
        bad("forwarding neither 0 nor 1");
      }
      for (const auto& pool : rt.pools) {
        if (static_cast<std::int64_t>(pool.credits) > std::int64_t{pool.nbuffers}) {
          bad("a pool with more credits than buffers");
        }
      }
      break;
    }
    case O2LND_IOC_CONN_SHOW: {
      o2lnd_ioc_conn k{}, q{};
      std::memcpy(&k, out, sizeof(k));
      std::memcpy(&q, in.data(), sizeof(q));
      if (k.pad != 0 || k.ni_index != q.ni_index || k.index != q.index || k.index >= k.count ||
          k.state >= O2LND_CONN_NSTATES || k.active > 1) {
        bad("pad not 0, index not echoed, or state / count / active out of range");
      }
      break;
    }
    case O2LND_IOC_LPEER_SHOW: {
      o2lnd_ioc_lpeer k{}, q{};
      std::memcpy(&k, out, sizeof(k));
      std::memcpy(&q, in.data(), sizeof(q));
      if (k.pad != 0 || k.index != q.index || k.nid != q.nid || k.n_nids == 0 ||
          k.primary_nid != k.nids[0].nid) {
        bad("pad not 0, inputs not echoed, no NID, or a primary that is not the first NID");
      }
      for (std::uint32_t i = 0; i < std::min<std::uint32_t>(k.n_nids, O2LND_PEER_MAX_NIDS); ++i) {
        if (k.nids[i].health > O2LND_HEALTH_MAX) {
          bad("a NID's health above the maximum");
        }
      }
      break;
    }
    case O2LND_IOC_PEER_CLOSE: {
      o2lnd_ioc_peer_close k{};
      std::memcpy(&k, out, sizeof(k));
      if (k.pad != 0) {
        bad("pad not 0");
      }
      break;
    }
    case O2LND_IOC_NET_ADD:
    case O2LND_IOC_NET_DEL:
      bad("a fuzzed NET_ADD / NET_DEL succeeded: it names no real NI");
      break;
    default: {
      o2lnd_ioc_fault f{}, q{};
      std::memcpy(&f, out, sizeof(f));
      std::memcpy(&q, in.data(), sizeof(q));
      if (f.pad != 0) {
        bad("pad not 0");
      }
      if (c.cmd == O2LND_IOC_FAULT_ADD &&
          (f.id == 0 || f.index != 0 || f.count_rules != 0 || f.fired != 0 || f.kind != q.kind ||
           f.peer_nid != q.peer_nid || f.local_nid != q.local_nid || f.arg != q.arg)) {
        bad("FAULT_ADD reply: id 0, nonzero index / count_rules / fired, or inputs not echoed");
      }
      if (c.cmd == O2LND_IOC_FAULT_DEL) {
        o2lnd_ioc_fault z{};
        z.hdr = f.hdr;
        z.id = f.id;
        if (f.id != q.id || std::memcmp(&z, &f, sizeof(f)) != 0) {
          bad("FAULT_DEL reply is not just the header and the id");
        }
      }
      if (c.cmd == O2LND_IOC_FAULT_LIST && (f.id == 0 || f.kind == 0 || f.kind > O2LND_FAULT_MAX)) {
        bad("FAULT_LIST entry id / kind");
      }
      break;
    }
  }
}

void Fuzzer::one(long iter) {
  // 1. the command
  const auto& cmds = commands();
  std::string cmd_cat;
  unsigned long cmd = 0;
  const CmdInfo& base = cmds[below(static_cast<u32>(cmds.size()))];
  const u32 r = below(100);
  if (r < 75) {
    cmd = base.cmd;
    cmd_cat = "valid";
  } else if (r < 93) {
    const unsigned dir = _IOC_DIR(base.cmd), nr = _IOC_NR(base.cmd);
    const unsigned size = _IOC_SIZE(base.cmd), type = _IOC_TYPE(base.cmd);
    switch (below(6)) {
      case 0:
        cmd = _IOC(pick<unsigned>({_IOC_NONE, _IOC_READ, _IOC_WRITE}), type, nr, size);
        cmd_cat = "neighbour_dir";
        break;
      case 1:
        cmd = _IOC(dir, type, nr,
                   pick<unsigned>({0, size - 1, size + 1, size - 8, size + 8, 16, 0x3fff}));
        cmd_cat = "neighbour_size";
        break;
      case 2:
        cmd = _IOC(dir, pick<unsigned>({type - 1, type + 1, 0, 0xff}), nr, size);
        cmd_cat = "neighbour_magic";
        break;
      case 3:
        cmd = _IOC(dir, type, pick<unsigned>({0, 10, 11, 12, 13, 0x7f, 0xff}), size);
        cmd_cat = "neighbour_nr";
        break;
      case 4:
        cmd = base.cmd & 0xffffffffUL;
        cmd |= 0x100000000UL;  // high bits of the 64-bit argument: cmd is 32 bits
        cmd_cat = "neighbour_high_bits";
        break;
      default:
        cmd = _IOC(_IOC_READ | _IOC_WRITE, type, nr, size ^ (1U << below(13)));
        cmd_cat = "neighbour_size_bitflip";
        break;
    }
  } else {
    // (never DISCOVER, a command this fuzzer does not model: a random
    // number of its type and number is not an unknown command)
    do {
      cmd = static_cast<u32>(r64());
    } while (vfs_generic(cmd) ||
             (_IOC_TYPE(cmd) == O2LND_IOC_MAGIC && _IOC_NR(cmd) == _IOC_NR(O2LND_IOC_DISCOVER)));
    cmd_cat = "random_number";
  }
  // ioctl(2)'s cmd is an unsigned int: the kernel sees the low 32 bits.
  const CmdInfo* c = find_cmd(cmd & 0xffffffffUL);
  if (c != nullptr && cmd_cat != "valid" && cmd_cat != "neighbour_high_bits") {
    cmd_cat = "valid";  // a neighbour that is another valid command
  }
  const CmdInfo& arg_of = c != nullptr ? *c : base;

  // 2. the argument
  std::string what;
  std::vector<unsigned char> arg(arg_of.size);
  gen_arg(arg_of, arg, what);

  // 3. the pointer
  auto ptr = Ptr::kGood;
  const u32 pr = below(100);
  if (pr < 55) {
    ptr = Ptr::kGood;
  } else if (pr < 62) {
    ptr = Ptr::kMisaligned;
  } else if (pr < 69) {
    ptr = Ptr::kReadOnly;
  } else if (pr < 79) {
    ptr = Ptr::kStraddle;
  } else {
    ptr = static_cast<Ptr>(static_cast<u32>(Ptr::kNull) + below(7));
  }
  unsigned char* p = nullptr;
  std::size_t mapped = arg.size();         // bytes of the struct in readable memory
  unsigned char* page1 = map_ + page_;     // NOLINT(*-pointer-arithmetic)
  unsigned char* hole = map_ + 2 * page_;  // NOLINT(*-pointer-arithmetic)
  unsigned char* ro = map_ + 3 * page_;    // NOLINT(*-pointer-arithmetic)
  std::memset(map_, kFill, 2 * static_cast<std::size_t>(page_));  // pages 0 and 1
  switch (ptr) {
    case Ptr::kGood:
      p = page1 + 256;  // NOLINT(*-pointer-arithmetic)
      break;
    case Ptr::kMisaligned:
      p = page1 + 256 + 1 + below(7);  // NOLINT(*-pointer-arithmetic)
      break;
    case Ptr::kReadOnly:
      ::mprotect(ro, page_, PROT_READ | PROT_WRITE);
      std::memset(ro, kFill, page_);
      p = ro + 128;  // NOLINT(*-pointer-arithmetic)
      std::memcpy(p, arg.data(), arg.size());
      ::mprotect(ro, page_, PROT_READ);
      break;
    case Ptr::kStraddle:
      mapped = below(static_cast<u32>(arg.size()));
      p = hole - mapped;  // NOLINT(*-pointer-arithmetic)
      break;
    case Ptr::kNull:
      mapped = 0;
      break;
    case Ptr::kUnmapped:
      mapped = 0;
      p = hole + below(static_cast<u32>(page_ - arg.size()));  // NOLINT(*-pointer-arithmetic)
      break;
    case Ptr::kKernelDirectMap:
      mapped = 0;
      p = at(0xffff888000000000ULL);
      break;
    case Ptr::kKernelText:
      mapped = 0;
      p = at(0xffffffff81000000ULL);
      break;
    case Ptr::kNonCanonical:
      mapped = 0;
      p = at(0x0000800000000000ULL);
      break;
    case Ptr::kLowAddress:
      mapped = 0;
      p = at(0x1000ULL);
      break;
    case Ptr::kAllOnes:
      mapped = 0;
      p = at(~0ULL);
      break;
  }
  const bool writable = ptr == Ptr::kGood || ptr == Ptr::kMisaligned || ptr == Ptr::kStraddle;
  if (writable) {
    std::memcpy(p, arg.data(), mapped);
  }
  // What the test may compare afterwards: the struct's mapped bytes and
  // the guard bytes around it (read-only: the struct only).
  unsigned char* lo = nullptr;
  std::size_t span = 0;
  if (ptr == Ptr::kGood || ptr == Ptr::kMisaligned) {
    lo = p - kGuard;  // NOLINT(*-pointer-arithmetic)
    span = kGuard + arg.size() + kGuard;
  } else if (ptr == Ptr::kStraddle) {
    lo = p - kGuard;  // NOLINT(*-pointer-arithmetic)
    span = kGuard + mapped;
  } else if (ptr == Ptr::kReadOnly) {
    lo = p;
    span = arg.size();
  }
  std::vector<unsigned char> before(lo, lo + span);  // NOLINT(*-pointer-arithmetic)

  // 4. the call, with the state around it
  const bool may_change =
      c != nullptr &&
      (c->cmd == O2LND_IOC_FAULT_ADD || c->cmd == O2LND_IOC_FAULT_DEL || c->cmd == O2LND_IOC_PING);
  State s0;
  if (may_change) {
    s0 = snapshot();
  }
  const int rc = sys(cmd, p);
  const std::string cname = c != nullptr ? c->name : "unknown";
  std::ostringstream ctx;
  ctx << "iter " << iter << " " << cname << " cmd 0x" << std::hex << cmd << std::dec << " ("
      << cmd_cat << ") ptr " << kPtrNames.at(static_cast<std::size_t>(ptr)) << " fields[" << what
      << " ] -> " << errno_sym(rc);

  // 5. oracles
  const std::string outcome = errno_sym(rc);
  count("command", c != nullptr && cmd_cat == "valid" ? cname : cmd_cat, outcome);
  count("pointer", kPtrNames.at(static_cast<std::size_t>(ptr)), outcome);
  if (c != nullptr && !bad_ptr_of(mapped, arg.size())) {
    count("fields", cname + (what.empty() ? " valid" : " mutated"), outcome);
  }
  count("total", "all", outcome);

  // The order of include/uapi/o2lnd.h: EPERM; an unreadable header
  // EFAULT; the size rules (EINVAL, E2BIG); the rest unreadable EFAULT, an
  // unknown nonzero tail E2BIG (the buffer lies in kFill bytes); the ABI
  // range EPROTO; flags and reserved EINVAL.
  int want = -1;  // the exact errno the rules decide, -1: any allowed one
  bool bad_ptr = mapped < arg.size();
  o2lnd_ioc_hdr h{};
  std::memcpy(&h, arg.data(), sizeof(h));
  if (c == nullptr) {
    want = ENOTTY;
  } else if (c->admin && !privileged_) {
    want = EPERM;
  } else if (mapped < sizeof(o2lnd_ioc_hdr)) {
    want = EFAULT;
  } else {
    const bool v = c->cmd == O2LND_IOC_VERSION;
    const bool abi_ok =
        h.abi_version >= O2LND_ABI_VERSION_MIN && h.abi_version <= O2LND_ABI_VERSION;
    const bool size_ok = h.size >= ver0_size(*c) && h.size % 8 == 0;
    bad_ptr =
        size_ok && h.size <= O2LND_IOC_MAX_SIZE && mapped < std::min<std::size_t>(h.size, c->size);
    // The order of the rules is the point: two of them give EINVAL.
    if (!size_ok) {  // NOLINT(bugprone-branch-clone)
      want = EINVAL;
    } else if (h.size > O2LND_IOC_MAX_SIZE) {
      want = E2BIG;
    } else if (bad_ptr) {
      want = EFAULT;
    } else if (!v && h.size > c->size) {
      want = ptr == Ptr::kGood || ptr == Ptr::kMisaligned ? E2BIG : -1;
    } else if (!v && !abi_ok) {
      want = EPROTO;
    } else if (!v && (h.flags != 0 || h.reserved != 0)) {
      want = EINVAL;
    } else if (v) {
      want = ptr == Ptr::kReadOnly ? EFAULT : 0;
    }
  }
  if (want >= 0 && rc != want) {
    violation(ctx.str() + ": expected " + errno_sym(want));
  } else if (rc != 0 && c != nullptr &&
             std::find(c->allowed.begin(), c->allowed.end(), rc) == c->allowed.end()) {
    violation(ctx.str() + ": errno not one " + cname + " may return");
  }
  if (rc == 0 && (c == nullptr || ptr == Ptr::kReadOnly || bad_ptr)) {
    violation(ctx.str() + ": succeeded");
  }

  if (rc != 0) {
    // Refused: not one byte of the user memory changed.
    buffers_checked_++;
    if (std::memcmp(before.data(), lo, span) != 0) {
      violation(ctx.str() + ": a refused call changed the user buffer");
    }
  } else if (writable) {
    // Served: the module wrote min(hdr.size, its size) bytes.  A smaller
    // (older) struct may end before an unmapped page (kStraddle): only the
    // written bytes are read back, the rest of the reply is the input's.
    buffers_checked_++;
    const std::size_t written = std::min<std::size_t>(h.size, c->size);
    const bool tail_mapped = ptr != Ptr::kStraddle;
    if (std::memcmp(before.data(), lo, kGuard) != 0 ||
        (tail_mapped &&
         (std::memcmp(before.data() + kGuard + written,  // NOLINT(*-pointer-arithmetic)
                      p + written,                       // NOLINT(*-pointer-arithmetic)
                      arg.size() - written + kGuard) != 0))) {
      violation(ctx.str() + ": bytes outside the written reply changed");
    }
    std::vector<unsigned char> reply = arg;
    std::memcpy(reply.data(), p, written);
    check_reply(*c, arg, reply.data(), ctx.str());
  }

  if (may_change) {
    // A refused call changes nothing (a ping refused after going on the
    // wire may have made a peer of the honest target: not a refusal of
    // the argument).  A successful FAULT_ADD is undone at once.
    const bool wire = c->cmd == O2LND_IOC_PING &&
                      (rc == ETIMEDOUT || rc == EHOSTUNREACH || rc == ENETDOWN ||
                       rc == ECONNREFUSED || rc == EPROTO || rc == 0 || (rc == EFAULT && !bad_ptr));
    if (rc != 0 && !wire) {
      state_checks_++;
      if (!(snapshot() == s0)) {
        violation(ctx.str() + ": a refused call changed the rules or the peers");
      }
    }
    if (rc == 0 && c->cmd == O2LND_IOC_FAULT_ADD) {
      rules_added_++;
      o2lnd_ioc_fault f{};
      std::memcpy(&f, p, sizeof(f));
      if (!admin_ok(f)) {
        violation(ctx.str() + ": added a rule that names no 192.0.2.x NID (fuzzer bug)");
      }
      o2lnd_ioc_fault d{};
      d.hdr = {O2LND_ABI_VERSION, sizeof(d), 0, 0};
      d.id = f.id;
      if (sys(O2LND_IOC_FAULT_DEL, &d) != 0) {
        violation(ctx.str() + ": cannot delete the rule just added (id " + std::to_string(f.id) +
                  ")");
      }
      state_checks_++;
      if (!(snapshot() == s0)) {
        violation(ctx.str() + ": add + delete did not restore the rules / peers");
      }
    }
  }
}

// Fills the rule table (32 rules), checks that the next ADD gets ENOSPC and
// changes nothing, then deletes them all.
void Fuzzer::full_table_phase() {
  const State s0 = snapshot();
  std::vector<u32> ids;
  for (u32 i = 0; i < O2LND_FAULT_MAX_RULES + 1; ++i) {
    o2lnd_ioc_fault f{};
    f.hdr = {O2LND_ABI_VERSION, sizeof(f), 0, 0};
    f.kind = O2LND_FAULT_MSG_DROP;
    f.peer_nid = testnet_nid();
    f.local_nid = O2LND_NID_ANY;
    f.probability = O2LND_FAULT_PROB_ALWAYS;
    const int rc = sys(O2LND_IOC_FAULT_ADD, &f);
    const bool full = s0.rules.size() + ids.size() >= O2LND_FAULT_MAX_RULES;
    count("full_table", full ? "add when full" : "add", errno_sym(rc));
    if (rc == 0) {
      ids.push_back(f.id);
    }
    if (full != (rc == ENOSPC) || (!full && rc != 0)) {
      violation("full table: ADD number " + std::to_string(i + 1) + " -> " + errno_sym(rc));
    }
  }
  const State full = snapshot();
  o2lnd_ioc_fault f{};
  f.hdr = {O2LND_ABI_VERSION, sizeof(f), 0, 0};
  f.kind = O2LND_FAULT_CM_DROP;
  f.peer_nid = testnet_nid();
  f.local_nid = O2LND_NID_ANY;
  f.probability = 1;
  int rc = sys(O2LND_IOC_FAULT_ADD, &f);
  count("full_table", "add when full", errno_sym(rc));
  if (rc != ENOSPC || !(snapshot() == full)) {
    violation("full table: a further ADD -> " + errno_sym(rc) + " or changed the rules");
  }
  for (u32 id : ids) {
    o2lnd_ioc_fault d{};
    d.hdr = {O2LND_ABI_VERSION, sizeof(d), 0, 0};
    d.id = id;
    rc = sys(O2LND_IOC_FAULT_DEL, &d);
    count("full_table", "del", errno_sym(rc));
    if (rc != 0) {
      violation("full table: DEL " + std::to_string(id) + " -> " + errno_sym(rc));
    }
  }
  // Deleted ids are gone for good.
  o2lnd_ioc_fault d{};
  d.hdr = {O2LND_ABI_VERSION, sizeof(d), 0, 0};
  d.id = ids.empty() ? 1 : ids.front();
  rc = sys(O2LND_IOC_FAULT_DEL, &d);
  count("full_table", "del a deleted id", errno_sym(rc));
  if (rc != ENOENT) {
    violation("full table: deleting a deleted id -> " + errno_sym(rc));
  }
  if (!(snapshot() == s0)) {
    violation("full table: rules not back to what they were");
  }
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      o += ' ';
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

std::string Fuzzer::json() const {
  std::ostringstream os;
  os << "{\n  \"seed\": " << o_.seed << ",\n  \"iterations_requested\": " << o_.iterations
     << ",\n  \"iterations\": " << done_ << ",\n  \"seconds\": " << seconds_
     << ",\n  \"privileged\": " << (privileged_ ? "true" : "false")
     << ",\n  \"violations\": " << violation_count_
     << ",\n  \"buffers_checked\": " << buffers_checked_
     << ",\n  \"replies_checked\": " << replies_checked_
     << ",\n  \"state_checks\": " << state_checks_
     << ",\n  \"rules_added_and_deleted\": " << rules_added_ << ",\n  \"counts\": {";
  bool first_cat = true;
  for (const auto& [cat, rows] : counts_) {
    os << (first_cat ? "" : ",") << "\n    " << json_str(cat) << ": {";
    first_cat = false;
    bool first_row = true;
    for (const auto& [row, m] : rows) {
      os << (first_row ? "" : ",") << "\n      " << json_str(row) << ": {";
      first_row = false;
      bool first = true;
      for (const auto& [k, n] : m) {
        os << (first ? "" : ", ") << json_str(k) << ": " << n;
        first = false;
      }
      os << "}";
    }
    os << "\n    }";
  }
  os << "\n  },\n  \"violation_samples\": [";
  for (std::size_t i = 0; i < violations_.size(); ++i) {
    os << (i == 0 ? "" : ",") << "\n    " << json_str(violations_[i]);
  }
  os << "\n  ]\n}\n";
  return os.str();
}

// The same counts as a Markdown section (one table per category).
std::string Fuzzer::markdown() const {
  std::ostringstream os;
  os << "seed " << o_.seed << ", " << done_ << " of " << o_.iterations << " iterations in "
     << std::lround(seconds_) << " s, " << (privileged_ ? "with" : "without")
     << " CAP_NET_ADMIN: **" << violation_count_ << " violations**; " << buffers_checked_
     << " user buffers compared byte for byte, " << replies_checked_ << " replies checked, "
     << state_checks_ << " rule/peer snapshots compared, " << rules_added_
     << " rules added and deleted.\n";
  static const std::map<std::string, std::string> kTitle = {
      {"command", "command (valid ones by name; the others by how they were made)"},
      {"pointer", "argument pointer"},
      {"fields", "field values (readable arguments of valid commands)"},
      {"full_table", "full rule table (32 rules)"},
      {"total", "all calls"}};
  for (const auto& [cat, rows] : counts_) {
    os << "\n| " << (kTitle.contains(cat) ? kTitle.at(cat) : cat) << " | calls | outcomes |\n"
       << "| --- | ---: | --- |\n";
    for (const auto& [row, m] : rows) {
      long total = 0;
      std::string outs;
      for (const auto& [k, n] : m) {
        total += n;
        outs += (outs.empty() ? "" : ", ") + k + " " + std::to_string(n);
      }
      os << "| " << row << " | " << total << " | " << outs << " |\n";
    }
  }
  for (const auto& v : violations_) {
    os << "\n- VIOLATION: " << v;
  }
  return os.str() + (violations_.empty() ? "" : "\n");
}

int Fuzzer::run() {
  if (!setup()) {
    return 2;
  }
  std::cout << "o2lnd_ioctl_fuzz: seed " << o_.seed << ", " << o_.iterations
            << " iterations (at most " << o_.max_seconds << " s), "
            << (privileged_ ? "with" : "without") << " CAP_NET_ADMIN, " << own_nids_.size()
            << " NIs; reproduce with --seed=" << o_.seed << " --iterations=" << o_.iterations
            << std::endl;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (long i = 0; i < o_.iterations; ++i) {
    if (elapsed() > o_.max_seconds) {
      std::cout << "o2lnd_ioctl_fuzz: time budget spent after " << i << " iterations\n";
      break;
    }
    if (privileged_ && !full_phase_done_ && i >= o_.iterations / 2) {
      full_table_phase();
      full_phase_done_ = true;
    }
    one(i);
    done_ = i + 1;
  }
  seconds_ = elapsed();
  // Nothing of ours is left: no rule.
  if (privileged_ && !snapshot().rules.empty()) {
    violation("fault rules left at the end");
  }
  std::cout << "o2lnd_ioctl_fuzz: " << done_ << " iterations in " << seconds_ << " s, "
            << buffers_checked_ << " buffers and " << replies_checked_ << " replies checked, "
            << state_checks_ << " state checks, " << violation_count_ << " violations\n";
  if (counts_.contains("total")) {
    for (const auto& [k, n] : counts_.at("total").at("all")) {
      std::cout << "  " << k << ": " << n << "\n";
    }
  }
  if (!o_.json.empty()) {
    std::ofstream(o_.json) << json();
  }
  if (!o_.markdown.empty()) {
    std::ofstream(o_.markdown) << markdown();
  }
  return violation_count_ == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];  // NOLINT(*-pointer-arithmetic)
    auto val = [&](std::string_view f) { return std::string(a.substr(f.size())); };
    try {
      if (a.starts_with("--seed=")) {
        o.seed = std::stoull(val("--seed="));
        o.seed_given = true;
      } else if (a.starts_with("--iterations=")) {
        o.iterations = std::stol(val("--iterations="));
      } else if (a.starts_with("--max-seconds=")) {
        o.max_seconds = std::stod(val("--max-seconds="));
      } else if (a.starts_with("--device=")) {
        o.device = val("--device=");
      } else if (a.starts_with("--json=")) {
        o.json = val("--json=");
      } else if (a.starts_with("--markdown=")) {
        o.markdown = val("--markdown=");
      } else if (a.starts_with("--peer-nid=")) {
        auto n = o2lnd::Nid::parse(val("--peer-nid="));
        if (!n) {
          throw std::invalid_argument("bad NID");
        }
        o.peer_nid = n->raw();
      } else {
        throw std::invalid_argument("unknown argument");
      }
    } catch (const std::exception& e) {
      std::cerr << "o2lnd_ioctl_fuzz: " << a << ": " << e.what()
                << "\nUsage: o2lnd_ioctl_fuzz [--seed=N] [--iterations=N] [--max-seconds=S] "
                   "[--peer-nid=NID] [--device=PATH] [--json=PATH] [--markdown=PATH]\n";
      return 2;
    }
  }
  if (!o.seed_given) {
    o.seed = std::random_device{}() ^
             static_cast<u64>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  return Fuzzer(o).run();
}
