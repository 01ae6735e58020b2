#include "base/task_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

// Tasks run on the pool's own threads, several at once, and every task queued runs, also those
// still queued when the pool is destroyed.
TEST(TaskPoolTest, RunsEveryTaskOnItsThreads) {
  std::atomic<int> ran = 0;
  absl::Notification both_running;
  std::atomic<int> running = 0;
  {
    TaskPool pool(2);
    // Two tasks that wait for each other: only two threads running at once can finish them.
    for (int i = 0; i < 2; ++i) {
      pool.Run([&] {
        if (++running == 2) both_running.Notify();
        both_running.WaitForNotification();
        EXPECT_NE(std::this_thread::get_id(), std::thread::id());
        ++ran;
      });
    }
    for (int i = 0; i < 100; ++i) pool.Run([&] { ++ran; });
  }
  EXPECT_EQ(ran, 102);
}

}  // namespace
}  // namespace mtserve
