// The ABI 9 additions of include/uapi/o2lnd.h against the real module:
// O2LND_IOC_NET_ADD and O2LND_IOC_NET_DEL (networks added and deleted at
// run time).  Only refusals here: what is added or deleted is the
// integration scenarios' (MultiRail.ANetworkAddedAndDeleted...), which run
// traffic across it.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "abi_fixture.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/uapi.h"

namespace o2lnd::guest {
namespace {

o2lnd_ioc_net_cfg net_cfg(const char* net, const char* ifname) {
  auto a = make_arg<o2lnd_ioc_net_cfg>();
  const std::string n(net);
  const std::string i(ifname);
  std::memcpy(a.net, n.data(), std::min(n.size(), sizeof(a.net) - 1));
  std::memcpy(a.ifname, i.data(), std::min(i.size(), sizeof(a.ifname) - 1));
  return a;
}

class NetCfgAbiTest : public AbiTest {
 protected:
  void SetUp() override {
    AbiTest::SetUp();
    if (::geteuid() != 0) {
      GTEST_SKIP() << "NET_ADD and NET_DEL need CAP_NET_ADMIN";
    }
  }
};

TEST_F(NetCfgAbiTest, NetAddAndDelHeaderRules) {
  check_header_rules(O2LND_IOC_NET_ADD, net_cfg("o2ib9", "nope0"));
  check_header_rules(O2LND_IOC_NET_DEL, net_cfg("o2ib9", ""));
}

TEST_F(NetCfgAbiTest, NetAddAndDelWithBadPointersAreEfault) {
  check_bad_pointers(O2LND_IOC_NET_ADD, net_cfg("o2ib9", "nope0"), false);
  check_bad_pointers(O2LND_IOC_NET_DEL, net_cfg("o2ib9", ""), false);
}

TEST_F(NetCfgAbiTest, MalformedNamesAreEinval) {
  for (unsigned long cmd : {O2LND_IOC_NET_ADD, O2LND_IOC_NET_DEL}) {
    auto a = net_cfg("o2ib9", "nope0");
    std::memset(a.net, 'a', sizeof(a.net));
    expect_refused(cmd, a, EINVAL, "a network name without its NUL");
    a = net_cfg("o2ib9", "nope0");
    std::memset(a.ifname, 'e', sizeof(a.ifname));
    expect_refused(cmd, a, EINVAL, "an interface name without its NUL");
    a = net_cfg("o2ib9", "nope0");
    a.pad = 1;
    expect_refused(cmd, a, EINVAL, "nonzero pad");
    // ("o2ib" is o2ib0, as LNet reads it)
    for (const char* net : {"", "tcp0", "o2ib70000", "lo", "o2ib0 ", "o2ibx"}) {
      expect_refused(cmd, net_cfg(net, "nope0"), EINVAL, std::string("network '") + net + "'");
    }
    expect_refused(cmd, net_cfg("o2ib9", "sixteen-chars-xx"), EINVAL,
                   "an interface name longer than IFNAMSIZ - 1");
  }
  expect_refused(O2LND_IOC_NET_ADD, net_cfg("o2ib9", ""), EINVAL, "no interface to add");
}

TEST_F(NetCfgAbiTest, AddingOnAMissingInterfaceIsEnodev) {
  expect_refused(O2LND_IOC_NET_ADD, net_cfg("o2ib9", "nope0"), ENODEV, "interface nope0");
}

TEST_F(NetCfgAbiTest, DeletingWhatIsNotThereIsEnoent) {
  expect_refused(O2LND_IOC_NET_DEL, net_cfg("o2ib9", ""), ENOENT, "a network with no NI");
  expect_refused(O2LND_IOC_NET_DEL, net_cfg("o2ib9", "nope0"), ENOENT, "an interface with no NI");
}

TEST_F(NetCfgAbiTest, AddingAnNiThatExistsIsEexist) {
  for (std::uint32_t i = 0; i < net_count(); ++i) {
    auto n = make_arg<o2lnd_ioc_net>();
    n.index = i;
    ASSERT_EQ(call(O2LND_IOC_NET_SHOW, &n), 0);
    if (Nid(n.nid).type() != O2LND_NET_TYPE_O2IB) continue;
    expect_refused(O2LND_IOC_NET_ADD, net_cfg(n.net, n.ifname), EEXIST,
                   std::string(n.net) + " on " + n.ifname);
    return;
  }
  GTEST_SKIP() << "no o2ib NI";
}

}  // namespace
}  // namespace o2lnd::guest
