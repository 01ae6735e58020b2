// DrainGate (serving/drain_gate.h): work is let in until draining starts, refused after, and
// waited for, up to a deadline. Expected values come from the gate's contract.
#include "serving/drain_gate.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

TEST(DrainGateTest, LetsWorkInUntilDrainingThenRefusesIt) {
  DrainGate gate;
  EXPECT_FALSE(gate.draining());
  ASSERT_TRUE(gate.TryEnter());
  EXPECT_EQ(gate.in_flight(), 1);
  gate.StartDraining();
  EXPECT_TRUE(gate.draining());
  EXPECT_FALSE(gate.TryEnter());
  EXPECT_EQ(gate.in_flight(), 1);  // The refused work was not counted; the earlier goes on.
  gate.StartDraining();            // Again: still draining.
  EXPECT_FALSE(gate.TryEnter());
  gate.Leave();
  EXPECT_EQ(gate.in_flight(), 0);
  EXPECT_FALSE(gate.TryEnter());  // Idle does not end draining.
}

// Enter counts work even while draining (a call that will only be refused still runs).
TEST(DrainGateTest, EnterCountsWhileDraining) {
  DrainGate gate;
  gate.StartDraining();
  gate.Enter();
  EXPECT_EQ(gate.in_flight(), 1);
  EXPECT_FALSE(gate.WaitUntilIdle(absl::Now()));
  gate.Leave();
  EXPECT_TRUE(gate.WaitUntilIdle(absl::Now()));
}

TEST(DrainGateTest, IdleAtOnceWithNothingInFlight) {
  DrainGate gate;
  EXPECT_TRUE(gate.WaitUntilIdle(absl::InfinitePast()));
  gate.StartDraining();
  EXPECT_TRUE(gate.WaitUntilIdle(absl::InfinitePast()));
}

TEST(DrainGateTest, WaitGivesUpAtItsDeadline) {
  DrainGate gate;
  ASSERT_TRUE(gate.TryEnter());
  gate.StartDraining();
  const absl::Time start = absl::Now();
  EXPECT_FALSE(gate.WaitUntilIdle(start + absl::Milliseconds(50)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
  EXPECT_EQ(gate.in_flight(), 1);
  gate.Leave();
}

// A wait returns once the last piece of work leaves, on another thread, well before its deadline.
TEST(DrainGateTest, WaitEndsWhenTheLastWorkLeaves) {
  DrainGate gate;
  ASSERT_TRUE(gate.TryEnter());
  ASSERT_TRUE(gate.TryEnter());
  gate.StartDraining();
  absl::Notification waiting;
  std::thread worker([&] {
    waiting.WaitForNotification();
    gate.Leave();
    gate.Leave();
  });
  waiting.Notify();
  EXPECT_TRUE(gate.WaitUntilIdle(absl::InfiniteFuture()));
  EXPECT_EQ(gate.in_flight(), 0);
  worker.join();
}

// Threads entering and leaving while another drains: every entry let in is counted until it
// leaves, none is let in after draining started, and the wait ends once all have left.
TEST(DrainGateTest, ConcurrentEnterAndLeave) {
  DrainGate gate;
  constexpr int kThreads = 8;
  std::atomic<bool> draining_soon = false;  // Set just before StartDraining.
  std::atomic<bool> drained = false;        // Set just after it returned.
  std::atomic<int> entered = 0;
  std::atomic<int> entered_after_drain = 0;
  std::atomic<int> refused_before_drain = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (true) {
        const bool was_drained = drained.load();
        if (!gate.TryEnter()) {
          if (!draining_soon.load()) ++refused_before_drain;
          return;
        }
        if (was_drained) ++entered_after_drain;
        ++entered;
        std::this_thread::yield();
        gate.Leave();
      }
    });
  }
  while (entered.load() < 1000) std::this_thread::yield();
  draining_soon.store(true);
  gate.StartDraining();
  drained.store(true);
  EXPECT_TRUE(gate.WaitUntilIdle(absl::Now() + absl::Seconds(60)));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(refused_before_drain.load(), 0);
  EXPECT_EQ(entered_after_drain.load(), 0);
  EXPECT_EQ(gate.in_flight(), 0);
  EXPECT_FALSE(gate.TryEnter());
}

}  // namespace
}  // namespace mtserve
