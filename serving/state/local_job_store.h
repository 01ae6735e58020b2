// The job store in the process (job_store.h): records in maps under one mutex, results' bytes in
// memory or as files in a directory (the server's --job directory: in Kubernetes an emptyDir,
// the root filesystem being read-only).
//
// Bounds (Options): a job is forgotten, record and result, at its expiry: `retention` after it
// was made while it is unfinished, `retention` after it finished once it has. At most `max_jobs`
// jobs are held (Create refuses more), and at most `max_result_bytes` of results: a result that
// would pass the total makes room by evicting the done jobs that finished first (their ids are
// NOT_FOUND from then on, as if expired), and one larger than the whole total is refused with
// RESOURCE_EXHAUSTED. Evicting rather than refusing keeps the store serving new jobs under load;
// an evicted result's owner was given its id longest ago. Expired jobs are removed by every call
// (and by RemoveExpired, for a periodic sweep), at the time of the clock the store was given.
//
// In a directory, a result is written to a temporary file then renamed into place, outside the
// mutex; only files whose names the store makes ("job-*.result", "job-*.tmp") are ever removed.
// On start, such files left by a previous process are removed: the records that gave them an
// owner and an expiry were in that process's memory, so they cannot be served again.
//
// Thread-safe.
#ifndef MTSERVE_SERVING_STATE_LOCAL_JOB_STORE_H_
#define MTSERVE_SERVING_STATE_LOCAL_JOB_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "serving/state/job_store.h"

namespace mtserve {

class LocalJobStore : public JobStore {
 public:
  struct Options {
    absl::Duration retention = absl::Hours(1);
    int64_t max_jobs = 10000;
    int64_t max_result_bytes = int64_t{1} << 30;
  };

  // Results held in memory.
  LocalJobStore(Options options, std::function<absl::Time()> now);
  // Results held as files in `directory` (made if missing); files of a previous process's jobs
  // in it are removed. An error if the directory cannot be made, listed or cleaned.
  static absl::StatusOr<std::unique_ptr<LocalJobStore>> InDirectory(
      std::string directory, Options options, std::function<absl::Time()> now);

  ~LocalJobStore() override;

  absl::StatusOr<JobRecord> Create(absl::string_view owner) override;
  absl::Status SetProgress(absl::string_view id, int64_t done, int64_t total) override;
  absl::Status PutResult(absl::string_view id, std::string result, absl::string_view media_type,
                         absl::string_view file_name, std::vector<ByteRange> dropped) override;
  absl::Status Finish(absl::string_view id, absl::Status error) override;
  absl::StatusOr<JobRecord> Get(absl::string_view id) override;
  absl::StatusOr<std::string> ReadResult(absl::string_view id, int64_t offset,
                                         int64_t max_bytes) override;
  absl::Status Delete(absl::string_view id) override;
  std::vector<JobRecord> ListByOwner(absl::string_view owner) override;
  Stats stats() override;

  // Forgets the jobs whose expiry has come.
  void RemoveExpired();

 private:
  struct Job {
    JobRecord record;
    std::string secret;
    uint64_t sequence = 0;                      // Order of creation.
    std::optional<absl::Time> finished;         // Final state reached.
    std::shared_ptr<const std::string> result;  // kDone in memory.
    std::string path;                           // kDone in a directory.
  };
  using Key = std::pair<absl::Time, uint64_t>;  // A time, then the job's sequence.

  LocalJobStore(Options options, std::function<absl::Time()> now, std::string directory);

  // The job `id` names, or null.
  Job* FindLocked(absl::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Forgets the job of `selector` (its result's file removed).
  void EraseLocked(const std::string& selector) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RemoveExpiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Moves the job of `selector` to its final state now, its expiry `retention` later.
  void FinalizeLocked(const std::string& selector, Job& job, JobState state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The status for a change to `job`, which has finished.
  static absl::Status FinishedError(const Job& job);
  std::string ResultPath(const std::string& selector) const;

  const Options options_;
  const std::function<absl::Time()> now_;
  const std::string directory_;  // Empty: results in memory.

  absl::Mutex mutex_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::flat_hash_map<std::string, Job> jobs_ ABSL_GUARDED_BY(mutex_);  // By selector.
  std::set<std::pair<Key, std::string>> by_expiry_ ABSL_GUARDED_BY(mutex_);
  std::set<std::pair<Key, std::string>> done_by_finish_ ABSL_GUARDED_BY(mutex_);
  Stats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_LOCAL_JOB_STORE_H_
