#include "server/shutdown_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

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

}  // namespace
}  // namespace mtserve
