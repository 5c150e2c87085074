// o2lnd test bed: sets of guests and the links between them.
//
//   OneGuestVeth  "g1": veth0 192.168.1.1/24 <-> veth1 192.168.1.2/24 (MTU 9000),
//                 rxe0 on veth0, rxe1 on veth1, policy-routed so traffic
//                 between the two addresses really crosses the pair.
//   Guests(2)     "g1" eth0 192.168.1.1/24 <-> "g2" eth0 192.168.1.2/24, rxe0 on eth0.
//   Guests(3)     router topology on two subnets:
//                 "compute" eth0 192.168.1.1 <-> "router" eth0 192.168.1.2
//                 "router"  eth1 192.168.2.2 <-> "server" eth0 192.168.2.1
//                 rxe0/rxe1 on every ethN; the router forwards IPv4.
//
// Each link is a pair of UDP sockets on 127.0.0.1, connected to each other
// (-netdev dgram on a socket the test bed opens), so a guest can be killed and
// booted again while the others run, and a full or absent peer drops frames
// instead of stalling the sender.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "guest.h"

namespace o2tb {

struct TopologyOptions {
  std::string dir;     // state folder (default $O2_RESULTS or <top>/results/testbed)
  std::string kernel;  // Kernel::find name ("" = $O2_KERNEL or debian)
  int mem_mb = 1024;
  bool die_with_parent = true;  // false: guests outlive this process (CLI `up`)
  // RDMA devices on the links: "rxe" (Soft-RoCE, rxeN; "" = rxe) or "siw"
  // (Soft-iWARP, siwN on the same netdevs: o2.siw= instead of o2.rxe=)
  std::string transport;
};

struct GuestSpec {
  std::string name;
  std::vector<std::string> ips;     // per ethN: "192.168.1.1/24"
  std::vector<std::string> params;  // extra kernel command line
};

struct LinkSpec {
  size_t a, a_if, b, b_if;  // guest index and ethN of both ends
};

class Testbed {
 public:
  Testbed(const TopologyOptions& opts, std::vector<GuestSpec> specs,
          const std::vector<LinkSpec>& links);
  static std::unique_ptr<Testbed> one_guest_veth(const TopologyOptions& o = {});
  static std::unique_ptr<Testbed> guests(int n, const TopologyOptions& o = {});
  // Two guests joined by two links, one rail each (eth0: 192.168.1.0/24,
  // eth1: 192.168.2.0/24), an RDMA device on each interface: Multi-Rail.
  static std::unique_ptr<Testbed> two_rails(const TopologyOptions& o = {});
  // compute (eth0 192.168.1.1) <-> router (eth0 192.168.1.2) and router
  // (eth1 192.168.2.2, eth2 192.168.3.2) <-> server (eth0 192.168.2.1,
  // eth1 192.168.3.1): a routed destination with two rails
  static std::unique_ptr<Testbed> router_rails(const TopologyOptions& o = {});
  // "veth", "two" (or "2"), "three" (or "3", "router"), "rails", "router-rails", "plain"
  static std::unique_ptr<Testbed> by_name(const std::string& topo, const TopologyOptions& o = {});

  // Starts every guest, then waits for all (boots overlap).
  void boot_all(std::chrono::seconds timeout = std::chrono::seconds(240));
  void kill_all();
  void detach_all();
  [[nodiscard]] size_t size() const { return guests_.size(); }
  Guest& operator[](size_t i) { return *guests_.at(i); }
  Guest& by(const std::string& name_or_index);  // "g2", "router" or "1"-based index
  [[nodiscard]] const std::string& dir() const { return dir_; }

  void mark(const std::string& label);
  std::vector<std::string> kernel_reports();  // "name: line"
  // Copies dmesg of every live guest into its folder (tag in the file name).
  void save_logs(const std::string& tag);

  // Re-attach to guests booted by an earlier process in `dir`.
  static std::unique_ptr<Testbed> attach(const std::string& dir);

 private:
  Testbed() = default;
  std::string dir_;
  std::vector<std::unique_ptr<Guest>> guests_;
};

std::string default_state_dir();

}  // namespace o2tb
