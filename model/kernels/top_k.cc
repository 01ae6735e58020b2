#include "model/kernels/top_k.h"

#include <algorithm>
#include <cmath>

namespace mtserve {
namespace {

constexpr int kChunk = 16;

// Largest value of x[0..kChunk): vectorised so that most of a vocabulary row, which cannot beat
// the current k-th best, is skipped sixteen values at a time.
__attribute__((target_clones("avx512f", "avx2", "default"))) float ChunkMax(const float* x) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int i = 0; i < kChunk; ++i) m = std::max(m, x[i]);
  return m;
}

}  // namespace

void TopK(const float* row, int n, int k, int* ids, float* values) {
  k = std::min(k, n);
  if (k <= 0) return;
  // ids/values hold the best `count` so far, sorted decreasingly.
  int count = 0;
  auto offer = [&](int i) {
    const float v = row[i];
    if (count == k && !(v > values[k - 1])) return;
    int pos = count < k ? count++ : k - 1;
    while (pos > 0 && values[pos - 1] < v) {
      values[pos] = values[pos - 1];
      ids[pos] = ids[pos - 1];
      --pos;
    }
    values[pos] = v;
    ids[pos] = i;
  };
  int i = 0;
  for (; i < k; ++i) offer(i);
  for (; i + kChunk <= n; i += kChunk) {
    if (ChunkMax(row + i) > values[k - 1]) {
      for (int j = i; j < i + kChunk; ++j) offer(j);
    }
  }
  for (; i < n; ++i) offer(i);
}

}  // namespace mtserve
