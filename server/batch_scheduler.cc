#include "server/batch_scheduler.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

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

int SourceLength(const TranslationTask& task) { return static_cast<int>(task.source_ids.size()); }

// Why `task` must stop (its caller went away, or its deadline passed), or OK. Polls `cancelled`
// once.
absl::Status StopReason(const TranslationTask& task, absl::Time now, absl::string_view when) {
  const bool cancelled = task.cancelled && task.cancelled();
  // A client whose deadline passes cancels the call, and that cancellation can arrive before the
  // server's own copy of the deadline passes: the server's starts when the request arrives, so it
  // ends later by the request's transit time (longer on a loaded machine). A cancellation close to
  // the deadline is therefore the deadline's, not the caller's choice.
  constexpr absl::Duration kDeadlineTransitSlack = absl::Milliseconds(500);
  if (now >= task.deadline ||
      (cancelled && absl::Now() >= task.deadline - kDeadlineTransitSlack)) {
    return absl::DeadlineExceededError(absl::StrCat("the deadline passed ", when));
  }
  if (cancelled) return absl::CancelledError(absl::StrCat("the request was cancelled ", when));
  return absl::OkStatus();
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
  int longest = 0;
  for (const TranslationTask& task : queue) longest = std::max(longest, SourceLength(task));
  return static_cast<int64_t>(longest) * static_cast<int64_t>(queue.size()) >=
         options_.max_batch_tokens;
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
    // The first text always runs, even alone over the token budget.
    if (!chosen.empty() && static_cast<int64_t>(length) * static_cast<int64_t>(chosen.size() + 1) >
                               options_.max_batch_tokens) {
      continue;
    }
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
      work_available_.Wait(&mutex_);
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
    work_available_.WaitWithDeadline(&mutex_, wake);
  }
}

void BatchScheduler::WorkerLoop() {
  // One Translator per model, made on first use: each owns this thread's compute context.
  std::vector<std::unique_ptr<Translator>> translators(models_.size());
  std::vector<DroppedTask> dropped;
  while (true) {
    dropped.clear();
    std::vector<TranslationTask> batch = NextBatch(dropped);
    for (auto& [task, status] : dropped) {
      if (metrics_ != nullptr) metrics_->QueuedTexts(task.model_name).Decrement();
      task.done(std::move(status));
    }
    if (batch.empty()) {
      if (!dropped.empty()) continue;
      return;  // Stopped and drained.
    }
    std::unique_ptr<Translator>& translator = translators[batch.front().model];
    if (translator == nullptr) {
      translator =
          std::make_unique<Translator>(models_[batch.front().model], options_.threads_per_worker);
    }
    RunBatch(*translator, batch);
    absl::MutexLock lock(&mutex_);
    running_ -= static_cast<int>(batch.size());
  }
}

void BatchScheduler::RunBatch(Translator& translator, std::vector<TranslationTask>& batch) {
  const std::string& model_name = batch.front().model_name;
  const absl::Time start = absl::Now();
  std::vector<std::vector<int>> sources;
  int longest = 0;
  for (TranslationTask& task : batch) {
    if (metrics_ != nullptr) {
      metrics_->QueuedTexts(model_name).Decrement();
      metrics_->RecordQueueWait(model_name, absl::ToDoubleSeconds(start - task.enqueued));
    }
    longest = std::max(longest, SourceLength(task));
    sources.push_back(std::move(task.source_ids));
  }
  const int batch_size = static_cast<int>(batch.size());
  if (metrics_ != nullptr) metrics_->RecordBatch(model_name, batch_size, batch_size * longest);

  // Polled once per decoding step for each text still decoding. The clock is read about once
  // per step.
  int64_t polls = 0;
  absl::Time now = start;
  std::vector<absl::Status> stop_reasons(batch.size());
  auto stopped = [&](int i) {
    if (polls++ % batch_size == 0) now = absl::Now();
    stop_reasons[i] = StopReason(batch[i], now, "during translation");
    return !stop_reasons[i].ok();
  };
  absl::StatusOr<std::vector<std::vector<Hypothesis>>> results =
      translator.TranslateIds(sources, batch.front().options, stopped);

  const Tokenizer& tokenizer = translator.model().tokenizer();
  int input_tokens = 0;
  int generated_tokens = 0;
  for (int i = 0; i < batch_size; ++i) {
    TranslationTask& task = batch[i];
    if (!results.ok()) {
      task.done(results.status());
      continue;
    }
    std::vector<Hypothesis>& hypotheses = (*results)[i];
    if (hypotheses.empty()) {  // Left the batch: see `stopped`.
      task.done(std::move(stop_reasons[i]));
      continue;
    }
    TranslationResult result;
    result.source_tokens = static_cast<int>(sources[i].size());
    for (Hypothesis& h : hypotheses) h.text = tokenizer.DecodeTarget(h.ids);
    input_tokens += result.source_tokens;
    generated_tokens += TargetTokens(hypotheses.front(), translator.model().config().eos_token_id);
    result.hypotheses = std::move(hypotheses);
    task.done(std::move(result));
  }
  if (metrics_ != nullptr) metrics_->AddTokens(model_name, input_tokens, generated_tokens);
}

}  // namespace mtserve
