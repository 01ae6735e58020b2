#include "server/translation_service.h"

#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "model/status_macros.h"

namespace mtserve {
namespace {

// The model label of requests that failed before a model was chosen (keeps label values bounded
// whatever names clients send).
constexpr char kNoModel[] = "none";

// A stream keeps at most this many texts between reading them and writing their answers; it
// reads no more until answers are written (backpressure on clients that do not read).
constexpr int kMaxStreamTextsInFlight = 64;

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

// An empty text's translation: num_hypotheses empty hypotheses, like any other text's.
void AddEmptyHypotheses(const v1::DecodingOptions& options, v1::Translation& translation) {
  for (uint32_t i = 0; i < std::max(1u, options.num_hypotheses()); ++i) {
    translation.add_hypotheses();
  }
}

std::string CodeName(const absl::Status& status) { return absl::StatusCodeToString(status.code()); }

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

void FillTranslation(const TranslationResult& result, bool with_scores, int eos_id,
                     v1::Translation& translation) {
  translation.set_source_tokens(result.source_tokens);
  for (const Hypothesis& h : result.hypotheses) {
    v1::Hypothesis* out = translation.add_hypotheses();
    out->set_text(h.text);
    out->set_num_tokens(TargetTokens(h, eos_id));
    if (with_scores) {
      out->set_score(h.score);
      out->mutable_token_log_probs()->Assign(h.token_log_probs.begin(), h.token_log_probs.end());
    }
  }
}

TranslationService::TranslationService(const RequestLimits& limits, Metrics* metrics)
    : limits_(limits), metrics_(metrics) {}

void TranslationService::StartServing(std::vector<ServedModel> models, BatchScheduler* scheduler) {
  absl::MutexLock lock(&mutex_);
  models_ = std::move(models);
  scheduler_ = scheduler;
}

void TranslationService::StartDraining() {
  absl::MutexLock lock(&mutex_);
  draining_ = true;
}

bool TranslationService::WaitUntilIdle(absl::Time deadline) {
  absl::MutexLock lock(&mutex_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return in_flight_ == 0; };
  return mutex_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

absl::StatusOr<int> TranslationService::FindModel(const std::string& name) const {
  absl::ReaderMutexLock lock(&mutex_);
  if (draining_) return absl::UnavailableError("the server is shutting down");
  if (scheduler_ == nullptr) return absl::UnavailableError("the server is loading its models");
  if (name.empty()) return 0;
  for (size_t i = 0; i < models_.size(); ++i) {
    if (models_[i].name == name) return static_cast<int>(i);
  }
  std::string served;
  for (const ServedModel& m : models_) absl::StrAppend(&served, served.empty() ? "" : ", ", m.name);
  return absl::NotFoundError(
      absl::StrCat("model \"", name, "\" is not served; this server has: ", served));
}

const ServedModel& TranslationService::model(int index) const {
  absl::ReaderMutexLock lock(&mutex_);
  return models_[index];
}

absl::StatusOr<std::vector<TranslationTask>> TranslationService::MakeTasks(
    int model_index, const v1::DecodingOptions& options,
    const std::vector<const std::string*>& texts, const std::string& field,
    std::vector<int>& positions) const {
  const ServedModel& served = model(model_index);
  MT_ASSIGN_OR_RETURN(const DecodingOptions decoding,
                      ToDecodingOptions(options, *served.model, limits_));
  std::vector<TranslationTask> tasks;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name = texts.size() == 1 ? field : absl::StrCat(field, "[", i, "]");
    MT_ASSIGN_OR_RETURN(std::vector<int> ids, EncodeText(*texts[i], name, *served.model, limits_));
    if (ids.empty()) continue;
    MT_RETURN_IF_ERROR(
        CheckDecodeMemory(static_cast<int>(ids.size()), decoding, *served.model, limits_, name));
    TranslationTask& task = tasks.emplace_back();
    task.model = model_index;
    task.model_name = served.name;
    task.source_ids = std::move(ids);
    task.options = decoding;
    positions.push_back(static_cast<int>(i));
  }
  return tasks;
}

absl::Status TranslationService::Submit(std::vector<TranslationTask> tasks) {
  BatchScheduler* scheduler;
  {
    absl::ReaderMutexLock lock(&mutex_);
    scheduler = scheduler_;
  }
  return scheduler->Submit(std::move(tasks));
}

void TranslationService::CallStarted() {
  absl::MutexLock lock(&mutex_);
  ++in_flight_;
}

void TranslationService::CallEnded() {
  absl::MutexLock lock(&mutex_);
  --in_flight_;
}

void TranslationService::TrackInFlight(const std::string& model, int change) {
  if (metrics_ != nullptr) metrics_->InFlightRequests(model).Increment(change);
}

void TranslationService::Record(const std::string& model, const std::string& method,
                                const absl::Status& status, absl::Time start) {
  if (metrics_ == nullptr) return;
  metrics_->RecordRequest(model, method, CodeName(status),
                          absl::ToDoubleSeconds(absl::Now() - start));
}

// Translate: one reactor per call; the last text to finish answers.
class TranslateReactor : public grpc::ServerUnaryReactor {
 public:
  TranslateReactor(TranslationService* service, grpc::CallbackServerContext* context,
                   const v1::TranslateRequest* request, v1::TranslateResponse* response)
      : service_(service), request_(request), response_(response) {
    service_->CallStarted();
    absl::StatusOr<bool> queued = Begin(DeadlineOf(*context));
    if (!queued.ok()) {
      Answer(queued.status());
    } else if (!*queued) {
      Answer(absl::OkStatus());  // Only empty texts: nothing to compute.
    }
  }

  void OnCancel() override { cancelled_->store(true); }
  void OnDone() override {
    service_->CallEnded();
    delete this;
  }

 private:
  // Validates and queues the texts, whose results come to TextDone(); false if there was
  // nothing to queue.
  absl::StatusOr<bool> Begin(absl::Time deadline) {
    MT_ASSIGN_OR_RETURN(const int model_index, service_->FindModel(request_->model()));
    const ServedModel& served = service_->model(model_index);
    model_name_ = served.name;
    response_->set_model(served.name);
    service_->TrackInFlight(model_name_, +1);
    const int texts = request_->texts_size();
    if (texts > service_->limits_.max_texts_per_request) {
      return absl::InvalidArgumentError(absl::StrCat("texts has ", texts, " entries; the limit is ",
                                                     service_->limits_.max_texts_per_request,
                                                     " (the server's --max_texts_per_request)"));
    }
    with_scores_ = request_->options().return_scores();
    eos_id_ = served.model->config().eos_token_id;
    std::vector<const std::string*> inputs;
    for (const std::string& text : request_->texts()) inputs.push_back(&text);
    std::vector<int> positions;
    MT_ASSIGN_OR_RETURN(
        std::vector<TranslationTask> tasks,
        service_->MakeTasks(model_index, request_->options(), inputs, "texts", positions));
    for (int i = 0; i < texts; ++i) {
      v1::Translation* translation = response_->add_translations();
      if (request_->texts(i).empty()) AddEmptyHypotheses(request_->options(), *translation);
    }
    if (tasks.empty()) return false;
    pending_ = static_cast<int>(tasks.size());
    for (size_t t = 0; t < tasks.size(); ++t) {
      tasks[t].deadline = deadline;
      tasks[t].cancelled = [cancelled = cancelled_] { return cancelled->load(); };
      tasks[t].done = [this, position = positions[t]](absl::StatusOr<TranslationResult> result) {
        TextDone(position, std::move(result));
      };
    }
    MT_RETURN_IF_ERROR(service_->Submit(std::move(tasks)));
    return true;
  }

  // Runs on a worker thread.
  void TextDone(int position, absl::StatusOr<TranslationResult> result) {
    absl::Status finished;
    {
      absl::MutexLock lock(&mutex_);
      if (result.ok()) {
        FillTranslation(*result, with_scores_, eos_id_, *response_->mutable_translations(position));
      } else if (status_.ok()) {
        status_ = result.status();
        cancelled_->store(true);  // The call fails anyway: the other texts need not run.
      }
      if (--pending_ > 0) return;
      finished = status_;
    }
    Answer(finished);
  }

  void Answer(const absl::Status& status) {
    if (!status.ok()) response_->Clear();
    service_->Record(model_name_, "Translate", status, start_);
    if (model_name_ != kNoModel) service_->TrackInFlight(model_name_, -1);
    Finish(ToGrpcStatus(status));
  }

  TranslationService* const service_;
  const v1::TranslateRequest* const request_;
  v1::TranslateResponse* const response_;
  const absl::Time start_ = absl::Now();
  std::string model_name_ = kNoModel;
  bool with_scores_ = false;
  int eos_id_ = 0;
  const std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);

  absl::Mutex mutex_;
  int pending_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::Status status_ ABSL_GUARDED_BY(mutex_);
};

grpc::ServerUnaryReactor* TranslationService::Translate(grpc::CallbackServerContext* context,
                                                        const v1::TranslateRequest* request,
                                                        v1::TranslateResponse* response) {
  return new TranslateReactor(this, context, request, response);
}

// TranslateStream: reads texts one at a time, queues each as it arrives and writes each answer
// as soon as it is ready; one write is outstanding at a time, the rest wait in order of
// completion.
class TranslateStreamReactor
    : public grpc::ServerBidiReactor<v1::TranslateStreamRequest, v1::TranslateStreamResponse> {
 public:
  TranslateStreamReactor(TranslationService* service, grpc::CallbackServerContext* context)
      : service_(service), deadline_(DeadlineOf(*context)) {
    service_->CallStarted();
    absl::MutexLock lock(&mutex_);
    ReadNextLocked();
  }

  void OnReadDone(bool ok) override {
    v1::TranslateStreamRequest request;
    {
      absl::MutexLock lock(&mutex_);
      reading_ = false;
      if (!ok) {  // The client closed its side (or the call broke).
        reads_done_ = true;
        MaybeFinishLocked();
        return;
      }
      ++unanswered_;
      // Moved out first: a worker answering another text may start the next read into request_.
      request = std::move(request_);
    }
    HandleText(request);
    absl::MutexLock lock(&mutex_);
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mutex_);
    writes_.pop_front();
    writing_ = false;
    if (!ok) cancelled_->store(true);
    WriteNextLocked();
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void OnCancel() override {
    cancelled_->store(true);
    absl::MutexLock lock(&mutex_);
    MaybeFinishLocked();
  }

  void OnDone() override {
    service_->CallEnded();
    delete this;
  }

 private:
  // Queues one text; its answer (or error) is written when ready.
  void HandleText(const v1::TranslateStreamRequest& request) {
    const absl::Time start = absl::Now();
    v1::TranslateStreamResponse answer;
    answer.set_id(request.id());
    absl::Status status = [&]() -> absl::Status {
      MT_ASSIGN_OR_RETURN(const int model_index, service_->FindModel(request.model()));
      const std::string& name = service_->model(model_index).name;
      answer.set_model(name);
      std::vector<int> positions;
      MT_ASSIGN_OR_RETURN(std::vector<TranslationTask> tasks,
                          service_->MakeTasks(model_index, request.options(), {&request.text()},
                                              "text", positions));
      if (tasks.empty()) {
        AddEmptyHypotheses(request.options(), *answer.mutable_translation());
        return absl::OkStatus();
      }
      service_->TrackInFlight(name, +1);
      TranslationTask& task = tasks.front();
      task.deadline = deadline_;
      task.cancelled = [cancelled = cancelled_] { return cancelled->load(); };
      task.done = [this, answer, start, with_scores = request.options().return_scores(),
                   eos_id = service_->model(model_index).model->config().eos_token_id,
                   model = name](absl::StatusOr<TranslationResult> result) mutable {
        if (result.ok()) {
          FillTranslation(*result, with_scores, eos_id, *answer.mutable_translation());
        } else {
          answer.mutable_error()->set_code(static_cast<int>(result.status().code()));
          answer.mutable_error()->set_message(std::string(result.status().message()));
        }
        RecordText(model, result.status(), start);
        service_->TrackInFlight(model, -1);
        Write(std::move(answer));
      };
      absl::Status submitted = service_->Submit(std::move(tasks));
      if (!submitted.ok()) service_->TrackInFlight(name, -1);
      return submitted;
    }();
    if (status.ok() && !answer.has_translation()) return;  // Queued.
    if (!status.ok()) {
      answer.mutable_error()->set_code(static_cast<int>(status.code()));
      answer.mutable_error()->set_message(std::string(status.message()));
    }
    RecordText(answer.model().empty() ? kNoModel : answer.model(), status, start);
    Write(std::move(answer));
  }

  // The metrics count streamed texts one by one, like unary calls.
  void RecordText(const std::string& model, const absl::Status& status, absl::Time start) {
    service_->Record(model, "TranslateStream", status, start);
  }

  // Answers one text read earlier (from a worker thread, or from HandleText).
  void Write(v1::TranslateStreamResponse answer) {
    absl::MutexLock lock(&mutex_);
    --unanswered_;
    if (!cancelled_->load()) writes_.push_back(std::move(answer));  // Else nobody reads it.
    WriteNextLocked();
    ReadNextLocked();
    MaybeFinishLocked();
  }

  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (writing_ || writes_.empty() || finished_) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  // Reads the next text unless one is being read, the client is done, or too many texts are
  // between reading and writing (backpressure on clients that send without reading).
  void ReadNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (reading_ || reads_done_ || finished_ || cancelled_->load()) return;
    if (unanswered_ + static_cast<int>(writes_.size()) >= kMaxStreamTextsInFlight) return;
    reading_ = true;
    StartRead(&request_);
  }

  // Ends the call once every text read has been answered and written and the client is done
  // sending; when cancelled, as soon as no text is still being translated (their callbacks
  // point at this reactor) and no write is in progress.
  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (finished_ || writing_) return;
    if (cancelled_->load()) {
      if (unanswered_ > 0) return;
      final_status_ = absl::CancelledError("the stream was cancelled");
    } else if (!reads_done_ || unanswered_ > 0 || !writes_.empty()) {
      return;
    }
    finished_ = true;
    Finish(ToGrpcStatus(final_status_));
  }

  TranslationService* const service_;
  const absl::Time deadline_;
  const absl::Time start_ = absl::Now();
  const std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  v1::TranslateStreamRequest request_;

  absl::Mutex mutex_;
  std::deque<v1::TranslateStreamResponse> writes_ ABSL_GUARDED_BY(mutex_);  // Front: writing.
  int unanswered_ ABSL_GUARDED_BY(mutex_) = 0;  // Texts read and not yet answered.
  bool reading_ ABSL_GUARDED_BY(mutex_) = false;
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mutex_) = false;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status final_status_;
};

grpc::ServerBidiReactor<v1::TranslateStreamRequest, v1::TranslateStreamResponse>*
TranslationService::TranslateStream(grpc::CallbackServerContext* context) {
  return new TranslateStreamReactor(this, context);
}

grpc::ServerUnaryReactor* TranslationService::ListModels(grpc::CallbackServerContext* context,
                                                         const v1::ListModelsRequest* request,
                                                         v1::ListModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::ReaderMutexLock lock(&mutex_);
  if (scheduler_ == nullptr) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is loading its models"));
    return reactor;
  }
  for (size_t i = 0; i < models_.size(); ++i) {
    const ServedModel& served = models_[i];
    const ModelConfig& c = served.model->config();
    v1::ModelInfo* info = response->add_models();
    info->set_name(served.name);
    info->set_is_default(i == 0);
    info->set_source_language(c.source_lang);
    info->set_target_language(c.target_lang);
    info->set_architecture(ArchitectureSummary(c));
    info->set_encoder_layers(c.encoder_layers);
    info->set_decoder_layers(c.decoder_layers);
    info->set_d_model(c.d_model);
    info->set_attention_heads(c.encoder_attention_heads);
    info->set_ffn_dim(c.encoder_ffn_dim);
    info->set_vocab_size(c.vocab_size);
    info->set_compute_type(served.model->compute_type());
    info->set_max_input_tokens(MaxInputTokens(*served.model, limits_));
    info->set_max_output_tokens(MaxOutputTokens(*served.model, limits_));
    info->set_path(served.model->dir());
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace mtserve
