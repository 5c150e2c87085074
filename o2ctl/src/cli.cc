#include "o2ctl/cli.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "o2ctl/format.h"
#include "o2lnd/device.h"
#include "o2lnd/nid.h"
#include "o2lnd/result.h"

namespace o2ctl {
namespace {

using Args = std::span<const std::string_view>;

// One option of a command: "--timeout" with a value, "-v" without.
struct Option {
  std::string_view long_name;   // "--timeout"
  std::string_view short_name;  // "-t" or ""
  bool takes_value;
};

struct Command {
  std::string_view name;   // words: "net show"
  std::string_view usage;  // after the name: "NID [TIMEOUT] [--timeout S] [--source NID]"
  std::string_view summary;
  std::string_view help;  // the rest of `o2ctl NAME --help`
  std::span<const Option> options;
  int (*run)(Env& env, const std::map<std::string_view, std::string_view>& opts,
             const std::vector<std::string_view>& positional);
};

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

// --- ping -----------------------------------------------------------------

constexpr Option kPingOptions[] = {
    {"--timeout", "-t", true},
    {"--source", "-s", true},
};

int run_ping(Env& env, const std::map<std::string_view, std::string_view>& opts,
             const std::vector<std::string_view>& positional) {
  if (positional.empty() || positional.size() > 2) {
    env.err << "o2ctl ping: expected NID [TIMEOUT]\n";
    usage_hint(env, "ping");
    return kExitUsage;
  }
  auto nid = parse_nid_arg(env, positional[0]);
  if (!nid) {
    return kExitUsage;
  }
  std::optional<std::string_view> timeout_text;
  if (positional.size() == 2) {
    timeout_text = positional[1];  // lctl ping NID [timeout]
  }
  if (auto it = opts.find("--timeout"); it != opts.end()) {
    if (timeout_text) {
      env.err << "o2ctl ping: timeout given twice\n";
      return kExitUsage;
    }
    timeout_text = it->second;
  }
  std::chrono::milliseconds timeout{0};  // the module's default
  if (timeout_text) {
    auto t = parse_timeout(*timeout_text);
    if (!t) {
      env.err << "o2ctl: invalid timeout '" << *timeout_text << "': " << t.error().message << "\n";
      return kExitUsage;
    }
    timeout = *t;
  }
  std::optional<o2lnd::Nid> source;
  if (auto it = opts.find("--source"); it != opts.end()) {
    source = parse_nid_arg(env, it->second);
    if (!source) {
      return kExitUsage;
    }
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto result = dev->ping(*nid, timeout, source);
  if (!result) {
    env.err << "failed to ping " << positional[0] << ": " << std::strerror(result.error().errnum)
            << "\n";
    return kExitFailure;
  }
  env.out << format_ping(*result);
  if (result->truncated()) {
    env.err << "o2ctl: " << positional[0] << " reported " << result->n_ids << " NIDs, showing "
            << result->ids.size() << "\n";
  }
  return kExitOk;
}

// --- net show -------------------------------------------------------------

constexpr Option kNetShowOptions[] = {
    {"--verbose", "-v", false},
    {"--net", "", true},
};

int run_net_show(Env& env, const std::map<std::string_view, std::string_view>& opts,
                 const std::vector<std::string_view>& positional) {
  if (!positional.empty()) {
    env.err << "o2ctl net show: unexpected argument '" << positional[0] << "'\n";
    usage_hint(env, "net show");
    return kExitUsage;
  }
  auto dev = open_device(env);
  if (!dev) {
    return kExitFailure;
  }
  auto nis = dev->nets();
  if (!nis) {
    env.err << "o2ctl: " << nis.error().message << "\n";
    return kExitFailure;
  }
  if (auto it = opts.find("--net"); it != opts.end()) {
    std::string_view want = it->second;
    std::erase_if(*nis, [want](const o2lnd::NetInfo& ni) { return ni.net != want; });
    if (nis->empty()) {
      env.err << "o2ctl: no local NI on network '" << want << "'\n";
      return kExitFailure;
    }
  }
  env.out << format_net_show(*nis, opts.contains("--verbose"));
  return kExitOk;
}

// --- version --------------------------------------------------------------

int run_version(Env& env, const std::map<std::string_view, std::string_view>& /*opts*/,
                const std::vector<std::string_view>& positional) {
  if (!positional.empty()) {
    env.err << "o2ctl version: unexpected argument '" << positional[0] << "'\n";
    return kExitUsage;
  }
  // Not Device::open: this must report a module of another ABI, not refuse it.
  auto backend = env.open_backend(env.device_path);
  if (!backend) {
    env.out << format_version(env.tool_version, nullptr);
    env.err << "o2ctl: " << backend.error().message << "\n";
    return kExitFailure;
  }
  auto arg = o2lnd::make_arg<o2lnd_ioc_version>();
  if (int err = (*backend)->ioctl(O2LND_IOC_VERSION, &arg); err != 0) {
    env.out << format_version(env.tool_version, nullptr);
    env.err << "o2ctl: O2LND_IOC_VERSION on " << env.device_path << ": " << std::strerror(err)
            << "\n";
    return kExitFailure;
  }
  auto info = o2lnd::decode(arg);
  env.out << format_version(env.tool_version, &info);
  if (info.abi_version != o2lnd::kAbiVersion) {
    env.err << "o2ctl: o2lnd module ABI " << info.abi_version << ", o2ctl speaks ABI "
            << o2lnd::kAbiVersion << ": upgrade o2ctl or load a matching module\n";
    return kExitFailure;
  }
  return kExitOk;
}

// --- the table ------------------------------------------------------------
// To add a command ("peer show", "conn show", "route show", "stats",
// "selftest"): write run_X and add a row.  Multi-word names make groups:
// "o2ctl peer" then lists the "peer ..." commands.

constexpr Command kCommands[] = {
    {"ping", "NID [TIMEOUT] [--timeout S] [--source NID]",
     "LNet ping of NID; prints the target's NIDs like 'lctl ping'",
     "Prints one line PID-NID for each NID the target reports (the first is\n"
     "12345-0@lo).  On failure prints 'failed to ping NID: ERROR' and exits 1.\n"
     "\n"
     "  -t, --timeout S   seconds to wait for the reply (fractions allowed, e.g.\n"
     "                    0.5; at most 600).  TIMEOUT as a second argument is\n"
     "                    the same, as in 'lctl ping NID TIMEOUT'.  Default: the\n"
     "                    module's (5 s).\n"
     "  -s, --source NID  the local NID to send from (default: the module picks)\n",
     kPingOptions, run_ping},
    {"net show", "[-v] [--net NET]", "local NIs as YAML, like 'lnetctl net show'",
     "  -v, --verbose     add statistics, tunables and RDMA details\n"
     "      --net NET     only the NIs of network NET (e.g. o2ib0)\n",
     kNetShowOptions, run_net_show},
    {"version",
     "",
     "versions of o2ctl, its ABI and the o2lnd module",
     "Prints YAML: o2ctl version, o2ctl abi, module version, module abi.\n"
     "Exits 1 when the module cannot be asked or speaks another ABI.\n",
     {},
     run_version},
};

std::vector<std::string_view> words(std::string_view name) {
  std::vector<std::string_view> out;
  while (!name.empty()) {
    auto sp = name.find(' ');
    out.push_back(name.substr(0, sp));
    name = sp == std::string_view::npos ? std::string_view{} : name.substr(sp + 1);
  }
  return out;
}

void print_main_help(std::ostream& os) {
  os << "Usage: o2ctl [--device PATH] COMMAND [ARGS...]\n"
        "\n"
        "Control and inspect the o2lnd LNet network driver (/dev/o2lnd).\n"
        "\n"
        "Commands:\n";
  for (const auto& c : kCommands) {
    std::string head = std::string(c.name);
    os << "  " << head << std::string(head.size() < 12 ? 12 - head.size() : 1, ' ') << c.summary
       << "\n";
  }
  os << "  help [COMMAND]\n"
        "\n"
        "Options:\n"
        "  --device PATH  the o2lnd device (default /dev/o2lnd, or $O2LND_DEVICE)\n"
        "  -h, --help     this help\n"
        "\n"
        "Run 'o2ctl COMMAND --help' for the options of a command.\n"
        "Exit status: 0 success, 1 failure, 2 usage error.\n";
}

void print_command_help(std::ostream& os, const Command& c) {
  os << "Usage: o2ctl " << c.name << (c.usage.empty() ? "" : " ") << c.usage << "\n\n"
     << c.summary << ".\n";
  if (!c.help.empty()) {
    os << "\n" << c.help;
  }
}

// The command whose words start `args`, and how many words it took.
std::pair<const Command*, std::size_t> find_command(Args args) {
  const Command* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& c : kCommands) {
    auto w = words(c.name);
    if (w.size() <= args.size() && w.size() > best_len &&
        std::equal(w.begin(), w.end(), args.begin())) {
      best = &c;
      best_len = w.size();
    }
  }
  return {best, best_len};
}

// Commands of a group ("net" -> "net show").
std::vector<const Command*> group(std::string_view first) {
  std::vector<const Command*> out;
  for (const auto& c : kCommands) {
    auto w = words(c.name);
    if (w.size() > 1 && w[0] == first) {
      out.push_back(&c);
    }
  }
  return out;
}

int run_command(Env& env, const Command& c, Args args) {
  std::map<std::string_view, std::string_view> opts;
  std::vector<std::string_view> positional;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    // "-1@o2ib0" is a (bad) NID, not an option: options start with a letter.
    bool looks_like_option = a.size() >= 2 && a[0] == '-' && (a[1] < '0' || a[1] > '9');
    if (options_done || !looks_like_option) {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      print_command_help(env.out, c);
      return kExitOk;
    }
    std::string_view value;
    bool has_value = false;
    if (auto eq = a.find('='); a.starts_with("--") && eq != std::string_view::npos) {
      value = a.substr(eq + 1);
      has_value = true;
      a = a.substr(0, eq);
    }
    auto opt = std::find_if(c.options.begin(), c.options.end(), [a](const Option& o) {
      return a == o.long_name || (!o.short_name.empty() && a == o.short_name);
    });
    if (opt == c.options.end()) {
      env.err << "o2ctl " << c.name << ": unknown option '" << a << "'\n";
      usage_hint(env, c.name);
      return kExitUsage;
    }
    if (opt->takes_value && !has_value) {
      if (i + 1 >= args.size()) {
        env.err << "o2ctl " << c.name << ": option '" << a << "' needs a value\n";
        usage_hint(env, c.name);
        return kExitUsage;
      }
      value = args[++i];
    } else if (!opt->takes_value && has_value) {
      env.err << "o2ctl " << c.name << ": option '" << a << "' takes no value\n";
      return kExitUsage;
    }
    if (opts.contains(opt->long_name)) {
      env.err << "o2ctl " << c.name << ": option '" << opt->long_name << "' given twice\n";
      return kExitUsage;
    }
    opts[opt->long_name] = value;
  }
  return c.run(env, opts, positional);
}

}  // namespace

o2lnd::Result<std::chrono::milliseconds> parse_timeout(std::string_view text) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  if (text.empty()) {
    return invalid("empty");
  }
  std::uint64_t ms = 0;
  std::size_t i = 0;
  std::size_t int_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++int_digits) {
    if (int_digits >= 7) {
      return invalid("too large (at most 600 seconds)");
    }
    ms = ms * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  ms *= 1000;
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::uint64_t scale = 100;
    std::size_t frac_digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits >= 3) {
        return invalid("more precise than a millisecond");
      }
      ms += static_cast<std::uint64_t>(text[i] - '0') * scale;
      scale /= 10;
    }
    if (frac_digits == 0 && int_digits == 0) {
      return invalid("not a number of seconds");
    }
  } else if (int_digits == 0) {
    return invalid("not a number of seconds");
  }
  if (i != text.size()) {
    return invalid("not a number of seconds (unexpected '" + std::string(text.substr(i)) + "')");
  }
  if (ms == 0) {
    return invalid("must be more than 0 seconds");
  }
  if (ms > O2LND_PING_TIMEOUT_MAX_MS) {
    return invalid("too large (at most 600 seconds)");
  }
  return std::chrono::milliseconds(ms);
}

int run(Args args, Env& env) {
  // Global options.
  while (!args.empty() && args[0].starts_with("-")) {
    std::string_view a = args[0];
    if (a == "-h" || a == "--help") {
      print_main_help(env.out);
      return kExitOk;
    }
    if (a == "--version") {
      static constexpr std::string_view kVersion[] = {"version"};
      return run(kVersion, env);
    }
    if (a == "--device" && args.size() < 2) {
      env.err << "o2ctl: option '--device' needs a value\n";
      return kExitUsage;
    }
    if (a == "--device") {
      env.device_path = std::string(args[1]);
      args = args.subspan(2);
      continue;
    }
    if (a.starts_with("--device=")) {
      env.device_path = std::string(a.substr(std::strlen("--device=")));
      args = args.subspan(1);
      continue;
    }
    env.err << "o2ctl: unknown option '" << a << "'\n";
    usage_hint(env, "");
    return kExitUsage;
  }
  if (args.empty()) {
    print_main_help(env.err);
    return kExitUsage;
  }
  if (args[0] == "help") {
    if (args.size() == 1) {
      print_main_help(env.out);
      return kExitOk;
    }
    auto [cmd, n] = find_command(args.subspan(1));
    if (cmd == nullptr || n + 1 != args.size()) {
      env.err << "o2ctl: no command '" << args[1] << (args.size() > 2 ? " ..." : "") << "'\n";
      return kExitUsage;
    }
    print_command_help(env.out, *cmd);
    return kExitOk;
  }
  auto [cmd, n] = find_command(args);
  if (cmd == nullptr) {
    auto members = group(args[0]);
    if (members.empty()) {
      env.err << "o2ctl: unknown command '" << args[0] << "'\n";
      usage_hint(env, "");
      return kExitUsage;
    }
    bool asked_help = args.size() > 1 && (args[1] == "--help" || args[1] == "-h");
    std::ostream& os = asked_help ? env.out : env.err;
    if (!asked_help) {
      os << "o2ctl: '" << args[0] << "' needs a subcommand"
         << (args.size() > 1 ? " (unknown: '" + std::string(args[1]) + "')" : "") << "\n";
    }
    os << "Commands of '" << args[0] << "':\n";
    for (const auto* m : members) {
      os << "  o2ctl " << m->name << (m->usage.empty() ? "" : " ") << m->usage << "\n";
    }
    return asked_help ? kExitOk : kExitUsage;
  }
  return run_command(env, *cmd, args.subspan(n));
}

}  // namespace o2ctl
