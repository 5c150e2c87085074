// o2lnd test bed: the host-side driver of one QEMU guest.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace o2tb {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Paths of the repository and the build tree (from the build; overridable
// by the environment: O2_TOP, O2_BUILD).
std::string top_dir();
std::string build_dir();
// $O2_TIMEOUT_SCALE (default 1): multiplies boot and command timeouts, e.g.
// 4 for the debug kernel.  Assertions on how fast something failed are not scaled.
double timeout_scale();

// A bootable kernel: a folder with vmlinux (or bzImage), initramfs.cpio.gz,
// release and lib/modules/<release>.  `name` is "debian" (the default, from
// $O2_KERNEL), "test", "debug" (looked up under $O2_CACHE/kernels) or a path.
struct Kernel {
  std::string dir, image, initrd, release, moddir;
  static Kernel find(const std::string& name = "");
};

// One virtio-net NIC linked to another guest's NIC: a UDP socket on
// 127.0.0.1:local_port connected to the peer's 127.0.0.1:remote_port, opened
// by the test bed and handed to QEMU (-netdev dgram,local.type=fd).  A frame
// that finds the peer's socket buffer full is dropped, as on a wire: QEMU
// never waits for the peer, so no link stalls.
struct Nic {
  uint16_t local_port = 0, remote_port = 0;
  std::string mac;
};

// The link socket of `n`, with room for bursts (4 MiB each way); throws Error
// with the port when it cannot be bound (another process took it).
int open_link_socket(const Nic& n);
// Two free UDP ports on 127.0.0.1, distinct: both ends of a new link.
std::pair<uint16_t, uint16_t> free_udp_port_pair();

struct GuestConfig {
  std::string name;  // hostname and folder name, e.g. "g1"
  std::string dir;   // state folder: sockets, pid, console logs, out/
  Kernel kernel;
  int mem_mb = 1024;
  int smp = 1;
  std::vector<Nic> nics;            // eth0, eth1, ... in order
  std::vector<std::string> params;  // extra kernel command line (o2.ip=...)
  std::string agent;                // guest agent binary (default: next to this program's build)
  std::string init;                 // guest init script (default: testbed/guest-init.sh)
  bool die_with_parent = true;      // QEMU gets SIGKILL when the booting thread exits
};

struct RunResult {
  int status = -1;  // exit code (128+sig when killed by a signal)
  bool timed_out = false;
  std::string out;  // stdout+stderr (or stdout with separate_stderr)
  std::string err;
  double seconds = 0;
  [[nodiscard]] bool ok() const { return status == 0 && !timed_out; }
};

class Guest {
 public:
  explicit Guest(GuestConfig cfg);
  ~Guest();  // kills the guest unless detach()ed
  Guest(const Guest&) = delete;
  Guest& operator=(const Guest&) = delete;
  Guest(Guest&&) = delete;
  Guest& operator=(Guest&&) = delete;

  // Re-attach to a guest booted earlier (by another process) in `dir`.
  static std::unique_ptr<Guest> attach(const std::string& dir);

  [[nodiscard]] const GuestConfig& config() const { return cfg_; }
  [[nodiscard]] const std::string& name() const { return cfg_.name; }
  [[nodiscard]] std::string out_dir() const { return cfg_.dir + "/out"; }
  [[nodiscard]] std::string console_path() const { return cfg_.dir + "/console.log"; }

  // Starts QEMU (killing a previous instance) and waits until the agent
  // answers.  Throws Error on timeout or if QEMU dies.
  void boot(std::chrono::seconds timeout = std::chrono::seconds(180));
  // Starts QEMU without waiting; wait_ready() waits.
  void start();
  void wait_ready(std::chrono::seconds timeout = std::chrono::seconds(180));
  void kill();  // SIGKILL by the pid QEMU wrote
  [[nodiscard]] bool alive() const;
  // Freezes the guest's vCPUs (HMP `stop` on the QEMU monitor, a unix
  // socket mon.sock in the state folder) / lets them run again (`cont`).
  // A paused guest keeps its memory, links and sockets but runs nothing:
  // its agent does not answer (run() just waits, up to its deadline + 30 s,
  // and gets the reply if the guest resumes in time), its RDMA peers see a
  // dead node.  Throws Error if the monitor does not answer.
  void pause();
  void resume();
  // As set by pause()/resume() of this object; vm_status() asks QEMU
  // ("running", "paused", ...).
  [[nodiscard]] bool paused() const { return paused_; }
  [[nodiscard]] std::string vm_status() const;
  [[nodiscard]] std::string monitor_path() const { return cfg_.dir + "/mon.sock"; }
  void detach() { detached_ = true; }
  [[nodiscard]] double boot_seconds() const { return boot_seconds_; }
  [[nodiscard]] int boots() const { return boots_; }  // boots by this object so far

  RunResult run(const std::string& cmd, double timeout_s = 60, bool separate_stderr = false);
  // Like run, but throws Error (with output) unless the command succeeds.
  std::string check(const std::string& cmd, double timeout_s = 60);
  std::optional<std::string> read_file(const std::string& path, double timeout_s = 30);

  std::string dmesg();
  // Writes a marker into the kernel log; kernel_reports() then only looks
  // at what came after the last mark (dmesg) / this boot's console from here.
  void mark(const std::string& label);
  // Oops / BUG / WARNING / KASAN / lockdep / kmemleak / refcount / list
  // corruption / GPF / panic lines in the console log and dmesg.
  std::vector<std::string> kernel_reports();
  // Copies dmesg into the state folder (dmesg.txt); returns its path.
  std::string save_dmesg(const std::string& tag = "");

  // The QEMU command line this guest boots with.
  [[nodiscard]] std::vector<std::string> qemu_argv() const;

 private:
  struct Pending {
    bool done = false;
    uint32_t type = 0;
    std::string payload;
  };
  bool connect_agent();
  void disconnect();
  void reader_loop(int fd);
  std::optional<std::pair<uint32_t, std::string>> request(uint32_t type, const std::string& payload,
                                                          double timeout_s);
  [[nodiscard]] pid_t read_pid() const;

  GuestConfig cfg_;
  pid_t pid_ = -1;
  bool detached_ = false;
  bool paused_ = false;
  double boot_seconds_ = 0;
  int boots_ = 0;
  size_t console_mark_ = 0;

  std::chrono::steady_clock::time_point boot_start_{};
  std::vector<std::string> last_mark_carry_;  // reports of boots since the mark

  std::mutex mu_;
  std::mutex write_mu_;
  std::condition_variable cv_;
  int fd_ = -1;
  bool connected_ = false;
  std::thread reader_;
  uint32_t next_id_ = 1;
  std::map<uint32_t, Pending> pending_;
  std::string last_mark_;
};

// One HMP command on a QEMU human monitor at unix socket `path`: waits for
// the "(qemu) " prompt, sends `cmd`, returns what QEMU printed before the
// next prompt (without the echoed command line).  Throws Error on a
// connect failure or when no prompt comes within timeout_s.
std::string hmp_command(const std::string& path, const std::string& cmd, double timeout_s = 10);

// Kernel report patterns, exposed for tests of the scanner.
std::vector<std::string> scan_reports(const std::string& log);
// Whether a kernel log line is the RIP or a frame of a call trace (the
// lines scan_reports() keeps after an oops, a BUG or a WARNING).
bool is_trace_line(const std::string& line);

}  // namespace o2tb
