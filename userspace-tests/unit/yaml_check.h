// Parses YAML with python3-yaml (yaml.safe_load) and returns it as sorted
// JSON, so tests can check both that o2ctl's YAML parses and what it means.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace o2lnd::testing {

inline bool have_python_yaml() {
  static const bool have =
      std::system("python3 -c 'import yaml' >/dev/null 2>&1") == 0;  // NOLINT(*-mt-unsafe)
  return have;
}

// nullopt when the YAML does not parse.
inline std::optional<std::string> yaml_to_json(const std::string& yaml) {
  std::string path = "/tmp/o2lnd_unit_yaml_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream f(path);
    f << yaml;
  }
  std::string cmd =
      "python3 -c 'import sys, yaml, json; "
      "print(json.dumps(yaml.safe_load(open(sys.argv[1])), sort_keys=True))' " +
      path + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return std::nullopt;
  }
  std::string out;
  char buf[4096];  // NOLINT(*-avoid-c-arrays)
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) {
    out.append(buf, n);
  }
  int status = ::pclose(p);
  std::remove(path.c_str());
  if (status != 0) {
    return std::nullopt;
  }
  if (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  return out;
}

}  // namespace o2lnd::testing
