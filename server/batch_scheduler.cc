#include "server/batch_scheduler.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "model/decode_memory.h"
#include "server/stop_reason.h"

namespace mtserve {
namespace {

// Texts share a batch only when everything that steers their decoding is equal.
std::string BatchKey(const TranslationTask& task) {
  const DecodingOptions& o = task.options;
  auto bits = [](float value) {
    uint32_t b;
    std::memcpy(&b, &value, sizeof(b));
    return b;
  };
  return absl::StrCat(
      task.model, "/", o.beam_size, "/", o.num_hypotheses, "/", bits(o.length_penalty), "/",
      o.sampling_topk, "/", bits(o.sampling_temperature), "/",
      o.seed.has_value() ? absl::StrCat(*o.seed) : "-", "/", o.max_length, "/", o.min_length);
}

// Texts joining a running decode together, unless the oldest has waited kJoinWait (measured on
// the embedded model at concurrency 32: +2-4 % throughput over joining one by one).
constexpr int kJoinTogether = 4;
constexpr absl::Duration kJoinWait = absl::Milliseconds(5);

int SourceLength(const TranslationTask& task) { return static_cast<int>(task.source_ids.size()); }

DecodeMemory MemoryOf(const std::vector<std::shared_ptr<const Model>>& models,
                      const TranslationTask& task) {
  return DecodeMemory(models[task.model]->config(), task.options);
}

// Why `task` must stop (its caller went away, or its deadline passed), or OK. Polls `cancelled`
// once.
absl::Status StopReason(const TranslationTask& task, absl::Time now, absl::string_view when) {
  const bool cancelled = task.cancelled && task.cancelled();
  // The clock is read again: `now` may be a step old, and a cancellation is judged by when it is
  // seen.
  return ::mtserve::StopReason(cancelled, task.deadline, cancelled ? absl::Now() : now, when);
}

}  // namespace

BatchScheduler::BatchScheduler(std::vector<std::shared_ptr<const Model>> models,
                               const BatchingOptions& options, Metrics* metrics)
    : models_(std::move(models)), options_(options), metrics_(metrics) {
  for (int w = 0; w < options_.workers; ++w) workers_.emplace_back([this] { WorkerLoop(); });
}

BatchScheduler::~BatchScheduler() { Stop(); }

void BatchScheduler::Stop() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    work_available_.SignalAll();
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

int BatchScheduler::queued_texts() const {
  absl::MutexLock lock(&mutex_);
  return queued_;
}

absl::Status BatchScheduler::Submit(std::vector<TranslationTask> tasks) {
  if (tasks.empty()) return absl::OkStatus();
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mutex_);
  if (stopping_) return absl::UnavailableError("the server is shutting down");
  const int count = static_cast<int>(tasks.size());
  if (queued_ + count > options_.max_queued_texts) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the translation queue is full (", queued_, " of ", options_.max_queued_texts,
                     " texts queued, --max_queued_texts); retry later"));
  }
  for (TranslationTask& task : tasks) {
    task.enqueued = now;
    if (metrics_ != nullptr) metrics_->QueuedTexts(task.model_name).Increment();
    queues_[BatchKey(task)].push_back(std::move(task));
  }
  queued_ += count;
  work_available_.SignalAll();
  return absl::OkStatus();
}

void BatchScheduler::RemoveDeadTasks(absl::Time now, std::vector<DroppedTask>& dropped) {
  for (auto it = queues_.begin(); it != queues_.end();) {
    // Compacts in place: the tasks that stay move only once one before them has left.
    Queue& queue = it->second;
    size_t kept = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      absl::Status status = StopReason(queue[i], now, "while queued");
      if (!status.ok()) {
        dropped.push_back({std::move(queue[i]), std::move(status)});
      } else if (kept++ != i) {
        queue[kept - 1] = std::move(queue[i]);
      }
    }
    queued_ -= static_cast<int>(queue.size() - kept);
    queue.erase(queue.begin() + kept, queue.end());
    it = queue.empty() ? queues_.erase(it) : std::next(it);
  }
}

bool BatchScheduler::Fits(const TranslationTask& any, int texts, int longest, int joining,
                          int joining_longest) const {
  if (static_cast<int64_t>(longest) * texts > options_.max_batch_tokens) return false;
  return options_.worker_memory_bytes <= 0 ||
         MemoryOf(models_, any).Admitting(texts, longest, joining, joining_longest) <=
             options_.worker_memory_bytes;
}

int BatchScheduler::BatchLimit() const {
  const int in_system = queued_ + running_;
  const int fair_share = (in_system + options_.workers - 1) / options_.workers;
  return std::clamp(fair_share, 1, options_.max_batch_size);
}

bool BatchScheduler::IsReady(const Queue& queue, absl::Time now) const {
  if (stopping_ || static_cast<int>(queue.size()) >= options_.max_batch_size) return true;
  // Under load (other batches running) a queue holding its fair share is as full as it gets.
  if (running_ > 0 && static_cast<int>(queue.size()) >= BatchLimit()) return true;
  if (now >= queue.front().enqueued + options_.max_queue_delay) return true;
  // A queue holding more than one decode can take is as full as a batch gets.
  int longest = 0;
  for (const TranslationTask& task : queue) longest = std::max(longest, SourceLength(task));
  const int texts = static_cast<int>(queue.size());
  return !Fits(queue.front(), texts, longest, texts, longest);
}

std::vector<TranslationTask> BatchScheduler::TakeBatch(Queue& queue) {
  // The oldest text first, then those closest to its length, oldest first among equals.
  const int head_length = SourceLength(queue.front());
  std::vector<size_t> order(queue.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin() + 1, order.end(), [&](size_t a, size_t b) {
    return std::abs(SourceLength(queue[a]) - head_length) <
           std::abs(SourceLength(queue[b]) - head_length);
  });
  std::vector<size_t> chosen;
  int longest = 0;
  const int limit = BatchLimit();
  for (size_t i : order) {
    if (static_cast<int>(chosen.size()) == limit) break;
    const int length = std::max(longest, SourceLength(queue[i]));
    const int texts = static_cast<int>(chosen.size()) + 1;
    // The first text always runs, even alone over the budgets (CheckDecodeMemory keeps texts
    // that could not fit a worker's memory alone out).
    if (!chosen.empty() && !Fits(queue[i], texts, length, texts, length)) continue;
    longest = length;
    chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<TranslationTask> batch;
  Queue rest;
  size_t next = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    if (next < chosen.size() && chosen[next] == i) {
      batch.push_back(std::move(queue[i]));
      ++next;
    } else {
      rest.push_back(std::move(queue[i]));
    }
  }
  queue.swap(rest);
  queued_ -= static_cast<int>(batch.size());
  running_ += static_cast<int>(batch.size());
  return batch;
}

std::vector<TranslationTask> BatchScheduler::NextBatch(std::vector<DroppedTask>& dropped) {
  absl::MutexLock lock(&mutex_);
  while (true) {
    const absl::Time now = absl::Now();
    RemoveDeadTasks(now, dropped);
    if (!dropped.empty()) return {};  // Answer those first, without holding the lock.
    if (queues_.empty()) {
      if (stopping_) return {};
      ++idle_workers_;
      work_available_.Wait(&mutex_);
      --idle_workers_;
      continue;
    }
    // The queue whose oldest text has waited longest goes first, if it is ready.
    auto oldest = queues_.end();
    for (auto it = queues_.begin(); it != queues_.end(); ++it) {
      if (IsReady(it->second, now) &&
          (oldest == queues_.end() ||
           it->second.front().enqueued < oldest->second.front().enqueued)) {
        oldest = it;
      }
    }
    if (oldest != queues_.end()) {
      std::vector<TranslationTask> batch = TakeBatch(oldest->second);
      if (oldest->second.empty()) queues_.erase(oldest);
      // Another worker may be able to start on what is left.
      if (!queues_.empty()) work_available_.Signal();
      return batch;
    }
    // Nothing ready: sleep until the first queue's delay ends, the earliest deadline, or news.
    absl::Time wake = absl::InfiniteFuture();
    for (const auto& [key, queue] : queues_) {
      wake = std::min(wake, queue.front().enqueued + options_.max_queue_delay);
      for (const TranslationTask& task : queue) wake = std::min(wake, task.deadline);
    }
    ++idle_workers_;
    work_available_.WaitWithDeadline(&mutex_, wake);
    --idle_workers_;
  }
}

std::vector<TranslationTask> BatchScheduler::TakeJoiners(const std::string& key, int decoding,
                                                         int longest, int finished,
                                                         std::vector<DroppedTask>& dropped) {
  absl::MutexLock lock(&mutex_);
  running_ -= finished;
  const absl::Time now = absl::Now();
  RemoveDeadTasks(now, dropped);
  auto it = queues_.find(key);
  if (it == queues_.end()) return {};
  // Texts of other options that are ready and have no idle worker to start them wait for this
  // decode to end: it stops growing.
  if (idle_workers_ == 0) {
    for (const auto& [other_key, queue] : queues_) {
      if (other_key != key && IsReady(queue, now)) return {};
    }
  }
  Queue& queue = it->second;
  const int room = BatchLimit() - decoding;
  // Each join runs the encoder once, at a cost nearly independent of how many texts it holds:
  // a decode still at least half full lets a few texts gather to join together, for a step or
  // two at most.
  const int at_least = decoding * 2 >= BatchLimit() && now < queue.front().enqueued + kJoinWait
                           ? std::min(room, kJoinTogether)
                           : 1;
  if (room <= 0 || static_cast<int>(queue.size()) < at_least) return {};
  std::vector<TranslationTask> joiners;
  int joiners_longest = 0;
  size_t kept = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int length = std::max(longest, SourceLength(queue[i]));
    const int joining = static_cast<int>(joiners.size()) + 1;
    const int joining_longest = std::max(joiners_longest, SourceLength(queue[i]));
    if (static_cast<int>(joiners.size()) < room &&
        Fits(queue[i], decoding + joining, length, joining, joining_longest)) {
      longest = length;
      joiners_longest = joining_longest;
      joiners.push_back(std::move(queue[i]));
    } else if (kept++ != i) {
      queue[kept - 1] = std::move(queue[i]);
    }
  }
  queue.erase(queue.begin() + kept, queue.end());
  if (queue.empty()) queues_.erase(it);
  queued_ -= static_cast<int>(joiners.size());
  running_ += static_cast<int>(joiners.size());
  return joiners;
}

void BatchScheduler::AnswerDropped(std::vector<DroppedTask>& dropped) {
  for (auto& [task, status] : dropped) {
    if (metrics_ != nullptr) metrics_->QueuedTexts(task.model_name).Decrement();
    task.done(std::move(status));
  }
  dropped.clear();
}

void BatchScheduler::WorkerLoop() {
  // One Translator per model, made on first use: each owns this thread's compute context.
  std::vector<std::unique_ptr<Translator>> translators(models_.size());
  std::vector<DroppedTask> dropped;
  while (true) {
    std::vector<TranslationTask> batch = NextBatch(dropped);
    const bool answered = !dropped.empty();
    AnswerDropped(dropped);
    if (batch.empty()) {
      if (answered) continue;
      return;  // Stopped and drained.
    }
    std::unique_ptr<Translator>& translator = translators[batch.front().model];
    if (translator == nullptr) {
      translator =
          std::make_unique<Translator>(models_[batch.front().model], options_.threads_per_worker);
    }
    RunDecode(*translator, std::move(batch));
  }
}

void BatchScheduler::RunDecode(Translator& translator, std::vector<TranslationTask> batch) {
  const std::string key = BatchKey(batch.front());
  const std::string model_name = batch.front().model_name;
  const int eos_id = translator.model().config().eos_token_id;
  const Tokenizer& tokenizer = translator.model().tokenizer();

  // The texts being decoded, by the Translator's input id, and why each had to stop.
  std::vector<std::optional<TranslationTask>> decoding;
  std::vector<absl::Status> stop_reasons;
  int decoding_count = 0;
  absl::Time now = absl::Now();  // Read once per step.
  auto stopped = [&](int id) {
    stop_reasons[id] = StopReason(*decoding[id], now, "during translation");
    return !stop_reasons[id].ok();
  };
  // `stopped` refers to this frame, and so does the session, which ends with it.
  absl::StatusOr<std::unique_ptr<DecodeSession>> session =
      translator.StartDecoding(batch.front().options, stopped);
  auto longest_source = [&] {
    int longest = 0;
    for (const auto& task : decoding) {
      if (task.has_value()) longest = std::max(longest, SourceLength(*task));
    }
    return longest;
  };

  // Adds `tasks` to the decode, or answers them with why they cannot be.
  auto admit = [&](std::vector<TranslationTask>& tasks) {
    const absl::Time start = absl::Now();
    std::vector<std::vector<int>> sources;
    for (TranslationTask& task : tasks) {
      if (metrics_ != nullptr) {
        metrics_->QueuedTexts(model_name).Decrement();
        metrics_->RecordQueueWait(model_name, absl::ToDoubleSeconds(start - task.enqueued));
      }
      sources.push_back(task.source_ids);
    }
    absl::StatusOr<std::vector<int>> ids =
        session.ok() ? (*session)->AddInputs(sources) : session.status();
    // The engine refuses a group for the first input it cannot take: added one by one, only the
    // texts at fault fail (the others may be other callers').
    std::vector<absl::StatusOr<int>> added;
    if (ids.ok()) {
      added.assign(ids->begin(), ids->end());
    } else {
      for (size_t i = 0; i < tasks.size(); ++i) {
        absl::StatusOr<std::vector<int>> id =
            session.ok() && tasks.size() > 1 ? (*session)->AddInputs({sources[i]}) : ids.status();
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
      running_ -= refused;
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
    now = absl::Now();
    finished.clear();
    (*session)->Step(finished);
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
      for (Hypothesis& h : f.hypotheses) h.text = tokenizer.DecodeTarget(h.ids);
      input_tokens += result.source_tokens;
      generated_tokens += TargetTokens(f.hypotheses.front(), eos_id);
      result.hypotheses = std::move(f.hypotheses);
      task.done(std::move(result));
    }
    if (metrics_ != nullptr && input_tokens > 0) {
      metrics_->AddTokens(model_name, input_tokens, generated_tokens);
    }

    std::vector<TranslationTask> joiners = TakeJoiners(key, decoding_count, longest_source(),
                                                       static_cast<int>(finished.size()), dropped);
    AnswerDropped(dropped);
    if (!joiners.empty()) admit(joiners);
  }
}

}  // namespace mtserve
