// The helpers of o2ctl's commands (commands.h): the device, errors, NID
// and number options, and the arguments of the list commands.

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2ctl::cmd {

void usage_hint(Env& env, std::string_view command) {
  env.err << "Try 'o2ctl " << command << (command.empty() ? "" : " ") << "--help'.\n";
}

// Opens the device and checks its ABI; prints the error and returns nullopt
// on failure.
std::optional<o2lnd::Device> open_device(Env& env) {
  auto backend = env.open_backend(env.device_path);
  if (!backend) {
    env.err << "o2ctl: " << backend.error().message << "\n";
    return std::nullopt;
  }
  auto dev = o2lnd::Device::attach(std::move(*backend), "o2ctl");
  if (!dev) {
    env.err << "o2ctl: " << dev.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*dev);
}

std::optional<o2lnd::Nid> parse_nid_arg(Env& env, std::string_view text) {
  auto nid = o2lnd::Nid::parse(text);
  if (!nid) {
    env.err << "o2ctl: invalid NID '" << text << "': " << nid.error().message << "\n";
    return std::nullopt;
  }
  return *nid;
}

// Prints "o2ctl: COMMAND: WHY" for a failed kernel call: the errnos that
// have one cause get that cause, the others the library's message.
int kernel_failure(Env& env, std::string_view command, const o2lnd::Device& dev,
                   const o2lnd::Error& e) {
  env.err << "o2ctl: " << command << ": ";
  switch (e.errnum) {
    case EPERM:
    case EACCES:
      env.err << "permission denied (needs CAP_NET_ADMIN)";
      break;
    case ENOTTY:
      env.err << "the o2lnd module does not know this command (module too old for o2ctl ABI "
              << o2lnd::kAbiVersion << "; load a matching module)";
      break;
    case EPROTO:
      env.err << "ABI mismatch: module ABI " << dev.module_info().abi_version << ", o2ctl ABI "
              << o2lnd::kAbiVersion << " (" << e.message << ")";
      break;
    default:
      env.err << e.message;
      break;
  }
  env.err << "\n";
  return kExitFailure;
}

int usage_error(Env& env, std::string_view command, const std::string& why) {
  env.err << "o2ctl " << command << ": " << why << "\n";
  usage_hint(env, command);
  return kExitUsage;
}

std::optional<o2lnd::Nid> nid_option(Env& env, const Opts& opts, std::string_view name, bool& bad) {
  auto it = opts.find(name);
  if (it == opts.end()) {
    return std::nullopt;
  }
  auto nid = parse_nid_arg(env, it->second);
  bad = !nid;
  return nid;
}

// Parses option `name` as a number in min..max into `out` (left as is
// when the option is not given); false after a usage error.
bool uint_option(Env& env, std::string_view command, const Opts& opts, std::string_view name,
                 std::uint32_t min, std::uint32_t max, std::uint32_t& out) {
  auto it = opts.find(name);
  if (it == opts.end()) {
    return true;
  }
  auto v = parse_uint(it->second, min, max);
  if (!v) {
    env.err << "o2ctl " << command << ": invalid " << name << " '" << it->second
            << "': " << v.error().message << "\n";
    usage_hint(env, command);
    return false;
  }
  out = *v;
  return true;
}

std::optional<ListArgs> parse_list_args(Env& env, std::string_view command, const Opts& opts,
                                        const Positional& positional, PeerArg from) {
  std::size_t max_positional = from == PeerArg::kPositional ? 1 : 0;
  if (positional.size() > max_positional) {
    usage_error(env, command,
                "unexpected argument '" + std::string(positional[max_positional]) + "'");
    return std::nullopt;
  }
  ListArgs args;
  if (from == PeerArg::kPositional && !positional.empty()) {
    args.peer = parse_nid_arg(env, positional[0]);
    if (!args.peer) {
      return std::nullopt;
    }
  }
  if (from == PeerArg::kOption) {
    bool bad = false;
    args.peer = nid_option(env, opts, "--peer", bad);
    if (bad) {
      return std::nullopt;
    }
  }
  return args;
}

std::optional<Listing> open_listing(Env& env, std::string_view command, const Opts& opts) {
  auto dev = open_device(env);
  if (!dev) {
    return std::nullopt;
  }
  auto nis = dev->nets();
  if (!nis) {
    kernel_failure(env, command, *dev, nis.error());
    return std::nullopt;
  }
  if (auto it = opts.find("--net"); it != opts.end()) {
    std::string_view want = it->second;
    std::erase_if(*nis, [want](const o2lnd::NetInfo& ni) { return ni.net != want; });
    if (nis->empty()) {
      env.err << "o2ctl: no local NI on network '" << want << "'\n";
      return std::nullopt;
    }
  }
  return Listing{std::move(*dev), std::move(*nis)};
}

}  // namespace o2ctl::cmd
