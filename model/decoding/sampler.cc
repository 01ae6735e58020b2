#include "model/decoding/sampler.h"

#include <cmath>

#include "model/kernels/top_k.h"

namespace mtserve {

std::mt19937_64 Sampler::MakeGenerator(const std::optional<uint64_t>& seed) {
  if (seed.has_value()) return std::mt19937_64(*seed);
  std::random_device device;
  return std::mt19937_64((static_cast<uint64_t>(device()) << 32) | device());
}

int Sampler::Sample(const float* log_probs, int vocab_size, std::mt19937_64* generator) const {
  // Per thread, not per call: with large k these are sizeable, and rows are sampled in parallel.
  thread_local std::vector<int> ids;
  thread_local std::vector<float> values;
  ids.resize(topk_);
  values.resize(topk_);
  TopK(log_probs, vocab_size, topk_, ids.data(), values.data());
  // Weights relative to the best candidate, so the exponentials cannot overflow.
  double total = 0;
  for (int i = 0; i < topk_; ++i) {
    values[i] = std::isfinite(values[i]) ? std::exp((values[i] - values[0]) / temperature_) : 0.f;
    total += values[i];
  }
  // A uniform double in [0, total) from the top 53 bits: the same draw on every platform, which
  // std::uniform_real_distribution does not promise.
  const double u = static_cast<double>((*generator)() >> 11) * 0x1.0p-53 * total;
  double cumulative = 0;
  for (int i = 0; i < topk_; ++i) {
    cumulative += values[i];
    if (u < cumulative) return ids[i];
  }
  return ids[0];
}

}  // namespace mtserve
