#include "serving/request_limits.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "model/decode_memory.h"
#include "model/decoding/term_constraints.h"

namespace mtserve {
namespace {

absl::Status OverLimit(absl::string_view field, uint64_t value, int64_t limit,
                       absl::string_view limit_name) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", value, "; the limit is ", limit, " (", limit_name, ")"));
}

}  // namespace

int MaxInputTokens(const ModelConfig& config, const RequestLimits& limits) {
  return std::min(limits.max_input_tokens, config.max_position_embeddings);
}

int MaxOutputTokens(const ModelConfig& config, const RequestLimits& limits) {
  return std::min(limits.max_output_tokens, config.max_position_embeddings);
}

ValueBounds RequestValueBounds(const RequestLimits& limits) {
  constexpr int kOtherValues = 64;
  // A glossary entry is an object, its source, its list and its forms.
  const int64_t term_values =
      int64_t{limits.terms.max_entries} * (3 + int64_t{limits.terms.max_targets});
  return {.max_depth = kMaxJsonDepth,
          .max_values = int64_t{limits.max_texts_per_request} + term_values + kOtherValues,
          .values_limit =
              absl::StrCat("the server's --max_texts_per_request (", limits.max_texts_per_request,
                           "), plus --max_request_terms (", limits.terms.max_entries, ") times ",
                           3 + limits.terms.max_targets, ", plus ", kOtherValues)};
}

absl::StatusOr<DecodingOptions> ToDecodingOptions(const RequestedOptions& proto,
                                                  const ModelConfig& config,
                                                  const RequestLimits& limits) {
  // The server's own limits here; what the model allows in ValidateDecodingOptions, the one
  // place those rules live, with the same form of message.
  if (proto.beam_size > static_cast<uint32_t>(limits.max_beam_size)) {
    return OverLimit("options.beam_size", proto.beam_size, limits.max_beam_size,
                     "the server's --max_beam_size");
  }
  if (proto.sampling_topk > static_cast<uint32_t>(limits.max_sampling_topk)) {
    return OverLimit("options.sampling_topk", proto.sampling_topk, limits.max_sampling_topk,
                     "the server's --max_sampling_topk");
  }
  const int max_output = MaxOutputTokens(config, limits);
  if (proto.max_length > static_cast<uint32_t>(max_output)) {
    return OverLimit("options.max_length", proto.max_length, max_output,
                     "the server's --max_output_tokens and the model's positions");
  }
  // Counts beyond int's range are as invalid as INT_MAX: saturate rather than wrap.
  auto count = [](uint32_t value, int unset) {
    return value == 0 ? unset : static_cast<int>(std::min<uint32_t>(value, INT32_MAX));
  };
  DecodingOptions options;
  options.beam_size = count(proto.beam_size, 1);
  options.num_hypotheses = count(proto.num_hypotheses, 1);
  if (proto.length_penalty.has_value()) options.length_penalty = *proto.length_penalty;
  options.sampling_topk = count(proto.sampling_topk, 1);
  if (proto.sampling_temperature.has_value()) {
    options.sampling_temperature = *proto.sampling_temperature;
  }
  options.seed = proto.seed;
  options.max_length = proto.max_length > 0
                           ? static_cast<int>(proto.max_length)
                           : std::min(EffectiveMaxLength(options, config), max_output);
  options.min_length = count(proto.min_length, 0);
  options.return_alignment = proto.return_alignment;
  options.shortlist = proto.shortlist;
  MT_RETURN_IF_ERROR(ValidateDecodingOptions(options, config, "options."));
  return options;
}

absl::Status CheckTextCount(size_t texts, absl::string_view field, const RequestLimits& limits) {
  if (texts <= static_cast<size_t>(limits.max_texts_per_request)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " has ", texts, " entries; the limit is ",
                                                 limits.max_texts_per_request,
                                                 " (the server's --max_texts_per_request)"));
}

absl::Status CheckTextBytes(absl::string_view text, absl::string_view field,
                            const RequestLimits& limits) {
  return CheckTextBytes(text, field, limits.max_text_bytes, "--max_text_bytes");
}

absl::Status CheckTextBytes(absl::string_view text, absl::string_view field, int64_t max_bytes,
                            absl::string_view flag) {
  if (static_cast<int64_t>(text.size()) <= max_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " has ", text.size(),
                                                 " bytes; the limit is ", max_bytes,
                                                 " (the server's ", flag, ")"));
}

absl::Status CheckDecodeMemory(int source_tokens, const DecodingOptions& options,
                               const TermConstraints* constraints, const ModelConfig& config,
                               const RequestLimits& limits, absl::string_view field) {
  if (limits.worker_memory_bytes <= 0) return absl::OkStatus();
  const DecodeMemory memory(config, options);
  const int64_t terms = memory.Terms(constraints);
  const int64_t needed = memory.Admitting(1, source_tokens, 1, source_tokens, terms);
  if (needed <= limits.worker_memory_bytes) return absl::OkStatus();
  const std::string for_terms =
      terms == 0 ? "" : absl::StrCat(", ", FormatBytes(terms), " of it for its terms");
  return absl::InvalidArgumentError(absl::StrCat(
      field, " (", source_tokens, " tokens) can need up to ", FormatBytes(needed),
      " to decode with options.beam_size ", memory.beam_size(), " and options.max_length ",
      memory.max_length(), for_terms, "; the limit is ", FormatBytes(limits.worker_memory_bytes),
      " (the server's --worker_memory); a smaller max_length or beam_size",
      terms == 0 ? "" : ", or fewer or shorter terms,", " fits"));
}

absl::Status CheckDecodable(int source_tokens, const DecodingOptions& options,
                            const TermConstraints* constraints, const ModelConfig& config,
                            const RequestLimits& limits, absl::string_view field) {
  if (constraints != nullptr) {
    const absl::Status valid =
        ValidateTermConstraints(*constraints, config, options, source_tokens);
    if (!valid.ok()) return absl::Status(valid.code(), absl::StrCat(field, ": ", valid.message()));
  }
  return CheckDecodeMemory(source_tokens, options, constraints, config, limits, field);
}

}  // namespace mtserve
