// The one place where libo2lnd talks to the kernel: an ioctl on /dev/o2lnd.
// Device goes through this interface so that host unit tests can put a fake
// kernel behind it (another ABI, errors, odd replies).
#pragma once

#include <memory>
#include <string>

#include "o2lnd/result.h"

namespace o2lnd {

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  Backend(Backend&&) = delete;
  Backend& operator=(Backend&&) = delete;
  virtual ~Backend() = default;

  // Issues ioctl(cmd, arg).  Returns 0 on success or a positive errno.
  virtual int ioctl(unsigned long cmd, void* arg) = 0;

  // What the backend talks to, for messages ("/dev/o2lnd").
  [[nodiscard]] virtual std::string name() const = 0;
};

// The real backend: an open file descriptor of the o2lnd char device,
// closed by the destructor.
class FdBackend final : public Backend {
 public:
  // Opens `path` read-write, close-on-exec.  On failure the message is
  // "cannot open PATH: STRERROR" plus a hint ("is the o2lnd module loaded?"
  // when the device does not exist).
  static Result<std::unique_ptr<Backend>> open(const std::string& path);

  FdBackend(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  FdBackend(const FdBackend&) = delete;
  FdBackend& operator=(const FdBackend&) = delete;
  FdBackend(FdBackend&&) = delete;
  FdBackend& operator=(FdBackend&&) = delete;
  ~FdBackend() override;

  int ioctl(unsigned long cmd, void* arg) override;
  [[nodiscard]] std::string name() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace o2lnd
