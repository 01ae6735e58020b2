// Route paths with a model's name in them (POST /v1/models/{name}:load): whether a request's path
// is a route's, and the name it holds, percent-decoded. Pure, over the path as the client sent it
// (untrusted bytes: fuzzed in tests/fuzz/http_request_fuzzer.cc).
#ifndef MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_
#define MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

// What stands for the name in a route's path: one non-empty path segment.
inline constexpr absl::string_view kRouteName = "{name}";

// Whether `path` is `pattern`'s: equal, or with `pattern`'s kRouteName (if any) one or more bytes
// other than '/'.
bool RoutePathMatches(absl::string_view pattern, absl::string_view path);

// The name in `path`, which RoutePathMatches `pattern` (holding kRouteName), percent-decoded
// (RFC 3986 §2.1): INVALID_ARGUMENT for a % not followed by two hex digits.
absl::StatusOr<std::string> RoutePathName(absl::string_view pattern, absl::string_view path);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_
