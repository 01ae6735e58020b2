#include "model/kv_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace mtserve {

void KvCache::AppendStep(int rows) {
  const int step = steps();
  assert(step == 0 || rows == rows_);
  if (step == 0) rows_ = rows;
  if (step >= capacity_) {
    // Grow the lineage table geometrically so its copy cost stays amortised.
    const int capacity = std::max(16, 2 * capacity_);
    std::vector<int> grown(static_cast<size_t>(rows_) * capacity);
    for (int r = 0; r < rows_; ++r) {
      std::copy_n(lineage_.data() + r * capacity_, step, grown.data() + r * capacity);
    }
    lineage_.swap(grown);
    capacity_ = capacity;
  }
  for (int r = 0; r < rows_; ++r) lineage_[r * capacity_ + step] = r;
  blocks_.emplace_back(static_cast<size_t>(2) * layers_ * rows * width_);
  block_rows_.push_back(rows);
}

void KvCache::Reorder(const std::vector<int>& parents) {
  const int steps_so_far = steps();
  const int rows = static_cast<int>(parents.size());
  scratch_.resize(static_cast<size_t>(rows) * capacity_);
  for (int r = 0; r < rows; ++r) {
    std::memcpy(scratch_.data() + r * capacity_, Lineage(parents[r]),
                steps_so_far * sizeof(int));
  }
  lineage_.swap(scratch_);
  rows_ = rows;
}

}  // namespace mtserve
