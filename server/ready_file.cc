// The ready file's content and its atomic write (ready_file.h).
#include "server/ready_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

absl::Status ErrnoError(absl::string_view call, const std::string& path, int error) {
  return absl::UnavailableError(absl::StrCat(call, " ", path, ": ", std::strerror(error)));
}

// Writes all of `content` to `fd`, flushes it to disk and closes it (even on an error).
absl::Status WriteAndClose(int fd, const std::string& path, absl::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return ErrnoError("cannot write", path, error);
    }
    done += static_cast<size_t>(n);
  }
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
    const int error = errno;
    close(fd);
    return ErrnoError("cannot flush", path, error);
  }
  if (close(fd) != 0) return ErrnoError("cannot close", path, errno);
  return absl::OkStatus();
}

}  // namespace

std::string ReadyFileContent(absl::string_view state, const ReadyPorts& ports) {
  auto port = [](const std::optional<int>& p) -> nlohmann::ordered_json {
    return p.has_value() ? nlohmann::ordered_json(*p) : nlohmann::ordered_json(nullptr);
  };
  const nlohmann::ordered_json json = {{"state", std::string(state)},
                                       {"grpc", port(ports.grpc)},
                                       {"http", port(ports.http)},
                                       {"metrics", port(ports.metrics)}};
  return json.dump() + "\n";
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view content) {
  // In the same directory as `path`, so that the rename stays within one file system.
  std::string temp = absl::StrCat(path, ".XXXXXX");
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot create", temp, errno);
  temp = name.data();
  absl::Status status = WriteAndClose(fd, temp, content);
  if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoError(absl::StrCat("cannot rename ", temp, " to"), path, errno);
  }
  if (!status.ok()) unlink(temp.c_str());
  return status;
}

}  // namespace mtserve
