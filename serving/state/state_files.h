// Files of the stores that keep their state in a directory (local_job_store.h's results,
// local_glossary_store.h's glossaries): an error naming the path and the system's reason, and a
// new file written whole or not at all.
#ifndef MTSERVE_SERVING_STATE_STATE_FILES_H_
#define MTSERVE_SERVING_STATE_STATE_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mtserve {

// "cannot WHAT PATH: REASON" (errno's), of status `code`.
absl::Status FileError(absl::StatusCode code, absl::string_view what, const std::string& path);

// Writes `bytes` to a new file at `path` (mode 0600; it must not exist yet), flushed to disk
// before it is closed when `durable`. On failure nothing is left at `path`, and the error, of
// status `code`, names it.
absl::Status WriteNewFile(const std::string& path, absl::string_view bytes, bool durable,
                          absl::StatusCode code);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_STATE_FILES_H_
