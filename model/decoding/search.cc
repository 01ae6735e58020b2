#include "model/decoding/search.h"

#include "model/ops/phase_profile.h"

namespace mtserve {

SearchParams MakeSearchParams(const ModelConfig& config, const DecodingOptions& options) {
  SearchParams params;
  params.start_id = config.decoder_start_token_id;
  params.eos_id = config.eos_token_id;
  params.vocab_size = config.vocab_size;
  params.max_length = EffectiveMaxLength(options, config);
  params.options = options;
  params.logits_processor = {config.never_generated_ids, config.eos_token_id, options.min_length};
  return params;
}

std::unique_ptr<Search> Search::Create(SearchParams params) {
  return params.options.beam_size == 1 ? CreateGreedy(std::move(params))
                                       : CreateBeam(std::move(params));
}

OutputColumns ScoreStep(ComputeContext& ctx, const SearchParams& params, Decoder& decoder,
                        VocabularySelection* selection, const std::vector<int>& ids,
                        const std::vector<int>& row_sentence, const std::vector<int>& lengths,
                        FloatBuffer& log_probs, std::vector<int>* alignment, bool normalize) {
  if (selection != nullptr) {
    ScopedPhase phase(ctx, Phase::kShortlist);
    selection->Prepare(decoder);
  }
  decoder.Step(ctx, ids, row_sentence, log_probs, alignment);
  OutputColumns columns{params.vocab_size};
  if (selection != nullptr) {
    ScopedPhase phase(ctx, Phase::kShortlist);
    columns = selection->columns();
    selection->Mask(log_probs.data(), row_sentence);
  }
  const int rows = static_cast<int>(ids.size());
  if (normalize) {
    params.logits_processor.Apply(ctx, log_probs.data(), rows, columns, lengths);
  } else {
    params.logits_processor.Suppress(ctx, log_probs.data(), rows, columns, lengths);
  }
  return columns;
}

std::vector<int> RowsNotCancelled(const SearchParams& params, const std::vector<int>& row_sentence,
                                  Decoder& decoder, std::vector<FinishedSentence>& finished) {
  std::vector<int> kept;
  kept.reserve(row_sentence.size());
  for (size_t first = 0; first < row_sentence.size();) {
    const int sentence = row_sentence[first];
    size_t end = first;
    while (end < row_sentence.size() && row_sentence[end] == sentence) ++end;
    if (params.cancelled(sentence)) {
      finished.push_back({sentence, {}});
      decoder.RemoveSentence(sentence);
    } else {
      for (size_t r = first; r < end; ++r) kept.push_back(static_cast<int>(r));
    }
    first = end;
  }
  return kept;
}

}  // namespace mtserve
