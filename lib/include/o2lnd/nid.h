// LNet NIDs: parse and format "192.168.1.2@o2ib0", "0@lo", "10.0.0.1@tcp1".
//
// A NID is 64 bits: the network in the high 32 ((lnd type << 16) | network
// number), the address in the low 32.  Formatting always writes the network
// number ("@o2ib0", never "@o2ib"), as in networks="o2ib0(eth0)"; 0@lo stays
// "0@lo".  For every NID that parse() accepts, parse(n.str()) == n, and for
// every canonical string s, parse(s)->str() == s.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "o2lnd/result.h"

namespace o2lnd {

// LNet network (lnd) types that o2lnd knows by name.
enum class NetType : std::uint16_t {
  kTcp = 2,   // socklnd; IPv4 address
  kO2ib = 5,  // O2LND_NET_TYPE_O2IB; IPv4 address
  kLo = 9,    // O2LND_NET_TYPE_LO; address 0 only
};

class Nid {
 public:
  static constexpr std::uint32_t kMaxNetNumber = 0xffff;

  constexpr Nid() = default;  // 0: address 0 on net type 0 number 0 (not a real NID)
  constexpr explicit Nid(std::uint64_t raw) : raw_(raw) {}
  static constexpr Nid from_parts(std::uint16_t type, std::uint16_t number, std::uint32_t addr) {
    const std::uint64_t net = (std::uint64_t{type} << 16U) | number;
    return Nid((net << 32U) | addr);
  }
  static constexpr Nid any() { return Nid(~std::uint64_t{0}); }
  static constexpr Nid loopback() {
    return from_parts(static_cast<std::uint16_t>(NetType::kLo), 0, 0);
  }

  // Parses a NID; on failure the Error has errnum EINVAL and a message that
  // gives the reason (e.g. "octet 256 out of range (0..255)").
  static Result<Nid> parse(std::string_view text);

  [[nodiscard]] constexpr std::uint64_t raw() const { return raw_; }
  [[nodiscard]] constexpr std::uint32_t net() const {
    return static_cast<std::uint32_t>(raw_ >> 32);
  }
  [[nodiscard]] constexpr std::uint32_t addr() const { return static_cast<std::uint32_t>(raw_); }
  [[nodiscard]] constexpr std::uint16_t type() const {
    return static_cast<std::uint16_t>(raw_ >> 48);
  }
  [[nodiscard]] constexpr std::uint16_t number() const {
    return static_cast<std::uint16_t>(raw_ >> 32);
  }
  [[nodiscard]] constexpr bool is_any() const { return raw_ == any().raw_; }

  // "192.168.1.2@o2ib0", "0@lo", "LNET_NID_ANY"; a NID of an unknown type
  // formats as "0xADDR@<TYPE:NUMBER>" (never parsed back).
  [[nodiscard]] std::string str() const;

  constexpr auto operator<=>(const Nid&) const = default;

 private:
  std::uint64_t raw_ = 0;
};

// "o2ib0", "tcp1", "lo"; unknown types as "<TYPE:NUMBER>".
std::string net_name(std::uint32_t net);

// Parses dotted-quad IPv4 ("192.168.1.2") into host order; strict: four
// decimal octets 0..255, no leading zeros, nothing before or after.
Result<std::uint32_t> parse_ipv4(std::string_view text);
std::string format_ipv4(std::uint32_t addr);

}  // namespace o2lnd
