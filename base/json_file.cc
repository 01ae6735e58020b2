#include "base/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"

namespace mtserve {
namespace {

// What `text` would build: the deepest nesting of its arrays and objects, and its values counted
// from above (the first, each array or object and each comma: one per member or element; brackets
// and commas inside strings do not count). Stops early once past either limit. Linear and
// allocation-free, so it runs before the parser builds anything.
struct JsonShape {
  int depth = 0;
  int64_t values = 0;
};
JsonShape ScanJson(absl::string_view text, int max_depth, int64_t max_values) {
  JsonShape shape{0, 1};
  int depth = 0;
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
      shape.depth = std::max(shape.depth, ++depth);
      ++shape.values;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++shape.values;
    } else {
      continue;
    }
    if (shape.depth > max_depth || shape.values > max_values) break;
  }
  return shape;
}

// `text` parsed; otherwise InvalidArgument: `error`, then the parser's words.
absl::StatusOr<nlohmann::json> Parse(absl::string_view text, absl::string_view error) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // e.what() quotes the last token read, which can be as long as the text.
    return absl::InvalidArgumentError(absl::StrCat(error, ": ", Excerpt(e.what(), 200)));
  }
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
  if (ScanJson(text, kMaxJsonDepth, INT64_MAX).depth > kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": JSON nested deeper than ", kMaxJsonDepth, " levels (not a checkpoint file)"));
  }
  return Parse(text, absl::StrCat(what, ": invalid JSON"));
}

absl::StatusOr<nlohmann::json> ParseJsonWithin(absl::string_view text, absl::string_view what,
                                               const ValueBounds& bounds) {
  const JsonShape shape = ScanJson(text, bounds.max_depth, bounds.max_values);
  if (shape.depth > bounds.max_depth) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is JSON nested deeper than ", bounds.max_depth, " levels"));
  }
  if (shape.values > bounds.max_values) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is JSON of more than ",
                                                   bounds.max_values, " values, the limit (",
                                                   bounds.values_limit, ")"));
  }
  return Parse(text, absl::StrCat(what, " is not JSON"));
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
