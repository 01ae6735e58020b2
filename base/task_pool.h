// A fixed set of threads running queued closures in order: where the serving core validates and
// tokenises requests, so that a front end's threads (gRPC's callback threads) only map messages
// and answer, however long a text is.
#ifndef MTSERVE_BASE_TASK_POOL_H_
#define MTSERVE_BASE_TASK_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace mtserve {

class TaskPool {
 public:
  explicit TaskPool(int threads);
  // Runs what is queued, then joins the threads.
  ~TaskPool();

  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void Run(std::function<void()> task);

 private:
  void Loop();

  absl::Mutex mutex_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace mtserve

#endif  // MTSERVE_BASE_TASK_POOL_H_
