#include "frontends/grpc/translation_service.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "frontends/grpc/grpc_calls.h"
#include "frontends/proto/glossary_mapping.h"
#include "frontends/proto/proto_mapping.h"
#include "frontends/proto/request_mapping.h"
#include "serving/stop_reason.h"
#include "serving/stream_window.h"

namespace mtserve {
namespace {

// Ends a unary call with `status`; over an API key's limit, with trailing metadata "retry-after".
void FinishWith(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
                const absl::Status& status) {
  AddRetryAfter(*context, status);
  reactor->Finish(ToGrpcStatus(status));
}

}  // namespace

TranslationService::TranslationService(TranslationCore* core, DrainGate* drain, FileJobs* file_jobs,
                                       int max_file_calls, Glossaries* glossaries)
    : core_(core),
      drain_(drain),
      file_jobs_(file_jobs),
      glossaries_(glossaries),
      file_call_threads_(max_file_calls) {}

TranslationService::~TranslationService() { file_call_threads_.WaitUntilNone(); }

// Translate: one reactor per call; the core answers once every text is done.
class TranslateReactor : public grpc::ServerUnaryReactor {
 public:
  TranslateReactor(TranslationService* service, grpc::CallbackServerContext* context,
                   const grpc::ByteBuffer* request, grpc::ByteBuffer* response)
      : service_(service), context_(context), response_(response) {
    service_->drain_->Enter();  // Until OnDone, even if refused.
    // A call cancelled (or past its deadline) before its message arrived comes without one (an
    // empty buffer would parse as a valid request of no texts).
    if (!request->Valid() || context->IsCancelled()) {
      const absl::Status status =
          StopReason(true, DeadlineOf(*context), absl::Now(), "before the request arrived");
      service_->core_->RecordRefused(Frontend::kGrpc, "Translate", status);
      Finish(ToGrpcStatus(status));
      return;
    }
    v1::TranslateRequest message;
    if (const absl::Status status =
            ParseMessage(*request, RequestValueBounds(service_->core_->limits()),
                         "the request (mtserve.v1.TranslateRequest)", message);
        !status.ok()) {
      service_->core_->RecordRefused(Frontend::kGrpc, "Translate", status);
      Finish(ToGrpcStatus(status));
      return;
    }
    TranslationCore::Request core_request =
        ToCoreRequest(message, DeadlineOf(*context), "Translate", Frontend::kGrpc);
    core_request.api_key = ApiKeyOf(*context);
    // Nothing below may touch members: the core may answer, and the call end, at once.
    service_->core_->Translate(std::move(core_request), call_,
                               [this, with_scores = message.options().return_scores()](
                                   absl::StatusOr<TranslationCore::Reply> reply) {
                                 Answer(std::move(reply), with_scores);
                               });
  }

  void OnCancel() override { call_->Cancel(); }
  void OnDone() override {
    service_->drain_->Leave();
    delete this;
  }

 private:
  void Answer(absl::StatusOr<TranslationCore::Reply> reply, bool with_scores) {
    if (!reply.ok()) {
      FinishWith(context_, this, reply.status());
      return;
    }
    const v1::TranslateResponse response =
        ToTranslateResponse(*service_->core_, *reply, with_scores);
    SerializeMessage(response, *response_);
    Finish(grpc::Status::OK);
  }

  TranslationService* const service_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  const std::shared_ptr<TranslationCore::Call> call_ = std::make_shared<TranslationCore::Call>();
};

grpc::ServerUnaryReactor* TranslationService::Translate(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request,
                                                        grpc::ByteBuffer* response) {
  return new TranslateReactor(this, context, request, response);
}

// TranslateStream: reads texts one at a time, hands each to the core as it arrives and writes
// each answer as soon as it is ready; one write is outstanding at a time, the rest wait in order
// of completion. The stream ends OK once the client has closed its side and every text read is
// answered; INVALID_ARGUMENT once the texts read before a message that does not parse are
// answered; UNAVAILABLE once draining and the texts read are answered.
class TranslateStreamReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  TranslateStreamReactor(TranslationService* service, grpc::CallbackServerContext* context)
      : service_(service), deadline_(DeadlineOf(*context)), api_key_(ApiKeyOf(*context)) {
    service_->drain_->Enter();  // Until OnDone, even if refused.
    if (!service_->StreamStarted(this)) {
      Finish(ToGrpcStatus(absl::UnavailableError("the server is shutting down")));
      return;
    }
    registered_ = true;
    // Each text is charged to the key as it comes (HandleText).
    if (absl::Status status = service_->core_->CheckApiKey(api_key_, /*charge_request=*/false);
        !status.ok()) {
      service_->core_->RecordRefused(Frontend::kGrpc, "TranslateStream", status);
      {
        absl::MutexLock lock(&mutex_);
        finished_ = true;
      }
      Finish(ToGrpcStatus(status));  // Outside the lock: gRPC may end the call at once.
      return;
    }
    absl::MutexLock lock(&mutex_);
    ReadNextLocked();
  }

  void OnReadDone(bool ok) override {
    v1::TranslateStreamRequest message;
    {
      absl::MutexLock lock(&mutex_);
      reading_ = false;
      if (!ok) {  // The client closed its side (or the call broke).
        reads_done_ = true;
        MaybeFinishLocked();
        return;
      }
      // A read that was under way when the stream stopped reading (draining, a malformed
      // message) or was cancelled: its text is not taken, since its answer could come after the
      // stream has ended.
      if (finished_ || draining_ || !failed_.ok() || call_->cancelled()) {
        MaybeFinishLocked();
        return;
      }
      ++messages_;
      if (absl::Status status =
              ParseMessage(read_, RequestValueBounds(service_->core_->limits()),
                           absl::StrCat("message ", messages_,
                                        " of the stream (mtserve.v1.TranslateStreamRequest)"),
                           message);
          !status.ok()) {
        // The texts already read are still answered; nothing after this one is read.
        failed_ = std::move(status);
        service_->core_->RecordRefused(Frontend::kGrpc, "TranslateStream", failed_);
        MaybeFinishLocked();
        return;
      }
      ++unanswered_;
      window_.Take();
    }
    HandleText(std::move(message));
    absl::MutexLock lock(&mutex_);
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mutex_);
    writes_.pop_front();
    window_.Release();
    writing_ = false;
    if (!ok) call_->Cancel();
    WriteNextLocked();
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void OnCancel() override {
    call_->Cancel();
    absl::MutexLock lock(&mutex_);
    MaybeFinishLocked();
  }

  void OnDone() override {
    if (registered_) service_->StreamEnded(this);
    service_->drain_->Leave();
    // The thread that called Finish may still be leaving mutex_.
    { absl::MutexLock lock(&mutex_); }
    delete this;
  }

  // Reads no more texts; ends once those read are answered. When that is now, returns the status
  // to finish with, and the caller must call Finish with it (outside its own locks: gRPC may end
  // the call at once); nothing else will.
  std::optional<absl::Status> Drain() {
    absl::MutexLock lock(&mutex_);
    draining_ = true;
    std::optional<absl::Status> status = FinishStatusLocked();
    if (status.has_value()) finished_ = true;
    return status;
  }

 private:
  // Hands one text to the core; its answer (or error) is written when ready.
  void HandleText(v1::TranslateStreamRequest message) {
    TranslationCore::Request request =
        ToCoreRequest(message, deadline_, "TranslateStream", Frontend::kGrpc);
    request.api_key = api_key_;
    service_->core_->Translate(std::move(request), call_,
                               [this, id = std::move(*message.mutable_id()),
                                with_scores = message.options().return_scores()](
                                   absl::StatusOr<TranslationCore::Reply> reply) {
                                 const v1::TranslateStreamResponse answer =
                                     ToStreamResponse(*service_->core_, id, reply, with_scores);
                                 Write(answer);
                               });
  }

  // Answers one text read earlier (from a core or worker thread, or from HandleText).
  void Write(const v1::TranslateStreamResponse& answer) {
    absl::MutexLock lock(&mutex_);
    --unanswered_;
    if (call_->cancelled()) {
      window_.Release();  // Nobody reads it.
    } else {
      SerializeMessage(answer, writes_.emplace_back());
    }
    WriteNextLocked();
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (writing_ || writes_.empty() || finished_) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  // Reads the next text unless one is being read, reading has ended, or the window is full
  // (backpressure on clients that send without reading).
  void ReadNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (reading_ || reads_done_ || draining_ || !failed_.ok() || finished_ || call_->cancelled()) {
      return;
    }
    if (!window_.HasRoom()) return;
    reading_ = true;
    StartRead(&read_);
  }

  // How the call ends, if it is time: once every text read has been answered and written and no
  // more will be read; when cancelled, as soon as no text is still being translated (their
  // callbacks point at this reactor) and no write is in progress.
  std::optional<absl::Status> FinishStatusLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (finished_ || writing_) return std::nullopt;
    if (call_->cancelled()) {
      if (unanswered_ > 0) return std::nullopt;
      return absl::CancelledError("the stream was cancelled");
    }
    if (unanswered_ > 0 || !writes_.empty()) return std::nullopt;
    if (!failed_.ok()) return failed_;
    if (draining_) {
      return absl::UnavailableError(
          "the server is shutting down: every text it read was answered; send the others "
          "again, to another server");
    }
    if (!reads_done_) return std::nullopt;
    return absl::OkStatus();
  }

  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    const std::optional<absl::Status> status = FinishStatusLocked();
    if (!status.has_value()) return;
    finished_ = true;
    Finish(ToGrpcStatus(*status));
  }

  TranslationService* const service_;
  const absl::Time deadline_;
  const std::optional<std::string> api_key_;
  const std::shared_ptr<TranslationCore::Call> call_ = std::make_shared<TranslationCore::Call>();
  bool registered_ = false;
  grpc::ByteBuffer read_;

  absl::Mutex mutex_;
  std::deque<grpc::ByteBuffer> writes_ ABSL_GUARDED_BY(mutex_);  // Front: being written.
  int messages_ ABSL_GUARDED_BY(mutex_) = 0;                     // Read so far.
  int unanswered_ ABSL_GUARDED_BY(mutex_) = 0;                   // Texts read and not yet answered.
  StreamWindow window_ ABSL_GUARDED_BY(mutex_);  // Texts read whose answers are not written.
  bool reading_ ABSL_GUARDED_BY(mutex_) = false;
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mutex_) = false;
  bool draining_ ABSL_GUARDED_BY(mutex_) = false;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status failed_ ABSL_GUARDED_BY(mutex_);  // A message that did not parse.
};

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TranslationService::TranslateStream(
    grpc::CallbackServerContext* context) {
  return new TranslateStreamReactor(this, context);
}

bool TranslationService::StreamStarted(TranslateStreamReactor* stream) {
  // Under the lock, as EndStreams: a stream is either refused or registered before it runs.
  absl::MutexLock lock(&mutex_);
  if (drain_->draining()) return false;
  streams_.insert(stream);
  return true;
}

void TranslationService::StreamEnded(TranslateStreamReactor* stream) {
  absl::MutexLock lock(&mutex_);
  streams_.erase(stream);
}

void TranslationService::EndStreams() {
  std::vector<std::pair<TranslateStreamReactor*, absl::Status>> idle;
  {
    // Under the lock: a stream leaves the set (in OnDone) before it is deleted.
    absl::MutexLock lock(&mutex_);
    for (TranslateStreamReactor* stream : streams_) {
      if (std::optional<absl::Status> status = stream->Drain()) idle.emplace_back(stream, *status);
    }
  }
  // Alive until they finish, which only this does now.
  for (auto& [stream, status] : idle) stream->Finish(ToGrpcStatus(status));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TranslationService::TranslateFile(
    grpc::CallbackServerContext* context) {
  return NewTranslateFileReactor(
      FileCallParts{
          .core = core_, .drain = drain_, .jobs = file_jobs_, .threads = &file_call_threads_},
      context);
}

grpc::ServerUnaryReactor* TranslationService::ListModels(grpc::CallbackServerContext* context,
                                                         const v1::ListModelsRequest* request,
                                                         v1::ListModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (drain_->draining()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return reactor;
  }
  absl::StatusOr<v1::ListModelsResponse> models =
      mtserve::ListModels(*core_, ApiKeyOf(*context), file_jobs_->options().max_file_bytes);
  if (!models.ok()) {
    FinishWith(context, reactor, models.status());
    return reactor;
  }
  *response = *std::move(models);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::Detect(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* request,
                                                     grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // Counted in flight while it runs (here, on this thread).
  if (!drain_->TryEnter()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return reactor;
  }
  const absl::Cleanup leave = [this] { drain_->Leave(); };
  v1::DetectRequest message;
  if (const absl::Status status = ParseMessage(*request, RequestValueBounds(core_->limits()),
                                               "the request (mtserve.v1.DetectRequest)", message);
      !status.ok()) {
    core_->RecordRefused(Frontend::kGrpc, "Detect", status);
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  DetectionRequest core_request = ToCoreRequest(message, "Detect", Frontend::kGrpc);
  core_request.api_key = ApiKeyOf(*context);
  const absl::StatusOr<DetectionReply> reply = core_->Detect(core_request);
  if (!reply.ok()) {
    FinishWith(context, reactor, reply.status());
    return reactor;
  }
  SerializeMessage(ToDetectResponse(*reply), *response);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::LoadModel(grpc::CallbackServerContext* context,
                                                        const v1::LoadModelRequest* request,
                                                        v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (drain_->draining()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return reactor;
  }
  TranslationCore::ModelCall call;
  call.model = request->name();
  call.api_key = ApiKeyOf(*context);
  call.deadline = DeadlineOf(*context);
  call.frontend = Frontend::kGrpc;
  call.method = "LoadModel";
  core_->LoadModel(std::move(call), [this, context, reactor, response](absl::StatusOr<int> slot) {
    if (!slot.ok()) return FinishWith(context, reactor, slot.status());
    *response = ToModelInfo(*core_, *slot);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::UnloadModel(grpc::CallbackServerContext* context,
                                                          const v1::UnloadModelRequest* request,
                                                          v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (drain_->draining()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return reactor;
  }
  TranslationCore::ModelCall call;
  call.model = request->name();
  call.api_key = ApiKeyOf(*context);
  call.frontend = Frontend::kGrpc;
  call.method = "UnloadModel";
  const absl::StatusOr<int> slot = core_->UnloadModel(call);
  if (!slot.ok()) {
    FinishWith(context, reactor, slot.status());
    return reactor;
  }
  *response = ToModelInfo(*core_, *slot);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

bool TranslationService::GlossaryCallAllowed(grpc::ServerUnaryReactor* reactor) const {
  if (glossaries_ == nullptr) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this server keeps no glossaries"));
    return false;
  }
  if (drain_->draining()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return false;
  }
  return true;
}

grpc::ServerUnaryReactor* TranslationService::CreateGlossary(grpc::CallbackServerContext* context,
                                                             const grpc::ByteBuffer* request,
                                                             grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!GlossaryCallAllowed(reactor)) return reactor;
  v1::CreateGlossaryRequest message;
  if (const absl::Status status =
          ParseMessage(*request, GlossaryValueBounds(glossaries_->limits()),
                       "the request (mtserve.v1.CreateGlossaryRequest)", message);
      !status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  const absl::StatusOr<GlossaryInfo> info =
      glossaries_->Create(ApiKeyOf(*context), ToGlossary(message));
  if (!info.ok()) {
    FinishWith(context, reactor, info.status());
    return reactor;
  }
  SerializeMessage(ToGlossaryInfoProto(*info), *response);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::ListGlossaries(
    grpc::CallbackServerContext* context, const v1::ListGlossariesRequest* /*request*/,
    v1::ListGlossariesResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!GlossaryCallAllowed(reactor)) return reactor;
  const absl::StatusOr<std::vector<GlossaryInfo>> infos = glossaries_->List(ApiKeyOf(*context));
  if (!infos.ok()) {
    FinishWith(context, reactor, infos.status());
    return reactor;
  }
  *response = ToListGlossariesResponse(*infos);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::GetGlossary(grpc::CallbackServerContext* context,
                                                          const v1::GetGlossaryRequest* request,
                                                          v1::Glossary* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!GlossaryCallAllowed(reactor)) return reactor;
  const absl::StatusOr<Glossary> glossary = glossaries_->Get(ApiKeyOf(*context), request->id());
  if (!glossary.ok()) {
    FinishWith(context, reactor, glossary.status());
    return reactor;
  }
  *response = ToGlossaryProto(*glossary);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::DeleteGlossary(
    grpc::CallbackServerContext* context, const v1::DeleteGlossaryRequest* request,
    v1::DeleteGlossaryResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!GlossaryCallAllowed(reactor)) return reactor;
  FinishWith(context, reactor, glossaries_->Delete(ApiKeyOf(*context), request->id()));
  return reactor;
}

}  // namespace mtserve
