// Excerpts of untrusted values for error messages: a message must stay short whatever a request
// or a file holds (gRPC refuses status messages beyond its metadata limit, logs get flooded).
#ifndef MTSERVE_BASE_EXCERPT_H_
#define MTSERVE_BASE_EXCERPT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace mtserve {

// `value` when it has at most `max_bytes` bytes; else its first bytes (cut at a UTF-8 character
// boundary), "..." and its length, e.g. `abcdef... (100000 bytes)`.
std::string Excerpt(absl::string_view value, size_t max_bytes = 64);

}  // namespace mtserve

#endif  // MTSERVE_BASE_EXCERPT_H_
