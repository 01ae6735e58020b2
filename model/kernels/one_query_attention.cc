#include "model/kernels/one_query_attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/float16.h"
#include "model/kernels/target_clones.h"
#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

// One row, every head. `scores` has room for heads * length floats. `probabilities`, when not
// null, has `length` zeros and gets the probabilities averaged over the heads.
//
// Positions are the outer loop, so each key and value vector is read once, front to back: the
// keys of one row lie at different places in the cache, and with heads outermost every head
// came back to every position's vector for its own slice, which made this kernel wait on memory
// (a quarter of an int8 decoder's time, once int8 had made the matmuls four times faster).
inline __attribute__((always_inline)) float Element(const float* v, int i) { return v[i]; }
inline __attribute__((always_inline)) float Element(const uint16_t* v, int i) {
  return BFloat16ToFloat(v[i]);
}

// Asks for the vector two positions ahead while this one is computed: the vectors of a row are
// scattered over the cache, too far apart for the hardware's prefetcher to see a stream.
template <typename T>
inline __attribute__((always_inline)) void PrefetchVector(const void* const* vectors, int s,
                                                          int length, int width) {
  constexpr int kAhead = 2;
  constexpr int kPerLine = 64 / sizeof(T);
  if (s + kAhead >= length) return;
  const T* next = static_cast<const T*>(vectors[s + kAhead]);
  for (int i = 0; i < width; i += kPerLine) __builtin_prefetch(next + i);
}

// One row, every head, keys and values of element type T. `scores` has room for heads * length
// floats. `probabilities`, when not null, has `length` zeros and gets the probabilities averaged
// over the heads.
//
// Positions are the outer loop, so each key and value vector is read once, front to back: the
// keys of one row lie at different places in the cache, and with heads outermost every head
// came back to every position's vector for its own slice, which made this kernel wait on memory
// (a quarter of an int8 decoder's time, once int8 had made the matmuls four times faster).
template <typename T>
inline __attribute__((always_inline)) void AttendRowOf(const float* q, const void* const* keys,
                                                       const void* const* values, int length,
                                                       int heads, int head_dim, float* scores,
                                                       float* out, float* probabilities) {
  const int width = heads * head_dim;
  for (int s = 0; s < length; ++s) {
    PrefetchVector<T>(keys, s, length, width);
    const T* k = static_cast<const T*>(keys[s]);
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      float dot = 0.f;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < head_dim; ++i) dot += q[offset + i] * Element(k, offset + i);
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
    PrefetchVector<T>(values, s, length, width);
    const T* v = static_cast<const T*>(values[s]);
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      const float p = scores[h * length + s];
#pragma omp simd
      for (int i = 0; i < head_dim; ++i) out[offset + i] += p * Element(v, offset + i);
    }
  }
}

MTSERVE_TARGET_CLONES void AttendRow(const float* q, const void* const* keys,
                                     const void* const* values, int length, int heads, int head_dim,
                                     float* scores, float* out, float* probabilities) {
  AttendRowOf<float>(q, keys, values, length, heads, head_dim, scores, out, probabilities);
}

MTSERVE_TARGET_CLONES void AttendRowBFloat16(const float* q, const void* const* keys,
                                             const void* const* values, int length, int heads,
                                             int head_dim, float* scores, float* out,
                                             float* probabilities) {
  AttendRowOf<uint16_t>(q, keys, values, length, heads, head_dim, scores, out, probabilities);
}

}  // namespace

void OneQueryAttention(const OneQueryAttentionArgs& args) {
  const int width = args.heads * args.head_dim;
  if (PhaseProfile* profile = PhaseProfile::Active()) {
    int64_t positions = 0;
    for (int r = 0; r < args.rows; ++r) positions += args.lengths[r];
    profile->AddMacs(2 * positions * width);  // Scores, then the weighted sum of the values.
  }
  const size_t scores_size = static_cast<size_t>(args.heads) * args.max_positions;
  auto attend_row = [&](int r, float* scores) {
    const int64_t first = static_cast<int64_t>(r) * args.max_positions;
    float* probabilities = nullptr;
    if (args.probabilities != nullptr) {
      probabilities = args.probabilities + first;
      std::fill(probabilities, probabilities + args.max_positions, 0.f);
    }
    const auto attend = args.vector_type == VectorType::kBFloat16 ? AttendRowBFloat16 : AttendRow;
    attend(args.queries + r * args.query_stride, args.keys + first, args.values + first,
           args.lengths[r], args.heads, args.head_dim, scores,
           args.out + static_cast<int64_t>(r) * width, probabilities);
  };
  // A parallel region only where it has threads to share (model/kernels/parallel_for.h says why).
  if (args.rows > 1 && omp_get_max_threads() > 1) {
#pragma omp parallel
    {
      std::vector<float> scores(scores_size);
#pragma omp for schedule(static)
      for (int r = 0; r < args.rows; ++r) attend_row(r, scores.data());
    }
    return;
  }
  std::vector<float> scores(scores_size);
  for (int r = 0; r < args.rows; ++r) attend_row(r, scores.data());
}

}  // namespace mtserve
