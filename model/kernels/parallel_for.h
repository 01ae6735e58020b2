// ParallelFor: a loop over [0, n) shared among the calling thread's OpenMP threads, or run on the
// calling thread alone when the loop is small or the thread has no others to share it with. Not
// merely an `if` clause: libgomp allocates and frees a thread team (an aligned allocation, often
// with malloc consolidating its free lists) for every parallel region, even one that an `if`
// clause or a team of one confines to the calling thread. With one compute thread a worker and a
// region per op and decoding step, that was a few per cent of a server's CPU.
#ifndef MTSERVE_MODEL_KERNELS_PARALLEL_FOR_H_
#define MTSERVE_MODEL_KERNELS_PARALLEL_FOR_H_

#include <omp.h>

#include <cstdint>

namespace mtserve {

// Calls body(i) for every i in [0, n), in any order and on any of the calling thread's OpenMP
// threads when `worth_sharing` (the work is large enough to share) and there are several.
template <typename Body>
void ParallelFor(int64_t n, bool worth_sharing, const Body& body) {
  if (worth_sharing && n > 1 && omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_PARALLEL_FOR_H_
