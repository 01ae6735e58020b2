// Every op and kernel in float32 against a naive reference written from the mathematical
// definition (here, or in test_lib/naive_ops.h when another test uses it too): plain
// double-precision loops, no oneDNN, no code shared with model/. bfloat16 and int8 Linear:
// quantized_ops_test.cc. Inputs are
// random (fixed-seed std::mt19937) and the shapes are deliberately odd (rows 1, 3, 17, 130;
// features 5, 7, 33, 257; head_dim 8 and 64; lengths 1, 2, 13) so that vector tails and blocking
// edges are hit.
//
// Tolerances. The ops compute in fp32 (epsilon 6e-8) and sum in an order of their choosing (oneDNN
// blocks, FMAs, SIMD partial sums). With inputs in [-1, 1] and at most 257 terms per sum, the
// rounding error of any output is bounded by about n * eps * sum|terms| ~ 257 * 6e-8 * 257 ~ 4e-3
// in the very worst case and is ~sqrt(n) * eps * |result| (1e-6) in practice; exp, erf and the
// reciprocal square root in oneDNN's kernels are polynomial approximations accurate to a few ulps.
// 1e-4 absolute plus 1e-4 relative is therefore loose enough never to flag rounding and tight
// enough to flag any real mistake (a wrong index, a missed element, a transposed weight, a wrong
// formula all move results by O(0.01) or more).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/kernels/one_query_attention.h"
#include "model/kernels/self_attention.h"
#include "model/kernels/top_k.h"
#include "model/kv_cache.h"
#include "model/layers/embeddings.h"
#include "model/ops/compute_context.h"
#include "model/ops/layer_norm.h"
#include "model/ops/linear.h"
#include "model/ops/softmax.h"
#include "tests/test_lib/naive_ops.h"

namespace mtserve {
namespace {

constexpr double kAbsTol = 1e-4;
constexpr double kRelTol = 1e-4;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using ::mtserve::testing::EpilogueName;
using ::mtserve::testing::NaiveLinear;
using ::mtserve::testing::RandomVector;

// ---------------------------------------------------------------------------------------------
// Helpers.

// |actual - expected| <= atol + rtol * |expected| everywhere; infinities must match exactly and a
// NaN anywhere fails. Reports the first mismatch.
::testing::AssertionResult AllClose(const float* actual, const std::vector<double>& expected,
                                    double atol = kAbsTol, double rtol = kRelTol) {
  for (size_t i = 0; i < expected.size(); ++i) {
    const double a = actual[i];
    const double e = expected[i];
    const bool ok =
        std::isinf(e) || std::isinf(a) ? a == e : std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!ok) {
      return ::testing::AssertionFailure()
             << "index " << i << " of " << expected.size() << ": actual " << a << ", expected " << e
             << " (diff " << a - e << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Softmax of one row in double, from the definition exp(x_i) / sum_j exp(x_j) (shifted by the
// maximum, which does not change the value, so that large inputs do not overflow).
std::vector<double> NaiveSoftmax(const std::vector<double>& x) {
  double max = -std::numeric_limits<double>::infinity();
  for (double v : x) max = std::max(max, v);
  std::vector<double> p(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += p[i] = std::exp(x[i] - max);
  for (double& v : p) v /= sum;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Linear.

struct LinearCase {
  int64_t rows;
  int in;
  int out;
  bool bias;
  Epilogue epilogue;
  int64_t x_stride;  // 0: dense.
};

// Runs `linear` on random x (padding columns, when strided, are NaN: reading them would show) and
// checks it against NaiveLinear.
void CheckLinear(ComputeContext& ctx, const Linear& linear, const std::vector<float>& w,
                 const std::vector<float>& b, const LinearCase& c, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message()
               << "rows=" << c.rows << " in=" << c.in << " out=" << c.out << " bias=" << c.bias
               << " epilogue=" << EpilogueName(c.epilogue) << " x_stride=" << c.x_stride);
  const int64_t stride = c.x_stride == 0 ? c.in : c.x_stride;
  std::vector<float> x(c.rows * stride, kNaN);
  for (int64_t r = 0; r < c.rows; ++r) {
    const std::vector<float> row = RandomVector(rng, c.in);
    std::copy(row.begin(), row.end(), x.begin() + r * stride);
  }
  // Without kAddToOutput y's contents must be ignored: NaN would poison a sum that read them.
  std::vector<float> y = c.epilogue == Epilogue::kAddToOutput
                             ? RandomVector(rng, c.rows * c.out, -2.f, 2.f)
                             : std::vector<float>(c.rows * c.out, kNaN);
  const std::vector<double> expected =
      NaiveLinear(x, c.rows, stride, w, b, c.in, c.out, c.epilogue, y);
  linear.Forward(ctx, x.data(), c.rows, y.data(), c.epilogue, c.x_stride);
  EXPECT_TRUE(AllClose(y.data(), expected));
}

TEST(LinearTest, MatchesReferenceForEveryShapeBiasAndEpilogue) {
  std::mt19937 rng(1);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  const std::pair<int, int> shapes[] = {{5, 7}, {7, 5}, {33, 257}, {257, 33}, {1, 1}};
  for (auto [in, out] : shapes) {
    for (bool bias : {false, true}) {
      const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
      const std::vector<float> b = bias ? RandomVector(rng, out) : std::vector<float>();
      const Linear linear(w, b, in, out);
      ASSERT_EQ(linear.in_features(), in);
      ASSERT_EQ(linear.out_features(), out);
      for (int64_t rows : {1, 3, 17, 130}) {
        for (Epilogue e : {Epilogue::kNone, Epilogue::kRelu, Epilogue::kSwish, Epilogue::kGelu,
                           Epilogue::kAddToOutput}) {
          CheckLinear(ctx, linear, w, b, {rows, in, out, bias, e, 0}, rng);
        }
      }
    }
  }
}

// x is a column slice of a wider matrix, as the decoder's queries are of the fused QKV output.
TEST(LinearTest, ReadsStridedInput) {
  std::mt19937 rng(2);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  for (auto [in, out, stride] : {std::tuple{5, 7, 16}, {33, 7, 99}, {257, 33, 260}}) {
    for (bool bias : {false, true}) {
      const std::vector<float> w = RandomVector(rng, static_cast<size_t>(out) * in);
      const std::vector<float> b = bias ? RandomVector(rng, out) : std::vector<float>();
      const Linear linear(w, b, in, out);
      for (int64_t rows : {1, 3, 17, 130}) {
        for (Epilogue e : {Epilogue::kNone, Epilogue::kGelu, Epilogue::kAddToOutput}) {
          CheckLinear(ctx, linear, w, b, {rows, in, out, bias, e, stride}, rng);
        }
      }
    }
  }
}

// One context, one Linear, row counts coming and going as batches do: every call right, and one
// cached primitive per distinct (rows, stride, epilogue), not one per call.
TEST(LinearTest, PrimitiveCacheHoldsOnePrimitivePerShape) {
  std::mt19937 rng(3);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  const int in = 33;
  const int out = 7;
  const std::vector<float> w = RandomVector(rng, out * in);
  const std::vector<float> b = RandomVector(rng, out);
  const Linear linear(w, b, in, out);
  EXPECT_EQ(ctx.num_cached_primitives(), 0u);

  std::set<std::tuple<int64_t, int64_t, Epilogue>> shapes;
  const LinearCase calls[] = {
      {1, in, out, true, Epilogue::kNone, 0},   {3, in, out, true, Epilogue::kNone, 0},
      {17, in, out, true, Epilogue::kNone, 0},  {3, in, out, true, Epilogue::kNone, 0},
      {1, in, out, true, Epilogue::kNone, 0},   {130, in, out, true, Epilogue::kNone, 0},
      {17, in, out, true, Epilogue::kNone, 0},  {17, in, out, true, Epilogue::kRelu, 0},
      {17, in, out, true, Epilogue::kRelu, 0},  {3, in, out, true, Epilogue::kNone, 40},
      {3, in, out, true, Epilogue::kNone, 40},  {3, in, out, true, Epilogue::kNone, 0},
      {130, in, out, true, Epilogue::kNone, 0}, {1, in, out, true, Epilogue::kAddToOutput, 0},
      {1, in, out, true, Epilogue::kNone, 0},
  };
  for (const LinearCase& c : calls) {
    CheckLinear(ctx, linear, w, b, c, rng);
    shapes.emplace(c.rows, c.x_stride == 0 ? in : c.x_stride, c.epilogue);
    EXPECT_EQ(ctx.num_cached_primitives(), shapes.size());
  }

  // Another Linear of the same shape reuses those primitives, with its own weights.
  const std::vector<float> w2 = RandomVector(rng, out * in);
  const std::vector<float> b2 = RandomVector(rng, out);
  const Linear linear2(w2, b2, in, out);
  for (int64_t rows : {1, 3, 17}) {
    CheckLinear(ctx, linear2, w2, b2, {rows, in, out, true, Epilogue::kNone, 0}, rng);
  }
  EXPECT_EQ(ctx.num_cached_primitives(), shapes.size());
  // And the first still uses its own.
  CheckLinear(ctx, linear, w, b, {3, in, out, true, Epilogue::kNone, 0}, rng);
}

// ---------------------------------------------------------------------------------------------
// LayerNorm.

// (x - mean) / sqrt(var + eps) * gamma + beta per row, var the biased (population) variance.
std::vector<double> NaiveLayerNorm(const std::vector<float>& x, int64_t rows, int dim,
                                   const std::vector<float>& gamma, const std::vector<float>& beta,
                                   double eps) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * dim;
    double mean = 0;
    for (int i = 0; i < dim; ++i) mean += row[i];
    mean /= dim;
    double var = 0;
    for (int i = 0; i < dim; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= dim;
    for (int i = 0; i < dim; ++i) {
      y[r * dim + i] = (row[i] - mean) / std::sqrt(var + eps) * gamma[i] + beta[i];
    }
  }
  return y;
}

TEST(LayerNormTest, NormalisesInPlace) {
  std::mt19937 rng(4);
  // A team of two: 130 rows of 257 are shared among threads, the smaller ones not.
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  constexpr float kEps = 1e-5f;
  for (int dim : {1, 5, 8, 33, 257}) {
    const std::vector<float> gamma = RandomVector(rng, dim, 0.5f, 2.f);
    const std::vector<float> beta = RandomVector(rng, dim);
    const LayerNorm norm(gamma, beta, kEps);
    ASSERT_EQ(norm.dim(), dim);
    for (int64_t rows : {1, 3, 17, 130}) {
      SCOPED_TRACE(::testing::Message() << "rows=" << rows << " dim=" << dim);
      // A non-zero mean and a spread other than 1, so both the centring and the scaling matter.
      std::vector<float> x = RandomVector(rng, rows * dim, -3.f, 5.f);
      const std::vector<double> expected = NaiveLayerNorm(x, rows, dim, gamma, beta, kEps);
      norm.Forward(x.data(), rows);
      EXPECT_TRUE(AllClose(x.data(), expected));
    }
  }
}

// A constant row has variance 0: the output is beta exactly where eps keeps the division finite.
TEST(LayerNormTest, ConstantRowGivesBeta) {
  std::mt19937 rng(5);
  const int dim = 33;
  const std::vector<float> gamma = RandomVector(rng, dim);
  const std::vector<float> beta = RandomVector(rng, dim);
  const LayerNorm norm(gamma, beta, 1e-5f);
  std::vector<float> x(2 * dim, 3.25f);
  norm.Forward(x.data(), 2);
  EXPECT_TRUE(AllClose(
      x.data(), NaiveLayerNorm(std::vector<float>(2 * dim, 3.25f), 2, dim, gamma, beta, 1e-5)));
}

// ---------------------------------------------------------------------------------------------
// Softmax and LogSoftmax.

std::vector<double> NaiveSoftmaxRows(const std::vector<float>& x, int64_t rows, int64_t cols,
                                     bool log) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<double> row(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    const std::vector<double> p = NaiveSoftmax(row);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = log ? std::log(p[c]) : p[c];
  }
  return y;
}

TEST(SoftmaxTest, MatchesReference) {
  std::mt19937 rng(6);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  for (int64_t rows : {1, 3, 17, 130}) {
    for (int64_t cols : {1, 2, 5, 13, 33, 257}) {
      SCOPED_TRACE(::testing::Message() << "rows=" << rows << " cols=" << cols);
      std::vector<float> x = RandomVector(rng, rows * cols, -8.f, 8.f);
      const std::vector<double> expected = NaiveSoftmaxRows(x, rows, cols, /*log=*/false);
      Softmax(ctx, x.data(), rows, cols);
      ASSERT_TRUE(AllClose(x.data(), expected));
      for (int64_t r = 0; r < rows; ++r) {
        EXPECT_NEAR(std::accumulate(x.begin() + r * cols, x.begin() + (r + 1) * cols, 0.0), 1.0,
                    1e-5);
      }
    }
  }
}

// A worker keeps at most kMaxCachedPrimitives primitives, whatever shapes it sees (a server sees
// ever new ones; keeping them all grew its memory without end), and a shape evicted and seen
// again is made again and computes as before.
TEST(ComputeContextTest, PrimitiveCacheIsBoundedAndEvictedShapesStillWork) {
  std::mt19937 rng(41);
  ComputeContext ctx(1);
  ctx.BindToCallingThread();
  const int64_t cols = 8;
  const int64_t shapes = ComputeContext::kMaxCachedPrimitives + 100;
  std::vector<float> x;
  for (int64_t rows = 1; rows <= shapes; ++rows) {
    x = RandomVector(rng, rows * cols);
    Softmax(ctx, x.data(), rows, cols);
    ASSERT_LE(ctx.num_cached_primitives(), ComputeContext::kMaxCachedPrimitives);
  }
  EXPECT_EQ(ctx.primitives_created(), shapes);
  EXPECT_EQ(ctx.num_cached_primitives(), ComputeContext::kMaxCachedPrimitives);
  // The most recent shape is still cached; the first was evicted and is made again.
  x = RandomVector(rng, shapes * cols);
  Softmax(ctx, x.data(), shapes, cols);
  EXPECT_EQ(ctx.primitives_created(), shapes);
  x = RandomVector(rng, 3 * cols, -8.f, 8.f);
  const std::vector<double> expected = NaiveSoftmaxRows(x, 3, cols, /*log=*/false);
  Softmax(ctx, x.data(), 3, cols);
  EXPECT_EQ(ctx.primitives_created(), shapes + 1);
  EXPECT_TRUE(AllClose(x.data(), expected));
}

TEST(SoftmaxTest, LogSoftmaxMatchesReference) {
  std::mt19937 rng(7);
  ComputeContext ctx(2);
  ctx.BindToCallingThread();
  for (int64_t rows : {1, 3, 17, 130}) {
    for (int64_t cols : {1, 2, 5, 13, 33, 257}) {
      SCOPED_TRACE(::testing::Message() << "rows=" << rows << " cols=" << cols);
      std::vector<float> x = RandomVector(rng, rows * cols, -8.f, 8.f);
      const std::vector<double> expected = NaiveSoftmaxRows(x, rows, cols, /*log=*/true);
      LogSoftmax(ctx, x.data(), rows, cols);
      EXPECT_TRUE(AllClose(x.data(), expected));
    }
  }
}

// Large logits must not overflow, and -inf entries (masked keys, banned tokens) must weigh exactly
// zero: probability 0 and log-probability -inf.
TEST(SoftmaxTest, HandlesLargeValuesAndMinusInfinity) {
  ComputeContext ctx(1);
  const int64_t cols = 19;
  std::vector<float> x(2 * cols);
  for (int64_t c = 0; c < cols; ++c) {
    x[c] = 1000.f + static_cast<float>(c % 5);
    x[cols + c] = c % 3 == 1 ? -kInf : -0.5f * static_cast<float>(c);
  }
  x[5] = -kInf;
  for (bool log : {false, true}) {
    SCOPED_TRACE(log ? "LogSoftmax" : "Softmax");
    std::vector<float> y = x;
    const std::vector<double> expected = NaiveSoftmaxRows(x, 2, cols, log);
    if (log) {
      LogSoftmax(ctx, y.data(), 2, cols);
    } else {
      Softmax(ctx, y.data(), 2, cols);
    }
    EXPECT_TRUE(AllClose(y.data(), expected));
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == -kInf) {
        EXPECT_EQ(y[i], log ? -kInf : 0.f) << "index " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// OneQueryAttention.

// Also checks the optional output of probabilities averaged over the heads (for alignments):
// each row's softmax over its positions, averaged over heads, and zeros past its length.
// Both kernels: the AVX-512 one (where the CPU has it, for head_dim a multiple of 32: here 64, 32
// and 96, with heads in fours and not, widths of a whole number of its 256-output blocks and
// not) and the portable one; lengths below, at and past a vector of 16 scores.
TEST(OneQueryAttentionTest, MatchesNaiveAttentionThroughScatteredPointers) {
  std::mt19937 rng(10);
  for (auto [heads, head_dim] :
       {std::pair<int, int>{1, 8}, {2, 8}, {4, 64}, {3, 7}, {8, 64}, {5, 32}, {6, 96}}) {
    for (int rows : {1, 3, 17}) {
      SCOPED_TRACE(::testing::Message()
                   << "rows=" << rows << " heads=" << heads << " head_dim=" << head_dim);
      const int width = heads * head_dim;
      const int max_positions = 40;  // More than any length: the tail of each row is unused.
      const int length_choices[] = {13, 1, 2, 15, 7, 16, 17, 33, 40};
      std::vector<int> lengths(rows);
      for (int r = 0; r < rows; ++r) lengths[r] = length_choices[r % std::size(length_choices)];
      const int total = std::accumulate(lengths.begin(), lengths.end(), 0);

      // Key and value vectors live in pools in a shuffled order; the pointer tables find them.
      // Their values are bfloat16 numbers (float32 with the low 16 bits clear), so the kernel
      // reading them as bfloat16 (the reduced compute types' KV cache) must match the same
      // reference as the float32 one.
      auto bfloat16_exact = [](std::vector<float> v) {
        for (float& x : v) {
          uint32_t bits;
          std::memcpy(&bits, &x, sizeof(bits));
          bits &= 0xffff0000u;
          std::memcpy(&x, &bits, sizeof(bits));
        }
        return v;
      };
      auto high_halves = [](const std::vector<float>& v) {
        std::vector<uint16_t> halves(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
          uint32_t bits;
          std::memcpy(&bits, &v[i], sizeof(bits));
          halves[i] = static_cast<uint16_t>(bits >> 16);
        }
        return halves;
      };
      const std::vector<float> key_pool =
          bfloat16_exact(RandomVector(rng, static_cast<size_t>(total) * width));
      const std::vector<float> value_pool =
          bfloat16_exact(RandomVector(rng, static_cast<size_t>(total) * width));
      const std::vector<uint16_t> key_pool_bf16 = high_halves(key_pool);
      const std::vector<uint16_t> value_pool_bf16 = high_halves(value_pool);
      std::vector<int> key_slot(total), value_slot(total);
      std::iota(key_slot.begin(), key_slot.end(), 0);
      std::iota(value_slot.begin(), value_slot.end(), 0);
      std::shuffle(key_slot.begin(), key_slot.end(), rng);
      std::shuffle(value_slot.begin(), value_slot.end(), rng);
      std::vector<const float*> keys(static_cast<size_t>(rows) * max_positions, nullptr);
      std::vector<const float*> values(keys.size(), nullptr);
      // The same tables for each vector type, as the kernel takes them.
      std::vector<const void*> key_table[2], value_table[2];
      for (int t = 0; t < 2; ++t) {
        key_table[t].assign(keys.size(), nullptr);
        value_table[t].assign(keys.size(), nullptr);
      }
      for (int r = 0, next = 0; r < rows; ++r) {
        for (int s = 0; s < lengths[r]; ++s, ++next) {
          const size_t i = static_cast<size_t>(r) * max_positions + s;
          const size_t key_offset = static_cast<size_t>(key_slot[next]) * width;
          const size_t value_offset = static_cast<size_t>(value_slot[next]) * width;
          keys[i] = key_pool.data() + key_offset;
          values[i] = value_pool.data() + value_offset;
          key_table[0][i] = keys[i];
          value_table[0][i] = values[i];
          key_table[1][i] = key_pool_bf16.data() + key_offset;
          value_table[1][i] = value_pool_bf16.data() + value_offset;
        }
      }
      // Queries are the first `width` columns of wider rows, as in the fused QKV output.
      const int64_t query_stride = 3 * width;
      const std::vector<float> queries =
          RandomVector(rng, static_cast<size_t>(rows) * query_stride, -2.f / std::sqrt(head_dim),
                       2.f / std::sqrt(head_dim));
      std::vector<float> out(static_cast<size_t>(rows) * width, kNaN);

      std::vector<double> expected(out.size());
      std::vector<double> expected_probabilities(static_cast<size_t>(rows) * max_positions, 0.0);
      for (int r = 0; r < rows; ++r) {
        for (int h = 0; h < heads; ++h) {
          std::vector<double> scores(lengths[r]);
          for (int s = 0; s < lengths[r]; ++s) {
            const float* key = keys[r * max_positions + s] + h * head_dim;
            double dot = 0;
            for (int i = 0; i < head_dim; ++i) {
              dot += double{queries[r * query_stride + h * head_dim + i]} * key[i];
            }
            scores[s] = dot;
          }
          const std::vector<double> p = NaiveSoftmax(scores);
          for (int s = 0; s < lengths[r]; ++s) {
            expected_probabilities[static_cast<size_t>(r) * max_positions + s] += p[s] / heads;
          }
          for (int i = 0; i < head_dim; ++i) {
            double sum = 0;
            for (int s = 0; s < lengths[r]; ++s) {
              sum += p[s] * values[r * max_positions + s][h * head_dim + i];
            }
            expected[static_cast<size_t>(r) * width + h * head_dim + i] = sum;
          }
        }
      }

      for (auto* kernel : {OneQueryAttention, OneQueryAttentionPortable}) {
        SCOPED_TRACE(kernel == OneQueryAttention ? "best kernel" : "portable kernel");
        for (VectorType type : {VectorType::kFloat32, VectorType::kBFloat16}) {
          SCOPED_TRACE(type == VectorType::kFloat32 ? "float32 vectors" : "bfloat16 vectors");
          const int t = type == VectorType::kFloat32 ? 0 : 1;
          std::fill(out.begin(), out.end(), kNaN);
          kernel({queries.data(), query_stride, key_table[t].data(), value_table[t].data(),
                  lengths.data(), max_positions, rows, heads, head_dim, out.data(), nullptr, type});
          EXPECT_TRUE(AllClose(out.data(), expected));

          // With probabilities: the same output, and the averaged probabilities.
          std::fill(out.begin(), out.end(), kNaN);
          std::vector<float> probabilities(expected_probabilities.size(), kNaN);
          kernel({queries.data(), query_stride, key_table[t].data(), value_table[t].data(),
                  lengths.data(), max_positions, rows, heads, head_dim, out.data(),
                  probabilities.data(), type});
          EXPECT_TRUE(AllClose(out.data(), expected));
          EXPECT_TRUE(AllClose(probabilities.data(), expected_probabilities));
        }
      }
    }
  }
}

// With one position the output is that position's value, whatever the scores.
TEST(OneQueryAttentionTest, SinglePositionReturnsItsValue) {
  std::mt19937 rng(11);
  const int heads = 2, head_dim = 64, width = heads * head_dim;
  const std::vector<float> q = RandomVector(rng, width, -50.f, 50.f);
  const std::vector<float> k = RandomVector(rng, width);
  const std::vector<float> v = RandomVector(rng, width);
  const void* key = k.data();
  const void* value = v.data();
  const int length = 1;
  std::vector<float> out(width, kNaN);
  float probability = kNaN;
  OneQueryAttention(
      {q.data(), width, &key, &value, &length, 1, 1, heads, head_dim, out.data(), &probability});
  EXPECT_THAT(out, ::testing::Pointwise(::testing::FloatEq(), v));
  EXPECT_FLOAT_EQ(probability, 1.f);
}

// ---------------------------------------------------------------------------------------------
// SelfAttention.

// Every query of a sentence over every position of it, read out of fused QKV rows wider than they
// need be, written to rows wider than the output: lengths below, at and past a vector of 16 and
// head dimensions past and short of a block of 64 elements hit every tail.
TEST(SelfAttentionTest, MatchesNaiveAttention) {
  std::mt19937 rng(12);
  for (auto [heads, head_dim] :
       {std::pair<int, int>{1, 8}, {2, 8}, {4, 64}, {3, 7}, {1, 80}, {2, 130}}) {
    for (int length : {0, 1, 2, 13, 16, 17, 33}) {
      SCOPED_TRACE(::testing::Message()
                   << "length=" << length << " heads=" << heads << " head_dim=" << head_dim);
      const int width = heads * head_dim;
      const int64_t qkv_stride = 3 * width + 5;
      const int64_t out_stride = width + 3;
      const std::vector<float> qkv =
          RandomVector(rng, static_cast<size_t>(length) * qkv_stride, -2.f / std::sqrt(head_dim),
                       2.f / std::sqrt(head_dim));
      std::vector<float> out(static_cast<size_t>(length) * out_stride, kNaN);
      std::vector<float> scratch(SelfAttentionScratchFloats(length, head_dim), kNaN);
      SelfAttention({qkv.data(), qkv_stride, length, heads, head_dim, out.data(), out_stride,
                     scratch.data()});

      std::vector<double> expected(static_cast<size_t>(length) * width);
      for (int r = 0; r < length; ++r) {
        for (int h = 0; h < heads; ++h) {
          std::vector<double> scores(length);
          for (int s = 0; s < length; ++s) {
            double dot = 0;
            for (int i = 0; i < head_dim; ++i) {
              dot += double{qkv[r * qkv_stride + h * head_dim + i]} *
                     qkv[s * qkv_stride + width + h * head_dim + i];
            }
            scores[s] = dot;
          }
          const std::vector<double> p = NaiveSoftmax(scores);
          for (int i = 0; i < head_dim; ++i) {
            double sum = 0;
            for (int s = 0; s < length; ++s) {
              sum += p[s] * qkv[s * qkv_stride + 2 * width + h * head_dim + i];
            }
            expected[static_cast<size_t>(r) * width + h * head_dim + i] = sum;
          }
        }
      }
      std::vector<float> dense(expected.size());
      for (int r = 0; r < length; ++r) {
        std::copy_n(out.begin() + r * out_stride, width, dense.begin() + r * width);
        // Past the output's width, nothing is written.
        for (int64_t c = width; c < out_stride; ++c)
          EXPECT_TRUE(std::isnan(out[r * out_stride + c]));
      }
      EXPECT_TRUE(AllClose(dense.data(), expected));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// TopK.

// The k best indices by std::partial_sort: larger value first, lower index first among equals.
std::vector<int> NaiveTopK(const std::vector<float>& row, int k) {
  std::vector<int> ids(row.size());
  std::iota(ids.begin(), ids.end(), 0);
  const int kept = std::min<int>(k, static_cast<int>(row.size()));
  std::partial_sort(ids.begin(), ids.begin() + kept, ids.end(),
                    [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  ids.resize(kept);
  return ids;
}

// Checks TopK against NaiveTopK, and that nothing past min(k, n) is written.
void CheckTopK(const std::vector<float>& row, int k) {
  const int n = static_cast<int>(row.size());
  SCOPED_TRACE(::testing::Message() << "n=" << n << " k=" << k);
  const std::vector<int> expected = NaiveTopK(row, k);
  constexpr int kSentinel = -12345;
  std::vector<int> ids(k + 4, kSentinel);
  std::vector<float> values(k + 4, kNaN);
  TopK(row.data(), n, k, ids.data(), values.data());
  ASSERT_THAT(std::vector<int>(ids.begin(), ids.begin() + expected.size()),
              ::testing::ElementsAreArray(expected));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(values[i], row[expected[i]]) << i;
  for (size_t i = expected.size(); i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], kSentinel) << "written past min(k, n) at " << i;
  }
}

TEST(TopKTest, MatchesPartialSortOnRandomRows) {
  std::mt19937 rng(12);
  for (int n : {1, 2, 5, 15, 16, 17, 31, 33, 100, 1000, 4099}) {
    for (int k : {1, 2, 4, 8, 16, 17, 50, 64, 65, 200, 999, 4099}) {
      CheckTopK(RandomVector(rng, n, -10.f, 10.f), k);
      // An ascending row: every chunk beats the current k-th best, the worst case for skipping.
      std::vector<float> ascending(n);
      std::iota(ascending.begin(), ascending.end(), -3.f);
      CheckTopK(ascending, k);
    }
  }
}

// Few distinct values: ties everywhere, including inside chunks the kernel skips and across chunk
// boundaries. The lower index must win.
TEST(TopKTest, TiesGoToTheLowerIndex) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> small(0, 4);
  for (int n : {3, 16, 17, 40, 257, 1000}) {
    for (int k : {1, 2, 5, 16, 33, 64, 65, 150, 999}) {
      std::vector<float> row(n);
      for (float& x : row) x = static_cast<float>(small(rng));
      CheckTopK(row, k);
    }
  }
  CheckTopK(std::vector<float>(37, 1.5f), 5);
  CheckTopK(std::vector<float>(500, 1.5f), 100);
}

TEST(TopKTest, KLargerThanN) {
  std::mt19937 rng(14);
  for (int n : {1, 3, 16, 17}) CheckTopK(RandomVector(rng, n), n + 5);
}

// -inf entries (banned tokens) come last, and only when there are fewer than k finite values.
TEST(TopKTest, MinusInfinityEntries) {
  std::mt19937 rng(15);
  std::bernoulli_distribution banned(0.7);
  for (int n : {5, 17, 64, 333}) {
    for (int k : {1, 4, 8, 40, 100, 300}) {
      std::vector<float> row = RandomVector(rng, n);
      for (float& x : row) {
        if (banned(rng)) x = -kInf;
      }
      CheckTopK(row, k);
    }
  }
  std::vector<float> all_banned(19, -kInf);
  CheckTopK(all_banned, 3);
  std::vector<float> one_finite(35, -kInf);
  one_finite[33] = -7.f;
  CheckTopK(one_finite, 4);
  int id = -1;
  float value = 0;
  TopK(one_finite.data(), 35, 1, &id, &value);
  EXPECT_EQ(id, 33);
  EXPECT_EQ(value, -7.f);
}

// k = 1 is argmax, the first maximum.
TEST(TopKTest, KOneIsFirstArgmax) {
  std::mt19937 rng(16);
  std::uniform_int_distribution<int> small(-3, 3);
  for (int n : {1, 7, 16, 31, 32, 100, 32001}) {
    std::vector<float> row(n);
    for (float& x : row) x = static_cast<float>(small(rng));
    int id = -1;
    float value = kNaN;
    TopK(row.data(), n, 1, &id, &value);
    const auto max = std::max_element(row.begin(), row.end());
    EXPECT_EQ(id, max - row.begin()) << "n=" << n;
    EXPECT_EQ(value, *max) << "n=" << n;
  }
}

// ---------------------------------------------------------------------------------------------
// Embeddings.

// Hugging Face's MarianSinusoidalPositionalEmbedding, from its definition: with h = ceil(dim / 2),
// column j < h holds sin(p / 10000^(2j / dim)) and column h + j holds cos(p / 10000^(2j / dim)).
double MarianPosition(int p, int column, int dim) {
  const int half = (dim + 1) / 2;
  const int j = column < half ? column : column - half;
  const double angle = p / std::pow(10000.0, 2.0 * j / dim);
  return column < half ? std::sin(angle) : std::cos(angle);
}

TEST(EmbeddingsTest, SinusoidalPositionsFollowMarianFormula) {
  for (int dim : {2, 6, 8, 64, 512, 7}) {
    const int num_positions = 600;
    SCOPED_TRACE(::testing::Message() << "dim=" << dim);
    const std::vector<float> table = SinusoidalPositions(num_positions, dim);
    ASSERT_EQ(table.size(), static_cast<size_t>(num_positions) * dim);
    std::vector<double> expected(table.size());
    for (int p = 0; p < num_positions; ++p) {
      for (int c = 0; c < dim; ++c)
        expected[static_cast<size_t>(p) * dim + c] = MarianPosition(p, c, dim);
    }
    EXPECT_TRUE(AllClose(table.data(), expected, 1e-6, 0));
  }
  // A few values by hand (dim 4): row 1 is sin(1), sin(0.01), cos(1), cos(0.01).
  const std::vector<float> t = SinusoidalPositions(2, 4);
  EXPECT_THAT(t, ::testing::Pointwise(::testing::FloatNear(1e-7f),
                                      std::vector<float>{0, 0, 1, 1, 0.8414709848f, 0.0099998333f,
                                                         0.5403023059f, 0.9999500004f}));
}

TEST(EmbeddingsTest, ForwardIsScaledTokenPlusPosition) {
  std::mt19937 rng(17);
  const int vocab = 11;
  const int max_positions = 40;
  for (int dim : {8, 33, 64}) {
    for (float scale : {1.f, std::sqrt(static_cast<float>(dim))}) {
      const std::vector<float> table = RandomVector(rng, static_cast<size_t>(vocab) * dim);
      const Embeddings embeddings(table, vocab, dim, scale, max_positions);
      ASSERT_EQ(embeddings.dim(), dim);
      ASSERT_EQ(embeddings.max_positions(), max_positions);
      for (int n : {1, 3, 130}) {
        SCOPED_TRACE(::testing::Message() << "dim=" << dim << " scale=" << scale << " n=" << n);
        std::vector<int> ids(n), positions(n);
        for (int i = 0; i < n; ++i) {
          ids[i] = std::uniform_int_distribution<int>(0, vocab - 1)(rng);
          positions[i] = std::uniform_int_distribution<int>(0, max_positions - 1)(rng);
        }
        positions[0] = max_positions - 1;
        ids[0] = vocab - 1;
        std::vector<double> expected(static_cast<size_t>(n) * dim);
        for (int i = 0; i < n; ++i) {
          for (int c = 0; c < dim; ++c) {
            expected[static_cast<size_t>(i) * dim + c] =
                double{table[static_cast<size_t>(ids[i]) * dim + c]} * scale +
                MarianPosition(positions[i], c, dim);
          }
        }
        std::vector<float> out(static_cast<size_t>(n) * dim, kNaN);
        embeddings.Forward(ids.data(), positions.data(), n, out.data());
        EXPECT_TRUE(AllClose(out.data(), expected));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// KvCache.

constexpr int kLayers = 2;
constexpr int kWidth = 5;
constexpr int kMaxSteps = 128;
constexpr int kMaxRows = 8;

// A value that names where it was written, exact in float (below 2^24 for widths up to 1024).
float Tag(int layer, bool value, int step, int row, int column, int width) {
  return static_cast<float>((((layer * 2 + value) * kMaxSteps + step) * kMaxRows + row) * width +
                            column);
}

void WriteStep(KvCache& cache, int step, int rows, int width = kWidth) {
  for (int l = 0; l < kLayers; ++l) {
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < width; ++c) {
        cache.Keys(l, step)[r * width + c] = Tag(l, false, step, r, c, width);
        cache.Values(l, step)[r * width + c] = Tag(l, true, step, r, c, width);
      }
    }
  }
}

// For each active row, the block row of its ancestor at every step: the lineage kept by hand.
using LineageModel = std::vector<std::vector<int>>;

// The cache against the model: lineage, and that the keys and values found through it are the
// ones written at that step for that ancestor.
void CheckAgainstModel(KvCache& cache, const LineageModel& model, int width = kWidth) {
  ASSERT_EQ(cache.rows(), static_cast<int>(model.size()));
  for (int r = 0; r < cache.rows(); ++r) {
    ASSERT_EQ(static_cast<int>(model[r].size()), cache.steps());
    const int* lineage = cache.Lineage(r);
    ASSERT_EQ(std::vector<int>(lineage, lineage + cache.steps()), model[r]) << "row " << r;
    for (int s = 0; s < cache.steps(); ++s) {
      for (int l = 0; l < kLayers; ++l) {
        const float* keys = cache.Keys(l, s) + lineage[s] * width;
        const float* values = cache.Values(l, s) + lineage[s] * width;
        for (int c = 0; c < width; ++c) {
          ASSERT_EQ(keys[c], Tag(l, false, s, model[r][s], c, width))
              << "row " << r << " step " << s << " layer " << l << " column " << c;
          ASSERT_EQ(values[c], Tag(l, true, s, model[r][s], c, width))
              << "row " << r << " step " << s << " layer " << l << " column " << c;
        }
      }
    }
  }
}

// A beam-search-like batch of `steps` steps starting with `first_rows` rows: random reorders with
// forks, drops, and row counts that shrink and grow. Checked against the model after every Reorder
// and every AppendStep, or only at the end when `check_every_step` is false.
void RunRandomBatch(KvCache& cache, std::mt19937& rng, int first_rows, int steps, int width,
                    bool check_every_step) {
  ASSERT_EQ(cache.steps(), 0);
  LineageModel model;
  int rows = first_rows;
  cache.AddRows(rows);
  cache.AppendStep();
  WriteStep(cache, 0, rows, width);
  for (int r = 0; r < rows; ++r) model.push_back({r});
  for (int step = 1; step < steps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const int next_rows = std::uniform_int_distribution<int>(1, kMaxRows - 2)(rng);
    std::vector<int> parents(next_rows);
    for (int& p : parents) p = std::uniform_int_distribution<int>(0, rows - 1)(rng);
    cache.Reorder(parents);
    LineageModel next(next_rows);
    for (int i = 0; i < next_rows; ++i) next[i] = model[parents[i]];
    model = std::move(next);
    // Between Reorder and AppendStep the lineage covers the existing steps.
    if (check_every_step) CheckAgainstModel(cache, model, width);

    rows = next_rows;
    cache.AppendStep();
    WriteStep(cache, step, rows, width);
    for (int i = 0; i < rows; ++i) model[i].push_back(i);
    ASSERT_EQ(cache.steps(), step + 1);
    if (check_every_step) CheckAgainstModel(cache, model, width);
  }
  CheckAgainstModel(cache, model, width);
}

TEST(KvCacheTest, LineageFollowsParentChain) {
  KvCache cache(kLayers, kWidth);
  EXPECT_EQ(cache.steps(), 0);
  cache.AddRows(3);
  cache.AppendStep();
  WriteStep(cache, 0, 3);
  EXPECT_EQ(cache.steps(), 1);
  EXPECT_EQ(cache.rows(), 3);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(cache.Lineage(r)[0], r);

  cache.Reorder({2, 0, 0});
  EXPECT_EQ(cache.rows(), 3);
  EXPECT_EQ(cache.Lineage(0)[0], 2);
  EXPECT_EQ(cache.Lineage(1)[0], 0);
  EXPECT_EQ(cache.Lineage(2)[0], 0);
  cache.AppendStep();
  WriteStep(cache, 1, 3);
  EXPECT_THAT(std::vector<int>(cache.Lineage(0), cache.Lineage(0) + 2),
              ::testing::ElementsAre(2, 0));
  EXPECT_THAT(std::vector<int>(cache.Lineage(1), cache.Lineage(1) + 2),
              ::testing::ElementsAre(0, 1));
  EXPECT_THAT(std::vector<int>(cache.Lineage(2), cache.Lineage(2) + 2),
              ::testing::ElementsAre(0, 2));

  // Drop a row and fork another: next step's rows continue rows 1, 1 and 0 of step 1.
  cache.Reorder({1, 1, 0});
  cache.AppendStep();
  WriteStep(cache, 2, 3);
  EXPECT_THAT(std::vector<int>(cache.Lineage(0), cache.Lineage(0) + 3),
              ::testing::ElementsAre(0, 1, 0));
  EXPECT_THAT(std::vector<int>(cache.Lineage(1), cache.Lineage(1) + 3),
              ::testing::ElementsAre(0, 1, 1));
  EXPECT_THAT(std::vector<int>(cache.Lineage(2), cache.Lineage(2) + 3),
              ::testing::ElementsAre(2, 0, 2));

  // Fewer rows (a finished sentence removed).
  cache.Reorder({2});
  cache.AppendStep();
  WriteStep(cache, 3, 1);
  EXPECT_EQ(cache.rows(), 1);
  EXPECT_THAT(std::vector<int>(cache.Lineage(0), cache.Lineage(0) + 4),
              ::testing::ElementsAre(2, 0, 2, 0));
  CheckAgainstModel(cache, {{2, 0, 2, 0}});
}

// 70 steps: the lineage table grows past 16, 32 and 64 entries and must keep every old entry.
TEST(KvCacheTest, RandomReordersAcrossCapacityGrowth) {
  std::mt19937 rng(18);
  KvCache cache(kLayers, kWidth);
  RunRandomBatch(cache, rng, 4, 70, kWidth, /*check_every_step=*/true);
}

// Growth without any Reorder (greedy search with no finished rows): identity lineage throughout.
TEST(KvCacheTest, GrowthWithoutReorderKeepsIdentityLineage) {
  KvCache cache(kLayers, kWidth);
  LineageModel model(3);
  cache.AddRows(3);
  for (int step = 0; step < 40; ++step) {
    cache.AppendStep();
    WriteStep(cache, step, 3);
    for (int r = 0; r < 3; ++r) model[r].push_back(r);
  }
  CheckAgainstModel(cache, model);
}

// One cache serves batch after batch: after Clear, a batch with more rows and more steps than the
// previous one ended with (its lineage table was sized for one row) must work as on a new cache.
TEST(KvCacheTest, ClearThenReuseWithMoreRowsAndSteps) {
  std::mt19937 rng(19);
  KvCache cache(kLayers, kWidth);
  RunRandomBatch(cache, rng, 2, 20, kWidth, /*check_every_step=*/false);
  cache.Reorder({0});
  cache.Clear();
  EXPECT_EQ(cache.steps(), 0);
  RunRandomBatch(cache, rng, kMaxRows, 45, kWidth, /*check_every_step=*/true);
  cache.Clear();
  RunRandomBatch(cache, rng, 1, 3, kWidth, /*check_every_step=*/true);
}

// Wide rows: blocks of 2 * 2 * rows * 1024 floats fill the cache's storage many times over (its
// allocation unit is a few MiB), so blocks come from several allocations, before and after Clear.
TEST(KvCacheTest, LargeBlocksAcrossStorageChunks) {
  std::mt19937 rng(20);
  constexpr int kWideWidth = 1024;
  KvCache cache(kLayers, kWideWidth);
  RunRandomBatch(cache, rng, kMaxRows, 120, kWideWidth, /*check_every_step=*/false);
  cache.Clear();
  RunRandomBatch(cache, rng, kMaxRows, 100, kWideWidth, /*check_every_step=*/false);
}

// Continuous batching: rows join at later steps, each with its own birth and lineage, while
// others leave; blocks nobody reads are recycled. Checked against a hand-kept model of every row's
// birth and ancestors, over enough steps that storage would grow without bound if it were not
// recycled.
TEST(KvCacheTest, RowsJoiningLaterKeepTheirOwnHistoryAndStorageStaysBounded) {
  constexpr int kJoinWidth = 1024;  // Blocks of a few steps fill a storage chunk.
  struct RowModel {
    int64_t birth;
    std::vector<int> lineage;  // Block rows from birth on.
  };
  // Tags name the step modulo kMaxSteps: a lineage wrong by exactly that many steps is
  // implausible, and the tags stay exact floats.
  auto write_step = [](KvCache& cache, int64_t step, int rows) {
    for (int l = 0; l < kLayers; ++l) {
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < kJoinWidth; ++c) {
          cache.Keys(l, step)[r * kJoinWidth + c] =
              Tag(l, false, step % kMaxSteps, r, c, kJoinWidth);
          cache.Values(l, step)[r * kJoinWidth + c] =
              Tag(l, true, step % kMaxSteps, r, c, kJoinWidth);
        }
      }
    }
  };
  auto check = [](KvCache& cache, const std::vector<RowModel>& model) {
    ASSERT_EQ(cache.rows(), static_cast<int>(model.size()));
    for (int r = 0; r < cache.rows(); ++r) {
      ASSERT_EQ(cache.Birth(r), model[r].birth) << "row " << r;
      ASSERT_EQ(static_cast<int64_t>(model[r].lineage.size()), cache.steps() - model[r].birth);
      const int* lineage = cache.Lineage(r);
      for (size_t a = 0; a < model[r].lineage.size(); ++a) {
        ASSERT_EQ(lineage[a], model[r].lineage[a]) << "row " << r << " age " << a;
        const int64_t step = model[r].birth + static_cast<int64_t>(a);
        for (int l = 0; l < kLayers; ++l) {
          ASSERT_EQ(cache.Keys(l, step)[lineage[a] * kJoinWidth],
                    Tag(l, false, step % kMaxSteps, model[r].lineage[a], 0, kJoinWidth));
          ASSERT_EQ(
              cache.Values(l, step)[lineage[a] * kJoinWidth + kJoinWidth - 1],
              Tag(l, true, step % kMaxSteps, model[r].lineage[a], kJoinWidth - 1, kJoinWidth));
        }
      }
    }
  };

  std::mt19937 rng(21);
  KvCache cache(kLayers, kJoinWidth);
  std::vector<RowModel> model;
  size_t storage_after_warmup = 0;
  constexpr int kSteps = 3000;
  for (int64_t step = 0; step < kSteps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    // Rows live about 12 steps: each leaves with probability 1/12, and new ones join to keep
    // between 1 and kMaxRows - 2 rows.
    std::vector<int> parents;
    for (int r = 0; r < cache.rows(); ++r) {
      if (std::uniform_int_distribution<int>(0, 11)(rng) != 0) parents.push_back(r);
    }
    if (!parents.empty() && parents.size() < kMaxRows - 2 && rng() % 4 == 0) {
      parents.insert(parents.begin() + 1, parents[0]);  // A fork, as in beam search.
    }
    cache.Reorder(parents);
    std::vector<RowModel> next;
    for (int p : parents) next.push_back(model[p]);
    model = std::move(next);
    const int joining =
        std::uniform_int_distribution<int>(model.empty() ? 1 : 0, kMaxRows - 2 - cache.rows())(rng);
    cache.AddRows(joining);
    for (int j = 0; j < joining; ++j) model.push_back({step, {}});

    cache.AppendStep();
    write_step(cache, step, cache.rows());
    for (int r = 0; r < cache.rows(); ++r) model[r].lineage.push_back(r);
    check(cache, model);
    if (step == 200) storage_after_warmup = cache.storage_floats();
  }
  // Rows a dozen steps old on average need a few blocks each: storage stops growing once it has
  // seen the largest live window, instead of growing with every step.
  EXPECT_LE(cache.storage_floats(), 2 * storage_after_warmup);
}

}  // namespace
}  // namespace mtserve
