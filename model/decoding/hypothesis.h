// What a search returns for one input.
#ifndef MTSERVE_MODEL_DECODING_HYPOTHESIS_H_
#define MTSERVE_MODEL_DECODING_HYPOTHESIS_H_

#include <string>
#include <vector>

namespace mtserve {

struct Hypothesis {
  std::vector<int> ids;                // Generated ids; ends with </s> unless max_length was hit.
  std::vector<float> token_log_probs;  // One per id.
  float log_prob = 0;                  // Sum of token_log_probs.
  float score = 0;                     // The ranking score: log_prob / length^length_penalty for
                                       // beam search, log_prob otherwise.
  std::string text;                    // Detokenised ids (filled by the Translator).
};

// A sentence that left a decode: its hypotheses, best first (num_hypotheses of them), or none
// when it was cancelled.
struct FinishedSentence {
  int sentence = 0;
  std::vector<Hypothesis> hypotheses;
};

// The tokens of a translation as benchmarks and the server count them: without the final </s>.
inline int TargetTokens(const Hypothesis& hypothesis, int eos_id) {
  const int size = static_cast<int>(hypothesis.ids.size());
  return size > 0 && hypothesis.ids.back() == eos_id ? size - 1 : size;
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_HYPOTHESIS_H_
