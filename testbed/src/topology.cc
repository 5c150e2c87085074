#include "topology.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace o2tb {

std::string default_state_dir() {
  const char* v = getenv("O2_RESULTS");
  return (v && (*v != 0) ? std::string(v) : top_dir() + "/results") + "/testbed";
}

Testbed::Testbed(const TopologyOptions& opts, std::vector<GuestSpec> specs,
                 const std::vector<LinkSpec>& links) {
  dir_ = opts.dir.empty() ? default_state_dir() : opts.dir;
  fs::create_directories(dir_);
  dir_ = fs::canonical(dir_).string();
  Kernel k = Kernel::find(opts.kernel);
  if (!opts.transport.empty() && opts.transport != "rxe" && opts.transport != "siw") {
    throw Error("unknown transport '" + opts.transport + "' (rxe, siw)");
  }
  const bool siw = opts.transport == "siw";
  std::vector<GuestConfig> cfgs(specs.size());
  for (size_t i = 0; i < specs.size(); i++) {
    GuestConfig& c = cfgs[i];
    c.name = specs[i].name;
    c.dir = dir_ + "/" + c.name;
    c.kernel = k;
    c.mem_mb = opts.mem_mb;
    c.die_with_parent = opts.die_with_parent;
    std::string ip, rxe;
    for (size_t j = 0; j < specs[i].ips.size(); j++) {
      if (specs[i].ips[j].empty()) continue;
      ip +=
          (ip.empty() ? "" : ",") + std::string("eth") + std::to_string(j) + ":" + specs[i].ips[j];
      rxe += (rxe.empty() ? "" : ",") + std::string("eth") + std::to_string(j);
    }
    if (!ip.empty()) c.params.push_back("o2.ip=" + ip);
    if (!rxe.empty()) c.params.push_back("o2.rxe=" + rxe);
    for (auto& p : specs[i].params) c.params.push_back(p);
    if (siw) {  // the same netdevs get siwN instead of rxeN
      for (auto& p : c.params) {
        if (p.rfind("o2.rxe=", 0) == 0) p = "o2.siw=" + p.substr(7);
      }
    }
  }
  for (const LinkSpec& ls : links) {
    const auto [pa, pb] = free_udp_port_pair();
    auto mac = [](size_t g, size_t i) {
      char b[32];
      snprintf(b, sizeof b, "52:54:00:12:%02zx:%02zx", g + 1, i);
      return std::string(b);
    };
    auto put = [&](size_t g, size_t ifn, uint16_t local, uint16_t remote) {
      auto& nics = cfgs.at(g).nics;
      if (nics.size() <= ifn) nics.resize(ifn + 1);
      nics[ifn] = {local, remote, mac(g, ifn)};
    };
    put(ls.a, ls.a_if, pa, pb);
    put(ls.b, ls.b_if, pb, pa);
  }
  std::ofstream list(dir_ + "/guests");
  for (auto& c : cfgs) {
    list << c.name << "\n";
    guests_.push_back(std::make_unique<Guest>(c));
  }
}

std::unique_ptr<Testbed> Testbed::one_guest_veth(const TopologyOptions& o) {
  return std::make_unique<Testbed>(
      o, std::vector<GuestSpec>{{"g1", {}, {"o2.veth=1", "o2.rxe=veth0,veth1"}}},
      std::vector<LinkSpec>{});
}

std::unique_ptr<Testbed> Testbed::guests(int n, const TopologyOptions& o) {
  if (n == 1) {
    return std::make_unique<Testbed>(o, std::vector<GuestSpec>{{"g1", {}, {}}},
                                     std::vector<LinkSpec>{});
  }
  if (n == 2) {
    return std::make_unique<Testbed>(
        o, std::vector<GuestSpec>{{"g1", {"192.168.1.1/24"}, {}}, {"g2", {"192.168.1.2/24"}, {}}},
        std::vector<LinkSpec>{{0, 0, 1, 0}});
  }
  if (n == 3) {
    return std::make_unique<Testbed>(
        o,
        std::vector<GuestSpec>{{"compute", {"192.168.1.1/24"}, {}},
                               {"router", {"192.168.1.2/24", "192.168.2.2/24"}, {"o2.forward=1"}},
                               {"server", {"192.168.2.1/24"}, {}}},
        std::vector<LinkSpec>{{0, 0, 1, 0}, {1, 1, 2, 0}});
  }
  throw Error("Guests(n): n must be 1, 2 or 3");
}

std::unique_ptr<Testbed> Testbed::two_rails(const TopologyOptions& o) {
  return std::make_unique<Testbed>(
      o,
      std::vector<GuestSpec>{{"g1", {"192.168.1.1/24", "192.168.2.1/24"}, {}},
                             {"g2", {"192.168.1.2/24", "192.168.2.2/24"}, {}}},
      std::vector<LinkSpec>{{0, 0, 1, 0}, {0, 1, 1, 1}});
}

std::unique_ptr<Testbed> Testbed::router_rails(const TopologyOptions& o) {
  return std::make_unique<Testbed>(
      o,
      std::vector<GuestSpec>{
          {"compute", {"192.168.1.1/24"}, {}},
          {"router", {"192.168.1.2/24", "192.168.2.2/24", "192.168.3.2/24"}, {"o2.forward=1"}},
          {"server", {"192.168.2.1/24", "192.168.3.1/24"}, {}}},
      std::vector<LinkSpec>{{0, 0, 1, 0}, {1, 1, 2, 0}, {1, 2, 2, 1}});
}

std::unique_ptr<Testbed> Testbed::by_name(const std::string& t, const TopologyOptions& o) {
  if (t == "veth" || t == "one" || t == "1") return one_guest_veth(o);
  if (t == "two" || t == "2") return guests(2, o);
  if (t == "three" || t == "3" || t == "router") return guests(3, o);
  if (t == "plain") return guests(1, o);
  if (t == "rails" || t == "two-rails") return two_rails(o);
  if (t == "router-rails") return router_rails(o);
  throw Error("unknown topology '" + t + "' (veth, two, three, rails, router-rails, plain)");
}

void Testbed::boot_all(std::chrono::seconds timeout) {
  for (auto& g : guests_) g->start();
  for (auto& g : guests_) g->wait_ready(timeout);
}

void Testbed::kill_all() {
  for (auto& g : guests_) g->kill();
}

void Testbed::detach_all() {
  for (auto& g : guests_) g->detach();
}

Guest& Testbed::by(const std::string& n) {
  for (auto& g : guests_) {
    if (g->name() == n) return *g;
  }
  char* end = nullptr;
  long i = strtol(n.c_str(), &end, 10);
  if (end && *end == '\0' && i >= 1 && static_cast<size_t>(i) <= guests_.size()) {
    return *guests_[i - 1];
  }
  throw Error("no guest '" + n + "'");
}

void Testbed::mark(const std::string& label) {
  for (auto& g : guests_) {
    if (g->alive()) g->mark(label);
  }
}

std::vector<std::string> Testbed::kernel_reports() {
  std::vector<std::string> out;
  for (auto& g : guests_) {
    for (auto& r : g->kernel_reports()) out.push_back(g->name() + ": " + r);
  }
  return out;
}

void Testbed::save_logs(const std::string& tag) {
  for (auto& g : guests_) g->save_dmesg(tag);
}

std::unique_ptr<Testbed> Testbed::attach(const std::string& dir) {
  std::ifstream list(dir + "/guests");
  if (!list) throw Error("no test bed in " + dir + " (o2-testbed up first)");
  std::unique_ptr<Testbed> tb(new Testbed());
  tb->dir_ = dir;
  std::string name;
  while (std::getline(list, name)) {
    if (!name.empty()) {
      std::string gdir = dir;
      gdir += "/";
      gdir += name;
      tb->guests_.push_back(Guest::attach(gdir));
    }
  }
  return tb;
}

}  // namespace o2tb
