#include "guest.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "protocol.h"

#if !defined(O2_SOURCE_DIR) || !defined(O2_BINARY_DIR)
#error "the build defines O2_SOURCE_DIR and O2_BINARY_DIR (testbed/CMakeLists.txt)"
#endif
#ifndef O2_AGENT_PATH
#define O2_AGENT_PATH ""
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace o2tb {

namespace {

std::string env_or(const char* name, const std::string& def) {
  const char* v = getenv(name);
  return v && (*v != 0) ? std::string(v) : def;
}

std::string slurp(const std::string& path, size_t from = 0) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  f.seekg(static_cast<std::streamoff>(from));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

size_t file_size_or0(const std::string& path) {
  std::error_code ec;
  auto s = fs::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(s);
}

std::string tail(const std::string& s, size_t n) {
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// The guest's /tmp is a tmpfs of its own (the initramfs mounts it over the
// host's, shared read-only as the guest's root), so a host path under /tmp
// would be invisible in the guest: a cache made by `O2_CACHE=$(mktemp -d)`,
// the Lustre peer built in it, a checkout, a build or results folder.  The
// initramfs binds the host folders named by o2.hosttmp= (read-only, from the
// host's root) over that tmpfs at their own path.  Returns that list: the
// folders directly under /tmp holding one of `paths` or a path an O2_*
// variable names (':'-separated lists too), as given and symlinks resolved;
// "" when there is none.
std::string host_tmp_dirs(const std::vector<std::string>& paths) {
  std::set<std::string> dirs;
  auto add_top = [&dirs](const std::string& p) {
    if (p.rfind("/tmp/", 0) != 0) return;
    std::string top = p.substr(0, p.find('/', 5));
    if (top.size() > 5 && top != "/tmp/.." && top.find_first_of(" \t\n,\"'") == std::string::npos) {
      dirs.insert(top);
    }
  };
  auto add = [&add_top](const std::string& p) {
    if (p.empty() || p[0] != '/') return;
    add_top(fs::path(p).lexically_normal().string());
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    if (!ec) add_top(c.string());
  };
  for (const auto& p : paths) add(p);
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (kv.rfind("O2_", 0) != 0 || eq == std::string::npos) continue;
    std::stringstream vs(kv.substr(eq + 1));
    for (std::string v; std::getline(vs, v, ':');) add(v);
  }
  std::string out;
  for (const auto& d : dirs) {
    if (out.size() + d.size() > 1000) break;  // the kernel command line holds 2048
    out += (out.empty() ? "" : ",") + d;
  }
  return out;
}

}  // namespace

double timeout_scale() {
  static const double s = [] {
    const char* v = getenv("O2_TIMEOUT_SCALE");
    double d = v ? atof(v) : 0;
    return d > 0 ? d : 1.0;
  }();
  return s;
}

std::string top_dir() { return env_or("O2_TOP", O2_SOURCE_DIR); }
std::string build_dir() { return env_or("O2_BUILD", O2_BINARY_DIR); }

Kernel Kernel::find(const std::string& name_in) {
  std::string name = name_in.empty() ? env_or("O2_KERNEL", "debian") : name_in;
  std::string cache = env_or("O2_CACHE", "/var/cache/o2lnd") + "/kernels/";
  std::string dir = name.find('/') != std::string::npos ? name : cache + name;
  if (name.find('/') == std::string::npos && !fs::exists(dir)) {
    // kernel/build.sh folders: <flavour>-<hash>-<key>; take the newest finished one.
    fs::file_time_type best{};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache, ec)) {
      std::string fn = e.path().filename().string();
      if (fn.rfind(name + "-", 0) != 0 || !fs::exists(e.path() / ".done")) continue;
      auto t = fs::last_write_time(e.path() / ".done", ec);
      if (dir == cache + name || t > best) {
        best = t;
        dir = e.path().string();
      }
    }
  }
  std::error_code ec;
  auto canon = fs::canonical(dir, ec);
  if (ec) {
    throw Error("kernel '" + name + "': no folder " + dir +
                " (run testbed/setup.sh, or kernel/build.sh for test/debug)");
  }
  Kernel k;
  k.dir = canon.string();
  k.image = fs::exists(k.dir + "/vmlinux") ? k.dir + "/vmlinux" : k.dir + "/bzImage";
  // A KASAN kernel (kernel/build.sh debug) dies before its first console
  // line when entered through PVH (qboot + ELF vmlinux): QEMU just exits.
  // Through the bzImage's own entry it boots.
  if (fs::exists(k.dir + "/bzImage") &&
      slurp(k.dir + "/obj/.config").find("\nCONFIG_KASAN=y\n") != std::string::npos) {
    k.image = k.dir + "/bzImage";
  }
  k.initrd = k.dir + "/initramfs.cpio.gz";
  std::ifstream rf(k.dir + "/release");
  std::getline(rf, k.release);
  k.moddir = k.dir + "/lib/modules/" + k.release;
  if (!fs::exists(k.moddir) && fs::exists(k.dir + "/root/lib/modules/" + k.release)) {
    k.moddir = k.dir + "/root/lib/modules/" + k.release;
  }
  std::string mkinit = top_dir() + "/testbed/mkinitramfs.sh";
  std::error_code ec2;
  bool stale = fs::exists(k.initrd) && fs::exists(mkinit) &&
               fs::last_write_time(mkinit, ec2) > fs::last_write_time(k.initrd, ec2);
  if ((!fs::exists(k.initrd) || stale) && !k.release.empty()) {
    std::string cmd = "'" + top_dir() + "/testbed/mkinitramfs.sh' '" + k.dir + "' >&2";
    if (system(cmd.c_str()) != 0) throw Error("mkinitramfs.sh " + k.dir + " failed");
  }
  if (!fs::exists(k.image) || !fs::exists(k.initrd) || k.release.empty()) {
    throw Error("kernel folder " + k.dir + " lacks vmlinux/bzImage, initramfs.cpio.gz or release");
  }
  return k;
}

// A line of an oops after its headline worth keeping: the RIP, or a
// frame of the call trace ("func+0x1a/0x40 [module]").
bool is_trace_line(const std::string& line) {
  if (line.find("RIP: ") != std::string::npos) return true;
  size_t plus = line.find("+0x");
  return plus != std::string::npos && line.find("/0x", plus) != std::string::npos;
}

std::vector<std::string> scan_reports(const std::string& log) {
  static const char* const kPatterns[] = {
      "Oops",
      "BUG:",
      "WARNING:",
      "KASAN",
      "possible recursive locking",
      "circular locking",
      "kmemleak",
      "refcount_t:",
      "list_add corruption",
      "list_del corruption",
      "general protection",
      "Kernel panic",
      "LBUG",  // a Lustre assertion (panics only with panic_on_lbug)
      "UBSAN:",
      "stack-protector",
      "hung_task",
      "blocked for more than",
      "soft lockup",
      "rcu_sched self-detected stall",
      "rcu: INFO:",
  };
  static const char* const kIgnore[] = {
      "o2-testbed-mark",
      "o2-init",
      "o2-agent",
      "o2-initramfs",
      "kmemleak: Kernel memory leak detector initialized",
      "kmemleak: Automatic memory scanning thread started",
      // The single-step #DB that QEMU leaks into a guest (the kernel's own
      // comment at this WARN_ON_ONCE in exc_debug_kernel() says so; seen
      // under TCG in rxe's receive path on Debian's 6.12).  The kernel
      // clears TF and goes on; it says nothing of the code it hit.
      "arch/x86/kernel/traps.c:1120 exc_debug_kernel+0x",
  };
  // Reports whose next lines say where they happened: the RIP line and
  // up to kTraceLines frames of the call trace are kept with them, so a
  // failure's message names the functions without the console at hand.
  static const char* const kTraced[] = {"Oops", "BUG:", "WARNING:", "general protection", "KASAN"};
  constexpr int kTraceLines = 14;
  int trace = 0;
  std::vector<std::string> out;
  std::istringstream is(log);
  std::string line;
  while (std::getline(is, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    bool hit = false;
    for (const auto* p : kPatterns) {
      if (line.find(p) != std::string::npos) hit = true;
    }
    for (const auto* p : kIgnore) {
      if (hit && line.find(p) != std::string::npos) hit = false;
    }
    if (hit) {
      out.push_back(line);
      // an oops, a BUG or a WARNING: its RIP and call trace follow
      for (const auto* p : kTraced) {
        if (line.find(p) != std::string::npos) trace = kTraceLines;
      }
    } else if (trace > 0 && is_trace_line(line)) {
      out.push_back(line);
      trace--;
    }
  }
  return out;
}

Guest::Guest(GuestConfig cfg) : cfg_(std::move(cfg)) {
  // Request ids differ between host processes: a reply the agent queued for
  // an earlier (disconnected) client must not match one of our requests.
  next_id_ = static_cast<uint32_t>(std::random_device{}()) | 1u;
  if (cfg_.agent.empty()) cfg_.agent = env_or("O2_AGENT", O2_AGENT_PATH);
  if (cfg_.init.empty()) cfg_.init = top_dir() + "/testbed/guest-init.sh";
  fs::create_directories(cfg_.dir);
}

Guest::~Guest() {
  disconnect();
  if (!detached_) kill();
}

namespace {

// QEMU finds the socket of NIC i on descriptor kNicFdBase + i.
constexpr int kNicFdBase = 100;

// The sockets API takes a sockaddr_in as a sockaddr.
sockaddr* as_sockaddr(sockaddr_in* a) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): sockets API
  return reinterpret_cast<sockaddr*>(a);
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

// "<local port> <remote port> <mac>" per NIC, eth0 first
void save_nics(const std::string& dir, const std::vector<Nic>& nics) {
  std::string t;
  for (const Nic& n : nics) {
    t += std::to_string(n.local_port) + " " + std::to_string(n.remote_port) + " " + n.mac + "\n";
  }
  spit(dir + "/nics", t);
}

std::vector<Nic> load_nics(const std::string& dir) {
  std::ifstream f(dir + "/nics");
  std::vector<Nic> v;
  unsigned l = 0;
  unsigned r = 0;
  std::string mac;
  while (f >> l >> r >> mac) {
    if (l == 0 || l > 65535 || r == 0 || r > 65535) {
      throw Error("bad link ports in " + dir + "/nics");
    }
    v.push_back({static_cast<uint16_t>(l), static_cast<uint16_t>(r), mac});
  }
  return v;
}

}  // namespace

int open_link_socket(const Nic& n) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("link socket: ") + strerror(errno));
  // Room for a burst while the guest behind it is slow to take frames: as
  // root beyond net.core.rmem_max / wmem_max, else up to them.
  const int size = 4 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
  sockaddr_in me = loopback(n.local_port);
  sockaddr_in peer = loopback(n.remote_port);
  if (bind(fd, as_sockaddr(&me), sizeof me) < 0 ||
      connect(fd, as_sockaddr(&peer), sizeof peer) < 0) {
    int e = errno;
    close(fd);
    throw Error("link socket 127.0.0.1:" + std::to_string(n.local_port) + " -> " +
                std::to_string(n.remote_port) + ": " + strerror(e));
  }
  return fd;
}

std::pair<uint16_t, uint16_t> free_udp_port_pair() {
  int fds[2] = {-1, -1};
  uint16_t ports[2] = {0, 0};
  std::string err;
  for (int i = 0; i < 2 && err.empty(); i++) {
    fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (fds[i] < 0 || bind(fds[i], as_sockaddr(&a), sizeof a) < 0 ||
        getsockname(fds[i], as_sockaddr(&a), &len) < 0) {
      err = strerror(errno);
    } else {
      ports[i] = ntohs(a.sin_port);
    }
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  if (!err.empty()) throw Error("no free UDP port on 127.0.0.1: " + err);
  return {ports[0], ports[1]};
}

std::unique_ptr<Guest> Guest::attach(const std::string& dir) {
  std::ifstream nf(dir + "/name");
  GuestConfig c;
  std::getline(nf, c.name);
  if (c.name.empty()) throw Error("no guest in " + dir);
  c.dir = dir;
  c.agent = "-";
  c.init = "-";
  c.die_with_parent = false;
  auto g = std::make_unique<Guest>(c);
  g->detached_ = true;
  g->pid_ = g->read_pid();
  std::ifstream mf(dir + "/mark");
  std::getline(mf, g->last_mark_);
  return g;
}

pid_t Guest::read_pid() const {
  std::ifstream f(cfg_.dir + "/qemu.pid");
  pid_t p = -1;
  f >> p;
  return p;
}

std::vector<std::string> Guest::qemu_argv() const {
  // A guest re-booted through attach() reuses the command line it was born with.
  if (cfg_.agent == "-") {
    std::string all = slurp(cfg_.dir + "/qemu.args");
    std::vector<std::string> v;
    size_t s = 0;
    for (size_t i = 0; i < all.size(); i++) {
      if (all[i] == '\0') {
        v.push_back(all.substr(s, i - s));
        s = i + 1;
      }
    }
    if (v.empty()) throw Error("no qemu.args in " + cfg_.dir);
    return v;
  }
  const Kernel& k = cfg_.kernel;
  bool pvh = k.image.size() > 8 && k.image.substr(k.image.size() - 8) == "/vmlinux";
  std::string append =
      "console=ttyS0 panic=-1 loglevel=5 mitigations=off norandmaps nokaslr tsc=reliable "
      "o2.name=" +
      cfg_.name + " o2.agent=" + cfg_.agent + " o2.init=" + cfg_.init + " o2.moddir=" + k.moddir +
      " o2.live=" + top_dir();
  std::string tmp_dirs =
      host_tmp_dirs({k.dir, cfg_.agent, cfg_.init, cfg_.dir, top_dir(), build_dir()});
  if (!tmp_dirs.empty()) append += " o2.hosttmp=" + tmp_dirs;
  for (const auto& p : cfg_.params) append += " " + p;
  std::vector<std::string> a = {
      "qemu-system-x86_64",
      "-name",
      // debug-threads names the vCPU threads ("CPU 0/TCG"): benchmarks
      // read how busy a guest's CPU was
      cfg_.name + ",debug-threads=on",
      "-M",
      "q35",
      "-accel",
      "tcg,thread=multi",
      "-m",
      std::to_string(cfg_.mem_mb),
      "-smp",
      // maxcpus above 1 makes QEMU 7.2 translate in parallel mode even for
      // one vCPU.  Otherwise it drops the guest's memory barriers (and makes
      // its locked instructions plain), and virtio notifications get lost
      // between the vCPU and QEMU's I/O thread: a NIC whose transmit queue
      // stopped for good after minutes of traffic (QEMU 8.1 keeps barriers
      // in system mode for this reason).
      std::to_string(cfg_.smp) + ",maxcpus=" + std::to_string(std::max(2, cfg_.smp)),
      "-nodefaults",
      "-no-user-config",
      "-nic",
      "none",
      "-display",
      "none",
      "-no-reboot",
      "-serial",
      "file:" + cfg_.dir + "/console.log",
      // The human monitor, for pause() / resume() (no networking on it).
      "-monitor",
      "unix:" + cfg_.dir + "/mon.sock,server=on,wait=off",
      "-pidfile",
      cfg_.dir + "/qemu.pid",
      "-kernel",
      k.image,
      "-initrd",
      k.initrd,
      "-append",
      append,
      "-virtfs",
      "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
      "-virtfs",
      "local,path=" + top_dir() + ",mount_tag=live,security_model=none,readonly=on,multidevs=remap",
      "-virtfs",
      "local,path=" + cfg_.dir + "/out,mount_tag=out,security_model=none,multidevs=remap",
      "-device",
      "virtio-serial-pci",
      "-chardev",
      "socket,id=agent,path=" + cfg_.dir + "/agent.sock,server=on,wait=off",
      "-device",
      std::string("virtserialport,chardev=agent,name=") + proto::kPortName,
  };
  if (pvh) {
    a.emplace_back("-bios");
    a.emplace_back("/usr/share/qemu/qboot.rom");
  }
  for (size_t i = 0; i < cfg_.nics.size(); i++) {
    const Nic& n = cfg_.nics[i];
    std::string id = "n" + std::to_string(i);
    a.emplace_back("-netdev");
    // start() puts the link's socket on this descriptor
    a.push_back("dgram,id=" + id +
                ",local.type=fd,local.str=" + std::to_string(kNicFdBase + static_cast<int>(i)));
    a.emplace_back("-device");
    a.push_back("virtio-net-pci,netdev=" + id + ",mac=" + n.mac + ",romfile=,host_mtu=9000");
  }
  return a;
}

void Guest::start() {
  kill();
  disconnect();
  // Keep the previous boot's reports: they may belong to the running test.
  if (boots_ > 0 || fs::exists(console_path())) {
    std::string old = slurp(console_path(), console_mark_);
    for (auto& r : scan_reports(old)) last_mark_carry_.push_back("[previous boot] " + r);
    int n = 1;
    while (fs::exists(cfg_.dir + "/console.prev" + std::to_string(n) + ".log")) n++;
    std::error_code ec;
    fs::rename(console_path(), cfg_.dir + "/console.prev" + std::to_string(n) + ".log", ec);
  }
  console_mark_ = 0;
  fs::create_directories(cfg_.dir + "/out");
  std::vector<std::string> argv = qemu_argv();
  // A guest booted again through attach() finds its links' ports where its
  // first boot left them.
  std::vector<Nic> nics = cfg_.agent == "-" ? load_nics(cfg_.dir) : cfg_.nics;
  if (cfg_.agent != "-") save_nics(cfg_.dir, nics);
  std::vector<int> socks;
  auto close_socks = [&] {
    for (int s : socks) close(s);
  };
  try {
    for (const Nic& n : nics) socks.push_back(open_link_socket(n));
  } catch (...) {
    close_socks();
    throw;
  }
  unlink((cfg_.dir + "/agent.sock").c_str());
  unlink(monitor_path().c_str());
  unlink((cfg_.dir + "/qemu.pid").c_str());
  paused_ = false;
  {
    std::string all;
    for (auto& s : argv) all += s + '\0';
    spit(cfg_.dir + "/qemu.args", all);
    spit(cfg_.dir + "/name", cfg_.name + "\n");
    std::string sh;
    for (auto& s : argv) sh += "'" + s + "' ";
    spit(cfg_.dir + "/qemu.cmdline", sh + "\n");
  }
  std::vector<char*> cargv;
  cargv.reserve(argv.size());
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::string qlog = cfg_.dir + "/qemu.log";
  pid_t pid = fork();
  if (pid < 0) {
    close_socks();
    throw Error(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    setsid();
    if (cfg_.die_with_parent) prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The copies stay open across exec (the originals are CLOEXEC); moved
    // out of the way first, so no link socket sits on another's target.
    for (int& s : socks) s = fcntl(s, F_DUPFD_CLOEXEC, 1000);
    for (size_t i = 0; i < socks.size(); i++) {
      if (socks[i] < 0 || dup2(socks[i], kNicFdBase + static_cast<int>(i)) < 0) _exit(126);
    }
    int fd = open(qlog.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close_socks();  // QEMU holds the links now
  pid_ = pid;
  boots_++;
  boot_start_ = Clock::now();
}

void Guest::wait_ready(std::chrono::seconds timeout) {
  timeout = std::chrono::seconds(
      static_cast<long>(static_cast<double>(timeout.count()) * timeout_scale()));
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (!alive()) {
      throw Error("guest " + cfg_.name + ": QEMU exited during boot; qemu.log: " +
                  tail(slurp(cfg_.dir + "/qemu.log"), 2000) + "\nconsole tail:\n" +
                  tail(slurp(console_path()), 3000));
    }
    if (!connected_ && !connect_agent()) {
      usleep(100000);
      continue;
    }
    if (auto r = request(proto::kPing, "", 2.0); r && r->first == proto::kPong) {
      boot_seconds_ = std::chrono::duration<double>(Clock::now() - boot_start_).count();
      return;
    }
  }
  throw Error("guest " + cfg_.name + ": agent did not answer within " +
              std::to_string(timeout.count()) + " s; console tail:\n" +
              tail(slurp(console_path()), 3000));
}

void Guest::boot(std::chrono::seconds timeout) {
  start();
  wait_ready(timeout);
}

bool Guest::alive() const {
  if (pid_ <= 0) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    const_cast<Guest*>(this)->pid_ = -1;
    return false;
  }
  if (r < 0 && errno == ECHILD) return ::kill(pid_, 0) == 0;
  return true;
}

void Guest::kill() {
  disconnect();
  pid_t p = pid_ > 0 ? pid_ : read_pid();
  if (p <= 0) return;
  // Only a QEMU whose pidfile we wrote; make sure the pid is still QEMU.
  std::string comm = slurp("/proc/" + std::to_string(p) + "/comm");
  if (comm.rfind("qemu-system", 0) == 0) {
    ::kill(p, SIGKILL);
    for (int i = 0; i < 200; i++) {
      int st = 0;
      pid_t r = waitpid(p, &st, WNOHANG);
      if (r == p || (r < 0 && ::kill(p, 0) != 0)) break;
      usleep(10000);
    }
  }
  pid_ = -1;
  paused_ = false;
  unlink((cfg_.dir + "/qemu.pid").c_str());
}

std::string hmp_command(const std::string& path, const std::string& cmd, double timeout_s) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("socket: ") + strerror(errno));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) {
    close(fd);
    throw Error("socket path too long: " + path);
  }
  path.copy(sa.sun_path, path.size());
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): sockets API
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    int e = errno;
    close(fd);
    throw Error("QEMU monitor " + path + ": " + strerror(e));
  }
  const std::string prompt = "(qemu) ";
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  std::string buf;
  // Reads until the buffer ends with the prompt; false on EOF or timeout.
  auto until_prompt = [&]() {
    for (;;) {
      if (buf.size() >= prompt.size() &&
          buf.compare(buf.size() - prompt.size(), prompt.size(), prompt) == 0) {
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      int n = poll(&p, 1, static_cast<int>(left.count()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      char rb[4096];
      ssize_t r = read(fd, rb, sizeof rb);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      buf.append(rb, static_cast<size_t>(r));
    }
  };
  if (!until_prompt()) {
    close(fd);
    throw Error("QEMU monitor " + path + ": no prompt");
  }
  buf.clear();
  std::string line = cmd + "\n";
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  bool ok = off == line.size() && until_prompt();
  close(fd);
  if (!ok) throw Error("QEMU monitor " + path + ": no answer to '" + cmd + "'");
  buf.resize(buf.size() - prompt.size());
  // The monitor echoes the command line (with terminal escapes): drop the
  // first line, and carriage returns.
  size_t nl = buf.find('\n');
  std::string out = nl == std::string::npos ? std::string() : buf.substr(nl + 1);
  std::erase(out, '\r');
  return out;
}

std::string Guest::vm_status() const {
  std::string s = hmp_command(monitor_path(), "info status");
  // "VM status: running" / "VM status: paused"
  size_t p = s.find("VM status: ");
  if (p == std::string::npos) return s;
  std::string v = s.substr(p + 11);
  return v.substr(0, v.find_first_of(" \n"));
}

void Guest::pause() {
  if (!alive()) throw Error("guest " + cfg_.name + ": pause: not running");
  hmp_command(monitor_path(), "stop");
  paused_ = true;
}

void Guest::resume() {
  if (!alive()) throw Error("guest " + cfg_.name + ": resume: not running");
  hmp_command(monitor_path(), "cont");
  paused_ = false;
}

bool Guest::connect_agent() {
  // The last connection's reader has ended (connected_ is false only once
  // it has, or after disconnect()): a guest that rebooted by itself (a
  // panic, panic=-1) is reached again on a new connection.  Join it and
  // close its socket first: assigning a joinable std::thread terminates.
  if (reader_.joinable()) reader_.join();
  {
    std::lock_guard lk(mu_);
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::string path = cfg_.dir + "/agent.sock";
  if (path.size() >= sizeof sa.sun_path) {
    close(fd);
    throw Error("socket path too long: " + path);
  }
  path.copy(sa.sun_path, path.size());  // fits, with the NUL from sa{}
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): sockets API
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    close(fd);
    return false;
  }
  {
    std::lock_guard lk(mu_);
    fd_ = fd;
    connected_ = true;
  }
  reader_ = std::thread(&Guest::reader_loop, this, fd);
  return true;
}

void Guest::disconnect() {
  {
    std::lock_guard lk(mu_);
    if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
  }
  if (reader_.joinable()) reader_.join();
  std::lock_guard lk(mu_);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  connected_ = false;
  cv_.notify_all();
}

void Guest::reader_loop(int fd) {
  std::string buf;
  char rb[65536];
  for (;;) {
    ssize_t n = read(fd, rb, sizeof rb);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(rb, static_cast<size_t>(n));
    proto::Header h{};
    std::string payload;
    while (proto::parse_frame(buf, h, payload)) {
      std::lock_guard lk(mu_);
      auto it = pending_.find(h.id);
      if (it == pending_.end()) continue;  // stale reply (earlier ping)
      it->second.done = true;
      it->second.type = h.type;
      it->second.payload = std::move(payload);
      cv_.notify_all();
    }
  }
  std::lock_guard lk(mu_);
  connected_ = false;
  cv_.notify_all();
}

std::optional<std::pair<uint32_t, std::string>> Guest::request(uint32_t type,
                                                               const std::string& payload,
                                                               double timeout_s) {
  uint32_t id = 0;
  int fd = 0;
  {
    std::lock_guard lk(mu_);
    if (!connected_) return std::nullopt;
    id = next_id_++;
    if (id == 0) id = next_id_++;
    pending_[id] = {};
    fd = fd_;
  }
  std::string f = proto::frame(type, id, payload);
  {
    std::lock_guard wl(write_mu_);
    size_t off = 0;
    while (off < f.size()) {
      ssize_t n = send(fd, f.data() + off, f.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  std::unique_lock lk(mu_);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  cv_.wait_until(lk, deadline, [&] { return pending_[id].done || !connected_; });
  Pending p = std::move(pending_[id]);
  pending_.erase(id);
  if (!p.done) return std::nullopt;
  return std::make_pair(p.type, std::move(p.payload));
}

RunResult Guest::run(const std::string& cmd, double timeout_s, bool separate_stderr) {
  if (!connected_ && alive()) connect_agent();
  timeout_s *= timeout_scale();
  std::string pl;
  proto::put_u32(pl, static_cast<uint32_t>(std::max(1.0, timeout_s * 1000)));
  proto::put_u32(pl, separate_stderr ? uint32_t{proto::kSeparateStderr} : uint32_t{0});
  pl += cmd;
  auto t0 = Clock::now();
  auto r = request(proto::kRun, pl, timeout_s + 30);
  RunResult res;
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!r || r->first != proto::kRunResult || r->second.size() < 12) {
    res.status = -1;
    res.timed_out = true;
    res.out = "o2-testbed: no reply from the agent of " + cfg_.name +
              (alive() ? "" : " (guest is dead)") + "\n";
    return res;
  }
  const std::string& p = r->second;
  res.status = static_cast<int32_t>(proto::get_u32(p, 0));
  uint32_t flags = proto::get_u32(p, 4);
  uint32_t olen = proto::get_u32(p, 8);
  res.timed_out = ((flags & proto::kTimedOut) != 0u);
  res.out = p.substr(12, olen);
  res.err = p.size() > 12 + olen ? p.substr(12 + olen) : "";
  return res;
}

std::string Guest::check(const std::string& cmd, double timeout_s) {
  RunResult r = run(cmd, timeout_s);
  if (!r.ok()) {
    throw Error(cfg_.name + ": `" + cmd + "` failed (status " + std::to_string(r.status) +
                (r.timed_out ? ", timed out" : "") + "):\n" + r.out);
  }
  return r.out;
}

std::optional<std::string> Guest::read_file(const std::string& path, double timeout_s) {
  if (!connected_ && alive()) connect_agent();
  auto r = request(proto::kReadFile, path, timeout_s);
  if (!r || r->first != proto::kFile || r->second.size() < 4 || proto::get_u32(r->second, 0) != 0) {
    return std::nullopt;
  }
  return r->second.substr(4);
}

std::string Guest::dmesg() {
  RunResult r = run("dmesg", 30, true);
  return r.status == 0 ? r.out : std::string();
}

void Guest::mark(const std::string& label) {
  last_mark_ =
      "o2-testbed-mark: " + label + " " + std::to_string(Clock::now().time_since_epoch().count());
  run("echo '" + last_mark_ + "' > /dev/kmsg", 10);
  spit(cfg_.dir + "/mark", last_mark_ + "\n");
  console_mark_ = file_size_or0(console_path());
  last_mark_carry_.clear();
}

std::vector<std::string> Guest::kernel_reports() {
  std::vector<std::string> out = last_mark_carry_;
  std::set<std::string> seen;
  auto add = [&](const std::string& l) {
    // dedupe console vs dmesg: compare the text after the "[ time]" stamp
    size_t b = l.find("] ");
    std::string key = l.rfind('[', 0) == 0 && b != std::string::npos ? l.substr(b + 2) : l;
    if (seen.insert(key).second) out.push_back(l);
  };
  for (auto& l : scan_reports(slurp(console_path(), console_mark_))) add(l);
  if (alive()) {
    std::string d = dmesg();
    if (!last_mark_.empty()) {
      size_t m = d.rfind(last_mark_);
      if (m != std::string::npos) d = d.substr(m);
    }
    for (auto& l : scan_reports(d)) add(l);
  }
  return out;
}

std::string Guest::save_dmesg(const std::string& tag) {
  std::string path = cfg_.dir + "/dmesg" + (tag.empty() ? "" : "-" + tag) + ".txt";
  spit(path, alive() ? dmesg() : std::string("(guest not running)\n"));
  return path;
}

}  // namespace o2tb
