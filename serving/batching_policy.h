// The batching rules of serving/batch_scheduler.h as decisions only: which queued texts start a
// decode, which join a running one, which leave the queue unanswered by the engine, and when an
// idle worker should look again. No threads, no lock and no clock: the scheduler calls it under
// its lock with the time it read, so the rules are tested with explicit times (and no model).
//
// The rules:
// - Submit() takes a request whole (UNAVAILABLE once draining, never refused for its size): its
//   texts (a document's sentences) wait in the request's backlog and are admitted to the queues
//   as they drain, at most max_queued_texts admitted and not yet decoding at a time, requests
//   taking turns (fair_share.h). What bounds the backlogs is the core's: the texts it accepts.
// - Texts share a decode only with texts of the same batch key (model and decoding options).
// - Within a queue, requests take turns (fair_share.h: API keys first, then each key's
//   requests): a decode starts with, and takes joiners from, the next request in turn, each
//   request's texts in order, so a request of one text queued behind a document of a thousand
//   waits for a turn, not for the document.
// - A decode holds at most BatchLimit() texts (max_batch_size, but no more than a fair share of
//   the texts queued or decoding over the workers), at most max_batch_tokens (texts x longest
//   source), and no more than worker_memory_bytes by DecodeMemory's bound (encoding the texts
//   that join, and the texts' term constraints, included). The first text of a decode always runs,
//   even alone over the budgets; in its turn a request gives its first text that fits (within
//   max_batch_size of its next), and one with none gives its turn to the next request.
// - A queue is ready when no text is decoding at all (the first text to reach an idle server
//   starts at once), when it holds max_batch_size texts, its fair share while other decodes run,
//   more than one decode can take, when its oldest text has waited max_queue_delay, or when
//   draining: max_queue_delay gathers texts only while a decode runs, even with another worker
//   idle. An idle worker starts the ready queue whose oldest text is oldest.
// - Queued texts of a running decode's key join it between steps, in turn, as room and the
//   budgets allow; a decode at least half its limit waits for kJoinTogether of them to join
//   together unless the oldest has waited kJoinWait; it takes none while texts of other keys are
//   ready and no worker is idle.
// - A queued text whose deadline passed or whose caller cancelled leaves with its StopReason; so
//   do a request's texts still in its backlog.
#ifndef MTSERVE_SERVING_BATCHING_POLICY_H_
#define MTSERVE_SERVING_BATCHING_POLICY_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/term_constraints.h"
#include "model/model_config.h"
#include "model/translator.h"
#include "serving/fair_share.h"

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
  // The terms its translation must write (null: none), model/decoding/term_constraints.h.
  std::shared_ptr<const TermConstraints> constraints;
  DecodingOptions options;
  // What its constraints add to a decode's memory (DecodeMemory::Terms): set when it is taken
  // to decode.
  int64_t term_bytes = 0;
  absl::Time deadline = absl::InfiniteFuture();
  // Whether the text's caller went away (optional). Polled while queued and once per decoding
  // step; once it returns true the text is answered CANCELLED and it is not polled again.
  std::function<bool()> cancelled;
  // The result (hypotheses with text), or why there is none.
  std::function<void(absl::StatusOr<TranslationResult>)> done;

  absl::Time enqueued;  // Set by Submit(): when its request came.
};

// A request's texts, handed to the scheduler whole and admitted to its queues as they drain.
struct QueuedRequest {
  // Whose turn it is (fair_share.h): the API key's name; "" for every request without keys.
  std::string group;
  std::string model_name;  // Of all its texts (for metrics).
  int texts = 0;
  // Makes text i's task, for i from 0 to texts - 1 in order, each exactly once: when it is
  // admitted to a queue, or when its request's deadline passes or its caller cancels while it is
  // in the backlog (then its `done` gets why). Called under the scheduler's lock: it must be
  // cheap and must not call the scheduler.
  std::function<TranslationTask(int i)> make;
  // For the texts in the backlog: the request's deadline and whether its caller went away
  // (optional; polled as TranslationTask::cancelled is).
  absl::Time deadline = absl::InfiniteFuture();
  std::function<bool()> cancelled;
};

// `tasks` as one request of `group`: its texts are made by moving them out, in order.
QueuedRequest RequestOf(std::vector<TranslationTask> tasks, std::string group = "");

// A task that will not run, and why.
struct DroppedTask {
  TranslationTask task;
  absl::Status status;
};

// Texts share a decode only when everything that steers their decoding is equal.
std::string BatchKey(const TranslationTask& task);

class BatchingPolicy {
 public:
  // Texts joining a running decode together, unless the oldest has waited kJoinWait (measured on
  // the embedded model at concurrency 32: +2-4 % throughput over joining one by one).
  static constexpr int kJoinTogether = 4;
  static constexpr absl::Duration kJoinWait = absl::Milliseconds(5);

  // `model_configs[i]` is the shape of model i, for the memory bound.
  BatchingPolicy(const BatchingOptions& options, std::vector<ModelConfig> model_configs);
  // Model model_configs.size() has the shape `config` (a model added while serving).
  void AddModel(ModelConfig config) { model_configs_.push_back(std::move(config)); }

  // Takes `request` as come at `now`, admitting as many of its texts as the queue has room for
  // (UNAVAILABLE once draining; `request` is then left as it was, none of its texts made).
  absl::Status Submit(QueuedRequest& request, absl::Time now);

  // From now on every queue is ready and Submit() refuses.
  void StartDraining() { draining_ = true; }
  bool draining() const { return draining_; }

  // Moves out of the queues every task whose deadline passed by `now` or whose caller cancelled
  // (polled once), with why; and out of the backlogs every text of a request whose deadline
  // passed or whose caller cancelled.
  void RemoveDeadTasks(absl::Time now, std::vector<DroppedTask>& dropped);

  // The texts an idle worker starts a decode with at `now`, taken out of the queue and counted
  // as running; empty when no queue is ready.
  std::vector<TranslationTask> TakeBatch(absl::Time now);

  // When an idle worker should look again if nothing else happens: the earliest end of a queue's
  // max_queue_delay or deadline (InfiniteFuture when nothing is queued).
  absl::Time NextWake() const;

  // The queued texts that join a running decode of `key` holding `decoding` texts whose longest
  // source has `longest` tokens and whose constraints take `terms` bytes (their term_bytes), in
  // turn, taken out of the queue and counted as running.
  std::vector<TranslationTask> TakeJoiners(const std::string& key, int decoding, int longest,
                                           absl::Time now, int64_t terms = 0);

  // `texts` running texts finished, left or were refused by the engine.
  void Finished(int texts) { running_ -= texts; }
  // A worker starts or stops waiting for work.
  void WorkerIdle() { ++idle_workers_; }
  void WorkerBusy() { --idle_workers_; }

  // The most texts a decode may hold: max_batch_size, but no more than a fair share of the texts
  // in the system, so that no worker idles while another holds them all.
  int BatchLimit() const;

  // Texts admitted to the queues and not yet decoding (at most max_queued_texts).
  int queued() const { return queued_; }
  // Texts in requests' backlogs, not yet admitted.
  int waiting() const { return waiting_; }
  int running() const { return running_; }
  int idle_workers() const { return idle_workers_; }
  bool has_queued() const { return queued_ > 0 || waiting_ > 0; }

 private:
  // The admitted texts of one batch key, by request, and whose turn it is.
  struct Queue {
    std::map<uint64_t, std::deque<TranslationTask>> requests;
    FairShare turns;
    int size = 0;
    absl::Time oldest() const;
    int longest() const;
  };
  // A request's texts not yet admitted.
  struct Backlog {
    QueuedRequest request;
    int next = 0;  // The next text to make.
    absl::Time enqueued;
  };

  // Admits backlogged texts, requests in turn, while the queues have room.
  void Admit();
  // Takes texts from `queue` in turn, each request's first that `fits` accepts (looking
  // max_batch_size texts ahead; a request with none is passed over), until `limit` texts are
  // taken or none fits. `fits` is called once per text it accepts, as it is taken. Sets the
  // texts' term_bytes.
  std::vector<TranslationTask> TakeInTurn(Queue& queue, int limit,
                                          const std::function<bool(const TranslationTask&)>& fits);
  bool IsReady(const Queue& queue, absl::Time now) const;
  // Whether a decode of `texts` texts whose longest source has `longest` tokens and whose
  // constraints take `terms` bytes, `joining` of them (the longest of which has `joining_longest`)
  // being encoded now, fits the batching limits.
  bool Fits(const TranslationTask& any, int texts, int longest, int joining, int joining_longest,
            int64_t terms) const;
  // What `task`'s constraints add to a decode (DecodeMemory::Terms).
  int64_t TermBytes(const TranslationTask& task) const;

  const BatchingOptions options_;
  std::vector<ModelConfig> model_configs_;
  // Queues by batch key: only texts of one key share a batch.
  std::map<std::string, Queue> queues_;
  // Requests with texts not yet admitted, by request id, and whose turn it is.
  std::map<uint64_t, Backlog> backlogs_;
  FairShare backlog_turns_;
  uint64_t next_request_ = 0;
  int queued_ = 0;
  int waiting_ = 0;
  int running_ = 0;  // Texts being decoded.
  int idle_workers_ = 0;
  bool draining_ = false;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_BATCHING_POLICY_H_
