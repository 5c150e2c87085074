// o2ctl's YAML entries as flat records with exact key paths, parsed with
// yaml-cpp.  One implementation for the host unit tests (which check that
// every key the integration tests read exists in o2ctl's output) and the
// guest integration tests (which read them).
//
// An entry's keys: its top-level keys as o2ctl prints them ("tx credits"),
// nested maps joined with '.' ("lnd details.tx_live", "bulk.mr_pool.used"),
// sequence items by index ("buffers.0.pool"); a scalar is its text (quotes
// gone), a null "".
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace o2ctl_yaml {

using Record = std::map<std::string, std::string>;

// Adds the scalars of `n` to `out`, under the key path `path` ("" for the
// entry itself).
inline void flatten(const YAML::Node& n, const std::string& path, Record& out) {
  auto child = [&path](const std::string& k) { return path.empty() ? k : path + "." + k; };
  if (n.IsMap()) {
    for (const auto& kv : n) {
      flatten(kv.second, child(kv.first.Scalar()), out);
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); i++) {
      flatten(n[i], child(std::to_string(i)), out);
    }
  } else if (n.IsScalar()) {
    out[path] = n.Scalar();
  } else if (n.IsNull() && !path.empty()) {
    out[path] = "";
  }
}

inline Record flat(const YAML::Node& n) {
  Record r;
  flatten(n, "", r);
  return r;
}

// Whether `list` has entries to walk: a sequence does; a null or missing
// node is no entries; anything else sets `error` to "not a sequence".
inline bool walkable(const YAML::Node& list, std::string& error) {
  if (!list || list.IsNull()) {
    return false;
  }
  if (!list.IsSequence()) {
    error = "not a sequence";
    return false;
  }
  return true;
}

// The entries of a YAML list as records (walkable()).
inline std::vector<Record> entries(const YAML::Node& list, std::string& error) {
  std::vector<Record> v;
  if (!walkable(list, error)) {
    return v;
  }
  for (const auto& e : list) {
    v.push_back(flat(e));
  }
  return v;
}

// The NIs of `net show [-v]` (the `net:` list): one record per NI, its
// keys ("nid", "interfaces.0", "lnd details.tx_live") plus "net type" of
// its network.
inline std::vector<Record> net_nis(const YAML::Node& nets, std::string& error) {
  std::vector<Record> v;
  std::string why;
  if (!walkable(nets, why)) {
    if (!why.empty()) {
      error = "net: " + why;
    }
    return v;
  }
  for (const auto& net : nets) {
    if (!net.IsMap()) {
      error = "net: an entry that is not a map";
      return v;
    }
    for (auto& ni : entries(net["local NI(s)"], error)) {
      ni["net type"] = net["net type"] ? net["net type"].Scalar() : "";
      v.push_back(std::move(ni));
    }
  }
  return v;
}

// A document of o2ctl parsed, or why not.
struct Doc {
  YAML::Node root;
  std::string error;  // "" when it parsed
};

inline Doc load(const std::string& yaml) {
  Doc d;
  try {
    d.root = YAML::Load(yaml);
    if (!d.root.IsMap()) {
      d.error = "the document is not a map";
    }
  } catch (const YAML::Exception& e) {
    d.error = std::string("does not parse: ") + e.what();
  }
  return d;
}

// The value of top-level key `key` of `yaml`; a null node, with
// `error` set, when the text does not parse or has no such key.
inline YAML::Node top(const std::string& yaml, const std::string& key, std::string& error) {
  Doc d = load(yaml);
  if (!d.error.empty()) {
    error = d.error;
    return {};
  }
  if (!d.root[key]) {
    error = "no top-level key '" + key + "'";
    return {};
  }
  return d.root[key];
}

// The entries of the top-level list `list` of `yaml` ("peer: []" or
// "peer:" give none).  `error` is set when the text does not parse, has no
// key `list`, or its value is not a sequence.
inline std::vector<Record> parse_list(const std::string& yaml, const std::string& list,
                                      std::string& error) {
  YAML::Node n = top(yaml, list, error);
  if (!error.empty()) {
    return {};
  }
  std::string why;
  auto v = entries(n, why);
  if (!why.empty()) {
    error = list + ": " + why;
  }
  return v;
}

// The NIs of `net show [-v]` output (net_nis()).
inline std::vector<Record> parse_net_nis(const std::string& yaml, std::string& error) {
  YAML::Node n = top(yaml, "net", error);
  return error.empty() ? net_nis(n, error) : std::vector<Record>{};
}

}  // namespace o2ctl_yaml
