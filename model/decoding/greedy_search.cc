#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "model/decoding/log_softmax_top_k.h"
#include "model/decoding/sampler.h"
#include "model/decoding/search.h"
#include "model/decoding/term_tracker.h"
#include "model/kernels/parallel_for.h"
#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

class GreedySearch : public Search {
 public:
  explicit GreedySearch(SearchParams params)
      : params_(std::move(params)),
        sampler_(params_.options.sampling_topk, params_.options.sampling_temperature) {}

  void Add(Decoder& decoder, int sentence, int source_tokens,
           std::shared_ptr<const TermConstraints> constraints,
           std::vector<int> candidates) override {
    decoder.AddRows(1);
    ids_.push_back(params_.start_id);
    row_sentence_.push_back(sentence);
    if (static_cast<size_t>(sentence) >= hypotheses_.size()) {
      hypotheses_.resize(sentence + 1);
      generators_.resize(sentence + 1);
      max_lengths_.resize(sentence + 1);
      trackers_.resize(sentence + 1);
      progress_.resize(sentence + 1);
      guided_.resize(sentence + 1);
      constraints_.resize(sentence + 1);
    }
    hypotheses_[sentence] = Hypothesis();
    Release(sentence);
    progress_[sentence] = TermProgress();
    guided_[sentence] = false;
    if (constraints != nullptr && !constraints->terms.empty()) {
      trackers_[sentence] = std::make_unique<TermTracker>(*constraints);
      constraints_[sentence] = std::move(constraints);
    }
    max_lengths_[sentence] = InputMaxLength(params_.options, params_.max_length, source_tokens);
    if (!candidates.empty()) {
      if (selection_ == nullptr) {
        selection_ =
            std::make_unique<VocabularySelection>(params_.vocab_size, decoder.always_outputs());
      }
      selection_->Add(sentence, std::move(candidates));
    }
    // Each sentence draws from its own generator, so its sample does not depend on the others.
    if (params_.options.sampling_topk > 1) {
      generators_[sentence] = Sampler::MakeGenerator(params_.options.seed);
    }
  }

  int sentences() const override { return static_cast<int>(ids_.size()); }

  size_t memory_bytes() const override {
    size_t bytes = log_probs_.bytes();
    for (const Hypothesis& h : hypotheses_) {
      bytes += (h.ids.capacity() + h.alignment.capacity()) * sizeof(int) +
               h.token_log_probs.capacity() * sizeof(float) +
               h.terms.capacity() * sizeof(PlacedTerm);
    }
    for (size_t s = 0; s < trackers_.size(); ++s) {
      if (trackers_[s] != nullptr) bytes += trackers_[s]->memory_bytes();
      if (constraints_[s] != nullptr) bytes += MemoryBytes(*constraints_[s]);
    }
    bytes += tokens_.capacity() * sizeof(int);
    if (selection_ != nullptr) bytes += selection_->memory_bytes();
    return bytes;
  }

  void Step(ComputeContext& ctx, Decoder& decoder,
            std::vector<FinishedSentence>& finished) override {
    ScopedPhase phase(ctx, Phase::kSearch);
    if (params_.cancelled) {
      const size_t before = finished.size();
      const std::vector<int> kept = RowsNotCancelled(params_, row_sentence_, decoder, finished);
      for (size_t i = before; i < finished.size(); ++i) Release(finished[i].sentence);
      if (kept.size() != ids_.size()) {
        KeepRows(ids_, kept);
        KeepRows(row_sentence_, kept);
        decoder.Reorder(kept);
      }
    }
    const int rows = static_cast<int>(ids_.size());
    if (rows == 0) return;
    const bool with_alignment = params_.options.return_alignment;
    // Rows of sentences with constraints need it to place their terms (ConstrainedToken).
    bool need_alignment = with_alignment;
    for (int r = 0; r < rows && !need_alignment; ++r) {
      need_alignment = trackers_[row_sentence_[r]] != nullptr;
    }
    lengths_.resize(rows);
    for (int r = 0; r < rows; ++r) {
      lengths_[r] = static_cast<int>(hypotheses_[row_sentence_[r]].ids.size());
    }
    // Without sampling, the best token and its log-probability come from one pass over the logits
    // (LogSoftmaxTopK), and only the rows of sentences with constraints (ConstrainedToken reads
    // more of them) are normalised whole. Sampling normalises every row first.
    const bool sampling = params_.options.sampling_topk > 1;
    columns_ = ScoreStep(ctx, params_, decoder, selection_.get(), ids_, row_sentence_, lengths_,
                         log_probs_, need_alignment ? &alignment_ : nullptr, sampling);
    const int width = columns_.count;

    phase.Switch(Phase::kTopK);
    next_ids_.resize(rows);
    next_log_probs_.resize(rows);
    ParallelFor(rows, /*worth_sharing=*/true, [&](int64_t r) {
      float* row = log_probs_.data() + static_cast<size_t>(r) * width;
      if (sampling) {
        next_ids_[r] = columns_.Id(sampler_.Sample(row, width, &generators_[row_sentence_[r]]));
        return;
      }
      int column = 0;
      const LogNormalizer normalizer = LogSoftmaxTopK(row, width, 1, &column, &next_log_probs_[r]);
      next_ids_[r] = columns_.Id(column);
      if (trackers_[row_sentence_[r]] != nullptr) ApplyLogNormalizer(row, width, normalizer);
    });

    phase.Switch(Phase::kSearch);
    kept_.clear();
    for (int r = 0; r < rows; ++r) {
      const int sentence = row_sentence_[r];
      Hypothesis& hypothesis = hypotheses_[sentence];
      if (trackers_[sentence] != nullptr) {
        bool guided = false;
        next_ids_[r] = ConstrainedToken(r, sentence, next_ids_[r], guided);
        const TermProgress before = progress_[sentence];
        const TermTracker::Advanced advanced = trackers_[sentence]->Advance(
            before, next_ids_[r], static_cast<int>(hypothesis.ids.size()));
        progress_[sentence] = advanced.progress;
        guided_[sentence] =
            advanced.progress.node != 0 && (guided || (guided_[sentence] && before.node != 0 &&
                                                       advanced.progress.begin == before.begin));
        // A piece that glues onto the last term (only where it makes it a longer form: see
        // ConstrainedToken) grows it.
        if (!hypothesis.terms.empty() && params_.word_continuations != nullptr &&
            (*params_.word_continuations)[next_ids_[r]]) {
          if (std::optional<PlacedTerm> extended = trackers_[sentence]->Extended(
                  hypothesis.terms.back(), hypothesis.ids, next_ids_[r])) {
            hypothesis.terms.back() = *extended;
          }
        }
        if (advanced.placed.has_value()) hypothesis.terms.push_back(*advanced.placed);
      }
      const int token = next_ids_[r];
      const float log_prob =
          sampling || trackers_[sentence] != nullptr
              ? columns_.Of(log_probs_.data() + static_cast<size_t>(r) * width, token)
              : next_log_probs_[r];
      hypothesis.ids.push_back(token);
      hypothesis.token_log_probs.push_back(log_prob);
      if (with_alignment) hypothesis.alignment.push_back(alignment_[r]);
      hypothesis.log_prob += log_prob;
      if (token == params_.eos_id ||
          static_cast<int>(hypothesis.ids.size()) == max_lengths_[sentence]) {
        hypothesis.score = hypothesis.log_prob;
        hypothesis.truncated = token == params_.eos_id ? 0 : 1;
        finished.push_back({sentence, {std::move(hypothesis)}});
        decoder.RemoveSentence(sentence);
        Release(sentence);
      } else {
        kept_.push_back(r);
        ids_[r] = token;
      }
    }
    if (static_cast<int>(kept_.size()) != rows) {
      KeepRows(ids_, kept_);
      KeepRows(row_sentence_, kept_);
    }
    decoder.Reorder(kept_);
  }

 private:
  // Drops `sentence`'s constraints and tracker.
  void Release(int sentence) {
    if (selection_ != nullptr) selection_->Remove(sentence);
    trackers_[sentence].reset();
    constraints_[sentence].reset();
  }

  // The token row `r` of a constrained `sentence` takes instead of `chosen` (see CreateGreedy);
  // `guided` says whether it starts a term where the alignment reaches the term's source.
  int ConstrainedToken(int r, int sentence, int chosen, bool& guided) {
    const TermTracker& tracker = *trackers_[sentence];
    const TermProgress& progress = progress_[sentence];
    const int position = static_cast<int>(hypotheses_[sentence].ids.size());
    const int left = max_lengths_[sentence] - position - 1;
    const float* row = log_probs_.data() + static_cast<size_t>(r) * columns_.count;
    auto log_prob = [&](int token) { return columns_.Of(row, token); };
    // A placed term's last token is not followed by one that glues onto its word: the best
    // token that does not, instead.
    const std::vector<PlacedTerm>& placed = hypotheses_[sentence].terms;
    if (!placed.empty() && placed.back().end == position && params_.word_continuations != nullptr &&
        (*params_.word_continuations)[chosen] &&
        !tracker.Extended(placed.back(), hypotheses_[sentence].ids, chosen).has_value()) {
      int best = params_.eos_id;
      for (int column = 0; column < columns_.count; ++column) {
        const int token = columns_.Id(column);
        if (token >= 0 && !(*params_.word_continuations)[token] && row[column] > log_prob(best)) {
          best = token;
        }
      }
      chosen = best;
    }
    tokens_.clear();
    if (tracker.Forced(progress, left)) {
      tracker.Proposals(progress, position, tokens_);
      std::erase_if(tokens_, [&](int token) {
        return !tracker.Permitted(progress, token, position, left, params_.eos_id);
      });
    } else if (progress.node != 0 && guided_[sentence]) {
      tracker.Continuations(progress, tokens_);
    } else if (const int aligned = tracker.AlignedTerm(progress, alignment_[r]); aligned >= 0) {
      // The token aligns with an unmet term's source: the term starts here (whatever match the
      // model began by itself elsewhere).
      tracker.StartsAmong(progress, uint64_t{1} << aligned, position, tokens_);
      guided = true;
    } else if (progress.node != 0) {
      // A match the model began by itself: continued towards a term whose source is unknown
      // (one whose source is known starts where the alignment reaches it).
      tracker.ContinuationsAmong(progress, ~tracker.located(), tokens_);
      if (tokens_.empty()) return chosen;
    } else if (chosen == params_.eos_id && !tracker.AllMet(progress)) {
      tracker.Starts(progress, position, tokens_);
      guided = true;
    } else {
      return chosen;
    }
    int best = tokens_.empty() ? chosen : tokens_[0];
    for (int token : tokens_) {
      if (log_prob(token) > log_prob(best)) best = token;
    }
    return best;
  }

  const SearchParams params_;
  const Sampler sampler_;
  // Per row: the next input token and its sentence.
  std::vector<int> ids_;
  std::vector<int> row_sentence_;
  // Per sentence id.
  std::vector<Hypothesis> hypotheses_;
  std::vector<std::mt19937_64> generators_;
  std::vector<int> max_lengths_;
  std::vector<std::unique_ptr<const TermTracker>> trackers_;  // Null: unconstrained.
  std::vector<std::shared_ptr<const TermConstraints>> constraints_;
  std::vector<TermProgress> progress_;
  std::vector<char> guided_;  // The match in progress began where the alignment said, or at </s>.

  std::unique_ptr<VocabularySelection> selection_;  // With a shortlist.
  // A step's log-probabilities; without sampling, its logits (suppressed and masked columns
  // -inf) but in the rows of sentences with constraints.
  FloatBuffer log_probs_;
  OutputColumns columns_;  // Of log_probs_.
  std::vector<int> tokens_;
  std::vector<int> lengths_;
  std::vector<int> next_ids_;
  std::vector<float> next_log_probs_;  // Without sampling: of next_ids_.
  // Per row, this step's (with return_alignment, or for a sentence with constraints).
  std::vector<int> alignment_;
  std::vector<int> kept_;
};

}  // namespace

std::unique_ptr<Search> Search::CreateGreedy(SearchParams params) {
  return std::make_unique<GreedySearch>(std::move(params));
}

}  // namespace mtserve
