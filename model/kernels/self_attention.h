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

int64_t SelfAttentionScratchFloats(int length, int head_dim);

void SelfAttention(const SelfAttentionArgs& args);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_SELF_ATTENTION_H_
