// o2-testbed: boot a topology of QEMU guests, run commands in them, shut
// them down.  The guests outlive this program between `up` and `down`; the
// state lives in a folder (--dir, default <top>/results/testbed).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "topology.h"

using namespace o2tb;

namespace {

const char kUsage[] =
    "usage: o2-testbed [--dir DIR] COMMAND ...\n"
    "  up [TOPOLOGY] [--kernel K] [--transport T]\n"
    "                               boot guests and leave them running (default topology: two)\n"
    "                               TOPOLOGY: veth (g1 with a veth pair, rxe0+rxe1),\n"
    "                               two (g1 192.168.1.1 <-> g2 192.168.1.2),\n"
    "                               three (compute 192.168.1.1 <-> router 192.168.1.2|192.168.2.2\n"
    "                               <-> server 192.168.2.1), rails (g1 and g2 on two links:\n"
    "                               192.168.1.x and 192.168.2.x), router-rails (three, with a\n"
    "                               second link router 192.168.3.2 <-> server 192.168.3.1),\n"
    "                               plain (g1, no network)\n"
    "                               K: debian (6.1, default, or $O2_KERNEL), debian612 (6.12), "
    "test, debug, or a folder\n"
    "                               T: rxe (default: Soft-RoCE rxeN) or siw (Soft-iWARP siwN on\n"
    "                               the same interfaces; for Debian: testbed/siw-module.sh)\n"
    "  run [-t SECONDS] GUEST CMD...   run CMD (bash -c) in GUEST (name or 1-based index);\n"
    "                               prints combined output, exits with CMD's status\n"
    "                               (124 on timeout, 255 if the guest did not answer)\n"
    "  status                       guests, pids, alive or not\n"
    "  kill GUEST | boot GUEST      SIGKILL a guest / boot it again (same config)\n"
    "  pause GUEST | resume GUEST   freeze a guest's vCPUs / let them run (QEMU monitor\n"
    "                               stop / cont); a paused guest's agent does not answer\n"
    "  reports [GUEST]              kernel reports (Oops, BUG, WARNING, KASAN, lockdep...)\n"
    "  dmesg GUEST                  print the guest's dmesg\n"
    "  console GUEST                print the path of the guest's serial console log\n"
    "  down                         kill all guests\n"
    "env: O2_KERNEL, O2_CACHE (kernels under $O2_CACHE/kernels), O2_RESULTS\n";

int usage() {
  fputs(kUsage, stderr);
  return 2;
}

std::string join(const std::vector<std::string>& v, size_t from) {
  std::string s;
  for (size_t i = from; i < v.size(); i++) s += (i > from ? " " : "") + v[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  std::string dir = default_state_dir();
  while (!a.empty() && a[0] == "--dir" && a.size() > 1) {
    dir = a[1];
    a.erase(a.begin(), a.begin() + 2);
  }
  if (a.empty() || a[0] == "-h" || a[0] == "--help") return usage();
  std::string cmd = a[0];
  a.erase(a.begin());
  try {
    if (cmd == "up") {
      TopologyOptions o;
      o.dir = dir;
      o.die_with_parent = false;
      std::string topo = "two";
      for (size_t i = 0; i < a.size(); i++) {
        if (a[i] == "--kernel" && i + 1 < a.size()) {
          o.kernel = a[++i];
        } else if (a[i] == "--transport" && i + 1 < a.size()) {
          o.transport = a[++i];
        } else {
          topo = a[i];
        }
      }
      // Kill a previous test bed in this folder first.
      if (std::filesystem::exists(dir + "/guests")) {
        try {
          auto old = Testbed::attach(dir);
          old->kill_all();
        } catch (const Error&) {
        }
      }
      auto t0 = std::chrono::steady_clock::now();
      auto tb = Testbed::by_name(topo, o);
      try {
        tb->boot_all();
      } catch (...) {
        tb->kill_all();
        throw;
      }
      tb->detach_all();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      printf("o2-testbed: %s up in %.1f s (state in %s)\n", topo.c_str(), s, tb->dir().c_str());
      for (size_t i = 0; i < tb->size(); i++) {
        printf("  %zu %s  console %s\n", i + 1, (*tb)[i].name().c_str(),
               (*tb)[i].console_path().c_str());
      }
      return 0;
    }
    auto tb = Testbed::attach(dir);
    if (cmd == "run") {
      double t = 120;
      while (!a.empty() && a[0] == "-t" && a.size() > 1) {
        t = std::stod(a[1]);
        a.erase(a.begin(), a.begin() + 2);
      }
      if (a.size() < 2) return usage();
      if (a[1] == "--") a.erase(a.begin() + 1);
      Guest& g = tb->by(a[0]);
      RunResult r = g.run(join(a, 1), t);
      fwrite(r.out.data(), 1, r.out.size(), stdout);
      fflush(stdout);
      if (r.status == -1 && r.timed_out) {
        fprintf(stderr, "o2-testbed: no reply from %s\n", g.name().c_str());
        return 255;
      }
      if (r.timed_out) {
        fprintf(stderr, "o2-testbed: command timed out after %.0f s\n", t);
        return 124;
      }
      return r.status;
    }
    if (cmd == "status") {
      for (size_t i = 0; i < tb->size(); i++) {
        Guest& g = (*tb)[i];
        printf("%zu %-8s %s\n", i + 1, g.name().c_str(), g.alive() ? "running" : "down");
      }
      return 0;
    }
    if (cmd == "down") {
      tb->kill_all();
      return 0;
    }
    if (a.empty() && cmd != "reports") return usage();
    if (cmd == "kill") {
      tb->by(a[0]).kill();
      return 0;
    }
    if (cmd == "pause" || cmd == "resume") {
      Guest& g = tb->by(a[0]);
      if (cmd == "pause") {
        g.pause();
      } else {
        g.resume();
      }
      printf("o2-testbed: %s %s\n", g.name().c_str(), g.vm_status().c_str());
      return 0;
    }
    if (cmd == "boot") {
      Guest& g = tb->by(a[0]);
      g.boot();
      printf("o2-testbed: %s booted in %.1f s\n", g.name().c_str(), g.boot_seconds());
      return 0;
    }
    if (cmd == "dmesg") {
      std::string d = tb->by(a[0]).dmesg();
      fwrite(d.data(), 1, d.size(), stdout);
      return 0;
    }
    if (cmd == "console") {
      printf("%s\n", tb->by(a[0]).console_path().c_str());
      return 0;
    }
    if (cmd == "reports") {
      std::vector<std::string> r;
      if (a.empty()) {
        r = tb->kernel_reports();
      } else {
        for (auto& l : tb->by(a[0]).kernel_reports()) r.push_back(a[0] + ": " + l);
      }
      for (auto& l : r) printf("%s\n", l.c_str());
      return r.empty() ? 0 : 1;
    }
    return usage();
  } catch (const std::exception& e) {
    fprintf(stderr, "o2-testbed: %s\n", e.what());
    return 255;
  }
}
