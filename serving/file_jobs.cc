// File jobs (file_jobs.h): a file checked, made a job in the store, and translated by the core
// as one document of its format, its progress and its end written to the store.
#include "serving/file_jobs.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/excerpt.h"
#include "base/status_macros.h"
#include "serving/request_limits.h"
#include "text/document.h"
#include "text/file_format.h"
#include "text/text_translation.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

constexpr char kMaxFileBytesFlag[] = "--max_file_bytes";

// The translated file's name: the file's own, without directories, or "translation.EXT".
std::string ResultFileName(absl::string_view file_name, absl::string_view format) {
  const size_t slash = file_name.find_last_of("/\\");
  if (slash != absl::string_view::npos) file_name.remove_prefix(slash + 1);
  if (file_name.empty()) return absl::StrCat("translation.", ExtensionOfFormat(format));
  return std::string(file_name);
}

// A job's progress as the store is told it: when it starts, when it ends, and at each
// hundredth of its sentences between (so that a long file's job is written and its watchers
// woken about a hundred times, not once per sentence).
class ProgressWriter {
 public:
  // Whether `done` of `total` is worth writing.
  bool Due(int64_t done, int64_t total) {
    const int64_t step = std::max<int64_t>(1, total / 100);
    if (written_ >= 0 && done != total && done - written_ < step) return false;
    written_ = done;
    return true;
  }

 private:
  int64_t written_ = -1;
};

// How the core's answer to a job's translation is told apart from its refusal at once (made on
// the submitting thread before Translate returns: Submit then answers with the error, and no
// job is left).
struct Submission {
  absl::Mutex mutex;
  bool submitting ABSL_GUARDED_BY(mutex) = true;
  std::thread::id submitter = std::this_thread::get_id();
  std::optional<absl::Status> refused ABSL_GUARDED_BY(mutex);
};

}  // namespace

FileJobs::FileJobs(TranslationCore* core, JobStore* store, Options options)
    : core_(core), store_(store), options_(options) {}

FileJobs::~FileJobs() {
  absl::MutexLock lock(&mutex_);
  for (auto& [id, call] : running_) call->Cancel();
  // Each job's Done ends it in the store and leaves running_ last.
  mutex_.Await(absl::Condition(
      +[](absl::flat_hash_map<std::string, std::shared_ptr<TranslationCore::Call>>* running) {
        return running->empty();
      },
      &running_));
}

absl::StatusOr<JobRecord> FileJobs::Submit(FileRequest request) {
  TranslationRequest& translation = request.translation;
  // Who is asking comes first, as for a text: a caller without a key learns nothing else.
  MT_ASSIGN_OR_RETURN(const std::string owner, core_->ApiKeyName(translation.api_key));
  // What the file is, before any work on it: its size, its format, its bytes.
  MT_RETURN_IF_ERROR(CheckTextBytes(request.content, request.file_field, options_.max_file_bytes,
                                    kMaxFileBytesFlag));
  if (!request.format.empty()) {
    const absl::StatusOr<DocumentFormat> given = ParseDocumentFormat(request.format);
    if (!given.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(request.format_field, ": ", given.status().message()));
    }
  }
  const FileClaims claims{request.file_name, request.media_type, request.format};
  absl::StatusOr<std::string> format = DetectFileFormat(claims, request.content);
  if (!format.ok()) {
    // INVALID_ARGUMENT (UNIMPLEMENTED where this build cannot open an office package yet).
    return absl::Status(format.status().code(),
                        absl::StrCat(request.file_field, ": ", format.status().message()));
  }
  MT_ASSIGN_OR_RETURN(const DocumentFormat document_format, ParseDocumentFormat(*format));
  // Text formats are UTF-8; an office document's bytes are a zip archive, read as they are.
  if (!IsBinaryFormat(document_format)) {
    MT_RETURN_IF_ERROR(CheckUtf8(request.content, request.file_field));
  }

  translation.texts.clear();
  translation.texts.push_back(std::move(request.content));
  translation.texts_field = request.file_field;
  translation.texts_repeated = false;
  translation.max_text_bytes = options_.max_file_bytes;
  translation.max_text_bytes_flag = kMaxFileBytesFlag;
  translation.options.format = static_cast<int>(document_format);
  translation.file = true;
  translation.deadline = std::min(translation.deadline, absl::Now() + options_.max_job_duration);

  MT_ASSIGN_OR_RETURN(const JobRecord created, store_->Create(owner));
  const std::string id = created.id;
  auto call = std::make_shared<TranslationCore::Call>();
  // The hook lives in the call: it refers to the call without owning it.
  call->OnProgress([this, id, call = call.get(), writer = ProgressWriter()](int64_t done,
                                                                            int64_t total) mutable {
    if (!writer.Due(done, total)) return;
    const absl::Status written = store_->SetProgress(id, done, total);
    // Cancelled or deleted in the store (by another replica's call, say): stop translating.
    if (absl::IsCancelled(written) || absl::IsNotFound(written)) call->Cancel();
    Changed();
  });
  {
    absl::MutexLock lock(&mutex_);
    running_[id] = call;
  }
  auto submission = std::make_shared<Submission>();
  core_->Translate(std::move(translation), call,
                   [this, id, submission, format = *format,
                    file_name = ResultFileName(request.file_name, *format)](
                       absl::StatusOr<TranslationReply> reply) {
                     {
                       absl::MutexLock lock(&submission->mutex);
                       if (submission->submitting && !reply.ok() &&
                           std::this_thread::get_id() == submission->submitter) {
                         submission->refused = reply.status();
                         return;
                       }
                     }
                     End(id, format, file_name, std::move(reply));
                   });
  std::optional<absl::Status> refused;
  {
    absl::MutexLock lock(&submission->mutex);
    submission->submitting = false;
    refused = submission->refused;
  }
  if (refused.has_value()) {
    // Refused at once (the key, the model or languages, the options, a full queue): no job.
    store_->Delete(id).IgnoreError();
    {
      absl::MutexLock lock(&mutex_);
      running_.erase(id);
    }
    return *refused;
  }
  CountHeld();
  absl::StatusOr<JobRecord> record = store_->Get(id);
  return record.ok() ? *record : created;
}

void FileJobs::End(const std::string& id, const std::string& format, const std::string& file_name,
                   absl::StatusOr<TranslationReply> reply) {
  absl::Status status = reply.status();
  if (status.ok() &&
      (reply->translations.size() != 1 || reply->translations[0].hypotheses.empty())) {
    status = absl::InternalError("the translation of the file came back without a text");
  }
  if (status.ok()) {
    // What the file's translation keeps of it untranslated is said, never silently lost.
    TextTranslation& translation = reply->translations[0];
    std::vector<ByteRange> dropped;
    if (!translation.dropped.empty()) {
      for (const Segment& s : translation.dropped[0]) {
        dropped.push_back({static_cast<int64_t>(s.begin), static_cast<int64_t>(s.end)});
      }
    }
    status = store_->PutResult(id, std::move(translation.hypotheses[0].text),
                               MediaTypeOfFormat(format), file_name, std::move(dropped));
  }
  // A job cancelled meanwhile is already final (CANCELLED or FAILED_PRECONDITION); a deleted
  // one is gone (NOT_FOUND). Otherwise the error ends it.
  if (!status.ok() && !absl::IsNotFound(status) && !absl::IsFailedPrecondition(status)) {
    store_->Finish(id, status).IgnoreError();
  }
  if (options_.metrics != nullptr) {
    const absl::StatusOr<JobRecord> record = store_->Get(id);
    options_.metrics->RecordFileJob(format,
                                    std::string(record.ok() ? JobStateName(record->state)
                                                            : JobStateName(JobState::kCancelled)));
  }
  CountHeld();
  // Last: the destructor waits for running_ to empty, and this object may go at once after.
  absl::MutexLock lock(&mutex_);
  running_.erase(id);
  changed_.SignalAll();
}

void FileJobs::CountHeld() {
  if (options_.metrics == nullptr) return;
  const JobStore::Stats stats = store_->stats();
  options_.metrics->SetFileJobsHeld(stats.jobs, stats.result_bytes);
}

void FileJobs::Changed() {
  absl::MutexLock lock(&mutex_);
  changed_.SignalAll();
}

absl::StatusOr<JobRecord> FileJobs::Get(absl::string_view id) { return store_->Get(id); }

absl::StatusOr<JobRecord> FileJobs::WaitForChange(absl::string_view id, const JobRecord& seen,
                                                  absl::Time deadline) {
  absl::MutexLock lock(&mutex_);
  // Every change is written to the store before changed_ is signalled under mutex_: a change
  // made after the read below wakes the wait.
  while (true) {
    MT_ASSIGN_OR_RETURN(JobRecord record, store_->Get(id));
    if (IsFinal(record.state) || record.state != seen.state ||
        record.sentences_done != seen.sentences_done ||
        record.sentences_total != seen.sentences_total) {
      return record;
    }
    if (changed_.WaitWithDeadline(&mutex_, deadline)) return store_->Get(id);
  }
}

absl::StatusOr<std::string> FileJobs::ReadResult(absl::string_view id, int64_t offset,
                                                 int64_t max_bytes) {
  return store_->ReadResult(id, offset, max_bytes);
}

absl::Status FileJobs::Cancel(absl::string_view id) {
  MT_ASSIGN_OR_RETURN(const JobRecord record, store_->Get(id));
  if (IsFinal(record.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the job has finished (", JobStateName(record.state), "): nothing to cancel"));
  }
  MT_RETURN_IF_ERROR(
      store_->Finish(id, absl::CancelledError("the job was cancelled by its caller")));
  absl::MutexLock lock(&mutex_);
  if (const auto running = running_.find(record.id); running != running_.end()) {
    running->second->Cancel();
  }
  changed_.SignalAll();
  return absl::OkStatus();
}

absl::Status FileJobs::Delete(absl::string_view id) {
  MT_ASSIGN_OR_RETURN(const JobRecord record, store_->Get(id));
  MT_RETURN_IF_ERROR(store_->Delete(id));
  {
    absl::MutexLock lock(&mutex_);
    if (const auto running = running_.find(record.id); running != running_.end()) {
      running->second->Cancel();
    }
    changed_.SignalAll();
  }
  CountHeld();
  return absl::OkStatus();
}

}  // namespace mtserve
