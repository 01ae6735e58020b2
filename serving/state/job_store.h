// The job store's interface: the file jobs of the file API, each a record (its state, progress,
// error, owner, times) and, once done, its result's bytes, found by an unguessable id
// (serving/state/job_id.h). The job's runner moves it along (SetProgress, PutResult, Finish); its
// caller polls it (Get), downloads its result (ReadResult), cancels it (Finish with CANCELLED) or
// deletes it. LocalJobStore keeps jobs in the process, results in memory or in a directory; a
// store shared by replicas implements the same interface.
//
// A job's id is a capability: whoever holds it may read the job. Stores find a job by the id's
// selector and compare its secret in constant time (job_id.h), so that timing tells nothing of
// the secret; an id that does not name a job, malformed or not, is NOT_FOUND.
//
// Implementations are thread-safe.
#ifndef MTSERVE_SERVING_STATE_JOB_STORE_H_
#define MTSERVE_SERVING_STATE_JOB_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace mtserve {

// Where a job is. kQueued and kRunning are unfinished; the others are final (a job never
// leaves them).
enum class JobState {
  kQueued = 0,
  kRunning = 1,
  kDone = 2,
  kFailed = 3,
  kCancelled = 4,
};

// "queued", "running", "done", "failed", "cancelled": the names the APIs will show.
absl::string_view JobStateName(JobState state);
bool IsFinal(JobState state);

// Bytes [begin, end) of a job's file.
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const ByteRange& other) const { return begin == other.begin && end == other.end; }
};

// What a store knows of a job, without its result's bytes.
struct JobRecord {
  std::string id;     // The capability (job_id.h); URL-safe.
  std::string owner;  // The name of the API key that made it ("" on a server without keys).
  JobState state = JobState::kQueued;
  int64_t sentences_done = 0;  // Progress: sentences translated of the total (0 until known).
  int64_t sentences_total = 0;
  absl::Status error;  // kFailed: why; kCancelled: CANCELLED with who cancelled; else OK.
  // kDone: the result.
  int64_t result_bytes = 0;
  std::string result_media_type;
  std::string result_file_name;
  // The file's bytes the result holds as they were, untranslated (a Markdown block whose markup
  // could not be mapped back, characters the model cannot spell: TextTranslation::dropped).
  std::vector<ByteRange> dropped;
  absl::Time created;
  // When the store forgets the job and its result (see LocalJobStore::Options::retention).
  absl::Time expires;
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  // A new queued job of `owner` with a fresh id. RESOURCE_EXHAUSTED when the store holds as
  // many jobs as it may (the message names the limit).
  virtual absl::StatusOr<JobRecord> Create(absl::string_view owner) = 0;

  // The job is running and has translated `done` of its `total` sentences (0 <= done <= total,
  // else INVALID_ARGUMENT). CANCELLED if it was cancelled (its runner should stop), and
  // FAILED_PRECONDITION if it finished otherwise.
  virtual absl::Status SetProgress(absl::string_view id, int64_t done, int64_t total) = 0;

  // The job is done, with `result` (a file named `file_name` of `media_type`, holding the file's
  // `dropped` bytes untranslated). CANCELLED if it
  // was cancelled (the result is dropped), FAILED_PRECONDITION if it finished otherwise, and
  // RESOURCE_EXHAUSTED if the store cannot hold the result (the message names the limit).
  virtual absl::Status PutResult(absl::string_view id, std::string result,
                                 absl::string_view media_type, absl::string_view file_name,
                                 std::vector<ByteRange> dropped) = 0;

  // The job failed with `error` (not OK), or was cancelled if `error` is CANCELLED. A job
  // already finished keeps its state: FAILED_PRECONDITION (cancelling a done job changes
  // nothing).
  virtual absl::Status Finish(absl::string_view id, absl::Status error) = 0;

  // The job's record; NOT_FOUND for an id that names no job (never made, expired, deleted,
  // or its result evicted).
  virtual absl::StatusOr<JobRecord> Get(absl::string_view id) = 0;

  // Up to `max_bytes` (> 0) of a done job's result from byte `offset` (empty at or past its
  // end). FAILED_PRECONDITION if the job is not done; NOT_FOUND as Get.
  virtual absl::StatusOr<std::string> ReadResult(absl::string_view id, int64_t offset,
                                                 int64_t max_bytes) = 0;

  // Forgets the job and its result (whatever its state: an unfinished job's runner then gets
  // NOT_FOUND and should stop). NOT_FOUND as Get.
  virtual absl::Status Delete(absl::string_view id) = 0;

  // The records of `owner`'s jobs, oldest first.
  virtual std::vector<JobRecord> ListByOwner(absl::string_view owner) = 0;

  struct Stats {
    int64_t jobs = 0;          // Held now.
    int64_t result_bytes = 0;  // Of the results held now.
    int64_t expired = 0;       // Jobs forgotten at their expiry, since the start.
    int64_t evicted = 0;       // Done jobs forgotten early to make room for a result.
  };
  virtual Stats stats() = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_JOB_STORE_H_
