// The store's periodic sweep (job_sweep.h).
#include "server/job_sweep.h"

#include <utility>

namespace mtserve {

JobSweep::JobSweep(absl::Duration interval, std::function<void()> sweep)
    : thread_([this, interval, sweep = std::move(sweep)] {
        while (!stop_.WaitForNotificationWithTimeout(interval)) sweep();
      }) {}

JobSweep::~JobSweep() {
  stop_.Notify();
  thread_.join();
}

}  // namespace mtserve
