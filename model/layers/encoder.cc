#include "model/layers/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/ops/batched_matmul.h"
#include "model/ops/phase_profile.h"
#include "model/ops/shape_buckets.h"
#include "model/ops/softmax.h"

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

  // Row-wise layers (projections, feed-forward, norms) run on the real tokens only, packed
  // [tokens, d]; attention runs on the padded [batch, s] layout. With lengths as mixed as a
  // server's batches, padding would otherwise be a large share of the encoder's work.
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
  // x lives in `out`: packed in its first `tokens` rows, spread to the padded layout at the end.
  // The padded layout's rows, or the row-wise layers' padded rows, whichever is more.
  const int64_t buffer_rows = std::max(rows, padded);
  float* x = out.Reserve(buffer_rows * d);
  model_.weights().source_embeddings->Forward(packed_ids.data(), positions_.data(),
                                              static_cast<int>(tokens), x);
  std::fill(x + tokens * d, x + padded * d, 0.f);
  // In-place moves between the packed and the padded layout of a [rows, width] buffer: padded
  // row b * s + j is packed row first_row[b] + j, never before it, so spreading runs from the
  // last sentence back and packing from the first on, and no sentence overwrites one not yet
  // moved. Spreading zeroes the padding rows (they take part in attention as queries whose
  // results are dropped, and must stay finite).
  auto spread = [&](float* data, int64_t width) {
    for (int64_t b = batch - 1; b >= 0; --b) {
      std::memmove(data + b * s * width, data + first_row[b] * width,
                   lengths[b] * width * sizeof(float));
      std::fill(data + (b * s + lengths[b]) * width, data + (b + 1) * s * width, 0.f);
    }
  };
  auto pack = [&](float* data, int64_t width) {
    for (int64_t b = 0; b < batch; ++b) {
      std::memmove(data + first_row[b] * width, data + b * s * width,
                   lengths[b] * width * sizeof(float));
    }
  };

  // Keys past a sentence's end get -inf added to their scores, so they weigh exactly zero.
  float* mask = mask_.Reserve(rows);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < s; ++j) mask[b * s + j] = j < lengths[b] ? 0.f : -INFINITY;
  }

  float* qkv = qkv_.Reserve(buffer_rows * 3 * d);
  // Attention runs one sentence at a time: its shapes then depend on the (bucketed) length only.
  float* scores = scores_.Reserve(heads * s * s);
  float* context = context_.Reserve(buffer_rows * d);
  // The feed-forward block runs Linear::kMaxRows rows at a time: its wide hidden layer then needs
  // a small buffer, not one for the whole batch.
  float* ffn = ffn_.Reserve(std::min(padded, Linear::kMaxRows) * config.encoder_ffn_dim);
  // Views of [batch, time, heads, head_dim] data as [batch, heads, time, head_dim].
  const int64_t qkv_row = 3 * d;
  // Views of sentence b's [time, heads, head_dim] data as [1, heads, time, head_dim].
  const StridedView probs{scores, {1, heads, s, s}, {heads * s * s, s * s, s, 1}};
  auto attention = [&](int64_t b) {
    float* sentence_qkv = qkv + b * s * qkv_row;
    const StridedView queries{sentence_qkv, {1, heads, s, head_dim},
                              {s * qkv_row, head_dim, qkv_row, 1}};
    const StridedView keys_t{sentence_qkv + d, {1, heads, head_dim, s},
                             {s * qkv_row, head_dim, 1, qkv_row}};
    const StridedView values{sentence_qkv + 2 * d, {1, heads, s, head_dim},
                             {s * qkv_row, head_dim, qkv_row, 1}};
    const StridedView key_mask{mask + b * s, {1, 1, 1, s}, {s, s, s, 1}};
    const StridedView heads_out{context + b * s * d, {1, heads, s, head_dim},
                                {s * d, head_dim, d, 1}};
    BatchedMatMul(ctx, queries, keys_t, probs, &key_mask);
    Softmax(ctx, scores, heads * s, s);
    BatchedMatMul(ctx, probs, values, heads_out);
  };

  for (const EncoderLayerWeights& layer : model_.weights().encoder_layers) {
    layer.qkv.Forward(ctx, x, padded, qkv);
    spread(qkv, qkv_row);
    for (int64_t b = 0; b < batch; ++b) attention(b);
    pack(context, d);
    layer.out_proj.Forward(ctx, context, padded, x, Epilogue::kAddToOutput);
    layer.attention_norm.Forward(ctx, x, padded);
    for (int64_t first = 0; first < padded; first += Linear::kMaxRows) {
      const int64_t block = std::min(Linear::kMaxRows, padded - first);
      layer.fc1.Forward(ctx, x + first * d, block, ffn, model_.weights().activation);
      layer.fc2.Forward(ctx, ffn, block, x + first * d, Epilogue::kAddToOutput);
    }
    layer.ffn_norm.Forward(ctx, x, padded);
  }
  spread(x, d);
  peak_bytes_ = out.bytes() + qkv_.bytes() + scores_.bytes() + context_.bytes() + ffn_.bytes() +
                mask_.bytes() + (packed_ids.capacity() + positions_.capacity()) * sizeof(int) +
                ids.capacity() * sizeof(int);
  // Give the scratch back: the decoder, which runs next and for longer, needs memory too, and
  // a worker's peak is then the larger of the two phases rather than their sum. Allocating it
  // again costs far less than encoding a batch.
  qkv_.Release();
  scores_.Release();
  context_.Release();
  ffn_.Release();
  mask_.Release();
}

}  // namespace mtserve
