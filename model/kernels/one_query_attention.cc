#include "model/kernels/one_query_attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "model/float16.h"
#include "model/kernels/target_clones.h"
#include "model/kernels/vector_exp.h"
#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

// An element of a key or value vector, as a float: bfloat16 is a float's top half.
inline __attribute__((always_inline)) float Element(const float* v, int i) { return v[i]; }
inline __attribute__((always_inline)) float Element(const uint16_t* v, int i) {
  return BFloat16ToFloat(v[i]);
}

// Asks for the vector two positions ahead while this one is computed: the vectors of a row are
// scattered over the cache, too far apart for the hardware's prefetcher to see a stream.
template <typename T>
inline __attribute__((always_inline)) void PrefetchVector(const void* const* vectors, int s,
                                                          int length, int width) {
  constexpr int kAhead = 2;
  constexpr int kPerLine = 64 / sizeof(T);
  if (s + kAhead >= length) return;
  const T* next = static_cast<const T*>(vectors[s + kAhead]);
  for (int i = 0; i < width; i += kPerLine) __builtin_prefetch(next + i);
}

// Each head's scores, scores[h * length, (h + 1) * length), to their softmax in place; with
// `probabilities`, adds their average over the heads to it. Vector loops (the exponential in them
// is kernels/vector_exp.h's), compiled for the caller's target.
inline __attribute__((always_inline)) void SoftmaxPerHead(float* scores, int heads, int length,
                                                          float* probabilities) {
  for (int h = 0; h < heads; ++h) {
    float* hs = scores + h * length;
    SoftmaxInPlace(hs, length);
    if (probabilities != nullptr) {
      const float weight = 1.f / static_cast<float>(heads);
#pragma omp simd
      for (int s = 0; s < length; ++s) probabilities[s] += hs[s] * weight;
    }
  }
}

// One row, every head, keys and values of element type T. `scores` has room for heads * length
// floats. `probabilities`, when not null, has `length` zeros and gets the probabilities averaged
// over the heads.
//
// Positions are the outer loop, so each key and value vector is read once, front to back: the
// keys of one row lie at different places in the cache, and with heads outermost every head
// came back to every position's vector for its own slice, which made this kernel wait on memory
// (a quarter of an int8 decoder's time, once int8 had made the matmuls four times faster).
template <typename T>
inline __attribute__((always_inline)) void AttendRowOf(const float* q, const void* const* keys,
                                                       const void* const* values, int length,
                                                       int heads, int head_dim, float* scores,
                                                       float* out, float* probabilities) {
  const int width = heads * head_dim;
  for (int s = 0; s < length; ++s) {
    PrefetchVector<T>(keys, s, length, width);
    const T* k = static_cast<const T*>(keys[s]);
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      float dot = 0.f;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < head_dim; ++i) dot += q[offset + i] * Element(k, offset + i);
      scores[h * length + s] = dot;
    }
  }
  SoftmaxPerHead(scores, heads, length, probabilities);
#pragma omp simd
  for (int i = 0; i < width; ++i) out[i] = 0.f;
  for (int s = 0; s < length; ++s) {
    PrefetchVector<T>(values, s, length, width);
    const T* v = static_cast<const T*>(values[s]);
    for (int h = 0; h < heads; ++h) {
      const int offset = h * head_dim;
      const float p = scores[h * length + s];
#pragma omp simd
      for (int i = 0; i < head_dim; ++i) out[offset + i] += p * Element(v, offset + i);
    }
  }
}

MTSERVE_TARGET_CLONES void AttendRow(const float* q, const void* const* keys,
                                     const void* const* values, int length, int heads, int head_dim,
                                     float* scores, float* out, float* probabilities) {
  AttendRowOf<float>(q, keys, values, length, heads, head_dim, scores, out, probabilities);
}

MTSERVE_TARGET_CLONES void AttendRowBFloat16(const float* q, const void* const* keys,
                                             const void* const* values, int length, int heads,
                                             int head_dim, float* scores, float* out,
                                             float* probabilities) {
  AttendRowOf<uint16_t>(q, keys, values, length, heads, head_dim, scores, out, probabilities);
}

#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
// The same in AVX-512 intrinsics, for head_dim a multiple of 32. A vector goes in pieces of 32
// elements, each read as two 16-lane halves: float32, its first and second 16; bfloat16, its even
// and odd elements, which one 512-bit load holds in the low and high halves of its 32-bit lanes,
// made floats by one shift or one mask (half the operations of widening 16 at a time). The query
// is rearranged to match once per row, and the output back at the end. Each head's dot product is
// summed across lanes for four heads at once, and the weighted sum of the values stays in
// registers for kBlockPieces pieces at a time, not added to `out` in memory position by position.
// (The compiled loops above, with head_dim known only when running, reached 13-18% of the CPU's
// peak on bfloat16 vectors; this, about twice that.)
#define MTSERVE_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

constexpr int kLanes = 16;
constexpr int kPiece = 2 * kLanes;
// Pieces of the output (16 registers) summed over the positions in one sweep.
constexpr int kBlockPieces = 8;

struct Halves {
  __m512 lo, hi;
};

MTSERVE_AVX512_INLINE Halves LoadPiece(const float* p) {
  return {_mm512_loadu_ps(p), _mm512_loadu_ps(p + kLanes)};
}
MTSERVE_AVX512_INLINE Halves LoadPiece(const uint16_t* p) {
  const __m512i pairs = _mm512_loadu_si512(p);
  return {_mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16)),
          _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(0xffff0000)))};
}

// 32 floats from p in the order LoadPiece gives the elements of T.
template <typename T>
MTSERVE_AVX512_INLINE Halves SplitLikePiece(const float* p) {
  const Halves h = LoadPiece(p);
  if constexpr (std::is_same_v<T, float>) return h;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return {_mm512_permutex2var_ps(h.lo, even, h.hi), _mm512_permutex2var_ps(h.lo, odd, h.hi)};
}

// The inverse: h, in LoadPiece's order for T, stored as 32 floats in the elements' order.
template <typename T>
MTSERVE_AVX512_INLINE void StoreInElementOrder(Halves h, float* p) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second =
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    h = {_mm512_permutex2var_ps(h.lo, first, h.hi), _mm512_permutex2var_ps(h.lo, second, h.hi)};
  }
  _mm512_storeu_ps(p, h.lo);
  _mm512_storeu_ps(p + kLanes, h.hi);
}

// The sums of the lanes of a, b, c and d, in that order: pairs of lanes added within each 128-bit
// quarter (unpack, then shuffle), then the quarters.
MTSERVE_AVX512_INLINE __m128 LaneSums(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
  const __m512 abcd = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 halves =
      _mm256_add_ps(_mm512_castps512_ps256(abcd),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(abcd), 1)));
  return _mm_add_ps(_mm256_castps256_ps128(halves), _mm256_extractf128_ps(halves, 1));
}

// One head's q . k, lane by lane; q as SplitLikePiece arranged it.
template <typename T>
MTSERVE_AVX512_INLINE __m512 HeadProducts(const float* q, const T* k, int head_dim) {
  __m512 sum = _mm512_setzero_ps();
  for (int i = 0; i < head_dim; i += kPiece) {
    const Halves kh = LoadPiece(k + i);
    sum = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), kh.lo, sum);
    sum = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + kLanes), kh.hi, sum);
  }
  return sum;
}

// sum += weight * the piece at v.
template <typename T>
MTSERVE_AVX512_INLINE void AddWeighted(float weight, const T* v, Halves& sum) {
  const __m512 w = _mm512_set1_ps(weight);
  const Halves vh = LoadPiece(v);
  sum.lo = _mm512_fmadd_ps(w, vh.lo, sum.lo);
  sum.hi = _mm512_fmadd_ps(w, vh.hi, sum.hi);
}

// AttendRowOf in AVX-512; kHeadDim, when not 0, is head_dim known when compiling. `scratch` has
// room for heads * length + heads * head_dim floats.
template <typename T, int kHeadDim>
__attribute__((target("avx512f"))) void AttendRowAvx512(const float* query, const void* const* keys,
                                                        const void* const* values, int length,
                                                        int heads, int runtime_head_dim,
                                                        float* scratch, float* out,
                                                        float* probabilities) {
  const int head_dim = kHeadDim != 0 ? kHeadDim : runtime_head_dim;
  const int width = heads * head_dim;
  float* scores = scratch;
  float* q = scratch + heads * length;
  for (int i = 0; i < width; i += kPiece) {
    const Halves h = SplitLikePiece<T>(query + i);
    _mm512_storeu_ps(q + i, h.lo);
    _mm512_storeu_ps(q + i + kLanes, h.hi);
  }
  for (int s = 0; s < length; ++s) {
    PrefetchVector<T>(keys, s, length, width);
    const T* k = static_cast<const T*>(keys[s]);
    int h = 0;
    for (; h + 4 <= heads; h += 4) {
      const int o = h * head_dim;
      alignas(16) float sums[4];
      _mm_store_ps(sums,
                   LaneSums(HeadProducts(q + o, k + o, head_dim),
                            HeadProducts(q + o + head_dim, k + o + head_dim, head_dim),
                            HeadProducts(q + o + 2 * head_dim, k + o + 2 * head_dim, head_dim),
                            HeadProducts(q + o + 3 * head_dim, k + o + 3 * head_dim, head_dim)));
      for (int j = 0; j < 4; ++j) scores[(h + j) * length + s] = sums[j];
    }
    for (; h < heads; ++h) {
      const int o = h * head_dim;
      scores[h * length + s] = _mm512_reduce_add_ps(HeadProducts(q + o, k + o, head_dim));
    }
  }
  SoftmaxPerHead(scores, heads, length, probabilities);
  // Blocks of kBlockPieces pieces, then single pieces; each sweeps the positions.
  for (int i = 0; i < width;) {
    const int block = width - i >= kBlockPieces * kPiece ? kBlockPieces : 1;
    const float* p[kBlockPieces];  // Each piece's head's probabilities.
    for (int j = 0; j < block; ++j) p[j] = scores + (i + j * kPiece) / head_dim * length;
    Halves sum[kBlockPieces];
    for (int j = 0; j < kBlockPieces; ++j) sum[j] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int s = 0; s < length; ++s) {
      if (i == 0) PrefetchVector<T>(values, s, length, width);
      const T* v = static_cast<const T*>(values[s]) + i;
      if (block == kBlockPieces) {
        for (int j = 0; j < kBlockPieces; ++j) AddWeighted(p[j][s], v + j * kPiece, sum[j]);
      } else {
        AddWeighted(p[0][s], v, sum[0]);
      }
    }
    for (int j = 0; j < block; ++j, i += kPiece) StoreInElementOrder<T>(sum[j], out + i);
  }
}
#endif  // MTSERVE_HAVE_AVX512_INTRINSICS

using AttendRowFn = void (*)(const float*, const void* const*, const void* const*, int, int, int,
                             float*, float*, float*);

void Run(const OneQueryAttentionArgs& args, bool portable) {
  const bool bfloat16 = args.vector_type == VectorType::kBFloat16;
  AttendRowFn attend = bfloat16 ? AttendRowBFloat16 : AttendRow;
#ifdef MTSERVE_HAVE_AVX512_INTRINSICS
  if (!portable && args.head_dim % kPiece == 0 && CpuHasAvx512()) {
    if (args.head_dim == 64) {
      attend = bfloat16 ? AttendRowAvx512<uint16_t, 64> : AttendRowAvx512<float, 64>;
    } else {
      attend = bfloat16 ? AttendRowAvx512<uint16_t, 0> : AttendRowAvx512<float, 0>;
    }
  }
#endif
  const int width = args.heads * args.head_dim;
  if (PhaseProfile* profile = PhaseProfile::Active()) {
    int64_t positions = 0;
    for (int r = 0; r < args.rows; ++r) positions += args.lengths[r];
    profile->AddMacs(2 * positions * width);  // Scores, then the weighted sum of the values.
  }
  // The scores, and the AVX-512 kernel's rearranged query.
  const size_t scratch_size = static_cast<size_t>(args.heads) * args.max_positions + width;
  auto attend_row = [&](int r, float* scores) {
    const int64_t first = static_cast<int64_t>(r) * args.max_positions;
    float* probabilities = nullptr;
    if (args.probabilities != nullptr) {
      probabilities = args.probabilities + first;
      std::fill(probabilities, probabilities + args.max_positions, 0.f);
    }
    attend(args.queries + r * args.query_stride, args.keys + first, args.values + first,
           args.lengths[r], args.heads, args.head_dim, scores,
           args.out + static_cast<int64_t>(r) * width, probabilities);
  };
  // A parallel region only where it has threads to share (model/kernels/parallel_for.h says why).
  if (args.rows > 1 && omp_get_max_threads() > 1) {
#pragma omp parallel
    {
      std::vector<float> scores(scratch_size);
#pragma omp for schedule(static)
      for (int r = 0; r < args.rows; ++r) attend_row(r, scores.data());
    }
    return;
  }
  std::vector<float> scores(scratch_size);
  for (int r = 0; r < args.rows; ++r) attend_row(r, scores.data());
}

}  // namespace

void OneQueryAttention(const OneQueryAttentionArgs& args) { Run(args, /*portable=*/false); }

void OneQueryAttentionPortable(const OneQueryAttentionArgs& args) { Run(args, /*portable=*/true); }

}  // namespace mtserve
