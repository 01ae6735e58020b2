#include "model/decode_memory.h"

#include <algorithm>
#include <vector>

#include "model/decoding/term_tracker.h"
#include "model/kernels/self_attention.h"
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
  } else {
    // A decode with a text with constraints computes every row's alignment (not kept in the
    // hypotheses): the last cross-attention's probabilities and this step's position.
    alignment_row_bytes_ = length * kFloat + sizeof(int);
    alignment_row_bytes_per_source_token_ = kFloat;
  }
  if (options.shortlist && config.lexical_shortlist) {
    // With a lexical shortlist: the decoder's
    // projection onto the union of candidates, at most kMaxShortlistShare of the vocabulary, its
    // weights counted in float32 with bias, scales and offsets, three times (the one in use, the
    // one replacing it, and the plain copy packed into it); the selection's counts and maps per
    // id; per text its candidates (a vector at most twice their number) and its mask (a byte a
    // column: the whole vocabulary's when the union is too wide to restrict).
    const int64_t vocab = config.vocab_size;
    const int64_t width = static_cast<int64_t>(kMaxShortlistShare * vocab);
    decode_bytes_ = 3 * width * (d + 3) * kFloat + 3 * vocab * sizeof(int);
    text_bytes_ += 2 * vocab * sizeof(int) + vocab;
  }
}

int64_t DecodeMemory::Terms(const TermConstraints* constraints) const {
  if (constraints == nullptr || constraints->terms.empty()) return 0;
  const TermSizes sizes = SizesOf(*constraints);
  const int64_t beam = beam_size_;
  // The constraints, held by the search while the text decodes (each vector at most twice its
  // size, as push_back and initializer lists make them).
  int64_t bytes =
      sizeof(TermConstraints) + 2 * (sizes.terms * static_cast<int64_t>(sizeof(TermConstraint)) +
                                     sizes.forms * static_cast<int64_t>(sizeof(std::vector<int>)) +
                                     sizes.tokens * static_cast<int64_t>(sizeof(int)));
  // The trie of their forms.
  bytes += TermTracker::MemoryBound(sizes);
  // Placed terms, one per constraint at most, in vectors at most twice that: in the rows of the
  // live and the next beam, and (as many) in a beam of finished hypotheses and the one being
  // added. A greedy search's one hypothesis holds fewer.
  bytes += (2 * beam * 2 + beam + 1) * sizes.terms * static_cast<int64_t>(sizeof(PlacedTerm));
  // A step's candidates, in vectors at most twice that: per row its 2 x beam best tokens, its
  // proposals (the tokens that continue its match and those that start a form: a trie node has
  // at most one child per form) and one more after a term, each with its bank and whether it is
  // taken.
  const int64_t candidates = beam * (2 * beam + 2 * sizes.forms + 1);
  bytes += 2 * candidates * (kTermCandidateBytes + static_cast<int64_t>(sizeof(int) + 1));
  // Proposals (continuations, starts and aligned starts before they are made unique; a greedy
  // search's fewer), aligned starts, and the banks (0 to all constraint tokens met), each in a
  // vector at most twice that.
  bytes += 2 * (3 * sizes.forms + sizes.forms + 2 * (sizes.tokens + 1)) *
           static_cast<int64_t>(sizeof(int));
  return bytes;
}

int64_t DecodeMemory::Decoding(int64_t texts, int64_t longest, int64_t terms) const {
  const int64_t rows = texts * beam_size_;
  const int64_t cache = rows * max_length_ * cache_bytes_per_token_;
  int64_t row_bytes = row_bytes_;
  int64_t row_bytes_per_source_token = row_bytes_per_source_token_;
  if (terms > 0) {
    row_bytes += alignment_row_bytes_;
    row_bytes_per_source_token += alignment_row_bytes_per_source_token_;
  }
  // Source keys and values are kept for the batch's padded length (shape_buckets.h).
  return kCacheSlackFactor * cache + kCacheChunkBytes + decode_bytes_ + rows * row_bytes +
         rows * longest * row_bytes_per_source_token + texts * text_bytes_ +
         texts * BucketLength(longest) * cross_bytes_per_token_ + terms;
}

int64_t DecodeMemory::Encoding(int64_t texts, int64_t longest) const {
  if (texts == 0) return 0;
  // The batch is padded to a bucketed length, and row-wise layers run on a bucketed number of
  // rows (shape_buckets.h).
  const int64_t length = BucketLength(longest);
  const int64_t padded_rows = BucketRows(texts * longest);
  const int64_t rows = std::max(texts * length, padded_rows);
  // The output and residual stream (d), fused query-key-value (3d) and attention context (d) per
  // row, one head's transposed keys and one query's scores (SelfAttentionScratchFloats), the
  // feed-forward block of at most kLinearBlockRows rows, and the token ids and positions (plus
  // what index vectors kept from larger batches hold: at most kIndexSlackBytes).
  constexpr int64_t kIndexSlackBytes = 64 << 10;
  return rows * 5 * d_model_ * kFloat +
         SelfAttentionScratchFloats(static_cast<int>(length), static_cast<int>(d_model_ / heads_)) *
             kFloat +
         std::min(padded_rows, kLinearBlockRows) * encoder_ffn_dim_ * kFloat +
         rows * 3 * sizeof(int) + kIndexSlackBytes;
}

}  // namespace mtserve
