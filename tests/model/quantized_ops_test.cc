// Linear in bfloat16 and int8 (model/ops/linear.h), and the conversion kernels under it
// (model/kernels/quantize.h), against references written here from the definitions in those
// headers: double-precision loops, no oneDNN, no code shared with model/.
//
// Every tolerance is derived from the arithmetic, not tuned to what the code gives:
//
// - Against the float math (the naive float32 reference, NaiveLinear): the error the rounding of
//   the operands can make. bfloat16 keeps 8 significant bits, so rounding to nearest moves an
//   operand by at most u = 2^-8 relative, and a product x̃·w̃ by at most (1+u)^2 - 1 = 2u + u^2:
//   |error| <= sum_k |x_k||w_k| (2^-7 + 2^-16). int8: with x = sx·qx + ex and w = sw·qw + ew,
//   |ex| <= hx and |ew| <= hw (half a step, see kHalfStep), x·w - sx·qx·sw·qw = x·ew + w·ex -
//   ex·ew, so |error| <= sum_k (|x_k| hw + |w_k| hx + hx hw).
// - Against the same math on the operands as the op rounds or quantises them (emulated here from
//   the headers' definitions): only float32 arithmetic is left, a far tighter bound that catches
//   what the first one is too loose to (a dropped bias, a missed tail element).
//
// Both add the float32 rounding of the sums and of the epilogue (kF32Eps terms, counted where
// used), and the activation carries the error with its Lipschitz constant: ReLU 1; swish
// x·σ(x) has derivative σ(x)(1 + x(1 - σ(x))), largest 1.0998 at x = 2.3994; GELU x·Φ(x) has
// derivative Φ(x) + x·φ(x), largest 1.1289 at x = √2; so 1.1 and 1.13. oneDNN computes exp and
// erf with polynomial approximations accurate to a few ulps: kEltwiseUlps of the larger of |v| and
// 1 covers them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "model/compute_type.h"
#include "model/kernels/quantize.h"
#include "model/ops/compute_context.h"
#include "model/ops/linear.h"
#include "tests/test_lib/naive_ops.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::mtserve::testing::EpilogueName;
using ::mtserve::testing::NaiveActivation;
using ::mtserve::testing::NaiveLinear;
using ::mtserve::testing::RandomVector;

constexpr double kF32Eps = 0x1p-24;  // Unit roundoff of float32.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Relative rounding of a product of two bfloat16-rounded operands (see the file comment).
constexpr double kBFloat16ProductRounding = 0x1p-7 + 0x1p-16;
// Half a quantisation step, in steps: the kernel computes x * (1/s) in float32, two roundings of at
// most 2^-24 relative each on a quotient of at most 127 (1 + 2^-24) in magnitude, so the value it
// rounds to an integer is within 127 (1 + 2^-24)(2^-23 + 2^-48) < 2^-16 of x/s, and the integer
// within 0.5 + 2^-16 of x/s.
constexpr double kHalfStep = 0.5 + 0x1p-16;
// Where x/s is within this of a half-integer, the kernel and an exact division may round to
// different integers (2^-16 above, and our scale, max/127 in double, differs from the kernel's
// float32 one by 2^-24 relative: 127 * 2^-24 < 2^-16 more).
constexpr double kTieWindow = 0x1p-15;
constexpr double kEltwiseUlps = 16 * kF32Eps;

const std::vector<Epilogue> kEpilogues = {Epilogue::kNone, Epilogue::kRelu, Epilogue::kSwish,
                                          Epilogue::kGelu, Epilogue::kAddToOutput};

double Lipschitz(Epilogue e) {
  switch (e) {
    case Epilogue::kSwish:
      return 1.1;
    case Epilogue::kGelu:
      return 1.13;
    default:
      return 1.0;
  }
}

// x rounded to the nearest number with 8 significant bits (bfloat16; normal numbers), ties to even:
// x / ulp is exact in double and nearbyint rounds ties to even.
float RoundToBFloat16(float x) {
  int exponent;
  std::frexp(x, &exponent);  // x = m 2^exponent, 0.5 <= |m| < 1.
  const double ulp = std::ldexp(1.0, exponent - 8);
  return static_cast<float>(std::nearbyint(x / ulp) * ulp);
}

float FromBFloat16Bits(uint16_t bits) {
  const uint32_t widened = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

// One row quantised as QuantizeRows's header defines it, in double: scale max|x| / 127 (1 for
// zeros), q = x / scale rounded to nearest; `ambiguous[k]` where x/scale is so near a tie that the
// kernel's float32 quotient may round the other way.
struct QuantizedRow {
  double scale;
  std::vector<double> q;
  std::vector<bool> ambiguous;
};

QuantizedRow QuantizeRowNaive(const float* x, int n) {
  double max = 0;
  for (int k = 0; k < n; ++k) max = std::max(max, std::abs(double{x[k]}));
  QuantizedRow row{max > 0 ? max / 127 : 1.0, std::vector<double>(n), std::vector<bool>(n)};
  for (int k = 0; k < n; ++k) {
    const double t = x[k] / row.scale;
    row.q[k] = std::nearbyint(t);
    row.ambiguous[k] = std::abs(std::abs(t - std::trunc(t)) - 0.5) < kTieWindow;
  }
  return row;
}

// ---------------------------------------------------------------------------------------------
// Kernels.

TEST(ToBFloat16Test, RoundsToNearestEvenAndKeepsRepresentableValues) {
  // Every finite bfloat16 comes back as itself.
  std::vector<float> exact;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7f80) == 0x7f80) continue;  // Infinities and NaNs.
    exact.push_back(FromBFloat16Bits(static_cast<uint16_t>(bits)));
  }
  std::vector<uint16_t> out(exact.size());
  ToBFloat16(exact.data(), 1, exact.size(), exact.size(), out.data());
  for (size_t i = 0; i < exact.size(); ++i) {
    ASSERT_EQ(FromBFloat16Bits(out[i]), exact[i]) << "bfloat16 value " << exact[i];
  }

  // Halfway cases go to the even neighbour; just past halfway, away. bfloat16's step at 1 is 2^-7.
  const float ties[] = {1 + 0x1p-8f,        1 + 3 * 0x1p-8f,          -(1 + 0x1p-8f),
                        -(1 + 3 * 0x1p-8f), 1 + 0x1p-8f + 0x1p-20f,   256 + 1.f,
                        256 + 3.f,          0x1p-100f * (1 + 0x1p-8f)};
  const float expected[] = {1.f,         1 + 0x1p-6f, -1.f,  -(1 + 0x1p-6f),
                            1 + 0x1p-7f, 256.f,       260.f, 0x1p-100f};
  uint16_t rounded[std::size(ties)];
  ToBFloat16(ties, 1, std::size(ties), std::size(ties), rounded);
  for (size_t i = 0; i < std::size(ties); ++i) {
    EXPECT_EQ(FromBFloat16Bits(rounded[i]), expected[i]) << "input " << ties[i];
  }
}

// Random rows, strided, few (one thread) and many (the kernel's parallel path): each the nearest
// bfloat16, and within half a step (2^-8 of the value: the step is 2^-7 of its binade's power of
// two) of the input.
TEST(ToBFloat16Test, RandomStridedRowsRoundToNearest) {
  std::mt19937 rng(11);
  for (auto [rows, cols] : {std::pair{3, 5}, {257, 130}}) {
    const int stride = cols + 3;
    std::vector<float> x = RandomVector(rng, rows * stride, -100.f, 100.f);
    for (int r = 0; r < rows; ++r) {
      for (int c = cols; c < stride; ++c) x[r * stride + c] = kNaN;  // Must not be read.
    }
    std::vector<uint16_t> out(rows * cols);
    ToBFloat16(x.data(), rows, cols, stride, out.data());
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const float v = x[r * stride + c];
        const float b = FromBFloat16Bits(out[r * cols + c]);
        ASSERT_EQ(b, RoundToBFloat16(v)) << "row " << r << " col " << c << " value " << v;
        ASSERT_LE(std::abs(double{b} - v), 0x1p-8 * std::abs(v));
      }
    }
  }
}

// Checks QuantizeRows's contract on `x` ([rows, cols], row stride `stride`).
void CheckQuantizeRows(const std::vector<float>& x, int rows, int cols, int stride) {
  std::vector<int8_t> q(rows * cols);
  std::vector<float> scales(rows);
  QuantizeRows(x.data(), rows, cols, stride, q.data(), scales.data());
  for (int r = 0; r < rows; ++r) {
    SCOPED_TRACE(::testing::Message() << "row " << r << " of " << rows << "x" << cols);
    const float* row = x.data() + r * stride;
    int argmax = 0;
    for (int c = 0; c < cols; ++c) {
      if (std::abs(row[c]) > std::abs(row[argmax])) argmax = c;
    }
    const double max = std::abs(row[argmax]);
    const double s = scales[r];
    if (max == 0) {
      EXPECT_EQ(s, 1.0);
    } else {
      // max / 127 rounded once to float32.
      EXPECT_LE(std::abs(s - max / 127), kF32Eps * max / 127);
      EXPECT_EQ(q[r * cols + argmax], row[argmax] > 0 ? 127 : -127);
    }
    for (int c = 0; c < cols; ++c) {
      const int v = q[r * cols + c];
      ASSERT_GE(v, -127) << "col " << c;  // Symmetric: -128 is never used.
      // q·s is exact in double (8 by 24 significant bits).
      ASSERT_LE(std::abs(row[c] - v * s), kHalfStep * s) << "col " << c << " value " << row[c];
    }
  }
}

TEST(QuantizeRowsTest, EachValueWithinHalfAStepAndTheMaximumAt127) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> exponent(-6, 6);
  for (auto [rows, cols] : {std::pair{1, 1}, {3, 5}, {17, 100}, {257, 130}}) {
    const int stride = cols + 7;
    std::vector<float> x = RandomVector(rng, rows * stride);
    for (int r = 0; r < rows; ++r) {
      // Rows of very different magnitudes: each its own scale.
      const float magnitude = static_cast<float>(std::pow(10.0, exponent(rng)));
      for (int c = 0; c < stride; ++c)
        x[r * stride + c] = c < cols ? x[r * stride + c] * magnitude : kNaN;
    }
    CheckQuantizeRows(x, rows, cols, stride);
  }
}

TEST(QuantizeRowsTest, ZeroRowsNegativeMaximaAndTiesToEven) {
  // Row 0: zeros. Row 1: the maximum is negative. Row 2: max 127 gives scale 1 exactly, so the
  // halves are ties, rounded to even.
  const int cols = 8;
  const std::vector<float> x = {0,   0,   0,   0,    0,    0,   0,   0,   //
                                1,   -10, 2.5, 3,    -0.5, 0.5, 7,   -1,  //
                                127, 2.5, 3.5, -2.5, -0.5, 0.5, 1.5, -3.5};
  std::vector<int8_t> q(3 * cols);
  std::vector<float> scales(3);
  QuantizeRows(x.data(), 3, cols, cols, q.data(), scales.data());
  EXPECT_EQ(scales[0], 1.f);
  EXPECT_EQ(scales[2], 1.f);
  for (int c = 0; c < cols; ++c) EXPECT_EQ(q[c], 0) << "col " << c;
  EXPECT_EQ(q[cols + 1], -127);
  const int8_t ties[] = {127, 2, 4, -2, 0, 0, 2, -4};
  for (int c = 0; c < cols; ++c) EXPECT_EQ(q[2 * cols + c], ties[c]) << "col " << c;
  CheckQuantizeRows(x, 3, cols, cols);
}

// The shifted form Linear feeds to VNNI is the same quantisation plus 128, with the same scales
// (on AVX-512 CPUs computed by a kernel of its own, the unshifted one by the compiled loops): for
// rows shorter than, as long as and longer than its 16 lanes, a row of zeros, and a row of ties.
TEST(QuantizeRowsTest, ShiftedIsTheSameValuesPlus128) {
  std::mt19937 rng(17);
  for (int cols : {1, 5, 16, 37, 256, 300}) {
    SCOPED_TRACE(::testing::Message() << cols << " columns");
    const int rows = 5, stride = cols + 4;
    std::vector<float> x = RandomVector(rng, rows * stride, -3.f, 3.f);
    for (int c = 0; c < cols; ++c) {
      x[c] = 0.f;
      // Row 1: max 127, so scale 1 and halves that are ties.
      x[stride + c] = c == 0 ? 127.f : static_cast<float>(c % 9) - 4.5f;
    }
    std::vector<int8_t> q(rows * cols);
    std::vector<uint8_t> shifted(rows * cols);
    std::vector<float> scales(rows), shifted_scales(rows);
    QuantizeRows(x.data(), rows, cols, stride, q.data(), scales.data());
    QuantizeRowsShifted(x.data(), rows, cols, stride, shifted.data(), shifted_scales.data());
    EXPECT_EQ(scales, shifted_scales);
    for (int i = 0; i < rows * cols; ++i) ASSERT_EQ(int{shifted[i]}, q[i] + 128) << i;
  }
}

// y = (acc - column offset) · row scale · column scale + bias (+ y on entry), then ReLU: the
// integer sums and offsets here are below 2^24, so their difference is exact, and four float32
// roundings follow at most (two products, two sums), each 2^-24 of the magnitudes it adds.
TEST(DequantizeRowsTest, ScalesAddsBiasAndResidualAndAppliesRelu) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> sum(-(1 << 22), 1 << 22);
  for (auto [rows, cols] : {std::pair{1, 1}, {3, 7}, {257, 130}}) {
    std::vector<float> acc(rows * cols);
    for (float& a : acc) a = static_cast<float>(sum(rng));
    const std::vector<float> row_scales = RandomVector(rng, rows, 1e-4f, 1e-2f);
    const std::vector<float> col_scales = RandomVector(rng, cols, 1e-4f, 1e-2f);
    // 128 x a column's weight sum, as Linear passes them.
    std::uniform_int_distribution<int> weight_sum(-(1 << 15), 1 << 15);
    std::vector<float> col_offsets(cols);
    for (float& o : col_offsets) o = 128.f * static_cast<float>(weight_sum(rng));
    const std::vector<float> bias = RandomVector(rng, cols, -1.f, 1.f);
    const std::vector<float> y_in = RandomVector(rng, rows * cols, -2.f, 2.f);
    for (bool with_bias : {false, true}) {
      for (bool accumulate : {false, true}) {
        for (bool relu : {false, true}) {
          for (bool in_place : {false, true}) {
            SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " bias=" << with_bias
                                              << " accumulate=" << accumulate << " relu=" << relu
                                              << " in_place=" << in_place);
            // In place, acc is y (then y cannot hold a residual: accumulate reads y).
            if (in_place && accumulate) continue;
            std::vector<float> y = in_place     ? acc
                                   : accumulate ? y_in
                                                : std::vector<float>(rows * cols, kNaN);
            const float* a = in_place ? y.data() : acc.data();
            DequantizeRows(a, cols, rows, cols, row_scales.data(), col_offsets.data(),
                           col_scales.data(), with_bias ? bias.data() : nullptr, accumulate, relu,
                           y.data(), cols);
            for (int r = 0; r < rows; ++r) {
              for (int c = 0; c < cols; ++c) {
                const int i = r * cols + c;
                const double p = (double{acc[i]} - col_offsets[c]) * row_scales[r] * col_scales[c];
                const double b = with_bias ? bias[c] : 0.0;
                const double residual = accumulate ? y_in[i] : 0.0;
                double v = p + b + residual;
                if (relu) v = std::max(v, 0.0);
                const double bound = 4 * kF32Eps * (std::abs(p) + std::abs(b) + std::abs(residual));
                ASSERT_LE(std::abs(y[i] - v), bound) << "row " << r << " col " << c;
              }
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Linear.

class QuantizedLinearTest : public ::testing::TestWithParam<ComputeType> {
 protected:
  void SetUp() override { MT_SKIP_IF_UNSUPPORTED(GetParam()); }
};

// The weight as the op computes with it, from the definitions: rounded to bfloat16, or quantised
// per output row. Also the half step of each weight row (int8; 0 for bfloat16) and its ambiguity.
struct EffectiveWeight {
  std::vector<float> w;
  std::vector<QuantizedRow> rows;  // int8 only.
};

EffectiveWeight EffectiveWeightOf(const std::vector<float>& w, int in, int out, ComputeType type) {
  EffectiveWeight e;
  e.w.resize(w.size());
  for (int o = 0; o < out; ++o) {
    if (type == ComputeType::kBFloat16) {
      for (int k = 0; k < in; ++k) e.w[o * in + k] = RoundToBFloat16(w[o * in + k]);
    } else {
      e.rows.push_back(QuantizeRowNaive(w.data() + o * in, in));
      for (int k = 0; k < in; ++k) {
        e.w[o * in + k] = static_cast<float>(e.rows[o].q[k] * e.rows[o].scale);
      }
    }
  }
  return e;
}

struct Worst {
  double float_math = 0;       // Largest error / bound against the float math.
  double emulated = 0;         // Against the emulated rounding.
  double emulated_no_tie = 0;  // The same where no operand is near a tie.
  double lowest = 0;           // The smallest and largest outputs seen.
  double highest = 0;
};

// Runs `linear` on random rows and checks every output against both bounds (file comment).
void CheckQuantizedLinear(ComputeContext& ctx, const Linear& linear, const std::vector<float>& w,
                          const EffectiveWeight& effective, const std::vector<float>& b,
                          int64_t rows, Epilogue epilogue, int64_t x_stride, std::mt19937& rng,
                          Worst& worst, float x_range = 1.f) {
  const int in = linear.in_features();
  const int out = linear.out_features();
  const ComputeType type = linear.compute_type();
  SCOPED_TRACE(::testing::Message() << ComputeTypeName(type) << " rows=" << rows << " in=" << in
                                    << " out=" << out << " bias=" << !b.empty() << " epilogue="
                                    << EpilogueName(epilogue) << " x_stride=" << x_stride);
  const int64_t stride = x_stride == 0 ? in : x_stride;
  std::vector<float> x(rows * stride, kNaN);  // Padding columns must not be read.
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = RandomVector(rng, in, -x_range, x_range);
    std::copy(row.begin(), row.end(), x.begin() + r * stride);
  }
  const bool add = epilogue == Epilogue::kAddToOutput;
  std::vector<float> y =
      add ? RandomVector(rng, rows * out, -2.f, 2.f) : std::vector<float>(rows * out, kNaN);
  const std::vector<float> y_in = y;

  // The input as the op computes with it.
  std::vector<float> x_effective(rows * in);
  std::vector<QuantizedRow> x_rows;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * stride;
    if (type == ComputeType::kBFloat16) {
      for (int k = 0; k < in; ++k) x_effective[r * in + k] = RoundToBFloat16(row[k]);
    } else {
      x_rows.push_back(QuantizeRowNaive(row, in));
      for (int k = 0; k < in; ++k) {
        x_effective[r * in + k] = static_cast<float>(x_rows[r].q[k] * x_rows[r].scale);
      }
    }
  }
  const std::vector<double> float_math =
      NaiveLinear(x, rows, stride, w, b, in, out, epilogue, y_in);
  const std::vector<double> emulated =
      NaiveLinear(x_effective, rows, in, effective.w, b, in, out, epilogue, y_in);

  linear.Forward(ctx, x.data(), rows, y.data(), epilogue, x_stride);

  const double lipschitz = Lipschitz(epilogue);
  for (int64_t r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      double sum_abs = 0;            // sum |x||w|
      double sum_abs_effective = 0;  // sum |x̃||w̃|
      double rounding = 0;           // Against the float math, before the activation.
      double ambiguity = 0;          // int8: near-ties the kernel may round the other way.
      for (int k = 0; k < in; ++k) {
        const double xk = std::abs(double{x[r * stride + k]});
        const double wk = std::abs(double{w[o * in + k]});
        sum_abs += xk * wk;
        sum_abs_effective +=
            std::abs(double{x_effective[r * in + k]}) * std::abs(double{effective.w[o * in + k]});
        if (type == ComputeType::kInt8) {
          const double hx = kHalfStep * x_rows[r].scale;
          const double hw = kHalfStep * effective.rows[o].scale;
          rounding += xk * hw + wk * hx + hx * hw;
          const double step = x_rows[r].scale * effective.rows[o].scale;
          if (x_rows[r].ambiguous[k]) ambiguity += step * (std::abs(effective.rows[o].q[k]) + 1);
          if (effective.rows[o].ambiguous[k]) ambiguity += step * (std::abs(x_rows[r].q[k]) + 1);
        }
      }
      if (type == ComputeType::kBFloat16) rounding = sum_abs * kBFloat16ProductRounding;
      const double others = (b.empty() ? 0.0 : std::abs(double{b[o]})) +
                            (add ? std::abs(double{y_in[r * out + o]}) : 0);
      // float32 arithmetic. bfloat16: oneDNN sums the (exact) products in float32 in an order of
      // its choosing, at most in - 1 roundings of the partial sums, then adds the bias and the
      // residual: in + 1. int8: the integer sum is exact (|sum| <= 127^2 * 100 < 2^24, exact as a
      // float too); the kernel's float32 scales differ from ours (max / 127 in double) by a
      // rounding each, our effective operands are rounded to float32 once each, and the kernel
      // rounds after each scale, the bias and the residual: 8.
      const double f32 = type == ComputeType::kBFloat16
                             ? (in + 1) * kF32Eps * (sum_abs_effective + others)
                             : 8 * kF32Eps * (sum_abs_effective + others);
      // Only swish and GELU run approximations; ReLU, sums and copies are exact.
      const bool approximated = epilogue == Epilogue::kSwish || epilogue == Epilogue::kGelu;
      const double eltwise =
          approximated ? kEltwiseUlps * std::max(1.0, std::abs(float_math[r * out + o]) + rounding)
                       : 0.0;
      const double actual = y[r * out + o];
      const double float_bound = lipschitz * (rounding + f32) + eltwise;
      const double emulated_bound = lipschitz * (ambiguity + f32) + eltwise;
      const double float_error = std::abs(actual - float_math[r * out + o]);
      const double emulated_error = std::abs(actual - emulated[r * out + o]);
      ASSERT_LE(float_error, float_bound) << "row " << r << " col " << o << ": " << actual
                                          << " vs float math " << float_math[r * out + o];
      ASSERT_LE(emulated_error, emulated_bound) << "row " << r << " col " << o << ": " << actual
                                                << " vs emulated " << emulated[r * out + o];
      worst.float_math = std::max(worst.float_math, float_error / float_bound);
      worst.lowest = std::min(worst.lowest, actual);
      worst.highest = std::max(worst.highest, actual);
      worst.emulated = std::max(worst.emulated, emulated_error / emulated_bound);
      if (ambiguity == 0) {
        worst.emulated_no_tie = std::max(worst.emulated_no_tie, emulated_error / emulated_bound);
      }
    }
  }
}

// Odd shapes (vector tails, blocking edges), 257 rows (two oneDNN calls: kMaxRows is 256), every
// epilogue, with and without bias, dense and strided input.
TEST_P(QuantizedLinearTest, WithinTheRoundingBoundOfTheFloatMathForEveryShapeAndEpilogue) {
  ASSERT_EQ(Linear::kMaxRows, 256);  // 257 rows below cross it.
  std::mt19937 rng(21);
  ComputeContext ctx(1);
  ctx.BindToCallingThread();
  Worst worst;
  for (int in : {5, 33, 100}) {
    for (int out : {7, 65, 130}) {
      const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
      const EffectiveWeight effective = EffectiveWeightOf(w, in, out, GetParam());
      for (bool bias : {false, true}) {
        const std::vector<float> b = bias ? RandomVector(rng, out) : std::vector<float>();
        const Linear linear(w, b, in, out, GetParam());
        ASSERT_EQ(linear.compute_type(), GetParam());
        for (int64_t rows : {1, 3, 17, 257}) {
          for (Epilogue e : kEpilogues) {
            // Strided input (a column slice, as the decoder's queries) once per shape and
            // epilogue, with the bias: what it changes is how the input is read.
            for (int64_t stride :
                 bias ? std::vector<int64_t>{0, in + 3} : std::vector<int64_t>{0}) {
              CheckQuantizedLinear(ctx, linear, w, effective, b, rows, e, stride, rng, worst);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  // How close the bounds came (for the record; the assertions above are the test).
  std::cout << ComputeTypeName(GetParam()) << ": largest error / bound " << worst.float_math
            << " against the float math, " << worst.emulated << " against the emulated rounding ("
            << worst.emulated_no_tie << " where no operand is near a tie)\n";
}

// Inputs up to ±100, so that the outputs before the activation reach hundreds of both signs:
// swish's and GELU's tails, where exp(-|v|) underflows, within the same bounds.
TEST_P(QuantizedLinearTest, LargeOutputsOfBothSignsThroughEveryActivation) {
  std::mt19937 rng(22);
  ComputeContext ctx(1);
  ctx.BindToCallingThread();
  Worst worst;
  const int in = 100;
  const int out = 130;
  const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
  const EffectiveWeight effective = EffectiveWeightOf(w, in, out, GetParam());
  const std::vector<float> b = RandomVector(rng, out);
  const Linear linear(w, b, in, out, GetParam());
  for (int64_t rows : {1, 17}) {
    for (Epilogue e : {Epilogue::kNone, Epilogue::kRelu, Epilogue::kSwish, Epilogue::kGelu}) {
      CheckQuantizedLinear(ctx, linear, w, effective, b, rows, e, 0, rng, worst,
                           /*x_range=*/100.f);
      if (HasFatalFailure()) return;
    }
  }
  // The identity's outputs (same inputs' distribution) show the range the activations met.
  EXPECT_LT(worst.lowest, -200);
  EXPECT_GT(worst.highest, 200);
}

// The weight row as the op computes with it: bfloat16, the rounded weight exactly; int8, q · scale
// with q an integer of at most 127 and within half a step of the weight.
TEST_P(QuantizedLinearTest, CopyWeightRowGivesTheWeightAsComputedWith) {
  std::mt19937 rng(22);
  for (auto [in, out] : {std::pair{5, 7}, {33, 65}, {100, 130}}) {
    const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
    const Linear linear(w, {}, in, out, GetParam());
    std::vector<float> row(in);
    for (int o = 0; o < out; ++o) {
      SCOPED_TRACE(::testing::Message() << in << "x" << out << " row " << o);
      linear.CopyWeightRow(o, row.data());
      const float* original = w.data() + o * in;
      double max = 0;
      for (int k = 0; k < in; ++k) max = std::max(max, std::abs(double{original[k]}));
      const double scale = max / 127;
      for (int k = 0; k < in; ++k) {
        switch (GetParam()) {
          case ComputeType::kFloat32:
            ASSERT_EQ(row[k], original[k]) << "col " << k;
            break;
          case ComputeType::kBFloat16:
            ASSERT_EQ(row[k], RoundToBFloat16(original[k])) << "col " << k;
            break;
          case ComputeType::kInt8: {
            // row[k] = q · s_f with s_f the float32 scale: within 2^-24 relative of q · scale
            // (the product's rounding) and 127 · 2^-24 · scale (s_f's) of an integer step.
            const double steps = row[k] / scale;
            EXPECT_LE(std::abs(steps - std::nearbyint(steps)), 128 * 0x1p-23) << "col " << k;
            EXPECT_LE(std::abs(steps), 127 * (1 + 0x1p-22)) << "col " << k;
            // Within half a step of the float32 scale (kHalfStep, and 2^-24 from ours), plus the
            // rounding of q · s_f: 2^-24 · max each.
            ASSERT_LE(std::abs(double{row[k]} - original[k]), kHalfStep * scale + 2 * kF32Eps * max)
                << "col " << k;
            break;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ReducedTypes, QuantizedLinearTest,
                         ::testing::Values(ComputeType::kBFloat16, ComputeType::kInt8),
                         ::mtserve::testing::ComputeTypeTestName);

// A shortlist's projection (Linear::Outputs) computes each of its outputs exactly as the whole
// projection does, bit for bit, in every compute type, whatever the width and row count: what
// keeps a sentence's scores independent of the other sentences' candidates.
TEST(LinearOutputsTest, EachOutputIsTheWholeProjectionsBitForBit) {
  std::mt19937 rng(11);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8}) {
    if (!CheckComputeTypeSupported(type).ok()) continue;
    for (auto [in, out] : {std::pair{256, 3000}, std::pair{512, 5000}}) {
      const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
      const std::vector<float> b = RandomVector(rng, out);
      const Linear whole(w, b, in, out, type);
      for (int width : {64, 320, 1280, 2304}) {
        std::vector<int> outputs(out);
        for (int i = 0; i < out; ++i) outputs[i] = i;
        std::shuffle(outputs.begin(), outputs.end(), rng);
        outputs.resize(width - 5);
        std::sort(outputs.begin(), outputs.end());
        outputs.resize(width, -1);  // Padding.
        const Linear part = whole.Outputs(outputs);
        ASSERT_EQ(part.out_features(), width);
        for (int64_t rows : {1, 4, 37, 128}) {
          SCOPED_TRACE(::testing::Message() << ComputeTypeName(type) << " in " << in << " width "
                                            << width << " rows " << rows);
          const std::vector<float> x = RandomVector(rng, rows * in, -3.f, 3.f);
          std::vector<float> y_whole(rows * out), y_part(rows * width);
          whole.Forward(ctx, x.data(), rows, y_whole.data());
          part.Forward(ctx, x.data(), rows, y_part.data());
          int differing = 0;
          for (int64_t r = 0; r < rows; ++r) {
            for (int j = 0; j < width; ++j) {
              const float got = y_part[r * width + j];
              const float want = outputs[j] < 0 ? 0.f : y_whole[r * out + outputs[j]];
              if (std::memcmp(&got, &want, sizeof(float)) != 0) ++differing;
            }
          }
          EXPECT_EQ(differing, 0);
        }
      }
    }
  }
}

// Written with a row stride (a shortlist's two projections fill one row of logits: the
// always-line's columns, then the others'), every output is the dense Forward's bit for bit, in
// every compute type and epilogue (the residual read from the strided rows), and the columns
// between rows are left as they were.
TEST(LinearOutputsTest, StridedOutputIsTheDenseOneBitForBit) {
  std::mt19937 rng(12);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  const float kSentinel = -12345.f;
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8}) {
    if (!CheckComputeTypeSupported(type).ok()) continue;
    const int in = 96;
    const int out = 200;
    const Linear linear(RandomVector(rng, static_cast<size_t>(out) * in), RandomVector(rng, out),
                        in, out, type);
    for (Epilogue e : kEpilogues) {
      for (int64_t rows : {1, 2, 19, 300}) {
        SCOPED_TRACE(::testing::Message() << ComputeTypeName(type) << " epilogue "
                                          << static_cast<int>(e) << " rows " << rows);
        const int64_t stride = out + 45;
        const std::vector<float> x = RandomVector(rng, rows * in, -3.f, 3.f);
        const std::vector<float> residual = RandomVector(rng, rows * out);
        std::vector<float> dense = residual;
        std::vector<float> strided(rows * stride, kSentinel);
        for (int64_t r = 0; r < rows; ++r) {
          std::copy_n(residual.data() + r * out, out, strided.data() + r * stride + 20);
        }
        linear.Forward(ctx, x.data(), rows, dense.data(), e);
        linear.Forward(ctx, x.data(), rows, strided.data() + 20, e, 0, stride);
        int differing = 0;
        int overwritten = 0;
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < stride; ++c) {
            const float got = strided[r * stride + c];
            if (c < 20 || c >= 20 + out) {
              overwritten += got != kSentinel;
            } else {
              differing += std::memcmp(&got, &dense[r * out + c - 20], sizeof(float)) != 0;
            }
          }
        }
        EXPECT_EQ(differing, 0);
        EXPECT_EQ(overwritten, 0);
      }
    }
  }
}

}  // namespace
}  // namespace mtserve
