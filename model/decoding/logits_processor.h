// Turns the decoder's logits into the log-probabilities a search chooses from: tokens that are
// never generated (pad, bad_words_ids) and, before min_length, </s> get -inf, then log-softmax
// (or, for beam search and greedy search without sampling, LogSoftmaxTopK over the suppressed
// logits).
#ifndef MTSERVE_MODEL_DECODING_LOGITS_PROCESSOR_H_
#define MTSERVE_MODEL_DECODING_LOGITS_PROCESSOR_H_

#include <vector>

#include "model/decoding/output_columns.h"
#include "model/ops/compute_context.h"

namespace mtserve {

struct LogitsProcessor {
  std::vector<int> suppressed_ids;
  int eos_id = 0;
  int min_length = 0;

  // logits: [rows, columns.count], replaced by log-probabilities (over each row's columns).
  // lengths[r]: the tokens row r generated before this one.
  void Apply(ComputeContext& ctx, float* logits, int rows, const OutputColumns& columns,
             const std::vector<int>& lengths) const;
  // Apply without the log-softmax: only the suppressed tokens get -inf.
  void Suppress(ComputeContext& ctx, float* logits, int rows, const OutputColumns& columns,
                const std::vector<int>& lengths) const;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_LOGITS_PROCESSOR_H_
