#include "model/layers/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels/self_attention.h"
#include "model/ops/phase_profile.h"
#include "model/ops/shape_buckets.h"

namespace mtserve {

void Encoder::Forward(ComputeContext& ctx, const std::vector<int>& ids,
                      const std::vector<int>& lengths, int max_length, FloatBuffer& out) {
  ScopedPhase phase(ctx, Phase::kEncoder);
  const ModelConfig& config = model_.config();
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const int64_t s = max_length;
  const int64_t rows = batch * s;
  const int64_t d = config.d_model;
  const int64_t heads = config.encoder_attention_heads;
  const int64_t head_dim = d / heads;

  // Every layer runs on the real tokens only, packed [tokens, d]: self-attention reads each
  // sentence's keys and values where the QKV projection left them, so no padding position is
  // computed and no oneDNN call is made per sentence (with 256-wide layers and short sentences,
  // those calls cost more than their arithmetic). The output is spread to the padded layout at
  // the end.
  std::vector<int64_t>& first_row = packed_first_row_;  // Sentence b's first packed row.
  first_row.resize(batch + 1);
  first_row[0] = 0;
  for (int64_t b = 0; b < batch; ++b) first_row[b + 1] = first_row[b] + lengths[b];
  const int64_t tokens = first_row[batch];
  // Row-wise layers run on `padded` rows, the real tokens then rows of no meaning (finite: they
  // start at zero), so that their shapes come from a few buckets (shape_buckets.h).
  const int64_t padded = BucketRows(tokens);
  std::vector<int> packed_ids(tokens);
  positions_.resize(tokens);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < lengths[b]; ++j) {
      packed_ids[first_row[b] + j] = ids[b * s + j];
      positions_[first_row[b] + j] = static_cast<int>(j);
    }
  }
  // What each buffer needs for this batch (peak_bytes_ sums them).
  const int64_t qkv_row = 3 * d;
  const int64_t x_floats = std::max(rows, padded) * d;
  const int64_t qkv_floats = padded * qkv_row;
  const int64_t context_floats = padded * d;
  // The feed-forward block runs Linear::kMaxRows rows at a time: its wide hidden layer then needs
  // a small buffer, not one for the whole batch.
  const int64_t ffn_floats = std::min(padded, Linear::kMaxRows) * config.encoder_ffn_dim;
  int longest = 0;
  for (int length : lengths) longest = std::max(longest, length);
  const int64_t scratch_floats = SelfAttentionScratchFloats(longest, static_cast<int>(head_dim));
  // x lives in `out`: packed in its first `tokens` rows, spread to the padded layout at the end.
  float* x = out.Reserve(x_floats);
  model_.weights().source_embeddings->Forward(packed_ids.data(), positions_.data(),
                                              static_cast<int>(tokens), x);
  std::fill(x + tokens * d, x + padded * d, 0.f);

  float* qkv = qkv_.Reserve(qkv_floats);
  float* context = context_.Reserve(context_floats);
  std::fill(context + tokens * d, context + padded * d, 0.f);  // Attention writes real rows only.
  float* ffn = ffn_.Reserve(ffn_floats);
  float* scratch = attention_scratch_.Reserve(scratch_floats);
  auto attention = [&](int64_t b) {
    SelfAttention({qkv + first_row[b] * qkv_row, qkv_row, lengths[b], static_cast<int>(heads),
                   static_cast<int>(head_dim), context + first_row[b] * d, d, scratch});
  };

  for (const EncoderLayerWeights& layer : model_.weights().encoder_layers) {
    layer.qkv.Forward(ctx, x, padded, qkv);
    for (int64_t b = 0; b < batch; ++b) attention(b);
    layer.out_proj.Forward(ctx, context, padded, x, Epilogue::kAddToOutput);
    layer.attention_norm.Forward(x, padded);
    for (int64_t first = 0; first < padded; first += Linear::kMaxRows) {
      const int64_t block = std::min(Linear::kMaxRows, padded - first);
      layer.fc1.Forward(ctx, x + first * d, block, ffn, model_.weights().activation);
      layer.fc2.Forward(ctx, ffn, block, x + first * d, Epilogue::kAddToOutput);
    }
    layer.ffn_norm.Forward(x, padded);
  }
  // Spread in place to the padded layout: padded row b * s + j is packed row first_row[b] + j,
  // never before it, so from the last sentence back no sentence overwrites one not yet moved.
  // Padding rows are zeroed.
  for (int64_t b = batch - 1; b >= 0; --b) {
    std::memmove(x + b * s * d, x + first_row[b] * d, lengths[b] * d * sizeof(float));
    std::fill(x + (b * s + lengths[b]) * d, x + (b + 1) * s * d, 0.f);
  }
  // What this batch needed, not what the buffers hold from larger ones before.
  peak_bytes_ =
      (x_floats + qkv_floats + context_floats + ffn_floats + scratch_floats) * sizeof(float) +
      (packed_ids.capacity() + positions_.capacity()) * sizeof(int) + ids.capacity() * sizeof(int);
}

size_t Encoder::scratch_bytes() const {
  return qkv_.bytes() + context_.bytes() + ffn_.bytes() + attention_scratch_.bytes();
}

void Encoder::ReleaseScratch() {
  qkv_.Release();
  context_.Release();
  ffn_.Release();
  attention_scratch_.Release();
}

}  // namespace mtserve
