// In the MTSERVE_SANITIZE=thread build, OpenMP runs everything on one thread.
//
// GCC's OpenMP runtime (libgomp) is not built for ThreadSanitizer: TSan cannot see its
// barriers or how it hands work to its threads, so every parallel region would be reported
// as racing with the code before and after it. TSan checks our own threads (workers,
// translators running side by side, the scheduler), which this leaves as they are; the release
// and ASan builds run the parallel regions on several threads.
//
// Two settings, both needed:
// - no active parallel level (max-active-levels 0, process-wide in libgomp): every parallel
//   region runs on the thread that meets it, whatever omp_set_num_threads asked for;
// - omp_get_max_threads() answers 1: oneDNN splits its work by it before it enters a region,
//   and with a larger answer the parts of the threads that never come would not be computed.
//   The executable's definition comes first in the global scope, so libdnnl's calls land here.
#include <omp.h>

namespace {

__attribute__((constructor)) void RunOpenMpOnOneThread() { omp_set_max_active_levels(0); }

}  // namespace

extern "C" int omp_get_max_threads() { return 1; }
