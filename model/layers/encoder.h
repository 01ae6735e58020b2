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

  // The most bytes the last Forward needed at once (its output included).
  size_t peak_bytes() const { return peak_bytes_; }
  // Its scratch stays for the next Forward (allocated anew for each batch, its pages were
  // faulted in and zeroed each time: a tenth of a small model's time); the translator frees it
  // when it keeps more than decode_memory.h's kRetainedBatchBytes.
  size_t scratch_bytes() const;
  void ReleaseScratch();

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
