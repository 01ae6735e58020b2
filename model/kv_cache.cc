#include "model/kv_cache.h"

#include <algorithm>
#include <cstring>

namespace mtserve {
namespace {

// 1 MiB: a step of a large batch, or several of a small one, per allocation.
constexpr size_t kMinChunkFloats = size_t{1} << 18;

}  // namespace

void KvCache::Clear() {
  rows_ = 0;
  birth_.clear();
  RecycleBlocks();  // All of them: no row reads any.
  size_t kept = 0;
  for (size_t i = 0; i < pool_.size(); ++i) {  // Largest first.
    kept += pool_[i].storage.capacity() * sizeof(float);
    if (kept > kRetainedBytes) {
      pool_.resize(i);
      break;
    }
  }
  first_step_ = 0;
}

void KvCache::AddRows(int count) {
  const int64_t birth = steps();
  birth_.resize(rows_ + count, birth);
  rows_ += count;
  lineage_.resize(static_cast<size_t>(rows_) * capacity_);
}

void KvCache::GrowLineage(int64_t age) {
  if (age < capacity_) return;
  // Geometric growth keeps the copy cost amortised.
  int capacity = capacity_;
  while (capacity <= age) capacity *= 2;
  std::vector<int> grown(static_cast<size_t>(rows_) * capacity);
  for (int r = 0; r < rows_; ++r) {
    std::copy_n(Lineage(r), steps() - birth_[r], grown.data() + static_cast<size_t>(r) * capacity);
  }
  lineage_.swap(grown);
  capacity_ = capacity;
}

void KvCache::AppendStep() {
  const int64_t step = steps();
  int64_t oldest = step;
  for (int r = 0; r < rows_; ++r) oldest = std::min(oldest, birth_[r]);
  GrowLineage(step - oldest);
  for (int r = 0; r < rows_; ++r) {
    lineage_[static_cast<size_t>(r) * capacity_ + (step - birth_[r])] = r;
  }
  const size_t block_size = static_cast<size_t>(2) * layers_ * rows_ * width_;
  if (chunks_.empty() || chunks_.back().used + block_size > chunks_.back().storage.capacity()) {
    auto fits = std::find_if(pool_.begin(), pool_.end(), [&](const Chunk& chunk) {
      return chunk.storage.capacity() >= block_size;
    });
    if (fits == pool_.end()) {
      chunks_.emplace_back().storage.Reserve(std::max(block_size, kMinChunkFloats));
    } else {
      chunks_.push_back(std::move(*fits));
      pool_.erase(fits);
    }
  }
  Chunk& chunk = chunks_.back();
  blocks_.push_back({chunk.storage.data() + chunk.used, rows_});
  chunk.used += block_size;
  chunk.last_step = step;
}

void KvCache::Reorder(const std::vector<int>& parents) {
  const int rows = static_cast<int>(parents.size());
  scratch_.resize(static_cast<size_t>(rows) * capacity_);
  birth_scratch_.resize(rows);
  for (int r = 0; r < rows; ++r) {
    const int parent = parents[r];
    birth_scratch_[r] = birth_[parent];
    std::memcpy(scratch_.data() + static_cast<size_t>(r) * capacity_, Lineage(parent),
                (steps() - birth_[parent]) * sizeof(int));
  }
  lineage_.swap(scratch_);
  birth_.swap(birth_scratch_);
  rows_ = rows;
  RecycleBlocks();
}

void KvCache::RecycleBlocks() {
  int64_t oldest = steps();
  for (int64_t birth : birth_) oldest = std::min(oldest, birth);
  while (first_step_ < oldest) {
    blocks_.pop_front();
    ++first_step_;
  }
  while (!chunks_.empty() && chunks_.front().last_step < oldest) {
    Chunk& chunk = pool_.emplace_back(std::move(chunks_.front()));
    chunk.used = 0;
    chunk.last_step = -1;
    chunks_.pop_front();
  }
  size_t in_use = 0;
  for (const Chunk& chunk : chunks_) in_use += chunk.storage.capacity();
  size_t pooled = 0;
  for (const Chunk& chunk : pool_) pooled += chunk.storage.capacity();
  // The smallest go first: the larger ones fit more blocks.
  std::sort(pool_.begin(), pool_.end(), [](const Chunk& a, const Chunk& b) {
    return a.storage.capacity() > b.storage.capacity();
  });
  // While rows are live, that is; Clear keeps some when none are.
  while (pooled > in_use && rows_ > 0) {
    pooled -= pool_.back().storage.capacity();
    pool_.pop_back();
  }
}

}  // namespace mtserve

namespace mtserve {

size_t KvCache::memory_bytes() const {
  return storage_floats() * sizeof(float) +
         (lineage_.capacity() + scratch_.capacity()) * sizeof(int) +
         (birth_.capacity() + birth_scratch_.capacity()) * sizeof(int64_t);
}

size_t KvCache::storage_floats() const {
  size_t floats = 0;
  for (const Chunk& chunk : chunks_) floats += chunk.storage.capacity();
  for (const Chunk& chunk : pool_) floats += chunk.storage.capacity();
  return floats;
}

}  // namespace mtserve
