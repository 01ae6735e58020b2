// Which SIGHUPs lead to a reload (server/hangup_throttle.h), with explicit times.
#include "server/hangup_throttle.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

absl::Time At(double seconds) { return kStart + absl::Seconds(seconds); }

TEST(HangupThrottleTest, NothingIsDueWithoutSignals) {
  HangupThrottle throttle(absl::Seconds(1));
  EXPECT_EQ(throttle.Due(), absl::InfiniteFuture());
  EXPECT_EQ(throttle.TakeDue(At(0)), 0);
}

TEST(HangupThrottleTest, TheFirstSignalIsDueAtOnce) {
  HangupThrottle throttle(absl::Seconds(1));
  throttle.Signal();
  EXPECT_LE(throttle.Due(), At(0));
  EXPECT_EQ(throttle.TakeDue(At(0)), 1);
  EXPECT_EQ(throttle.Due(), absl::InfiniteFuture());
}

// A burst within the gap is one reload at its end, standing for every signal of it; the signals
// after that reload wait for the next gap's end.
TEST(HangupThrottleTest, ABurstIsOneReloadAtTheEndOfTheGap) {
  HangupThrottle throttle(absl::Seconds(1));
  throttle.Signal();
  EXPECT_EQ(throttle.TakeDue(At(0)), 1);
  for (int i = 0; i < 500; ++i) throttle.Signal();
  EXPECT_EQ(throttle.Due(), At(1));
  EXPECT_EQ(throttle.TakeDue(At(0.5)), 0);  // Not yet.
  EXPECT_EQ(throttle.TakeDue(At(1)), 500);
  throttle.Signal();
  throttle.Signal();
  EXPECT_EQ(throttle.Due(), At(2));
  EXPECT_EQ(throttle.TakeDue(At(2.5)), 2);  // Taken late: the next gap runs from then.
  throttle.Signal();
  EXPECT_EQ(throttle.Due(), At(3.5));
}

// A signal long after the last reload is due at once again.
TEST(HangupThrottleTest, AQuietGapMakesTheNextSignalImmediate) {
  HangupThrottle throttle(absl::Seconds(1));
  throttle.Signal();
  EXPECT_EQ(throttle.TakeDue(At(0)), 1);
  throttle.Signal();
  EXPECT_LE(throttle.Due(), At(10));
  EXPECT_EQ(throttle.TakeDue(At(10)), 1);
}

}  // namespace
}  // namespace mtserve
