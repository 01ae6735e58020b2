// Naive references of the engine's ops, written from the mathematical definitions in double
// precision with no code shared with model/, for the op tests (ops_test.cc) and the
// reduced-precision op tests (quantized_ops_test.cc).
#ifndef MTSERVE_TESTS_TEST_LIB_NAIVE_OPS_H_
#define MTSERVE_TESTS_TEST_LIB_NAIVE_OPS_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "model/ops/linear.h"

namespace mtserve::testing {

// n values uniform in [lo, hi).
std::vector<float> RandomVector(std::mt19937& rng, size_t n, float lo = -1.f, float hi = 1.f);

const char* EpilogueName(Epilogue e);

// The activation of `e` applied to v (v itself for kNone and kAddToOutput).
double NaiveActivation(Epilogue e, double v);

// y[r][o] = epilogue(sum_i x[r][i] * w[o][i] + b[o]); `y_in` is y's value on entry (kAddToOutput).
std::vector<double> NaiveLinear(const std::vector<float>& x, int64_t rows, int64_t x_stride,
                                const std::vector<float>& w, const std::vector<float>& b, int in,
                                int out, Epilogue epilogue, const std::vector<float>& y_in);

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_NAIVE_OPS_H_
