// The decoder's self-attention keys and values, kept for every decoded step.
//
// Each step appends one block holding, for every layer, the keys and values of the rows active at
// that step. Blocks are carved from chunks that are kept from batch to batch (a worker stops
// allocating once it has seen its largest batch) and never move. Rows never move: each active row
// records its lineage, the row it descends from in every earlier block. Beam search reordering and
// the removal of finished sentences therefore copy a few integers per row instead of the cache
// itself.
#ifndef MTSERVE_MODEL_KV_CACHE_H_
#define MTSERVE_MODEL_KV_CACHE_H_

#include <vector>

#include "model/ops/aligned_buffer.h"

namespace mtserve {

class KvCache {
 public:
  KvCache(int layers, int width) : layers_(layers), width_(width) {}

  // Forgets every step, keeping the memory for the next batch.
  void Clear();

  int steps() const { return static_cast<int>(blocks_.size()); }
  int rows() const { return rows_; }

  // Appends the block of a new step with `rows` rows (the first step's rows start their lineage;
  // later steps must have as many rows as the last Reorder produced).
  void AppendStep(int rows);

  // Row `row` of step `step`'s keys for `layer` are at Keys(layer, step) + row * width.
  float* Keys(int layer, int step) {
    return blocks_[step] + static_cast<size_t>(2 * layer) * block_rows_[step] * width_;
  }
  float* Values(int layer, int step) {
    return Keys(layer, step) + static_cast<size_t>(block_rows_[step]) * width_;
  }

  // lineage(row)[s] is the row, in block s, of the ancestor of active row `row`; steps() entries.
  const int* Lineage(int row) const { return lineage_.data() + row * capacity_; }

  // The next step's row i continues the current step's row parents[i]. Rows absent from
  // `parents` (finished sentences, pruned beams) are dropped; a row may have several children.
  void Reorder(const std::vector<int>& parents);

 private:
  int layers_;
  int width_;
  int rows_ = 0;
  int capacity_ = 0;  // Lineage entries reserved per row.
  std::vector<FloatBuffer> chunks_;
  size_t chunk_ = 0;       // The chunk blocks are carved from.
  size_t chunk_used_ = 0;  // Floats of it already used.
  std::vector<float*> blocks_;
  std::vector<int> block_rows_;
  std::vector<int> lineage_;  // [rows_, capacity_].
  std::vector<int> scratch_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KV_CACHE_H_
