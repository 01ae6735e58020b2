// Multi-head self-attention within one sentence, every query attending to every position of the
// sentence (the encoder's): scores, softmax and the weighted sum of the values, read straight out
// of the fused QKV projection's rows. With 256-wide layers and sentences of a few dozen tokens, a
// head's matrices are a few kilobytes: three oneDNN calls per sentence cost more than their
// arithmetic, so this is a plain vectorised kernel, compiled for AVX-512, AVX2 and baseline x86-64
// and picked at run time.
#ifndef MTSERVE_MODEL_KERNELS_SELF_ATTENTION_H_
#define MTSERVE_MODEL_KERNELS_SELF_ATTENTION_H_

#include <cstdint>

namespace mtserve {

struct SelfAttentionArgs {
  // [length, 3 * heads * head_dim] with row stride qkv_stride: each position's query (already
  // scaled), key and value, heads side by side within each.
  const float* qkv;
  int64_t qkv_stride;
  int length;  // >= 0.
  int heads;
  int head_dim;
  float* out;  // [length, heads * head_dim] with row stride out_stride.
  int64_t out_stride;
  // Room for SelfAttentionScratchFloats(length, head_dim) floats.
  float* scratch;
};

// A head's keys are transposed into rows of the length rounded up to this many positions (a
// vector's floats).
inline constexpr int kSelfAttentionLanes = 16;

// `length` rounded up to kSelfAttentionLanes: the length of a transposed key row.
inline int SelfAttentionPaddedLength(int length) {
  return (length + kSelfAttentionLanes - 1) / kSelfAttentionLanes * kSelfAttentionLanes;
}
// The scratch SelfAttention needs for sentences of at most `length` tokens: one head's transposed
// keys and one query's scores, each row of the rounded length. Inline, so that the decode memory
// bound (model/decode_memory.cc, built without the kernels) counts it by the same formula.
inline int64_t SelfAttentionScratchFloats(int length, int head_dim) {
  return static_cast<int64_t>(SelfAttentionPaddedLength(length)) * (head_dim + 1);
}

void SelfAttention(const SelfAttentionArgs& args);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_SELF_ATTENTION_H_
