#include "model/decoding/logits_processor.h"

#include <cmath>

#include "model/ops/phase_profile.h"
#include "model/ops/softmax.h"

namespace mtserve {

void LogitsProcessor::Apply(ComputeContext& ctx, float* logits, int rows,
                            const OutputColumns& columns, const std::vector<int>& lengths) const {
  const int eos = columns.Column(eos_id);
  ScopedPhase phase(ctx, Phase::kLogits);
  for (int r = 0; r < rows; ++r) {
    float* row = logits + static_cast<size_t>(r) * columns.count;
    for (int id : suppressed_ids) {
      if (const int column = columns.Column(id); column >= 0) row[column] = -INFINITY;
    }
    if (lengths[r] < min_length && eos >= 0) row[eos] = -INFINITY;
  }
  LogSoftmax(ctx, logits, rows, columns.count);
}

}  // namespace mtserve
