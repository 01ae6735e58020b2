#include "model/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "model/excerpt.h"

namespace mtserve {
namespace {

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count),
// stopping early past `limit`. Linear and allocation-free, so it runs before the parser builds
// anything.
int NestingDepth(absl::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // The escaped character, whatever it is.
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": file not found"));
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open: ", std::strerror(err)));
  }
  absl::Cleanup closer = [fd] { close(fd); };
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": file is ", st.st_size, " bytes; the limit is ", max_bytes));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": read error: ", std::strerror(errno)));
    }
    if (n == 0) break;  // Shrank while reading.
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, absl::string_view what) {
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": JSON nested deeper than ", kMaxJsonDepth, " levels (not a checkpoint file)"));
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // e.what() quotes the last token read, which can be as long as the file.
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": invalid JSON: ", Excerpt(e.what(), 200)));
  }
}

std::string DescribeJson(const nlohmann::json& value) {
  if (value.is_array()) {
    return absl::StrCat("an array of ", value.size(), value.size() == 1 ? " element" : " elements");
  }
  if (value.is_object()) {
    return absl::StrCat("an object of ", value.size(), value.size() == 1 ? " key" : " keys");
  }
  if (value.is_string()) {
    return absl::StrCat("the string \"", Excerpt(value.get_ref<const std::string&>(), 60), "\"");
  }
  return value.dump();  // A number, boolean or null: short.
}

}  // namespace mtserve
