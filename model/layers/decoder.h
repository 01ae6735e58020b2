// The decoder stack, run one step at a time over the active rows (hypotheses) of a batch:
// self-attention over the KV cache, cross-attention over the encoder output, feed-forward, then
// the output projection to logits.
#ifndef MTSERVE_MODEL_LAYERS_DECODER_H_
#define MTSERVE_MODEL_LAYERS_DECODER_H_

#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "model/ops/aligned_buffer.h"
#include "model/ops/compute_context.h"

namespace mtserve {

class Decoder {
 public:
  explicit Decoder(const Model& model);

  // Starts a batch: computes every layer's cross-attention keys and values from the encoder
  // output ([batch * max_length, d_model], see Encoder::Forward) once, for all beams, and clears
  // the self-attention cache.
  void Start(ComputeContext& ctx, const float* encoder_output, const std::vector<int>& lengths,
             int max_length);

  // One step for `ids.size()` rows: row r feeds token ids[r] and belongs to sentence
  // row_sentence[r] (an index into Start's batch). Writes logits [rows, vocab_size].
  void Step(ComputeContext& ctx, const std::vector<int>& ids, const std::vector<int>& row_sentence,
            FloatBuffer& logits);

  // The next step's row i continues this step's row parents[i] (see KvCache::Reorder).
  void Reorder(const std::vector<int>& parents) { cache_.Reorder(parents); }

  int step() const { return cache_.steps(); }

 private:
  const Model& model_;
  int heads_;
  int head_dim_;
  std::vector<int> source_lengths_;
  int source_max_length_ = 0;
  std::vector<FloatBuffer> memory_key_values_;  // Per layer: [batch * max_length, 2 * d_model].
  KvCache cache_;

  FloatBuffer x_;
  FloatBuffer qkv_;
  FloatBuffer query_;
  FloatBuffer context_;
  FloatBuffer ffn_;
  std::vector<int> positions_;
  std::vector<int> lengths_;
  std::vector<const float*> keys_;
  std::vector<const float*> values_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_LAYERS_DECODER_H_
