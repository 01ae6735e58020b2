// Target-side constraints on one input's hypotheses: the glossary terms and the spans kept as
// written that its source holds (text/terminology.h finds them and spells them in the target
// vocabulary). Each constraint is satisfied by any one of its forms, a sequence of target ids;
// every hypothesis a search returns for the input holds one form of each constraint (two
// occurrences of a term in the source are two constraints, and need two occurrences in the
// translation). Searches honour them in the decoder (model/decoding/constrained_search.h), not by
// editing the text afterwards, so the words around a term are chosen knowing it is there.
#ifndef MTSERVE_MODEL_DECODING_TERM_CONSTRAINTS_H_
#define MTSERVE_MODEL_DECODING_TERM_CONSTRAINTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/decoding/decoding_options.h"
#include "model/model_config.h"

namespace mtserve {

// Constraints per input at most: what one sentence of a request can ask for (each costs the
// search a few rows' bookkeeping per step).
inline constexpr int kMaxTermConstraints = 64;

struct TermConstraint {
  // Non-empty id sequences (no </s>, no pad); any one satisfies the constraint.
  std::vector<std::vector<int>> forms;
  // Forms that satisfy it only as a hypothesis's first tokens: a form with its first letter's
  // case changed, which a translation may start a sentence with. May be empty.
  std::vector<std::vector<int>> initial_forms;
  // The source tokens of its occurrence: [source_begin, source_end) of the input's ids (</s>
  // excluded); -1 both when unknown (a pivot's last leg whose bridge text the alignment of the
  // legs before does not link to the source the term was found in). Where known, a search places
  // the term where the decoder's alignment reaches it (Search::CreateBeam); they never change
  // which hypotheses satisfy it.
  int source_begin = -1;
  int source_end = -1;
};

struct TermConstraints {
  std::vector<TermConstraint> terms;  // At most kMaxTermConstraints.
};

// Where a hypothesis satisfied constraint `term`: its generated ids [begin, end) are
// `forms[form]` (or `initial_forms[form]` when `initial`).
struct PlacedTerm {
  int term = 0;
  int form = 0;
  bool initial = false;
  int begin = 0;
  int end = 0;
};

// The beam a greedy search's inputs with constraints are decoded with (ConstrainedOptions).
inline constexpr int kConstrainedBeamSize = 4;

// The options an input with constraints is decoded with, given those of its request: a greedy
// search (no sampling) becomes a beam of kConstrainedBeamSize, with the same number of
// hypotheses, so that the search has alternatives to place a term among; a beam or sampling stays
// as asked. The server and mttranslate both decode such inputs with these.
inline DecodingOptions ConstrainedOptions(DecodingOptions options) {
  if (options.beam_size == 1 && options.sampling_topk <= 1)
    options.beam_size = kConstrainedBeamSize;
  return options;
}

// What bounds the memory an input's constraints take in a decode (Search::TermBytes,
// DecodeMemory::Terms): their count, their forms (initial ones included) and those forms' tokens.
struct TermSizes {
  int64_t terms = 0;
  int64_t forms = 0;
  int64_t tokens = 0;
};
TermSizes SizesOf(const TermConstraints& constraints);
// The bytes `constraints` hold, as allocated.
size_t MemoryBytes(const TermConstraints& constraints);

// The fewest tokens that satisfy all of `constraints` (each constraint's shortest form, summed):
// an input whose length bound (InputMaxLength, less its </s>) is below this cannot be
// translated with them, and is refused before decoding.
int MinimumConstrainedTokens(const TermConstraints& constraints);

// InvalidArgument unless the constraints of an input of `source_tokens` tokens (</s> included)
// can be decoded with `options` by `config`'s model: at most kMaxTermConstraints, each with a
// form, every form non-empty and made of ids the model can generate (not </s>, pad or another
// never generated id), its source span unknown (both -1) or 0 <= source_begin < source_end, and
// MinimumConstrainedTokens within the input's length bound less its </s> (the message names both
// figures and the options that make the bound). The one check of an input's constraints:
// DecodeSession::AddInputs makes it, which the server and mttranslate both decode through (the
// server also asks it before queuing a sentence, so that a request is refused before any of it
// is decoded); the message does not name the input (the caller does).
absl::Status ValidateTermConstraints(const TermConstraints& constraints, const ModelConfig& config,
                                     const DecodingOptions& options, int source_tokens);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_TERM_CONSTRAINTS_H_
