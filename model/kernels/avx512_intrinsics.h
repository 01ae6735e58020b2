// <immintrin.h> for kernels written in AVX-512 intrinsics (target("avx512f") functions beside a
// portable one, chosen by CpuHasAvx512), and MTSERVE_HAVE_AVX512_INTRINSICS where it is there.
// GCC 12's AVX-512 intrinsics fill their unused operand with an "uninitialised" value and warn
// about it once inlined (GCC bug 105593): those warnings are silenced around the include.
#ifndef MTSERVE_MODEL_KERNELS_AVX512_INTRINSICS_H_
#define MTSERVE_MODEL_KERNELS_AVX512_INTRINSICS_H_

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#define MTSERVE_HAVE_AVX512_INTRINSICS 1
#endif

#endif  // MTSERVE_MODEL_KERNELS_AVX512_INTRINSICS_H_
