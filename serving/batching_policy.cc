#include "serving/batching_policy.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/decode_memory.h"
#include "serving/stop_reason.h"

namespace mtserve {
namespace {

int SourceLength(const TranslationTask& task) { return static_cast<int>(task.source_ids.size()); }

}  // namespace

std::string BatchKey(const TranslationTask& task) {
  const DecodingOptions& o = task.options;
  auto bits = [](float value) {
    uint32_t b;
    std::memcpy(&b, &value, sizeof(b));
    return b;
  };
  return absl::StrCat(task.model, "/", o.beam_size, "/", o.num_hypotheses, "/",
                      bits(o.length_penalty), "/", o.sampling_topk, "/",
                      bits(o.sampling_temperature), "/",
                      o.seed.has_value() ? absl::StrCat(*o.seed) : "-", "/", o.max_length, "/",
                      o.min_length, "/", o.return_alignment);
}

BatchingPolicy::BatchingPolicy(const BatchingOptions& options,
                               std::vector<ModelConfig> model_configs)
    : options_(options), model_configs_(std::move(model_configs)) {}

absl::Status BatchingPolicy::Submit(std::vector<TranslationTask>& tasks, absl::Time now) {
  if (draining_) return absl::UnavailableError("the server is shutting down");
  const int count = static_cast<int>(tasks.size());
  if (queued_ + count > options_.max_queued_texts) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the translation queue is full (", queued_, " of ", options_.max_queued_texts,
                     " texts queued, --max_queued_texts); retry later"));
  }
  for (TranslationTask& task : tasks) {
    task.enqueued = now;
    queues_[BatchKey(task)].push_back(std::move(task));
  }
  queued_ += count;
  return absl::OkStatus();
}

void BatchingPolicy::RemoveDeadTasks(absl::Time now, std::vector<DroppedTask>& dropped) {
  for (auto it = queues_.begin(); it != queues_.end();) {
    // Compacts in place: the tasks that stay move only once one before them has left.
    Queue& queue = it->second;
    size_t kept = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      const bool cancelled = queue[i].cancelled && queue[i].cancelled();
      absl::Status status = StopReason(cancelled, queue[i].deadline, now, "while queued");
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

bool BatchingPolicy::Fits(const TranslationTask& any, int texts, int longest, int joining,
                          int joining_longest) const {
  if (static_cast<int64_t>(longest) * texts > options_.max_batch_tokens) return false;
  return options_.worker_memory_bytes <= 0 ||
         DecodeMemory(model_configs_[any.model], any.options)
                 .Admitting(texts, longest, joining, joining_longest) <=
             options_.worker_memory_bytes;
}

int BatchingPolicy::BatchLimit() const {
  const int in_system = queued_ + running_;
  const int fair_share = (in_system + options_.workers - 1) / options_.workers;
  return std::clamp(fair_share, 1, options_.max_batch_size);
}

bool BatchingPolicy::IsReady(const Queue& queue, absl::Time now) const {
  if (draining_ || static_cast<int>(queue.size()) >= options_.max_batch_size) return true;
  // Under load (other batches running) a queue holding its fair share is as full as it gets.
  if (running_ > 0 && static_cast<int>(queue.size()) >= BatchLimit()) return true;
  if (now >= queue.front().enqueued + options_.max_queue_delay) return true;
  // A queue holding more than one decode can take is as full as a batch gets.
  int longest = 0;
  for (const TranslationTask& task : queue) longest = std::max(longest, SourceLength(task));
  const int texts = static_cast<int>(queue.size());
  return !Fits(queue.front(), texts, longest, texts, longest);
}

std::vector<TranslationTask> BatchingPolicy::TakeFrom(Queue& queue) {
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

std::vector<TranslationTask> BatchingPolicy::TakeBatch(absl::Time now) {
  // The queue whose oldest text has waited longest goes first, if it is ready.
  auto oldest = queues_.end();
  for (auto it = queues_.begin(); it != queues_.end(); ++it) {
    if (IsReady(it->second, now) &&
        (oldest == queues_.end() ||
         it->second.front().enqueued < oldest->second.front().enqueued)) {
      oldest = it;
    }
  }
  if (oldest == queues_.end()) return {};
  std::vector<TranslationTask> batch = TakeFrom(oldest->second);
  if (oldest->second.empty()) queues_.erase(oldest);
  return batch;
}

absl::Time BatchingPolicy::NextWake() const {
  absl::Time wake = absl::InfiniteFuture();
  for (const auto& [key, queue] : queues_) {
    wake = std::min(wake, queue.front().enqueued + options_.max_queue_delay);
    for (const TranslationTask& task : queue) wake = std::min(wake, task.deadline);
  }
  return wake;
}

std::vector<TranslationTask> BatchingPolicy::TakeJoiners(const std::string& key, int decoding,
                                                         int longest, absl::Time now) {
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

}  // namespace mtserve
