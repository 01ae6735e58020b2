// How to decode: search strategy, sampling and length limits, as a caller asks for them.
#ifndef MTSERVE_MODEL_DECODING_DECODING_OPTIONS_H_
#define MTSERVE_MODEL_DECODING_DECODING_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/model_config.h"

namespace mtserve {

struct DecodingOptions {
  int beam_size = 1;            // 1: greedy search (or sampling).
  int num_hypotheses = 1;       // Hypotheses returned per input, at most beam_size.
  float length_penalty = 1.0f;  // Beam scores are log_prob / length^length_penalty.
  int sampling_topk = 1;        // > 1: sample among the k most likely tokens (beam_size 1 only).
  float sampling_temperature = 1.0f;
  std::optional<uint64_t> seed;  // Sampling seed: the same seed gives the same output.
  int max_length = 0;            // Generated tokens, </s> included; 0: the model's default.
  int min_length = 0;            // </s> is not generated before this many tokens.
  // Each hypothesis carries an alignment, one source position per generated token, from the
  // last decoder layer's cross-attention (Hypothesis::alignment). Off: nothing is computed.
  bool return_alignment = false;
};

// The generated-token limit that applies: the option, else generation_config's max_length minus
// the start token (HF counts it), never more than the positions the model has.
int EffectiveMaxLength(const DecodingOptions& options, const ModelConfig& config);

// InvalidArgument naming the field and its limit for any option outside what the model allows,
// as "PREFIXfield is VALUE; the limit is LIMIT (WHY)" (or what the value must be): the one place
// these rules are checked. `prefix` is how the caller's users know the fields ("options." for the
// API, "--" for a command line).
absl::Status ValidateDecodingOptions(const DecodingOptions& options, const ModelConfig& config,
                                     absl::string_view prefix = "");

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_DECODING_OPTIONS_H_
