#include "model/layers/embeddings.h"

#include <cmath>
#include <cstring>

#include "model/kernels/parallel_for.h"

namespace mtserve {

std::vector<float> SinusoidalPositions(int num_positions, int dim) {
  // Angle of column j: pos / 10000^(2*(j/2)/dim). Hugging Face puts the sin of the even columns'
  // angles in the first half and the cos of the odd columns' angles in the second half.
  std::vector<float> table(static_cast<size_t>(num_positions) * dim);
  const int half = (dim + 1) / 2;
  for (int pos = 0; pos < num_positions; ++pos) {
    float* row = table.data() + static_cast<size_t>(pos) * dim;
    for (int j = 0; j < dim; ++j) {
      const double angle = pos / std::pow(10000.0, 2.0 * (j / 2) / dim);
      if (j % 2 == 0) {
        row[j / 2] = static_cast<float>(std::sin(angle));
      } else {
        row[half + j / 2] = static_cast<float>(std::cos(angle));
      }
    }
  }
  return table;
}

Embeddings::Embeddings(const std::vector<float>& table, int vocab_size, int dim, float scale,
                       int max_positions)
    : vocab_size_(vocab_size), dim_(dim), scale_(scale), max_positions_(max_positions) {
  std::memcpy(table_.Reserve(table.size()), table.data(), table.size() * sizeof(float));
  const std::vector<float> positions = SinusoidalPositions(max_positions, dim);
  std::memcpy(positions_.Reserve(positions.size()), positions.data(),
              positions.size() * sizeof(float));
}

Embeddings::Embeddings(const Linear* tied, float scale, int max_positions)
    : vocab_size_(tied->out_features()),
      dim_(tied->in_features()),
      scale_(scale),
      max_positions_(max_positions),
      tied_(tied) {
  const std::vector<float> positions = SinusoidalPositions(max_positions, dim_);
  std::memcpy(positions_.Reserve(positions.size()), positions.data(),
              positions.size() * sizeof(float));
}

void Embeddings::Forward(const int* ids, const int* positions, int n, float* out) const {
  ParallelFor(n, n > 64, [&](int64_t i) {
    const float* position = positions_.data() + static_cast<size_t>(positions[i]) * dim_;
    float* y = out + static_cast<size_t>(i) * dim_;
    if (tied_ != nullptr) {
      tied_->CopyWeightRow(ids[i], y);
    } else {
      std::memcpy(y, table_.data() + static_cast<size_t>(ids[i]) * dim_, dim_ * sizeof(float));
    }
#pragma omp simd
    for (int j = 0; j < dim_; ++j) y[j] = y[j] * scale_ + position[j];
  });
}

}  // namespace mtserve
