#include "o2lnd/nid.h"

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace o2lnd {
namespace {

struct NetTypeName {
  NetType type;
  std::string_view name;
};

constexpr NetTypeName kNetTypes[] = {
    {NetType::kTcp, "tcp"},
    {NetType::kO2ib, "o2ib"},
    {NetType::kLo, "lo"},
};

std::optional<NetType> TypeByName(std::string_view name) {
  for (const auto& t : kNetTypes) {
    if (t.name == name) {
      return t.type;
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> NameByType(std::uint16_t type) {
  for (const auto& t : kNetTypes) {
    if (static_cast<std::uint16_t>(t.type) == type) {
      return t.name;
    }
  }
  return std::nullopt;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Shows a character in an error message; control characters as \xNN.
std::string Shown(char c) {
  if (c == ' ') {
    return "' ' (space)";
  }
  auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) {
    constexpr std::string_view kHex = "0123456789abcdef";
    return std::string("'\\x") + kHex[u >> 4] + kHex[u & 0xf] + "'";
  }
  return std::string("'") + c + "'";
}

Error Invalid(std::string message) { return Error{EINVAL, std::move(message)}; }

}  // namespace

Result<std::uint32_t> parse_ipv4(std::string_view text) {
  if (text.empty()) {
    return Invalid("empty IPv4 address");
  }
  std::uint32_t addr = 0;
  int octets = 0;
  std::size_t i = 0;
  while (true) {
    if (i >= text.size() || !IsDigit(text[i])) {
      if (i >= text.size()) {
        return Invalid("IPv4 address '" + std::string(text) + "' ends with '.'");
      }
      return Invalid("unexpected character " + Shown(text[i]) + " in IPv4 address '" +
                     std::string(text) + "'");
    }
    std::size_t start = i;
    std::uint32_t value = 0;
    while (i < text.size() && IsDigit(text[i])) {
      if (i - start >= 3) {
        return Invalid("octet '" + std::string(text.substr(start, i - start + 1)) +
                       "...' out of range (0..255) in IPv4 address '" + std::string(text) + "'");
      }
      value = value * 10 + static_cast<std::uint32_t>(text[i] - '0');
      ++i;
    }
    std::string_view octet = text.substr(start, i - start);
    if (value > 255) {
      return Invalid("octet " + std::string(octet) + " out of range (0..255) in IPv4 address '" +
                     std::string(text) + "'");
    }
    if (octet.size() > 1 && octet[0] == '0') {
      return Invalid("octet '" + std::string(octet) + "' has a leading zero in IPv4 address '" +
                     std::string(text) + "'");
    }
    addr = (addr << 8) | value;
    ++octets;
    if (i == text.size()) {
      break;
    }
    if (text[i] != '.') {
      return Invalid("unexpected character " + Shown(text[i]) + " in IPv4 address '" +
                     std::string(text) + "'");
    }
    if (octets == 4) {
      return Invalid("too many octets in IPv4 address '" + std::string(text) + "' (expected 4)");
    }
    ++i;  // the '.'
  }
  if (octets != 4) {
    return Invalid("too few octets in IPv4 address '" + std::string(text) + "' (expected 4)");
  }
  return addr;
}

std::string format_ipv4(std::uint32_t addr) {
  return std::to_string(addr >> 24) + "." + std::to_string((addr >> 16) & 0xff) + "." +
         std::to_string((addr >> 8) & 0xff) + "." + std::to_string(addr & 0xff);
}

std::string net_name(std::uint32_t net) {
  auto type = static_cast<std::uint16_t>(net >> 16);
  auto number = static_cast<std::uint16_t>(net & 0xffff);
  auto name = NameByType(type);
  if (!name) {
    return "<" + std::to_string(type) + ":" + std::to_string(number) + ">";
  }
  if (type == static_cast<std::uint16_t>(NetType::kLo) && number == 0) {
    return "lo";
  }
  return std::string(*name) + std::to_string(number);
}

std::string Nid::str() const {
  if (is_any()) {
    return "LNET_NID_ANY";
  }
  std::string net = net_name(this->net());
  switch (static_cast<NetType>(type())) {
    case NetType::kTcp:
    case NetType::kO2ib:
      return format_ipv4(addr()) + "@" + net;
    case NetType::kLo:
      return std::to_string(addr()) + "@" + net;
  }
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string hex;
  std::uint32_t a = addr();
  do {
    hex.insert(hex.begin(), kHex[a & 0xf]);
    a >>= 4;
  } while (a != 0);
  return "0x" + hex + "@" + net;
}

Result<Nid> Nid::parse(std::string_view text) {
  if (text.empty()) {
    return Invalid("empty NID");
  }
  auto at = text.find('@');
  if (at == std::string_view::npos) {
    return Invalid("missing '@' (expected ADDRESS@NETWORK, e.g. 192.168.1.2@o2ib0)");
  }
  std::string_view address = text.substr(0, at);
  std::string_view network = text.substr(at + 1);
  if (network.find('@') != std::string_view::npos) {
    return Invalid("more than one '@'");
  }
  if (address.empty()) {
    return Invalid("empty address before '@'");
  }
  if (network.empty()) {
    return Invalid("empty network after '@'");
  }

  // network = TYPE [NUMBER]; the type is letters and digits but ends before
  // the trailing decimal number ("o2ib3" -> "o2ib", 3).
  std::size_t digits = network.size();
  while (digits > 0 && IsDigit(network[digits - 1])) {
    --digits;
  }
  std::string_view type_name = network.substr(0, digits);
  std::string_view number_text = network.substr(digits);
  for (char c : network) {
    if (!IsDigit(c) && !(c >= 'a' && c <= 'z')) {
      return Invalid("unexpected character " + Shown(c) + " in network '" + std::string(network) +
                     "'");
    }
  }
  auto type = TypeByName(type_name);
  if (!type) {
    return Invalid("unknown network type in '" + std::string(network) +
                   "' (known types: o2ib, tcp, lo)");
  }
  std::uint32_t number = 0;
  if (!number_text.empty()) {
    if (number_text.size() > 1 && number_text[0] == '0') {
      return Invalid("network number '" + std::string(number_text) + "' has a leading zero");
    }
    if (number_text.size() > 5) {
      return Invalid("network number " + std::string(number_text) + " out of range (0..65535)");
    }
    for (char c : number_text) {
      number = number * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (number > kMaxNetNumber) {
      return Invalid("network number " + std::string(number_text) + " out of range (0..65535)");
    }
  }

  std::uint32_t addr = 0;
  if (*type == NetType::kLo) {
    if (number != 0) {
      return Invalid("network lo has only number 0");
    }
    if (address != "0") {
      return Invalid("the lo network has only address 0 (0@lo), not '" + std::string(address) +
                     "'");
    }
  } else {
    auto ip = parse_ipv4(address);
    if (!ip) {
      return ip.error();
    }
    addr = *ip;
  }
  return from_parts(static_cast<std::uint16_t>(*type), static_cast<std::uint16_t>(number), addr);
}

}  // namespace o2lnd
