// The stack the server's HTTP request threads have, for the fuzz targets of what those threads
// parse: a fuzzer's own stack is 8 MiB, so recursion that overflows a request thread (JSON nested
// a few hundred levels, walked recursively) would pass unseen on it. tests/request_thread_stack_
// test.cc checks the figure against civetweb's real threads.
#ifndef MTSERVE_TESTS_TEST_LIB_REQUEST_THREAD_STACK_H_
#define MTSERVE_TESTS_TEST_LIB_REQUEST_THREAD_STACK_H_

#include <pthread.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace mtserve {

// Debian's civetweb 1.15 is built with USE_STACK_SIZE=102400.
inline constexpr size_t kRequestThreadStackBytes = 100 * 1024;

// Runs `fn()` on a thread of its own with kRequestThreadStackBytes of stack, and waits for it.
template <typename Fn>
void RunOnRequestThreadStack(Fn&& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kRequestThreadStackBytes);
  pthread_t thread;
  auto run = [](void* f) -> void* {
    (*static_cast<Fn*>(f))();
    return nullptr;
  };
  if (pthread_create(&thread, &attr, run, &fn) != 0) {
    std::fprintf(stderr, "cannot start a thread of %zu bytes of stack\n", kRequestThreadStackBytes);
    std::abort();
  }
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

}  // namespace mtserve

#endif  // MTSERVE_TESTS_TEST_LIB_REQUEST_THREAD_STACK_H_
