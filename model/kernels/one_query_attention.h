// Multi-head attention for rows that each have one query and their own list of key/value
// positions: the decoder's incremental step. Each row reaches its keys and values through
// pointers, so the KV cache is read where it lies (beam reordering moves no cache data) and all
// beams of a sentence read one copy of the encoder's keys and values. A strided batched GEMM can
// express neither, and with one query per head the work is a gather-GEMV, so this is a plain
// vectorised kernel, compiled for AVX-512, AVX2 and baseline x86-64 and picked at run time.
#ifndef MTSERVE_MODEL_KERNELS_ONE_QUERY_ATTENTION_H_
#define MTSERVE_MODEL_KERNELS_ONE_QUERY_ATTENTION_H_

#include <cstdint>

namespace mtserve {

// The element type of the keys and values: float32, or bfloat16 (the reduced compute types' KV
// cache: this kernel waits on memory, and bfloat16 halves what it reads).
enum class VectorType { kFloat32, kBFloat16 };

struct OneQueryAttentionArgs {
  const float* queries;  // [rows, heads * head_dim], row stride query_stride; already scaled.
  int64_t query_stride;
  // For row r, position s: keys[r * max_positions + s] points at that position's
  // [heads * head_dim] key vector; likewise values.
  const void* const* keys;  // float or uint16_t (bfloat16) vectors, as vector_type says.
  const void* const* values;
  const int* lengths;  // [rows]: positions of each row, each >= 1.
  int max_positions;
  int rows;
  int heads;
  int head_dim;
  float* out;  // [rows, heads * head_dim], dense.
  // Optional (null: not computed, no cost): [rows, max_positions], dense. Row r gets its
  // attention probabilities averaged over the heads at positions [0, lengths[r]) and 0 after;
  // the decoder asks for them from its last cross-attention layer, for alignments.
  float* probabilities;
  VectorType vector_type = VectorType::kFloat32;
};

// Runs over the rows in parallel on the calling thread's OpenMP team. On CPUs with AVX-512 and
// for head_dim a multiple of 32, with a kernel written in its intrinsics; else the portable one.
void OneQueryAttention(const OneQueryAttentionArgs& args);

// The portable kernel whatever the CPU, for tests to check both paths.
void OneQueryAttentionPortable(const OneQueryAttentionArgs& args);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_ONE_QUERY_ATTENTION_H_
