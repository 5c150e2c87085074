// o2ctl fault add, fault del, fault list: the module's fault injection
// rules.

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/device.h"
#include "o2lnd/names.h"

namespace o2ctl::cmd {
namespace {

constexpr Option kFaultAddOptions[] = {
    {"--peer", "", true},  {"--local", "", true},       {"--count", "", true}, {"--prob", "", true},
    {"--delay", "", true}, {"--queue-depth", "", true}, {"--frags", "", true},
};

// What a reject may advertise (o2iblnd: peer_credits 2..255, 257 fragments).
constexpr std::uint32_t kMaxQueueDepth = 255;
constexpr std::uint32_t kMaxFrags = 257;

// What the ARG of a kind is called in usage messages.
std::string_view arg_word(o2lnd::NameKind kind) {
  switch (kind) {
    case o2lnd::NameKind::kCmEvent:
      return "EVENT";
    case o2lnd::NameKind::kPhase:
      return "PHASE";
    case o2lnd::NameKind::kRejectReason:
      return "REASON";
    case o2lnd::NameKind::kMsgType:
      return "TYPE";
    default:
      return "ARG";
  }
}

int run_fault_add(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "fault add";
  if (positional.empty()) {
    return usage_error(env, kCmd, "expected KIND [ARG]");
  }
  o2lnd::FaultRule rule;
  auto kind = o2lnd::parse_name(o2lnd::NameKind::kFaultKind, positional[0]);
  if (!kind) {
    return usage_error(env, kCmd, kind.error().message);
  }
  rule.kind = *kind;
  std::string kind_name = o2lnd::fault_kind_name(rule.kind);
  auto arg_kind = o2lnd::fault_arg_kind(rule.kind);
  const bool wr_arg = rule.kind == O2LND_FAULT_POST_FAIL;  // a number, not a name
  std::size_t want_positional = arg_kind || wr_arg ? 2 : 1;
  if (positional.size() < want_positional) {
    return usage_error(
        env, kCmd,
        kind_name + " needs " +
            std::string(wr_arg ? "WR (a work request, from 0)" : arg_word(*arg_kind)));
  }
  if (positional.size() > want_positional) {
    return usage_error(env, kCmd,
                       "unexpected argument '" + std::string(positional[want_positional]) + "'");
  }
  if (arg_kind) {
    auto arg = o2lnd::parse_name(*arg_kind, positional[1]);
    if (!arg || (rule.kind == O2LND_FAULT_STALL && *arg == O2LND_PHASE_NONE)) {
      std::string why =
          arg ? "stall needs a phase: addr, route or connect (not 'none')" : arg.error().message;
      return usage_error(env, kCmd, why);
    }
    rule.arg = *arg;
  }
  if (wr_arg) {
    auto wr = parse_uint(positional[1], 0, O2LND_FAULT_POST_FAIL_MAX_ARG);
    if (!wr) {
      return usage_error(env, kCmd,
                         "invalid WR '" + std::string(positional[1]) + "': " + wr.error().message);
    }
    rule.arg = *wr;
  }
  bool bad = false;
  if (auto nid = nid_option(env, opts, "--peer", bad); nid) {
    rule.peer = *nid;
  }
  if (bad) {
    return kExitUsage;
  }
  if (auto nid = nid_option(env, opts, "--local", bad); nid) {
    rule.local = *nid;
  }
  if (bad) {
    return kExitUsage;
  }
  if (auto it = opts.find("--prob"); it != opts.end()) {
    auto p = parse_probability(it->second);
    if (!p) {
      env.err << "o2ctl fault add: invalid --prob '" << it->second << "': " << p.error().message
              << "\n";
      return kExitUsage;
    }
    rule.probability = *p;
  }
  if (!uint_option(env, kCmd, opts, "--count", 0, UINT32_MAX, rule.count)) {
    return kExitUsage;
  }
  bool has_delay = o2lnd::fault_has_delay(rule.kind);
  if (has_delay && !opts.contains("--delay")) {
    return usage_error(env, kCmd, kind_name + " needs --delay MS");
  }
  if (!has_delay && opts.contains("--delay")) {
    return usage_error(env, kCmd, "--delay applies only to cm-delay and send-delay");
  }
  if (!uint_option(env, kCmd, opts, "--delay", 1, O2LND_FAULT_MAX_DELAY_MS, rule.delay_ms)) {
    return kExitUsage;
  }
  if (rule.kind != O2LND_FAULT_REJECT &&
      (opts.contains("--queue-depth") || opts.contains("--frags"))) {
    return usage_error(env, kCmd, "--queue-depth and --frags apply only to reject");
  }
  if (!uint_option(env, kCmd, opts, "--queue-depth", 0, kMaxQueueDepth, rule.queue_depth) ||
      !uint_option(env, kCmd, opts, "--frags", 0, kMaxFrags, rule.max_frags)) {
    return kExitUsage;
  }
  if (auto ok = o2lnd::validate(rule); !ok) {
    return usage_error(env, kCmd, ok.error().message);
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto id = dev->fault_add(rule);
  if (!id) {
    switch (id.error().errnum) {
      case ENOSPC:
        env.err << "o2ctl: " << kCmd << ": too many fault rules (at most " << O2LND_FAULT_MAX_RULES
                << ")\n";
        return kExitFailure;
      case EINVAL:
        env.err << "o2ctl: " << kCmd << ": the module refused the rule: " << id.error().message
                << "\n";
        return kExitFailure;
      default:
        return kernel_failure(env, kCmd, *dev, id.error());
    }
  }
  env.out << "fault " << *id << " added\n";
  return kExitOk;
}

bool is_all(std::string_view text) {
  return text.size() == 3 && std::tolower(static_cast<unsigned char>(text[0])) == 'a' &&
         std::tolower(static_cast<unsigned char>(text[1])) == 'l' &&
         std::tolower(static_cast<unsigned char>(text[2])) == 'l';
}

int run_fault_del(Env& env, const Opts& /*opts*/, const Positional& positional) {
  constexpr std::string_view kCmd = "fault del";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, "expected ID or 'all'");
  }
  bool all = is_all(positional[0]);
  std::uint32_t id = 0;
  if (!all) {
    auto v = parse_uint(positional[0], 1, UINT32_MAX);
    if (!v) {
      return usage_error(env, kCmd,
                         "invalid rule id '" + std::string(positional[0]) +
                             "': " + v.error().message + " (expected a rule id or 'all')");
    }
    id = *v;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto done = all ? dev->fault_del_all() : dev->fault_del(id);
  if (!done) {
    if (done.error().errnum == ENOENT && !all) {
      env.err << "o2ctl: " << kCmd << ": no fault rule " << id << "\n";
      return kExitFailure;
    }
    return kernel_failure(env, kCmd, *dev, done.error());
  }
  if (all) {
    env.out << "all faults deleted\n";
  } else {
    env.out << "fault " << id << " deleted\n";
  }
  return kExitOk;
}

constexpr Option kFaultListOptions[] = {
    {"--table", "-t", false},
};

int run_fault_list(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "fault list";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto rules = dev->fault_list();
  if (!rules) {
    return kernel_failure(env, kCmd, *dev, rules.error());
  }
  env.out << (opts.contains("--table") ? table_fault_list(*rules) : format_fault_list(*rules));
  return kExitOk;
}

}  // namespace

constinit const Command kFaultAddCommand = {
    "fault add",
    "KIND [ARG] [--peer NID] [--local NID] [--count N] [--prob P] [--delay MS] "
    "[--queue-depth N] [--frags N]",
    "add a fault injection rule",
    "Adds a rule to the module's fault injection table and prints 'fault ID\n"
    "added'.  Needs CAP_NET_ADMIN; at most 32 rules.  KIND and its ARG:\n"
    "\n"
    "  cm-drop EVENT      ignore rdma_cm event EVENT (connect_request: park the\n"
    "                     request unanswered until its deadline)\n"
    "  cm-delay EVENT     handle EVENT --delay MS later\n"
    "  stall PHASE        ignore the events ending connect phase PHASE (addr,\n"
    "                     route or connect): a stuck connect\n"
    "  reject REASON      reject connect requests with REASON, advertising\n"
    "                     --queue-depth and --frags (default: our own values)\n"
    "  msg-drop TYPE      drop received messages of TYPE (credits still count)\n"
    "  msg-corrupt TYPE   flip a byte of received messages of TYPE\n"
    "  send-delay         handle Send completions --delay MS late\n"
    "  inv-fail           take the local invalidation of a fast-registration MR\n"
    "                     as failed: the MR is destroyed and replaced (net show\n"
    "                     -v: bulk.mr_pool.recovered)\n"
    "  post-fail WR       refuse a chain of more than WR work requests posted on a\n"
    "                     connection (a message with its REG_MR and RDMA WRITEs,\n"
    "                     and the messages queued behind it) at its work request\n"
    "                     WR (from 0, 0..255), as a full send queue: those before\n"
    "                     it are posted, the rest fail and the connection closes\n"
    "\n"
    "EVENT: addr_resolved addr_error route_resolved route_error connect_request\n"
    "  connect_response connect_error unreachable rejected established\n"
    "  disconnected device_removal multicast_join multicast_error addr_change\n"
    "  timewait_exit\n"
    "REASON: conn_race no_resources fatal conn_uncompat conn_stale rdma_frags\n"
    "  msg_queue_size invalid_srv_id early\n"
    "TYPE: any noop immediate put_req put_nak put_ack put_done get_req get_done\n"
    "Names are case-insensitive; '-' and '_' are the same.\n"
    "\n"
    "      --peer NID        only for this remote NID (default: any)\n"
    "      --local NID       only on the local NI with this NID (default: any)\n"
    "      --count N         fire N times, then retire (default 0: no limit)\n"
    "      --prob P          chance of firing per match, 0 < P <= 1 (default 1)\n"
    "      --delay MS        cm-delay, send-delay: 1..10000 ms (required)\n"
    "      --queue-depth N   reject: queue depth advertised, 2..255 (0: ours)\n"
    "      --frags N         reject: fragments advertised, 1..257 (0: ours)\n"
    "\n"
    "device_removal cannot be dropped or delayed.\n",
    kFaultAddOptions,
    run_fault_add};

constinit const Command kFaultDelCommand = {
    "fault del",
    "ID|all",
    "delete a fault injection rule, or all of them",
    "Prints 'fault ID deleted' or 'all faults deleted'.  Exits 1 for an unknown\n"
    "ID.  Needs CAP_NET_ADMIN.\n",
    {},
    run_fault_del};

constinit const Command kFaultListCommand = {
    "fault list",
    "[-t]",
    "fault injection rules as YAML",
    "Lists the rules: id, kind, arg, peer, local (a NID or any), count,\n"
    "probability (a fraction), delay ms, fired.  Prints 'fault: []' when there\n"
    "is none.  Needs CAP_NET_ADMIN.\n"
    "\n"
    "  -t, --table       a table instead of YAML, one row per rule: ID KIND ARG\n"
    "                    PEER LOCAL COUNT PROB DELAY_MS FIRED\n",
    kFaultListOptions,
    run_fault_list};

}  // namespace o2ctl::cmd
