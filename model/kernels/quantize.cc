#include "model/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels/avx512_intrinsics.h"
#include "model/kernels/parallel_for.h"
#include "model/kernels/target_clones.h"

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

MTSERVE_TARGET_CLONES void DequantizeRow(const float* acc, int64_t cols, float row_scale,
                                         const float* col_offsets, const float* col_scales,
                                         const float* bias, bool accumulate, bool relu, float* y) {
  // Separate loops rather than branches inside one, so that each vectorises.
  if (accumulate) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] += (acc[c] - col_offsets[c]) * row_scale * col_scales[c] + (bias ? bias[c] : 0.f);
    }
  } else if (bias != nullptr) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = (acc[c] - col_offsets[c]) * row_scale * col_scales[c] + bias[c];
    }
  } else {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = (acc[c] - col_offsets[c]) * row_scale * col_scales[c];
    }
  }
  if (relu) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) y[c] = y[c] > 0.f ? y[c] : 0.f;
  }
}

// A row's scale from its largest magnitude.
inline float ScaleOf(float max) { return max > 0.f ? max / kInt8Max : 1.f; }

template <typename Out, typename QuantizeRowFn>
void Quantize(const float* x, int64_t rows, int64_t cols, int64_t stride, Out* q, float* scales,
              QuantizeRowFn quantize_row) {
  ParallelFor(rows, rows * cols >= kMinParallelElements, [&](int64_t r) {
    const float scale = ScaleOf(RowMaxAbs(x + r * stride, cols));
    scales[r] = scale;
    quantize_row(x + r * stride, cols, 1.f / scale, q + r * cols);
  });
}

#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
// QuantizeRowShifted with its row's scale, in AVX-512: the largest magnitude 16 lanes at a time,
// then each value converted under the default rounding (to nearest, ties to even, as
// std::nearbyint), raised to -127 and narrowed with saturation to 127 in one instruction, where
// the compiled loop packs and permutes. The same bytes and scale as the portable code (tested).
__attribute__((target("avx512f"))) float QuantizeRowShiftedAvx512(const float* x, int64_t cols,
                                                                  uint8_t* q) {
  __m512 max16 = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16)
    max16 = _mm512_max_ps(max16, _mm512_abs_ps(_mm512_loadu_ps(x + c)));
  const float scale = ScaleOf(std::max(_mm512_reduce_max_ps(max16), RowMaxAbs(x + c, cols - c)));
  const float inverse_scale = 1.f / scale;
  const __m512 inverse16 = _mm512_set1_ps(inverse_scale);
  const __m512i lowest = _mm512_set1_epi32(-static_cast<int32_t>(kInt8Max));
  const __m128i shift = _mm_set1_epi8(static_cast<char>(0x80));  // + 128, modulo 256.
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m512i v = _mm512_max_epi32(
        _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + c), inverse16)), lowest);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + c),
                     _mm_xor_si128(_mm512_cvtsepi32_epi8(v), shift));
  }
  QuantizeRowShifted(x + c, cols - c, inverse_scale, q + c);  // The last few.
  return scale;
}
#endif

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
#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
  if (CpuHasAvx512()) {
    ParallelFor(rows, rows * cols >= kMinParallelElements, [&](int64_t r) {
      scales[r] = QuantizeRowShiftedAvx512(x + r * stride, cols, q + r * cols);
    });
    return;
  }
#endif
  Quantize(x, rows, cols, stride, q, scales, QuantizeRowShifted);
}

void DequantizeRows(const float* acc, int64_t acc_stride, int64_t rows, int64_t cols,
                    const float* row_scales, const float* col_offsets, const float* col_scales,
                    const float* bias, bool accumulate, bool relu, float* y, int64_t y_stride) {
  ParallelFor(rows, rows * cols >= kMinParallelElements, [&](int64_t r) {
    // When acc is y, each element is read before it is written, in the same iteration.
    DequantizeRow(acc + r * acc_stride, cols, row_scales[r], col_offsets, col_scales, bias,
                  accumulate, relu, y + r * y_stride);
  });
}

}  // namespace mtserve
