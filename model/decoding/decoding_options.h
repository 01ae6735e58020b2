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
  // Each input's generated tokens (</s> included) are also bounded by its source's, as Marian's
  // --max-length-factor bounds them: at most max_length_factor x its source tokens (</s>
  // included) + max_length_offset, never below min_length. A hypothesis that stops at a bound
  // says so (Hypothesis::truncated). The defaults let through every translation the reference
  // implementation gives on test_2016_flickr (tests/data/golden: the longest, a loop of 255 tokens
  // from a source of 20, runs to the model's max_length; one of 169 from 14 ends with </s>), so
  // that the engine's output stays the reference's; a degenerate output of a short source still
  // stops long before max_length.
  float max_length_factor = 12.0f;
  int max_length_offset = 16;
  // Each hypothesis carries an alignment, one source position per generated token, from the
  // last decoder layer's cross-attention (Hypothesis::alignment). Off: nothing is computed.
  bool return_alignment = false;
  // With the model's lexical shortlist, when it has one (Model::shortlist): each input may
  // generate only its candidates (the shortlist's for its source tokens, its source tokens, its
  // terms' tokens, </s>), scored over those alone (VocabularySelection). Off: the whole
  // vocabulary.
  bool shortlist = true;
};

// The generated-token limit that applies: the option, else generation_config's max_length minus
// the start token (HF counts it), never more than the positions the model has.
int EffectiveMaxLength(const DecodingOptions& options, const ModelConfig& config);

// The generated-token limit of an input of `source_tokens` tokens (</s> included): the source
// bound (max_length_factor, max_length_offset, at least min_length) within `max_length`, the
// limit of every input (EffectiveMaxLength).
int InputMaxLength(const DecodingOptions& options, int max_length, int source_tokens);

// InvalidArgument naming the field and its limit for any option outside what the model allows,
// as "PREFIXfield is VALUE; the limit is LIMIT (WHY)" (or what the value must be): the one place
// these rules are checked. `prefix` is how the caller's users know the fields ("options." for the
// API, "--" for a command line).
absl::Status ValidateDecodingOptions(const DecodingOptions& options, const ModelConfig& config,
                                     absl::string_view prefix = "");

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_DECODING_OPTIONS_H_
