// The stack the server's HTTP request handler threads have, for the fuzz targets of what those
// threads parse: a fuzzer's own stack is 8 MiB, so recursion that overflows a handler thread (JSON
// nested a few hundred levels, walked recursively) would pass unseen on it.
// tests/frontends/http/request_thread_stack_test.cc checks the figure against the real threads
// of the handler pool (frontends/http/handler_pool.h).
#ifndef MTSERVE_TESTS_TEST_LIB_REQUEST_THREAD_STACK_H_
#define MTSERVE_TESTS_TEST_LIB_REQUEST_THREAD_STACK_H_

#include <pthread.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace mtserve {

// frontends/http/handler_pool.h's kHandlerThreadStackBytes (this header is also built into the
// fuzz targets, which link no server).
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
