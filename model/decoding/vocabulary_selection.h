// A decode's lexical shortlist at work: which vocabulary ids the decoder projects onto, and each
// sentence's own share of them.
//
// Each sentence may generate only its candidates (Translator gathers them: the shortlist's for its
// source tokens, its source tokens themselves, its terms' tokens, </s>). The decoder computes the
// union of the candidates of the sentences decoding (Decoder::RestrictOutputs, padded to a few
// widths), and Mask sets each row's columns outside its sentence's candidates to -inf before the
// log-softmax: a sentence's scores are normalised over its own candidates, and are the same
// whatever is decoded alongside (a column's logit does not depend on the others computed with it:
// Linear::Outputs), as the server's batching requires.
//
// The union is rebuilt before a step when a sentence that joined brings ids it lacks, or when the
// sentences still decoding need no more than two thirds of its width; a union too wide to gain
// from (kMaxRestrictedShare of the vocabulary) projects onto the whole vocabulary, still masked.
//
// With a model whose shortlist's always-line the decoder projects onto from a projection packed at
// load (Decoder::always_outputs()), its ids are the first columns, every sentence's: only the
// other candidates make the union the decoder packs, and only their columns are masked.
#ifndef MTSERVE_MODEL_DECODING_VOCABULARY_SELECTION_H_
#define MTSERVE_MODEL_DECODING_VOCABULARY_SELECTION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/decoding/output_columns.h"
#include "model/layers/decoder.h"
#include "model/ops/shape_buckets.h"

namespace mtserve {

class VocabularySelection {
 public:
  // A union wider than this share of the vocabulary is computed as the whole vocabulary.
  static constexpr double kMaxRestrictedShare = kMaxShortlistShare;

  // `always`: Decoder::always_outputs() (null: none), which every sentence's candidates hold.
  VocabularySelection(int vocab_size, const std::vector<int>* always);

  // `sentence` (a Decoder sentence id, not yet added or since removed) may generate `candidates`:
  // sorted ids of the vocabulary without duplicates (with `always`, all of those too).
  void Add(int sentence, std::vector<int> candidates);
  // Forgets `sentence` (nothing when it was not added).
  void Remove(int sentence);

  // Before a step: gives `decoder` the union to compute when it changed (see above).
  void Prepare(Decoder& decoder);
  // After the step: logits [rows, columns().count], row r of sentence row_sentence[r].
  void Mask(float* logits, const std::vector<int>& row_sentence) const;
  // The columns of the logits of the step Prepare prepared.
  OutputColumns columns() const;

  // Bytes held: the candidates, masks and maps (the decoder counts its projection).
  size_t memory_bytes() const;

 private:
  void Rebuild(Decoder& decoder);
  void MakeMask(int sentence);

  int vocab_size_;
  const std::vector<int>* always_;  // Null: none.
  std::vector<uint8_t> in_always_;  // Per id, with always_: 1 for its ids.
  std::vector<int> counts_;         // Per id outside always_: live sentences that may generate it.
  int64_t distinct_ = 0;            // Ids with a count.
  bool grow_ = false;               // A sentence added since Prepare has ids outside the union.
  bool restricted_ = false;         // The decoder computes ids_, not the whole vocabulary.
  std::vector<int> ids_;            // While restricted_: column -> id (-1: padding).
  std::vector<int> column_of_;      // While restricted_: id -> column, -1 outside.
  int width_ = 0;                   // Columns of a row.
  int first_masked_ = 0;  // Columns before it are every sentence's (restricted_ with always_).
  // Per sentence id.
  std::vector<bool> live_;                    // Added and not removed since.
  std::vector<std::vector<int>> candidates_;  // Outside always_.
  // Per column from first_masked_: 1 where the sentence may generate it.
  std::vector<std::vector<uint8_t>> masks_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_VOCABULARY_SELECTION_H_
