// Reading the kernel's kmemleak report (/sys/kernel/debug/kmemleak) and
// charging each unreferenced object to the test that allocated it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace o2tb {

// One "unreferenced object" block of a kmemleak report: its text (all its
// lines) and the age (s) kmemleak gives it ("jiffies N (age 12.345s)"),
// -1 when the block has none.
struct LeakObject {
  double age = -1;
  std::string text;
};

// The blocks of a report, in order; lines before the first block are
// ignored.
std::vector<LeakObject> parse_kmemleak(const std::string& report);

// Which of a sequence of windows (their start times, ascending, in the
// guest's uptime) was open when an object was allocated, given the uptime
// `now` at which the report was read and the object's age (-1: unknown,
// charged to the last window).  An object born before the first start is
// charged to the first window; 50 ms of slack covers the difference of
// kmemleak's jiffies and the uptime clock.  `starts` must not be empty.
size_t leak_window(const std::vector<double>& starts, double now, double age);

}  // namespace o2tb
