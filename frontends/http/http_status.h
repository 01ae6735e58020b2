// How the HTTP front end states an absl::Status: the HTTP status for its (gRPC) code, and the JSON
// error body {"code": "INVALID_ARGUMENT", "message": "..."}. One mapping, so that every HTTP
// answer agrees with what gRPC answers for the same request.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_STATUS_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_STATUS_H_

#include <string>

#include "absl/status/status.h"

namespace mtserve {

// The HTTP status of a gRPC code, as Google's API gateways map them (google.rpc.Code): OK 200,
// INVALID_ARGUMENT, FAILED_PRECONDITION and OUT_OF_RANGE 400, NOT_FOUND 404,
// RESOURCE_EXHAUSTED 429, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, CANCELLED 499 (the client
// closed the request), ... A request body over the size limit is the one exception the front end
// makes (413, code RESOURCE_EXHAUSTED).
int HttpStatusFor(absl::StatusCode code);

// {"code": "<the code's name>", "message": "<the message>"}: a JSON object whatever bytes the
// message holds (invalid UTF-8 is replaced).
std::string ErrorJson(const absl::Status& status);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_STATUS_H_
