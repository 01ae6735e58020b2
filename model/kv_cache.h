// The decoder's self-attention keys and values, kept for every decoded step.
//
// Each step appends one block holding, for every layer, the keys and values of the rows active at
// that step. Rows never move: each active row records its lineage, the row it descends from in
// every block since the row's sentence started. Beam search reordering and the removal of finished
// sentences therefore copy a few integers per row instead of the cache itself.
//
// Rows may join between steps (continuous batching: a new sentence starts while others are half
// way), so each row has its own birth step, and a block is recycled as soon as no active row was
// born at or before it. Memory is therefore bounded by the rows and ages of the live sentences,
// however long decoding goes on; a worker stops allocating once it has seen its largest load.
#ifndef MTSERVE_MODEL_KV_CACHE_H_
#define MTSERVE_MODEL_KV_CACHE_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "model/ops/aligned_buffer.h"

namespace mtserve {

class KvCache {
 public:
  KvCache(int layers, int width) : layers_(layers), width_(width) {}

  // Forgets every row and step, and frees the storage but kRetainedBytes of it, for the next
  // decode.
  void Clear();

  // What Clear keeps: enough for a typical decode to start without allocating (the embedded
  // model's beam 4 x 32 texts x 40 steps need 30 MiB), not a large decode's peak.
  static constexpr size_t kRetainedBytes = size_t{64} << 20;

  // Steps appended since Clear(): the number of the next step.
  int64_t steps() const { return first_step_ + static_cast<int64_t>(blocks_.size()); }
  int rows() const { return rows_; }

  // Appends `count` rows after the current ones; their first step is the next AppendStep's.
  void AddRows(int count);

  // Appends the block of a new step holding one key and one value per row and layer.
  void AppendStep();

  // Row `row` of step `step`'s keys for `layer` are at Keys(layer, step) + row * width. `step` must
  // be one some active row reads (at or after the earliest Birth()).
  float* Keys(int layer, int64_t step) {
    const Block& block = blocks_[step - first_step_];
    return block.data + static_cast<size_t>(2 * layer) * block.rows * width_;
  }
  float* Values(int layer, int64_t step) {
    return Keys(layer, step) + static_cast<size_t>(blocks_[step - first_step_].rows) * width_;
  }

  // The first step of active row `row`.
  int64_t Birth(int row) const { return birth_[row]; }
  // Lineage(row)[a] is the row, in the block of step Birth(row) + a, of the ancestor of active row
  // `row`; steps() - Birth(row) entries.
  const int* Lineage(int row) const {
    return lineage_.data() + static_cast<size_t>(row) * capacity_;
  }

  // Floats of storage held, in use or pooled: bounded by the live rows and their ages.
  size_t storage_floats() const;
  // Everything held: storage and lineage.
  size_t memory_bytes() const;

  // The next step's row i continues the current step's row parents[i]. Rows absent from
  // `parents` (finished sentences, pruned beams) are dropped; a row may have several children.
  void Reorder(const std::vector<int>& parents);

 private:
  struct Block {
    float* data;
    int rows;
  };
  // Blocks are carved in step order from chunks, so chunks fall out of use in order too.
  struct Chunk {
    FloatBuffer storage;
    size_t used = 0;         // Floats carved so far.
    int64_t last_step = -1;  // Of the last block carved from it.
  };
  // Drops the blocks no active row reads, and returns the chunks that held only those to the pool,
  // which keeps no more than the chunks in use hold (the rest is freed): storage stays within
  // twice what the live steps need, however the batch's size changed before.
  void RecycleBlocks();
  // Makes room for `age` + 1 lineage entries per row.
  void GrowLineage(int64_t age);

  int layers_;
  int width_;
  int rows_ = 0;
  int capacity_ = 16;       // Lineage entries reserved per row.
  int64_t first_step_ = 0;  // The step of blocks_.front().
  std::deque<Block> blocks_;
  std::deque<Chunk> chunks_;    // Holding blocks_, oldest first; the last one is being carved.
  std::vector<Chunk> pool_;     // Free chunks.
  std::vector<int64_t> birth_;  // [rows_].
  std::vector<int> lineage_;    // [rows_, capacity_].
  std::vector<int> scratch_;
  std::vector<int64_t> birth_scratch_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KV_CACHE_H_
