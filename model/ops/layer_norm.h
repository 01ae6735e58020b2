// Layer normalisation over the last dimension: the weights of one, and their kernel
// (kernels/layer_norm_rows.h) on the calling thread's OpenMP team.
#ifndef MTSERVE_MODEL_OPS_LAYER_NORM_H_
#define MTSERVE_MODEL_OPS_LAYER_NORM_H_

#include <cstdint>
#include <vector>

#include "model/ops/aligned_buffer.h"

namespace mtserve {

class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(const std::vector<float>& gamma, const std::vector<float>& beta, float epsilon);

  int dim() const { return dim_; }
  // Bytes this op owns (gamma and beta, as allocated).
  int64_t memory_bytes() const {
    return static_cast<int64_t>(gamma_.allocated_bytes() + beta_.allocated_bytes());
  }
  // x: [rows, dim], normalised in place.
  void Forward(float* x, int64_t rows) const;

 private:
  int dim_ = 0;
  float epsilon_ = 0;
  FloatBuffer gamma_;
  FloatBuffer beta_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_LAYER_NORM_H_
