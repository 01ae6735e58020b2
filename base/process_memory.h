// This process's resident anonymous memory (RssAnon in /proc/self/status): the heap and other
// private pages in RAM, without mapped files' pages (a checkpoint being read, the binaries).
// What model_size and the model size tests compare a model's counted bytes with.
#ifndef MTSERVE_BASE_PROCESS_MEMORY_H_
#define MTSERVE_BASE_PROCESS_MEMORY_H_

#include <cstdint>

namespace mtserve {

// Bytes, or -1 where /proc/self/status has no RssAnon line (kernels before 4.5, not Linux).
int64_t ResidentAnonymousBytes();

}  // namespace mtserve

#endif  // MTSERVE_BASE_PROCESS_MEMORY_H_
