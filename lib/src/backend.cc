#include "o2lnd/backend.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace o2lnd {

Result<std::unique_ptr<Backend>> FdBackend::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // NOLINT(*-vararg)
  if (fd < 0) {
    int err = errno;
    std::string message = "cannot open " + path + ": " + std::strerror(err);
    if (err == ENOENT || err == ENODEV || err == ENXIO) {
      message += " (is the o2lnd module loaded?)";
    } else if (err == EACCES || err == EPERM) {
      message += " (o2lnd needs root, or read-write access to the device)";
    }
    return Error{err, std::move(message)};
  }
  return std::unique_ptr<Backend>(std::make_unique<FdBackend>(fd, path));
}

FdBackend::~FdBackend() { ::close(fd_); }

int FdBackend::ioctl(unsigned long cmd, void* arg) {
  if (::ioctl(fd_, cmd, arg) < 0) {  // NOLINT(*-vararg)
    return errno;
  }
  return 0;
}

}  // namespace o2lnd
