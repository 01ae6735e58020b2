#include "frontends/grpc/translate_file_reactor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "frontends/grpc/grpc_calls.h"
#include "frontends/proto/proto_mapping.h"
#include "frontends/proto/request_mapping.h"
#include "mtserve/v1/translation.pb.h"

namespace mtserve {
namespace {

constexpr char kMethod[] = "TranslateFile";
// The translated file is sent in messages of this many bytes at most.
constexpr int64_t kResultChunkBytes = 64 << 10;

class TranslateFileReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  TranslateFileReactor(const FileCallParts& parts, grpc::CallbackServerContext* context)
      : parts_(parts),
        context_(context),
        deadline_(DeadlineOf(*context)),
        api_key_(ApiKeyOf(*context)) {
    parts_.drain->Enter();  // Until OnDone, even if refused.
    if (parts_.drain->draining()) {
      Finish(ToGrpcStatus(absl::UnavailableError("the server is shutting down")));
      return;
    }
    counted_ = parts_.threads->BeginCall();
    if (!counted_) {
      Refuse(absl::ResourceExhaustedError(
          absl::StrCat("the server is taking ", parts_.threads->max_calls(),
                       " files over gRPC already (--grpc_max_file_calls); retry later")));
      return;
    }
    // Before the file is read: a caller without a good key sends no megabytes. Submit charges
    // the key.
    if (absl::Status status = parts_.core->CheckApiKey(api_key_, /*charge_request=*/false);
        !status.ok()) {
      Refuse(status);
      return;
    }
    StartRead(&read_);
  }

  // On gRPC's threads, one at a time: the header, then the chunks, then the client's close.
  void OnReadDone(bool ok) override {
    if (!ok) {  // The client closed its side, or the call broke (then OnCancel comes too).
      if (context_->IsCancelled()) {  // Not a close: what was read may not be the whole file.
        Finish(ToGrpcStatus(absl::CancelledError("the call was cancelled")));
        return;
      }
      if (!header_.has_value()) {
        Refuse(absl::InvalidArgumentError(
            "the stream ended without a header: its first message must be a "
            "TranslateFileRequest with header (mtserve.v1.FileHeader) set"));
        return;
      }
      parts_.threads->Add();
      try {
        std::thread([this, threads = parts_.threads] {
          FollowJob();  // Its last act is Finish: this reactor may be gone after it.
          threads->Done();
        }).detach();
      } catch (const std::system_error& error) {  // The process's threads are used up.
        parts_.threads->Done();
        Refuse(absl::ResourceExhaustedError(
            absl::StrCat("the server cannot start a thread to follow this file's job (",
                         error.what(), "); retry later")));
      }
      return;
    }
    ++messages_;
    v1::TranslateFileRequest message;
    if (absl::Status status = ParseMessage(
            read_, RequestValueBounds(parts_.core->limits()),
            absl::StrCat("message ", messages_, " of the stream (mtserve.v1.TranslateFileRequest)"),
            message);
        !status.ok()) {
      Refuse(status);
      return;
    }
    switch (message.part_case()) {
      case v1::TranslateFileRequest::kHeader:
        if (header_.has_value()) {
          Refuse(absl::InvalidArgumentError(absl::StrCat(
              "message ", messages_,
              " of the stream is a second header: header comes once, in the first message")));
          return;
        }
        header_ = std::move(*message.mutable_header());
        break;
      case v1::TranslateFileRequest::kChunk: {
        if (!header_.has_value()) {
          Refuse(absl::InvalidArgumentError(
              "message 1 of the stream is a chunk: header (mtserve.v1.FileHeader) must come "
              "first, before the file's chunks"));
          return;
        }
        const int64_t limit = parts_.jobs->options().max_file_bytes;
        if (static_cast<int64_t>(content_.size() + message.chunk().size()) > limit) {
          // Refused as soon as it is over, the rest unread (a file's whole size is not known).
          Refuse(absl::InvalidArgumentError(absl::StrCat("file has more than ", limit,
                                                         " bytes; the limit is ", limit,
                                                         " (the server's --max_file_bytes)")));
          return;
        }
        content_ += message.chunk();
        break;
      }
      case v1::TranslateFileRequest::PART_NOT_SET:
        Refuse(absl::InvalidArgumentError(
            absl::StrCat("message ", messages_, " of the stream sets neither header nor chunk")));
        return;
    }
    StartRead(&read_);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mutex_);
    writing_ = false;
    if (!ok) broken_ = true;
  }

  // The client cancelled, went away, or the deadline passed: the job is cancelled (its thread,
  // waiting for the job to change, then ends the call).
  void OnCancel() override {
    std::string id;
    {
      absl::MutexLock lock(&mutex_);
      cancelled_ = true;
      id = job_id_;
    }
    if (!id.empty()) parts_.jobs->Cancel(id).IgnoreError();  // It may have ended already.
  }

  void OnDone() override {
    if (counted_) parts_.threads->EndCall();
    parts_.drain->Leave();
    // The thread that wrote last may still be leaving mutex_.
    { absl::MutexLock lock(&mutex_); }
    delete this;
  }

 private:
  // Ends the call with `status` before any job was made, counting it refused.
  void Refuse(const absl::Status& status) {
    parts_.core->RecordRefused(Frontend::kGrpc, kMethod, status);
    AddRetryAfter(*context_, status);
    Finish(ToGrpcStatus(status));
  }

  // The file's request, from the header and the bytes read.
  absl::StatusOr<FileRequest> MakeRequest() {
    FileRequest request;
    absl::StatusOr<std::string> format = ClaimedFormatName(*header_, "header.format");
    if (!format.ok()) return format.status();
    request.format = *std::move(format);
    request.format_field = "header.format";
    request.content = std::move(content_);
    request.file_name = header_->file_name();
    request.media_type = header_->media_type();
    request.translation = ToCoreRequest(*header_, deadline_, kMethod, Frontend::kGrpc);
    request.translation.api_key = api_key_;
    return request;
  }

  // On the call's own thread: submits the file, writes the job as it changes and its result,
  // and ends the call.
  void FollowJob() {
    absl::StatusOr<FileRequest> request = MakeRequest();
    if (!request.ok()) {
      Refuse(request.status());
      return;
    }
    absl::StatusOr<JobRecord> job = parts_.jobs->Submit(*std::move(request));
    if (!job.ok()) {
      AddRetryAfter(*context_, job.status());
      Finish(ToGrpcStatus(job.status()));
      return;
    }
    bool cancelled;
    {
      absl::MutexLock lock(&mutex_);
      job_id_ = job->id;
      cancelled = cancelled_;
    }
    if (cancelled) parts_.jobs->Cancel(job->id).IgnoreError();
    EndJob(job->id, Follow(*std::move(job)));
  }

  // Writes the job as it changes until it ends, then its result: how the call ends.
  absl::Status Follow(JobRecord seen) {
    v1::TranslateFileResponse response;
    *response.mutable_job() = ToFileJobProto(seen, /*with_result_url=*/false);
    if (!IsFinal(seen.state) && !Write(response)) return CallEnded();
    while (!IsFinal(seen.state)) {
      absl::StatusOr<JobRecord> next = parts_.jobs->WaitForChange(seen.id, seen, deadline_);
      if (!next.ok()) return next.status();
      if (next->state == seen.state && next->sentences_done == seen.sentences_done &&
          next->sentences_total == seen.sentences_total) {
        // The call's deadline passed (gRPC cancels it too): the job stops, and the next wait
        // returns at once with its end.
        if (absl::Now() >= deadline_) parts_.jobs->Cancel(seen.id).IgnoreError();
        continue;
      }
      seen = *std::move(next);
      if (IsFinal(seen.state)) break;
      *response.mutable_job() = ToFileJobProto(seen, /*with_result_url=*/false);
      if (!Write(response)) return CallEnded();
    }
    if (seen.state != JobState::kDone) {
      return seen.error.ok() ? absl::CancelledError("the job was cancelled") : seen.error;
    }
    *response.mutable_job() = ToFileJobProto(seen, /*with_result_url=*/false);
    if (!Write(response)) return CallEnded();
    for (int64_t offset = 0; offset < seen.result_bytes;) {
      absl::StatusOr<std::string> chunk =
          parts_.jobs->ReadResult(seen.id, offset, kResultChunkBytes);
      if (!chunk.ok()) return chunk.status();
      if (chunk->empty()) {
        return absl::InternalError(
            absl::StrCat("the job's result ended at byte ", offset, " of ", seen.result_bytes));
      }
      offset += static_cast<int64_t>(chunk->size());
      response.set_chunk(*std::move(chunk));
      if (!Write(response)) return CallEnded();
    }
    return absl::OkStatus();
  }

  // Deletes the job (cancelling it if it still runs) and ends the call with `status`.
  void EndJob(const std::string& id, const absl::Status& status) {
    parts_.jobs->Delete(id).IgnoreError();  // Gone already if it expired.
    Finish(ToGrpcStatus(status));
  }

  static absl::Status CallEnded() {
    return absl::CancelledError("the call was cancelled before its answer was written");
  }

  // Writes `response` and waits for the write to end: false if the call was cancelled or broke.
  bool Write(const v1::TranslateFileResponse& response) {
    {
      absl::MutexLock lock(&mutex_);
      if (cancelled_ || broken_) return false;
      writing_ = true;
    }
    write_.Clear();  // The writer fills an empty buffer only.
    SerializeMessage(response, write_);
    StartWrite(&write_);  // Outside the lock: gRPC may call OnWriteDone on this thread.
    absl::MutexLock lock(&mutex_);
    mutex_.Await(absl::Condition(
        +[](bool* writing) { return !*writing; }, &writing_));
    return !cancelled_ && !broken_;
  }

  const FileCallParts parts_;
  grpc::CallbackServerContext* const context_;
  const absl::Time deadline_;
  const std::optional<std::string> api_key_;

  // Read on gRPC's threads, one read at a time, then handed to the call's thread.
  grpc::ByteBuffer read_;
  int messages_ = 0;
  bool counted_ = false;  // Among the calls FileCallThreads bounds (EndCall in OnDone).
  std::optional<v1::FileHeader> header_;
  std::string content_;

  grpc::ByteBuffer write_;  // The call's thread's, and gRPC's while it is written.

  absl::Mutex mutex_;
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool broken_ ABSL_GUARDED_BY(mutex_) = false;     // A write failed.
  bool cancelled_ ABSL_GUARDED_BY(mutex_) = false;  // OnCancel came.
  std::string job_id_ ABSL_GUARDED_BY(mutex_);      // Once submitted.
};

}  // namespace

bool FileCallThreads::BeginCall() {
  absl::MutexLock lock(&mutex_);
  if (calls_ >= max_calls_) return false;
  ++calls_;
  return true;
}

void FileCallThreads::EndCall() {
  absl::MutexLock lock(&mutex_);
  --calls_;
}

void FileCallThreads::Add() {
  absl::MutexLock lock(&mutex_);
  ++running_;
}

void FileCallThreads::Done() {
  absl::MutexLock lock(&mutex_);
  --running_;
}

void FileCallThreads::WaitUntilNone() {
  absl::MutexLock lock(&mutex_);
  mutex_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewTranslateFileReactor(
    const FileCallParts& parts, grpc::CallbackServerContext* context) {
  return new TranslateFileReactor(parts, context);
}

}  // namespace mtserve
