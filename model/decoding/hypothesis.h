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

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_HYPOTHESIS_H_
