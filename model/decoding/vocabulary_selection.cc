#include "model/decoding/vocabulary_selection.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/ops/shape_buckets.h"

namespace mtserve {

VocabularySelection::VocabularySelection(int vocab_size)
    : vocab_size_(vocab_size), counts_(vocab_size, 0), width_(vocab_size) {}

void VocabularySelection::Add(int sentence, std::vector<int> candidates) {
  if (static_cast<size_t>(sentence) >= candidates_.size()) {
    candidates_.resize(sentence + 1);
    masks_.resize(sentence + 1);
  }
  Remove(sentence);
  for (int id : candidates) {
    if (counts_[id]++ == 0) ++distinct_;
    if (restricted_ && column_of_[id] < 0) grow_ = true;
  }
  candidates_[sentence] = std::move(candidates);
  MakeMask(sentence);
}

void VocabularySelection::Remove(int sentence) {
  if (static_cast<size_t>(sentence) >= candidates_.size()) return;
  for (int id : candidates_[sentence]) {
    if (--counts_[id] == 0) --distinct_;
  }
  candidates_[sentence] = {};
  masks_[sentence] = {};
}

void VocabularySelection::Prepare(Decoder& decoder) {
  const int64_t needed = BucketColumns(distinct_);
  const bool wide = needed > kMaxRestrictedShare * vocab_size_;
  // Restricted now and should not be, or the other way round, or too narrow, or twice too wide.
  if (grow_ || restricted_ == wide || (restricted_ && 3 * needed <= 2 * int64_t{width_})) {
    Rebuild(decoder);
  }
  // The masks of sentences added since (a rebuild remade them all) are those of this width.
}

void VocabularySelection::Rebuild(Decoder& decoder) {
  grow_ = false;
  // (No candidates at all, between sentences: the whole vocabulary, as the decoder takes none.)
  restricted_ = distinct_ > 0 && BucketColumns(distinct_) <= kMaxRestrictedShare * vocab_size_;
  ids_.clear();
  column_of_.assign(restricted_ ? vocab_size_ : 0, -1);
  if (restricted_) {
    for (int id = 0; id < vocab_size_; ++id) {
      if (counts_[id] == 0) continue;
      column_of_[id] = static_cast<int>(ids_.size());
      ids_.push_back(id);
    }
    ids_.resize(BucketColumns(static_cast<int64_t>(ids_.size())), -1);
    width_ = static_cast<int>(ids_.size());
  } else {
    width_ = vocab_size_;
  }
  decoder.RestrictOutputs(ids_);
  for (size_t s = 0; s < candidates_.size(); ++s) {
    if (!candidates_[s].empty()) MakeMask(static_cast<int>(s));
  }
}

void VocabularySelection::MakeMask(int sentence) {
  std::vector<uint8_t>& mask = masks_[sentence];
  mask.assign(width_, 0);
  for (int id : candidates_[sentence]) {
    const int column = restricted_ ? column_of_[id] : id;
    // A column outside the union (grow_: the next Prepare rebuilds it and this mask).
    if (column >= 0) mask[column] = 1;
  }
}

void VocabularySelection::Mask(float* logits, const std::vector<int>& row_sentence) const {
  for (size_t r = 0; r < row_sentence.size(); ++r) {
    float* row = logits + r * width_;
    const uint8_t* mask = masks_[row_sentence[r]].data();
    // A select, not a conditional store, so that the loop vectorises.
    for (int c = 0; c < width_; ++c) row[c] = mask[c] != 0 ? row[c] : -INFINITY;
  }
}

OutputColumns VocabularySelection::columns() const {
  if (!restricted_) return {width_};
  return {width_, ids_.data(), column_of_.data()};
}

size_t VocabularySelection::memory_bytes() const {
  size_t bytes = (counts_.capacity() + ids_.capacity() + column_of_.capacity()) * sizeof(int) +
                 (candidates_.capacity() + masks_.capacity()) * sizeof(std::vector<int>);
  for (size_t s = 0; s < candidates_.size(); ++s) {
    bytes += candidates_[s].capacity() * sizeof(int) + masks_[s].capacity();
  }
  return bytes;
}

}  // namespace mtserve
