#include "model/decoding/logits_processor.h"

#include <cmath>

#include "model/ops/phase_profile.h"
#include "model/ops/softmax.h"

namespace mtserve {

void LogitsProcessor::Apply(ComputeContext& ctx, float* logits, int rows, int vocab_size,
                            const std::vector<int>& lengths) const {
  ScopedPhase phase(ctx, Phase::kLogits);
  for (int r = 0; r < rows; ++r) {
    float* row = logits + static_cast<size_t>(r) * vocab_size;
    for (int id : suppressed_ids) row[id] = -INFINITY;
    if (lengths[r] < min_length) row[eos_id] = -INFINITY;
  }
  LogSoftmax(ctx, logits, rows, vocab_size);
}

}  // namespace mtserve
