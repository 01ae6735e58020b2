// Dynamic batching: texts from concurrent requests wait in one bounded queue and worker threads
// decode them together, continuously: new texts join a worker's running decode between steps and
// each text leaves it as soon as it is finished.
//
// The whole contract:
// - Submit() takes a request whole, never refusing it for its size (UNAVAILABLE once stopping):
//   its texts (a document's sentences) are admitted to the queue as it drains, at most
//   max_queued_texts queued at a time, so a document of any length is translated while the
//   queue's memory stays bounded; what bounds the requests waiting is the caller's (the core's
//   --max_queued_texts on the texts it accepts).
// - Requests take turns (fair_share.h): API keys first when the request names one, then each
//   key's requests, a text at a time, both for admission to the queue and for a place in a
//   decode, so a request of one sentence sent while a document of thousands is being decoded
//   joins within a few texts, not after the document.
// - Only texts with the same model and decoding options are decoded together. An idle worker
//   starts a decode with queued texts in turn at once when nothing is decoding, else when they
//   fill a batch or when the oldest has waited max_queue_delay. While it decodes, queued texts of
//   the same options join it between steps, in turn, without waiting. A request wakes one idle
//   worker, which wakes the next if texts are left.
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
//
// Every batching decision (queues, fair share, readiness, joining, what leaves the queue) is
// BatchingPolicy's (batching_policy.h, tested with explicit times); this class holds the worker
// threads, the lock around the policy, and the decode loop, which computes through a
// DecodeEngine (decode_engine.h: the Translator in production, a fake in tests).
#ifndef MTSERVE_SERVING_BATCH_SCHEDULER_H_
#define MTSERVE_SERVING_BATCH_SCHEDULER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/model.h"
#include "model/model_config.h"
#include "serving/batching_policy.h"
#include "serving/decode_engine.h"
#include "serving/metrics.h"

namespace mtserve {

class BatchScheduler {
 public:
  // Starts the workers, each decoding with its own Translators (translator_engine.h). `metrics`
  // may be null.
  BatchScheduler(std::vector<std::shared_ptr<const Model>> models, const BatchingOptions& options,
                 Metrics* metrics);
  // The same over the engines `engines` makes (one per worker, on its thread), for models of the
  // shapes `model_configs`, reading the time from `clock`.
  BatchScheduler(std::vector<ModelConfig> model_configs, const BatchingOptions& options,
                 Metrics* metrics, DecodeEngineFactory engines,
                 std::function<absl::Time()> clock = absl::Now);
  // Stops (see Stop()).
  ~BatchScheduler();

  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Takes `request`, whose texts are admitted to the queue as it drains (UNAVAILABLE once
  // stopping: then none of its texts is made).
  absl::Status Submit(QueuedRequest request);
  // The same for `tasks` as one request of no API key.
  absl::Status Submit(std::vector<TranslationTask> tasks);

  // Model `model` was unloaded: each worker's engine drops what it keeps of it (DecodeEngine::
  // Forget) before its next decode, idle workers at once.
  void ForgetModel(int model);
  // Models are numbered in the order given; `config` is the shape of the next one (a model added
  // while serving: ModelRepository::Add), before any text of it is submitted.
  void AddModel(const ModelConfig& config);

  // Finishes what is queued and running, then joins the workers. Later Submit()s fail.
  void Stop();

  // Texts admitted to the queue and not yet decoding (at most max_queued_texts).
  int queued_texts() const;
  // Texts of requests taken and not yet decoding: those queued and those waiting for room.
  int pending_texts() const;

 private:
  void WorkerLoop();
  // Takes the texts to start a decode with, waiting as the policy says; empty once stopped and
  // drained. Tasks that expired or were cancelled while queued are moved to `dropped`, and models
  // forgotten since `forgotten_seen` to `forget` (both returned at once, with no texts).
  std::vector<TranslationTask> NextBatch(std::vector<DroppedTask>& dropped, size_t& forgotten_seen,
                                         std::vector<int>& forget);
  // Takes the queued texts that may join a running decode of `key` holding `decoding` texts whose
  // longest source has `longest` tokens and whose constraints take `terms` bytes, after
  // accounting for `finished` texts that left it.
  std::vector<TranslationTask> TakeJoiners(const std::string& key, int decoding, int longest,
                                           int64_t terms, int finished,
                                           std::vector<DroppedTask>& dropped);
  // Decodes `batch` and every text that joins it until none is left.
  void RunDecode(DecodeEngine& engine, std::vector<TranslationTask> batch);
  void AnswerDropped(std::vector<DroppedTask>& dropped);

  const BatchingOptions options_;
  Metrics* const metrics_;
  const DecodeEngineFactory engines_;
  const std::function<absl::Time()> clock_;

  mutable absl::Mutex mutex_;
  absl::CondVar work_available_;
  BatchingPolicy policy_ ABSL_GUARDED_BY(mutex_);
  std::vector<int> forgotten_ ABSL_GUARDED_BY(mutex_);  // Models forgotten, in order.

  std::vector<std::thread> workers_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_BATCH_SCHEDULER_H_
