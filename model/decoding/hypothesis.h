// What a search returns for one input.
#ifndef MTSERVE_MODEL_DECODING_HYPOTHESIS_H_
#define MTSERVE_MODEL_DECODING_HYPOTHESIS_H_

#include <string>
#include <vector>

#include "model/decoding/term_constraints.h"

namespace mtserve {

struct Hypothesis {
  std::vector<int> ids;                // Generated ids; ends with </s> unless a bound was hit.
  std::vector<float> token_log_probs;  // One per id.
  float log_prob = 0;                  // Sum of token_log_probs.
  float score = 0;                     // The ranking score: log_prob / length^length_penalty for
                                       // beam search, log_prob otherwise.
  std::string text;                    // Detokenised ids (filled by the Translator).
  // With DecodingOptions::return_alignment, one per id: the source position (0-based, </s>
  // included) the decoder's cross-attention weighed most when generating it (see Decoder::Step);
  // empty otherwise.
  std::vector<int> alignment;
  // For an input decoded with TermConstraints: where each of its constraints was satisfied, in
  // order of `begin` (one per constraint); empty otherwise.
  std::vector<PlacedTerm> terms;
  // How many of its sentences stopped at their length bound (DecodingOptions: max_length, or the
  // bound from the source's length) instead of ending with </s>: 0 or 1 for one input's; a
  // text's hypothesis joined from its sentences' (text/) counts them all. Never silent: callers
  // report it (the API's Hypothesis.truncated_sentences).
  int truncated = 0;
};

// A sentence that left a decode: its hypotheses, best first (num_hypotheses of them), or none
// when it was cancelled.
struct FinishedSentence {
  int sentence = 0;
  std::vector<Hypothesis> hypotheses;
};

// The tokens of a translation as benchmarks and the server count them: without </s> (a text of
// several sentences has one at the end of each).
inline int TargetTokens(const Hypothesis& hypothesis, int eos_id) {
  int tokens = 0;
  for (int id : hypothesis.ids) tokens += id != eos_id;
  return tokens;
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_HYPOTHESIS_H_
