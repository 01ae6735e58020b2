#include "model/kernels/quantize.h"

#include <cmath>
#include <cstring>

#include "model/kernels/parallel_for.h"
#include "model/kernels/target_clones.h"
#include "model/kernels/vector_exp.h"

namespace mtserve {
namespace {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

MTSERVE_TARGET_CLONES void RowToBFloat16(const float* x, int64_t cols, uint16_t* out) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) {
    uint32_t bits;
    std::memcpy(&bits, &x[c], sizeof(bits));
    // Round to nearest, ties to even: add just under half of the dropped part's unit, plus the
    // kept part's lowest bit. (Weights are finite, and so are activations of a finite model.)
    bits += 0x7fffu + ((bits >> 16) & 1u);
    out[c] = static_cast<uint16_t>(bits >> 16);
  }
}

MTSERVE_TARGET_CLONES float RowMaxAbs(const float* x, int64_t cols) {
  float m = 0.f;
#pragma omp simd reduction(max : m)
  for (int64_t c = 0; c < cols; ++c) {
    // Comparisons, not std::fmax: its NaN rules keep it a libm call that does not vectorise.
    const float a = std::fabs(x[c]);
    m = a > m ? a : m;
  }
  return m;
}

// x * inverse_scale rounded to the nearest integer in [-127, 127]. (|x| <= max, so the product is
// within 127 up to its own rounding: the clamp is for that.) Clamped as an integer: min and max
// instructions, where comparing floats took compares and blends.
inline __attribute__((always_inline)) int32_t QuantizeValue(float x, float inverse_scale) {
  constexpr int32_t kMax = static_cast<int32_t>(kInt8Max);
  const int32_t v = static_cast<int32_t>(std::nearbyint(x * inverse_scale));
  return v > kMax ? kMax : v < -kMax ? -kMax : v;
}

MTSERVE_TARGET_CLONES void QuantizeRow(const float* x, int64_t cols, float inverse_scale,
                                       int8_t* q) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) q[c] = static_cast<int8_t>(QuantizeValue(x[c], inverse_scale));
}

MTSERVE_TARGET_CLONES void QuantizeRowShifted(const float* x, int64_t cols, float inverse_scale,
                                              uint8_t* q) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) {
    q[c] = static_cast<uint8_t>(QuantizeValue(x[c], inverse_scale) + 128);
  }
}

// v * sigmoid(v), as (v >= 0 ? v : v e) / (1 + e) with e = exp(-|v|) in (0, 1]: no overflow, and
// no inf * 0 where e underflows. (v e is computed for every v and selected after: a product under
// a condition keeps the loop from vectorising on AVX2, where it cannot be masked.)
inline __attribute__((always_inline)) float Swish(float v) {
  const float e = ExpNonPositive(-std::fabs(v));
  const float ve = v * e;
  const float numerator = v >= 0.f ? v : (e > 0.f ? ve : 0.f);
  return numerator / (1.f + e);
}

template <RowActivation kActivation>
inline __attribute__((always_inline)) float Activate(float v) {
  if constexpr (kActivation == RowActivation::kRelu) return v > 0.f ? v : 0.f;
  if constexpr (kActivation == RowActivation::kSwish) return Swish(v);
  return v;
}

// One row, one pass: each form a loop of its own rather than branches inside one, so that each
// vectorises.
template <RowActivation kActivation>
inline __attribute__((always_inline)) void DequantizeRowWith(
    const float* acc, int64_t cols, float row_scale, const float* col_offsets,
    const float* col_scales, const float* bias, bool accumulate, float* y) {
  if (accumulate) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = Activate<kActivation>(
          y[c] + ((acc[c] - col_offsets[c]) * row_scale * col_scales[c] + (bias ? bias[c] : 0.f)));
    }
  } else if (bias != nullptr) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = Activate<kActivation>((acc[c] - col_offsets[c]) * row_scale * col_scales[c] + bias[c]);
    }
  } else {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = Activate<kActivation>((acc[c] - col_offsets[c]) * row_scale * col_scales[c]);
    }
  }
}

#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
// Swish over y[0, cols) in place, 16 lanes at a time (the tail masked, so that every column gets
// the same instructions): Swish's steps with Exp512, whose fused multiply-adds this file's
// -ffp-contract=off would take from the portable loop (a third slower than oneDNN's swish).
__attribute__((target("avx512f"))) void SwishRowAvx512(float* y, int64_t cols) {
  const __m512i sign = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m512 zero = _mm512_setzero_ps();
  const __m512 one = _mm512_set1_ps(1.f);
  for (int64_t c = 0; c < cols; c += 16) {
    const __mmask16 lanes =
        cols - c >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (cols - c)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, y + c);
    // -|v|: the sign bit set.
    const __m512 e = Exp512(_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sign)));
    // v where v >= 0, else v e (0 where e is).
    const __mmask16 negative = _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ);
    const __mmask16 underflow = _mm512_cmp_ps_mask(e, zero, _CMP_EQ_OQ);
    __m512 numerator = _mm512_mask_mul_ps(v, negative, v, e);
    numerator = _mm512_mask_mov_ps(numerator, negative & underflow, zero);
    _mm512_mask_storeu_ps(y + c, lanes, _mm512_div_ps(numerator, _mm512_add_ps(one, e)));
  }
}
#endif

MTSERVE_TARGET_CLONES void DequantizeRow(const float* acc, int64_t cols, float row_scale,
                                         const float* col_offsets, const float* col_scales,
                                         const float* bias, bool accumulate,
                                         RowActivation activation, float* y) {
  switch (activation) {
    case RowActivation::kNone:
      DequantizeRowWith<RowActivation::kNone>(acc, cols, row_scale, col_offsets, col_scales, bias,
                                              accumulate, y);
      break;
    case RowActivation::kRelu:
      DequantizeRowWith<RowActivation::kRelu>(acc, cols, row_scale, col_offsets, col_scales, bias,
                                              accumulate, y);
      break;
    case RowActivation::kSwish:
#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
      if (CpuHasAvx512()) {
        DequantizeRowWith<RowActivation::kNone>(acc, cols, row_scale, col_offsets, col_scales, bias,
                                                accumulate, y);
        SwishRowAvx512(y, cols);
        break;
      }
#endif
      DequantizeRowWith<RowActivation::kSwish>(acc, cols, row_scale, col_offsets, col_scales, bias,
                                               accumulate, y);
      break;
  }
}

template <typename Out, typename QuantizeRowFn>
void Quantize(const float* x, int64_t rows, int64_t cols, int64_t stride, Out* q, float* scales,
              QuantizeRowFn quantize_row) {
  ParallelFor(rows, rows * cols >= kMinParallelElements, [&](int64_t r) {
    const float max = RowMaxAbs(x + r * stride, cols);
    const float scale = max > 0.f ? max / kInt8Max : 1.f;
    scales[r] = scale;
    quantize_row(x + r * stride, cols, 1.f / scale, q + r * cols);
  });
}

}  // namespace

void ToBFloat16(const float* x, int64_t rows, int64_t cols, int64_t stride, uint16_t* out) {
  ParallelFor(rows, rows * cols >= kMinParallelElements,
              [&](int64_t r) { RowToBFloat16(x + r * stride, cols, out + r * cols); });
}

void QuantizeRows(const float* x, int64_t rows, int64_t cols, int64_t stride, int8_t* q,
                  float* scales) {
  Quantize(x, rows, cols, stride, q, scales, QuantizeRow);
}

void QuantizeRowsShifted(const float* x, int64_t rows, int64_t cols, int64_t stride, uint8_t* q,
                         float* scales) {
  Quantize(x, rows, cols, stride, q, scales, QuantizeRowShifted);
}

void DequantizeRows(const float* acc, int64_t rows, int64_t cols, const float* row_scales,
                    const float* col_offsets, const float* col_scales, const float* bias,
                    bool accumulate, RowActivation activation, float* y) {
  ParallelFor(rows, rows * cols >= kMinParallelElements, [&](int64_t r) {
    // When acc is y, each element is read before it is written, in the same iteration.
    DequantizeRow(acc + r * cols, cols, row_scales[r], col_offsets, col_scales, bias, accumulate,
                  activation, y + r * cols);
  });
}

bool DequantizeRowsSwishIsFast() {
#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
  return CpuHasAvx512();
#else
  return false;
#endif
}

}  // namespace mtserve
