// o2lnd test bed: the wire protocol between the host driver and the guest
// agent over a virtio-serial port.
//
// Every message is a frame: a 16-byte header (little-endian u32s: magic,
// type, id, payload length) followed by the payload.  The agent answers each
// request with one frame of the matching reply type and the same id; requests
// are served concurrently, so replies may come out of order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace o2tb::proto {

inline constexpr uint32_t kMagic = 0x4741324f;  // "O2AG"
inline constexpr uint32_t kMaxPayload = 64u << 20;
inline constexpr const char* kPortName = "o2agent";

enum Type : uint32_t {
  kPing = 1,      // payload: empty.  reply kPong: "hostname uptime"
  kRun = 2,       // payload: u32 timeout_ms, u32 flags, command (bash -c)
  kReadFile = 3,  // payload: path.  reply kFile
  kPong = 0x101,
  kRunResult = 0x102,  // payload: i32 status, u32 flags, u32 out_len, out, err
  kFile = 0x103,       // payload: i32 errno (0 = ok), content
};

enum RunFlags : uint32_t {
  kSeparateStderr = 1,  // request: stderr returned separately
  kTimedOut = 1,        // reply: killed at the deadline
  kSignaled = 2,        // reply: status = 128 + signal number
};

struct Header {
  uint32_t magic, type, id, len;
};
static_assert(sizeof(Header) == 16);

inline void put_u32(std::string& s, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);  // x86 only: little-endian both ends
  s.append(b, 4);
}
inline uint32_t get_u32(std::string_view s, size_t off) {
  uint32_t v = 0;
  if (off + 4 <= s.size()) std::memcpy(&v, s.data() + off, 4);
  return v;
}
inline std::string frame(uint32_t type, uint32_t id, std::string_view payload) {
  std::string f;
  f.reserve(sizeof(Header) + payload.size());
  put_u32(f, kMagic);
  put_u32(f, type);
  put_u32(f, id);
  put_u32(f, static_cast<uint32_t>(payload.size()));
  f.append(payload);
  return f;
}

// Extracts one complete frame from the front of buf (dropping garbage
// before a magic).  Returns false if no complete frame is there yet.
inline bool parse_frame(std::string& buf, Header& h, std::string& payload) {
  for (;;) {
    if (buf.size() < sizeof(Header)) return false;
    uint32_t magic = get_u32(buf, 0);
    uint32_t len = get_u32(buf, 12);
    if (magic != kMagic || len > kMaxPayload) {
      // resync: drop up to the next possible magic
      size_t next = buf.find("O2AG", 1);
      buf.erase(0, next == std::string::npos ? buf.size() - 3 : next);
      continue;
    }
    if (buf.size() < sizeof(Header) + len) return false;
    h = {magic, get_u32(buf, 4), get_u32(buf, 8), len};
    payload.assign(buf, sizeof(Header), len);
    buf.erase(0, sizeof(Header) + len);
    return true;
  }
}

}  // namespace o2tb::proto
