#include "o2ctl/format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "o2lnd/device.h"

namespace o2ctl {
namespace {

bool plain_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
         c == '/' || c == '@';
}

// Words that YAML 1.1 loaders read as booleans or null.
bool yaml_keyword(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 11> kWords = {"y",    "n",     "yes",  "no",  "on", "off",
                                                       "true", "false", "null", "nan", "inf"};
  return std::find(kWords.begin(), kWords.end(), lower) != kWords.end();
}

class Yaml {
 public:
  void line(int indent, std::string_view text) {
    out_.append(static_cast<std::size_t>(indent), ' ');
    out_ += text;
    out_ += '\n';
  }
  void kv(int indent, std::string_view key, std::string_view value) {
    line(indent, std::string(key) + ": " + yaml_scalar(value));
  }
  void kv(int indent, std::string_view key, std::uint64_t value) {
    line(indent, std::string(key) + ": " + std::to_string(value));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Indents of `lnetctl net show`.
constexpr int kNetItem = 4;      // "    - net type: o2ib0"
constexpr int kNetField = 6;     // "      local NI(s):"
constexpr int kNiItem = 8;       // "        - nid: ..."
constexpr int kNiField = 10;     // "          status: up"
constexpr int kNiSubField = 14;  // "              0: eth0"

void format_ni(Yaml& y, const o2lnd::NetInfo& ni, bool verbose) {
  y.line(kNiItem, "- nid: " + yaml_scalar(ni.nid.str()));
  y.kv(kNiField, "status", o2lnd::status_name(ni.status));
  if (!ni.ifname.empty()) {
    y.line(kNiField, "interfaces:");
    y.kv(kNiSubField, "0", ni.ifname);
  }
  if (!verbose) {
    return;
  }
  y.line(kNiField, "statistics:");
  y.kv(kNiSubField, "send_count", ni.send_count);
  y.kv(kNiSubField, "recv_count", ni.recv_count);
  y.kv(kNiSubField, "drop_count", ni.drop_count);
  y.kv(kNiSubField, "send_bytes", ni.send_bytes);
  y.kv(kNiSubField, "recv_bytes", ni.recv_bytes);
  y.line(kNiField, "tunables:");
  y.kv(kNiSubField, "peer_timeout", ni.timeout_s);
  y.kv(kNiSubField, "peer_credits", ni.peer_credits);
  y.kv(kNiSubField, "credits", ni.credits);
  y.kv(kNiSubField, "max_msg_size", ni.max_msg_size);
  y.line(kNiField, "lnd details:");
  if (!ni.devname.empty()) {
    y.kv(kNiSubField, "rdma device", ni.devname);
  }
  y.kv(kNiSubField, "incarnation", ni.incarnation);
  y.kv(kNiSubField, "peers", ni.npeers);
  y.kv(kNiSubField, "connections", ni.nconns);
  y.kv(kNiSubField, "established", ni.nconns_established);
  y.kv(kNiSubField, "connects_active", ni.connects_active);
  y.kv(kNiSubField, "connects_passive", ni.connects_passive);
  y.kv(kNiSubField, "rejects_sent", ni.rejects_sent);
  y.kv(kNiSubField, "rejects_received", ni.rejects_received);
}

}  // namespace

std::string yaml_scalar(std::string_view text) {
  bool plain = !text.empty() && std::all_of(text.begin(), text.end(), plain_char) &&
               text.front() != '-' && text.front() != '.' && !yaml_keyword(text) &&
               // Anything starting with a digit may read as a number unless
               // it has an '@' (a NID) in it.
               (std::isdigit(static_cast<unsigned char>(text.front())) == 0 ||
                text.find('@') != std::string_view::npos);
  if (plain) {
    return std::string(text);
  }
  std::string quoted = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (u < 0x20 || u == 0x7f) {
      constexpr std::string_view kHex = "0123456789abcdef";
      quoted += "\\x";
      quoted += kHex[u >> 4];
      quoted += kHex[u & 0xf];
    } else {
      quoted += c;
    }
  }
  quoted += '"';
  return quoted;
}

std::string format_ping(const o2lnd::PingResult& result) {
  std::string out;
  for (const auto& id : result.ids) {
    out += std::to_string(result.pid) + "-" + id.nid.str() + "\n";
  }
  return out;
}

std::string format_net_show(const std::vector<o2lnd::NetInfo>& nis, bool verbose) {
  if (nis.empty()) {
    return "net: []\n";
  }
  std::vector<std::string> nets;
  for (const auto& ni : nis) {
    if (std::find(nets.begin(), nets.end(), ni.net) == nets.end()) {
      nets.push_back(ni.net);
    }
  }
  Yaml y;
  y.line(0, "net:");
  for (const auto& net : nets) {
    y.line(kNetItem, "- net type: " + yaml_scalar(net));
    y.line(kNetField, "local NI(s):");
    for (const auto& ni : nis) {
      if (ni.net == net) {
        format_ni(y, ni, verbose);
      }
    }
  }
  return y.take();
}

std::string format_version(std::string_view tool_version, const o2lnd::VersionInfo* module) {
  Yaml y;
  y.kv(0, "o2ctl version", tool_version);
  y.kv(0, "o2ctl abi", std::uint64_t{o2lnd::kAbiVersion});
  if (module != nullptr) {
    y.kv(0, "module version", module->module_version);
    y.kv(0, "module abi", std::uint64_t{module->abi_version});
  }
  return y.take();
}

}  // namespace o2ctl
