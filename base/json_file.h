// Reading the JSON files of a checkpoint directory (config.json, generation_config.json,
// tokenizer_config.json, vocab.json, the safetensors header) safely, whatever they hold: only
// regular files are opened (a FIFO in a model directory would block the load forever), sizes and
// nesting depth are bounded before anything is built, and error messages describe values
// instead of printing them.
#ifndef MTSERVE_BASE_JSON_FILE_H_
#define MTSERVE_BASE_JSON_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace mtserve {

// Deeper nesting is refused before parsing: real files nest a few levels, and building or
// describing a value nested hundreds of thousands of levels deep can overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

// The bytes of `path`: NotFound if it does not exist, InvalidArgument if it is not a regular file
// (checked without blocking) or holds more than `max_bytes`. Errors name the path.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);

// Whether `path` exists (as anything: a non-regular file is then refused by ReadRegularFile).
bool PathExists(const std::string& path);

// `text` parsed, or InvalidArgument naming `what` (a path) for invalid JSON or nesting deeper
// than kMaxJsonDepth.
absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, absl::string_view what);

// What a request's JSON (or protobuf message) from the network may build: a parsed value takes
// about 30 to 100 bytes of memory whatever its text (`""` is 2 bytes), and each level of nesting
// a frame of every recursive walk.
struct ValueBounds {
  int max_depth = kMaxJsonDepth;
  // Values (scalars, arrays and objects; an object's member counts once) at most.
  int64_t max_values = 0;
  // Where max_values comes from, for messages: "--max_texts_per_request (256) plus 64".
  std::string values_limit;
};

// `text` parsed, or InvalidArgument naming `what` ("the request body") for invalid JSON, nesting
// deeper than bounds.max_depth or more than bounds.max_values values. The bounds are checked in
// one linear, allocation-free pass before the parser builds anything.
absl::StatusOr<nlohmann::json> ParseJsonWithin(absl::string_view text, absl::string_view what,
                                               const ValueBounds& bounds);

// A short description of `value` for messages: scalars as a prefix of their JSON text, arrays
// and objects by type and size ("an array of 3 elements"); never longer than about 80 bytes.
std::string DescribeJson(const nlohmann::json& value);

}  // namespace mtserve

#endif  // MTSERVE_BASE_JSON_FILE_H_
