// The decoder stack, run one step at a time over the active rows (hypotheses) of a batch:
// self-attention over the KV cache, cross-attention over the encoder output, feed-forward, then
// the output projection to logits.
//
// Sentences and rows may join between steps (continuous batching): each row has its own position,
// and each sentence its own encoder keys and values, given up when the sentence is removed (the
// largest buffer given up stays for the sentences that join next, until ReleaseFreeGroups).
#ifndef MTSERVE_MODEL_LAYERS_DECODER_H_
#define MTSERVE_MODEL_LAYERS_DECODER_H_

#include <vector>

#include "absl/types/span.h"
#include "model/kernels/one_query_attention.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_weights.h"
#include "model/ops/aligned_buffer.h"
#include "model/ops/compute_context.h"
#include "model/ops/linear.h"

namespace mtserve {

class Decoder {
 public:
  explicit Decoder(const Model& model);

  // Forgets every sentence and row; the largest of their keys' and values' buffers stays for the
  // next sentences (see ReleaseFreeGroups).
  void Reset();

  // Adds sentences from their encoder output ([count * max_length, d_model], see
  // Encoder::Forward): computes every layer's cross-attention keys and values once, for all the
  // rows (beams) the sentences will have. Returns their ids, for Step's `row_sentence` and
  // RemoveSentence.
  std::vector<int> AddSentences(ComputeContext& ctx, const float* encoder_output,
                                const std::vector<int>& lengths, int max_length);

  // Gives up a sentence's keys and values; no row may belong to it any more.
  void RemoveSentence(int sentence);

  // Appends `count` rows after the current ones, each at its first position in the next Step.
  void AddRows(int count) { cache_.AddRows(count); }

  // One step for every row: row r feeds token ids[r] and belongs to sentence row_sentence[r].
  // Writes logits [rows, vocab_size] (or one column per id RestrictOutputs was given). With
  // `alignment` (null: nothing extra is computed), also writes for each row the source position its
  // last layer's cross-attention, averaged over the heads, weighs most (the first of equals): what
  // CTranslate2 returns by default, and the layer that decides the next token most directly.
  void Step(ComputeContext& ctx, const std::vector<int>& ids, const std::vector<int>& row_sentence,
            FloatBuffer& logits, std::vector<int>* alignment = nullptr);

  // From the next Step on, logits have one column per entry of `ids` (vocabulary ids, in that
  // order; -1: a column of zeros), computed by a projection onto those outputs alone (a lexical
  // shortlist's; see VocabularySelection). With `after_always` (the model must have an
  // always_projection()), the columns of *always_outputs() come first, from the projection packed
  // at load, and those of `ids` (which may be empty) after them: only these are packed here.
  // Empty `ids` without after_always: every id, in vocabulary order (the default).
  void RestrictOutputs(absl::Span<const int> ids, bool after_always = false);
  bool outputs_restricted() const { return restricted_; }
  // The ids RestrictOutputs(ids, true) puts first (the model's shortlist's always-line), or null
  // when the model has no always_projection().
  const std::vector<int>* always_outputs() const;

  // The next step's row i continues this step's row parents[i] (see KvCache::Reorder).
  void Reorder(const std::vector<int>& parents) { cache_.Reorder(parents); }

  // Bytes held: caches, keys and values, step buffers.
  size_t memory_bytes() const;
  // Of those, what buffers of keys and values hold beyond what their sentences need (all of it
  // for the one no sentence uses), and freeing that one.
  size_t retained_bytes() const;
  void ReleaseFreeGroups();

 private:
  // Sentences added together share one buffer of keys and values per layer.
  struct SourceGroup {
    // Per layer: [count * max_length, 2 * d_model] elements of vector_type_.
    std::vector<FloatBuffer> key_values;
    size_t floats = 0;  // Of each buffer, what its sentences use.
    int max_length = 0;
    int live = 0;  // Sentences not yet removed.
  };
  // Frees the buffers of every group no sentence uses but the largest (one join's worth is what
  // the next join can reuse; with many, a server's decode kept a buffer for every join it saw).
  void KeepOneFreeBuffer();
  void ReleaseGroup(int g);

  struct Sentence {
    int group = -1;
    int index = 0;  // In its group.
    int length = 0;
  };

  const Model& model_;
  int heads_;
  int head_dim_;
  // Keys and values (the KV cache and the cross-attention's) are kept in bfloat16 by models
  // computing in bfloat16 or int8, in float32 by float32 models (see one_query_attention.h).
  VectorType vector_type_;
  size_t vector_bytes_;  // Of one key or value: d_model elements.
  std::vector<SourceGroup> groups_;
  std::vector<int> free_groups_;
  std::vector<Sentence> sentences_;
  std::vector<int> free_sentences_;
  KvCache cache_;

  Linear
      restricted_projection_;  // While restricted_: onto the ids given (after the always-line's).
  bool restricted_ = false;
  bool after_always_ = false;  // While restricted_: the always-line's columns come first.
  FloatBuffer x_;
  FloatBuffer qkv_;
  FloatBuffer query_;
  FloatBuffer context_;
  FloatBuffer ffn_;
  FloatBuffer attention_;  // [rows, max_positions]: the last cross-attention, for alignments.
  std::vector<int> positions_;
  std::vector<int> lengths_;
  FloatBuffer cross_key_values_;  // One sentence's, in float32, before they are rounded.
  std::vector<const void*> keys_;
  std::vector<const void*> values_;
  std::vector<char*> step_keys_;  // Of one layer, per step the oldest row reads onwards.
  std::vector<char*> step_values_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_LAYERS_DECODER_H_
