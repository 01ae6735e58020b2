// What a request may ask for, and the checks that turn a request's fields into engine inputs.
// Every violation is an InvalidArgument naming the field and the limit; nothing is truncated.
// Transport-neutral: front ends map their messages to these types.
#ifndef MTSERVE_SERVING_REQUEST_LIMITS_H_
#define MTSERVE_SERVING_REQUEST_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/term_constraints.h"
#include "model/model_config.h"
#include "serving/translation_request.h"
#include "text/subtitle_document.h"
#include "text/terminology.h"

namespace mtserve {

struct RequestLimits {
  int max_texts_per_request = 256;
  // Bytes of one text: checked before anything else is done with it.
  int64_t max_text_bytes = 1 << 20;
  int max_input_tokens = 512;   // Source tokens per text, </s> included (also the model's own).
  int max_output_tokens = 512;  // Generated tokens per hypothesis (also the model's own).
  int max_beam_size = 16;
  // Sampling draws from the k best tokens, and finding them costs a share of each step that grows
  // with k (about 0.6 ms per text and step at k = 1,000 on a 58k vocabulary).
  int max_sampling_topk = 1000;
  // What one worker's decode may hold (0: no limit), as the scheduler's BatchingOptions says.
  int64_t worker_memory_bytes = 0;
  // Models a caller may have loaded per minute (repository/cold_load_limit.h; 0: no limit).
  int max_cold_loads_per_minute = 0;
  // How subtitle files' translated cue text is wrapped (--subtitle_max_line_chars,
  // --subtitle_max_lines).
  SubtitleLayout subtitle_layout;
  // A request's glossary entries and kept terms (--max_request_terms), their forms and bytes.
  TerminologyLimits terms;
};

// The most source tokens a text may have with a model of `config` (the limit or the model's
// positions).
int MaxInputTokens(const ModelConfig& config, const RequestLimits& limits);
// The most tokens a hypothesis may have with a model of `config`.
int MaxOutputTokens(const ModelConfig& config, const RequestLimits& limits);

// What a request's JSON (a body, or one line of a stream) or protobuf message may build before it
// is read into a request: 64 levels (messages nest 3) and the texts a request may have, plus
// 3 + max_targets values for each glossary entry it may carry, plus 64 values for its other
// fields, so that a 4 MiB body of `"",""...` cannot become a million values.
ValueBounds RequestValueBounds(const RequestLimits& limits);

// The engine's options for `requested` (unset fields take their documented defaults), or an
// InvalidArgument naming the first field out of bounds (as options.FIELD).
absl::StatusOr<DecodingOptions> ToDecodingOptions(const RequestedOptions& requested,
                                                  const ModelConfig& config,
                                                  const RequestLimits& limits);

// An InvalidArgument naming `field` (a request's texts) if it has more than the texts allowed.
absl::Status CheckTextCount(size_t texts, absl::string_view field, const RequestLimits& limits);

// An InvalidArgument naming `field` if `text` has more bytes than allowed (checked before any
// work on it).
absl::Status CheckTextBytes(absl::string_view text, absl::string_view field,
                            const RequestLimits& limits);
// The same against `max_bytes`, the server's flag `flag` (a file's --max_file_bytes, say).
absl::Status CheckTextBytes(absl::string_view text, absl::string_view field, int64_t max_bytes,
                            absl::string_view flag);

// An InvalidArgument naming `field` when decoding a text of `source_tokens` tokens with `options`
// and `constraints` (null: none) could need more memory than a worker may hold even alone (see
// model/decode_memory.h).
absl::Status CheckDecodeMemory(int source_tokens, const DecodingOptions& options,
                               const TermConstraints* constraints, const ModelConfig& config,
                               const RequestLimits& limits, absl::string_view field);

// What a sentence of `source_tokens` tokens must pass before it is queued, naming `field`: its
// `constraints` (null: none) fit its length bound (the engine's ValidateTermConstraints, which
// the decode makes again: asked here, a request is refused before any of it is decoded), and
// CheckDecodeMemory.
absl::Status CheckDecodable(int source_tokens, const DecodingOptions& options,
                            const TermConstraints* constraints, const ModelConfig& config,
                            const RequestLimits& limits, absl::string_view field);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_REQUEST_LIMITS_H_
