#include "model/decoding/decoding_options.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace mtserve {

int EffectiveMaxLength(const DecodingOptions& options, const ModelConfig& config) {
  const int model_default = std::max(1, config.max_length - 1);
  const int length = options.max_length > 0 ? options.max_length : model_default;
  return std::min(length, config.max_position_embeddings);
}

int InputMaxLength(const DecodingOptions& options, int max_length, int source_tokens) {
  const double bound = std::ceil(static_cast<double>(options.max_length_factor) * source_tokens) +
                       options.max_length_offset;
  const double at_least = std::max<double>(bound, options.min_length);
  return at_least >= max_length ? max_length : static_cast<int>(at_least);
}

absl::Status ValidateDecodingOptions(const DecodingOptions& options, const ModelConfig& config,
                                     absl::string_view prefix) {
  // "PREFIXfield is VALUE; WHY": every message names the field as the caller knows it.
  auto invalid = [&](absl::string_view field, auto value, auto&&... why) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, field, " is ", value, "; ", why...));
  };
  auto at_least = [](int minimum) { return absl::StrCat("it must be at least ", minimum); };
  auto limit = [](int64_t value, absl::string_view what) {
    return absl::StrCat("the limit is ", value, " (", what, ")");
  };
  const std::string vocabulary = "the model's vocabulary size";
  if (options.beam_size < 1) return invalid("beam_size", options.beam_size, at_least(1));
  if (options.beam_size > config.vocab_size) {
    return invalid("beam_size", options.beam_size, limit(config.vocab_size, vocabulary));
  }
  if (options.num_hypotheses < 1) {
    return invalid("num_hypotheses", options.num_hypotheses, at_least(1));
  }
  if (options.num_hypotheses > options.beam_size) {
    return invalid("num_hypotheses", options.num_hypotheses,
                   limit(options.beam_size, absl::StrCat(prefix, "beam_size")));
  }
  if (!std::isfinite(options.length_penalty)) {
    return invalid("length_penalty", options.length_penalty, "it must be a finite number");
  }
  if (options.sampling_topk < 1)
    return invalid("sampling_topk", options.sampling_topk, at_least(1));
  if (options.sampling_topk > config.vocab_size) {
    return invalid("sampling_topk", options.sampling_topk, limit(config.vocab_size, vocabulary));
  }
  if (options.sampling_topk > 1 && options.beam_size > 1) {
    return invalid("sampling_topk", options.sampling_topk, "sampling needs ", prefix,
                   "beam_size 1, not ", options.beam_size);
  }
  if (!(options.sampling_temperature > 0) || !std::isfinite(options.sampling_temperature)) {
    return invalid("sampling_temperature", options.sampling_temperature,
                   "it must be a positive number");
  }
  if (options.max_length < 0) {
    return invalid("max_length", options.max_length, at_least(0), " (0: the model's default)");
  }
  if (options.max_length > config.max_position_embeddings) {
    return invalid("max_length", options.max_length,
                   limit(config.max_position_embeddings, "the model's max_position_embeddings"));
  }
  if (options.min_length < 0) return invalid("min_length", options.min_length, at_least(0));
  if (!(options.max_length_factor >= 0) || !std::isfinite(options.max_length_factor)) {
    return invalid("max_length_factor", options.max_length_factor,
                   "it must be a finite number, at least 0");
  }
  if (options.max_length_offset < 1) {
    return invalid("max_length_offset", options.max_length_offset, at_least(1));
  }
  const int max_length = EffectiveMaxLength(options, config);
  if (options.min_length > max_length) {
    return invalid("min_length", options.min_length,
                   limit(max_length, absl::StrCat(prefix, "max_length")));
  }
  return absl::OkStatus();
}

}  // namespace mtserve
