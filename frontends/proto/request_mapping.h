// From the request messages (mtserve.v1) to the core's requests (serving/translation_request.h):
// what every front end that mirrors the proto (gRPC, and HTTP through protobuf's JSON mapping)
// shares, so that both check the same request the same way. (Answers go back through
// proto_mapping.h.) Apart from the core itself, so that the request path can be fuzzed without a
// server (tests/fuzz/).
#ifndef MTSERVE_FRONTENDS_PROTO_REQUEST_MAPPING_H_
#define MTSERVE_FRONTENDS_PROTO_REQUEST_MAPPING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "mtserve/v1/translation.pb.h"
#include "serving/translation_request.h"

namespace mtserve {

// The decoding options a request asked for (the core checks them against the limits).
RequestedOptions ToRequested(const v1::DecodingOptions& proto);

// The core request of a TranslateRequest (its texts moved out of `message`), made by `frontend`
// for its call `method`, due by `deadline`.
TranslationRequest ToCoreRequest(v1::TranslateRequest& message, absl::Time deadline,
                                 std::string method, Frontend frontend);

// The core request of one streamed text (its text moved out of `message`): errors name it `text`.
TranslationRequest ToCoreRequest(v1::TranslateStreamRequest& message, absl::Time deadline,
                                 std::string method, Frontend frontend);

// The core request of a file's header (TranslateFile's first message), without texts: its model
// or languages and decoding options, made by `frontend` for its call `method`, due by
// `deadline`. (The format is the file's, told by file_jobs.h from the header's claims.)
TranslationRequest ToCoreRequest(const v1::FileHeader& header, absl::Time deadline,
                                 std::string method, Frontend frontend);

// The format a header claims, as ParseDocumentFormat names formats ("text", "html", "markdown",
// "srt", "vtt"), or "" when it claims none; INVALID_ARGUMENT naming `field` for a number that is
// no TextFormat.
absl::StatusOr<std::string> ClaimedFormatName(const v1::FileHeader& header,
                                              absl::string_view field);

// The core request of a DetectRequest (its texts moved out of `message`).
DetectionRequest ToCoreRequest(v1::DetectRequest& message, std::string method, Frontend frontend);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_PROTO_REQUEST_MAPPING_H_
