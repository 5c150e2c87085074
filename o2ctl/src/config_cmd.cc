// o2ctl export, import: o2lnd's configuration file (config.h), as
// `lnetctl export` and `lnetctl import` keep LNet's.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "o2ctl/config.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawnp's

namespace o2ctl::cmd {
namespace {

// A module parameter's value as sysfs shows it, without the newline; ""
// when it cannot be read.
std::string read_param(const Env& env, std::string_view name) {
  std::ifstream f(env.params_dir + "/" + std::string(name));
  std::string v;
  std::getline(f, v);
  return f || f.eof() ? v : "";
}

// The running module's configuration: its NIs, routes and tunables.
std::optional<config::Config> running(Env& env, std::string_view cmd, o2lnd::Device& dev) {
  config::Config c;
  auto nis = dev.nets();
  if (!nis) {
    kernel_failure(env, cmd, dev, nis.error());
    return std::nullopt;
  }
  for (const auto& ni : *nis) {
    if (!ni.ifname.empty()) {
      c.nets.push_back({ni.net, ni.ifname});
    }
  }
  auto routes = dev.routes();
  if (!routes) {
    kernel_failure(env, cmd, dev, routes.error());
    return std::nullopt;
  }
  for (const auto& r : *routes) {
    c.routes.push_back(
        {o2lnd::net_name(r.net), r.gateway.str(), static_cast<int>(r.hops), r.priority});
  }
  for (std::string_view name : config::tunable_names()) {
    std::string v = read_param(env, name);
    if (!v.empty()) {
      c.tunables.emplace_back(std::string(name), v);
    }
  }
  return c;
}

// The device and the running module's configuration; nullopt after
// printing why (export, import --del, and import after loading).
struct Running {
  o2lnd::Device dev;
  config::Config config;
};
std::optional<Running> open_running(Env& env, std::string_view cmd) {
  auto dev = open_device(env);
  if (!dev) {
    return std::nullopt;
  }
  auto c = running(env, cmd, *dev);
  if (!c) {
    return std::nullopt;
  }
  return Running{std::move(*dev), std::move(*c)};
}

int run_export(Env& env, const Opts& /*opts*/, const Positional& positional) {
  constexpr std::string_view kCmd = "export";
  if (!positional.empty()) {
    return usage_error(env, kCmd, "unexpected argument '" + std::string(positional[0]) + "'");
  }
  auto r = open_running(env, kCmd);
  if (!r) {
    return kExitFailure;
  }
  env.out << "# o2lnd's configuration (o2ctl export); o2ctl import FILE loads it\n"
          << config::to_yaml(r->config);
  return kExitOk;
}

// Runs argv (argv[0] from PATH), its output on ours; its exit status, or
// -1 when it cannot be started.
int spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));  // NOLINT(*-const-cast): posix_spawnp's type
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return -1;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) {
    s += (s.empty() ? "" : " ") + x;
  }
  return s;
}

// The one parameter the module takes at run time (sysfs, 0644).
constexpr std::string_view kForwarding = "forwarding";

// What the loaded module was given at load that the file sets otherwise
// (forwarding aside: import sets it).
std::vector<std::string> load_time_differences(const config::Config& want,
                                               const config::Config& have) {
  std::vector<std::string> out;
  for (const auto& tunable : want.tunables) {
    if (tunable.first == kForwarding) {
      continue;  // writable at run time: import sets it
    }
    auto it = std::ranges::find_if(have.tunables,
                                   [&](const auto& t) { return t.first == tunable.first; });
    const std::string cur = it == have.tunables.end() ? "(unknown)" : it->second;
    if (cur != tunable.second) {
      std::string d = tunable.first;
      d += " is ";
      d += cur;
      d += ", the file says ";
      d += tunable.second;
      out.push_back(std::move(d));
    }
  }
  auto same = [](const config::Route& a, const config::Route& b) {
    return a.net == b.net && a.gateway == b.gateway && a.priority == b.priority &&
           (a.hops < 0 ? 1 : a.hops) == (b.hops < 0 ? 1 : b.hops);
  };
  for (const auto& r : want.routes) {
    if (std::ranges::none_of(have.routes, [&](const auto& h) { return same(r, h); })) {
      out.push_back("no route to " + r.net + " via " + r.gateway + " (hop " +
                    std::to_string(r.hops < 0 ? 1 : r.hops) + ", priority " +
                    std::to_string(r.priority) + ")");
    }
  }
  for (const auto& h : have.routes) {
    if (std::ranges::none_of(want.routes, [&](const auto& r) { return same(r, h); })) {
      out.push_back("a route to " + h.net + " via " + h.gateway + " that the file does not have");
    }
  }
  return out;
}

// import --del: the file's NIs that the module has are deleted (as
// `o2ctl net del`); its routes and tunables stay until o2lnd unloads.
int import_del(Env& env, const std::string& path, const config::Config& c) {
  constexpr std::string_view kCmd = "import";
  auto r = open_running(env, kCmd);
  if (!r) {
    return kExitFailure;
  }
  auto& dev = r->dev;
  const config::Config& have = r->config;
  int deleted = 0;
  for (const auto& n : c.nets) {
    if (std::ranges::find(have.nets, n) == have.nets.end()) {
      continue;  // not there: nothing to delete (idempotent)
    }
    auto count = dev.net_del(n.net, n.iface);
    if (!count) {
      return kernel_failure(env, kCmd, dev, count.error());
    }
    env.out << "deleted " << n.net << " on " << n.iface << "\n";
    deleted++;
  }
  if (!c.routes.empty() || !c.tunables.empty()) {
    env.err << "o2ctl: import: " << path
            << ": its routes and tunables are set at load and stay until o2lnd unloads\n";
  }
  if (deleted == 0) {
    env.out << "o2lnd has none of the file's NIs\n";
  }
  return kExitOk;
}

int run_import(Env& env, const Opts& opts, const Positional& positional) {
  constexpr std::string_view kCmd = "import";
  if (positional.size() != 1) {
    return usage_error(env, kCmd, positional.empty() ? "no FILE" : "more than one FILE");
  }
  const std::string path(positional[0]);
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream f(path);
    if (!f) {
      env.err << "o2ctl: import: cannot read " << path << ": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  auto c = config::parse(text);
  if (!c) {
    env.err << "o2ctl: import: " << path << ": " << c.error().message << "\n";
    return kExitFailure;
  }
  for (const auto& s : c->skipped) {
    env.err << "o2ctl: import: " << path << ": skipped " << s << "\n";
  }
  const std::vector<std::string> options = config::module_options(*c);
  if (opts.contains("--options")) {
    env.out << join(options) << "\n";
    return kExitOk;
  }

  if (opts.contains("--del")) {
    return import_del(env, path, *c);
  }
  auto backend = env.open_backend(env.device_path);
  const int open_err = backend ? 0 : backend.error().errnum;
  if (open_err == ENOENT || open_err == ENODEV || open_err == ENXIO) {
    // not loaded (no device, or a node left without its module): load it
    // with the file's parameters
    std::vector<std::string> argv;
    if (auto it = opts.find("--module"); it != opts.end()) {
      argv = {"insmod", std::string(it->second)};
    } else {
      argv = {"modprobe", "o2lnd"};
    }
    argv.insert(argv.end(), options.begin(), options.end());
    const int rc = env.run_program ? env.run_program(argv) : spawn(argv);
    if (rc != 0) {
      env.err << "o2ctl: import: " << join(argv) << " failed ("
              << (rc < 0 ? std::string("could not run it") : "exit " + std::to_string(rc))
              << "); the kernel log says why\n";
      return kExitFailure;
    }
    auto r = open_running(env, kCmd);
    if (!r) {
      return kExitFailure;
    }
    env.out << "loaded o2lnd: " << r->config.nets.size() << " NIs, " << r->config.routes.size()
            << " routes\n";
    return kExitOk;
  }
  if (!backend) {
    env.err << "o2ctl: " << backend.error().message << "\n";
    return kExitFailure;
  }
  auto dev = o2lnd::Device::attach(std::move(*backend), "o2ctl");
  if (!dev) {
    env.err << "o2ctl: " << dev.error().message << "\n";
    return kExitFailure;
  }
  auto have = running(env, kCmd, *dev);
  if (!have) {
    return kExitFailure;
  }
  // Routes and tunables are the module's parameters: the loaded module
  // must have the file's, or nothing is changed; but forwarding, which
  // the module takes at run time, and the NIs, which net add adds.
  auto diffs = load_time_differences(*c, *have);
  if (!diffs.empty()) {
    env.err << "o2ctl: import: " << path << ": o2lnd is loaded with other parameters; "
            << "nothing changed:\n";
    for (const auto& d : diffs) {
      env.err << "  " << d << "\n";
    }
    env.err << "Routes and tunables are set when o2lnd loads: unload it (rmmod o2lnd) "
               "and import again.\n";
    return kExitFailure;
  }
  int added = 0;
  auto fwd =
      std::ranges::find_if(c->tunables, [](const auto& t) { return t.first == kForwarding; });
  if (fwd != c->tunables.end() && read_param(env, kForwarding) != fwd->second) {
    // checked before anything else changes: it is the one write that can
    // be refused (not root)
    std::ofstream f(env.params_dir + "/" + std::string(kForwarding));
    f << fwd->second << "\n";
    f.flush();
    if (!f) {
      env.err << "o2ctl: import: cannot set forwarding=" << fwd->second << " in " << env.params_dir
              << ": " << std::strerror(errno) << "; nothing changed\n";
      return kExitFailure;
    }
    env.out << "forwarding " << fwd->second << "\n";
    added++;
  }
  for (const auto& n : c->nets) {
    if (std::ranges::find(have->nets, n) != have->nets.end()) {
      continue;
    }
    auto nid = dev->net_add(n.net, n.iface);
    if (!nid) {
      return kernel_failure(env, kCmd, *dev, nid.error());
    }
    env.out << "added " << nid->str() << " on " << n.iface << "\n";
    added++;
  }
  for (const auto& n : have->nets) {
    if (std::ranges::find(c->nets, n) == c->nets.end()) {
      env.err << "o2ctl: import: " << n.net << " on " << n.iface
              << " is not in the file; left as it is (o2ctl net del removes it)\n";
    }
  }
  if (added == 0) {
    env.out << "o2lnd already has this configuration\n";
  }
  return kExitOk;
}

constexpr Option kImportOptions[] = {
    {"--module", "", true},
    {"--options", "", false},
    {"--del", "", false},
};

}  // namespace

constinit const Command kExportCommand = {
    "export",
    "",
    "the running configuration as YAML, like 'lnetctl export'",
    "Prints the loaded module's configuration in the form 'o2ctl import'\n"
    "reads: net (each NI's network and interface), route (net, gateway, hop,\n"
    "priority) and tunables (every module parameter but networks and routes,\n"
    "with its value).  'o2ctl export > /etc/o2lnd.conf' saves it for the\n"
    "o2lnd service.\n",
    {},
    run_export};

constinit const Command kImportCommand = {
    "import",
    "FILE [--module PATH] [--options] [--del]",
    "load o2lnd from a configuration file, like 'lnetctl import'",
    "Reads FILE ('-' for standard input): YAML with net, route, routing and\n"
    "tunables sections, as 'o2ctl export' writes and as 'lnetctl export'\n"
    "writes for o2ib networks (its other sections, and per-NI tunables, are\n"
    "skipped with a note).  The whole file is checked first; an error names\n"
    "the line, and nothing is changed.  When o2lnd is not loaded, it is\n"
    "loaded with the file's networks, routes and tunables as its parameters\n"
    "(modprobe o2lnd, or insmod PATH with --module).  When it is loaded, the\n"
    "NIs the file lists and the module lacks are added (as 'o2ctl net add')\n"
    "and forwarding is set (the one parameter the module takes at run time);\n"
    "its routes and other tunables, set at load, must be the file's, or the\n"
    "command fails and changes nothing.  Importing a file twice changes\n"
    "nothing the second time.  Needs CAP_SYS_MODULE to load, CAP_NET_ADMIN to\n"
    "add NIs.\n"
    "\n"
    "      --del         delete the file's NIs that the module has instead (as\n"
    "                    'o2ctl net del'); routes and tunables stay until unload\n"
    "      --module PATH load this o2lnd.ko with insmod instead of modprobe\n"
    "      --options     only print the module parameters the file stands for\n"
    "                    (a line for 'options o2lnd ...' in modprobe.d(5))\n",
    kImportOptions,
    run_import};

}  // namespace o2ctl::cmd
