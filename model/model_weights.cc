// What a loaded model's packed weights hold in memory, summed over its ops.
#include "model/model_weights.h"

namespace mtserve {

int64_t ModelWeights::memory_bytes() const {
  int64_t bytes = output_projection.memory_bytes();
  if (source_embeddings != nullptr) bytes += source_embeddings->memory_bytes();
  if (target_embeddings != nullptr && target_embeddings != source_embeddings) {
    bytes += target_embeddings->memory_bytes();
  }
  for (const EncoderLayerWeights& layer : encoder_layers) {
    for (const Linear* linear : {&layer.qkv, &layer.out_proj, &layer.fc1, &layer.fc2}) {
      bytes += linear->memory_bytes();
    }
    bytes += layer.attention_norm.memory_bytes() + layer.ffn_norm.memory_bytes();
  }
  for (const DecoderLayerWeights& layer : decoder_layers) {
    for (const Linear* linear :
         {&layer.self_qkv, &layer.self_out_proj, &layer.cross_query, &layer.cross_key_value,
          &layer.cross_out_proj, &layer.fc1, &layer.fc2}) {
      bytes += linear->memory_bytes();
    }
    bytes += layer.self_attention_norm.memory_bytes() + layer.cross_attention_norm.memory_bytes() +
             layer.ffn_norm.memory_bytes();
  }
  return bytes;
}

}  // namespace mtserve
