// Chooses a row's next token from its log-probabilities: the best one, or one drawn from the
// top k after dividing the log-probabilities by the temperature.
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

  // `generator` is only used (and may only be null) when topk is 1.
  int Sample(const float* log_probs, int vocab_size, std::mt19937_64* generator) const;

 private:
  int topk_;
  float temperature_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_SAMPLER_H_
