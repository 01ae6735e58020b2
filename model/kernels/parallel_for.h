// ParallelFor: a loop over [0, n) shared among the calling thread's OpenMP threads, or run on the
// calling thread alone when the loop is small or the thread has no others to share it with. Not
// merely an `if` clause: libgomp allocates and frees a thread team (an aligned allocation, often
// with malloc consolidating its free lists) for every parallel region, even one that an `if`
// clause or a team of one confines to the calling thread. With one compute thread a worker and a
// region per op and decoding step, that was a few per cent of a server's CPU. ScopedSerialOpenMp
// keeps a thread that is not a worker (one loading a model) from making a team at all.
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

// While it lives, the OpenMP regions the calling thread enters (ParallelFor's and oneDNN's) run on
// that thread alone. For engine work outside the workers, such as loading a model: libgomp keeps
// the threads of every team a thread ever made, and counts them all against the CPUs. Once they
// outnumber the CPUs it lets a waiting thread spin only briefly before it sleeps in the kernel, and
// every region of a worker of several threads pays for waking them (about 45 µs a region on these
// machines). A team made by the loading thread, idle ever after, did that: a worker of two threads
// translated at half the speed of one thread.
class ScopedSerialOpenMp {
 public:
  ScopedSerialOpenMp() : threads_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~ScopedSerialOpenMp() { omp_set_num_threads(threads_); }
  ScopedSerialOpenMp(const ScopedSerialOpenMp&) = delete;
  ScopedSerialOpenMp& operator=(const ScopedSerialOpenMp&) = delete;

 private:
  const int threads_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_PARALLEL_FOR_H_
