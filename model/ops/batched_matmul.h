// C[i] = A[i] · B[i] (+ M broadcast) over a batch of matrices given as 4-D strided views, on
// oneDNN's matmul. Strided views let attention read heads straight out of the projection output
// ([batch, time, heads, head_dim]) and write them back in the same layout: no transposes.
#ifndef MTSERVE_MODEL_OPS_BATCHED_MATMUL_H_
#define MTSERVE_MODEL_OPS_BATCHED_MATMUL_H_

#include <array>
#include <cstdint>

#include "model/ops/compute_context.h"

namespace mtserve {

struct StridedView {
  float* data;
  std::array<int64_t, 4> dims;
  std::array<int64_t, 4> strides;
};

// a: [d0, d1, m, k], b: [d0, d1, k, n], c: [d0, d1, m, n]; `add` (optional) is added to the product
// and may have size 1 in any dimension to broadcast (an attention mask: [d0, 1, 1, n]).
void BatchedMatMul(ComputeContext& ctx, const StridedView& a, const StridedView& b,
                   const StridedView& c, const StridedView* add = nullptr);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_BATCHED_MATMUL_H_
