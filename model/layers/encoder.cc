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

  // Row-wise layers (projections, feed-forward, norms) run on the real tokens only, packed
  // [tokens, d]; attention runs on the padded [batch, s] layout. With lengths as mixed as a
  // server's batches, padding would otherwise be a large share of the encoder's work.
  std::vector<int64_t>& first_row = packed_first_row_;  // Sentence b's first packed row.
  first_row.resize(batch + 1);
  first_row[0] = 0;
  for (int64_t b = 0; b < batch; ++b) first_row[b + 1] = first_row[b] + lengths[b];
  const int64_t tokens = first_row[batch];
  std::vector<int> packed_ids(tokens);
  positions_.resize(tokens);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < lengths[b]; ++j) {
      packed_ids[first_row[b] + j] = ids[b * s + j];
      positions_[first_row[b] + j] = static_cast<int>(j);
    }
  }
  float* x = x_.Reserve(tokens * d);
  model_.source_embeddings().Forward(packed_ids.data(), positions_.data(), static_cast<int>(tokens),
                                     x);
  // Copies each sentence's rows between the packed and the padded layout.
  auto for_each_sentence = [&](auto&& copy) {
    for (int64_t b = 0; b < batch; ++b) copy(b * s, first_row[b], lengths[b]);
  };

  // Keys past a sentence's end get -inf added to their scores, so they weigh exactly zero.
  float* mask = mask_.Reserve(rows);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < s; ++j) mask[b * s + j] = j < lengths[b] ? 0.f : -INFINITY;
  }

  float* packed_qkv = packed_qkv_.Reserve(tokens * 3 * d);
  float* qkv = qkv_.Reserve(rows * 3 * d);
  // Padding rows take part in attention as queries whose results are dropped; keep them finite.
  std::fill(qkv, qkv + rows * 3 * d, 0.f);
  float* scores = scores_.Reserve(batch * heads * s * s);
  float* context = context_.Reserve(rows * d);
  float* packed_context = packed_context_.Reserve(tokens * d);
  // The feed-forward block runs Linear::kMaxRows rows at a time: its wide hidden layer then needs
  // a small buffer, not one for the whole batch.
  float* ffn = ffn_.Reserve(std::min(tokens, Linear::kMaxRows) * config.encoder_ffn_dim);
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
    layer.qkv.Forward(ctx, x, tokens, packed_qkv);
    for_each_sentence([&](int64_t padded, int64_t packed, int64_t n) {
      std::copy_n(packed_qkv + packed * qkv_row, n * qkv_row, qkv + padded * qkv_row);
    });
    BatchedMatMul(ctx, queries, keys_t, probs, &key_mask);
    Softmax(ctx, scores, batch * heads * s, s);
    BatchedMatMul(ctx, probs, values, heads_out);
    for_each_sentence([&](int64_t padded, int64_t packed, int64_t n) {
      std::copy_n(context + padded * d, n * d, packed_context + packed * d);
    });
    layer.out_proj.Forward(ctx, packed_context, tokens, x, Epilogue::kAddToOutput);
    layer.attention_norm.Forward(ctx, x, tokens);
    for (int64_t first = 0; first < tokens; first += Linear::kMaxRows) {
      const int64_t block = std::min(Linear::kMaxRows, tokens - first);
      layer.fc1.Forward(ctx, x + first * d, block, ffn, model_.activation());
      layer.fc2.Forward(ctx, ffn, block, x + first * d, Epilogue::kAddToOutput);
    }
    layer.ffn_norm.Forward(ctx, x, tokens);
  }
  float* result = out.Reserve(rows * d);
  std::fill(result, result + rows * d, 0.f);
  for_each_sentence([&](int64_t padded, int64_t packed, int64_t n) {
    std::copy_n(x + packed * d, n * d, result + padded * d);
  });
  // Give the scratch back: the decoder, which runs next and for longer, needs memory too, and
  // a worker's peak is then the larger of the two phases rather than their sum. Allocating it
  // again costs far less than encoding a batch.
  x_.Release();
  packed_qkv_.Release();
  packed_context_.Release();
  qkv_.Release();
  scores_.Release();
  context_.Release();
  ffn_.Release();
}

}  // namespace mtserve
