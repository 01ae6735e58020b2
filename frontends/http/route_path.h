// Route paths with values in them (POST /v1/models/{name}:load, GET /v1/jobs/{id}/result): whether
// a request's path is a route's, and the values it holds, percent-decoded. Pure, over the path as
// the client sent it (untrusted bytes: fuzzed in tests/fuzz/http_request_fuzzer.cc).
#ifndef MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_
#define MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

// A hole in a route's pattern is a name in braces ("{name}", "{id}"): one non-empty path segment.
// A hole other than the pattern's last is followed by '/'; the last takes what lies between the
// pattern's text before it and after it (so "{name}:load" takes "a:b" of "a:b:load").
inline constexpr absl::string_view kRouteName = "{name}";

// Whether `path` is `pattern`'s: equal, or with each of `pattern`'s holes one or more bytes other
// than '/'.
bool RoutePathMatches(absl::string_view pattern, absl::string_view path);

// The value of `pattern`'s hole `hole` in `path`, which RoutePathMatches `pattern`,
// percent-decoded (RFC 3986 §2.1): INVALID_ARGUMENT for a % not followed by two hex digits, and
// for a hole `pattern` does not have.
absl::StatusOr<std::string> RoutePathName(absl::string_view pattern, absl::string_view path,
                                          absl::string_view hole = kRouteName);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_ROUTE_PATH_H_
