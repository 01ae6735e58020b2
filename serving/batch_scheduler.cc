#include "serving/batch_scheduler.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "serving/stop_reason.h"
#include "serving/translator_engine.h"

namespace mtserve {
namespace {

int SourceLength(const TranslationTask& task) { return static_cast<int>(task.source_ids.size()); }

std::vector<ModelConfig> ConfigsOf(const std::vector<std::shared_ptr<const Model>>& models) {
  std::vector<ModelConfig> configs;
  for (const auto& model : models) configs.push_back(model->config());
  return configs;
}

}  // namespace

BatchScheduler::BatchScheduler(std::vector<std::shared_ptr<const Model>> models,
                               const BatchingOptions& options, Metrics* metrics)
    : BatchScheduler(ConfigsOf(models), options, metrics,
                     [models, threads = options.threads_per_worker] {
                       return std::make_unique<TranslatorEngine>(
                           [models](int model) { return models[model]; }, threads);
                     }) {}

BatchScheduler::BatchScheduler(std::vector<ModelConfig> model_configs,
                               const BatchingOptions& options, Metrics* metrics,
                               DecodeEngineFactory engines, std::function<absl::Time()> clock)
    : options_(options),
      metrics_(metrics),
      engines_(std::move(engines)),
      clock_(std::move(clock)),
      policy_(options, std::move(model_configs)) {
  for (int w = 0; w < options_.workers; ++w) workers_.emplace_back([this] { WorkerLoop(); });
}

BatchScheduler::~BatchScheduler() { Stop(); }

void BatchScheduler::Stop() {
  {
    absl::MutexLock lock(&mutex_);
    policy_.StartDraining();
    work_available_.SignalAll();
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

int BatchScheduler::queued_texts() const {
  absl::MutexLock lock(&mutex_);
  return policy_.queued();
}

int BatchScheduler::pending_texts() const {
  absl::MutexLock lock(&mutex_);
  return policy_.queued() + policy_.waiting();
}

absl::Status BatchScheduler::Submit(std::vector<TranslationTask> tasks) {
  return Submit(RequestOf(std::move(tasks)));
}

absl::Status BatchScheduler::Submit(QueuedRequest request) {
  if (request.texts <= 0) return absl::OkStatus();
  const std::string model_name = request.model_name;
  const int texts = request.texts;
  const absl::Time now = clock_();
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = policy_.Submit(request, now); !status.ok()) return status;
  if (metrics_ != nullptr) metrics_->QueuedTexts(model_name).Increment(texts);
  // One idle worker: the one that starts a decode wakes the next if texts are left.
  work_available_.Signal();
  return absl::OkStatus();
}

std::vector<TranslationTask> BatchScheduler::NextBatch(std::vector<DroppedTask>& dropped,
                                                       size_t& forgotten_seen,
                                                       std::vector<int>& forget) {
  absl::MutexLock lock(&mutex_);
  while (true) {
    if (forgotten_seen < forgotten_.size()) {  // Dropped between decodes, before anything else.
      forget.assign(forgotten_.begin() + forgotten_seen, forgotten_.end());
      forgotten_seen = forgotten_.size();
      return {};
    }
    const absl::Time now = clock_();
    policy_.RemoveDeadTasks(now, dropped);
    if (!dropped.empty()) return {};  // Answer those first, without holding the lock.
    if (!policy_.has_queued()) {
      if (policy_.draining()) return {};
      policy_.WorkerIdle();
      work_available_.Wait(&mutex_);
      policy_.WorkerBusy();
      continue;
    }
    std::vector<TranslationTask> batch = policy_.TakeBatch(now);
    if (!batch.empty()) {
      // Another worker may be able to start on what is left.
      if (policy_.has_queued()) work_available_.Signal();
      return batch;
    }
    // Nothing ready: sleep until the first queue's delay ends, the earliest deadline, or news.
    const absl::Time wake = policy_.NextWake();
    policy_.WorkerIdle();
    if (wake == absl::InfiniteFuture()) {
      work_available_.Wait(&mutex_);
    } else {
      // The wake-up time is on `clock_`, which need not be the system's.
      work_available_.WaitWithTimeout(&mutex_, wake - now);
    }
    policy_.WorkerBusy();
  }
}

std::vector<TranslationTask> BatchScheduler::TakeJoiners(const std::string& key, int decoding,
                                                         int longest, int64_t terms, int finished,
                                                         std::vector<DroppedTask>& dropped) {
  absl::MutexLock lock(&mutex_);
  policy_.Finished(finished);
  const absl::Time now = clock_();
  policy_.RemoveDeadTasks(now, dropped);
  return policy_.TakeJoiners(key, decoding, longest, now, terms);
}

void BatchScheduler::AnswerDropped(std::vector<DroppedTask>& dropped) {
  for (auto& [task, status] : dropped) {
    if (metrics_ != nullptr) metrics_->QueuedTexts(task.model_name).Decrement();
    task.done(std::move(status));
  }
  dropped.clear();
}

void BatchScheduler::AddModel(const ModelConfig& config) {
  absl::MutexLock lock(&mutex_);
  policy_.AddModel(config);
}

void BatchScheduler::ForgetModel(int model) {
  absl::MutexLock lock(&mutex_);
  forgotten_.push_back(model);
  work_available_.SignalAll();
}

void BatchScheduler::WorkerLoop() {
  // Made on this thread: a Translator owns its thread's compute context.
  const std::unique_ptr<DecodeEngine> engine = engines_();
  std::vector<DroppedTask> dropped;
  size_t forgotten_seen = 0;
  std::vector<int> forget;
  while (true) {
    std::vector<TranslationTask> batch = NextBatch(dropped, forgotten_seen, forget);
    const bool answered = !dropped.empty() || !forget.empty();
    for (const int model : forget) engine->Forget(model);
    forget.clear();
    AnswerDropped(dropped);
    if (batch.empty()) {
      if (answered) continue;
      return;  // Stopped and drained.
    }
    RunDecode(*engine, std::move(batch));
  }
}

void BatchScheduler::RunDecode(DecodeEngine& engine, std::vector<TranslationTask> batch) {
  const std::string key = BatchKey(batch.front());
  const std::string model_name = batch.front().model_name;

  // The texts being decoded, by the engine's input id, and why each had to stop.
  std::vector<std::optional<TranslationTask>> decoding;
  std::vector<absl::Status> stop_reasons;
  int decoding_count = 0;
  absl::Time now = clock_();  // Read once per step.
  auto stopped = [&](int id) {
    const TranslationTask& task = *decoding[id];
    const bool cancelled = task.cancelled && task.cancelled();
    // The clock is read again: `now` may be a step old, and a cancellation is judged by when it
    // is seen.
    stop_reasons[id] =
        StopReason(cancelled, task.deadline, cancelled ? clock_() : now, "during translation");
    return !stop_reasons[id].ok();
  };
  // `stopped` refers to this frame, and so does the decode, which ends with it.
  absl::StatusOr<std::unique_ptr<EngineDecode>> decode =
      engine.Start(batch.front().model, batch.front().options, stopped);
  auto longest_source = [&] {
    int longest = 0;
    for (const auto& task : decoding) {
      if (task.has_value()) longest = std::max(longest, SourceLength(*task));
    }
    return longest;
  };
  auto term_bytes = [&] {
    int64_t terms = 0;
    for (const auto& task : decoding) {
      if (task.has_value()) terms += task->term_bytes;
    }
    return terms;
  };

  // Adds `tasks` to the decode, or answers them with why they cannot be.
  auto admit = [&](std::vector<TranslationTask>& tasks) {
    const absl::Time start = clock_();
    std::vector<std::vector<int>> sources;
    std::vector<std::shared_ptr<const TermConstraints>> constraints;
    bool constrained = false;
    for (TranslationTask& task : tasks) {
      if (metrics_ != nullptr) {
        metrics_->QueuedTexts(model_name).Decrement();
        metrics_->RecordQueueWait(model_name, absl::ToDoubleSeconds(start - task.enqueued));
      }
      sources.push_back(task.source_ids);
      constraints.push_back(task.constraints);
      constrained |= task.constraints != nullptr;
    }
    if (!constrained) constraints.clear();
    absl::StatusOr<std::vector<int>> ids =
        decode.ok() ? (*decode)->AddInputs(sources, constraints) : decode.status();
    // The engine refuses a group for the first input it cannot take: added one by one, only the
    // texts at fault fail (the others may be other callers').
    std::vector<absl::StatusOr<int>> added;
    if (ids.ok()) {
      added.assign(ids->begin(), ids->end());
    } else {
      for (size_t i = 0; i < tasks.size(); ++i) {
        std::vector<std::shared_ptr<const TermConstraints>> one;
        if (constrained) one.push_back(constraints[i]);
        absl::StatusOr<std::vector<int>> id = decode.ok() && tasks.size() > 1
                                                  ? (*decode)->AddInputs({sources[i]}, one)
                                                  : ids.status();
        added.push_back(id.ok() ? absl::StatusOr<int>(id->front()) : id.status());
      }
    }
    int refused = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (!added[i].ok()) {
        tasks[i].done(added[i].status());
        ++refused;
        continue;
      }
      const int id = *added[i];
      if (static_cast<size_t>(id) >= decoding.size()) {
        decoding.resize(id + 1);
        stop_reasons.resize(id + 1);
      }
      decoding[id] = std::move(tasks[i]);
      ++decoding_count;
    }
    if (refused > 0) {
      absl::MutexLock lock(&mutex_);
      policy_.Finished(refused);
    }
    if (refused == static_cast<int>(tasks.size())) return;
    if (metrics_ != nullptr) {
      metrics_->RecordBatch(model_name, decoding_count, decoding_count * longest_source());
    }
  };
  admit(batch);

  std::vector<FinishedSentence> finished;
  std::vector<DroppedTask> dropped;
  while (decoding_count > 0) {
    now = clock_();
    finished.clear();
    (*decode)->Step(finished);
    int input_tokens = 0;
    int generated_tokens = 0;
    for (FinishedSentence& f : finished) {
      TranslationTask task = std::move(*decoding[f.sentence]);
      decoding[f.sentence].reset();
      --decoding_count;
      if (f.hypotheses.empty()) {  // Left the decode: see `stopped`.
        task.done(std::move(stop_reasons[f.sentence]));
        continue;
      }
      TranslationResult result;
      result.source_tokens = SourceLength(task);
      input_tokens += result.source_tokens;
      generated_tokens += (*decode)->TargetTokens(f.hypotheses.front());
      result.hypotheses = std::move(f.hypotheses);
      task.done(std::move(result));
    }
    if (metrics_ != nullptr && input_tokens > 0) {
      metrics_->AddTokens(model_name, input_tokens, generated_tokens);
    }

    std::vector<TranslationTask> joiners =
        TakeJoiners(key, decoding_count, longest_source(), term_bytes(),
                    static_cast<int>(finished.size()), dropped);
    AnswerDropped(dropped);
    if (!joiners.empty()) admit(joiners);
  }
}

}  // namespace mtserve
