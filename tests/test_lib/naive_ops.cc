#include "tests/test_lib/naive_ops.h"

#include <cmath>

namespace mtserve::testing {

std::vector<float> RandomVector(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

const char* EpilogueName(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "kNone";
    case Epilogue::kRelu:
      return "kRelu";
    case Epilogue::kSwish:
      return "kSwish";
    case Epilogue::kGelu:
      return "kGelu";
    case Epilogue::kAddToOutput:
      return "kAddToOutput";
  }
  return "?";
}

double NaiveActivation(Epilogue e, double v) {
  switch (e) {
    case Epilogue::kRelu:
      return v > 0 ? v : 0;
    case Epilogue::kSwish:
      return v / (1 + std::exp(-v));
    case Epilogue::kGelu:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case Epilogue::kNone:
    case Epilogue::kAddToOutput:
      break;
  }
  return v;
}

std::vector<double> NaiveLinear(const std::vector<float>& x, int64_t rows, int64_t x_stride,
                                const std::vector<float>& w, const std::vector<float>& b, int in,
                                int out, Epilogue epilogue, const std::vector<float>& y_in) {
  std::vector<double> y(rows * out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      double v = b.empty() ? 0.0 : b[o];
      for (int i = 0; i < in; ++i) v += double{x[r * x_stride + i]} * w[o * in + i];
      if (epilogue == Epilogue::kAddToOutput) v += y_in[r * out + o];
      y[r * out + o] = NaiveActivation(epilogue, v);
    }
  }
  return y;
}

}  // namespace mtserve::testing
