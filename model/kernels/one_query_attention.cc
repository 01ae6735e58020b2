#include "model/kernels/one_query_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mtserve {
namespace {

// One row, every head. `scores` has room for heads * length floats. `probabilities`, when not
// null, has `length` zeros and gets the probabilities averaged over the heads.
//
// Positions are the outer loop, so each key and value vector is read once, front to back: the
// keys of one row lie at different places in the cache, and with heads outermost every head
// came back to every position's vector for its own slice, which made this kernel wait on memory
// (a quarter of an int8 decoder's time, once int8 had made the matmuls four times faster).
// Asks for the vector two positions ahead while this one is computed: the vectors of a row are
// scattered over the cache, too far apart for the hardware's prefetcher to see a stream.
inline void PrefetchVector(const float* const* vectors, int s, int length, int width) {
  constexpr int kAhead = 2;
  constexpr int kFloatsPerLine = 64 / sizeof(float);
  if (s + kAhead >= length) return;
  const float* next = vectors[s + kAhead];
  for (int i = 0; i < width; i += kFloatsPerLine) __builtin_prefetch(next + i);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void AttendRow(
    const float* q, const float* const* keys, const float* const* values, int length, int heads,
    int head_dim, float* scores, float* out, float* probabilities) {
  const int width = heads * head_dim;
  for (int s = 0; s < length; ++s) {
    PrefetchVector(keys, s, length, width);
    const float* k = keys[s];
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      float dot = 0.f;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < head_dim; ++i) dot += q[offset + i] * k[offset + i];
      scores[h * length + s] = dot;
    }
  }
  for (int h = 0; h < heads; ++h) {
    float* hs = scores + h * length;
    float max_score = -INFINITY;
    for (int s = 0; s < length; ++s) max_score = std::max(max_score, hs[s]);
    float sum = 0.f;
    for (int s = 0; s < length; ++s) {
      hs[s] = std::exp(hs[s] - max_score);
      sum += hs[s];
    }
    const float inv_sum = 1.f / sum;
    for (int s = 0; s < length; ++s) hs[s] *= inv_sum;
    if (probabilities != nullptr) {
      const float weight = 1.f / static_cast<float>(heads);
      for (int s = 0; s < length; ++s) probabilities[s] += hs[s] * weight;
    }
  }
#pragma omp simd
  for (int i = 0; i < width; ++i) out[i] = 0.f;
  for (int s = 0; s < length; ++s) {
    PrefetchVector(values, s, length, width);
    const float* v = values[s];
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      const float p = scores[h * length + s];
#pragma omp simd
      for (int i = 0; i < head_dim; ++i) out[offset + i] += p * v[offset + i];
    }
  }
}

}  // namespace

void OneQueryAttention(const OneQueryAttentionArgs& args) {
  const int width = args.heads * args.head_dim;
#pragma omp parallel
  {
    std::vector<float> scores(static_cast<size_t>(args.heads) * args.max_positions);
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
