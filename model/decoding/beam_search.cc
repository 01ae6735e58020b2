#include <algorithm>
#include <cmath>

#include "model/decoding/search.h"
#include "model/kernels/top_k.h"

namespace mtserve {
namespace {

// A live hypothesis: one row of the decoder batch.
struct Beam {
  int sentence;
  float log_prob;
  std::vector<int> ids;
  std::vector<float> token_log_probs;
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

 private:
  int beam_size_;
  std::vector<Hypothesis> hypotheses_;
};

Hypothesis Finish(const Beam& beam, const Candidate* last, float length_penalty) {
  Hypothesis h;
  h.ids = beam.ids;
  h.token_log_probs = beam.token_log_probs;
  h.log_prob = beam.log_prob;
  if (last != nullptr) {
    h.ids.push_back(last->token);
    h.token_log_probs.push_back(last->token_log_prob);
    h.log_prob = last->log_prob;
  }
  h.score = NormalizedScore(h.log_prob, static_cast<int>(h.ids.size()), length_penalty);
  return h;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<Hypothesis>>> BeamSearch(ComputeContext& ctx,
                                                                Decoder& decoder,
                                                                const SearchParams& params) {
  const int batch = params.batch_size;
  const int vocab = params.vocab_size;
  const int beam_size = params.options.beam_size;
  const float length_penalty = params.options.length_penalty;
  // Twice the beam: even if every best candidate ends the sentence, a full beam continues.
  const int per_row = 2 * beam_size;

  std::vector<FinishedHypotheses> finished(batch, FinishedHypotheses(beam_size));
  // Rows are grouped by sentence, in sentence order, so each sentence's beams are contiguous.
  std::vector<Beam> beams;
  for (int b = 0; b < batch; ++b) beams.push_back({b, 0.f, {}, {}});
  std::vector<int> ids(batch, params.start_id);
  std::vector<int> row_sentence(batch);
  std::vector<int> candidate_ids;
  std::vector<float> candidate_log_probs;
  std::vector<Candidate> candidates;
  std::vector<Beam> next_beams;
  std::vector<int> parents;
  FloatBuffer log_probs;
  std::vector<bool> cancelled(batch, false);

  for (int step = 0; step < params.max_length && !beams.empty(); ++step) {
    row_sentence.resize(beams.size());
    for (size_t r = 0; r < beams.size(); ++r) row_sentence[r] = beams[r].sentence;
    if (params.cancelled) {
      const std::vector<int> kept = RowsNotCancelled(params, row_sentence, cancelled);
      if (kept.size() != beams.size()) {
        KeepRows(beams, kept);
        KeepRows(ids, kept);
        KeepRows(row_sentence, kept);
        decoder.Reorder(kept);
        if (beams.empty()) break;
      }
    }
    const int rows = static_cast<int>(beams.size());
    decoder.Step(ctx, ids, row_sentence, log_probs);
    params.logits_processor.Apply(ctx, log_probs.data(), rows, vocab, step);

    candidate_ids.resize(static_cast<size_t>(rows) * per_row);
    candidate_log_probs.resize(candidate_ids.size());
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
      TopK(log_probs.data() + static_cast<size_t>(r) * vocab, vocab, per_row,
           candidate_ids.data() + r * per_row, candidate_log_probs.data() + r * per_row);
    }

    const int length = step + 1;
    const bool last_step = length == params.max_length;
    next_beams.clear();
    parents.clear();
    ids.clear();
    for (int first = 0; first < rows;) {
      const int sentence = beams[first].sentence;
      int end = first;
      while (end < rows && beams[end].sentence == sentence) ++end;

      candidates.clear();
      for (int r = first; r < end; ++r) {
        for (int k = 0; k < per_row; ++k) {
          const float token_log_prob = candidate_log_probs[r * per_row + k];
          if (!std::isfinite(token_log_prob)) continue;
          candidates.push_back({beams[r].log_prob + token_log_prob, r,
                                candidate_ids[r * per_row + k], token_log_prob});
        }
      }
      // Best first; equal scores keep row then rank order, so results do not depend on the sort.
      std::stable_sort(
          candidates.begin(), candidates.end(),
          [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });

      const size_t next_first = next_beams.size();
      for (size_t i = 0; i < candidates.size(); ++i) {
        const Candidate& c = candidates[i];
        if (c.token == params.eos_id) {
          // Only an ending that ranks within the beam counts as a finished hypothesis.
          if (static_cast<int>(i) < beam_size) {
            finished[sentence].Add(Finish(beams[c.row], &c, length_penalty));
          }
          continue;
        }
        Beam& next = next_beams.emplace_back(beams[c.row]);
        next.log_prob = c.log_prob;
        next.ids.push_back(c.token);
        next.token_log_probs.push_back(c.token_log_prob);
        parents.push_back(c.row);
        ids.push_back(c.token);
        if (static_cast<int>(next_beams.size() - next_first) == beam_size) break;
      }

      // Done at max_length, or when the beam is full of finished hypotheses and the best live
      // one, normalised at its current length, cannot beat the worst of them (Hugging Face's
      // rule with early_stopping=False).
      bool done = last_step || next_beams.size() == next_first;
      if (!done && finished[sentence].full()) {
        const float best_live =
            NormalizedScore(next_beams[next_first].log_prob, length, length_penalty);
        done = finished[sentence].worst_score() >= best_live;
      }
      if (done) {
        if (last_step) {
          for (size_t i = next_first; i < next_beams.size(); ++i) {
            finished[sentence].Add(Finish(next_beams[i], nullptr, length_penalty));
          }
        }
        next_beams.resize(next_first);
        parents.resize(next_first);
        ids.resize(next_first);
      }
      first = end;
    }
    beams.swap(next_beams);
    decoder.Reorder(parents);
  }

  std::vector<std::vector<Hypothesis>> results(batch);
  for (int b = 0; b < batch; ++b) {
    if (cancelled[b]) continue;
    std::vector<Hypothesis>& hypotheses = finished[b].hypotheses();
    hypotheses.resize(std::min<size_t>(hypotheses.size(), params.options.num_hypotheses));
    results[b] = std::move(hypotheses);
  }
  return results;
}

}  // namespace mtserve
