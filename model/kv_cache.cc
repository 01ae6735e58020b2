#include "model/kv_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace mtserve {
namespace {

// 1 MiB: a step of a large batch, or several of a small one, per allocation.
constexpr size_t kMinChunkFloats = size_t{1} << 18;

}  // namespace

void KvCache::Clear() {
  rows_ = 0;
  chunk_ = 0;
  chunk_used_ = 0;
  blocks_.clear();
  block_rows_.clear();
}

void KvCache::AppendStep(int rows) {
  const int step = steps();
  assert(step == 0 || rows == rows_);
  if (step == 0) {
    rows_ = rows;
    capacity_ = std::max(capacity_, 16);
    lineage_.resize(static_cast<size_t>(rows_) * capacity_);
  } else if (step >= capacity_) {
    // Grow the lineage table geometrically so its copy cost stays amortised.
    const int capacity = 2 * capacity_;
    std::vector<int> grown(static_cast<size_t>(rows_) * capacity);
    for (int r = 0; r < rows_; ++r) {
      std::copy_n(lineage_.data() + r * capacity_, step, grown.data() + r * capacity);
    }
    lineage_.swap(grown);
    capacity_ = capacity;
  }
  for (int r = 0; r < rows_; ++r) lineage_[r * capacity_ + step] = r;
  const size_t block_size = static_cast<size_t>(2) * layers_ * rows * width_;
  while (chunk_ < chunks_.size() && chunk_used_ + block_size > chunks_[chunk_].capacity()) {
    ++chunk_;
    chunk_used_ = 0;
  }
  if (chunk_ == chunks_.size()) chunks_.emplace_back(std::max(block_size, kMinChunkFloats));
  blocks_.push_back(chunks_[chunk_].data() + chunk_used_);
  block_rows_.push_back(rows);
  chunk_used_ += block_size;
}

void KvCache::Reorder(const std::vector<int>& parents) {
  const int steps_so_far = steps();
  const int rows = static_cast<int>(parents.size());
  scratch_.resize(static_cast<size_t>(rows) * capacity_);
  for (int r = 0; r < rows; ++r) {
    std::memcpy(scratch_.data() + r * capacity_, Lineage(parents[r]), steps_so_far * sizeof(int));
  }
  lineage_.swap(scratch_);
  rows_ = rows;
}

}  // namespace mtserve
