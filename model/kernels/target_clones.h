// MTSERVE_TARGET_CLONES: compiles a kernel for AVX-512, AVX2 and baseline x86-64, and picks the
// best one for the CPU when the program loads (GCC's target_clones: an ifunc resolver), so one
// binary runs fast on every machine (Intel and AMD, and under ONEDNN_MAX_CPU_ISA=AVX2 tests).
// CpuHasAvx512: the same choice made when running, for kernels written in AVX-512 intrinsics
// (target("avx512f") functions) beside a portable one.
//
// Under ThreadSanitizer it is empty and the baseline code runs: the dynamic loader calls ifunc
// resolvers while it relocates the executable, before TSan's runtime is initialised, and
// the program crashes at start-up. A TSan build checks threads, not the vector paths (the ASan
// build and the release build run those).
#ifndef MTSERVE_MODEL_KERNELS_TARGET_CLONES_H_
#define MTSERVE_MODEL_KERNELS_TARGET_CLONES_H_

#if defined(__SANITIZE_THREAD__)  // GCC
#define MTSERVE_THREAD_SANITIZER 1
#elif defined(__has_feature)  // Clang
#if __has_feature(thread_sanitizer)
#define MTSERVE_THREAD_SANITIZER 1
#endif
#endif

#ifdef MTSERVE_THREAD_SANITIZER
#define MTSERVE_TARGET_CLONES
#else
#define MTSERVE_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

namespace mtserve {

inline bool CpuHasAvx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_TARGET_CLONES_H_
