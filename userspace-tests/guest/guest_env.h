// Settings of the guest ABI tests, from flags or the environment:
//   --device=PATH       O2LND_DEVICE        default /dev/o2lnd
//   --peer-nid=NID      O2LND_PEER_NID      a reachable peer (positive pings)
//   --unowned-nid=NID   O2LND_UNOWNED_NID   an address in a configured net
//                                           that nobody owns (ETIMEDOUT)
//   --ping-self         O2LND_PING_SELF=1   also ping this node's own NIDs
#pragma once

#include <string>

namespace o2lnd::guest {

struct Settings {
  std::string device = "/dev/o2lnd";
  std::string peer_nid;
  std::string unowned_nid;
  bool ping_self = false;
};

const Settings& settings();

}  // namespace o2lnd::guest
