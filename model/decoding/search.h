// Search strategies over a Decoder, run one step at a time. Sentences join between steps
// (continuous batching: a server adds new inputs to a running decode) and leave as soon as they
// finish or are cancelled, so rows are only ever spent on unfinished sentences. Each sentence
// starts from one row holding the decoder start token and is decoded exactly as it would be
// alone: nothing in a search depends on the other sentences.
#ifndef MTSERVE_MODEL_DECODING_SEARCH_H_
#define MTSERVE_MODEL_DECODING_SEARCH_H_

#include <functional>
#include <memory>
#include <vector>

#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/decoding/logits_processor.h"
#include "model/decoding/term_constraints.h"
#include "model/decoding/vocabulary_selection.h"
#include "model/layers/decoder.h"
#include "model/model_config.h"
#include "model/ops/compute_context.h"

namespace mtserve {

struct SearchParams {
  int start_id = 0;
  int eos_id = 0;
  int vocab_size = 0;
  int max_length = 0;  // Generated tokens, </s> included, of any input (see InputMaxLength).
  DecodingOptions options;
  LogitsProcessor logits_processor;
  // Polled once per step for each unfinished sentence (a Decoder sentence id); a sentence for
  // which it returns true leaves at once and gets no hypotheses. The others go on.
  std::function<bool(int sentence)> cancelled;
  // Per target id (null: none), whether its piece continues the word before it (no word-start
  // mark, and a letter, digit or hyphen first): a constrained search never follows a placed term's
  // last token with one, so that a form stays a word of its own ("Zorb & Co", not "Zorb &
  // Corisiss").
  std::shared_ptr<const std::vector<bool>> word_continuations;
};

// The parameters for decoding inputs of `config`'s model with `options`.
SearchParams MakeSearchParams(const ModelConfig& config, const DecodingOptions& options);

class Search {
 public:
  // Greedy search (beam_size 1): the best token at every step, or with sampling_topk > 1 a token
  // drawn from the k best at the given temperature. One hypothesis per input. With term
  // constraints (term_tracker.h), greedy and sampling alike: once a token starts a form of an
  // unmet constraint, the form is continued (its most likely continuation, whatever is drawn);
  // </s> chosen while a constraint is unmet is replaced by the most likely token that starts one;
  // and when the tokens left to the length bound are just enough for the unmet constraints, the
  // most likely token that keeps them satisfiable is taken. A constraint whose source tokens are
  // known (TermConstraint::source_begin) starts where the decoder's alignment for the token
  // being generated falls among them (its forms' most likely first token); a match the model
  // began by itself is continued only towards a constraint whose source is unknown.
  static std::unique_ptr<Search> CreateGreedy(SearchParams params);
  // Beam search with length-normalised scores. With term constraints, dynamic beam allocation
  // (Post & Vilar 2018, allocated as Sockeye does): each row proposes, besides its best tokens,
  // those that continue its match in progress and those that start an unmet constraint; the
  // next beam is shared equally among banks of hypotheses by how many of the constraints'
  // tokens they have generated (TermTracker::TokensMet), the remainder to the bank that has
  // them all, and from the top down the slots a bank has no candidates for pass to the bank
  // below; </s> is allowed only once all are met, and an ending counts when it ranks within
  // the beam among the candidates of the rows that meet them all. The length bound restricts
  // tokens as in greedy search. Such a sentence stops as soon as it has beam_size ended
  // hypotheses, and returns hypotheses cut at the bound only for want of ended ones. A
  // constraint whose source tokens are known (TermConstraint::source_begin) is proposed only by
  // the rows whose alignment for the token being generated falls among them (besides their best
  // tokens), by rows whose best token is </s>, and under the length bound; its match is continued
  // by proposals only where it began so. Sentences with constraints compute the alignment
  // whether or not it is returned.
  static std::unique_ptr<Search> CreateBeam(SearchParams params);
  // The one `params.options` asks for.
  static std::unique_ptr<Search> Create(SearchParams params);

  virtual ~Search() = default;

  // Starts decoding `sentence` of `source_tokens` tokens (</s> included), already added to
  // `decoder`, from the next step; it generates at most InputMaxLength tokens. With
  // `constraints` (validated by ValidateTermConstraints; null or none: an unconstrained
  // sentence, decoded exactly as without them), every hypothesis it returns meets each of them,
  // whether it ends with </s> or at the length bound, and says where in Hypothesis::terms.
  // `candidates`: the ids it may generate by a lexical shortlist (sorted, unique; see
  // VocabularySelection), or empty: any. Within a search, either every sentence has candidates
  // or none has.
  virtual void Add(Decoder& decoder, int sentence, int source_tokens,
                   std::shared_ptr<const TermConstraints> constraints,
                   std::vector<int> candidates = {}) = 0;

  // Sentences still decoding.
  virtual int sentences() const = 0;

  // Bytes held: log-probabilities, hypotheses, and for sentences with constraints the
  // constraints (held while they decode), their TermTrackers, the terms their hypotheses placed
  // and a step's candidates and proposals (DecodeMemory::Terms bounds these).
  virtual size_t memory_bytes() const = 0;

  // One step for every sentence. Appends those that finish, or were cancelled, to `finished` and
  // removes them from `decoder`.
  virtual void Step(ComputeContext& ctx, Decoder& decoder,
                    std::vector<FinishedSentence>& finished) = 0;
};

// One decoder step for every row (row r feeds ids[r] and belongs to sentence row_sentence[r];
// lengths[r]: the tokens it generated before), its logits turned into log-probabilities in
// `log_probs` by the shortlist's masks (`selection`, null: none) and the logits processor; with
// `normalize` false, left as logits with the masked and suppressed columns at -inf, for the
// caller to normalise (LogSoftmaxTopK). Returns the columns of `log_probs`.
OutputColumns ScoreStep(ComputeContext& ctx, const SearchParams& params, Decoder& decoder,
                        VocabularySelection* selection, const std::vector<int>& ids,
                        const std::vector<int>& row_sentence, const std::vector<int>& lengths,
                        FloatBuffer& log_probs, std::vector<int>* alignment, bool normalize);

// Keeps rows[kept[0]], rows[kept[1]], ... (kept ascending) in that order, dropping the others.
template <typename T>
void KeepRows(std::vector<T>& rows, const std::vector<int>& kept) {
  for (size_t i = 0; i < kept.size(); ++i) {
    if (static_cast<int>(i) != kept[i]) rows[i] = std::move(rows[kept[i]]);
  }
  rows.resize(kept.size());
}

// The rows to keep when the sentences `params.cancelled` names leave; `row_sentence` maps rows to
// sentences, whose rows are contiguous. Appends those sentences to `finished`, without
// hypotheses, and removes them from `decoder`.
std::vector<int> RowsNotCancelled(const SearchParams& params, const std::vector<int>& row_sentence,
                                  Decoder& decoder, std::vector<FinishedSentence>& finished);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_SEARCH_H_
