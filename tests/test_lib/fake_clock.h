// A clock that moves only when a test moves it, for code that takes its time from a
// std::function<absl::Time()> (the scheduler, the model repository): pass
// [&clock] { return clock.Now(); }. Thread-safe.
#ifndef MTSERVE_TESTS_TEST_LIB_FAKE_CLOCK_H_
#define MTSERVE_TESTS_TEST_LIB_FAKE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mtserve::testing {

class FakeClock {
 public:
  // The time it starts at.
  static constexpr absl::Time Start() { return absl::FromUnixSeconds(1000000); }

  absl::Time Now() const {
    absl::MutexLock lock(&mutex_);
    return now_;
  }
  void Advance(absl::Duration by) {
    absl::MutexLock lock(&mutex_);
    now_ += by;
  }

 private:
  mutable absl::Mutex mutex_;
  absl::Time now_ ABSL_GUARDED_BY(mutex_) = Start();
};

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_FAKE_CLOCK_H_
