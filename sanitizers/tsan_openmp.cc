// In the MTSERVE_SANITIZE=thread build, OpenMP parallel regions run on one thread.
//
// GCC's OpenMP runtime (libgomp) is not built for ThreadSanitizer: TSan cannot see its
// barriers or how it hands work to its threads, so every parallel region would be reported
// as racing with the code before and after it. TSan checks our own threads (workers,
// translators running side by side, the scheduler), which this leaves as they are; the release
// and ASan builds run the parallel regions on several threads.
//
// No active parallel level (max-active-levels 0, a process-wide setting in libgomp) makes every
// parallel region run on the thread that meets it, whatever omp_set_num_threads asked for. It
// is set by a constructor of the executable, which runs after libgomp's and before main.
#include <omp.h>

namespace {

__attribute__((constructor)) void RunOpenMpOnOneThread() { omp_set_max_active_levels(0); }

}  // namespace
