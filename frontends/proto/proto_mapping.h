// From the TranslationCore's results to the proto messages (mtserve.v1): what every front end
// that mirrors the proto (gRPC, and HTTP through protobuf's JSON mapping) shares, so that both
// answer the same request with the same message. (Requests come in through request_mapping.h.)
#ifndef MTSERVE_FRONTENDS_PROTO_PROTO_MAPPING_H_
#define MTSERVE_FRONTENDS_PROTO_PROTO_MAPPING_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "mtserve/v1/translation.pb.h"
#include "serving/state/job_store.h"
#include "serving/translation_core.h"
#include "text/text_translation.h"

namespace mtserve {

// `result` as a message; scores and token log-probabilities only `with_scores`. `eos_id` is the
// model's, for counting target tokens.
void FillTranslation(const TextTranslation& result, bool with_scores, int eos_id,
                     v1::Translation& translation);

// A reply as the TranslateResponse of a request that asked `with_scores`.
v1::TranslateResponse ToTranslateResponse(const TranslationCore& core,
                                          const TranslationCore::Reply& reply, bool with_scores);

// One streamed text's answer: its translation or its error.
v1::TranslateStreamResponse ToStreamResponse(const TranslationCore& core, std::string id,
                                             const absl::StatusOr<TranslationCore::Reply>& reply,
                                             bool with_scores);

// The served models for a call that presented `api_key`: the key's check and charge when keys
// are required (TranslationCore::CheckApiKey), then UNAVAILABLE while they load (draining is the
// front end's to say), with `max_file_bytes`, the file API's limit (FileJobs::Options).
absl::StatusOr<v1::ListModelsResponse> ListModels(const TranslationCore& core,
                                                  const std::optional<std::string>& api_key,
                                                  int64_t max_file_bytes);

// Served model `slot`'s ModelInfo, as ListModels gives it (the answer of LoadModel and
// UnloadModel); the core is serving.
v1::ModelInfo ToModelInfo(const TranslationCore& core, int slot);

// A detection's reply as its DetectResponse.
v1::DetectResponse ToDetectResponse(const DetectionReply& reply);

// A file job's record as its FileJob (the gRPC stream's progress, HTTP's /v1/jobs/{id}): the
// state, progress, error (failed or cancelled), the result's name, media type and size once
// done, and the times in RFC 3339 (UTC). `with_result_url`: a done job's result_url,
// "/v1/jobs/{id}/result" (HTTP's; a gRPC call sends the result in its stream).
v1::FileJob ToFileJobProto(const JobRecord& record, bool with_result_url);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_PROTO_PROTO_MAPPING_H_
