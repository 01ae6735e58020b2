// Token embeddings scaled by sqrt(d_model) (when the config asks) plus Marian's sinusoidal
// positions, which checkpoints do not store: computed at load, sin in the first half of each
// vector and cos in the second (Hugging Face's MarianSinusoidalPositionalEmbedding).
#ifndef MTSERVE_MODEL_LAYERS_EMBEDDINGS_H_
#define MTSERVE_MODEL_LAYERS_EMBEDDINGS_H_

#include <cstdint>
#include <vector>

#include "model/ops/aligned_buffer.h"
#include "model/ops/linear.h"

namespace mtserve {

// [num_positions, dim] row-major.
std::vector<float> SinusoidalPositions(int num_positions, int dim);

class Embeddings {
 public:
  Embeddings() = default;
  // `table` is [vocab_size, dim] row-major.
  Embeddings(const std::vector<float>& table, int vocab_size, int dim, float scale,
             int max_positions);
  // Embeddings tied to an output projection (d_model → vocab): rows are read from its weight.
  // `tied` must outlive this object.
  Embeddings(const Linear* tied, float scale, int max_positions);

  int dim() const { return dim_; }
  int max_positions() const { return max_positions_; }
  // Bytes this object owns, as allocated: the positions, and the table unless tied (a tied
  // table is the output projection's, counted there).
  int64_t memory_bytes() const {
    return static_cast<int64_t>(table_.allocated_bytes() + positions_.allocated_bytes());
  }

  // out[i] = table[ids[i]] * scale + position(positions[i]), for i in [0, n).
  void Forward(const int* ids, const int* positions, int n, float* out) const;

 private:
  int vocab_size_ = 0;
  int dim_ = 0;
  float scale_ = 1.f;
  int max_positions_ = 0;
  FloatBuffer table_;  // Unless tied.
  const Linear* tied_ = nullptr;
  FloatBuffer positions_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_LAYERS_EMBEDDINGS_H_
