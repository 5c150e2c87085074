// o2lnd_adversary: a hostile o2iblnd v2 peer.  Runs in a test-bed guest
// (librdmacm + libibverbs) against an o2lnd listener and records, per case,
// what it sent, what o2lnd was expected to do (module/wire.c, module/lnd/cm.c,
// module/lnd/rx.c) and what it did.
//
//   o2lnd_adversary --category malformed|flood|session|bulk --src IP --dst IP
//                   [--port 987] [--incarnation N] [--queue-depth 8]
//                   [--src-nid IP] [--out FILE]
//
// FILE gets one line per case: "category<TAB>group<TAB>case<TAB>expected
// <TAB>outcome<TAB>ok|FAIL<TAB>detail"; stdout gets the failures and one
// "SUMMARY category group tried ok failed" line per group, then "TOTALS
// rejects=N closed=N".  Exit 0 when every case matched its expectation.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<uint8_t>;

// ---- o2iblnd v2 wire format: a mirror of module/wire.h -------------------
constexpr uint32_t kMagic = 0x0be91b91;
constexpr uint16_t kVersion = 0x12;
constexpr uint8_t kConnReq = 0xc0;
constexpr uint8_t kConnAck = 0xc1;
constexpr uint8_t kNoop = 0xd0;
constexpr uint8_t kImmediate = 0xd1;
constexpr uint8_t kPutReq = 0xd2;
constexpr uint8_t kPutNak = 0xd3;
constexpr uint8_t kPutAck = 0xd4;
constexpr uint8_t kPutDone = 0xd5;
constexpr uint8_t kGetReq = 0xd6;
constexpr uint8_t kGetDone = 0xd7;
constexpr uint32_t kMaxMsgSize = 4096;
constexpr uint16_t kMaxFrags = 257;  // o2iblnd's IBLND_MAX_RDMA_FRAGS (LNET_MAX_IOV + 1)
constexpr uint32_t kNetO2ib = 5;
constexpr uint32_t kNetTcp = 2;
constexpr uint32_t kNetLo = 9;
constexpr int kRejConsumerDefined = 28;  // IB_CM_REJ_CONSUMER_DEFINED
constexpr size_t kReqPrivateMax = 56;    // IB CM REQ data (92) - rdma_cm's header (36)
// Bulk (module/wire.h): the selftest service's portal, LNet's limits.
constexpr uint32_t kBrwPortal = 51;
constexpr uint32_t kLnetPid = 12345;
constexpr uint32_t kLnetGet = 2;
constexpr uint32_t kBrwMax = 1U << 20;

struct Hdr {
  uint32_t magic;
  uint16_t version;
  uint8_t type;
  uint8_t credits;
  uint32_t nob;
  uint32_t cksum;
  uint64_t srcnid;
  uint64_t srcstamp;
  uint64_t dstnid;
  uint64_t dststamp;
};
struct ConnParams {
  uint16_t queue_depth;
  uint16_t max_frags;
  uint32_t max_msg_size;
};
struct ConnMsg {
  Hdr hdr;
  ConnParams cp;
};
struct Rej {
  uint32_t magic;
  uint16_t version;
  uint8_t why;
  uint8_t padding;
  uint64_t incarnation;
  ConnParams cp;
};
// The LNet header of a GET (72 bytes, little-endian like the host) and the
// o2iblnd v2 RDMA descriptor of a GET_REQ: key, nfrags, then nfrags x
// {nob, addr}, packed.
struct __attribute__((packed)) LnetGetHdr {
  uint64_t dest_nid;
  uint64_t src_nid;
  uint32_t dest_pid;
  uint32_t src_pid;
  uint32_t type;
  uint32_t payload_length;
  uint64_t return_wmd_interface_cookie;
  uint64_t return_wmd_object_cookie;
  uint64_t match_bits;
  uint32_t ptl_index;
  uint32_t src_offset;
  uint32_t sink_length;
  uint32_t pad;  // the rest of the 40-byte union
};
struct __attribute__((packed)) RdFrag {
  uint32_t nob;
  uint64_t addr;
};
static_assert(sizeof(Hdr) == 48 && sizeof(ConnParams) == 8 && sizeof(ConnMsg) == 56 &&
              sizeof(Rej) == 24 && sizeof(LnetGetHdr) == 72 && sizeof(RdFrag) == 12);

const char* reject_name(unsigned why) {
  static const std::array<const char*, 10> names = {
      "0",          "CONN_RACE",  "NO_RESOURCES",   "FATAL",          "CONN_UNCOMPAT",
      "CONN_STALE", "RDMA_FRAGS", "MSG_QUEUE_SIZE", "INVALID_SRV_ID", "EARLY"};
  return why < names.size() ? names.at(why) : "unknown";
}

template <class T>
Bytes bytes_of(const T& v) {
  Bytes b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

uint32_t cksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    sum =
        std::rotl(sum, 1) + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(p[i])));
  }
  return sum != 0 ? sum : 1;
}

constexpr size_t kCksumOff = offsetof(Hdr, cksum);

// Fills in the checksum of a message whose cksum field is 0 (over all of b).
void set_cksum(Bytes& b, bool swapped = false) {
  uint32_t z = 0;
  std::memcpy(&b[kCksumOff], &z, 4);
  uint32_t c = cksum(b.data(), b.size());
  if (swapped) c = __builtin_bswap32(c);
  std::memcpy(&b[kCksumOff], &c, 4);
}

void swab(Hdr& h) {
  h.magic = __builtin_bswap32(h.magic);
  h.version = __builtin_bswap16(h.version);
  h.nob = __builtin_bswap32(h.nob);
  h.cksum = __builtin_bswap32(h.cksum);
  h.srcnid = __builtin_bswap64(h.srcnid);
  h.srcstamp = __builtin_bswap64(h.srcstamp);
  h.dstnid = __builtin_bswap64(h.dstnid);
  h.dststamp = __builtin_bswap64(h.dststamp);
}

void swab(ConnParams& cp) {
  cp.queue_depth = __builtin_bswap16(cp.queue_depth);
  cp.max_frags = __builtin_bswap16(cp.max_frags);
  cp.max_msg_size = __builtin_bswap32(cp.max_msg_size);
}

uint64_t make_nid(const std::string& ip, uint32_t type = kNetO2ib, uint32_t num = 0) {
  in_addr a{};
  if (inet_pton(AF_INET, ip.c_str(), &a) != 1) return 0;
  return (static_cast<uint64_t>((type << 16) | num) << 32) | ntohl(a.s_addr);
}

// ---- what o2lnd must answer --------------------------------------------
constexpr const char* kFatal = "rejected:FATAL";

struct Ctx {
  std::string src_ip, dst_ip;
  int port = 987;
  uint64_t src_nid = 0, dst_nid = 0, stamp = 0, incarnation = 0;
  ConnParams ours{8, kMaxFrags, kMaxMsgSize};
};

// The answer o2_connreq_check() (module/lnd/cm.c, with o2_msg_unpack() and
// o2_connparams_check() of module/wire.c) documents for the private data
// o2lnd receives.  The IB CM always delivers 56 bytes: a shorter REQ
// payload arrives zero-padded.
std::string connreq_oracle(const Bytes& sent, const Ctx& c) {
  std::array<uint8_t, kReqPrivateMax> b{};
  std::memcpy(b.data(), sent.data(), std::min(sent.size(), b.size()));
  Hdr h{};
  std::memcpy(&h, b.data(), sizeof h);
  bool flip = false;
  if (h.magic == __builtin_bswap32(kMagic)) {
    flip = true;
  } else if (h.magic != kMagic) {
    return kFatal;
  }
  uint32_t nob = flip ? __builtin_bswap32(h.nob) : h.nob;
  if (nob != sizeof(ConnMsg)) return kFatal;
  if (h.version != (flip ? __builtin_bswap16(kVersion) : kVersion)) return kFatal;
  uint32_t sum = flip ? __builtin_bswap32(h.cksum) : h.cksum;
  if (sum != 0) {
    std::array<uint8_t, kReqPrivateMax> z = b;
    std::memset(&z[kCksumOff], 0, 4);
    if (cksum(z.data(), z.size()) != sum) return kFatal;
  }
  if (flip) swab(h);
  if (h.type != kConnReq) return kFatal;
  ConnParams cp{};
  std::memcpy(&cp, &b[sizeof(Hdr)], sizeof cp);
  if (flip) swab(cp);
  if (h.dstnid != c.dst_nid) return kFatal;
  if ((h.srcnid >> 48) != kNetO2ib) return kFatal;
  // the srcnid must be on the NI's network, with the address the request
  // came from
  if ((h.srcnid >> 32) != (c.dst_nid >> 32)) return kFatal;
  if ((h.srcnid & 0xffffffffULL) != (make_nid(c.src_ip) & 0xffffffffULL)) return kFatal;
  if (cp.queue_depth > c.ours.queue_depth) return "rejected:MSG_QUEUE_SIZE";
  if (cp.max_frags > c.ours.max_frags) return "rejected:RDMA_FRAGS";
  if (cp.max_msg_size != c.ours.max_msg_size || cp.queue_depth < 2 || cp.max_frags < 1) {
    return "rejected:CONN_UNCOMPAT";
  }
  return "accepted";
}

ConnMsg valid_connreq(const Ctx& c) {
  ConnMsg m{};
  m.hdr = Hdr{kMagic, kVersion, kConnReq, 0, sizeof(ConnMsg), 0, c.src_nid, c.stamp, c.dst_nid, 0};
  m.cp = ConnParams{c.ours.queue_depth, kMaxFrags, kMaxMsgSize};
  return m;
}

// ---- results --------------------------------------------------------------
struct Result {
  std::string category, group, name, expected, outcome, detail;
  [[nodiscard]] bool ok() const {
    size_t p = 0;
    while (true) {  // expected: alternatives separated by '|'
      size_t q = expected.find('|', p);
      if (expected.substr(p, q - p) == outcome) return detail.empty();
      if (q == std::string::npos) return false;
      p = q + 1;
    }
  }
};

// ---- connect attempts, many at once on one event channel ------------------
enum class Mode {
  kNormal,            // QP; on ESTABLISHED disconnect and destroy at once
  kNoQpHold,          // no QP: the REP is never answered (no RTU); destroy after hold_s
  kDestroyAfterSend,  // destroy the id right after rdma_connect()
};

struct Attempt {
  std::string group, name, expected;
  Bytes pdata;
  Mode mode = Mode::kNormal;
  double hold_s = 0;
  uint32_t fake_qpn = 0;  // kNoQpHold: the QP number the REQ names (none exists)
  rdma_cm_id* id = nullptr;
  std::string outcome, detail;
  Clock::time_point start, hold_until;
  bool holding = false;
};

struct AddrPair {
  addrinfo* src = nullptr;
  addrinfo* dst = nullptr;
  AddrPair(const Ctx& c) {  // NOLINT(google-explicit-constructor)
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    if (getaddrinfo(c.src_ip.c_str(), "0", &hints, &src) != 0) src = nullptr;
    if (getaddrinfo(c.dst_ip.c_str(), std::to_string(c.port).c_str(), &hints, &dst) != 0) {
      dst = nullptr;
    }
  }
  ~AddrPair() {
    if (src) freeaddrinfo(src);
    if (dst) freeaddrinfo(dst);
  }
  AddrPair(const AddrPair&) = delete;
  AddrPair& operator=(const AddrPair&) = delete;
  AddrPair(AddrPair&&) = delete;
  AddrPair& operator=(AddrPair&&) = delete;
};

std::string check_rej(const void* data, size_t len, int status, const Ctx& c, std::string& detail) {
  if (status != kRejConsumerDefined) return "rejected:cm-status-" + std::to_string(status);
  if (!data || len < sizeof(Rej)) return "rejected:no-o2iblnd-data";
  Rej r{};
  std::memcpy(&r, data, sizeof r);
  if (r.magic == __builtin_bswap32(kMagic)) {
    r.magic = kMagic;
    r.version = __builtin_bswap16(r.version);
    r.incarnation = __builtin_bswap64(r.incarnation);
    swab(r.cp);
  }
  if (r.magic != kMagic || r.version != kVersion) return "rejected:bad-o2iblnd-data";
  if (r.incarnation == 0 || (c.incarnation != 0 && r.incarnation != c.incarnation)) {
    detail += "reject incarnation " + std::to_string(r.incarnation) + " (want " +
              std::to_string(c.incarnation) + "); ";
  }
  if (r.cp.queue_depth != c.ours.queue_depth || r.cp.max_frags != c.ours.max_frags ||
      r.cp.max_msg_size != c.ours.max_msg_size) {
    detail += "reject params " + std::to_string(r.cp.queue_depth) + "/" +
              std::to_string(r.cp.max_frags) + "/" + std::to_string(r.cp.max_msg_size) + "; ";
  }
  return std::string("rejected:") + reject_name(r.why);
}

class Connector {
 public:
  explicit Connector(const Ctx& c) : c_(c), addr_(c), ch_(rdma_create_event_channel()) {}
  ~Connector() {
    for (auto& [ctx, d] : dev_) {
      ibv_destroy_cq(d.cq);
      ibv_dealloc_pd(d.pd);
    }
    if (ch_) rdma_destroy_event_channel(ch_);
  }
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;
  Connector(Connector&&) = delete;
  Connector& operator=(Connector&&) = delete;

  // Runs every attempt, at most `inflight` at once; each gets timeout_s.
  void run(std::vector<Attempt>& v, size_t inflight, double timeout_s) {
    size_t next = 0;
    while (true) {
      while (active_ < inflight && next < v.size()) start(v[next++]);
      if (active_ == 0 && next == v.size()) break;
      auto now = Clock::now();
      for (size_t i = 0; i < next; i++) {
        Attempt& a = v[i];
        if (!a.id) continue;
        if (a.holding && now >= a.hold_until) {
          finish(a);
        } else if (!a.holding && std::chrono::duration<double>(now - a.start).count() > timeout_s) {
          if (a.outcome.empty()) a.outcome = "timeout";
          finish(a);
        }
      }
      pollfd p{ch_->fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      rdma_cm_event* ev = nullptr;
      if (rdma_get_cm_event(ch_, &ev) != 0) continue;
      handle(ev);
    }
  }

 private:
  struct Dev {
    ibv_pd* pd;
    ibv_cq* cq;
  };

  void start(Attempt& a) {
    a.start = Clock::now();
    if (!addr_.src || !addr_.dst || !ch_) {
      a.outcome = "local:no-address";
      return;
    }
    if (rdma_create_id(ch_, &a.id, &a, RDMA_PS_TCP) != 0) {
      a.outcome = std::string("local:create_id:") + std::strerror(errno);
      a.id = nullptr;
      return;
    }
    active_++;
    if (rdma_resolve_addr(a.id, addr_.src->ai_addr, addr_.dst->ai_addr, 5000) != 0) {
      a.outcome = std::string("local:resolve_addr:") + std::strerror(errno);
      finish(a);
    }
  }

  void finish(Attempt& a) {
    if (!a.id) return;
    if (a.id->qp) rdma_destroy_qp(a.id);
    rdma_destroy_id(a.id);
    a.id = nullptr;
    a.holding = false;
    active_--;
  }

  Dev& dev(ibv_context* ctx) {
    auto it = dev_.find(ctx);
    if (it != dev_.end()) return it->second;
    Dev d{ibv_alloc_pd(ctx), ibv_create_cq(ctx, 4096, nullptr, nullptr, 0)};
    return dev_[ctx] = d;
  }

  void connect(Attempt& a) {
    if (a.mode != Mode::kNoQpHold) {
      Dev& d = dev(a.id->verbs);
      ibv_qp_init_attr qa{};
      qa.send_cq = d.cq;
      qa.recv_cq = d.cq;
      qa.qp_type = IBV_QPT_RC;
      qa.cap.max_send_wr = 2;
      qa.cap.max_recv_wr = 2;
      qa.cap.max_send_sge = 1;
      qa.cap.max_recv_sge = 1;
      if (!d.pd || !d.cq || rdma_create_qp(a.id, d.pd, &qa) != 0) {
        a.outcome = std::string("local:create_qp:") + std::strerror(errno);
        finish(a);
        return;
      }
    }
    rdma_conn_param p{};
    p.private_data = a.pdata.empty() ? nullptr : a.pdata.data();
    p.private_data_len = static_cast<uint8_t>(std::min<size_t>(a.pdata.size(), 255));
    p.responder_resources = 1;
    p.initiator_depth = 1;
    p.retry_count = 5;
    p.rnr_retry_count = 6;
    p.flow_control = 1;
    p.qp_num = a.fake_qpn;  // only used without a QP
    if (rdma_connect(a.id, &p) != 0) {
      a.outcome = std::string("local:") + (errno == EINVAL ? "EINVAL" : std::strerror(errno));
      finish(a);
      return;
    }
    if (a.mode == Mode::kDestroyAfterSend) {
      a.outcome = "sent";
      finish(a);
    }
  }

  void handle(rdma_cm_event* ev) {
    auto* a = static_cast<Attempt*>(ev->id->context);
    rdma_cm_event_type type = ev->event;
    int status = ev->status;
    Bytes pd;
    if (ev->param.conn.private_data && ev->param.conn.private_data_len > 0) {
      pd.resize(ev->param.conn.private_data_len);
      std::memcpy(pd.data(), ev->param.conn.private_data, pd.size());
    }
    rdma_ack_cm_event(ev);
    if (!a || !a->id) return;
    switch (type) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (rdma_resolve_route(a->id, 5000) != 0) {
          a->outcome = std::string("local:resolve_route:") + std::strerror(errno);
          finish(*a);
        }
        break;
      case RDMA_CM_EVENT_ROUTE_RESOLVED:
        connect(*a);
        break;
      case RDMA_CM_EVENT_REJECTED:
        if (a->holding) {  // o2lnd (its CM) gave up waiting for our RTU
          a->outcome = "connect-response,then-rejected";
          break;
        }
        a->outcome = check_rej(pd.empty() ? nullptr : pd.data(), pd.size(), status, c_, a->detail);
        finish(*a);
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        a->outcome = "accepted";
        rdma_disconnect(a->id);
        finish(*a);
        break;
      case RDMA_CM_EVENT_CONNECT_RESPONSE:
        a->outcome = "connect-response";
        a->holding = true;
        a->hold_until =
            Clock::now() + std::chrono::milliseconds(static_cast<int>(a->hold_s * 1000));
        break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_CONNECT_ERROR:
        if (!a->holding) {
          a->outcome =
              std::string("error:") + rdma_event_str(type) + "(" + std::to_string(status) + ")";
          finish(*a);
        }
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
        if (!a->holding) finish(*a);
        break;
      default:
        break;
    }
  }

  const Ctx& c_;
  AddrPair addr_;
  rdma_event_channel* ch_;
  std::map<ibv_context*, Dev> dev_;
  size_t active_ = 0;
};

// ---- category 1: malformed connect requests --------------------------------
std::vector<Attempt> malformed_cases(const Ctx& c) {
  std::vector<Attempt> v;
  auto add = [&](const std::string& group, const std::string& name, const Bytes& b,
                 const std::string& expected) {
    Attempt a;
    a.group = group;
    a.name = name;
    a.pdata = b;
    a.expected = expected;
    v.push_back(a);
  };
  const std::string fatal = "rejected:FATAL";
  const std::string uncompat = "rejected:CONN_UNCOMPAT";
  const std::string qsize = "rejected:MSG_QUEUE_SIZE";
  const std::string frags = "rejected:RDMA_FRAGS";
  auto field = [&](const std::string& name, const std::function<void(ConnMsg&)>& mut,
                   const std::string& expected, bool with_cksum = false) {
    ConnMsg m = valid_connreq(c);
    mut(m);
    Bytes b = bytes_of(m);
    if (with_cksum) set_cksum(b);
    add("field", name, b, expected);
  };
  auto nop = [](ConnMsg&) {};
  // controls: a valid CONNREQ is accepted (and disconnected at once)
  field("valid", nop, "accepted");
  field("valid-with-cksum", nop, "accepted", true);
  field(
      "magic-deadbeef", [](ConnMsg& m) { m.hdr.magic = 0xdeadbeef; }, fatal);
  field(
      "magic-0", [](ConnMsg& m) { m.hdr.magic = 0; }, fatal);
  field(
      "magic-swapped-only", [](ConnMsg& m) { m.hdr.magic = __builtin_bswap32(kMagic); }, fatal);
  field(
      "version-0", [](ConnMsg& m) { m.hdr.version = 0; }, fatal);
  field(
      "version-v1-0x11", [](ConnMsg& m) { m.hdr.version = 0x11; }, fatal);
  field(
      "version-0x13", [](ConnMsg& m) { m.hdr.version = 0x13; }, fatal);
  field(
      "version-0xffff", [](ConnMsg& m) { m.hdr.version = 0xffff; }, fatal);
  for (uint8_t t : {uint8_t{0}, kConnAck, kNoop, kImmediate, kPutReq, kGetReq, uint8_t{0xff}}) {
    char n[32];
    std::snprintf(n, sizeof n, "type-0x%02x", t);
    field(
        n, [t](ConnMsg& m) { m.hdr.type = t; }, fatal);
  }
  for (uint32_t nob : {0U, 1U, 47U, 48U, 55U, 57U, 4096U, 0xffffffffU}) {
    field(
        "nob-" + std::to_string(nob), [nob](ConnMsg& m) { m.hdr.nob = nob; }, fatal);
  }
  field(
      "cksum-wrong", [](ConnMsg& m) { m.hdr.cksum = 0x12345678; }, fatal);
  field(
      "cksum-off-by-one", [](ConnMsg& m) { m.hdr.cksum = 1; }, fatal);
  {
    ConnMsg m = valid_connreq(c);
    Bytes b = bytes_of(m);
    set_cksum(b);
    b[sizeof(Hdr)] ^= 1;  // queue depth changed after the checksum
    add("field", "cksum-stale-after-edit", b, fatal);
  }
  // o2lnd does not check a CONNREQ's credits (neither does o2iblnd)
  field(
      "credits-255", [](ConnMsg& m) { m.hdr.credits = 255; }, "accepted");
  const std::string src_ip = c.src_ip;
  field(
      "srcnid-tcp", [&](ConnMsg& m) { m.hdr.srcnid = make_nid(src_ip, kNetTcp); }, fatal);
  field(
      "srcnid-lo", [&](ConnMsg& m) { m.hdr.srcnid = make_nid(src_ip, kNetLo); }, fatal);
  field(
      "srcnid-0", [](ConnMsg& m) { m.hdr.srcnid = 0; }, fatal);
  field(
      "srcnid-any", [](ConnMsg& m) { m.hdr.srcnid = ~uint64_t{0}; }, fatal);
  // another node's NID (an honest peer's): refused, so a third node cannot
  // pass for it and have its connections closed as "rebooted"
  field(
      "srcnid-spoofs-honest-peer", [](ConnMsg& m) { m.hdr.srcnid = make_nid("192.168.1.2"); },
      fatal);
  field(
      "srcnid-other-o2ib-net", [&](ConnMsg& m) { m.hdr.srcnid = make_nid(src_ip, kNetO2ib, 3); },
      fatal);
  const std::string dst_ip = c.dst_ip;
  field(
      "dstnid-other-ni", [](ConnMsg& m) { m.hdr.dstnid = make_nid("192.168.1.2"); }, fatal);
  field(
      "dstnid-other-net", [&](ConnMsg& m) { m.hdr.dstnid = make_nid(dst_ip, kNetO2ib, 1); }, fatal);
  field(
      "dstnid-tcp", [&](ConnMsg& m) { m.hdr.dstnid = make_nid(dst_ip, kNetTcp); }, fatal);
  field(
      "dstnid-0", [](ConnMsg& m) { m.hdr.dstnid = 0; }, fatal);
  field(
      "dstnid-swapped", [](ConnMsg& m) { m.hdr.dstnid = __builtin_bswap64(m.hdr.dstnid); }, fatal);
  // Stamps of a CONNREQ are not checked by o2lnd (o2_connreq_check: any
  // srcstamp is the peer's new incarnation, dststamp is ignored)
  field(
      "srcstamp-0", [](ConnMsg& m) { m.hdr.srcstamp = 0; }, "accepted");
  field(
      "dststamp-garbage", [](ConnMsg& m) { m.hdr.dststamp = 0x1234567890abcdefULL; }, "accepted");
  for (unsigned qd : {0U, 1U, 2U, 8U, 9U, 255U, 256U, 65535U}) {
    std::string e = qd > 8 ? qsize : (qd < 2 ? uncompat : "accepted");
    field(
        "queue_depth-" + std::to_string(qd),
        [qd](ConnMsg& m) { m.cp.queue_depth = static_cast<uint16_t>(qd); }, e);
  }
  for (unsigned f : {0U, 1U, 256U, 257U, 258U, 65535U}) {
    std::string e = f > kMaxFrags ? frags : (f < 1 ? uncompat : "accepted");
    field(
        "max_frags-" + std::to_string(f),
        [f](ConnMsg& m) { m.cp.max_frags = static_cast<uint16_t>(f); }, e);
  }
  for (uint32_t s : {0U, 1U, 4095U, 4097U, 8192U, 1048576U, 0xffffffffU}) {
    field(
        "max_msg_size-" + std::to_string(s), [s](ConnMsg& m) { m.cp.max_msg_size = s; }, uncompat);
  }
  field(
      "queue_depth-9-and-max_frags-258",
      [](ConnMsg& m) {
        m.cp.queue_depth = 9;
        m.cp.max_frags = 258;
      },
      qsize);
  field(
      "max_frags-258-and-max_msg_size-0",
      [](ConnMsg& m) {
        m.cp.max_frags = 258;
        m.cp.max_msg_size = 0;
      },
      frags);

  // byte-swapped: a correctly swapped message (an opposite-endian peer) is legal
  auto swapped = [&](const std::string& name, const std::function<void(ConnMsg&)>& mut,
                     const std::string& expected, bool with_cksum) {
    ConnMsg m = valid_connreq(c);
    mut(m);
    swab(m.hdr);
    swab(m.cp);
    Bytes b = bytes_of(m);
    if (with_cksum) set_cksum(b, true);
    add("byteswapped", name, b, expected);
  };
  swapped("valid", nop, "accepted", false);
  swapped("valid-with-cksum", nop, "accepted", true);
  swapped(
      "queue_depth-9", [](ConnMsg& m) { m.cp.queue_depth = 9; }, qsize, false);
  swapped(
      "queue_depth-1", [](ConnMsg& m) { m.cp.queue_depth = 1; }, uncompat, false);
  swapped(
      "max_frags-258", [](ConnMsg& m) { m.cp.max_frags = 258; }, frags, false);
  swapped(
      "dstnid-wrong", [](ConnMsg& m) { m.hdr.dstnid = make_nid("192.168.1.2"); }, fatal, false);
  {
    ConnMsg m = valid_connreq(c);
    swab(m.cp);  // header in our order, parameters swapped: qd 0x0800
    add("byteswapped", "params-only-swapped", bytes_of(m), qsize);
    m = valid_connreq(c);
    swab(m.hdr);  // header swapped, parameters not: qd 0x0800 after the swap
    add("byteswapped", "header-only-swapped", bytes_of(m), qsize);
    m = valid_connreq(c);
    swab(m.hdr);
    swab(m.cp);
    Bytes b = bytes_of(m);
    set_cksum(b, false);  // checksum left in the wrong byte order
    add("byteswapped", "cksum-unswapped", b, fatal);
  }

  // truncated: the first L bytes of a valid CONNREQ (nob still 56); o2lnd
  // sees them zero-padded to 56 bytes, so the oracle decides (L >= 54 is
  // byte-for-byte the valid request: its last two bytes are 0)
  {
    Bytes full = bytes_of(valid_connreq(c));
    for (size_t len = 0; len < full.size(); len++) {
      Bytes b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
      add("truncated", "len-" + std::to_string(len), b, connreq_oracle(b, c));
    }
    for (uint32_t len : {48U, 52U}) {  // short and self-consistent (nob = len)
      ConnMsg m = valid_connreq(c);
      m.hdr.nob = len;
      Bytes b = bytes_of(m);
      b.resize(len);
      add("truncated", "self-consistent-nob-" + std::to_string(len), b, fatal);
    }
  }
  // oversized: beyond the 56 bytes an IB CM REQ carries for rdma_cm;
  // rdma_cm refuses them locally (nothing reaches o2lnd)
  for (size_t len : {57U, 64U, 92U, 148U, 255U}) {
    Bytes b = bytes_of(valid_connreq(c));
    b.resize(len, 0xa5);
    add("oversized", "len-" + std::to_string(len), b, "local:EINVAL");
  }
  add("zero-length", "no-private-data", Bytes{}, fatal);
  add("zero-length", "56-zero-bytes", Bytes(56, 0), fatal);
  add("zero-length", "56-0xff-bytes", Bytes(56, 0xff), fatal);
  // random bytes; and random bytes behind a valid magic/version/type/nob
  std::mt19937_64 rng(0x0be91b91);
  for (int i = 0; i < 24; i++) {
    Bytes b(56);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    if (i >= 12) {
      ConnMsg m = valid_connreq(c);
      std::memcpy(b.data(), &m, 12);  // magic, version, type, credits, nob
      std::memset(&b[kCksumOff], 0, 4);
      if (i >= 18) std::memcpy(&b[32], &m.hdr.dstnid, 8);  // and the right dstnid
    }
    add("random", "seed-" + std::to_string(i), b, connreq_oracle(b, c));
  }
  for (auto& a : v) {
    // every hand-written expectation agrees with the oracle (a self-check)
    if (a.group != "oversized" && connreq_oracle(a.pdata, c) != a.expected) {
      a.detail = "oracle says " + connreq_oracle(a.pdata, c) + "; ";
    }
  }
  return v;
}

// ---- category 2: floods ------------------------------------------------------
std::vector<Attempt> flood_cases(const Ctx& c, const std::string& group, int n) {
  std::vector<Attempt> v;
  for (int i = 0; i < n; i++) {
    Attempt a;
    a.group = group;
    a.name = std::to_string(i);
    ConnMsg m = valid_connreq(c);
    if (group == "malformed-burst") {
      m.hdr.magic = 0xdeadbeef;
      a.expected = "rejected:FATAL";
    } else if (group == "connect-then-disconnect") {
      a.expected = "accepted|rejected:NO_RESOURCES";
    } else if (group == "half-open-no-rtu") {
      a.mode = Mode::kNoQpHold;
      a.hold_s = 8;
      // distinct and unused: the CM rejects a QP number it saw recently
      // from the same GID as STALE_CONN
      a.fake_qpn = 0xa00000U + static_cast<uint32_t>(i);
      a.expected = "connect-response|connect-response,then-rejected";
    } else {  // destroy-after-request
      a.mode = Mode::kDestroyAfterSend;
      a.expected = "sent";
    }
    a.pdata = bytes_of(m);
    v.push_back(a);
  }
  return v;
}

// ---- category 3: one established connection per case -------------------------
class Session {
 public:
  explicit Session(const Ctx& c) : c_(c), addr_(c) {}
  ~Session() { close(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;

  // Connects with a valid CONNREQ, receives posted.  "" or what failed.
  std::string open() {
    ch_ = rdma_create_event_channel();
    if (!ch_ || !addr_.src || !addr_.dst) return "no event channel / address";
    if (rdma_create_id(ch_, &id_, nullptr, RDMA_PS_TCP) != 0) return "create_id";
    if (rdma_resolve_addr(id_, addr_.src->ai_addr, addr_.dst->ai_addr, 5000) != 0 ||
        wait(RDMA_CM_EVENT_ADDR_RESOLVED, 10) != RDMA_CM_EVENT_ADDR_RESOLVED) {
      return "resolve_addr";
    }
    if (rdma_resolve_route(id_, 5000) != 0 ||
        wait(RDMA_CM_EVENT_ROUTE_RESOLVED, 10) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
      return "resolve_route";
    }
    pd_ = ibv_alloc_pd(id_->verbs);
    cq_ = pd_ ? ibv_create_cq(id_->verbs, 256, nullptr, nullptr, 0) : nullptr;
    buf_.assign(static_cast<size_t>(kRx + kTx) * kSlot, 0);
    mr_ = cq_ ? ibv_reg_mr(pd_, buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE) : nullptr;
    if (!mr_) return "pd/cq/mr";
    ibv_qp_init_attr qa{};
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = kTx;
    qa.cap.max_recv_wr = kRx;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id_, pd_, &qa) != 0) return "create_qp";
    for (int i = 0; i < kRx; i++) {
      ibv_sge sge{addr(i), kSlot, mr_->lkey};
      ibv_recv_wr wr{};
      ibv_recv_wr* bad = nullptr;
      wr.wr_id = static_cast<uint64_t>(i);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      if (ibv_post_recv(id_->qp, &wr, &bad) != 0) return "post_recv";
    }
    Bytes req = bytes_of(valid_connreq(c_));
    rdma_conn_param p{};
    p.private_data = req.data();
    p.private_data_len = static_cast<uint8_t>(req.size());
    p.responder_resources = 1;
    p.initiator_depth = 1;
    p.retry_count = 5;
    p.rnr_retry_count = 6;
    p.flow_control = 1;
    if (rdma_connect(id_, &p) != 0) return std::string("connect: ") + std::strerror(errno);
    Bytes ack;
    auto ev = wait(RDMA_CM_EVENT_ESTABLISHED, 15, &ack);
    if (ev != RDMA_CM_EVENT_ESTABLISHED) {
      return std::string("no ESTABLISHED: ") + (ev == kNone ? "timeout" : rdma_event_str(ev));
    }
    ConnMsg a{};
    if (ack.size() < sizeof a) return "CONNACK of " + std::to_string(ack.size()) + " bytes";
    std::memcpy(&a, ack.data(), sizeof a);
    if (a.hdr.magic != kMagic || a.hdr.version != kVersion || a.hdr.type != kConnAck ||
        a.hdr.nob != sizeof a || a.hdr.srcnid != c_.dst_nid || a.hdr.dstnid != c_.src_nid ||
        a.hdr.dststamp != c_.stamp || a.hdr.srcstamp == 0 ||
        (c_.incarnation != 0 && a.hdr.srcstamp != c_.incarnation) ||
        a.cp.queue_depth != c_.ours.queue_depth || a.cp.max_msg_size != kMaxMsgSize) {
      return "bad CONNACK";
    }
    peer_stamp_ = a.hdr.srcstamp;
    return "";
  }

  // A valid message of `type` with `body` bytes of zeros after the header.
  [[nodiscard]] Bytes msg(uint8_t type, size_t body = 0, uint8_t credits = 0) const {
    Bytes b(sizeof(Hdr) + body, 0);
    Hdr h{kMagic, kVersion,   type,     credits,    static_cast<uint32_t>(b.size()),
          0,      c_.src_nid, c_.stamp, c_.dst_nid, peer_stamp_};
    std::memcpy(b.data(), &h, sizeof h);
    return b;
  }
  template <class F>
  [[nodiscard]] Bytes msg_with(uint8_t type, size_t body, F mut) const {
    Bytes b = msg(type, body);
    Hdr h{};
    std::memcpy(&h, b.data(), sizeof h);
    mut(h);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
  }

  bool send(const Bytes& m) {
    if (m.size() > kSlot) return false;
    int slot = kRx + (ntx_++ % kTx);
    std::memcpy(&buf_[static_cast<size_t>(slot) * kSlot], m.data(), m.size());
    ibv_sge sge{addr(slot), static_cast<uint32_t>(m.size()), mr_->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = static_cast<uint64_t>(slot);
    wr.sg_list = m.empty() ? nullptr : &sge;
    wr.num_sge = m.empty() ? 0 : 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    return ibv_post_send(id_->qp, &wr, &bad) == 0;
  }
  void disconnect() { rdma_disconnect(id_); }

  // A buffer of n bytes o2lnd may RDMA-write into (registered once, with
  // remote write): its address and rkey, or {0, 0}.
  std::pair<uint64_t, uint32_t> sink(size_t n) {
    if (!sink_mr_ && pd_) {
      sink_buf_.assign(n, 0);
      sink_mr_ =
          ibv_reg_mr(pd_, sink_buf_.data(), n, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    }
    if (!sink_mr_) return {0, 0};
    return {static_cast<uint64_t>(std::bit_cast<uintptr_t>(sink_buf_.data())), sink_mr_->rkey};
  }

  // A GET_REQ to the selftest portal: LNet GET of sink_length bytes,
  // cookie, then the descriptor {key, nfrags = frags.size(), frags}.
  [[nodiscard]] Bytes get_req(uint32_t sink_length, uint32_t key, const std::vector<RdFrag>& frags,
                              uint64_t match_bits = 0) const {
    const size_t body = sizeof(LnetGetHdr) + 8 + 8 + frags.size() * sizeof(RdFrag);
    Bytes b = msg(kGetReq, body);
    LnetGetHdr l{};
    l.dest_nid = c_.dst_nid;
    l.src_nid = c_.src_nid;
    l.dest_pid = kLnetPid;
    l.src_pid = kLnetPid;
    l.type = kLnetGet;
    l.payload_length = 0;
    l.return_wmd_interface_cookie = 0x1f2e3d4c5b6a7988ULL;
    l.return_wmd_object_cookie = 0x0123456789abcdefULL;
    l.match_bits = match_bits;
    l.ptl_index = kBrwPortal;
    l.sink_length = sink_length;
    size_t at = sizeof(Hdr);
    std::memcpy(&b[at], &l, sizeof l);
    at += sizeof l;
    const uint64_t cookie = 0xadadadad00000000ULL | static_cast<uint64_t>(ntx_);
    std::memcpy(&b[at], &cookie, 8);
    at += 8;
    const auto nfrags = static_cast<uint32_t>(frags.size());
    std::memcpy(&b[at], &key, 4);
    std::memcpy(&b[at + 4], &nfrags, 4);
    at += 8;
    if (!frags.empty()) std::memcpy(&b[at], frags.data(), frags.size() * sizeof(RdFrag));
    return b;
  }

  // Waits for DISCONNECTED up to t seconds.
  bool disconnected(double t) {
    return wait(RDMA_CM_EVENT_DISCONNECTED, t) == RDMA_CM_EVENT_DISCONNECTED;
  }

  void close() {
    if (id_) {
      rdma_disconnect(id_);
      if (id_->qp) rdma_destroy_qp(id_);
      rdma_destroy_id(id_);
      id_ = nullptr;
    }
    if (mr_) ibv_dereg_mr(mr_);
    if (sink_mr_) ibv_dereg_mr(sink_mr_);
    sink_mr_ = nullptr;
    if (cq_) ibv_destroy_cq(cq_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ch_) rdma_destroy_event_channel(ch_);
    mr_ = nullptr;
    cq_ = nullptr;
    pd_ = nullptr;
    ch_ = nullptr;
  }

 private:
  static constexpr int kRx = 17;  // 2 * queue depth + 1, as o2iblnd posts
  static constexpr int kTx = 32;
  static constexpr uint32_t kSlot = 8192;
  static constexpr auto kNone = static_cast<rdma_cm_event_type>(-1);

  uint64_t addr(int slot) {
    return static_cast<uint64_t>(
        std::bit_cast<uintptr_t>(&buf_[static_cast<size_t>(slot) * kSlot]));
  }

  // The first event that is `want` or an error; kNone on timeout.
  rdma_cm_event_type wait(rdma_cm_event_type want, double t, Bytes* pdata = nullptr) {
    auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(t * 1000));
    while (Clock::now() < end) {
      pollfd p{ch_->fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      rdma_cm_event* ev = nullptr;
      if (rdma_get_cm_event(ch_, &ev) != 0) continue;
      rdma_cm_event_type type = ev->event;
      if (pdata && ev->param.conn.private_data) {
        pdata->resize(ev->param.conn.private_data_len);
        std::memcpy(pdata->data(), ev->param.conn.private_data, pdata->size());
      }
      rdma_ack_cm_event(ev);
      if (type == want || type == RDMA_CM_EVENT_REJECTED || type == RDMA_CM_EVENT_UNREACHABLE ||
          type == RDMA_CM_EVENT_CONNECT_ERROR || type == RDMA_CM_EVENT_ADDR_ERROR ||
          type == RDMA_CM_EVENT_ROUTE_ERROR || type == RDMA_CM_EVENT_DISCONNECTED) {
        return type;
      }
    }
    return kNone;
  }

  const Ctx& c_;
  AddrPair addr_;
  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  ibv_mr* sink_mr_ = nullptr;
  Bytes buf_;
  Bytes sink_buf_;
  uint64_t peer_stamp_ = 0;
  int ntx_ = 0;
};

struct SessionCase {
  std::string group, name, expected;  // "closed" or "kept"
  std::function<bool(Session&)> act;  // false: could not even post
};

std::vector<SessionCase> session_cases(const Ctx& c) {
  std::vector<SessionCase> v;
  auto one = [](const std::function<Bytes(Session&)>& f) {
    return [f](Session& s) { return s.send(f(s)); };
  };
  auto hdr = [&](const std::string& group, const std::string& name, uint8_t type, size_t body,
                 const std::function<void(Hdr&)>& mut, const std::string& expected) {
    v.push_back(
        {group, name, expected, one([=](Session& s) { return s.msg_with(type, body, mut); })});
  };
  auto nop = [](Hdr&) {};
  // controls: valid messages keep the connection
  hdr("valid", "noop", kNoop, 0, nop, "kept");
  v.push_back({"valid", "noop-byteswapped", "kept",
               one([](Session& s) { return s.msg_with(kNoop, 0, [](Hdr& h) { swab(h); }); })});
  v.push_back({"valid", "noop-with-cksum", "kept", one([](Session& s) {
                 Bytes b = s.msg(kNoop);
                 set_cksum(b);
                 return b;
               })});
  // a well-formed IMMEDIATE whose LNet header is for nobody: dropped, not fatal
  hdr("valid", "immediate-lnet-garbage", kImmediate, 72, nop, "kept");
  // malformed headers
  hdr(
      "header", "magic-deadbeef", kNoop, 0, [](Hdr& h) { h.magic = 0xdeadbeef; }, "closed");
  hdr(
      "header", "version-0x11", kNoop, 0, [](Hdr& h) { h.version = 0x11; }, "closed");
  hdr(
      "header", "type-0x55", kNoop, 0, [](Hdr& h) { h.type = 0x55; }, "closed");
  hdr(
      "header", "type-0", kNoop, 0, [](Hdr& h) { h.type = 0; }, "closed");
  hdr(
      "header", "nob-larger-than-sent", kNoop, 0, [](Hdr& h) { h.nob = 100; }, "closed");
  hdr(
      "header", "nob-smaller-than-sent", kNoop, 16, [](Hdr& h) { h.nob = 48; }, "closed");
  v.push_back({"header", "short-20-bytes", "closed", one([](Session& s) {
                 Bytes b = s.msg(kNoop);
                 b.resize(20);
                 return b;
               })});
  v.push_back({"header", "zero-length-send", "closed", one([](Session&) { return Bytes{}; })});
  v.push_back({"header", "larger-than-4096", "closed",
               one([](Session& s) { return s.msg(kImmediate, 5000 - sizeof(Hdr)); })});
  v.push_back({"header", "cksum-wrong", "closed", one([](Session& s) {
                 return s.msg_with(kNoop, 0, [](Hdr& h) { h.cksum = 0x12345678; });
               })});
  v.push_back({"header", "cksum-stale-after-edit", "closed", one([](Session& s) {
                 Bytes b = s.msg(kImmediate, 72);
                 set_cksum(b);
                 b[60] ^= 1;
                 return b;
               })});
  // credits: o2lnd has sent nothing, so any grant exceeds the negotiated depth
  hdr(
      "credits", "grant-1-nothing-outstanding", kNoop, 0, [](Hdr& h) { h.credits = 1; }, "closed");
  hdr(
      "credits", "grant-255", kNoop, 0, [](Hdr& h) { h.credits = 255; }, "closed");
  hdr(
      "credits", "grant-9-immediate", kImmediate, 72, [](Hdr& h) { h.credits = 9; }, "closed");
  // NIDs and stamps
  hdr(
      "nid-stamp", "srcnid-foreign", kNoop, 0, [](Hdr& h) { h.srcnid = make_nid("192.168.1.2"); },
      "closed");
  hdr(
      "nid-stamp", "srcnid-tcp", kNoop, 0, [&c](Hdr& h) { h.srcnid = make_nid(c.src_ip, kNetTcp); },
      "closed");
  hdr(
      "nid-stamp", "dstnid-other-ni", kNoop, 0, [](Hdr& h) { h.dstnid = make_nid("192.168.1.2"); },
      "closed");
  hdr(
      "nid-stamp", "dstnid-0", kNoop, 0, [](Hdr& h) { h.dstnid = 0; }, "closed");
  hdr(
      "nid-stamp", "srcstamp-stale", kNoop, 0, [](Hdr& h) { h.srcstamp -= 1; }, "closed");
  hdr(
      "nid-stamp", "srcstamp-0", kNoop, 0, [](Hdr& h) { h.srcstamp = 0; }, "closed");
  hdr(
      "nid-stamp", "dststamp-stale", kNoop, 0, [](Hdr& h) { h.dststamp -= 1; }, "closed");
  hdr(
      "nid-stamp", "dststamp-0", kNoop, 0, [](Hdr& h) { h.dststamp = 0; }, "closed");
  // types not allowed on a live connection (bulk is not spoken: EPROTO)
  for (uint8_t t : {kConnReq, kConnAck, kPutReq, kPutNak, kPutAck, kPutDone, kGetReq, kGetDone}) {
    char n[32];
    std::snprintf(n, sizeof n, "type-0x%02x", t);
    size_t body = (t == kConnReq || t == kConnAck) ? sizeof(ConnParams) : 64;
    hdr("type", n, t, body, nop, "closed");
  }
  // messages that land while o2lnd closes the connection, or after we hung up
  v.push_back({"after-close", "bad-then-10-noops", "closed", [](Session& s) {
                 bool ok = s.send(s.msg_with(kNoop, 0, [](Hdr& h) { h.magic = 0; }));
                 for (int i = 0; i < 10; i++) ok = s.send(s.msg(kNoop)) && ok;
                 return ok;
               }});
  v.push_back({"after-close", "8-immediates-then-disconnect", "closed", [](Session& s) {
                 bool ok = true;
                 for (int i = 0; i < 8; i++) ok = s.send(s.msg(kImmediate, 72)) && ok;
                 s.disconnect();
                 return ok;
               }});
  return v;
}

// ---- main -----------------------------------------------------------------
struct Args {
  std::string category, out, src_nid_ip;
  Ctx ctx;
};

bool parse(int argc, char** argv, Args& a) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& val = args[i + 1];
    if (k == "--category") {
      a.category = val;
    } else if (k == "--src") {
      a.ctx.src_ip = val;
    } else if (k == "--dst") {
      a.ctx.dst_ip = val;
    } else if (k == "--port") {
      a.ctx.port = std::stoi(val);
    } else if (k == "--incarnation") {
      a.ctx.incarnation = std::stoull(val);
    } else if (k == "--queue-depth") {
      a.ctx.ours.queue_depth = static_cast<uint16_t>(std::stoi(val));
    } else if (k == "--src-nid") {  // claim another NID (spoofing experiments)
      a.src_nid_ip = val;
    } else if (k == "--out") {
      a.out = val;
    } else {
      return false;
    }
  }
  return args.size() % 2 == 0 && !a.category.empty() && !a.ctx.src_ip.empty() &&
         !a.ctx.dst_ip.empty();
}

}  // namespace

// ---- category 4: malformed RDMA descriptors of GET_REQs (bulk) -----------------
// After a valid connect, a GET_REQ to the selftest portal whose descriptor
// o2lnd must refuse before any RDMA (nfrags 0 or above max_frags, a total
// beyond the LNet sink_length or above 1 MiB, an empty fragment), or whose
// RDMA write fails (an rkey we never registered): o2lnd closes the
// connection.  The control is a valid GET_REQ into our registered sink,
// which o2lnd fills by RDMA write and completes with GET_DONE.
std::vector<SessionCase> bulk_cases() {
  std::vector<SessionCase> v;
  constexpr size_t kSink = 2 * kBrwMax + 8192;  // room for every descriptor below
  constexpr uint32_t k64K = 65536;
  auto get = [&v](const std::string& name, const std::string& expected,
                  const std::function<Bytes(Session&, uint64_t, uint32_t)>& make) {
    v.push_back({"get-req", name, expected, [make](Session& s) {
                   auto [addr, key] = s.sink(kSink);
                   if (addr == 0) return false;
                   return s.send(make(s, addr, key));
                 }});
  };
  get("valid-64k-control", "kept", [](Session& s, uint64_t a, uint32_t k) {
    return s.get_req(k64K, k, {{k64K, a}});
  });
  get("nfrags-0", "closed",
      [](Session& s, uint64_t, uint32_t k) { return s.get_req(4096, k, {}); });
  get("nfrags-258", "closed", [](Session& s, uint64_t a, uint32_t k) {
    std::vector<RdFrag> f;
    for (uint32_t i = 0; i <= kMaxFrags; i++) f.push_back({1, a + i});
    return s.get_req(kMaxFrags + 1, k, f);
  });
  get("total-beyond-sink-length", "closed", [](Session& s, uint64_t a, uint32_t k) {
    return s.get_req(4096, k, {{4096, a}, {4096, a + 4096}});
  });
  get("total-above-1MiB", "closed", [](Session& s, uint64_t a, uint32_t k) {
    return s.get_req(2 * kBrwMax, k, {{kBrwMax, a}, {4096, a + kBrwMax}});
  });
  get("frag-length-0", "closed", [](Session& s, uint64_t a, uint32_t k) {
    return s.get_req(4096, k, {{4096, a}, {0, a + 4096}});
  });
  get("bad-rkey", "closed", [](Session& s, uint64_t a, uint32_t k) {
    return s.get_req(k64K, k ^ 0x5a5a5a00U, {{k64K, a}});
  });
  return v;
}

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr,
                 "usage: o2lnd_adversary --category malformed|flood|session|bulk --src IP --dst IP "
                 "[--port N] [--incarnation N] [--queue-depth N] [--src-nid IP] [--out FILE]\n");
    return 2;
  }
  Ctx& c = a.ctx;
  c.src_nid = make_nid(a.src_nid_ip.empty() ? c.src_ip : a.src_nid_ip);
  c.dst_nid = make_nid(c.dst_ip);
  c.stamp = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch() /
                                  std::chrono::nanoseconds(1));
  std::vector<Result> results;
  auto t0 = Clock::now();
  auto take = [&](std::vector<Attempt>& v) {
    for (auto& at : v) {
      results.push_back({a.category, at.group, at.name, at.expected, at.outcome, at.detail});
    }
  };
  if (a.category == "malformed") {
    auto v = malformed_cases(c);
    Connector(c).run(v, 4, 20);
    take(v);
  } else if (a.category == "flood") {
    for (auto [group, n, inflight] :
         {std::tuple{"malformed-burst", 300, 64}, std::tuple{"connect-then-disconnect", 100, 32},
          std::tuple{"half-open-no-rtu", 24, 24}, std::tuple{"destroy-after-request", 100, 100}}) {
      auto v = flood_cases(c, group, n);
      Connector(c).run(v, static_cast<size_t>(inflight), 60);
      take(v);
    }
  } else if (a.category == "session" || a.category == "bulk") {
    for (auto& sc : a.category == "bulk" ? bulk_cases() : session_cases(c)) {
      Session s(c);
      Result r{a.category, sc.group, sc.name, sc.expected, "", ""};
      std::string err = s.open();
      if (!err.empty()) {
        r.outcome = "connect-failed";
        r.detail = err;
      } else {
        // a control NOOP first: the connection is usable before the case
        if (!s.send(s.msg(kNoop)) || s.disconnected(0.3)) {
          r.outcome = "control-noop-failed";
        } else if (!sc.act(s)) {
          r.outcome = "local:post_send-failed";
        } else {
          r.outcome = s.disconnected(sc.expected == "kept" ? 1.5 : 10) ? "closed" : "kept";
        }
      }
      s.close();
      results.push_back(r);
    }
  } else {
    std::fprintf(stderr, "unknown category %s\n", a.category.c_str());
    return 2;
  }

  std::ofstream out;
  if (!a.out.empty()) out.open(a.out);
  std::map<std::string, std::array<int, 2>> groups;  // group -> {ok, failed}
  int failed = 0, rejects = 0, closed = 0;
  std::vector<std::string> order;
  for (const auto& r : results) {
    bool ok = r.ok();
    if (!groups.contains(r.group)) order.push_back(r.group);
    groups[r.group][ok ? 0 : 1]++;
    failed += ok ? 0 : 1;
    if (r.outcome.starts_with("rejected:") && r.outcome.find('-') == std::string::npos) rejects++;
    if (r.outcome == "closed" && r.group != "after-close" && r.expected == "closed") closed++;
    std::string line = r.category + "\t" + r.group + "\t" + r.name + "\t" + r.expected + "\t" +
                       r.outcome + "\t" + (ok ? "ok" : "FAIL") + "\t" + r.detail;
    if (out) out << line << "\n";
    if (!ok) std::printf("FAIL %s\n", line.c_str());
  }
  for (const auto& g : order) {
    auto& n = groups[g];
    std::printf("SUMMARY %s %s %d %d %d\n", a.category.c_str(), g.c_str(), n[0] + n[1], n[0], n[1]);
  }
  std::printf("TOTALS rejects=%d closed=%d seconds=%.1f\n", rejects, closed,
              std::chrono::duration<double>(Clock::now() - t0).count());
  return failed == 0 ? 0 : 1;
}
