#include "o2lnd/nid.h"

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "o2lnd/uapi.h"

namespace o2lnd {
namespace {

Nid parse_ok(std::string_view s) {
  auto r = Nid::parse(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : Nid();
}

// The reason parse() gives for rejecting `s` (and that it is EINVAL).
std::string reason(std::string_view s) {
  auto r = Nid::parse(s);
  EXPECT_FALSE(r.ok()) << "'" << s << "' was accepted as " << (r.ok() ? r->str() : "");
  if (r.ok()) {
    return "";
  }
  EXPECT_EQ(r.error().errnum, EINVAL);
  return r.error().message;
}

TEST(NidParse, O2ibWithNetworkNumberHasTheLnetLayout) {
  Nid n = parse_ok("192.168.1.2@o2ib0");
  EXPECT_EQ(n.raw(), 0x00050000c0a80102ULL);
  EXPECT_EQ(n.type(), O2LND_NET_TYPE_O2IB);
  EXPECT_EQ(n.number(), 0);
  EXPECT_EQ(n.addr(), 0xc0a80102U);
  EXPECT_EQ(n.net(), 0x00050000U);
}

TEST(NidParse, O2ibWithoutNumberIsNetZero) {
  EXPECT_EQ(parse_ok("192.168.1.2@o2ib"), parse_ok("192.168.1.2@o2ib0"));
}

TEST(NidParse, O2ibNetworkNumberGoesInBits32To47) {
  EXPECT_EQ(parse_ok("192.168.1.2@o2ib3").raw(), 0x00050003c0a80102ULL);
}

TEST(NidParse, LoopbackIsTheUapiLoNid) {
  EXPECT_EQ(parse_ok("0@lo").raw(), O2LND_LO_NID);
  EXPECT_EQ(Nid::loopback().raw(), O2LND_LO_NID);
}

TEST(NidParse, LoWithNumberZeroIsLoopback) { EXPECT_EQ(parse_ok("0@lo0"), Nid::loopback()); }

TEST(NidParse, TcpIsType2) {
  EXPECT_EQ(parse_ok("10.0.0.1@tcp").raw(), 0x000200000a000001ULL);
  EXPECT_EQ(parse_ok("10.0.0.1@tcp7").raw(), 0x000200070a000001ULL);
}

TEST(NidParse, AcceptsLowestAndHighestAddress) {
  EXPECT_EQ(parse_ok("0.0.0.0@o2ib0").addr(), 0U);
  EXPECT_EQ(parse_ok("255.255.255.255@o2ib0").addr(), 0xffffffffU);
}

TEST(NidParse, AcceptsNetworkNumber65535) {
  EXPECT_EQ(parse_ok("1.2.3.4@o2ib65535").number(), 65535);
}

TEST(NidParse, RejectsEmpty) { EXPECT_EQ(reason(""), "empty NID"); }

TEST(NidParse, RejectsMissingAt) {
  EXPECT_NE(reason("192.168.1.2").find("missing '@'"), std::string::npos);
}

TEST(NidParse, RejectsEmptyAddress) {
  EXPECT_NE(reason("@o2ib0").find("empty address"), std::string::npos);
}

TEST(NidParse, RejectsEmptyNetwork) {
  EXPECT_NE(reason("192.168.1.2@").find("empty network"), std::string::npos);
}

TEST(NidParse, RejectsTwoAts) {
  EXPECT_NE(reason("1.2.3.4@@o2ib").find("more than one '@'"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib0@x").find("more than one '@'"), std::string::npos);
}

TEST(NidParse, RejectsOctetAbove255) {
  EXPECT_NE(reason("256.1.1.1@o2ib0").find("octet 256 out of range (0..255)"), std::string::npos);
  EXPECT_NE(reason("1.1.1.256@o2ib0").find("octet 256 out of range"), std::string::npos);
  EXPECT_NE(reason("1.999.1.1@o2ib0").find("octet 999 out of range"), std::string::npos);
}

TEST(NidParse, RejectsOctetWithFourDigits) {
  EXPECT_NE(reason("1000.1.1.1@o2ib0").find("out of range"), std::string::npos);
  EXPECT_NE(reason("1.1.1.00001@o2ib0").find("out of range"), std::string::npos);
}

TEST(NidParse, RejectsOctetWithLeadingZero) {
  EXPECT_NE(reason("01.2.3.4@o2ib0").find("leading zero"), std::string::npos);
  EXPECT_NE(reason("1.2.3.010@o2ib0").find("leading zero"), std::string::npos);
}

TEST(NidParse, RejectsTooFewOctets) {
  EXPECT_NE(reason("1.2.3@o2ib0").find("too few octets"), std::string::npos);
  EXPECT_NE(reason("1@o2ib0").find("too few octets"), std::string::npos);
  EXPECT_NE(reason("0@o2ib0").find("too few octets"), std::string::npos);
}

TEST(NidParse, RejectsTooManyOctets) {
  EXPECT_NE(reason("1.2.3.4.5@o2ib0").find("too many octets"), std::string::npos);
}

TEST(NidParse, RejectsEmptyOctets) {
  EXPECT_NE(reason("1..2.3@o2ib0").find("unexpected character '.'"), std::string::npos);
  EXPECT_NE(reason(".1.2.3@o2ib0").find("unexpected character '.'"), std::string::npos);
  EXPECT_NE(reason("1.2.3.@o2ib0").find("ends with '.'"), std::string::npos);
}

TEST(NidParse, RejectsLeadingJunk) {
  EXPECT_NE(reason("x1.2.3.4@o2ib0").find("unexpected character 'x'"), std::string::npos);
  EXPECT_NE(reason("-1.2.3.4@o2ib0").find("unexpected character '-'"), std::string::npos);
  EXPECT_NE(reason("+1.2.3.4@o2ib0").find("unexpected character '+'"), std::string::npos);
}

TEST(NidParse, RejectsTrailingJunkInAddress) {
  EXPECT_NE(reason("1.2.3.4x@o2ib0").find("unexpected character 'x'"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4/24@o2ib0").find("unexpected character '/'"), std::string::npos);
}

TEST(NidParse, RejectsTrailingJunkInNetwork) {
  EXPECT_NE(reason("1.2.3.4@o2ib0x").find("unknown network type"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib-1").find("unexpected character '-'"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib0\n").find("unexpected character '\\x0a'"), std::string::npos);
}

TEST(NidParse, RejectsSpacesAnywhere) {
  for (std::string_view s :
       {" 1.2.3.4@o2ib0", "1.2.3.4 @o2ib0", "1.2.3.4@ o2ib0", "1.2.3.4@o2ib0 ", "1.2. 3.4@o2ib0"}) {
    EXPECT_NE(reason(s).find("' ' (space)"), std::string::npos) << "'" << s << "'";
  }
}

TEST(NidParse, RejectsUnknownNetworkType) {
  EXPECT_NE(reason("1.2.3.4@ib0").find("unknown network type in 'ib0'"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@gni").find("unknown network type"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2").find("unknown network type"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@123").find("unknown network type"), std::string::npos);
}

TEST(NidParse, NetworkTypeIsCaseSensitive) {
  EXPECT_NE(reason("1.2.3.4@O2IB0").find("unexpected character 'O'"), std::string::npos);
}

TEST(NidParse, RejectsNetworkNumberAbove65535) {
  EXPECT_NE(reason("1.2.3.4@o2ib65536").find("network number 65536 out of range (0..65535)"),
            std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib99999").find("out of range"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib123456").find("out of range"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib99999999999999999999").find("out of range"), std::string::npos);
}

TEST(NidParse, RejectsNetworkNumberWithLeadingZero) {
  EXPECT_NE(reason("1.2.3.4@o2ib00").find("leading zero"), std::string::npos);
  EXPECT_NE(reason("1.2.3.4@o2ib01").find("leading zero"), std::string::npos);
}

TEST(NidParse, RejectsLoAddressOtherThanZero) {
  EXPECT_NE(reason("1@lo").find("only address 0"), std::string::npos);
  EXPECT_NE(reason("00@lo").find("only address 0"), std::string::npos);
  EXPECT_NE(reason("127.0.0.1@lo").find("only address 0"), std::string::npos);
}

TEST(NidParse, RejectsLoWithNonZeroNumber) {
  EXPECT_NE(reason("0@lo1").find("only number 0"), std::string::npos);
}

TEST(NidFormat, AlwaysWritesTheNetworkNumber) {
  EXPECT_EQ(Nid::from_parts(O2LND_NET_TYPE_O2IB, 0, 0xc0a80102).str(), "192.168.1.2@o2ib0");
  EXPECT_EQ(Nid::from_parts(O2LND_NET_TYPE_O2IB, 3, 0x0a000001).str(), "10.0.0.1@o2ib3");
  EXPECT_EQ(Nid::from_parts(2, 1, 0x0a000001).str(), "10.0.0.1@tcp1");
}

TEST(NidFormat, LoopbackIsZeroAtLo) { EXPECT_EQ(Nid::loopback().str(), "0@lo"); }

TEST(NidFormat, AnyIsLnetNidAny) {
  EXPECT_EQ(Nid(O2LND_NID_ANY).str(), "LNET_NID_ANY");
  EXPECT_TRUE(Nid(O2LND_NID_ANY).is_any());
}

TEST(NidFormat, UnknownTypeShowsTypeAndNumber) {
  EXPECT_EQ(Nid::from_parts(7, 3, 0x1f).str(), "0x1f@<7:3>");
  EXPECT_EQ(net_name((7U << 16) | 3), "<7:3>");
}

TEST(NidFormat, NetNames) {
  EXPECT_EQ(net_name(O2LND_NET_TYPE_O2IB << 16), "o2ib0");
  EXPECT_EQ(net_name((O2LND_NET_TYPE_O2IB << 16) | 65535), "o2ib65535");
  EXPECT_EQ(net_name(O2LND_NET_TYPE_LO << 16), "lo");
  EXPECT_EQ(net_name(2U << 16), "tcp0");
}

TEST(NidRoundTrip, CanonicalStringsComeBackExactly) {
  for (std::string_view s :
       {"192.168.1.2@o2ib0", "192.168.1.2@o2ib3", "0@lo", "0.0.0.0@o2ib0",
        "255.255.255.255@o2ib65535", "10.0.0.1@tcp0", "10.0.0.1@tcp12", "1.22.133.4@o2ib10"}) {
    EXPECT_EQ(parse_ok(s).str(), s);
  }
}

TEST(NidRoundTrip, EveryOctetValueInEveryPosition) {
  for (int pos = 0; pos < 4; ++pos) {
    for (std::uint32_t v = 0; v < 256; ++v) {
      Nid n = Nid::from_parts(O2LND_NET_TYPE_O2IB, 1,
                              (0x01020304U & ~(0xffU << (8 * pos))) | (v << (8 * pos)));
      auto back = Nid::parse(n.str());
      ASSERT_TRUE(back.ok()) << n.str();
      EXPECT_EQ(*back, n) << n.str();
    }
  }
}

TEST(NidRoundTrip, EveryNetworkNumber) {
  for (std::uint32_t num = 0; num <= 0xffff; ++num) {
    for (std::uint16_t type : {std::uint16_t{2}, std::uint16_t{O2LND_NET_TYPE_O2IB}}) {
      Nid n = Nid::from_parts(type, static_cast<std::uint16_t>(num), 0xc0a80102);
      auto back = Nid::parse(n.str());
      ASSERT_TRUE(back.ok()) << n.str();
      ASSERT_EQ(*back, n) << n.str();
    }
  }
}

TEST(NidRoundTrip, PseudoRandomAddresses) {
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    Nid n = Nid::from_parts(O2LND_NET_TYPE_O2IB, static_cast<std::uint16_t>(x >> 40),
                            static_cast<std::uint32_t>(x));
    auto back = Nid::parse(n.str());
    ASSERT_TRUE(back.ok()) << n.str();
    ASSERT_EQ(*back, n);
  }
}

TEST(Ipv4, ParseAndFormat) {
  auto a = parse_ipv4("10.1.2.3");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 0x0a010203U);
  EXPECT_EQ(format_ipv4(0x0a010203U), "10.1.2.3");
  EXPECT_FALSE(parse_ipv4("").ok());
}

}  // namespace
}  // namespace o2lnd
