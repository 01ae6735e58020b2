// LogSoftmaxTopK (as dispatched: AVX-512 where the CPU has it, and its portable path) and
// ApplyLogNormalizer against a naive reference written from the definitions:
// the whole row's log-softmax in double precision (log-sum-exp about the maximum), then a stable
// sort by it, best first, so that equal values keep the lower column first and -inf columns come
// after every finite one. No code is shared with model/.
//
// Tolerance. The kernel sums n exponentials in float in an order of its own and rescales the sum
// when a later block raises the maximum; its exponential is a polynomial within 2 ulp. A
// log-probability is (x - max) - log(sum): the error of log(sum) is about n * eps relative to the
// sum, i.e. at most n * 6e-8 absolute (3e-3 for 54,688 columns in the worst case, ~sqrt(n) * eps
// in practice), plus an ulp of |x - max| (up to 2e-6 for logits 30 apart). 1e-5 absolute plus
// 1e-6 relative flags any real mistake (a missed column, a stale maximum, a wrong rescale all
// move the normaliser by 1e-3 or more) without flagging rounding.
#include "model/decoding/log_softmax_top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace mtserve {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<double> NaiveLogSoftmax(const std::vector<float>& row) {
  double max = -kInf;
  for (float x : row) max = std::max<double>(max, x);
  double sum = 0;
  for (float x : row) sum += std::exp(x - max);
  std::vector<double> out(row.size());
  for (size_t i = 0; i < row.size(); ++i) {
    out[i] = max == -kInf ? -kInf : (row[i] - max) - std::log(sum);
  }
  return out;
}

void ExpectClose(float got, double want, const char* what, int i) {
  if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what << " " << i;
  } else {
    EXPECT_NEAR(got, want, 1e-5 + 1e-6 * std::abs(want)) << what << " " << i;
  }
}

// Checks LogSoftmaxTopK(row, k) against the reference, that nothing past min(k, n) is written,
// and that ApplyLogNormalizer with its normaliser gives the reference's whole row.
void Check(const std::vector<float>& row, int k) {
  const int n = static_cast<int>(row.size());
  SCOPED_TRACE(::testing::Message() << "n=" << n << " k=" << k);
  const std::vector<double> want = NaiveLogSoftmax(row);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return want[a] > want[b]; });
  const int kept = std::min(k, n);

  for (auto* kernel : {&LogSoftmaxTopK, &LogSoftmaxTopKPortable}) {
    SCOPED_TRACE(kernel == &LogSoftmaxTopK ? "dispatched" : "portable");
    constexpr int kSentinel = -12345;
    std::vector<int> ids(k + 3, kSentinel);
    std::vector<float> values(k + 3, 7.f);
    const LogNormalizer normalizer = kernel(row.data(), n, k, ids.data(), values.data());
    for (int i = 0; i < kept; ++i) {
      ASSERT_EQ(ids[i], order[i]) << "rank " << i;
      ExpectClose(values[i], want[order[i]], "rank", i);
    }
    for (int i = kept; i < k + 3; ++i) {
      EXPECT_EQ(ids[i], kSentinel) << "written past min(k, n) at " << i;
      EXPECT_EQ(values[i], 7.f) << "written past min(k, n) at " << i;
    }

    std::vector<float> normalized = row;
    ApplyLogNormalizer(normalized.data(), n, normalizer);
    for (int i = 0; i < n; ++i) {
      ExpectClose(normalized[i], want[i], "column", i);
      ExpectClose(normalizer.LogProb(row[i]), want[i], "LogProb of column", i);
    }
  }
}

const int kWidths[] = {1, 2, 15, 16, 17, 255, 256, 257, 1000, 7708, 54688};

TEST(LogSoftmaxTopKTest, MatchesReferenceOnRandomRows) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> logit(-15.f, 15.f);
  for (int n : kWidths) {
    for (int k : {1, 2, 8, 16, 33, 300}) {
      std::vector<float> row(n);
      for (float& x : row) x = logit(rng);
      Check(row, k);
    }
  }
}

// Rows whose maximum keeps rising (each block raises it: the sum is rescaled every time), falling
// (set by the first block), and far from zero (exp(x) alone would overflow or vanish).
TEST(LogSoftmaxTopKTest, MaximumAnywhereAndLargeLogits) {
  for (int n : {17, 300, 4099, 54688}) {
    std::vector<float> ascending(n);
    for (int i = 0; i < n; ++i) ascending[i] = -20.f + 40.f * i / n;
    std::vector<float> descending(ascending.rbegin(), ascending.rend());
    for (int k : {1, 8}) {
      Check(ascending, k);
      Check(descending, k);
      for (float offset : {-1000.f, 1000.f}) {
        std::vector<float> shifted = ascending;
        for (float& x : shifted) x += offset;
        Check(shifted, k);
      }
    }
  }
}

// Few distinct values: ties within and across chunks and blocks; the lower column comes first.
TEST(LogSoftmaxTopKTest, TiesGoToTheLowerColumn) {
  std::mt19937 rng(32);
  std::uniform_int_distribution<int> small(0, 3);
  for (int n : {3, 16, 17, 257, 1000, 7708}) {
    for (int k : {1, 2, 8, 33}) {
      std::vector<float> row(n);
      for (float& x : row) x = static_cast<float>(small(rng));
      Check(row, k);
    }
  }
  Check(std::vector<float>(600, 2.5f), 8);
}

// Masked (-inf) columns, as suppressed tokens and a shortlist's masks leave them: they add nothing
// to the sum and come last, only when the row has fewer than k finite columns.
TEST(LogSoftmaxTopKTest, MinusInfinityColumns) {
  std::mt19937 rng(33);
  std::uniform_real_distribution<float> logit(-10.f, 10.f);
  for (double share : {0.3, 0.9, 0.999}) {
    std::bernoulli_distribution masked(share);
    for (int n : {5, 17, 300, 7708}) {
      for (int k : {1, 4, 8, 40}) {
        std::vector<float> row(n);
        for (float& x : row) x = masked(rng) ? -kInf : logit(rng);
        Check(row, k);
      }
    }
  }
  // Whole blocks masked before, between and after the finite columns.
  std::vector<float> islands(3000, -kInf);
  islands[700] = 1.f;
  islands[701] = 3.f;
  islands[2999] = 2.f;
  Check(islands, 2);
  Check(islands, 8);
  // Nothing finite: every value -inf, the lowest columns first.
  std::vector<float> none(300, -kInf);
  Check(none, 8);
  int ids[2];
  float values[2];
  EXPECT_EQ(LogSoftmaxTopK(none.data(), 300, 2, ids, values).max, -kInf);
}

TEST(LogSoftmaxTopKTest, KNotLessThanN) {
  std::mt19937 rng(34);
  std::uniform_real_distribution<float> logit(-5.f, 5.f);
  for (int n : {1, 3, 16, 17}) {
    std::vector<float> row(n);
    for (float& x : row) x = logit(rng);
    Check(row, n);
    Check(row, n + 5);
  }
}

}  // namespace
}  // namespace mtserve
