#include <cstdint>
#include <random>

#include "model/decoding/sampler.h"
#include "model/decoding/search.h"

namespace mtserve {

absl::StatusOr<std::vector<std::vector<Hypothesis>>> GreedySearch(ComputeContext& ctx,
                                                                  Decoder& decoder,
                                                                  const SearchParams& params) {
  const int batch = params.batch_size;
  const int vocab = params.vocab_size;
  const DecodingOptions& options = params.options;
  const Sampler sampler(options.sampling_topk, options.sampling_temperature);

  std::vector<std::vector<Hypothesis>> results(batch, std::vector<Hypothesis>(1));
  std::vector<std::mt19937_64> generators;
  if (options.sampling_topk > 1) {
    for (int b = 0; b < batch; ++b) generators.push_back(Sampler::MakeGenerator(options.seed));
  }

  // Active rows: one per unfinished sentence.
  std::vector<int> ids(batch, params.start_id);
  std::vector<int> row_sentence(batch);
  for (int b = 0; b < batch; ++b) row_sentence[b] = b;
  std::vector<int> next_ids(batch);
  std::vector<int> parents;
  std::vector<int> kept_sentences;
  FloatBuffer log_probs;
  std::vector<bool> cancelled(batch, false);

  for (int step = 0; step < params.max_length && !ids.empty(); ++step) {
    if (params.cancelled) {
      const std::vector<int> kept = RowsNotCancelled(params, row_sentence, cancelled);
      if (kept.size() != ids.size()) {
        KeepRows(ids, kept);
        KeepRows(row_sentence, kept);
        decoder.Reorder(kept);
        if (ids.empty()) break;
      }
    }
    const int rows = static_cast<int>(ids.size());
    decoder.Step(ctx, ids, row_sentence, log_probs);
    params.logits_processor.Apply(ctx, log_probs.data(), rows, vocab, step);

#pragma omp parallel for schedule(static) if (rows > 1)
    for (int r = 0; r < rows; ++r) {
      const float* row = log_probs.data() + static_cast<size_t>(r) * vocab;
      next_ids[r] =
          sampler.Sample(row, vocab, generators.empty() ? nullptr : &generators[row_sentence[r]]);
    }

    parents.clear();
    kept_sentences.clear();
    for (int r = 0; r < rows; ++r) {
      const int token = next_ids[r];
      const float log_prob = log_probs.data()[static_cast<size_t>(r) * vocab + token];
      Hypothesis& hypothesis = results[row_sentence[r]][0];
      hypothesis.ids.push_back(token);
      hypothesis.token_log_probs.push_back(log_prob);
      hypothesis.log_prob += log_prob;
      if (token != params.eos_id) {
        parents.push_back(r);
        kept_sentences.push_back(row_sentence[r]);
      }
    }
    ids.clear();
    for (int r : parents) ids.push_back(next_ids[r]);
    row_sentence.swap(kept_sentences);
    decoder.Reorder(parents);
  }
  for (int b = 0; b < batch; ++b) {
    if (cancelled[b]) {
      results[b].clear();
    } else {
      results[b][0].score = results[b][0].log_prob;
    }
  }
  return results;
}

}  // namespace mtserve
