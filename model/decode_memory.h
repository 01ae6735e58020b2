// Upper bounds of the memory a Translator holds while decoding, from the model's shape, the
// decoding options and the sizes of the texts' term constraints alone: what a server needs to
// admit work without letting one worker's decode grow past a budget, whatever the texts turn out
// to need.
//
// Counted: every beam's self-attention keys and values for max_length steps (and the pooling
// slack of the cache's chunks), cross-attention keys and values, the per-row activations of a
// decoder step (the vocabulary's logits included), hypotheses (and alignments, when asked for),
// and the encoder's scratch while texts join; for texts with term constraints, what the search
// holds for them (Terms: the constraints, the trie of their forms, placed terms, a step's
// candidates and proposals) and the alignment every row then computes; with options.shortlist and
// a model that has one, a lexical shortlist's projection, maps and masks (VocabularySelection).
// Not counted: the weights
// (shared by all workers), oneDNN's primitives and their scratchpad, bfloat16 and int8 layers'
// converted inputs (at most Linear::kMaxRows rows of the widest layer: all bounded by the model's
// shape and the shapes a worker sees, not by the texts), what a worker keeps for its next decode
// (the cache's chunk pool, KvCache::kRetainedBytes; other buffers, kRetainedBatchBytes), and the
// allocator's own overhead.
#ifndef MTSERVE_MODEL_DECODE_MEMORY_H_
#define MTSERVE_MODEL_DECODE_MEMORY_H_

#include <cstdint>

#include "model/decoding/decoding_options.h"
#include "model/decoding/term_constraints.h"
#include "model/model_config.h"

namespace mtserve {

// The most bytes a beam search's candidate of a sentence with constraints takes (beam_search.cc
// checks).
inline constexpr int64_t kTermCandidateBytes = 96;

// The most a worker keeps, between batches, of the buffers a batch used and gave up (the encoder's
// scratch and output, the cross-attention keys and values of sentences that left), for the next
// batch: allocated anew for each one, their pages were faulted in and zeroed every time, a tenth
// of a small model's time. Beyond this, they are freed (Translator::retained_bytes).
inline constexpr int64_t kRetainedBatchBytes = int64_t{16} << 20;

class DecodeMemory {
 public:
  DecodeMemory(const ModelConfig& config, const DecodingOptions& options);

  // Bytes a decode of `texts` texts, the longest of which has `longest` source tokens, holds at
  // most at any step; `terms`: the sum of Terms() over those of its texts with constraints.
  int64_t Decoding(int64_t texts, int64_t longest, int64_t terms = 0) const;
  // Bytes encoding `texts` texts padded to `longest` tokens needs on top, while they join.
  int64_t Encoding(int64_t texts, int64_t longest) const;
  // Both: what admitting `joining` texts (padded to `joining_longest`) to a decode that then
  // holds `texts` texts whose longest has `longest` tokens can reach.
  int64_t Admitting(int64_t texts, int64_t longest, int64_t joining, int64_t joining_longest,
                    int64_t terms = 0) const {
    return Decoding(texts, longest, terms) + Encoding(joining, joining_longest);
  }
  // Bytes a text's `constraints` add to its decode (0 without: null or none).
  int64_t Terms(const TermConstraints* constraints) const;

  // The decoder's key and value bytes per generated token and beam (what the self-attention cache
  // grows by at each step).
  int64_t cache_bytes_per_token() const { return cache_bytes_per_token_; }
  int max_length() const { return max_length_; }
  int beam_size() const { return beam_size_; }

 private:
  int64_t d_model_;
  int64_t heads_;
  int64_t encoder_ffn_dim_;
  int64_t cross_bytes_per_token_;
  int64_t cache_bytes_per_token_;
  int64_t row_bytes_;  // Per beam, besides its cache: activations, pointer tables, ...
  int64_t row_bytes_per_source_token_;
  int64_t text_bytes_;  // Per text, besides its beams: finished hypotheses.
  int64_t decode_bytes_ = 0;  // Per decode: a lexical shortlist's projection and maps.
  // Per row and per row and source token: the alignment that constraints make every row compute
  // (0 with return_alignment, already counted).
  int64_t alignment_row_bytes_ = 0;
  int64_t alignment_row_bytes_per_source_token_ = 0;
  int max_length_;
  int beam_size_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODE_MEMORY_H_
