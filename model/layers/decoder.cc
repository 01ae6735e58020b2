#include "model/layers/decoder.h"

#include <algorithm>
#include <cstring>

#include "model/kernels/one_query_attention.h"

namespace mtserve {

Decoder::Decoder(const Model& model)
    : model_(model),
      heads_(model.config().decoder_attention_heads),
      head_dim_(model.config().d_model / model.config().decoder_attention_heads),
      cache_(model.config().decoder_layers, model.config().d_model) {}

void Decoder::Start(ComputeContext& ctx, const float* encoder_output,
                    const std::vector<int>& lengths, int max_length) {
  const int d = model_.config().d_model;
  const int64_t rows = static_cast<int64_t>(lengths.size()) * max_length;
  source_lengths_ = lengths;
  source_max_length_ = max_length;
  const auto& layers = model_.decoder_layers();
  memory_key_values_.resize(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    layers[l].cross_key_value.Forward(ctx, encoder_output, rows,
                                      memory_key_values_[l].Reserve(rows * 2 * d));
  }
  cache_.Clear();
}

void Decoder::Step(ComputeContext& ctx, const std::vector<int>& ids,
                   const std::vector<int>& row_sentence, FloatBuffer& logits) {
  const ModelConfig& config = model_.config();
  const int rows = static_cast<int>(ids.size());
  const int d = config.d_model;
  const int step = cache_.steps();
  cache_.AppendStep(rows);

  float* x = x_.Reserve(static_cast<size_t>(rows) * d);
  positions_.assign(rows, step);
  model_.target_embeddings().Forward(ids.data(), positions_.data(), rows, x);

  float* qkv = qkv_.Reserve(static_cast<size_t>(rows) * 3 * d);
  float* query = query_.Reserve(static_cast<size_t>(rows) * d);
  float* context = context_.Reserve(static_cast<size_t>(rows) * d);
  float* ffn = ffn_.Reserve(static_cast<size_t>(rows) * config.decoder_ffn_dim);

  // Self-attention reads positions 0..step of each row's lineage; cross-attention reads the
  // positions of the row's source sentence. Both go through per-row pointer tables.
  const int self_positions = step + 1;
  const int max_positions = std::max(self_positions, source_max_length_);
  keys_.resize(static_cast<size_t>(rows) * max_positions);
  values_.resize(keys_.size());
  lengths_.resize(rows);

  const auto& layers = model_.decoder_layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    const DecoderLayerWeights& layer = layers[l];
    const int layer_index = static_cast<int>(l);

    layer.self_qkv.Forward(ctx, x, rows, qkv);
    float* new_keys = cache_.Keys(layer_index, step);
    float* new_values = cache_.Values(layer_index, step);
    for (int r = 0; r < rows; ++r) {
      std::memcpy(new_keys + static_cast<size_t>(r) * d, qkv + static_cast<size_t>(r) * 3 * d + d,
                  d * sizeof(float));
      std::memcpy(new_values + static_cast<size_t>(r) * d,
                  qkv + static_cast<size_t>(r) * 3 * d + 2 * d, d * sizeof(float));
    }
    for (int r = 0; r < rows; ++r) {
      const int* lineage = cache_.Lineage(r);
      const float** k = keys_.data() + static_cast<size_t>(r) * max_positions;
      const float** v = values_.data() + static_cast<size_t>(r) * max_positions;
      for (int s = 0; s < self_positions; ++s) {
        k[s] = cache_.Keys(layer_index, s) + static_cast<size_t>(lineage[s]) * d;
        v[s] = cache_.Values(layer_index, s) + static_cast<size_t>(lineage[s]) * d;
      }
      lengths_[r] = self_positions;
    }
    OneQueryAttention({qkv, 3 * d, keys_.data(), values_.data(), lengths_.data(), max_positions,
                       rows, heads_, head_dim_, context});
    layer.self_out_proj.Forward(ctx, context, rows, x, Epilogue::kAddToOutput);
    layer.self_attention_norm.Forward(ctx, x, rows);

    layer.cross_query.Forward(ctx, x, rows, query);
    const float* memory = memory_key_values_[l].data();
    for (int r = 0; r < rows; ++r) {
      const int sentence = row_sentence[r];
      const float* first = memory + static_cast<size_t>(sentence) * source_max_length_ * 2 * d;
      const float** k = keys_.data() + static_cast<size_t>(r) * max_positions;
      const float** v = values_.data() + static_cast<size_t>(r) * max_positions;
      for (int s = 0; s < source_lengths_[sentence]; ++s) {
        k[s] = first + static_cast<size_t>(s) * 2 * d;
        v[s] = k[s] + d;
      }
      lengths_[r] = source_lengths_[sentence];
    }
    OneQueryAttention({query, d, keys_.data(), values_.data(), lengths_.data(), max_positions, rows,
                       heads_, head_dim_, context});
    layer.cross_out_proj.Forward(ctx, context, rows, x, Epilogue::kAddToOutput);
    layer.cross_attention_norm.Forward(ctx, x, rows);

    layer.fc1.Forward(ctx, x, rows, ffn, model_.activation());
    layer.fc2.Forward(ctx, ffn, rows, x, Epilogue::kAddToOutput);
    layer.ffn_norm.Forward(ctx, x, rows);
  }
  model_.output_projection().Forward(ctx, x, rows,
                                     logits.Reserve(static_cast<size_t>(rows) * config.vocab_size));
}

}  // namespace mtserve
