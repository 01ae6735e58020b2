#include "serving/batching_policy.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
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
                      o.min_length, "/", o.return_alignment, "/", bits(o.max_length_factor), "/",
                      o.max_length_offset, "/", o.shortlist);
}

QueuedRequest RequestOf(std::vector<TranslationTask> tasks, std::string group) {
  QueuedRequest request;
  request.group = std::move(group);
  request.texts = static_cast<int>(tasks.size());
  if (!tasks.empty()) request.model_name = tasks.front().model_name;
  auto held = std::make_shared<std::vector<TranslationTask>>(std::move(tasks));
  request.make = [held](int i) { return std::move((*held)[i]); };
  return request;
}

absl::Time BatchingPolicy::Queue::oldest() const {
  absl::Time oldest = absl::InfiniteFuture();
  for (const auto& [id, texts] : requests) oldest = std::min(oldest, texts.front().enqueued);
  return oldest;
}

int BatchingPolicy::Queue::longest() const {
  int longest = 0;
  for (const auto& [id, texts] : requests) {
    for (const TranslationTask& task : texts) longest = std::max(longest, SourceLength(task));
  }
  return longest;
}

BatchingPolicy::BatchingPolicy(const BatchingOptions& options,
                               std::vector<ModelConfig> model_configs)
    : options_(options), model_configs_(std::move(model_configs)) {}

absl::Status BatchingPolicy::Submit(QueuedRequest& request, absl::Time now) {
  if (draining_) return absl::UnavailableError("the server is shutting down");
  if (request.texts <= 0) return absl::OkStatus();
  const uint64_t id = next_request_++;
  waiting_ += request.texts;
  backlog_turns_.Add(id, request.group);
  backlogs_[id] = {std::move(request), 0, now};
  Admit();
  return absl::OkStatus();
}

void BatchingPolicy::Admit() {
  while (queued_ < options_.max_queued_texts) {
    const std::optional<uint64_t> id = backlog_turns_.Next();
    if (!id.has_value()) return;
    Backlog& backlog = backlogs_.at(*id);
    TranslationTask task = backlog.request.make(backlog.next++);
    task.enqueued = backlog.enqueued;
    Queue& queue = queues_[BatchKey(task)];
    if (!queue.turns.Has(*id)) queue.turns.Add(*id, backlog.request.group);
    queue.requests[*id].push_back(std::move(task));
    ++queue.size;
    ++queued_;
    --waiting_;
    backlog_turns_.Served(*id);
    if (backlog.next == backlog.request.texts) {
      backlog_turns_.Remove(*id);
      backlogs_.erase(*id);
    }
  }
}

void BatchingPolicy::RemoveDeadTasks(absl::Time now, std::vector<DroppedTask>& dropped) {
  for (auto it = backlogs_.begin(); it != backlogs_.end();) {
    QueuedRequest& request = it->second.request;
    const bool cancelled = request.cancelled && request.cancelled();
    absl::Status status = StopReason(cancelled, request.deadline, now, "while queued");
    if (status.ok()) {
      ++it;
      continue;
    }
    for (int& i = it->second.next; i < request.texts; ++i) {
      dropped.push_back({request.make(i), status});
      --waiting_;
    }
    backlog_turns_.Remove(it->first);
    it = backlogs_.erase(it);
  }
  for (auto it = queues_.begin(); it != queues_.end();) {
    Queue& queue = it->second;
    for (auto r = queue.requests.begin(); r != queue.requests.end();) {
      // Compacts in place: the tasks that stay move only once one before them has left.
      std::deque<TranslationTask>& texts = r->second;
      size_t kept = 0;
      for (size_t i = 0; i < texts.size(); ++i) {
        const bool cancelled = texts[i].cancelled && texts[i].cancelled();
        absl::Status status = StopReason(cancelled, texts[i].deadline, now, "while queued");
        if (!status.ok()) {
          dropped.push_back({std::move(texts[i]), std::move(status)});
        } else if (kept++ != i) {
          texts[kept - 1] = std::move(texts[i]);
        }
      }
      const int removed = static_cast<int>(texts.size() - kept);
      queued_ -= removed;
      queue.size -= removed;
      texts.erase(texts.begin() + kept, texts.end());
      if (texts.empty()) {
        queue.turns.Remove(r->first);
        r = queue.requests.erase(r);
      } else {
        ++r;
      }
    }
    it = queue.requests.empty() ? queues_.erase(it) : std::next(it);
  }
  Admit();
}

bool BatchingPolicy::Fits(const TranslationTask& any, int texts, int longest, int joining,
                          int joining_longest, int64_t terms) const {
  if (static_cast<int64_t>(longest) * texts > options_.max_batch_tokens) return false;
  return options_.worker_memory_bytes <= 0 ||
         DecodeMemory(model_configs_[any.model], any.options)
                 .Admitting(texts, longest, joining, joining_longest, terms) <=
             options_.worker_memory_bytes;
}

int64_t BatchingPolicy::TermBytes(const TranslationTask& task) const {
  if (task.constraints == nullptr) return 0;
  return DecodeMemory(model_configs_[task.model], task.options).Terms(task.constraints.get());
}

int BatchingPolicy::BatchLimit() const {
  const int in_system = queued_ + running_;
  const int fair_share = (in_system + options_.workers - 1) / options_.workers;
  return std::clamp(fair_share, 1, options_.max_batch_size);
}

bool BatchingPolicy::IsReady(const Queue& queue, absl::Time now) const {
  // With nothing decoding no text can join a decode: waiting would only add latency.
  if (draining_ || running_ == 0 || queue.size >= options_.max_batch_size) return true;
  // Under load (other batches running) a queue holding its fair share is as full as it gets.
  if (queue.size >= BatchLimit()) return true;
  if (now >= queue.oldest() + options_.max_queue_delay) return true;
  // A queue holding more than one decode can take is as full as a batch gets.
  const int longest = queue.longest();
  const TranslationTask& any = queue.requests.begin()->second.front();
  // (Not counting the texts' constraints: admission does.)
  return !Fits(any, queue.size, longest, queue.size, longest, 0);
}

std::vector<TranslationTask> BatchingPolicy::TakeInTurn(
    Queue& queue, int limit, const std::function<bool(const TranslationTask&)>& fits) {
  std::vector<TranslationTask> taken;
  std::vector<uint64_t> passed;  // Requests whose next text does not fit.
  auto eligible = [&](uint64_t id) {
    return std::find(passed.begin(), passed.end(), id) == passed.end();
  };
  while (static_cast<int>(taken.size()) < limit) {
    const std::optional<uint64_t> id = queue.turns.Next(eligible);
    if (!id.has_value()) break;
    auto request = queue.requests.find(*id);
    std::deque<TranslationTask>& texts = request->second;
    // Its first text that fits, looking a decode's worth ahead at most.
    const size_t ahead = std::min(texts.size(), static_cast<size_t>(options_.max_batch_size));
    size_t i = 0;
    while (i < ahead && !fits(texts[i])) ++i;
    if (i == ahead) {
      passed.push_back(*id);
      continue;
    }
    taken.push_back(std::move(texts[i]));
    taken.back().term_bytes = TermBytes(taken.back());
    texts.erase(texts.begin() + i);
    --queue.size;
    queue.turns.Served(*id);
    if (texts.empty()) {
      queue.turns.Remove(*id);
      queue.requests.erase(request);
    }
  }
  queued_ -= static_cast<int>(taken.size());
  running_ += static_cast<int>(taken.size());
  return taken;
}

std::vector<TranslationTask> BatchingPolicy::TakeBatch(absl::Time now) {
  Admit();
  // The queue whose oldest text has waited longest goes first, if it is ready.
  auto oldest = queues_.end();
  absl::Time oldest_time = absl::InfiniteFuture();
  for (auto it = queues_.begin(); it != queues_.end(); ++it) {
    const absl::Time time = it->second.oldest();
    if (IsReady(it->second, now) && (oldest == queues_.end() || time < oldest_time)) {
      oldest = it;
      oldest_time = time;
    }
  }
  if (oldest == queues_.end()) return {};
  int texts = 0;
  int longest = 0;
  int64_t terms = 0;
  // The first text always runs, even alone over the budgets (CheckDecodeMemory keeps texts
  // that could not fit a worker's memory alone out).
  std::vector<TranslationTask> batch =
      TakeInTurn(oldest->second, BatchLimit(), [&](const TranslationTask& task) {
        const int length = std::max(longest, SourceLength(task));
        const int64_t with = terms + TermBytes(task);
        if (texts > 0 && !Fits(task, texts + 1, length, texts + 1, length, with)) return false;
        ++texts;
        longest = length;
        terms = with;
        return true;
      });
  if (oldest->second.requests.empty()) queues_.erase(oldest);
  Admit();
  return batch;
}

absl::Time BatchingPolicy::NextWake() const {
  absl::Time wake = absl::InfiniteFuture();
  for (const auto& [key, queue] : queues_) {
    wake = std::min(wake, queue.oldest() + options_.max_queue_delay);
    for (const auto& [id, texts] : queue.requests) {
      for (const TranslationTask& task : texts) wake = std::min(wake, task.deadline);
    }
  }
  for (const auto& [id, backlog] : backlogs_) wake = std::min(wake, backlog.request.deadline);
  return wake;
}

std::vector<TranslationTask> BatchingPolicy::TakeJoiners(const std::string& key, int decoding,
                                                         int longest, absl::Time now,
                                                         int64_t terms) {
  Admit();
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
  const int at_least = decoding * 2 >= BatchLimit() && now < queue.oldest() + kJoinWait
                           ? std::min(room, kJoinTogether)
                           : 1;
  if (room <= 0 || queue.size < at_least) return {};
  int joining = 0;
  int joining_longest = 0;
  std::vector<TranslationTask> joiners = TakeInTurn(queue, room, [&](const TranslationTask& task) {
    const int length = std::max(longest, SourceLength(task));
    const int with = std::max(joining_longest, SourceLength(task));
    const int64_t with_terms = terms + TermBytes(task);
    if (!Fits(task, decoding + joining + 1, length, joining + 1, with, with_terms)) return false;
    terms = with_terms;
    ++joining;
    longest = length;
    joining_longest = with;
    return true;
  });
  if (queue.requests.empty()) queues_.erase(it);
  Admit();
  return joiners;
}

}  // namespace mtserve
