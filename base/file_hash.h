// A stable 128-bit hash of a set of files' contents (XXH3-128, Debian's libxxhash): the identity
// of what a folder's files hold, whatever their names or paths on disk, for keying cached results
// by content (the sentence cache keys translations by the model's files, so two names for the
// same files share entries and a replaced model never answers from the old one's).
#ifndef MTSERVE_BASE_FILE_HASH_H_
#define MTSERVE_BASE_FILE_HASH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtserve {

// The hash, as 32 lowercase hex digits, of the files `names` of folder `dir`, in the order given:
// each file's name, whether it exists, its size and its bytes all count, so that files moved
// between names, one missing, or one byte changed give another hash. A name that is not a
// regular file counts as absent. NotFound/Internal naming the file when one cannot be read.
absl::StatusOr<std::string> HashFiles(const std::string& dir,
                                      const std::vector<std::string>& names);

}  // namespace mtserve

#endif  // MTSERVE_BASE_FILE_HASH_H_
