// The threads that run HTTP request handlers (a translation blocks its handler until the core
// answers), apart from the I/O threads that read and write every connection: a request in
// flight never holds up accepting, reading or answering others. A fixed number of threads, each
// with a stack of kHandlerThreadStackBytes (the fuzz targets of what handlers parse run their
// inputs on a stack of that size: tests/test_lib/request_thread_stack.h), and a bounded queue:
// a task that finds the queue full is refused at once, never waited for.
#ifndef MTSERVE_FRONTENDS_HTTP_HANDLER_POOL_H_
#define MTSERVE_FRONTENDS_HTTP_HANDLER_POOL_H_

#include <pthread.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace mtserve {

// What a handler may use: JSON parsing is bounded in depth well within it.
inline constexpr size_t kHandlerThreadStackBytes = 100 * 1024;

// Thread-safe.
class HandlerPool {
 public:
  // `threads` threads; at most `max_queued` tasks wait for one.
  HandlerPool(int threads, int max_queued);
  ~HandlerPool();  // Stop().

  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Queues `task` for the next free thread; false (nothing queued) when `max_queued` tasks wait
  // already or the pool has stopped.
  bool TryRun(std::function<void()> task);
  // Runs what is queued and running to its end, then joins the threads; refuses tasks from then
  // on.
  void Stop();

  int threads() const { return static_cast<int>(threads_.size()); }
  int max_queued() const { return max_queued_; }

 private:
  static void* Loop(void* pool);

  const int max_queued_;
  absl::Mutex mutex_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<pthread_t> threads_;
  bool joined_ = false;
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HANDLER_POOL_H_
