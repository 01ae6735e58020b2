// An office document's package: the zip archive DOCX, PPTX, ODT, ODP and EPUB files are (libzip),
// read within limits and written back with some entries replaced and every other entry copied
// byte for byte. The one place an archive's untrusted structure is checked: Open refuses what a
// format's reader should never see (zip bombs, names that escape the archive, duplicates,
// encrypted or corrupt entries), naming the entry and the limit.
#ifndef MTSERVE_TEXT_OFFICE_OFFICE_PACKAGE_H_
#define MTSERVE_TEXT_OFFICE_OFFICE_PACKAGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mtserve {

// What an archive may hold at most. The defaults take any real office document (a 10 MiB
// file's XML inflates to well under 256 MiB) and bound the work a hostile one costs.
struct PackageLimits {
  int64_t max_entries = 10000;            // Entries in the archive.
  int64_t max_total_bytes = 256ll << 20;  // Uncompressed, all entries together.
  int64_t max_entry_bytes = 64ll << 20;   // Uncompressed, one entry.
  // Uncompressed over compressed size, for an entry over 1 MiB uncompressed (real XML deflates
  // 10-30 times; a zip bomb thousands of times).
  int64_t max_ratio = 200;
};

class OfficePackage {
 public:
  // `bytes` as a zip archive. INVALID_ARGUMENT, naming the entry (by its name or index) and the
  // limit or the fault, for: what is not a zip archive or is corrupt, more entries than
  // limits.max_entries, an entry declared larger than max_entry_bytes or the total larger than
  // max_total_bytes, a compression ratio over max_ratio, an entry name that is absolute, holds a
  // ".." segment or a backslash or a NUL, two entries of the same name, an encrypted entry, a
  // compression method other than stored and deflated. Entries are checked here once; Read and
  // Write rely on it.
  static absl::StatusOr<OfficePackage> Open(std::string bytes, const PackageLimits& limits = {});

  OfficePackage(OfficePackage&&) noexcept;
  OfficePackage& operator=(OfficePackage&&) noexcept;
  ~OfficePackage();

  // The entries' names in archive order (directories included, with their trailing slash).
  const std::vector<std::string>& names() const;
  bool Has(absl::string_view name) const;

  // Entry `name` uncompressed. INVALID_ARGUMENT naming it if it is missing, or if it inflates to
  // more than its declared size or fails its CRC (a lying header is caught here, not trusted).
  absl::StatusOr<std::string> Read(absl::string_view name) const;

  // The archive with each entry named in `replacements` holding its new bytes (deflated; an
  // entry stored uncompressed stays stored, as ODF's and EPUB's "mimetype" must), the entries
  // named in `removals` left out (a digital signature the new bytes would make invalid), every
  // other entry's compressed bytes and metadata copied unchanged, in the same order. Every name in
  // `replacements` and `removals` must be an entry's, and none in both. Does not fail for a
  // package Open accepted.
  std::string Write(const absl::flat_hash_map<std::string, std::string>& replacements,
                    absl::Span<const std::string> removals = {}) const;

 private:
  struct State;
  explicit OfficePackage(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_OFFICE_PACKAGE_H_
