#include "model/layers/encoder.h"

#include <algorithm>
#include <cmath>

#include "model/ops/batched_matmul.h"
#include "model/ops/softmax.h"

namespace mtserve {

void Encoder::Forward(ComputeContext& ctx, const std::vector<int>& ids,
                      const std::vector<int>& lengths, int max_length, FloatBuffer& out) {
  const ModelConfig& config = model_.config();
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const int64_t s = max_length;
  const int64_t rows = batch * s;
  const int64_t d = config.d_model;
  const int64_t heads = config.encoder_attention_heads;
  const int64_t head_dim = d / heads;

  positions_.resize(rows);
  for (int64_t i = 0; i < rows; ++i) positions_[i] = static_cast<int>(i % s);
  float* x = out.Reserve(rows * d);
  model_.source_embeddings().Forward(ids.data(), positions_.data(), static_cast<int>(rows), x);

  // Keys past a sentence's end get -inf added to their scores, so they weigh exactly zero.
  float* mask = mask_.Reserve(rows);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < s; ++j) mask[b * s + j] = j < lengths[b] ? 0.f : -INFINITY;
  }

  float* qkv = qkv_.Reserve(rows * 3 * d);
  float* scores = scores_.Reserve(batch * heads * s * s);
  float* context = context_.Reserve(rows * d);
  // The feed-forward block runs Linear::kMaxRows rows at a time: its wide hidden layer then needs
  // a small buffer, not one for the whole batch.
  float* ffn = ffn_.Reserve(std::min(rows, Linear::kMaxRows) * config.encoder_ffn_dim);
  // Views of [batch, time, heads, head_dim] data as [batch, heads, time, head_dim].
  const int64_t qkv_row = 3 * d;
  const StridedView queries{qkv, {batch, heads, s, head_dim}, {s * qkv_row, head_dim, qkv_row, 1}};
  const StridedView keys_t{
      qkv + d, {batch, heads, head_dim, s}, {s * qkv_row, head_dim, 1, qkv_row}};
  const StridedView values{
      qkv + 2 * d, {batch, heads, s, head_dim}, {s * qkv_row, head_dim, qkv_row, 1}};
  const StridedView probs{scores, {batch, heads, s, s}, {heads * s * s, s * s, s, 1}};
  const StridedView key_mask{mask, {batch, 1, 1, s}, {s, s, s, 1}};
  const StridedView heads_out{context, {batch, heads, s, head_dim}, {s * d, head_dim, d, 1}};

  for (const EncoderLayerWeights& layer : model_.encoder_layers()) {
    layer.qkv.Forward(ctx, x, rows, qkv);
    BatchedMatMul(ctx, queries, keys_t, probs, &key_mask);
    Softmax(ctx, scores, batch * heads * s, s);
    BatchedMatMul(ctx, probs, values, heads_out);
    layer.out_proj.Forward(ctx, context, rows, x, Epilogue::kAddToOutput);
    layer.attention_norm.Forward(ctx, x, rows);
    for (int64_t first = 0; first < rows; first += Linear::kMaxRows) {
      const int64_t block = std::min(Linear::kMaxRows, rows - first);
      layer.fc1.Forward(ctx, x + first * d, block, ffn, model_.activation());
      layer.fc2.Forward(ctx, ffn, block, x + first * d, Epilogue::kAddToOutput);
    }
    layer.ffn_norm.Forward(ctx, x, rows);
  }
  // Give the scratch back: the decoder, which runs next and for longer, needs memory too, and
  // a worker's peak is then the larger of the two phases rather than their sum. Allocating it
  // again costs far less than encoding a batch.
  qkv_.Release();
  scores_.Release();
  context_.Release();
  ffn_.Release();
}

}  // namespace mtserve
