#include "model/kernels/one_query_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mtserve {
namespace {

// One row, every head. `scores` has room for `length` floats. `probabilities`, when not null,
// has `length` zeros and gets the probabilities averaged over the heads.
__attribute__((target_clones("avx512f", "avx2", "default"))) void AttendRow(
    const float* q, const float* const* keys, const float* const* values, int length, int heads,
    int head_dim, float* scores, float* out, float* probabilities) {
  for (int h = 0; h < heads; ++h) {
    const int offset = h * head_dim;
    const float* qh = q + offset;
    float max_score = -INFINITY;
    for (int s = 0; s < length; ++s) {
      const float* k = keys[s] + offset;
      float dot = 0.f;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < head_dim; ++i) dot += qh[i] * k[i];
      scores[s] = dot;
      max_score = std::max(max_score, dot);
    }
    float sum = 0.f;
    for (int s = 0; s < length; ++s) {
      scores[s] = std::exp(scores[s] - max_score);
      sum += scores[s];
    }
    const float inv_sum = 1.f / sum;
    if (probabilities != nullptr) {
      // A loop of its own: the output loop below, the hot one, stays as it is without them.
      const float weight = inv_sum / static_cast<float>(heads);
      for (int s = 0; s < length; ++s) probabilities[s] += scores[s] * weight;
    }
    float* oh = out + offset;
#pragma omp simd
    for (int i = 0; i < head_dim; ++i) oh[i] = 0.f;
    for (int s = 0; s < length; ++s) {
      const float p = scores[s] * inv_sum;
      const float* v = values[s] + offset;
#pragma omp simd
      for (int i = 0; i < head_dim; ++i) oh[i] += p * v[i];
    }
  }
}

}  // namespace

void OneQueryAttention(const OneQueryAttentionArgs& args) {
  const int width = args.heads * args.head_dim;
#pragma omp parallel
  {
    std::vector<float> scores(args.max_positions);
#pragma omp for schedule(static)
    for (int r = 0; r < args.rows; ++r) {
      const int64_t first = static_cast<int64_t>(r) * args.max_positions;
      float* probabilities = nullptr;
      if (args.probabilities != nullptr) {
        probabilities = args.probabilities + first;
        std::fill(probabilities, probabilities + args.max_positions, 0.f);
      }
      AttendRow(args.queries + r * args.query_stride, args.keys + first, args.values + first,
                args.lengths[r], args.heads, args.head_dim, scores.data(),
                args.out + static_cast<int64_t>(r) * width, probabilities);
    }
  }
}

}  // namespace mtserve
