// o2ctl version: the versions of o2ctl, its ABI and the module.

#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "commands.h"
#include "o2ctl/cli.h"
#include "o2ctl/format.h"
#include "o2lnd/backend.h"
#include "o2lnd/device.h"

namespace o2ctl::cmd {
namespace {

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
  if (!info.accepts(o2lnd::kAbiVersion)) {
    env.err << "o2ctl: o2lnd module ABI " << info.abi_version << ", o2ctl speaks ABI "
            << o2lnd::kAbiVersion << ": upgrade o2ctl or load a matching module\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

constinit const Command kVersionCommand = {
    "version",
    "",
    "versions of o2ctl, its ABI and the o2lnd module",
    "Prints YAML: o2ctl version, o2ctl abi, module version, module abi.\n"
    "Exits 1 when the module cannot be asked or speaks another ABI.\n",
    {},
    run_version};

}  // namespace o2ctl::cmd
