#include "model/kernels/layer_norm_rows.h"

#include <cmath>

#include "model/kernels/parallel_for.h"
#include "model/kernels/target_clones.h"

namespace mtserve {
namespace {

// Rows worth sharing among threads: about as many floats as a thread normalises in a few
// microseconds.
constexpr int64_t kParallelFloats = 1 << 15;

MTSERVE_TARGET_CLONES void LayerNormRow(float* x, int64_t dim, const float* gamma,
                                        const float* beta, float epsilon) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < dim; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(dim);
  // About the mean, not E[x^2] - mean^2: no cancellation when the mean is large.
  float squares = 0.f;
#pragma omp simd reduction(+ : squares)
  for (int64_t i = 0; i < dim; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const float inverse = 1.f / std::sqrt(squares / static_cast<float>(dim) + epsilon);
#pragma omp simd
  for (int64_t i = 0; i < dim; ++i) x[i] = (x[i] - mean) * inverse * gamma[i] + beta[i];
}

}  // namespace

void LayerNormRows(float* x, int64_t rows, int64_t dim, const float* gamma, const float* beta,
                   float epsilon) {
  ParallelFor(rows, rows * dim >= kParallelFloats,
              [&](int64_t r) { LayerNormRow(x + r * dim, dim, gamma, beta, epsilon); });
}

}  // namespace mtserve
