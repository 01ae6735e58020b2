#include "model/decoding/log_softmax_top_k.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "model/kernels/target_clones.h"
#include "model/kernels/top_k.h"
#include "model/kernels/vector_exp.h"

namespace mtserve {
namespace {

// The row goes by blocks that stay in L1 between the reads of one pass: the block's maximum,
// its candidates (only where the maximum beats the k-th best so far), its exponentials. A block
// that raises the maximum rescales the sum so far to it, so the maximum and the sum are found
// together.
constexpr int kBlock = 256;
// Within a block whose maximum beats the k-th best, the chunks that cannot are skipped.
constexpr int kChunk = 16;
// Larger k: TopK's selection (see top_k.cc), and this pass for the normaliser only.
constexpr int kMaxInsertionK = 256;

// sum(exp(x[i] - max)) over x[0..n).
MTSERVE_TARGET_CLONES float ExpSum(const float* x, int n, float max) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += ExpNonPositive(x[i] - max);
  return sum;
}

// max(x[0..n)), -inf for n = 0.
MTSERVE_TARGET_CLONES float Max(const float* x, int n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// The normaliser of logits[0..n), and with best.k > 0 its best values in `best`.
LogNormalizer ScanPortable(const float* logits, int n, TopKInsertion& best) {
  float max = -INFINITY;
  float sum = 0.f;
  for (int begin = 0; begin < n; begin += kBlock) {
    const int end = std::min(begin + kBlock, n);
    const float block_max = Max(logits + begin, end - begin);
    if (best.k > 0 && best.Admits(block_max)) {
      for (int chunk = begin; chunk < end; chunk += kChunk) {
        const int chunk_end = std::min(chunk + kChunk, end);
        if (!best.Admits(Max(logits + chunk, chunk_end - chunk))) continue;
        for (int i = chunk; i < chunk_end; ++i) best.Offer(logits, i);
      }
    }
    if (!(block_max > max)) {
      if (max == -INFINITY) continue;  // Masked so far: nothing to add.
    } else {
      sum *= ExpNonPositive(max - block_max);  // (0 while max is -inf, as the sum is.)
      max = block_max;
    }
    // (Summed apart: one running sum of every column loses digits.)
    sum += ExpSum(logits + begin, end - begin, max);
  }
  return {max, std::log(sum)};
}

#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
constexpr int kLanes = 16;

// logits[i, i + 16), -inf past n.
__attribute__((target("avx512f"))) inline __m512 Load512(const float* logits, int n, int i) {
  const int left = n - i;
  return left >= kLanes
             ? _mm512_loadu_ps(logits + i)
             : _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), (1u << left) - 1, logits + i);
}

// ScanPortable in vectors of 16 (the tail loaded with -inf); a block's candidates are found by
// comparing each vector with the k-th best.
__attribute__((target("avx512f"))) LogNormalizer ScanAvx512(const float* logits, int n,
                                                            TopKInsertion& best) {
  float max = -INFINITY;
  __m512 sum = _mm512_setzero_ps();
  for (int begin = 0; begin < n; begin += kBlock) {
    const int end = std::min(begin + kBlock, n);
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    for (int i = begin; i < end; i += kLanes) vmax = _mm512_max_ps(vmax, Load512(logits, n, i));
    const float block_max = _mm512_reduce_max_ps(vmax);
    if (best.k > 0 && best.Admits(block_max)) {
      for (int i = begin; i < end; i += kLanes) {
        const int lanes = std::min(kLanes, end - i);
        if (best.count < best.k) {
          for (int j = 0; j < lanes; ++j) best.Offer(logits, i + j);
          continue;
        }
        uint32_t above = _mm512_cmp_ps_mask(Load512(logits, n, i),
                                            _mm512_set1_ps(best.values[best.k - 1]), _CMP_GT_OQ);
        for (; above != 0; above &= above - 1) best.Offer(logits, i + std::countr_zero(above));
      }
    }
    if (!(block_max > max)) {
      if (max == -INFINITY) continue;  // Masked so far: nothing to add.
    } else {
      sum = _mm512_mul_ps(sum, _mm512_set1_ps(ExpNonPositive(max - block_max)));
      max = block_max;
    }
    const __m512 vmax_all = _mm512_set1_ps(max);
    __m512 block_sum = _mm512_setzero_ps();  // (Summed apart, as in ScanPortable.)
    for (int i = begin; i < end; i += kLanes) {
      block_sum = _mm512_add_ps(block_sum, Exp512(_mm512_sub_ps(Load512(logits, n, i), vmax_all)));
    }
    sum = _mm512_add_ps(sum, block_sum);
  }
  return {max, std::log(_mm512_reduce_add_ps(sum))};
}
#endif

MTSERVE_TARGET_CLONES void Normalize(float* row, int n, float max, float log_sum) {
#pragma omp simd
  for (int i = 0; i < n; ++i) row[i] = (row[i] - max) - log_sum;
}

using Scan = LogNormalizer (*)(const float*, int, TopKInsertion&);

LogNormalizer Run(Scan scan, const float* logits, int n, int k, int* ids, float* values) {
  k = std::max(0, std::min(k, n));
  TopKInsertion best{k <= kMaxInsertionK ? k : 0, ids, values};
  const LogNormalizer normalizer = scan(logits, n, best);
  if (k > kMaxInsertionK) TopK(logits, n, k, ids, values);
  for (int i = 0; i < k; ++i) values[i] = normalizer.LogProb(values[i]);
  return normalizer;
}

}  // namespace

float LogNormalizer::LogProb(float x) const {
  return max == -INFINITY ? -INFINITY : (x - max) - log_sum;
}

LogNormalizer LogSoftmaxTopK(const float* logits, int n, int k, int* ids, float* values) {
#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
  if (CpuHasAvx512()) return Run(ScanAvx512, logits, n, k, ids, values);
#endif
  return Run(ScanPortable, logits, n, k, ids, values);
}

LogNormalizer LogSoftmaxTopKPortable(const float* logits, int n, int k, int* ids, float* values) {
  return Run(ScanPortable, logits, n, k, ids, values);
}

void ApplyLogNormalizer(float* row, int n, LogNormalizer normalizer) {
  if (normalizer.max == -INFINITY) {
    std::fill(row, row + n, -INFINITY);
  } else {
    Normalize(row, n, normalizer.max, normalizer.log_sum);
  }
}

}  // namespace mtserve
