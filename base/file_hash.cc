// HashFiles (file_hash.h): the files streamed through one XXH3-128 state, 1 MiB at a time.
#include "base/file_hash.h"

#include <xxhash.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mtserve {
namespace {

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

}  // namespace

absl::StatusOr<std::string> HashFiles(const std::string& dir,
                                      const std::vector<std::string>& names) {
  std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  if (state == nullptr || XXH3_128bits_reset(state.get()) == XXH_ERROR) {
    return absl::InternalError("cannot start a hash");
  }
  auto add = [&](const void* data, size_t size) { XXH3_128bits_update(state.get(), data, size); };
  auto add_number = [&](uint64_t n) { add(&n, sizeof(n)); };
  std::vector<char> buffer(size_t{1} << 20);
  for (const std::string& name : names) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    // The name with its length, so that no two lists of names hash alike.
    add_number(name.size());
    add(name.data(), name.size());
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      add_number(0);  // Absent.
      continue;
    }
    const uint64_t size = std::filesystem::file_size(path, error);
    std::ifstream file(path, std::ios::binary);
    if (error || !file) {
      return absl::NotFoundError(absl::StrCat(path.string(), ": cannot be read"));
    }
    add_number(1);
    add_number(size);
    uint64_t read = 0;
    while (file) {
      file.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      const size_t got = static_cast<size_t>(file.gcount());
      add(buffer.data(), got);
      read += got;
    }
    if (file.bad()) return absl::InternalError(absl::StrCat(path.string(), ": read failed"));
    if (read != size) {
      return absl::UnavailableError(absl::StrCat(path.string(), ": changed while being read (",
                                                 size, " bytes, then ", read,
                                                 "); is it still being copied?"));
    }
  }
  const XXH128_hash_t hash = XXH3_128bits_digest(state.get());
  return absl::StrFormat("%016x%016x", hash.high64, hash.low64);
}

}  // namespace mtserve
