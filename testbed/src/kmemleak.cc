#include "kmemleak.h"

#include <cstdlib>
#include <sstream>

namespace o2tb {

std::vector<LeakObject> parse_kmemleak(const std::string& report) {
  std::vector<LeakObject> v;
  std::istringstream is(report);
  std::string l;
  while (std::getline(is, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.rfind("unreferenced object", 0) == 0) {
      v.emplace_back();
    } else if (v.empty()) {
      continue;
    }
    auto p = l.find("(age ");
    if (p != std::string::npos && v.back().age < 0) {
      v.back().age = std::strtod(l.c_str() + p + 5, nullptr);
    }
    v.back().text += l + "\n";
  }
  return v;
}

size_t leak_window(const std::vector<double>& starts, double now, double age) {
  const double born = age >= 0 ? now - age : now;
  size_t i = 0;
  for (size_t j = 0; j < starts.size(); j++) {
    if (starts[j] <= born + 0.05) i = j;
  }
  return i;
}

}  // namespace o2tb
