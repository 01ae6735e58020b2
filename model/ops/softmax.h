// Softmax and log-softmax along the last axis of a dense [rows, cols] matrix, in place, on oneDNN.
#ifndef MTSERVE_MODEL_OPS_SOFTMAX_H_
#define MTSERVE_MODEL_OPS_SOFTMAX_H_

#include <cstdint>

#include "model/ops/compute_context.h"

namespace mtserve {

void Softmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols);
void LogSoftmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_SOFTMAX_H_
