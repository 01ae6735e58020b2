// The encoder stack: post-norm self-attention and feed-forward layers over a padded batch.
#ifndef MTSERVE_MODEL_LAYERS_ENCODER_H_
#define MTSERVE_MODEL_LAYERS_ENCODER_H_

#include <vector>

#include "model/model.h"
#include "model/model_weights.h"
#include "model/ops/aligned_buffer.h"
#include "model/ops/compute_context.h"

namespace mtserve {

class Encoder {
 public:
  explicit Encoder(const Model& model) : model_(model) {}

  // ids: [batch, max_length] row-major, each row's first lengths[b] entries real, the rest pad.
  // Writes the final hidden states, [batch * max_length, d_model], to `out` (rows past a
  // sentence's length are zero).
  void Forward(ComputeContext& ctx, const std::vector<int>& ids, const std::vector<int>& lengths,
               int max_length, FloatBuffer& out);

  // The most bytes of scratch the last Forward held at once.
  size_t peak_bytes() const { return peak_bytes_; }

 private:
  const Model& model_;
  FloatBuffer qkv_;
  FloatBuffer context_;
  FloatBuffer ffn_;
  std::vector<int> positions_;
  FloatBuffer attention_scratch_;
  std::vector<int64_t> packed_first_row_;
  size_t peak_bytes_ = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_LAYERS_ENCODER_H_
