// The HTTP API's JSON: protobuf's JSON mapping of the mtserve.v1 messages (one schema for gRPC and
// HTTP), with field names as in the .proto (beam_size, not beamSize; both are accepted in
// requests), every field in answers (at its default value too: 0, false, "", []), and two
// departures. A `bytes` field (TranslateRequest.texts, TranslateStreamRequest.text) is a JSON
// string holding the text itself, where the mapping would want base64: the proto types texts as
// bytes so that invalid UTF-8 reaches the server over gRPC and gets a clear error; JSON text is
// UTF-8 already, and nobody sending text from curl or a browser should have to encode it. A `bool`
// field is a JSON true or false (or null, its default), where the mapping takes the strings
// "true" and "false" too: "options.shortlist must be a boolean", not a guess at what "no" means.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_JSON_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "google/protobuf/message.h"

namespace mtserve {

// Fills `message` from `json`. INVALID_ARGUMENT naming `what` ("the request body") if it is not
// JSON (or not UTF-8), is outside `bounds` (checked before anything is built:
// RequestValueBounds) or is not a valid message of that type (an unknown field, a wrong type, a
// bool field that is not a JSON boolean: naming the field).
absl::Status ParseJson(absl::string_view json, absl::string_view what, const ValueBounds& bounds,
                       google::protobuf::Message& message);

// `message` as JSON, on one line; INTERNAL if it cannot be (a string field that is not UTF-8).
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_JSON_H_
