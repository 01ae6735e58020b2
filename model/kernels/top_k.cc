#include "model/kernels/top_k.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/kernels/target_clones.h"

namespace mtserve {
namespace {

constexpr int kChunk = 16;

// Up to this k, candidates are kept sorted as they come: for the few candidates beam search and
// small-k sampling want, chunk skipping makes that the fastest way. Each insertion costs O(k),
// though, so for large k (sampling from much of a vocabulary) selection, linear in n, wins: on
// rows of 7,708 and 58,101 values the two cost the same near k = 256 (0.1 and 0.2-0.55 ms); at
// k = 7,708 insertion took 10 ms and selection 0.6 ms.
constexpr int kMaxInsertionK = 256;

// Largest value of x[0..kChunk): vectorised so that most of a vocabulary row, which cannot beat
// the current k-th best, is skipped sixteen values at a time.
MTSERVE_TARGET_CLONES float ChunkMax(const float* x) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int i = 0; i < kChunk; ++i) m = std::max(m, x[i]);
  return m;
}

void TopKByInsertion(const float* row, int n, int k, int* ids, float* values) {
  TopKInsertion best{k, ids, values};
  auto offer = [&](int i) { best.Offer(row, i); };
  int i = 0;
  for (; i < k; ++i) offer(i);
  for (; i + kChunk <= n; i += kChunk) {
    if (ChunkMax(row + i) > values[k - 1]) {
      for (int j = i; j < i + kChunk; ++j) offer(j);
    }
  }
  for (; i < n; ++i) offer(i);
}

// Whether `a` ranks before `b`: larger first, NaN (which a row should never hold) last.
bool Better(float a, float b) { return a > b || (std::isnan(b) && !std::isnan(a)); }

// O(n) to find the k-th best value, O(k log k) to order the k best.
void TopKBySelection(const float* row, int n, int k, int* ids, float* values) {
  thread_local std::vector<float> scratch;
  thread_local std::vector<int> chosen;
  scratch.assign(row, row + n);
  std::nth_element(scratch.begin(), scratch.begin() + (k - 1), scratch.end(), Better);
  const float threshold = scratch[k - 1];
  chosen.clear();
  for (int i = 0; i < n; ++i) {
    if (Better(row[i], threshold)) chosen.push_back(i);
  }
  // Values equal to the threshold fill the rest, lowest index first.
  for (int i = 0; i < n && static_cast<int>(chosen.size()) < k; ++i) {
    if (!Better(row[i], threshold) && !Better(threshold, row[i])) chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end(), [row](int a, int b) {
    return Better(row[a], row[b]) || (!Better(row[b], row[a]) && a < b);
  });
  for (int i = 0; i < k; ++i) {
    ids[i] = chosen[i];
    values[i] = row[chosen[i]];
  }
}

}  // namespace

void TopK(const float* row, int n, int k, int* ids, float* values) {
  k = std::min(k, n);
  if (k <= 0) return;
  if (k <= kMaxInsertionK) {
    TopKByInsertion(row, n, k, ids, values);
  } else {
    TopKBySelection(row, n, k, ids, values);
  }
}

}  // namespace mtserve
