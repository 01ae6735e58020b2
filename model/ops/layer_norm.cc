#include "model/ops/layer_norm.h"

#include <cstring>

#include "model/kernels/layer_norm_rows.h"

namespace mtserve {

LayerNorm::LayerNorm(const std::vector<float>& gamma, const std::vector<float>& beta, float epsilon)
    : dim_(static_cast<int>(gamma.size())), epsilon_(epsilon) {
  std::memcpy(gamma_.Reserve(dim_), gamma.data(), dim_ * sizeof(float));
  std::memcpy(beta_.Reserve(dim_), beta.data(), dim_ * sizeof(float));
}

void LayerNorm::Forward(float* x, int64_t rows) const {
  LayerNormRows(x, rows, dim_, gamma_.data(), beta_.data(), epsilon_);
}

}  // namespace mtserve
