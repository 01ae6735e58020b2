// Conversions around the reduced-precision matmuls of Linear (ops/linear.h): float32 rows to
// bfloat16 or to int8 with one scale per row, and int8 products (summed exactly by the matmul) back
// to float32. Plain vectorised loops, compiled for AVX-512, AVX2 and baseline x86-64 and picked at
// run time; they run over the rows in parallel on the calling thread's OpenMP team when the rows
// are many.
#ifndef MTSERVE_MODEL_KERNELS_QUANTIZE_H_
#define MTSERVE_MODEL_KERNELS_QUANTIZE_H_

#include <cstdint>

namespace mtserve {

// The largest magnitude an int8 value takes here: symmetric, so -128 is never used.
constexpr float kInt8Max = 127.f;

// out[r, c] = x[r * stride + c] rounded to the nearest bfloat16 (ties to even), dense.
void ToBFloat16(const float* x, int64_t rows, int64_t cols, int64_t stride, uint16_t* out);

// Symmetric quantisation of each row: scales[r] = max_c |x[r, c]| / 127 (1 for a row of zeros)
// and q[r, c] = x[r, c] / scales[r] rounded to the nearest integer (ties to even), so that
// |x - q * scale| <= scale / 2. q is dense [rows, cols]; x has row stride `stride`.
void QuantizeRows(const float* x, int64_t rows, int64_t cols, int64_t stride, int8_t* q,
                  float* scales);

// The same, stored as q + 128 in unsigned bytes: VNNI multiplies unsigned by signed bytes, and
// oneDNN given signed inputs adds a correction that makes packing weights slow (its weight
// reorder for signed inputs has no fast kernel: 0.25 s for a 512 x 54,688 matrix, 8x the
// unsigned one). Linear subtracts 128 x each weight column's sum instead. On AVX-512 CPUs a kernel
// in intrinsics computes it (the same bytes and scales).
void QuantizeRowsShifted(const float* x, int64_t rows, int64_t cols, int64_t stride, uint8_t* q,
                         float* scales);

// y[r, c] = (acc[r, c] - col_offsets[c]) * row_scales[r] * col_scales[c] + bias[c] (bias may be
// null), plus the value y held on entry when `accumulate`, then max(0, .) when `relu`. acc, the
// integer sums of the matmul as floats (exact below 2^24, within 2^-24 relative above), may be y
// itself (then with the same stride); col_offsets removes what shifted inputs added (128 x the
// column's weight sum). Rows of acc are acc_stride floats apart, rows of y y_stride (both at least
// cols).
void DequantizeRows(const float* acc, int64_t acc_stride, int64_t rows, int64_t cols,
                    const float* row_scales, const float* col_offsets, const float* col_scales,
                    const float* bias, bool accumulate, bool relu, float* y, int64_t y_stride);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_QUANTIZE_H_
