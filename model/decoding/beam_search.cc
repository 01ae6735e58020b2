#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "model/decode_memory.h"
#include "model/decoding/log_softmax_top_k.h"
#include "model/decoding/search.h"
#include "model/decoding/term_tracker.h"
#include "model/kernels/parallel_for.h"
#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

// A live hypothesis: one row of the decoder.
struct Beam {
  int sentence;
  float log_prob;
  std::vector<int> ids;
  std::vector<float> token_log_probs;
  std::vector<int> alignment;  // With return_alignment only; follows the ids.
  // With term constraints only.
  TermProgress progress;
  std::vector<PlacedTerm> terms;
  // Its match in progress began where the alignment reached the term's source (SelectConstrained).
  bool guided = false;
};

struct Candidate {
  float log_prob;  // Of the whole hypothesis with this token.
  int row;
  int token;
  float token_log_prob;
};

// A candidate of a constrained sentence: with the progress it makes.
struct TermCandidate {
  Candidate candidate;
  TermProgress progress;
  std::optional<PlacedTerm> placed;
  std::optional<PlacedTerm> extended;  // The row's last term, grown by the token (Extended).
  bool guided;
};
static_assert(sizeof(TermCandidate) <= kTermCandidateBytes);

float NormalizedScore(float log_prob, int length, float length_penalty) {
  return length_penalty == 0 ? log_prob
                             : log_prob / std::pow(static_cast<float>(length), length_penalty);
}

// The best `beam_size` finished hypotheses of one sentence, best first.
class FinishedHypotheses {
 public:
  explicit FinishedHypotheses(int beam_size) : beam_size_(beam_size) {}

  void Add(Hypothesis hypothesis) {
    auto pos = std::upper_bound(hypotheses_.begin(), hypotheses_.end(), hypothesis.score,
                                [](float score, const Hypothesis& h) { return score > h.score; });
    hypotheses_.insert(pos, std::move(hypothesis));
    if (static_cast<int>(hypotheses_.size()) > beam_size_) hypotheses_.pop_back();
  }
  bool full() const { return static_cast<int>(hypotheses_.size()) >= beam_size_; }
  int size() const { return static_cast<int>(hypotheses_.size()); }
  float worst_score() const { return hypotheses_.back().score; }
  std::vector<Hypothesis>& hypotheses() { return hypotheses_; }
  const std::vector<Hypothesis>& hypotheses() const { return hypotheses_; }

 private:
  int beam_size_;
  std::vector<Hypothesis> hypotheses_;
};

// `last_alignment`: that of `last`'s token, with return_alignment; null without.
Hypothesis Finish(const Beam& beam, const Candidate* last, const int* last_alignment,
                  float length_penalty) {
  Hypothesis h;
  h.ids = beam.ids;
  h.token_log_probs = beam.token_log_probs;
  h.alignment = beam.alignment;
  h.terms = beam.terms;
  h.log_prob = beam.log_prob;
  if (last != nullptr) {
    h.ids.push_back(last->token);
    h.token_log_probs.push_back(last->token_log_prob);
    if (last_alignment != nullptr) h.alignment.push_back(*last_alignment);
    h.log_prob = last->log_prob;
  }
  // Only a hypothesis that ends with </s> was finished by the model; any other stopped at its
  // length bound.
  h.truncated = last != nullptr ? 0 : 1;
  h.score = NormalizedScore(h.log_prob, static_cast<int>(h.ids.size()), length_penalty);
  return h;
}

class BeamSearch : public Search {
 public:
  explicit BeamSearch(SearchParams params) : params_(std::move(params)) {}

  void Add(Decoder& decoder, int sentence, int source_tokens,
           std::shared_ptr<const TermConstraints> constraints,
           std::vector<int> candidates) override {
    decoder.AddRows(1);
    beams_.push_back({sentence, 0.f, {}, {}, {}, {}, {}, false});
    ids_.push_back(params_.start_id);
    if (static_cast<size_t>(sentence) >= finished_.size()) {
      finished_.resize(sentence + 1, FinishedHypotheses(params_.options.beam_size));
      max_lengths_.resize(sentence + 1);
      trackers_.resize(sentence + 1);
      constraints_.resize(sentence + 1);
    }
    finished_[sentence] = FinishedHypotheses(params_.options.beam_size);
    Release(sentence);
    if (constraints != nullptr && !constraints->terms.empty()) {
      trackers_[sentence] = std::make_unique<TermTracker>(*constraints);
      constraints_[sentence] = std::move(constraints);
      ++constrained_;
    }
    max_lengths_[sentence] = InputMaxLength(params_.options, params_.max_length, source_tokens);
    if (!candidates.empty()) {
      if (selection_ == nullptr) {
        selection_ =
            std::make_unique<VocabularySelection>(params_.vocab_size, decoder.always_outputs());
      }
      selection_->Add(sentence, std::move(candidates));
    }
    ++sentences_;
  }

  int sentences() const override { return sentences_; }

  size_t memory_bytes() const override {
    size_t bytes = log_probs_.bytes() + candidates_.capacity() * sizeof(Candidate);
    for (const std::vector<Beam>* beams : {&beams_, &next_beams_}) {
      for (const Beam& beam : *beams) {
        bytes += (beam.ids.capacity() + beam.alignment.capacity()) * sizeof(int) +
                 beam.token_log_probs.capacity() * sizeof(float) +
                 beam.terms.capacity() * sizeof(PlacedTerm);
      }
    }
    for (const FinishedHypotheses& finished : finished_) {
      for (const Hypothesis& h : finished.hypotheses()) {
        bytes += (h.ids.capacity() + h.alignment.capacity()) * sizeof(int) +
                 h.token_log_probs.capacity() * sizeof(float) +
                 h.terms.capacity() * sizeof(PlacedTerm);
      }
    }
    for (size_t s = 0; s < trackers_.size(); ++s) {
      if (trackers_[s] != nullptr) bytes += trackers_[s]->memory_bytes();
      if (constraints_[s] != nullptr) bytes += MemoryBytes(*constraints_[s]);
    }
    bytes += term_candidates_.capacity() * sizeof(TermCandidate) +
             (proposals_.capacity() + aligned_starts_.capacity() + bank_of_.capacity() +
              bank_candidates_.capacity() + bank_slots_.capacity()) *
                 sizeof(int) +
             taken_.capacity();
    if (selection_ != nullptr) bytes += selection_->memory_bytes();
    return bytes;
  }

  void Step(ComputeContext& ctx, Decoder& decoder,
            std::vector<FinishedSentence>& finished) override {
    ScopedPhase phase(ctx, Phase::kSearch);
    row_sentence_.resize(beams_.size());
    for (size_t r = 0; r < beams_.size(); ++r) row_sentence_[r] = beams_[r].sentence;
    if (params_.cancelled) {
      const size_t before = finished.size();
      const std::vector<int> kept = RowsNotCancelled(params_, row_sentence_, decoder, finished);
      for (size_t i = before; i < finished.size(); ++i) Release(finished[i].sentence);
      if (kept.size() != beams_.size()) {
        sentences_ -= static_cast<int>(finished.size() - before);
        KeepRows(beams_, kept);
        KeepRows(ids_, kept);
        KeepRows(row_sentence_, kept);
        decoder.Reorder(kept);
      }
    }
    const int rows = static_cast<int>(beams_.size());
    if (rows == 0) return;
    const int beam_size = params_.options.beam_size;
    const float length_penalty = params_.options.length_penalty;

    // Each row's alignment this step goes to the candidates it parents, so a hypothesis's
    // alignment follows its lineage exactly as its ids do. Rows of sentences with constraints
    // need it to place their terms (SelectConstrained) whether or not it is returned.
    const bool with_alignment = params_.options.return_alignment;
    bool need_alignment = with_alignment;
    for (int r = 0; r < rows && !need_alignment; ++r) {
      need_alignment = trackers_[beams_[r].sentence] != nullptr;
    }
    lengths_.resize(rows);
    for (int r = 0; r < rows; ++r) lengths_[r] = static_cast<int>(beams_[r].ids.size());
    columns_ = ScoreStep(ctx, params_, decoder, selection_.get(), ids_, row_sentence_, lengths_,
                         log_probs_, need_alignment ? &alignment_ : nullptr, /*normalize=*/false);
    const int width = columns_.count;
    // Twice the beam: even if every best candidate ends the sentence, a full beam continues
    // (a vocabulary smaller than that has fewer candidates to give).
    const int per_row = std::min(2 * beam_size, width);

    // The log-softmax and the candidates in one pass over each row's logits. Only the rows of
    // sentences with constraints, which read more of their row (SelectConstrained), are
    // normalised whole.
    phase.Switch(Phase::kTopK);
    candidate_ids_.resize(static_cast<size_t>(rows) * per_row);
    candidate_log_probs_.resize(candidate_ids_.size());
    ParallelFor(rows, /*worth_sharing=*/true, [&](int64_t r) {
      float* row = log_probs_.data() + static_cast<size_t>(r) * width;
      int* ids = candidate_ids_.data() + r * per_row;
      const LogNormalizer normalizer =
          LogSoftmaxTopK(row, width, per_row, ids, candidate_log_probs_.data() + r * per_row);
      for (int k = 0; k < per_row; ++k) ids[k] = columns_.Id(ids[k]);
      if (trackers_[beams_[r].sentence] != nullptr) ApplyLogNormalizer(row, width, normalizer);
    });

    phase.Switch(Phase::kSearch);
    next_beams_.clear();
    parents_.clear();
    ids_.clear();
    for (int first = 0; first < rows;) {
      const int sentence = beams_[first].sentence;
      int end = first;
      while (end < rows && beams_[end].sentence == sentence) ++end;
      // All beams of a sentence have the same length.
      const int length = static_cast<int>(beams_[first].ids.size()) + 1;
      const bool last_step = length == max_lengths_[sentence];
      FinishedHypotheses& done_hypotheses = finished_[sentence];

      const size_t next_first = next_beams_.size();
      if (trackers_[sentence] != nullptr) {
        SelectConstrained(first, end, per_row, *trackers_[sentence], done_hypotheses);
      } else {
        candidates_.clear();
        for (int r = first; r < end; ++r) {
          for (int k = 0; k < per_row; ++k) {
            const float token_log_prob = candidate_log_probs_[r * per_row + k];
            if (!std::isfinite(token_log_prob)) continue;
            candidates_.push_back({beams_[r].log_prob + token_log_prob, r,
                                   candidate_ids_[r * per_row + k], token_log_prob});
          }
        }
        // Best first; equal scores keep row then rank order, so results do not depend on the sort.
        std::stable_sort(
            candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });

        for (size_t i = 0; i < candidates_.size(); ++i) {
          const Candidate& c = candidates_[i];
          if (c.token == params_.eos_id) {
            // Only an ending that ranks within the beam counts as a finished hypothesis.
            if (static_cast<int>(i) < beam_size) {
              done_hypotheses.Add(Finish(beams_[c.row], &c,
                                         with_alignment ? &alignment_[c.row] : nullptr,
                                         length_penalty));
            }
            continue;
          }
          Beam& next = next_beams_.emplace_back(beams_[c.row]);
          next.log_prob = c.log_prob;
          next.ids.push_back(c.token);
          next.token_log_probs.push_back(c.token_log_prob);
          if (with_alignment) next.alignment.push_back(alignment_[c.row]);
          parents_.push_back(c.row);
          ids_.push_back(c.token);
          if (static_cast<int>(next_beams_.size() - next_first) == beam_size) break;
        }
      }

      // Done at max_length, or when the beam is full of finished hypotheses and the best live
      // one, normalised at its current length, cannot beat the worst of them (Hugging Face's
      // rule with early_stopping=False).
      // A sentence with term constraints stops as soon as the beam is full of finished
      // hypotheses (Hugging Face's early_stopping=True), and those cut at max_length only make
      // up for the ended ones missing: its live hypotheses, which </s> cannot end while a
      // constraint is unmet, would otherwise run on to max_length, where a degenerate one whose
      // constraint was forced in at the end outscores, normalised by its length, the ended ones
      // that paid for it in a short translation.
      const bool constrained = trackers_[sentence] != nullptr;
      bool done = last_step || next_beams_.size() == next_first;
      if (!done && done_hypotheses.full()) {
        const float best_live =
            NormalizedScore(next_beams_[next_first].log_prob, length, length_penalty);
        done = constrained || done_hypotheses.worst_score() >= best_live;
      }
      if (done) {
        if (last_step) {
          for (size_t i = next_first; i < next_beams_.size(); ++i) {
            if (constrained && done_hypotheses.size() >= params_.options.num_hypotheses) break;
            done_hypotheses.Add(Finish(next_beams_[i], nullptr, nullptr, length_penalty));
          }
        }
        next_beams_.resize(next_first);
        parents_.resize(next_first);
        ids_.resize(next_first);
        std::vector<Hypothesis>& hypotheses = done_hypotheses.hypotheses();
        hypotheses.resize(std::min<size_t>(hypotheses.size(), params_.options.num_hypotheses));
        finished.push_back({sentence, std::move(hypotheses)});
        decoder.RemoveSentence(sentence);
        Release(sentence);
        --sentences_;
      }
      first = end;
    }
    beams_.swap(next_beams_);
    decoder.Reorder(parents_);
  }

 private:
  // Drops `sentence`'s constraints and tracker, and the selection's buffers once no sentence
  // has constraints.
  void Release(int sentence) {
    if (selection_ != nullptr) selection_->Remove(sentence);
    if (trackers_[sentence] == nullptr) return;
    trackers_[sentence].reset();
    constraints_[sentence].reset();
    if (--constrained_ > 0) return;
    term_candidates_ = {};
    proposals_ = {};
    aligned_starts_ = {};
    bank_of_ = {};
    bank_candidates_ = {};
    bank_slots_ = {};
    taken_ = {};
  }

  // Adds the endings and next beams of the sentence of rows [first, end), which has term
  // constraints, by dynamic beam allocation (see CreateBeam).
  void SelectConstrained(int first, int end, int per_row, const TermTracker& tracker,
                         FinishedHypotheses& done_hypotheses) {
    const int beam_size = params_.options.beam_size;
    const int eos_id = params_.eos_id;
    const bool with_alignment = params_.options.return_alignment;
    // All beams of a sentence have the same length.
    const int position = static_cast<int>(beams_[first].ids.size());
    const int left = max_lengths_[beams_[first].sentence] - position - 1;

    term_candidates_.clear();
    for (int r = first; r < end; ++r) {
      const Beam& beam = beams_[r];
      const float* row = log_probs_.data() + static_cast<size_t>(r) * columns_.count;
      // A placed term's last token is not followed by one that glues onto its word.
      const bool after_term = !beam.terms.empty() && beam.terms.back().end == position &&
                              params_.word_continuations != nullptr;
      const size_t row_first = term_candidates_.size();
      auto add = [&](int token, bool aligned_start) {
        if (token < 0) return;  // A shortlist's padding column.
        const float token_log_prob = columns_.Of(row, token);
        // (Unless it makes the term a longer form of its own.)
        std::optional<PlacedTerm> extended;
        if (after_term && (*params_.word_continuations)[token]) {
          extended = tracker.Extended(beam.terms.back(), beam.ids, token);
          if (!extended.has_value()) return;
        }
        if (!std::isfinite(token_log_prob) ||
            !tracker.Permitted(beam.progress, token, position, left, eos_id)) {
          return;
        }
        TermTracker::Advanced advanced = tracker.Advance(beam.progress, token, position);
        const TermProgress& next = advanced.progress;
        const bool guided =
            next.node != 0 && (aligned_start || (beam.guided && beam.progress.node != 0 &&
                                                 next.begin == beam.progress.begin));
        term_candidates_.push_back({{beam.log_prob + token_log_prob, r, token, token_log_prob},
                                    next,
                                    advanced.placed,
                                    extended,
                                    guided});
      };
      // A row whose next token is restricted has only its proposals to give.
      const bool forced = tracker.Forced(beam.progress, left);
      const int* top = candidate_ids_.data() + r * per_row;
      // A row that aligns the token it generates with an unmet term's source proposes, besides
      // its best tokens, the starts of that term's forms; a term whose source is known is not
      // proposed elsewhere (but where the row would rather end), so it is placed where the
      // model translates its source rather than where the model's own word for it would be.
      // A match the model began by itself (its best tokens) is continued only towards a term
      // whose source is unknown, and gives way to the alignment.
      const bool guided = beam.guided && beam.progress.node != 0;
      const int aligned = forced || guided ? -1 : tracker.AlignedTerm(beam.progress, alignment_[r]);
      aligned_starts_.clear();
      if (aligned >= 0) {
        tracker.StartsAmong(beam.progress, uint64_t{1} << aligned, position, aligned_starts_);
      }
      auto aligned_start = [&](int token) {
        return std::binary_search(aligned_starts_.begin(), aligned_starts_.end(), token);
      };
      const bool ending = !forced && top[0] == eos_id && !tracker.AllMet(beam.progress);
      if (!forced) {
        for (int k = 0; k < per_row; ++k) add(top[k], aligned_start(top[k]));
      }
      proposals_.clear();
      if (forced) {
        tracker.Proposals(beam.progress, position, proposals_);
      } else {
        tracker.ContinuationsAmong(beam.progress, guided ? ~uint64_t{0} : ~tracker.located(),
                                   proposals_);
        tracker.StartsAmong(beam.progress, ending ? ~uint64_t{0} : ~tracker.located(), position,
                            proposals_);
        proposals_.insert(proposals_.end(), aligned_starts_.begin(), aligned_starts_.end());
        std::sort(proposals_.begin(), proposals_.end());
        proposals_.erase(std::unique(proposals_.begin(), proposals_.end()), proposals_.end());
      }
      for (int token : proposals_) {
        if (forced || std::find(top, top + per_row, token) == top + per_row) {
          // (A start where the row would end counts as guided too.)
          add(token, ending || aligned_start(token));
        }
      }
      // After a term, a row whose best tokens all glue onto it goes on with its best token that
      // does not, so that it still has a candidate.
      if (after_term && !forced && term_candidates_.size() == row_first) {
        int best = -1;  // A column.
        for (int column = 0; column < columns_.count; ++column) {
          const int token = columns_.Id(column);
          if (token < 0 || (*params_.word_continuations)[token] || !std::isfinite(row[column])) {
            continue;
          }
          if (best < 0 || row[column] > row[best]) best = column;
        }
        if (best >= 0) add(columns_.Id(best), false);
      }
    }
    // Best first; equal scores keep row then rank order, so results do not depend on the sort.
    std::stable_sort(term_candidates_.begin(), term_candidates_.end(),
                     [](const TermCandidate& a, const TermCandidate& b) {
                       return a.candidate.log_prob > b.candidate.log_prob;
                     });

    // An ending (only rows that meet every constraint have one) counts when it ranks within the
    // beam among those rows' candidates.
    int rank = 0;
    for (const TermCandidate& c : term_candidates_) {
      const Beam& beam = beams_[c.candidate.row];
      if (!tracker.AllMet(beam.progress)) continue;
      if (c.candidate.token == eos_id && rank < beam_size) {
        done_hypotheses.Add(Finish(beam, &c.candidate,
                                   with_alignment ? &alignment_[c.candidate.row] : nullptr,
                                   params_.options.length_penalty));
      }
      ++rank;
    }

    // Half the beam goes first to the best candidates that are not endings, whatever their bank:
    // the model's own best paths are not pruned by the banks, so a sentence that meets its terms
    // by itself is mostly translated as it would be without them (the banks alone favour the
    // hypotheses that have come furthest, and replaced it with one that rushed its terms in:
    // docs/benchmarks.md#glossaries). The other half is shared among the banks of 0 to all
    // constraint tokens met (TokensMet), the remainder to the bank that meets all; then, from the
    // top bank down, the slots a bank has no candidates for pass to the bank below (Sockeye's
    // allocation); any slots left go to the best candidates not yet taken.
    const int banks = tracker.tokens() + 1;
    const size_t count = term_candidates_.size();
    taken_.assign(count, 0);
    int taken = 0;
    for (size_t i = 0; i < count && taken < beam_size / 2; ++i) {
      if (term_candidates_[i].candidate.token == eos_id) continue;
      taken_[i] = 1;
      ++taken;
    }
    bank_of_.resize(count);
    bank_candidates_.assign(banks, 0);
    for (size_t i = 0; i < count; ++i) {
      const TermCandidate& c = term_candidates_[i];
      bank_of_[i] = c.candidate.token == eos_id ? -1 : tracker.TokensMet(c.progress);
      if (bank_of_[i] >= 0 && !taken_[i]) ++bank_candidates_[bank_of_[i]];
    }
    bank_slots_.assign(banks, (beam_size - taken) / banks);
    bank_slots_[banks - 1] += (beam_size - taken) % banks;
    for (int b = banks - 1; b >= 0; --b) {
      const int unused = bank_slots_[b] - bank_candidates_[b];
      if (unused > 0) {
        bank_slots_[b] -= unused;
        bank_slots_[(b + banks - 1) % banks] += unused;
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (!taken_[i] && bank_of_[i] >= 0 && bank_slots_[bank_of_[i]] > 0) {
        --bank_slots_[bank_of_[i]];
        taken_[i] = 1;
        ++taken;
      }
    }
    for (size_t i = 0; i < count && taken < beam_size; ++i) {
      if (taken_[i] || term_candidates_[i].candidate.token == eos_id) continue;
      taken_[i] = 1;
      ++taken;
    }
    for (size_t i = 0; i < count; ++i) {
      if (!taken_[i]) continue;
      const TermCandidate& c = term_candidates_[i];
      Beam& next = next_beams_.emplace_back(beams_[c.candidate.row]);
      next.log_prob = c.candidate.log_prob;
      next.ids.push_back(c.candidate.token);
      next.token_log_probs.push_back(c.candidate.token_log_prob);
      if (with_alignment) next.alignment.push_back(alignment_[c.candidate.row]);
      next.progress = c.progress;
      next.guided = c.guided;
      if (c.extended.has_value()) next.terms.back() = *c.extended;
      if (c.placed.has_value()) next.terms.push_back(*c.placed);
      parents_.push_back(c.candidate.row);
      ids_.push_back(c.candidate.token);
    }
  }

  const SearchParams params_;
  int sentences_ = 0;
  // Rows, grouped by sentence so each sentence's beams are contiguous, and their next input.
  std::vector<Beam> beams_;
  std::vector<int> ids_;
  std::vector<FinishedHypotheses> finished_;  // Per sentence id.
  std::vector<int> max_lengths_;              // Per sentence id.
  // Per sentence id; null: unconstrained.
  std::vector<std::unique_ptr<const TermTracker>> trackers_;
  std::vector<std::shared_ptr<const TermConstraints>> constraints_;
  int constrained_ = 0;  // Sentences with a tracker.

  std::vector<int> row_sentence_;
  std::unique_ptr<VocabularySelection> selection_;  // With a shortlist.
  // A step's logits (suppressed and masked columns -inf); the rows of sentences with constraints
  // then hold their log-probabilities.
  FloatBuffer log_probs_;
  OutputColumns columns_;  // Of log_probs_.
  std::vector<int> lengths_;
  std::vector<int> candidate_ids_;
  std::vector<float> candidate_log_probs_;
  std::vector<Candidate> candidates_;
  std::vector<Beam> next_beams_;
  std::vector<int> parents_;
  // Per row, this step's (with return_alignment, or for a sentence with constraints).
  std::vector<int> alignment_;
  // Constrained sentences' selection.
  std::vector<TermCandidate> term_candidates_;
  std::vector<int> proposals_;
  std::vector<int> aligned_starts_;
  std::vector<int> bank_of_;  // Per candidate; -1: an ending.
  std::vector<int> bank_candidates_;
  std::vector<int> bank_slots_;
  std::vector<char> taken_;
};

}  // namespace

std::unique_ptr<Search> Search::CreateBeam(SearchParams params) {
  return std::make_unique<BeamSearch>(std::move(params));
}

}  // namespace mtserve
