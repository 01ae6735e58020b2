// Sizes rounded up to a few values, for the work done once per batch of source sentences (the
// encoder, each sentence's keys and values for the decoder). oneDNN makes a primitive, with JIT
// code of its own, for every shape it is given, and a server's batches come in every size: run
// at exact sizes, a worker met new shapes all the time (about 30 a second at 64 concurrent
// clients), each costing its compilation and memory. Rounded, they are a few dozen. The padding
// costs little: it is at most a fifth of work that is itself a small share of translating.
#ifndef MTSERVE_MODEL_OPS_SHAPE_BUCKETS_H_
#define MTSERVE_MODEL_OPS_SHAPE_BUCKETS_H_

#include <cstdint>

namespace mtserve {

// A source batch's padded length: a multiple of 8 up to 32, of 16 up to 128, then of 64.
inline int64_t BucketLength(int64_t length) {
  const int64_t step = length <= 32 ? 8 : length <= 128 ? 16 : 64;
  return (length + step - 1) / step * step;
}

// The rows Linear computes per oneDNN call (Linear::kMaxRows), and so the rows the encoder's
// feed-forward block holds at once (decode_memory.h counts them without oneDNN).
inline constexpr int64_t kLinearBlockRows = 256;

// Row counts of row-wise ops over a batch's tokens: a multiple of 16 up to 256, of 64 up to 1,024,
// then of 256 (Linear computes 256 rows at a time, so its remainders are multiples of 16).
inline int64_t BucketRows(int64_t rows) {
  const int64_t step = rows <= 256 ? 16 : rows <= 1024 ? 64 : 256;
  return (rows + step - 1) / step * step;
}

// A lexical shortlist's union of candidates wider than this share of the vocabulary is computed as
// the whole vocabulary (VocabularySelection): narrower, it gains little, and its copy of the
// projection's weights grows.
inline constexpr double kMaxShortlistShare = 0.5;

// The width of a lexical shortlist's projection (VocabularySelection), whose union of candidates
// changes as sentences come and go: a multiple of 64 up to 1,024, of 256 up to 4,096, then of
// 1,024.
inline int64_t BucketColumns(int64_t columns) {
  const int64_t step = columns <= 1024 ? 64 : columns <= 4096 ? 256 : 1024;
  return (columns + step - 1) / step * step;
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_SHAPE_BUCKETS_H_
