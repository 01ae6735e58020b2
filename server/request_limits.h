// What a request may ask for, and the checks that turn a request's fields into engine inputs.
// Every violation is an InvalidArgument naming the field and the limit; nothing is truncated.
#ifndef MTSERVE_SERVER_REQUEST_LIMITS_H_
#define MTSERVE_SERVER_REQUEST_LIMITS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/decoding/decoding_options.h"
#include "model/model.h"
#include "mtserve/v1/translation.pb.h"

namespace mtserve {

struct RequestLimits {
  int max_texts_per_request = 256;
  int max_input_tokens = 512;   // Source tokens per text, </s> included (also the model's own).
  int max_output_tokens = 512;  // Generated tokens per hypothesis (also the model's own).
  int max_beam_size = 16;
  // Sampling draws from the k best tokens, and finding them costs a share of each step that grows
  // with k (about 0.6 ms per text and step at k = 1,000 on a 58k vocabulary).
  int max_sampling_topk = 1000;
  // What one worker's decode may hold (0: no limit), as the scheduler's BatchingOptions says.
  int64_t worker_memory_bytes = 0;
};

// The most source tokens a text may have with `model` (the limit or the model's positions).
int MaxInputTokens(const Model& model, const RequestLimits& limits);
// The most tokens a hypothesis may have with `model`.
int MaxOutputTokens(const Model& model, const RequestLimits& limits);

// The engine's options for `proto` (unset fields take their documented defaults), or an
// InvalidArgument naming the first field out of bounds.
absl::StatusOr<DecodingOptions> ToDecodingOptions(const v1::DecodingOptions& proto,
                                                  const Model& model, const RequestLimits& limits);

// The source ids of `text` (`field` names it in errors): an InvalidArgument if it is not valid
// UTF-8 or has more tokens than allowed. An empty text has no ids.
absl::StatusOr<std::vector<int>> EncodeText(absl::string_view text, absl::string_view field,
                                            const Model& model, const RequestLimits& limits);

// An InvalidArgument naming `field` when decoding a text of `source_tokens` tokens with `options`
// could need more memory than a worker may hold even alone (see model/decode_memory.h).
absl::Status CheckDecodeMemory(int source_tokens, const DecodingOptions& options,
                               const Model& model, const RequestLimits& limits,
                               absl::string_view field);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_REQUEST_LIMITS_H_
