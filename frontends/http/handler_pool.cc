// The HTTP handlers' threads and their bounded queue (handler_pool.h).
#include "frontends/http/handler_pool.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace mtserve {

HandlerPool::HandlerPool(int threads, int max_queued) : max_queued_(max_queued) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kHandlerThreadStackBytes);
  for (int i = 0; i < threads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, &HandlerPool::Loop, this) != 0) {
      std::fprintf(stderr, "mtserve: cannot start an HTTP handler thread\n");
      std::abort();
    }
    threads_.push_back(thread);
  }
  pthread_attr_destroy(&attr);
}

HandlerPool::~HandlerPool() { Stop(); }

bool HandlerPool::TryRun(std::function<void()> task) {
  absl::MutexLock lock(&mutex_);
  if (stopping_ || static_cast<int>(tasks_.size()) >= max_queued_) return false;
  tasks_.push_back(std::move(task));
  return true;
}

void HandlerPool::Stop() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (joined_) return;
  joined_ = true;
  for (pthread_t thread : threads_) pthread_join(thread, nullptr);
}

void* HandlerPool::Loop(void* data) {
  HandlerPool& pool = *static_cast<HandlerPool*>(data);
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&pool.mutex_);
      pool.mutex_.Await(absl::Condition(
          +[](HandlerPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mutex_) {
            return p->stopping_ || !p->tasks_.empty();
          },
          &pool));
      if (pool.tasks_.empty()) return nullptr;  // Stopping, and nothing left to run.
      task = std::move(pool.tasks_.front());
      pool.tasks_.pop_front();
    }
    task();
  }
}

}  // namespace mtserve
