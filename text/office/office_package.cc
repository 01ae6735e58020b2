// OfficePackage over libzip: the archive opened from memory and every entry checked once against
// the limits, entries read with their declared size as a hard bound, and the archive written back
// into memory with only the replaced entries recompressed.
#include "text/office/office_package.h"

#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace mtserve {
namespace {

// Entries at most this large are not held to the compression ratio (small files of repeated
// bytes compress far and cost nothing).
constexpr int64_t kRatioFloorBytes = 1 << 20;

absl::Status EntryError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("entry \"", name, "\": ", what));
}

absl::Status EntryError(zip_uint64_t index, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("entry ", index, ": ", what));
}

absl::Status ArchiveError(zip_error_t* error) {
  const int code = zip_error_code_zip(error);
  if (code == ZIP_ER_NOZIP) return absl::InvalidArgumentError("not a zip archive");
  if (code == ZIP_ER_MULTIDISK) {
    return absl::InvalidArgumentError("multi-disk zip archives are not accepted");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("corrupt zip archive: ", zip_error_strerror(error)));
}

// Why `name` may not name an entry, or "" if it may.
std::string NameFault(absl::string_view name) {
  if (name.empty()) return "an empty name";
  if (name.find('\0') != absl::string_view::npos) return "a NUL in its name";
  if (name.find('\\') != absl::string_view::npos) return "a backslash in its name";
  if (name.front() == '/') return "an absolute name";
  if (name.size() >= 2 && name[1] == ':' && absl::ascii_isalpha(name[0])) {
    return "an absolute name (a drive letter)";
  }
  for (absl::string_view segment : absl::StrSplit(name, '/')) {
    if (segment == "..") return "a \"..\" segment in its name";
  }
  return "";
}

zip_t* OpenZip(const std::string& bytes, int flags, zip_error_t* error) {
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, error);
  if (source == nullptr) return nullptr;
  zip_t* zip = zip_open_from_source(source, flags, error);
  if (zip == nullptr) zip_source_free(source);
  return zip;
}

// The first name in the central directory at the end of `bytes` that holds a NUL, escaped, or
// "" if none does: libzip's names are C strings, which stop at one. The directory is walked as
// libzip found it (its end record's size, back from the record); an archive this walk cannot follow
// is left to libzip.
std::string CentralNameWithNul(absl::string_view bytes) {
  auto le = [&bytes](size_t at, int n) {
    uint64_t value = 0;
    for (int i = n - 1; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
    return value;
  };
  constexpr size_t kEndRecord = 22, kMaxComment = 0xFFFF, kCentralHeader = 46;
  if (bytes.size() < kEndRecord) return "";
  const size_t lowest =
      bytes.size() > kEndRecord + kMaxComment ? bytes.size() - kEndRecord - kMaxComment : 0;
  for (size_t end = bytes.size() - kEndRecord + 1; end-- > lowest;) {
    if (bytes.substr(end, 4) != absl::string_view("PK\x05\x06", 4)) continue;
    const uint64_t count = le(end + 10, 2), size = le(end + 12, 4);
    if (size > end) return "";
    size_t at = end - size;
    for (uint64_t i = 0; i < count && at + kCentralHeader <= end; ++i) {
      if (bytes.substr(at, 4) != absl::string_view("PK\x01\x02", 4)) return "";
      const size_t name_length = le(at + 28, 2);
      const size_t next = at + kCentralHeader + name_length + le(at + 30, 2) + le(at + 32, 2);
      if (at + kCentralHeader + name_length > end) return "";
      const absl::string_view name = bytes.substr(at + kCentralHeader, name_length);
      if (name.find('\0') != absl::string_view::npos) return absl::CHexEscape(name);
      at = next;
    }
    return "";
  }
  return "";
}

// A libzip source reading `input` and writing into `output`: the archive Write makes. (libzip
// 1.7.3's buffer source, asked by zip_close to keep the unchanged start of the archive, frees
// memory it does not own when bytes lie before the first entry.)
class StringSource {
 public:
  StringSource(absl::string_view input, std::string& output) : input_(input), output_(output) {
    zip_error_init(&error_);
  }
  ~StringSource() { zip_error_fini(&error_); }

  static zip_int64_t Callback(void* self, void* data, zip_uint64_t length, zip_source_cmd_t cmd) {
    return static_cast<StringSource*>(self)->Command(data, length, cmd);
  }

 private:
  zip_int64_t Command(void* data, zip_uint64_t length, zip_source_cmd_t cmd) {
    switch (cmd) {
      case ZIP_SOURCE_SUPPORTS:
        return ZIP_SOURCE_SUPPORTS_WRITABLE | ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_REMOVE);
      case ZIP_SOURCE_OPEN:
        read_at_ = 0;
        return 0;
      case ZIP_SOURCE_READ: {
        const zip_uint64_t n =
            std::min<zip_uint64_t>(length, input_.size() - std::min(read_at_, input_.size()));
        if (n > 0) std::memcpy(data, input_.data() + read_at_, n);
        read_at_ += n;
        return static_cast<zip_int64_t>(n);
      }
      case ZIP_SOURCE_CLOSE:
        return 0;
      case ZIP_SOURCE_STAT: {
        zip_stat_t* stat = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, length, &error_);
        if (stat == nullptr) return -1;
        zip_stat_init(stat);
        stat->size = input_.size();
        stat->valid |= ZIP_STAT_SIZE;
        return sizeof(zip_stat_t);
      }
      case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&error_, data, length);
      case ZIP_SOURCE_FREE:
        return 0;  // Owned by Write.
      case ZIP_SOURCE_SEEK: {
        const zip_int64_t at =
            zip_source_seek_compute_offset(read_at_, input_.size(), data, length, &error_);
        if (at < 0) return -1;
        read_at_ = static_cast<zip_uint64_t>(at);
        return 0;
      }
      case ZIP_SOURCE_TELL:
        return static_cast<zip_int64_t>(read_at_);
      case ZIP_SOURCE_BEGIN_WRITE:
        output_.clear();
        write_at_ = 0;
        return 0;
      case ZIP_SOURCE_WRITE: {
        if (write_at_ + length > output_.size()) output_.resize(write_at_ + length);
        std::memcpy(output_.data() + write_at_, data, length);
        write_at_ += length;
        return static_cast<zip_int64_t>(length);
      }
      case ZIP_SOURCE_SEEK_WRITE: {
        const zip_int64_t at =
            zip_source_seek_compute_offset(write_at_, output_.size(), data, length, &error_);
        if (at < 0) return -1;
        write_at_ = static_cast<zip_uint64_t>(at);
        return 0;
      }
      case ZIP_SOURCE_TELL_WRITE:
        return static_cast<zip_int64_t>(write_at_);
      case ZIP_SOURCE_COMMIT_WRITE:
        return 0;
      case ZIP_SOURCE_ROLLBACK_WRITE:
      case ZIP_SOURCE_REMOVE:
        output_.clear();
        return 0;
      default:
        zip_error_set(&error_, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
  }

  absl::string_view input_;
  std::string& output_;
  zip_error_t error_;
  zip_uint64_t read_at_ = 0, write_at_ = 0;
};

struct Entry {
  zip_uint64_t index;
  int64_t size;
  bool stored;
  time_t mtime;
};

}  // namespace

struct OfficePackage::State {
  ~State() {
    if (zip != nullptr) zip_discard(zip);
  }

  // The archive's bytes: never moved (the State is), libzip reads them in place.
  std::string bytes;
  // Read only; libzip's reading state is not thread-safe.
  mutable absl::Mutex mutex;
  zip_t* zip ABSL_GUARDED_BY(mutex) = nullptr;
  std::vector<std::string> names;
  absl::flat_hash_map<std::string, Entry> entries;
};

namespace {

// Every entry of `zip` checked against `limits`; `state`'s names and entries filled.
absl::Status CheckEntries(zip_t* zip, const PackageLimits& limits, std::vector<std::string>& names,
                          absl::flat_hash_map<std::string, Entry>& entries) {
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0) return absl::InvalidArgumentError("corrupt zip archive: no entry count");
  if (count > limits.max_entries) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", limits.max_entries, " entries (the limit on entries)"));
  }
  names.reserve(count);
  entries.reserve(count);
  int64_t total = 0;
  for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(count); ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(zip, i, 0, &stat) != 0) {
      return EntryError(i, absl::StrCat("unreadable: ", zip_strerror(zip)));
    }
    constexpr zip_uint64_t kNeeded = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                                     ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if ((stat.valid & kNeeded) != kNeeded) return EntryError(i, "incomplete directory entry");
    const std::string name = stat.name;
    if (name.empty()) return EntryError(i, "an empty name");
    if (std::string fault = NameFault(name); !fault.empty()) return EntryError(name, fault);
    if (stat.encryption_method != ZIP_EM_NONE) return EntryError(name, "encrypted");
    if (stat.comp_method != ZIP_CM_STORE && stat.comp_method != ZIP_CM_DEFLATE) {
      return EntryError(name, absl::StrCat("compression method ", stat.comp_method,
                                           " is not accepted (only stored and deflated)"));
    }
    if (stat.size > static_cast<zip_uint64_t>(limits.max_entry_bytes)) {
      return EntryError(name, absl::StrCat("inflates to more than ", limits.max_entry_bytes,
                                           " bytes (the limit on one entry)"));
    }
    const int64_t size = static_cast<int64_t>(stat.size);
    total += size;
    if (total > limits.max_total_bytes) {
      return EntryError(
          name, absl::StrCat("the entries up to it inflate to more than ", limits.max_total_bytes,
                             " bytes (the limit on all entries together)"));
    }
    if (size > kRatioFloorBytes &&
        (stat.comp_size == 0 ||
         stat.size / stat.comp_size >= static_cast<zip_uint64_t>(limits.max_ratio) + 1 ||
         (stat.size / stat.comp_size == static_cast<zip_uint64_t>(limits.max_ratio) &&
          stat.size % stat.comp_size != 0))) {
      return EntryError(name, absl::StrCat("compressed ", stat.size, " bytes into ", stat.comp_size,
                                           ", a ratio over ", limits.max_ratio,
                                           " (the limit on compression ratio)"));
    }
    if (!entries
             .emplace(name, Entry{i, size, stat.comp_method == ZIP_CM_STORE,
                                  (stat.valid & ZIP_STAT_MTIME) ? stat.mtime : time_t{0}})
             .second) {
      return EntryError(name, "two entries of that name");
    }
    names.push_back(name);
  }
  return absl::OkStatus();
}

}  // namespace

OfficePackage::OfficePackage(std::unique_ptr<State> state) : state_(std::move(state)) {}
OfficePackage::OfficePackage(OfficePackage&&) noexcept = default;
OfficePackage& OfficePackage::operator=(OfficePackage&&) noexcept = default;
OfficePackage::~OfficePackage() = default;

absl::StatusOr<OfficePackage> OfficePackage::Open(std::string bytes, const PackageLimits& limits) {
  if (bytes.empty()) return absl::InvalidArgumentError("not a zip archive (no bytes)");
  auto state = std::make_unique<State>();
  state->bytes = std::move(bytes);
  zip_error_t error;
  zip_error_init(&error);
  // ZIP_CHECKCONS: each local header must agree with its directory entry, and the entries'
  // data lie before the directory. It also refuses two entries of one name, without saying
  // which: on any fault but "not a zip archive" the archive is opened again without it, for a
  // fault named by its entry.
  zip_t* zip = OpenZip(state->bytes, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (zip == nullptr) {
    const absl::Status status = ArchiveError(&error);
    if (zip_error_code_zip(&error) != ZIP_ER_NOZIP) {
      zip_error_t lenient_error;
      zip_error_init(&lenient_error);
      if (zip_t* lenient = OpenZip(state->bytes, ZIP_RDONLY, &lenient_error)) {
        std::vector<std::string> names;
        absl::flat_hash_map<std::string, Entry> entries;
        absl::Status named = CheckEntries(lenient, limits, names, entries);
        zip_discard(lenient);
        if (!named.ok()) {
          zip_error_fini(&lenient_error);
          zip_error_fini(&error);
          return named;
        }
      }
      zip_error_fini(&lenient_error);
    }
    zip_error_fini(&error);
    return status;
  }
  zip_error_fini(&error);
  if (const std::string name = CentralNameWithNul(state->bytes); !name.empty()) {
    zip_discard(zip);
    return EntryError(name, "a NUL in its name");
  }
  {
    absl::MutexLock lock(&state->mutex);
    state->zip = zip;
    if (absl::Status status = CheckEntries(zip, limits, state->names, state->entries);
        !status.ok()) {
      return status;
    }
  }
  return OfficePackage(std::move(state));
}

const std::vector<std::string>& OfficePackage::names() const { return state_->names; }

bool OfficePackage::Has(absl::string_view name) const { return state_->entries.contains(name); }

absl::StatusOr<std::string> OfficePackage::Read(absl::string_view name) const {
  const auto it = state_->entries.find(name);
  if (it == state_->entries.end()) return EntryError(name, "not in the archive");
  const Entry& entry = it->second;
  absl::MutexLock lock(&state_->mutex);
  zip_file_t* file = zip_fopen_index(state_->zip, entry.index, 0);
  if (file == nullptr) {
    return EntryError(name, absl::StrCat("unreadable: ", zip_strerror(state_->zip)));
  }
  // One byte more than declared is asked for: its arrival is a lie caught before any more is
  // inflated, and the end of the data reached is where libzip checks the CRC.
  const size_t declared = static_cast<size_t>(entry.size);
  std::string out(declared + 1, '\0');
  size_t filled = 0;
  absl::Status status;
  while (filled <= declared) {
    const zip_int64_t n = zip_fread(file, out.data() + filled, declared + 1 - filled);
    if (n < 0) {
      zip_error_t* error = zip_file_get_error(file);
      status = EntryError(name, zip_error_code_zip(error) == ZIP_ER_CRC
                                    ? std::string("fails its CRC check")
                                    : absl::StrCat("corrupt data: ", zip_error_strerror(error)));
      break;
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  zip_fclose(file);
  if (!status.ok()) return status;
  if (filled > declared) {
    return EntryError(name,
                      absl::StrCat("inflates to more than its declared ", declared, " bytes"));
  }
  if (filled < declared) {
    return EntryError(
        name, absl::StrCat("inflates to ", filled, " bytes, fewer than its declared ", declared));
  }
  out.resize(declared);
  return out;
}

std::string OfficePackage::Write(const absl::flat_hash_map<std::string, std::string>& replacements,
                                 absl::Span<const std::string> removals) const {
  if (replacements.empty() && removals.empty()) return state_->bytes;
  // A bug, not bad input: Open checked what libzip needs to copy every entry.
  auto fail = [](absl::string_view what, const char* why) {
    std::fprintf(stderr, "OfficePackage::Write: %.*s: %s\n", static_cast<int>(what.size()),
                 what.data(), why);
    std::abort();
  };
  std::string out;
  StringSource target(state_->bytes, out);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_function_create(&StringSource::Callback, &target, &error);
  if (source == nullptr) fail("source", zip_error_strerror(&error));
  zip_t* zip = zip_open_from_source(source, 0, &error);
  if (zip == nullptr) fail("reopening", zip_error_strerror(&error));
  zip_error_fini(&error);
  for (const auto& [name, bytes] : replacements) {
    const auto it = state_->entries.find(name);
    if (it == state_->entries.end()) fail(name, "not an entry");
    const Entry& entry = it->second;
    zip_source_t* data = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    if (data == nullptr) fail(name, zip_strerror(zip));
    if (zip_file_replace(zip, entry.index, data, 0) != 0) {
      zip_source_free(data);
      fail(name, zip_strerror(zip));
    }
    // A stored entry stays stored (ODF's and EPUB's mimetype), and the time is the entry's own.
    if (zip_set_file_compression(zip, entry.index, entry.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
                                 0) != 0 ||
        zip_file_set_mtime(zip, entry.index, entry.mtime, 0) != 0) {
      fail(name, zip_strerror(zip));
    }
  }
  for (const std::string& name : removals) {
    const auto it = state_->entries.find(name);
    if (it == state_->entries.end()) fail(name, "not an entry");
    if (zip_delete(zip, it->second.index) != 0) fail(name, zip_strerror(zip));
  }
  if (zip_close(zip) != 0) fail("closing", zip_strerror(zip));
  return out;
}

}  // namespace mtserve
