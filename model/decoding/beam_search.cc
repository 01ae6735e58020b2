#include <algorithm>
#include <cmath>

#include "model/decoding/search.h"
#include "model/kernels/top_k.h"

namespace mtserve {
namespace {

// A live hypothesis: one row of the decoder.
struct Beam {
  int sentence;
  float log_prob;
  std::vector<int> ids;
  std::vector<float> token_log_probs;
  std::vector<int> alignment;  // With return_alignment only; follows the ids.
};

struct Candidate {
  float log_prob;  // Of the whole hypothesis with this token.
  int row;
  int token;
  float token_log_prob;
};

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

  void Add(Decoder& decoder, int sentence, int source_tokens) override {
    decoder.AddRows(1);
    beams_.push_back({sentence, 0.f, {}, {}, {}});
    ids_.push_back(params_.start_id);
    if (static_cast<size_t>(sentence) >= finished_.size()) {
      finished_.resize(sentence + 1, FinishedHypotheses(params_.options.beam_size));
      max_lengths_.resize(sentence + 1);
    }
    finished_[sentence] = FinishedHypotheses(params_.options.beam_size);
    max_lengths_[sentence] = InputMaxLength(params_.options, params_.max_length, source_tokens);
    ++sentences_;
  }

  int sentences() const override { return sentences_; }

  size_t memory_bytes() const override {
    size_t bytes = log_probs_.bytes() + candidates_.capacity() * sizeof(Candidate);
    for (const std::vector<Beam>* beams : {&beams_, &next_beams_}) {
      for (const Beam& beam : *beams) {
        bytes += (beam.ids.capacity() + beam.alignment.capacity()) * sizeof(int) +
                 beam.token_log_probs.capacity() * sizeof(float);
      }
    }
    for (const FinishedHypotheses& finished : finished_) {
      for (const Hypothesis& h : finished.hypotheses()) {
        bytes += (h.ids.capacity() + h.alignment.capacity()) * sizeof(int) +
                 h.token_log_probs.capacity() * sizeof(float);
      }
    }
    return bytes;
  }

  void Step(ComputeContext& ctx, Decoder& decoder,
            std::vector<FinishedSentence>& finished) override {
    row_sentence_.resize(beams_.size());
    for (size_t r = 0; r < beams_.size(); ++r) row_sentence_[r] = beams_[r].sentence;
    if (params_.cancelled) {
      const size_t before = finished.size();
      const std::vector<int> kept = RowsNotCancelled(params_, row_sentence_, decoder, finished);
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
    const int vocab = params_.vocab_size;
    const int beam_size = params_.options.beam_size;
    const float length_penalty = params_.options.length_penalty;
    // Twice the beam: even if every best candidate ends the sentence, a full beam continues
    // (a vocabulary smaller than that has fewer candidates to give).
    const int per_row = std::min(2 * beam_size, vocab);

    // Each row's alignment this step goes to the candidates it parents, so a hypothesis's
    // alignment follows its lineage exactly as its ids do.
    const bool with_alignment = params_.options.return_alignment;
    decoder.Step(ctx, ids_, row_sentence_, log_probs_, with_alignment ? &alignment_ : nullptr);
    lengths_.resize(rows);
    for (int r = 0; r < rows; ++r) lengths_[r] = static_cast<int>(beams_[r].ids.size());
    params_.logits_processor.Apply(ctx, log_probs_.data(), rows, vocab, lengths_);

    candidate_ids_.resize(static_cast<size_t>(rows) * per_row);
    candidate_log_probs_.resize(candidate_ids_.size());
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
      TopK(log_probs_.data() + static_cast<size_t>(r) * vocab, vocab, per_row,
           candidate_ids_.data() + r * per_row, candidate_log_probs_.data() + r * per_row);
    }

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

      const size_t next_first = next_beams_.size();
      for (size_t i = 0; i < candidates_.size(); ++i) {
        const Candidate& c = candidates_[i];
        if (c.token == params_.eos_id) {
          // Only an ending that ranks within the beam counts as a finished hypothesis.
          if (static_cast<int>(i) < beam_size) {
            done_hypotheses.Add(Finish(
                beams_[c.row], &c, with_alignment ? &alignment_[c.row] : nullptr, length_penalty));
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

      // Done at max_length, or when the beam is full of finished hypotheses and the best live
      // one, normalised at its current length, cannot beat the worst of them (Hugging Face's
      // rule with early_stopping=False).
      bool done = last_step || next_beams_.size() == next_first;
      if (!done && done_hypotheses.full()) {
        const float best_live =
            NormalizedScore(next_beams_[next_first].log_prob, length, length_penalty);
        done = done_hypotheses.worst_score() >= best_live;
      }
      if (done) {
        if (last_step) {
          for (size_t i = next_first; i < next_beams_.size(); ++i) {
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
        --sentences_;
      }
      first = end;
    }
    beams_.swap(next_beams_);
    decoder.Reorder(parents_);
  }

 private:
  const SearchParams params_;
  int sentences_ = 0;
  // Rows, grouped by sentence so each sentence's beams are contiguous, and their next input.
  std::vector<Beam> beams_;
  std::vector<int> ids_;
  std::vector<FinishedHypotheses> finished_;  // Per sentence id.
  std::vector<int> max_lengths_;              // Per sentence id.

  std::vector<int> row_sentence_;
  FloatBuffer log_probs_;
  std::vector<int> lengths_;
  std::vector<int> candidate_ids_;
  std::vector<float> candidate_log_probs_;
  std::vector<Candidate> candidates_;
  std::vector<Beam> next_beams_;
  std::vector<int> parents_;
  std::vector<int> alignment_;  // Per row, this step's (with return_alignment only).
};

}  // namespace

std::unique_ptr<Search> Search::CreateBeam(SearchParams params) {
  return std::make_unique<BeamSearch>(std::move(params));
}

}  // namespace mtserve
