#include "server/shutdown_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

// A signal while loading runs the loading action; once serving, it is a shutdown request. The
// signals go to the process (kill), as a container runtime sends them, not to a thread.
TEST(ShutdownSignalsTest, LoadingThenServing) {
  absl::Notification loading_signal;
  std::atomic<int> seen = 0;
  ShutdownSignals signals([&](int signal) {
    seen = signal;
    loading_signal.Notify();
  });
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  loading_signal.WaitForNotification();
  EXPECT_EQ(seen, SIGINT);

  signals.Serving();
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  EXPECT_EQ(signals.WaitForShutdown(), SIGTERM);
  // A second signal while shutting down changes nothing.
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  EXPECT_EQ(signals.WaitForShutdown(), SIGTERM);
  EXPECT_EQ(seen, SIGINT);
}

// SIGHUP is ignored until a reload action is set, then runs it each time, in either phase, and
// is never taken for a shutdown. In a child process of its own (a death test that exits 0): the
// watching thread of another test's ShutdownSignals, which never ends, could take the signals.
TEST(ShutdownSignalsTest, HangupRunsTheReloadAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ShutdownSignals signals([](int) { std::_Exit(2); });  // SIGHUP taken for a shutdown.
        kill(getpid(), SIGHUP);  // Nothing set: ignored (not the default action: exit).
        absl::Mutex mutex;
        int reloads = 0;
        signals.OnHangup([&](int) {
          absl::MutexLock lock(&mutex);
          ++reloads;
        });
        auto reloaded = [&](int n) {
          absl::MutexLock lock(&mutex);
          auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) { return reloads >= n; };
          mutex.Await(absl::Condition(&done));
        };
        kill(getpid(), SIGHUP);
        reloaded(1);
        signals.Serving();
        kill(getpid(), SIGHUP);
        reloaded(2);
        kill(getpid(), SIGTERM);
        std::_Exit(signals.WaitForShutdown() == SIGTERM ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace mtserve
