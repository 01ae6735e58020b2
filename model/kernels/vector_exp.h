// exp(x) for x <= 0 in branch-free float operations that vectorise: Cephes' expf, within 2 ulp.
// ExpNonPositive is plain C++ for loops under `#pragma omp simd` (compiled for each target of
// MTSERVE_TARGET_CLONES); Exp512 is the same steps on 16 lanes of AVX-512, for kernels written in
// intrinsics. SoftmaxInPlace: a row's softmax with it. The log-softmax and the one-query attention
// share them. (The encoder's self-attention keeps std::exp: with this exp there, the Multi30k
// de-en list's int8 BLEU fell 0.203 below the whole vocabulary's, past the 0.2 its test allows.)
#ifndef MTSERVE_MODEL_KERNELS_VECTOR_EXP_H_
#define MTSERVE_MODEL_KERNELS_VECTOR_EXP_H_

#include <algorithm>
#include <bit>
#include <cstdint>

#include "model/kernels/avx512_intrinsics.h"

namespace mtserve {
namespace vector_exp {

// x = n ln 2 + r with |r| <= ln 2 / 2, a degree-6 polynomial in r, times 2^n. 0 below kExpMin,
// where exp leaves float's normal range.
constexpr float kExpMin = -87.3f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

}  // namespace vector_exp

// exp(x) for x <= 0 (and NaN for NaN). Rounds n by adding 1.5 * 2^23 and builds 2^n from its
// exponent bits, so that it has no branch and no libm call.
[[gnu::always_inline]] inline float ExpNonPositive(float x) {
  using namespace vector_exp;
  constexpr float kRound = 12582912.f;
  const float c = std::max(x, kExpMin);
  const float n = (c * kLog2e + kRound) - kRound;
  const float r = (c - n * kLn2Hi) - n * kLn2Lo;
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = p * r + kExpPoly[i];
  p = p * r * r + r + 1.f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return x < kExpMin ? 0.f : p * scale;
}

// x[0, n) (n >= 1) to their softmax in place, stably: exp(x - max x) / the sum of those. Vector
// loops, compiled for the caller's target and floating-point flags.
[[gnu::always_inline]] inline void SoftmaxInPlace(float* x, int n) {
  float max = x[0];
#pragma omp simd reduction(max : max)
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) {
    x[i] = ExpNonPositive(x[i] - max);
    sum += x[i];
  }
  const float inverse_sum = 1.f / sum;
#pragma omp simd
  for (int i = 0; i < n; ++i) x[i] *= inverse_sum;
}

#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
// ExpNonPositive on 16 lanes (rounding and 2^n by the AVX-512 instructions for them).
__attribute__((target("avx512f"))) inline __m512 Exp512(__m512 x) {
  using namespace vector_exp;
  const __m512 c = _mm512_max_ps(x, _mm512_set1_ps(kExpMin));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), c);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  const __mmask16 in_range = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpMin), _CMP_GE_OQ);
  return _mm512_maskz_mov_ps(in_range, _mm512_scalef_ps(p, n));
}
#endif

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_VECTOR_EXP_H_
