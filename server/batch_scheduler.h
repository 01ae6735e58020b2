// Dynamic batching: texts from concurrent requests wait in one bounded queue and worker threads
// decode them together, continuously: new texts join a worker's running decode between steps and
// each text leaves it as soon as it is finished.
//
// The whole contract:
// - Submit() admits all of a request's texts or none: when the queue cannot take them it returns
//   RESOURCE_EXHAUSTED at once and nothing is queued.
// - Only texts with the same model and decoding options are decoded together. An idle worker
//   starts a decode with the oldest queued text and those of the closest source lengths, when they
//   fill a batch or when the oldest has waited max_queue_delay. While it decodes, queued texts of
//   the same options join it between steps, oldest first, without waiting.
// - A decode holds at most max_batch_size texts and max_batch_tokens (texts x longest source), and
//   no more than a fair share of the texts queued or decoding (their count / workers): concurrent
//   load is spread over all workers instead of one worker taking everything while others idle.
// - A decode never holds texts whose memory bound (decode_memory.h: every beam decoded to
//   max_length, plus encoding those that join) exceeds worker_memory_bytes: whatever the texts
//   turn out to need, a worker stays within its budget. Texts wait for room; one that could not
//   fit even alone must not be submitted (request_limits.h's CheckDecodeMemory refuses it).
// - A decode stops taking new texts while texts of other options are ready and no worker is idle,
//   so every queue is served.
// - A text whose deadline passes or whose request is cancelled while queued is answered
//   (DEADLINE_EXCEEDED / CANCELLED) without being computed; during decoding it leaves within one
//   step and the others go on.
// - Each text's `done` runs exactly once, on a worker thread (or in Stop()), as soon as the text is
//   finished, with exactly what offline decoding of that text gives: the engine's results do not
//   depend on what else is being decoded.
#ifndef MTSERVE_SERVER_BATCH_SCHEDULER_H_
#define MTSERVE_SERVER_BATCH_SCHEDULER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/decoding/decoding_options.h"
#include "model/model.h"
#include "model/translator.h"
#include "server/metrics.h"

namespace mtserve {

struct BatchingOptions {
  int workers = 1;              // Threads that run batches, each with its own Translator.
  int threads_per_worker = 1;   // Compute (OpenMP) threads of each worker.
  int max_batch_size = 32;      // Texts a worker decodes together.
  int max_batch_tokens = 8192;  // Texts x longest source text, decoded together.
  absl::Duration max_queue_delay = absl::Microseconds(500);
  int max_queued_texts = 1024;
  int64_t worker_memory_bytes = 0;  // What one decode may hold at most (0: no limit).
};

// One text to translate.
struct TranslationTask {
  int model = 0;                // Index into the scheduler's models.
  std::string model_name;       // For metrics.
  std::vector<int> source_ids;  // Ends with </s>.
  DecodingOptions options;
  absl::Time deadline = absl::InfiniteFuture();
  // Whether the text's caller went away (optional). Polled while queued and once per decoding
  // step; once it returns true the text is answered CANCELLED and it is not polled again.
  std::function<bool()> cancelled;
  // The result (hypotheses with text), or why there is none.
  std::function<void(absl::StatusOr<TranslationResult>)> done;

  absl::Time enqueued;  // Set by Submit().
};

class BatchScheduler {
 public:
  // Starts the workers. `metrics` may be null.
  BatchScheduler(std::vector<std::shared_ptr<const Model>> models, const BatchingOptions& options,
                 Metrics* metrics);
  // Stops (see Stop()).
  ~BatchScheduler();

  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Queues all of `tasks`, or none with RESOURCE_EXHAUSTED (or UNAVAILABLE once stopping).
  absl::Status Submit(std::vector<TranslationTask> tasks);

  // Finishes what is queued and running, then joins the workers. Later Submit()s fail.
  void Stop();

  int queued_texts() const;

 private:
  using Queue = std::deque<TranslationTask>;
  struct DroppedTask {
    TranslationTask task;
    absl::Status status;  // Why it will not run.
  };

  void WorkerLoop();
  // Takes the texts to start a decode with, waiting as the batching rules say; empty once stopped
  // and drained. Tasks that expired or were cancelled while queued are moved to `dropped`.
  std::vector<TranslationTask> NextBatch(std::vector<DroppedTask>& dropped);
  // Takes the queued texts that may join a running decode of `key` holding `decoding` texts whose
  // longest source has `longest` tokens, after accounting for `finished` texts that left it.
  std::vector<TranslationTask> TakeJoiners(const std::string& key, int decoding, int longest,
                                           int finished, std::vector<DroppedTask>& dropped);
  // Moves out of the queue every task that must not run any more.
  void RemoveDeadTasks(absl::Time now, std::vector<DroppedTask>& dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The most texts a decode may hold: max_batch_size, but no more than a fair share of the texts
  // in the system, so that no worker idles while another holds them all.
  int BatchLimit() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool IsReady(const Queue& queue, absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Whether a decode of `texts` texts whose longest source has `longest` tokens, `joining` of them
  // (the longest of which has `joining_longest`) being encoded now, fits the batching limits.
  bool Fits(const TranslationTask& any, int texts, int longest, int joining,
            int joining_longest) const;
  std::vector<TranslationTask> TakeBatch(Queue& queue) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Decodes `batch` and every text that joins it until none is left.
  void RunDecode(Translator& translator, std::vector<TranslationTask> batch);
  void AnswerDropped(std::vector<DroppedTask>& dropped);

  const std::vector<std::shared_ptr<const Model>> models_;
  const BatchingOptions options_;
  Metrics* const metrics_;

  mutable absl::Mutex mutex_;
  absl::CondVar work_available_;
  // Queues by batch key (model and decoding options): only texts of one key share a batch.
  std::map<std::string, Queue> queues_ ABSL_GUARDED_BY(mutex_);
  int queued_ ABSL_GUARDED_BY(mutex_) = 0;
  int running_ ABSL_GUARDED_BY(mutex_) = 0;  // Texts being decoded.
  int idle_workers_ ABSL_GUARDED_BY(mutex_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;

  std::vector<std::thread> workers_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_BATCH_SCHEDULER_H_
