#include "o2lnd/names.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "o2lnd/result.h"
#include "o2lnd/uapi.h"

namespace o2lnd {
namespace {

constexpr EnumName kPeerStates[] = {
    {O2LND_PEER_IDLE, "idle"},
    {O2LND_PEER_CONNECTING, "connecting"},
    {O2LND_PEER_ESTABLISHED, "established"},
    {O2LND_PEER_BACKOFF, "backoff"},
};
static_assert(std::size(kPeerStates) == O2LND_PEER_NSTATES);

constexpr EnumName kConnStates[] = {
    {O2LND_CONN_INIT, "init"},
    {O2LND_CONN_ACTIVE_CONNECT, "active_connect"},
    {O2LND_CONN_PASSIVE_WAIT, "passive_wait"},
    {O2LND_CONN_ESTABLISHED, "established"},
    {O2LND_CONN_CLOSING, "closing"},
    {O2LND_CONN_ZOMBIE, "zombie"},
};
static_assert(std::size(kConnStates) == O2LND_CONN_NSTATES);

constexpr EnumName kPhases[] = {
    {O2LND_PHASE_NONE, "none"},
    {O2LND_PHASE_ADDR, "addr"},
    {O2LND_PHASE_ROUTE, "route"},
    {O2LND_PHASE_CONNECT, "connect"},
};

constexpr EnumName kRejectReasons[] = {
    {O2LND_REJECT_CONN_RACE, "conn_race"},
    {O2LND_REJECT_NO_RESOURCES, "no_resources"},
    {O2LND_REJECT_FATAL, "fatal"},
    {O2LND_REJECT_CONN_UNCOMPAT, "conn_uncompat"},
    {O2LND_REJECT_CONN_STALE, "conn_stale"},
    {O2LND_REJECT_RDMA_FRAGS, "rdma_frags"},
    {O2LND_REJECT_MSG_QUEUE_SIZE, "msg_queue_size"},
    {O2LND_REJECT_INVALID_SRV_ID, "invalid_srv_id"},
    {O2LND_REJECT_EARLY, "early"},
};
static_assert(std::size(kRejectReasons) == O2LND_REJECT_MAX);

constexpr EnumName kCmEvents[] = {
    {O2LND_CM_ADDR_RESOLVED, "addr_resolved"},
    {O2LND_CM_ADDR_ERROR, "addr_error"},
    {O2LND_CM_ROUTE_RESOLVED, "route_resolved"},
    {O2LND_CM_ROUTE_ERROR, "route_error"},
    {O2LND_CM_CONNECT_REQUEST, "connect_request"},
    {O2LND_CM_CONNECT_RESPONSE, "connect_response"},
    {O2LND_CM_CONNECT_ERROR, "connect_error"},
    {O2LND_CM_UNREACHABLE, "unreachable"},
    {O2LND_CM_REJECTED, "rejected"},
    {O2LND_CM_ESTABLISHED, "established"},
    {O2LND_CM_DISCONNECTED, "disconnected"},
    {O2LND_CM_DEVICE_REMOVAL, "device_removal"},
    {O2LND_CM_MULTICAST_JOIN, "multicast_join"},
    {O2LND_CM_MULTICAST_ERROR, "multicast_error"},
    {O2LND_CM_ADDR_CHANGE, "addr_change"},
    {O2LND_CM_TIMEWAIT_EXIT, "timewait_exit"},
};
static_assert(std::size(kCmEvents) == O2LND_CM_NEVENTS);

// o2iblnd's IBLND_MSG_* (not in the uapi header: they are wire values).
constexpr EnumName kMsgTypes[] = {
    {0x00, "any"},      {0xd0, "noop"},    {0xd1, "immediate"},
    {0xd2, "put_req"},  {0xd3, "put_nak"}, {0xd4, "put_ack"},
    {0xd5, "put_done"}, {0xd6, "get_req"}, {0xd7, "get_done"},
};

constexpr EnumName kFaultKinds[] = {
    {O2LND_FAULT_CM_DROP, "cm-drop"},       {O2LND_FAULT_CM_DELAY, "cm-delay"},
    {O2LND_FAULT_STALL, "stall"},           {O2LND_FAULT_REJECT, "reject"},
    {O2LND_FAULT_MSG_DROP, "msg-drop"},     {O2LND_FAULT_MSG_CORRUPT, "msg-corrupt"},
    {O2LND_FAULT_SEND_DELAY, "send-delay"}, {O2LND_FAULT_INV_FAIL, "inv-fail"},
    {O2LND_FAULT_POST_FAIL, "post-fail"},
};
static_assert(std::size(kFaultKinds) == O2LND_FAULT_MAX);

constexpr EnumName kHealths[] = {
    {O2LND_HEALTH_UP, "up"},
    {O2LND_HEALTH_DOWN, "down"},
};

constexpr EnumName kRtrPools[] = {
    {O2LND_RTR_TINY, "tiny"},
    {O2LND_RTR_SMALL, "small"},
    {O2LND_RTR_LARGE, "large"},
};
static_assert(std::size(kRtrPools) == O2LND_RTR_NPOOLS);

// Lower case, '-' as '_'.
std::string normalized(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(c));
  });
  return out;
}

}  // namespace

std::span<const EnumName> names(NameKind kind) {
  switch (kind) {
    case NameKind::kPeerState:
      return kPeerStates;
    case NameKind::kConnState:
      return kConnStates;
    case NameKind::kPhase:
      return kPhases;
    case NameKind::kRejectReason:
      return kRejectReasons;
    case NameKind::kCmEvent:
      return kCmEvents;
    case NameKind::kMsgType:
      return kMsgTypes;
    case NameKind::kFaultKind:
      return kFaultKinds;
    case NameKind::kHealth:
      return kHealths;
    case NameKind::kRtrPool:
      return kRtrPools;
  }
  return {};
}

std::string_view kind_noun(NameKind kind) {
  switch (kind) {
    case NameKind::kPeerState:
      return "peer state";
    case NameKind::kConnState:
      return "connection state";
    case NameKind::kPhase:
      return "connect phase";
    case NameKind::kRejectReason:
      return "reject reason";
    case NameKind::kCmEvent:
      return "CM event";
    case NameKind::kMsgType:
      return "message type";
    case NameKind::kFaultKind:
      return "fault kind";
    case NameKind::kHealth:
      return "peer health";
    case NameKind::kRtrPool:
      return "router buffer pool";
  }
  return "value";
}

std::string name_of(NameKind kind, std::uint32_t value) {
  for (const auto& n : names(kind)) {
    if (n.value == value) {
      return std::string(n.name);
    }
  }
  return "unknown(" + std::to_string(value) + ")";
}

std::string reject_reason_name(std::uint32_t v) {
  return v == 0 ? std::string("none") : name_of(NameKind::kRejectReason, v);
}

Result<std::uint32_t> parse_name(NameKind kind, std::string_view text) {
  std::string want = normalized(text);
  std::string known;
  for (const auto& n : names(kind)) {
    if (normalized(n.name) == want) {
      return n.value;
    }
    known += known.empty() ? "" : ", ";
    known += n.name;
  }
  return Error{EINVAL, "unknown " + std::string(kind_noun(kind)) + " '" + std::string(text) +
                           "' (one of: " + known + ")"};
}

}  // namespace o2lnd
