// The stack the HTTP handler pool gives a request handler is what the fuzz targets run their
// inputs on (tests/test_lib/request_thread_stack.h): measured on a task run by a real pool.
#include "tests/test_lib/request_thread_stack.h"

#include <pthread.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "frontends/http/handler_pool.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

size_t StackOfThisThread() {
  pthread_attr_t attr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

TEST(RequestThreadStackTest, IsTheStackOfTheHandlerPoolsThreads) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's pthread_create gives threads stacks of its own size (900 KiB here).
  GTEST_SKIP() << "ThreadSanitizer sets the stack size of the threads it starts";
#endif
  HandlerPool pool(/*threads=*/2, /*max_queued=*/4);
  std::atomic<size_t> measured{0};
  absl::Notification done;
  ASSERT_TRUE(pool.TryRun([&] {
    measured = StackOfThisThread();
    done.Notify();
  }));
  done.WaitForNotification();
  EXPECT_EQ(measured.load(), kRequestThreadStackBytes);
  EXPECT_EQ(kHandlerThreadStackBytes, kRequestThreadStackBytes);
}

TEST(HandlerPoolTest, RefusesPastItsQueueAndRunsWhatItTook) {
  HandlerPool pool(/*threads=*/1, /*max_queued=*/2);
  absl::Notification release;
  absl::Notification started;
  std::atomic<int> ran{0};
  // The one thread is held, then two wait: the fourth is refused.
  ASSERT_TRUE(pool.TryRun([&] {
    started.Notify();
    release.WaitForNotification();
    ++ran;
  }));
  started.WaitForNotification();
  EXPECT_TRUE(pool.TryRun([&] { ++ran; }));
  EXPECT_TRUE(pool.TryRun([&] { ++ran; }));
  EXPECT_FALSE(pool.TryRun([&] { ++ran; }));
  release.Notify();
  pool.Stop();  // Runs what it took.
  EXPECT_EQ(ran.load(), 3);
  EXPECT_FALSE(pool.TryRun([&] { ++ran; }));
}

}  // namespace
}  // namespace mtserve
