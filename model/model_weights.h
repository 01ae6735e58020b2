// A loaded model's weights, packed for the engine's ops. Internal to the engine: layers read
// them; the server and tools see only model.h (config, tokenizer), never oneDNN.
#ifndef MTSERVE_MODEL_MODEL_WEIGHTS_H_
#define MTSERVE_MODEL_MODEL_WEIGHTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "model/layers/embeddings.h"
#include "model/ops/layer_norm.h"
#include "model/ops/linear.h"

namespace mtserve {

struct EncoderLayerWeights {
  Linear qkv;  // d → 3d: query (pre-scaled by 1/sqrt(head_dim)), key, value.
  Linear out_proj;
  LayerNorm attention_norm;
  Linear fc1;
  Linear fc2;
  LayerNorm ffn_norm;
};

struct DecoderLayerWeights {
  Linear self_qkv;  // d → 3d, query pre-scaled.
  Linear self_out_proj;
  LayerNorm self_attention_norm;
  Linear cross_query;      // d → d, pre-scaled.
  Linear cross_key_value;  // d → 2d, applied once to the encoder output.
  Linear cross_out_proj;
  LayerNorm cross_attention_norm;
  Linear fc1;
  Linear fc2;
  LayerNorm ffn_norm;
};

struct ModelWeights {
  std::shared_ptr<Embeddings> source_embeddings;
  std::shared_ptr<Embeddings> target_embeddings;  // The same object when tied.
  std::vector<EncoderLayerWeights> encoder_layers;
  std::vector<DecoderLayerWeights> decoder_layers;
  // d → vocab, with final_logits_bias as its bias.
  Linear output_projection;
  Epilogue activation = Epilogue::kNone;

  // Bytes these weights hold, as allocated (the ops' memory_bytes(), tied embeddings once); not
  // the ops' objects themselves (some hundred bytes each, with their oneDNN handles).
  int64_t memory_bytes() const;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_MODEL_WEIGHTS_H_
