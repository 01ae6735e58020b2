#include "model/decoding/logits_processor.h"

#include <cmath>

#include "model/ops/phase_profile.h"
#include "model/ops/softmax.h"

namespace mtserve {
namespace {

void SuppressRows(const LogitsProcessor& processor, float* logits, int rows,
                  const OutputColumns& columns, const std::vector<int>& lengths) {
  const int eos = columns.Column(processor.eos_id);
  for (int r = 0; r < rows; ++r) {
    float* row = logits + static_cast<size_t>(r) * columns.count;
    for (int id : processor.suppressed_ids) {
      if (const int column = columns.Column(id); column >= 0) row[column] = -INFINITY;
    }
    if (lengths[r] < processor.min_length && eos >= 0) row[eos] = -INFINITY;
  }
}

}  // namespace

void LogitsProcessor::Apply(ComputeContext& ctx, float* logits, int rows,
                            const OutputColumns& columns, const std::vector<int>& lengths) const {
  ScopedPhase phase(ctx, Phase::kLogits);
  SuppressRows(*this, logits, rows, columns, lengths);
  LogSoftmax(ctx, logits, rows, columns.count);
}

void LogitsProcessor::Suppress(ComputeContext& ctx, float* logits, int rows,
                               const OutputColumns& columns,
                               const std::vector<int>& lengths) const {
  ScopedPhase phase(ctx, Phase::kLogits);
  SuppressRows(*this, logits, rows, columns, lengths);
}

}  // namespace mtserve
