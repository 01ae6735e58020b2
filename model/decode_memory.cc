#include "model/decode_memory.h"

#include <algorithm>

#include "model/ops/shape_buckets.h"

namespace mtserve {
namespace {

constexpr int64_t kFloat = sizeof(float);
constexpr int64_t kPointer = sizeof(void*);
// The cache's storage is pooled in chunks of at least 1 MiB, each holding whole steps: a chunk
// may be partly unused, and pooled chunks of one size wait while steps of another are carved.
// Twice what the live steps need, plus two chunks, bounds both.
constexpr int64_t kCacheSlackFactor = 2;
constexpr int64_t kCacheChunkBytes = 2 << 20;

}  // namespace

DecodeMemory::DecodeMemory(const ModelConfig& config, const DecodingOptions& options)
    : d_model_(config.d_model),
      heads_(config.encoder_attention_heads),
      encoder_ffn_dim_(config.encoder_ffn_dim),
      max_length_(EffectiveMaxLength(options, config)),
      beam_size_(std::max(1, options.beam_size)) {
  const int64_t d = config.d_model;
  const int64_t layers = config.decoder_layers;
  const int64_t length = max_length_;
  // Keys and values of every decoder layer, for self-attention (one per step and beam) and
  // cross-attention (one per source token and text). Counted in float32: models computing in
  // bfloat16 or int8 keep them in bfloat16, half of that, and are admitted conservatively.
  cache_bytes_per_token_ = layers * 2 * d * kFloat;
  cross_bytes_per_token_ = layers * 2 * d * kFloat;
  // A decoder step's activations per row: embeddings/residual (d), fused query-key-value (3d),
  // cross query (d), attention context (d), feed-forward hidden layer, the vocabulary's
  // log-probabilities, and beam search's candidates.
  row_bytes_ = (6 * d + config.decoder_ffn_dim + config.vocab_size) * kFloat;
  // Per step: the cache lineage (two copies while reordering, grown by doubling), and the
  // hypothesis's ids and log-probabilities (live and next beams, grown by doubling).
  row_bytes_ += length * (2 * 2 * sizeof(int) + 2 * 2 * (sizeof(int) + sizeof(float)));
  // Attention reads keys and values through a pointer table per row, as long as the longest of
  // its own steps and the source.
  row_bytes_ += length * 2 * kPointer;
  row_bytes_per_source_token_ = 2 * kPointer;
  // A text's finished hypotheses: up to a beam of them, each up to max_length long.
  text_bytes_ = beam_size_ * length * 2 * (sizeof(int) + sizeof(float));
  if (options.return_alignment) {
    // The last cross-attention's probabilities (a row as long as the longest of its steps and
    // the source), this step's position, and an alignment as long as the ids wherever they are.
    row_bytes_ += length * kFloat + sizeof(int) + length * 2 * 2 * sizeof(int);
    row_bytes_per_source_token_ += kFloat;
    text_bytes_ += beam_size_ * length * sizeof(int);
  }
}

int64_t DecodeMemory::Decoding(int64_t texts, int64_t longest) const {
  const int64_t rows = texts * beam_size_;
  const int64_t cache = rows * max_length_ * cache_bytes_per_token_;
  // Source keys and values are kept for the batch's padded length (shape_buckets.h).
  return kCacheSlackFactor * cache + kCacheChunkBytes + rows * row_bytes_ +
         rows * longest * row_bytes_per_source_token_ + texts * text_bytes_ +
         texts * BucketLength(longest) * cross_bytes_per_token_;
}

int64_t DecodeMemory::Encoding(int64_t texts, int64_t longest) const {
  if (texts == 0) return 0;
  // The batch is padded to a bucketed length, and row-wise layers run on a bucketed number of
  // rows (shape_buckets.h).
  const int64_t length = BucketLength(longest);
  const int64_t padded_rows = BucketRows(texts * longest);
  const int64_t rows = std::max(texts * length, padded_rows);
  // The output and residual stream (d), fused query-key-value (3d), attention context (d) and the
  // key mask per row, one sentence's attention probabilities (every head), the feed-forward
  // block of at most kLinearBlockRows rows, and the token ids and positions (plus what index
  // vectors kept from larger batches hold: at most kIndexSlackBytes).
  constexpr int64_t kIndexSlackBytes = 64 << 10;
  return rows * (5 * d_model_ + 1) * kFloat + heads_ * length * length * kFloat +
         std::min(padded_rows, kLinearBlockRows) * encoder_ffn_dim_ * kFloat +
         rows * 3 * sizeof(int) + kIndexSlackBytes;
}

}  // namespace mtserve
