// o2-agent: the guest side of the test bed.  Started (usually as PID 1) by
// guest-init.sh; serves the host over the virtio-serial port "o2agent":
// run a shell command with a deadline, read a file, answer pings.
// Every request runs in its own thread; one reaper thread waits for all
// children (orphans included, since we may be PID 1).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "protocol.h"

namespace {

using namespace o2tb;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxOutput = 32u << 20;

int g_port = -1;
std::mutex g_write_mu;

std::mutex g_child_mu;
std::condition_variable g_child_cv;
std::set<pid_t> g_ours;         // children started by requests
std::map<pid_t, int> g_exited;  // their wait statuses, until collected

void klog(const std::string& msg) {
  int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  std::string l = "o2-agent: " + msg + "\n";
  if (fd >= 0) {
    // Best effort: the kernel log is a convenience, stderr has the line too.
    const ssize_t written = write(fd, l.data(), l.size());
    static_cast<void>(written);
    close(fd);
  }
  fputs(l.c_str(), stderr);
}

void send_frame(uint32_t type, uint32_t id, const std::string& payload) {
  std::string f = proto::frame(type, id, payload);
  std::lock_guard lk(g_write_mu);
  size_t off = 0;
  while (off < f.size()) {
    ssize_t n = write(g_port, f.data() + off, f.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{g_port, POLLOUT, 0};
        poll(&p, 1, 100);
        continue;
      }
      klog(std::string("write to port failed: ") + strerror(errno));
      return;
    }
    off += static_cast<size_t>(n);
  }
}

void reaper() {
  for (;;) {
    int st = 0;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      std::unique_lock lk(g_child_mu);
      g_child_cv.wait_for(lk, std::chrono::milliseconds(200));
      continue;
    }
    std::lock_guard lk(g_child_mu);
    if (g_ours.count(pid) != 0u) {
      g_exited[pid] = st;
      g_child_cv.notify_all();
    }
  }
}

// Reads what is available on fd into out (capped); returns false on EOF.
bool drain(int fd, std::string& out) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    if (out.size() < kMaxOutput) {
      out.append(buf, std::min<size_t>(static_cast<size_t>(n), kMaxOutput - out.size()));
    }
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

void do_run(uint32_t id, const std::string& payload) {
  uint32_t timeout_ms = proto::get_u32(payload, 0);
  uint32_t flags = proto::get_u32(payload, 4);
  std::string cmd = payload.size() > 8 ? payload.substr(8) : "";
  bool separate = (flags & proto::kSeparateStderr) != 0u;

  int po[2], pe[2] = {-1, -1};
  if (pipe2(po, O_CLOEXEC) < 0 || (separate && pipe2(pe, O_CLOEXEC) < 0)) {
    std::string r;
    proto::put_u32(r, static_cast<uint32_t>(-1));
    proto::put_u32(r, 0);
    std::string msg = std::string("o2-agent: pipe: ") + strerror(errno) + "\n";
    proto::put_u32(r, static_cast<uint32_t>(msg.size()));
    r += msg;
    send_frame(proto::kRunResult, id, r);
    return;
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const char* argv[] = {"/bin/bash", "-c", cmd.c_str(), nullptr};
  sigset_t empty;
  sigemptyset(&empty);

  pid_t pid = 0;
  {
    std::lock_guard lk(g_child_mu);  // the reaper must see pid in g_ours
    pid = fork();
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &empty, nullptr);
      setsid();
      dup2(devnull, 0);
      dup2(po[1], 1);
      dup2(separate ? pe[1] : po[1], 2);
      if (chdir("/") != 0) {
        _exit(126);
      }
      execv(argv[0], const_cast<char**>(argv));
      _exit(127);
    }
    if (pid > 0) g_ours.insert(pid);
  }
  g_child_cv.notify_all();
  close(po[1]);
  if (separate) close(pe[1]);
  if (devnull >= 0) close(devnull);
  fcntl(po[0], F_SETFL, O_NONBLOCK);
  if (separate) fcntl(pe[0], F_SETFL, O_NONBLOCK);

  std::string out, err;
  uint32_t rflags = 0;
  int status = -1;
  if (pid < 0) {
    out = std::string("o2-agent: fork: ") + strerror(errno) + "\n";
  } else {
    auto deadline =
        Clock::now() + std::chrono::milliseconds(timeout_ms != 0u ? timeout_ms : 600000);
    bool out_open = true, err_open = separate;
    bool exited = false;
    Clock::time_point exit_time{};
    int wst = 0;
    for (;;) {
      pollfd p[2] = {{out_open ? po[0] : -1, POLLIN, 0}, {err_open ? pe[0] : -1, POLLIN, 0}};
      int n = poll(p, 2, exited ? 100 : 50);
      if (n > 0) {
        if ((p[0].revents != 0) && !drain(po[0], out)) out_open = false;
        if ((p[1].revents != 0) && !drain(pe[0], err)) err_open = false;
      }
      if (!exited) {
        std::lock_guard lk(g_child_mu);
        auto it = g_exited.find(pid);
        if (it != g_exited.end()) {
          wst = it->second;
          g_exited.erase(it);
          g_ours.erase(pid);
          exited = true;
          exit_time = Clock::now();
        }
      }
      if (exited) {
        // Output of background children that keep the pipe open is not
        // waited for: stop when idle or after 1 s.
        if ((!out_open && !err_open) || n == 0 ||
            Clock::now() - exit_time > std::chrono::seconds(1)) {
          break;
        }
        continue;
      }
      if (Clock::now() > deadline && ((rflags & proto::kTimedOut) == 0u)) {
        rflags |= proto::kTimedOut;
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
      }
    }
    if (WIFEXITED(wst)) {
      status = WEXITSTATUS(wst);
    } else if (WIFSIGNALED(wst)) {
      status = 128 + WTERMSIG(wst);
      rflags |= proto::kSignaled;
    }
  }
  close(po[0]);
  if (separate) close(pe[0]);
  std::string r;
  proto::put_u32(r, static_cast<uint32_t>(status));
  proto::put_u32(r, rflags);
  proto::put_u32(r, static_cast<uint32_t>(out.size()));
  r += out;
  r += err;
  send_frame(proto::kRunResult, id, r);
}

void do_read_file(uint32_t id, const std::string& path) {
  std::string r;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    proto::put_u32(r, static_cast<uint32_t>(errno));
    send_frame(proto::kFile, id, r);
    return;
  }
  proto::put_u32(r, 0);
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) {
        r.resize(0);
        proto::put_u32(r, static_cast<uint32_t>(errno));
      }
      break;
    }
    r.append(buf, static_cast<size_t>(n));
    if (r.size() > proto::kMaxPayload - 16) break;
  }
  close(fd);
  send_frame(proto::kFile, id, r);
}

void do_ping(uint32_t id) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  struct sysinfo si {};
  sysinfo(&si);
  send_frame(proto::kPong, id, std::string(host) + " " + std::to_string(si.uptime));
}

std::string find_port() {
  for (int tries = 0; tries < 200; tries++) {
    if (DIR* d = opendir("/sys/class/virtio-ports")) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream f(std::string("/sys/class/virtio-ports/") + e->d_name + "/name");
        std::string name;
        std::getline(f, name);
        if (name == proto::kPortName) {
          std::string dev = std::string("/dev/") + e->d_name;
          closedir(d);
          return dev;
        }
      }
      closedir(d);
    }
    usleep(50000);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dev = argc > 1 ? argv[1] : find_port();
  if (dev.empty()) {
    klog("no virtio port named o2agent");
    for (;;) pause();
  }
  // SIGCHLD stays default (not ignored) so waitpid reports statuses.
  signal(SIGPIPE, SIG_IGN);
  g_port = open(dev.c_str(), O_RDWR | O_CLOEXEC);
  if (g_port < 0) {
    klog("open " + dev + ": " + strerror(errno));
    for (;;) pause();
  }
  std::thread(reaper).detach();
  klog("serving on " + dev);
  {
    std::ofstream ready("/out/agent.ready");
    ready << "ready\n";
  }

  std::string buf;
  char rb[65536];
  for (;;) {
    ssize_t n = read(g_port, rb, sizeof rb);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      klog(std::string("read: ") + strerror(errno));
      usleep(100000);
      continue;
    }
    if (n == 0) {  // host side not connected
      usleep(50000);
      continue;
    }
    buf.append(rb, static_cast<size_t>(n));
    proto::Header h{};
    std::string payload;
    while (proto::parse_frame(buf, h, payload)) {
      switch (h.type) {
        case proto::kPing:
          do_ping(h.id);
          break;
        case proto::kRun:
          std::thread(do_run, h.id, std::move(payload)).detach();
          break;
        case proto::kReadFile:
          std::thread(do_read_file, h.id, payload).detach();
          break;
        default:
          klog("unknown request type " + std::to_string(h.type));
      }
    }
  }
}
