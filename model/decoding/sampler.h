// Draws a row's next token from its log-probabilities: one of the top k (k > 1; greedy search
// takes the best token by LogSoftmaxTopK) after dividing the log-probabilities by the
// temperature.
#ifndef MTSERVE_MODEL_DECODING_SAMPLER_H_
#define MTSERVE_MODEL_DECODING_SAMPLER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace mtserve {

class Sampler {
 public:
  Sampler(int topk, float temperature) : topk_(topk), temperature_(temperature) {}

  // One generator per input sentence: seeded with `seed` when given, so a sentence gets the same
  // sample whatever else shares its batch; otherwise from std::random_device.
  static std::mt19937_64 MakeGenerator(const std::optional<uint64_t>& seed);

  int Sample(const float* log_probs, int vocab_size, std::mt19937_64* generator) const;

 private:
  int topk_;
  float temperature_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_SAMPLER_H_
