// o2ctl's command line: the global options, the table of commands (in the
// order of `o2ctl --help`), the help, finding a command by its words,
// parsing its options, and the parsers of numbers, seconds and
// probabilities the commands share.  The commands themselves are in the
// files of their objects (commands.h).
#include "o2ctl/cli.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "o2lnd/result.h"
#include "o2lnd/uapi.h"

namespace o2ctl {

using cmd::Args;
using cmd::Command;
using cmd::Option;
using cmd::usage_hint;

namespace {

// --- the table ------------------------------------------------------------
// To add a command ("peer show", "conn show", "route show", "stats",
// "selftest"): write its run function and its Command in its object's file,
// declare the Command in commands.h and add it here.  Multi-word names make
// groups: "o2ctl peer" then lists the "peer ..." commands.

constexpr const Command* kCommands[] = {
    &cmd::kPingCommand,         &cmd::kNetShowCommand,     &cmd::kNetAddCommand,
    &cmd::kNetDelCommand,       &cmd::kPeerShowCommand,    &cmd::kPeerListCommand,
    &cmd::kDiscoverCommand,     &cmd::kPeerCloseCommand,   &cmd::kConnShowCommand,
    &cmd::kRouteShowCommand,    &cmd::kRoutingShowCommand, &cmd::kFaultAddCommand,
    &cmd::kFaultDelCommand,     &cmd::kFaultListCommand,   &cmd::kStatsCommand,
    &cmd::kSelftestPingCommand, &cmd::kSelftestBrwCommand, &cmd::kExportCommand,
    &cmd::kImportCommand,       &cmd::kVersionCommand,
};

}  // namespace

std::vector<std::string_view> command_names() {
  std::vector<std::string_view> out;
  out.reserve(std::size(kCommands));
  for (const Command* c : kCommands) {
    out.push_back(c->name);
  }
  return out;
}

namespace {

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
  for (const Command* c : kCommands) {
    std::string head = std::string(c->name);
    os << "  " << head << std::string(head.size() < 15 ? 15 - head.size() : 1, ' ') << c->summary
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
  for (const Command* c : kCommands) {
    auto w = words(c->name);
    if (w.size() <= args.size() && w.size() > best_len &&
        std::equal(w.begin(), w.end(), args.begin())) {
      best = c;
      best_len = w.size();
    }
  }
  return {best, best_len};
}

// Commands of a group ("net" -> "net show").
std::vector<const Command*> group(std::string_view first) {
  std::vector<const Command*> out;
  for (const Command* c : kCommands) {
    auto w = words(c->name);
    if (w.size() > 1 && w[0] == first) {
      out.push_back(c);
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

namespace {

// "600", "0.1": whole seconds, or with the decimals that are needed.
std::string seconds_text(std::chrono::milliseconds ms) {
  std::string out = std::to_string(ms.count() / 1000);
  if (auto frac = ms.count() % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') {
      digits.pop_back();
    }
    out += "." + digits;
  }
  return out;
}

}  // namespace

o2lnd::Result<std::chrono::milliseconds> parse_seconds(std::string_view text,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  const std::string too_large = "too large (at most " + seconds_text(max) + " seconds)";
  if (text.empty()) {
    return invalid("empty");
  }
  std::uint64_t ms = 0;
  std::size_t i = 0;
  std::size_t int_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++int_digits) {
    if (int_digits >= 9) {
      return invalid(too_large);
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
  if (ms == 0 && min.count() <= 1) {
    return invalid("must be more than 0 seconds");
  }
  if (ms < static_cast<std::uint64_t>(min.count())) {
    return invalid("too small (at least " + seconds_text(min) + " seconds)");
  }
  if (ms > static_cast<std::uint64_t>(max.count())) {
    return invalid(too_large);
  }
  return std::chrono::milliseconds(ms);
}

o2lnd::Result<std::chrono::milliseconds> parse_timeout(std::string_view text) {
  return parse_seconds(text, std::chrono::milliseconds(1),
                       std::chrono::milliseconds(O2LND_PING_TIMEOUT_MAX_MS));
}

o2lnd::Result<std::uint32_t> parse_uint(std::string_view text, std::uint32_t min,
                                        std::uint32_t max) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  if (text.empty()) {
    return invalid("empty");
  }
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return invalid("not a number");
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > max) {
      break;
    }
  }
  if (value < min || value > max) {
    return invalid("out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
  }
  return static_cast<std::uint32_t>(value);
}

o2lnd::Result<std::uint32_t> parse_probability(std::string_view text) {
  auto invalid = [](std::string why) { return o2lnd::Error{EINVAL, std::move(why)}; };
  std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((whole.empty() && frac.empty()) || !digits(whole) || !digits(frac)) {
    return invalid("not a fraction (expected 0 < P <= 1, e.g. 0.5)");
  }
  if (frac.size() > 6) {
    return invalid("more precise than one in a million");
  }
  std::uint64_t per_million = 0;
  for (char c : whole) {
    per_million = per_million * 10 + static_cast<std::uint64_t>(c - '0');
    if (per_million > 1) {
      return invalid("more than 1 (expected 0 < P <= 1)");
    }
  }
  per_million *= O2LND_FAULT_PROB_ALWAYS;
  std::uint64_t scale = O2LND_FAULT_PROB_ALWAYS / 10;
  for (char c : frac) {
    per_million += static_cast<std::uint64_t>(c - '0') * scale;
    scale /= 10;
  }
  if (per_million == 0) {
    return invalid("must be more than 0");
  }
  if (per_million > O2LND_FAULT_PROB_ALWAYS) {
    return invalid("more than 1 (expected 0 < P <= 1)");
  }
  return static_cast<std::uint32_t>(per_million);
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
