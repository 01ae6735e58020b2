// File jobs: the one job model every front end's file call uses (gRPC's TranslateFile stream,
// HTTP's POST /v1/translate_file and /v1/jobs/{id}, LibreTranslate's /translate_file and its
// download route, the page's file tab). A file is submitted with what is said about it (its
// name, media type, a format its caller gave: text/file_format.h decides the format, its content
// winning); it becomes a job in the JobStore (serving/state/job_store.h) and is translated by the
// TranslationCore as one document of that format, its progress (sentences done of the total)
// written to the job as sentences finish; the translated file is the job's result, kept for the
// store's retention. Cancelling a job, or its deadline passing, stops its translation.
//
// A job's id is a capability (job_id.h): whoever holds it may read the job, download its result
// or cancel it, as LibreTranslate's download URLs are read without a key.
//
// Thread-safe. The destructor cancels the jobs still running and waits for them to end.
#ifndef MTSERVE_SERVING_FILE_JOBS_H_
#define MTSERVE_SERVING_FILE_JOBS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "serving/state/job_store.h"
#include "serving/translation_core.h"

namespace mtserve {

// A file to translate, as a front end received it.
struct FileRequest {
  std::string content;     // The file's bytes.
  std::string file_name;   // As the client named it ("" if it did not).
  std::string media_type;  // Its Content-Type as sent ("" if none).
  std::string format;      // A format name the caller gave (ParseDocumentFormat's), or "".
  // The model or languages, decoding options (their format is the file's, whatever they say),
  // the API key, the front end and method, as for a text; `texts` is ignored. Its deadline is
  // the job's: the whole job, queued and running, must finish by it (FileJobs::Options bounds
  // it).
  TranslationRequest translation;
  // How errors name the file and the format field ("file", "format").
  std::string file_field = "file";
  std::string format_field = "format";
};

class FileJobs {
 public:
  struct Options {
    // A file's bytes at most (--max_file_bytes).
    int64_t max_file_bytes = 10 << 20;
    // A job's deadline at the latest, from its submission, whatever its caller's (the
    // --file_job_timeout flag).
    absl::Duration max_job_duration = absl::Minutes(10);
    // Where jobs ended and what the store holds are counted (null: nowhere); outlives the jobs.
    Metrics* metrics = nullptr;
  };

  // `core` and `store` outlive the jobs.
  FileJobs(TranslationCore* core, JobStore* store, Options options);
  ~FileJobs();

  FileJobs(const FileJobs&) = delete;
  FileJobs& operator=(const FileJobs&) = delete;

  // Checks `request` (the file's size against max_file_bytes, its format, UTF-8 for a text format
  // (an office document's bytes are taken as they are), the key, the model or languages and
  // options as a text's), makes its job (owned by the key's name) and
  // starts it: the job's record. INVALID_ARGUMENT naming the file field, the limit or what was
  // claimed and found; the key's errors; the store's RESOURCE_EXHAUSTED. The key is charged as
  // for a text of the file's translatable characters. The result is named as the file was (or
  // "translation.EXT"), with its format's media type (text/file_format.h MediaTypeOfFormat); its
  // dropped ranges are the document's (an office document's index its extracted text:
  // text/office/office_document.h).
  absl::StatusOr<JobRecord> Submit(FileRequest request);

  // The job's record (the store's Get).
  absl::StatusOr<JobRecord> Get(absl::string_view id);

  // Waits until the job's record differs from `seen` (its state or progress) or it is final, or
  // `deadline` passes: its record then (for streaming progress and synchronous calls).
  absl::StatusOr<JobRecord> WaitForChange(absl::string_view id, const JobRecord& seen,
                                          absl::Time deadline);

  // Up to `max_bytes` of the done job's result from `offset` (the store's ReadResult).
  absl::StatusOr<std::string> ReadResult(absl::string_view id, int64_t offset, int64_t max_bytes);

  // Cancels the job if it is unfinished (its translation stops; it becomes kCancelled).
  // FAILED_PRECONDITION if it had finished; NOT_FOUND as Get.
  absl::Status Cancel(absl::string_view id);

  // Forgets the job (cancelling it if it is unfinished) and its result. NOT_FOUND as Get.
  absl::Status Delete(absl::string_view id);

  const Options& options() const { return options_; }

 private:
  // Ends job `id` (of format `format`) with its translation's `reply`: its result, named
  // `file_name`, or its error.
  void End(const std::string& id, const std::string& format, const std::string& file_name,
           absl::StatusOr<TranslationReply> reply);
  // Tells the metrics what the store holds.
  void CountHeld();
  // Wakes WaitForChange's waiters: a job changed.
  void Changed();

  TranslationCore* const core_;
  JobStore* const store_;
  const Options options_;

  absl::Mutex mutex_;
  absl::CondVar changed_;  // Signalled under mutex_ after each change to a job.
  // The core's calls of the jobs being translated, by id (until their Done has run).
  absl::flat_hash_map<std::string, std::shared_ptr<TranslationCore::Call>> running_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_FILE_JOBS_H_
