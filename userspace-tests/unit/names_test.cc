#include "o2lnd/names.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "o2lnd/uapi.h"

namespace o2lnd {
namespace {

constexpr NameKind kAllKinds[] = {
    NameKind::kPeerState,    NameKind::kConnState, NameKind::kPhase,
    NameKind::kRejectReason, NameKind::kCmEvent,   NameKind::kMsgType,
    NameKind::kFaultKind,    NameKind::kHealth,    NameKind::kRtrPool,
};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::vector<std::string> all_names(NameKind kind) {
  std::vector<std::string> out;
  for (const auto& n : names(kind)) {
    out.emplace_back(n.name);
  }
  return out;
}

TEST(Names, EveryNameRoundTripsForEveryKind) {
  for (NameKind kind : kAllKinds) {
    SCOPED_TRACE(std::string(kind_noun(kind)));
    ASSERT_FALSE(names(kind).empty());
    for (const auto& n : names(kind)) {
      EXPECT_EQ(name_of(kind, n.value), n.name);
      auto v = parse_name(kind, n.name);
      ASSERT_TRUE(v.ok()) << n.name << ": " << v.error().message;
      EXPECT_EQ(*v, n.value) << n.name;
    }
  }
}

TEST(Names, EveryValueOfEveryKindFormatsAndParsesBack) {
  for (NameKind kind : kAllKinds) {
    for (std::uint32_t v = 0; v < 0x100; ++v) {
      std::string name = name_of(kind, v);
      if (name.starts_with("unknown(")) {
        EXPECT_FALSE(parse_name(kind, name).ok()) << name;
        continue;
      }
      EXPECT_EQ(*parse_name(kind, name), v) << kind_noun(kind) << " " << name;
    }
  }
}

TEST(Names, ParseIsCaseInsensitiveAndTakesDashOrUnderscore) {
  for (NameKind kind : kAllKinds) {
    for (const auto& n : names(kind)) {
      std::string up = upper(std::string(n.name));
      std::string dashed(n.name);
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      std::string underscored(n.name);
      std::replace(underscored.begin(), underscored.end(), '-', '_');
      EXPECT_EQ(*parse_name(kind, up), n.value) << up;
      EXPECT_EQ(*parse_name(kind, dashed), n.value) << dashed;
      EXPECT_EQ(*parse_name(kind, underscored), n.value) << underscored;
    }
  }
  EXPECT_EQ(*parse_name(NameKind::kCmEvent, "Connect-Request"), O2LND_CM_CONNECT_REQUEST);
  EXPECT_EQ(*parse_name(NameKind::kFaultKind, "CM_DROP"), O2LND_FAULT_CM_DROP);
}

TEST(Names, UnknownNameIsEinvalListingTheKnownOnes) {
  auto r = parse_name(NameKind::kPhase, "bogus");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_EQ(r.error().message,
            "unknown connect phase 'bogus' (one of: none, addr, route, connect)");
  EXPECT_FALSE(parse_name(NameKind::kCmEvent, "").ok());
  EXPECT_FALSE(parse_name(NameKind::kCmEvent, "connect_request ").ok());
  EXPECT_FALSE(parse_name(NameKind::kMsgType, "0xd0").ok()) << "names only, not numbers";
}

TEST(Names, UnknownValueFormatsAsUnknownN) {
  EXPECT_EQ(peer_state_name(O2LND_PEER_NSTATES), "unknown(4)");
  EXPECT_EQ(conn_state_name(99), "unknown(99)");
  EXPECT_EQ(cm_event_name(O2LND_CM_NEVENTS), "unknown(16)");
  EXPECT_EQ(msg_type_name(0xd8), "unknown(216)");
  EXPECT_EQ(fault_kind_name(0), "unknown(0)");
}

TEST(Names, PeerStatesMatchTheHeader) {
  EXPECT_EQ(all_names(NameKind::kPeerState),
            (std::vector<std::string>{"idle", "connecting", "established", "backoff"}));
  EXPECT_EQ(peer_state_name(O2LND_PEER_BACKOFF), "backoff");
}

TEST(Names, ConnStatesMatchTheHeader) {
  EXPECT_EQ(all_names(NameKind::kConnState),
            (std::vector<std::string>{"init", "active_connect", "passive_wait", "established",
                                      "closing", "zombie"}));
  EXPECT_EQ(conn_state_name(O2LND_CONN_ZOMBIE), "zombie");
  EXPECT_EQ(conn_state_name(O2LND_CONN_ACTIVE_CONNECT), "active_connect");
}

TEST(Names, PhasesMatchTheHeader) {
  EXPECT_EQ(all_names(NameKind::kPhase),
            (std::vector<std::string>{"none", "addr", "route", "connect"}));
  EXPECT_EQ(phase_name(O2LND_PHASE_ROUTE), "route");
}

TEST(Names, RejectReasonsMatchTheWireValues) {
  EXPECT_EQ(
      all_names(NameKind::kRejectReason),
      (std::vector<std::string>{"conn_race", "no_resources", "fatal", "conn_uncompat", "conn_stale",
                                "rdma_frags", "msg_queue_size", "invalid_srv_id", "early"}));
  EXPECT_EQ(reject_reason_name(O2LND_REJECT_CONN_RACE), "conn_race");
  EXPECT_EQ(reject_reason_name(O2LND_REJECT_EARLY), "early");
  EXPECT_EQ(reject_reason_name(0), "none") << "0 is 'no reject yet'";
  EXPECT_FALSE(parse_name(NameKind::kRejectReason, "none").ok()) << "not a reason to reject with";
}

TEST(Names, CmEventsMatchRdmaCmEventType) {
  EXPECT_EQ(all_names(NameKind::kCmEvent),
            (std::vector<std::string>{"addr_resolved", "addr_error", "route_resolved",
                                      "route_error", "connect_request", "connect_response",
                                      "connect_error", "unreachable", "rejected", "established",
                                      "disconnected", "device_removal", "multicast_join",
                                      "multicast_error", "addr_change", "timewait_exit"}));
  EXPECT_EQ(*parse_name(NameKind::kCmEvent, "timewait_exit"), O2LND_CM_TIMEWAIT_EXIT);
  EXPECT_EQ(*parse_name(NameKind::kCmEvent, "addr_resolved"), O2LND_CM_ADDR_RESOLVED);
}

TEST(Names, MessageTypesAreO2iblndWireValues) {
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "any"), 0U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "noop"), 0xd0U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "immediate"), 0xd1U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "put_req"), 0xd2U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "put_nak"), 0xd3U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "put_ack"), 0xd4U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "put_done"), 0xd5U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "get_req"), 0xd6U);
  EXPECT_EQ(*parse_name(NameKind::kMsgType, "get_done"), 0xd7U);
}

TEST(Names, FaultKindsMatchTheHeader) {
  EXPECT_EQ(all_names(NameKind::kFaultKind),
            (std::vector<std::string>{"cm-drop", "cm-delay", "stall", "reject", "msg-drop",
                                      "msg-corrupt", "send-delay", "inv-fail", "post-fail"}));
  EXPECT_EQ(*parse_name(NameKind::kFaultKind, "POST_FAIL"), O2LND_FAULT_POST_FAIL);
  EXPECT_EQ(*parse_name(NameKind::kFaultKind, "inv-fail"), O2LND_FAULT_INV_FAIL);
  EXPECT_EQ(*parse_name(NameKind::kFaultKind, "INV_FAIL"), O2LND_FAULT_INV_FAIL);
  EXPECT_EQ(*parse_name(NameKind::kFaultKind, "send-delay"), O2LND_FAULT_SEND_DELAY);
}

TEST(Names, HealthMatchesTheHeader) {
  EXPECT_EQ(all_names(NameKind::kHealth), (std::vector<std::string>{"up", "down"}));
  EXPECT_EQ(health_name(O2LND_HEALTH_UP), "up");
  EXPECT_EQ(health_name(O2LND_HEALTH_DOWN), "down");
  EXPECT_EQ(health_name(7), "unknown(7)");
  EXPECT_EQ(*parse_name(NameKind::kHealth, "DOWN"), static_cast<std::uint32_t>(O2LND_HEALTH_DOWN));
}

TEST(Names, RouterPoolsAreTinySmallLargeInHeaderOrder) {
  EXPECT_EQ(all_names(NameKind::kRtrPool), (std::vector<std::string>{"tiny", "small", "large"}));
  EXPECT_EQ(rtr_pool_name(O2LND_RTR_TINY), "tiny");
  EXPECT_EQ(rtr_pool_name(O2LND_RTR_SMALL), "small");
  EXPECT_EQ(rtr_pool_name(O2LND_RTR_LARGE), "large");
  EXPECT_EQ(rtr_pool_name(O2LND_RTR_NPOOLS), "unknown(3)");
  EXPECT_EQ(*parse_name(NameKind::kRtrPool, "Large"), static_cast<std::uint32_t>(O2LND_RTR_LARGE));
}

}  // namespace
}  // namespace o2lnd
