// Names of the o2lnd ABI's enumerations (include/uapi/o2lnd.h), both ways.
//
// Every name is lower case with '_' between words ("connect_request",
// "active_connect"); fault kinds use '-' ("cm-drop") as on o2ctl's command
// line.  parse() is case-insensitive and treats '-' and '_' alike, so
// "Connect-Request" parses as O2LND_CM_CONNECT_REQUEST.  For every value v
// of a table, parse(kind, name(kind, v)) == v.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "o2lnd/result.h"

namespace o2lnd {

enum class NameKind : std::uint8_t {
  kPeerState,     // O2LND_PEER_*: idle connecting established backoff
  kConnState,     // O2LND_CONN_*: init active_connect passive_wait established closing zombie
  kPhase,         // O2LND_PHASE_*: none addr route connect
  kRejectReason,  // O2LND_REJECT_*: conn_race ... early (1..9)
  kCmEvent,       // O2LND_CM_*: addr_resolved ... timewait_exit (0..15)
  kMsgType,       // o2iblnd message types: any (0), noop (0xd0) ... get_done (0xd7)
  kFaultKind,     // O2LND_FAULT_*: cm-drop cm-delay stall reject msg-drop msg-corrupt send-delay
                  //   inv-fail post-fail
  kHealth,        // O2LND_HEALTH_*: up down
  kRtrPool,       // O2LND_RTR_*: tiny small large (router buffer pools)
};

struct EnumName {
  std::uint32_t value;
  std::string_view name;
};

// The table of a kind, in value order.
std::span<const EnumName> names(NameKind kind);

// What the values of a kind are called in messages: "peer state", "CM event".
std::string_view kind_noun(NameKind kind);

// The name of `value`; a value not in the table formats as "unknown(N)".
std::string name_of(NameKind kind, std::uint32_t value);

// The value named `text` (case-insensitive, '-' == '_').  On failure the
// Error has errnum EINVAL and says "unknown CM event 'x' (one of: ...)".
Result<std::uint32_t> parse_name(NameKind kind, std::string_view text);

// Shorthands.
inline std::string peer_state_name(std::uint32_t v) { return name_of(NameKind::kPeerState, v); }
inline std::string conn_state_name(std::uint32_t v) { return name_of(NameKind::kConnState, v); }
inline std::string phase_name(std::uint32_t v) { return name_of(NameKind::kPhase, v); }
inline std::string cm_event_name(std::uint32_t v) { return name_of(NameKind::kCmEvent, v); }
inline std::string msg_type_name(std::uint32_t v) { return name_of(NameKind::kMsgType, v); }
inline std::string fault_kind_name(std::uint32_t v) { return name_of(NameKind::kFaultKind, v); }
inline std::string health_name(std::uint32_t v) { return name_of(NameKind::kHealth, v); }
inline std::string rtr_pool_name(std::uint32_t v) { return name_of(NameKind::kRtrPool, v); }
// Reject reasons, with 0 (no reject) as "none".
std::string reject_reason_name(std::uint32_t v);

}  // namespace o2lnd
