// Search strategies over a started Decoder. Each input sentence starts from one row holding the
// decoder start token; rows of finished sentences leave the batch, so later steps get cheaper.
#ifndef MTSERVE_MODEL_DECODING_SEARCH_H_
#define MTSERVE_MODEL_DECODING_SEARCH_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/decoding/logits_processor.h"
#include "model/layers/decoder.h"
#include "model/ops/compute_context.h"

namespace mtserve {

struct SearchParams {
  int batch_size = 0;
  int start_id = 0;
  int eos_id = 0;
  int vocab_size = 0;
  int max_length = 0;  // Generated tokens, </s> included.
  DecodingOptions options;
  LogitsProcessor logits_processor;
  // Polled once per step for each unfinished sentence (an index into the batch); a sentence for
  // which it returns true leaves the batch at once and gets no hypotheses. The others go on.
  std::function<bool(int sentence)> cancelled;
};

// The parameters for decoding `batch_size` inputs of `config`'s model with `options`.
SearchParams MakeSearchParams(const ModelConfig& config, const DecodingOptions& options,
                              int batch_size);

// The rows to keep when the sentences `params.cancelled` names leave the batch; `row_sentence`
// maps rows to sentences, whose rows are contiguous. Marks those sentences in `cancelled`.
std::vector<int> RowsNotCancelled(const SearchParams& params, const std::vector<int>& row_sentence,
                                  std::vector<bool>& cancelled);

// Keeps rows[kept[0]], rows[kept[1]], ... (kept ascending) in that order, dropping the others.
template <typename T>
void KeepRows(std::vector<T>& rows, const std::vector<int>& kept) {
  for (size_t i = 0; i < kept.size(); ++i) {
    if (static_cast<int>(i) != kept[i]) rows[i] = std::move(rows[kept[i]]);
  }
  rows.resize(kept.size());
}

// Greedy search (beam_size 1): the best token at every step, or with sampling_topk > 1 a token
// drawn from the k best at the given temperature. One hypothesis per input.
absl::StatusOr<std::vector<std::vector<Hypothesis>>> GreedySearch(ComputeContext& ctx,
                                                                  Decoder& decoder,
                                                                  const SearchParams& params);

// Beam search with length-normalised scores, returning num_hypotheses per input, best first.
absl::StatusOr<std::vector<std::vector<Hypothesis>>> BeamSearch(ComputeContext& ctx,
                                                                Decoder& decoder,
                                                                const SearchParams& params);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_SEARCH_H_
