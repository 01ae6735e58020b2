#include "model/kernels/self_attention.h"

#include <cmath>
#include <cstring>

#include "model/kernels/target_clones.h"
#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

// kLanes positions, or value elements, in one vector (GCC's vector extension: one register with
// AVX-512, two with AVX2, four in baseline x86-64), so that sums stay in registers.
constexpr int kLanes = kSelfAttentionLanes;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

// Always inlined into the kernel's clones, so the vector never crosses a call: GCC's warning about
// the calling convention of vectors wider than the baseline's registers does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
inline __attribute__((always_inline)) Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline __attribute__((always_inline)) void Store(Vec v, float* p) { std::memcpy(p, &v, sizeof(v)); }

// One head. The keys are transposed first ([head_dim, padded length], zero past the length), so
// that a query's scores are sums of key rows scaled by its elements, kLanes positions at a time,
// and its output a sum of value rows scaled by their probabilities, kLanes elements at a time;
// four independent sums each (a single one would wait on its own last addition every time), and
// none ends in a horizontal sum.
MTSERVE_TARGET_CLONES void AttendHead(const float* q, const float* k, const float* v,
                                      int64_t stride, int length, int head_dim, float* keys_t,
                                      float* scores, float* out, int64_t out_stride) {
  const int padded = SelfAttentionPaddedLength(length);
  for (int i = 0; i < head_dim; ++i) {
    float* row = keys_t + static_cast<int64_t>(i) * padded;
    for (int j = 0; j < length; ++j) row[j] = k[j * stride + i];
    for (int j = length; j < padded; ++j) row[j] = 0.f;
  }
  for (int r = 0; r < length; ++r) {
    const float* query = q + r * stride;
    for (int j0 = 0; j0 < padded; j0 += kLanes) {
      const float* keys = keys_t + j0;
      Vec acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
      int i = 0;
      for (; i + 4 <= head_dim; i += 4) {
        acc0 += query[i] * Load(keys + static_cast<int64_t>(i) * padded);
        acc1 += query[i + 1] * Load(keys + static_cast<int64_t>(i + 1) * padded);
        acc2 += query[i + 2] * Load(keys + static_cast<int64_t>(i + 2) * padded);
        acc3 += query[i + 3] * Load(keys + static_cast<int64_t>(i + 3) * padded);
      }
      for (; i < head_dim; ++i) acc0 += query[i] * Load(keys + static_cast<int64_t>(i) * padded);
      Store((acc0 + acc1) + (acc2 + acc3), scores + j0);
    }
    float max_score = -INFINITY;
    for (int j = 0; j < length; ++j) max_score = scores[j] > max_score ? scores[j] : max_score;
    float sum = 0.f;
    for (int j = 0; j < length; ++j) {
      scores[j] = std::exp(scores[j] - max_score);
      sum += scores[j];
    }
    const float inv_sum = 1.f / sum;
    for (int j = 0; j < length; ++j) scores[j] *= inv_sum;
    float* o = out + r * out_stride;
    int i0 = 0;
    for (; i0 + 4 * kLanes <= head_dim; i0 += 4 * kLanes) {
      Vec acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
      for (int j = 0; j < length; ++j) {
        const float p = scores[j];
        const float* value = v + j * stride + i0;
        acc0 += p * Load(value);
        acc1 += p * Load(value + kLanes);
        acc2 += p * Load(value + 2 * kLanes);
        acc3 += p * Load(value + 3 * kLanes);
      }
      Store(acc0, o + i0);
      Store(acc1, o + i0 + kLanes);
      Store(acc2, o + i0 + 2 * kLanes);
      Store(acc3, o + i0 + 3 * kLanes);
    }
    for (; i0 + kLanes <= head_dim; i0 += kLanes) {
      Vec acc = {};
      for (int j = 0; j < length; ++j) acc += scores[j] * Load(v + j * stride + i0);
      Store(acc, o + i0);
    }
    for (; i0 < head_dim; ++i0) {
      float acc = 0.f;
      for (int j = 0; j < length; ++j) acc += scores[j] * v[j * stride + i0];
      o[i0] = acc;
    }
  }
}

}  // namespace

void SelfAttention(const SelfAttentionArgs& args) {
  const int width = args.heads * args.head_dim;
  if (PhaseProfile* profile = PhaseProfile::Active()) {
    // Scores, then the weighted sum of the values.
    profile->AddMacs(2 * static_cast<int64_t>(args.length) * args.length * width);
  }
  float* keys_t = args.scratch;
  float* scores =
      keys_t + static_cast<int64_t>(SelfAttentionPaddedLength(args.length)) * args.head_dim;
  for (int h = 0; h < args.heads; ++h) {
    const int64_t offset = static_cast<int64_t>(h) * args.head_dim;
    AttendHead(args.qkv + offset, args.qkv + width + offset, args.qkv + 2 * width + offset,
               args.qkv_stride, args.length, args.head_dim, keys_t, scores, args.out + offset,
               args.out_stride);
  }
}

}  // namespace mtserve
