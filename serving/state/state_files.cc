#include "serving/state/state_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mtserve {

absl::Status FileError(absl::StatusCode code, absl::string_view what, const std::string& path) {
  const int error = errno;
  return absl::Status(code, absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(error)));
}

absl::Status WriteNewFile(const std::string& path, absl::string_view bytes, bool durable,
                          absl::StatusCode code) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(code, "create", path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = FileError(code, "write", path);
      ::close(fd);
      ::unlink(path.c_str());
      return status;
    }
    written += static_cast<size_t>(n);
  }
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    absl::Status status = FileError(code, "write", path);
    ::unlink(path.c_str());
    return status;
  }
  return absl::OkStatus();
}

}  // namespace mtserve
