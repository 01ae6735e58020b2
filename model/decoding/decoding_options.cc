#include "model/decoding/decoding_options.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace mtserve {

int EffectiveMaxLength(const DecodingOptions& options, const ModelConfig& config) {
  const int model_default = std::max(1, config.max_length - 1);
  const int length = options.max_length > 0 ? options.max_length : model_default;
  return std::min(length, config.max_position_embeddings);
}

absl::Status ValidateDecodingOptions(const DecodingOptions& options, const ModelConfig& config) {
  auto invalid = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (options.beam_size < 1 || options.beam_size > config.vocab_size) {
    return invalid("beam_size must be between 1 and the vocabulary size (", config.vocab_size,
                   "), got ", options.beam_size);
  }
  if (options.num_hypotheses < 1 || options.num_hypotheses > options.beam_size) {
    return invalid("num_hypotheses must be between 1 and beam_size (", options.beam_size, "), got ",
                   options.num_hypotheses);
  }
  if (!std::isfinite(options.length_penalty)) {
    return invalid("length_penalty must be a finite number");
  }
  if (options.sampling_topk < 1 || options.sampling_topk > config.vocab_size) {
    return invalid("sampling_topk must be between 1 and the vocabulary size (", config.vocab_size,
                   "), got ", options.sampling_topk);
  }
  if (options.sampling_topk > 1 && options.beam_size > 1) {
    return invalid("sampling_topk > 1 requires beam_size 1, got beam_size ", options.beam_size);
  }
  if (!(options.sampling_temperature > 0) || !std::isfinite(options.sampling_temperature)) {
    return invalid("sampling_temperature must be a positive number");
  }
  if (options.max_length < 0 || options.max_length > config.max_position_embeddings) {
    return invalid("max_length must be between 0 (model default) and max_position_embeddings (",
                   config.max_position_embeddings, "), got ", options.max_length);
  }
  if (options.min_length < 0 || options.min_length > EffectiveMaxLength(options, config)) {
    return invalid("min_length must be between 0 and max_length (",
                   EffectiveMaxLength(options, config), "), got ", options.min_length);
  }
  return absl::OkStatus();
}

}  // namespace mtserve
