// The periodic sweep of the file jobs' store: LocalJobStore forgets expired jobs on every call,
// so a server that gets none would keep their results (files under --job_dir) past their
// retention; this thread calls `sweep` every `interval` until it is stopped.
#ifndef MTSERVE_SERVER_JOB_SWEEP_H_
#define MTSERVE_SERVER_JOB_SWEEP_H_

#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace mtserve {

class JobSweep {
 public:
  // Starts the thread; `sweep` runs on it, first after `interval`.
  JobSweep(absl::Duration interval, std::function<void()> sweep);
  // Stops it (a sweep under way finishes first).
  ~JobSweep();

  JobSweep(const JobSweep&) = delete;
  JobSweep& operator=(const JobSweep&) = delete;

 private:
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_JOB_SWEEP_H_
