#include "serving/state/local_job_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "serving/state/job_id.h"
#include "serving/state/state_files.h"

namespace mtserve {
namespace {

constexpr absl::string_view kFilePrefix = "job-";
constexpr absl::string_view kResultSuffix = ".result";
constexpr absl::string_view kTempSuffix = ".tmp";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return FileError(absl::StatusCode::kInternal, what, path);
}

// Up to `length` bytes of the file at `path` from `offset`.
absl::StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset, int64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // Removed since the record was read: evicted, expired or deleted in between.
    if (errno == ENOENT) return absl::NotFoundError("no such job");
    return ErrnoError("open", path);
  }
  std::string out(static_cast<size_t>(length), '\0');
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = ErrnoError("read", path);
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace

LocalJobStore::LocalJobStore(Options options, std::function<absl::Time()> now)
    : LocalJobStore(options, std::move(now), std::string()) {}

LocalJobStore::LocalJobStore(Options options, std::function<absl::Time()> now,
                             std::string directory)
    : options_(options), now_(std::move(now)), directory_(std::move(directory)) {}

absl::StatusOr<std::unique_ptr<LocalJobStore>> LocalJobStore::InDirectory(
    std::string directory, Options options, std::function<absl::Time()> now) {
  if (directory.empty()) return absl::InvalidArgumentError("the job directory is empty");
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make the job directory ", directory, ": ", error.message()));
  }
  // A previous process's results and temporary files: nothing refers to them any more.
  std::filesystem::directory_iterator it(directory, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot list the job directory ", directory, ": ", error.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!absl::StartsWith(name, kFilePrefix) ||
        !(absl::EndsWith(name, kResultSuffix) || absl::EndsWith(name, kTempSuffix))) {
      continue;
    }
    std::error_code removed;
    std::filesystem::remove(it->path(), removed);
    if (removed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot remove the stale job file ", it->path().string(), ": ", removed.message()));
    }
  }
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot list the job directory ", directory, ": ", error.message()));
  }
  return std::unique_ptr<LocalJobStore>(
      new LocalJobStore(options, std::move(now), std::move(directory)));
}

LocalJobStore::~LocalJobStore() {
  // Results on disk belong to this process's jobs only.
  absl::MutexLock lock(&mutex_);
  for (const auto& [selector, job] : jobs_) {
    if (!job.path.empty()) ::unlink(job.path.c_str());
  }
}

std::string LocalJobStore::ResultPath(const std::string& selector) const {
  return absl::StrCat(directory_, "/", kFilePrefix, absl::BytesToHexString(selector),
                      kResultSuffix);
}

LocalJobStore::Job* LocalJobStore::FindLocked(absl::string_view id) {
  const std::optional<JobIdParts> parts = SplitJobId(id);
  if (!parts.has_value()) return nullptr;
  auto it = jobs_.find(parts->selector);
  if (it == jobs_.end() || !JobSecretsEqual(it->second.secret, parts->secret)) return nullptr;
  return &it->second;
}

void LocalJobStore::EraseLocked(const std::string& selector) {
  auto it = jobs_.find(selector);
  if (it == jobs_.end()) return;
  Job& job = it->second;
  by_expiry_.erase({{job.record.expires, job.sequence}, selector});
  if (job.finished.has_value()) done_by_finish_.erase({{*job.finished, job.sequence}, selector});
  stats_.result_bytes -= job.record.state == JobState::kDone ? job.record.result_bytes : 0;
  if (!job.path.empty()) ::unlink(job.path.c_str());
  jobs_.erase(it);
}

void LocalJobStore::RemoveExpiredLocked() {
  const absl::Time now = now_();
  while (!by_expiry_.empty() && by_expiry_.begin()->first.first <= now) {
    const std::string selector = by_expiry_.begin()->second;
    EraseLocked(selector);
    ++stats_.expired;
  }
}

void LocalJobStore::RemoveExpired() {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
}

void LocalJobStore::FinalizeLocked(const std::string& selector, Job& job, JobState state) {
  const absl::Time now = now_();
  by_expiry_.erase({{job.record.expires, job.sequence}, selector});
  job.record.state = state;
  job.finished = now;
  job.record.expires = now + options_.retention;
  by_expiry_.insert({{job.record.expires, job.sequence}, selector});
  // Only done jobs hold results worth evicting for room.
  if (state == JobState::kDone) done_by_finish_.insert({{now, job.sequence}, selector});
}

absl::Status LocalJobStore::FinishedError(const Job& job) {
  if (job.record.state == JobState::kCancelled) {
    return absl::CancelledError(job.record.error.message());
  }
  return absl::FailedPreconditionError(
      absl::StrCat("the job has finished (", JobStateName(job.record.state), ")"));
}

absl::StatusOr<JobRecord> LocalJobStore::Create(absl::string_view owner) {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  if (static_cast<int64_t>(jobs_.size()) >= options_.max_jobs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the job store holds its limit of ", options_.max_jobs,
                     " jobs; try again when some have expired (after at most ",
                     absl::FormatDuration(options_.retention), ")"));
  }
  std::string id;
  std::optional<JobIdParts> parts;
  do {  // A selector drawn twice (2^-64 a pair) is drawn again.
    absl::StatusOr<std::string> drawn = NewJobId();
    if (!drawn.ok()) return drawn.status();
    id = *std::move(drawn);
    parts = SplitJobId(id);
  } while (jobs_.contains(parts->selector));
  const absl::Time now = now_();
  Job job;
  job.record.id = id;
  job.record.owner = std::string(owner);
  job.record.created = now;
  job.record.expires = now + options_.retention;
  job.secret = parts->secret;
  job.sequence = next_sequence_++;
  by_expiry_.insert({{job.record.expires, job.sequence}, parts->selector});
  JobRecord record = job.record;
  jobs_.emplace(parts->selector, std::move(job));
  return record;
}

absl::Status LocalJobStore::SetProgress(absl::string_view id, int64_t done, int64_t total) {
  if (done < 0 || total < 0 || done > total) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress of ", done, " sentences of ", total, " is not a progress"));
  }
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  Job* job = FindLocked(id);
  if (job == nullptr) return absl::NotFoundError("no such job");
  if (job->finished.has_value()) return FinishedError(*job);
  job->record.state = JobState::kRunning;
  job->record.sentences_done = done;
  job->record.sentences_total = total;
  return absl::OkStatus();
}

absl::Status LocalJobStore::PutResult(absl::string_view id, std::string result,
                                      absl::string_view media_type, absl::string_view file_name,
                                      std::vector<ByteRange> dropped) {
  const int64_t bytes = static_cast<int64_t>(result.size());
  if (bytes > options_.max_result_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a result of ", bytes, " bytes is larger than the job store's limit of ",
                     options_.max_result_bytes, " bytes for all results"));
  }
  std::string temp;  // In a directory: the result written there before it is renamed.
  std::string selector;
  {
    absl::MutexLock lock(&mutex_);
    RemoveExpiredLocked();
    Job* job = FindLocked(id);
    if (job == nullptr) return absl::NotFoundError("no such job");
    if (job->finished.has_value()) return FinishedError(*job);
    selector = SplitJobId(id)->selector;
    if (!directory_.empty()) {
      temp = absl::StrCat(directory_, "/", kFilePrefix, absl::BytesToHexString(selector), "-",
                          next_sequence_++, kTempSuffix);
    }
  }
  if (!temp.empty()) {
    // Outside the mutex: a large result's write holds up no other job.
    if (absl::Status written =
            WriteNewFile(temp, result, /*durable=*/false, absl::StatusCode::kInternal);
        !written.ok())
      return written;
    result.clear();
    result.shrink_to_fit();
  }
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  Job* job = FindLocked(id);
  absl::Status status = absl::OkStatus();
  if (job == nullptr) {
    status = absl::NotFoundError("no such job");
  } else if (job->finished.has_value()) {
    status = FinishedError(*job);
  }
  if (!status.ok()) {
    if (!temp.empty()) ::unlink(temp.c_str());
    return status;
  }
  // Room: the done jobs that finished first go first (never this one: it is not done).
  while (stats_.result_bytes + bytes > options_.max_result_bytes && !done_by_finish_.empty()) {
    const std::string oldest = done_by_finish_.begin()->second;
    EraseLocked(oldest);
    ++stats_.evicted;
  }
  job = &jobs_.find(selector)->second;  // Erasing others leaves it, but find it anew.
  if (!temp.empty()) {
    const std::string path = ResultPath(selector);
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      absl::Status renamed = ErrnoError("rename the result to", path);
      ::unlink(temp.c_str());
      return renamed;
    }
    job->path = path;
  } else {
    job->result = std::make_shared<const std::string>(std::move(result));
  }
  job->record.result_bytes = bytes;
  job->record.result_media_type = std::string(media_type);
  job->record.result_file_name = std::string(file_name);
  job->record.dropped = std::move(dropped);
  job->record.sentences_done = job->record.sentences_total;
  stats_.result_bytes += bytes;
  FinalizeLocked(selector, *job, JobState::kDone);
  return absl::OkStatus();
}

absl::Status LocalJobStore::Finish(absl::string_view id, absl::Status error) {
  if (error.ok()) {
    return absl::InvalidArgumentError("a job finishes with an error, or with PutResult");
  }
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  Job* job = FindLocked(id);
  if (job == nullptr) return absl::NotFoundError("no such job");
  if (job->finished.has_value()) return FinishedError(*job);
  const JobState state = absl::IsCancelled(error) ? JobState::kCancelled : JobState::kFailed;
  job->record.error = std::move(error);
  FinalizeLocked(SplitJobId(id)->selector, *job, state);
  return absl::OkStatus();
}

absl::StatusOr<JobRecord> LocalJobStore::Get(absl::string_view id) {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  Job* job = FindLocked(id);
  if (job == nullptr) return absl::NotFoundError("no such job");
  return job->record;
}

absl::StatusOr<std::string> LocalJobStore::ReadResult(absl::string_view id, int64_t offset,
                                                      int64_t max_bytes) {
  if (offset < 0 || max_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", max_bytes, " bytes of a result from byte ", offset));
  }
  std::string path;
  int64_t length = 0;
  {
    absl::MutexLock lock(&mutex_);
    RemoveExpiredLocked();
    Job* job = FindLocked(id);
    if (job == nullptr) return absl::NotFoundError("no such job");
    if (job->record.state != JobState::kDone) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job is ", JobStateName(job->record.state), ", not done"));
    }
    if (offset >= job->record.result_bytes) return std::string();
    length = std::min(max_bytes, job->record.result_bytes - offset);
    if (job->result != nullptr) {
      return job->result->substr(static_cast<size_t>(offset), static_cast<size_t>(length));
    }
    path = job->path;
  }
  // Outside the mutex: a file removed meanwhile reads as NOT_FOUND, one open stays readable.
  return ReadFileRange(path, offset, length);
}

absl::Status LocalJobStore::Delete(absl::string_view id) {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  if (FindLocked(id) == nullptr) return absl::NotFoundError("no such job");
  EraseLocked(SplitJobId(id)->selector);
  return absl::OkStatus();
}

std::vector<JobRecord> LocalJobStore::ListByOwner(absl::string_view owner) {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  std::vector<std::pair<uint64_t, const JobRecord*>> found;
  for (const auto& [selector, job] : jobs_) {
    if (job.record.owner == owner) found.push_back({job.sequence, &job.record});
  }
  std::sort(found.begin(), found.end());
  std::vector<JobRecord> records;
  records.reserve(found.size());
  for (const auto& [sequence, record] : found) records.push_back(*record);
  return records;
}

JobStore::Stats LocalJobStore::stats() {
  absl::MutexLock lock(&mutex_);
  RemoveExpiredLocked();
  Stats stats = stats_;
  stats.jobs = static_cast<int64_t>(jobs_.size());
  return stats;
}

}  // namespace mtserve
