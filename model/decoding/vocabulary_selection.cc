#include "model/decoding/vocabulary_selection.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/ops/shape_buckets.h"

namespace mtserve {

VocabularySelection::VocabularySelection(int vocab_size, const std::vector<int>* always)
    : vocab_size_(vocab_size), always_(always), counts_(vocab_size, 0), width_(vocab_size) {
  if (always_ == nullptr) return;
  in_always_.assign(vocab_size, 0);
  for (int id : *always_) in_always_[id] = 1;
}

void VocabularySelection::Add(int sentence, std::vector<int> candidates) {
  if (static_cast<size_t>(sentence) >= candidates_.size()) {
    live_.resize(sentence + 1);
    candidates_.resize(sentence + 1);
    masks_.resize(sentence + 1);
  }
  Remove(sentence);
  if (always_ != nullptr) {
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](int id) { return in_always_[id] != 0; }),
                     candidates.end());
  }
  for (int id : candidates) {
    if (counts_[id]++ == 0) ++distinct_;
    if (restricted_ && column_of_[id] < 0) grow_ = true;
  }
  live_[sentence] = true;
  candidates_[sentence] = std::move(candidates);
  MakeMask(sentence);
}

void VocabularySelection::Remove(int sentence) {
  if (static_cast<size_t>(sentence) >= candidates_.size()) return;
  for (int id : candidates_[sentence]) {
    if (--counts_[id] == 0) --distinct_;
  }
  live_[sentence] = false;
  candidates_[sentence] = {};
  masks_[sentence] = {};
}

void VocabularySelection::Prepare(Decoder& decoder) {
  const int64_t always = always_ == nullptr ? 0 : always_->size();
  const int64_t needed = BucketColumns(distinct_);  // Beyond the always-line.
  const bool wide = always + needed > kMaxRestrictedShare * vocab_size_;
  const int64_t others = width_ - first_masked_;  // Columns packed for this union.
  // Restricted now and should not be, or the other way round, or too narrow, or twice too wide.
  if (grow_ || restricted_ == wide || (restricted_ && others > 0 && 3 * needed <= 2 * others)) {
    Rebuild(decoder);
  }
  // The masks of sentences added since (a rebuild remade them all) are those of this width.
}

void VocabularySelection::Rebuild(Decoder& decoder) {
  grow_ = false;
  const int64_t always = always_ == nullptr ? 0 : always_->size();
  // (No candidates at all, between sentences: the whole vocabulary, as the decoder takes none.)
  restricted_ = (distinct_ > 0 || always > 0) &&
                always + BucketColumns(distinct_) <= kMaxRestrictedShare * vocab_size_;
  ids_.clear();
  column_of_.assign(restricted_ ? vocab_size_ : 0, -1);
  first_masked_ = restricted_ ? static_cast<int>(always) : 0;
  if (restricted_) {
    if (always_ != nullptr) ids_ = *always_;
    for (int id = 0; id < vocab_size_; ++id) {
      if (counts_[id] > 0) ids_.push_back(id);
    }
    ids_.resize(always + BucketColumns(static_cast<int64_t>(ids_.size()) - always), -1);
    for (size_t column = 0; column < ids_.size(); ++column) {
      if (ids_[column] >= 0) column_of_[ids_[column]] = static_cast<int>(column);
    }
    width_ = static_cast<int>(ids_.size());
    decoder.RestrictOutputs(absl::MakeConstSpan(ids_).subspan(always), always_ != nullptr);
  } else {
    width_ = vocab_size_;
    decoder.RestrictOutputs({});
  }
  for (size_t s = 0; s < candidates_.size(); ++s) {
    if (live_[s]) MakeMask(static_cast<int>(s));
  }
}

void VocabularySelection::MakeMask(int sentence) {
  std::vector<uint8_t>& mask = masks_[sentence];
  mask.assign(width_ - first_masked_, 0);
  // The whole vocabulary's columns hold the always-line's too.
  if (always_ != nullptr && !restricted_) {
    for (int id : *always_) mask[id] = 1;
  }
  for (int id : candidates_[sentence]) {
    const int column = restricted_ ? column_of_[id] : id;
    // A column outside the union (grow_: the next Prepare rebuilds it and this mask).
    if (column >= 0) mask[column - first_masked_] = 1;
  }
}

void VocabularySelection::Mask(float* logits, const std::vector<int>& row_sentence) const {
  for (size_t r = 0; r < row_sentence.size(); ++r) {
    float* row = logits + r * width_ + first_masked_;
    const uint8_t* mask = masks_[row_sentence[r]].data();
    // A select, not a conditional store, so that the loop vectorises.
    for (int c = 0; c < width_ - first_masked_; ++c) row[c] = mask[c] != 0 ? row[c] : -INFINITY;
  }
}

OutputColumns VocabularySelection::columns() const {
  if (!restricted_) return {width_};
  return {width_, ids_.data(), column_of_.data()};
}

size_t VocabularySelection::memory_bytes() const {
  size_t bytes = (counts_.capacity() + ids_.capacity() + column_of_.capacity()) * sizeof(int) +
                 (candidates_.capacity() + masks_.capacity()) * sizeof(std::vector<int>) +
                 in_always_.capacity() + live_.capacity() / 8;
  for (size_t s = 0; s < candidates_.size(); ++s) {
    bytes += candidates_[s].capacity() * sizeof(int) + masks_[s].capacity();
  }
  return bytes;
}

}  // namespace mtserve
