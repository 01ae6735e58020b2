// The batching contract of serving/batch_scheduler.h on the embedded model: what shares a batch,
// results equal to offline translation, the bounded queue, deadlines and cancellation.
#include "serving/batch_scheduler.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/decode_memory.h"
#include "model/model.h"
#include "model/translator.h"
#include "serving/metrics.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::mtserve::testing::ReadLines;
using ::mtserve::testing::TestDataDir;
using ::mtserve::testing::TestModel;

// Collects the results of submitted tasks.
class Results {
 public:
  std::function<void(absl::StatusOr<TranslationResult>)> Slot(int index) {
    return [this, index](absl::StatusOr<TranslationResult> result) {
      absl::MutexLock lock(&mutex_);
      results_.emplace(index, std::move(result));
    };
  }
  // Waits for `count` results.
  std::map<int, absl::StatusOr<TranslationResult>> Wait(int count) {
    absl::MutexLock lock(&mutex_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
      return static_cast<int>(results_.size()) >= count;
    };
    mutex_.Await(absl::Condition(&done));
    return results_;
  }

 private:
  absl::Mutex mutex_;
  std::map<int, absl::StatusOr<TranslationResult>> results_ ABSL_GUARDED_BY(mutex_);
};

// The value of the sample `name` (with its labels, as printed) in a scrape, or -1.
double Sample(const std::string& scrape, const std::string& name) {
  const size_t at = scrape.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(scrape.substr(at + name.size() + 2));
}

DecodingOptions Beam(int beam) {
  DecodingOptions options;
  options.beam_size = beam;
  options.num_hypotheses = beam > 1 ? 2 : 1;
  return options;
}

class BatchSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(TestModel().ok()) << TestModel().status();
    model_ = *TestModel();
    static const auto* const lines =
        new std::vector<std::string>(ReadLines(TestDataDir() + "/multi30k/test_2016_flickr.en"));
    ASSERT_EQ(lines->size(), 1000u);
    lines_ = lines;
    metrics_ = Metrics::Create();
  }

  absl::Span<const std::string> texts() const { return absl::MakeConstSpan(lines_->data(), 24); }
  // 0-based line 748 of the file, which never ends under greedy search: 255 steps.
  const std::string& looping() const { return (*lines_)[748]; }

  TranslationTask Task(const std::string& text, const DecodingOptions& options,
                       std::function<void(absl::StatusOr<TranslationResult>)> done) {
    TranslationTask task;
    task.model_name = "m";
    task.source_ids = model_->tokenizer().EncodeSource(text);
    task.options = options;
    task.done = std::move(done);
    return task;
  }

  std::unique_ptr<BatchScheduler> Scheduler(const BatchingOptions& options) {
    return std::make_unique<BatchScheduler>(std::vector<std::shared_ptr<const Model>>{model_},
                                            options, metrics_.get());
  }

  // What offline translation gives for `text` alone.
  TranslationResult Offline(const std::string& text, const DecodingOptions& options) {
    Translator translator(model_, 1);
    auto results = translator.Translate({text}, options);
    EXPECT_TRUE(results.ok()) << results.status();
    return (*results)[0];
  }

  // Keeps a worker busy, as a long decode ahead does: submits the looping text (beam 4, options
  // no other text here has) and returns once its decode is at its second step, where its caller's
  // cancellation poll (run on the worker) holds the worker until `release` is notified; it then
  // leaves the decode CANCELLED, into `slot`.
  void HoldAWorker(BatchScheduler& scheduler, Results& results, int slot,
                   absl::Notification& release) {
    auto polls = std::make_shared<std::atomic<int>>(0);
    auto holding = std::make_shared<absl::Notification>();
    TranslationTask task = Task(looping(), Beam(4), results.Slot(slot));
    task.cancelled = [polls, holding, &release] {
      // Polled once while queued (under the scheduler's lock: it is taken at once, the worker
      // being idle), then once per step.
      if (++*polls < 3) return false;
      holding->Notify();
      release.WaitForNotification();
      return true;
    };
    std::vector<TranslationTask> tasks;
    tasks.push_back(std::move(task));
    ASSERT_TRUE(scheduler.Submit(std::move(tasks)).ok());
    holding->WaitForNotification();
  }

  double Batches() const {
    return Sample(metrics_->Scrape(), "mtserve_batch_size_sentences_count{model=\"m\"}");
  }
  double BatchedSentences() const {
    return Sample(metrics_->Scrape(), "mtserve_batch_size_sentences_sum{model=\"m\"}");
  }

  std::shared_ptr<const Model> model_;
  const std::vector<std::string>* lines_ = nullptr;
  std::unique_ptr<Metrics> metrics_;
};

void ExpectSameResult(const absl::StatusOr<TranslationResult>& actual,
                      const TranslationResult& expected) {
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(actual->source_tokens, expected.source_tokens);
  ASSERT_EQ(actual->hypotheses.size(), expected.hypotheses.size());
  for (size_t h = 0; h < expected.hypotheses.size(); ++h) {
    EXPECT_EQ(actual->hypotheses[h].text, expected.hypotheses[h].text);
    EXPECT_EQ(actual->hypotheses[h].ids, expected.hypotheses[h].ids);
    // Padding in a batch changes float rounding slightly, never the chosen tokens.
    EXPECT_NEAR(actual->hypotheses[h].score, expected.hypotheses[h].score, 1e-4);
  }
}

TEST_F(BatchSchedulerTest, FullBatchRunsAtOnceWithOfflineResults) {
  BatchingOptions options;
  options.max_batch_size = 8;
  auto scheduler = Scheduler(options);
  Results results;
  std::vector<TranslationTask> tasks;
  for (int i = 0; i < 8; ++i) tasks.push_back(Task(texts()[i], Beam(4), results.Slot(i)));
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  const auto done = results.Wait(8);
  for (int i = 0; i < 8; ++i) ExpectSameResult(done.at(i), Offline(texts()[i], Beam(4)));
  EXPECT_EQ(Batches(), 1);
  EXPECT_EQ(BatchedSentences(), 8);
}

TEST_F(BatchSchedulerTest, OnlyTextsWithTheSameOptionsShareABatch) {
  BatchingOptions options;
  options.max_batch_size = 64;
  options.max_queue_delay = absl::Milliseconds(50);
  auto scheduler = Scheduler(options);
  Results results;
  std::vector<TranslationTask> tasks;
  for (int i = 0; i < 12; ++i) {
    tasks.push_back(Task(texts()[i], Beam(i % 2 == 0 ? 1 : 4), results.Slot(i)));
  }
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  const auto done = results.Wait(12);
  for (int i = 0; i < 12; ++i) {
    ExpectSameResult(done.at(i), Offline(texts()[i], Beam(i % 2 == 0 ? 1 : 4)));
  }
  EXPECT_EQ(Batches(), 2);  // One per set of options.
}

TEST_F(BatchSchedulerTest, TokenBudgetAndBatchSizeBoundBatches) {
  BatchingOptions options;
  options.workers = 1;
  // Limits on histogram bucket bounds, so the buckets show that no batch exceeded them.
  options.max_batch_size = 4;
  options.max_batch_tokens = 64;
  options.max_queue_delay = absl::Milliseconds(1);
  auto scheduler = Scheduler(options);
  Results results;
  std::vector<TranslationTask> tasks;
  int total_tokens = 0;
  for (int i = 0; i < 24; ++i) {
    tasks.push_back(Task(texts()[i], Beam(1), results.Slot(i)));
    total_tokens += static_cast<int>(tasks.back().source_ids.size());
  }
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  const auto done = results.Wait(24);
  for (int i = 0; i < 24; ++i) ExpectSameResult(done.at(i), Offline(texts()[i], Beam(1)));
  const std::string scrape = metrics_->Scrape();
  // Every batch is within both limits ...
  EXPECT_EQ(Sample(scrape, "mtserve_batch_size_tokens_bucket{model=\"m\",le=\"64\"}"), Batches());
  EXPECT_EQ(Sample(scrape, "mtserve_batch_size_sentences_bucket{model=\"m\",le=\"4\"}"), Batches());
  // ... so there are at least as many batches as the limits require.
  EXPECT_GE(Batches(), std::max(24 / 4, (total_tokens + 63) / 64));
  // Each text was admitted once.
  EXPECT_EQ(Sample(scrape, "mtserve_queue_wait_seconds_count{model=\"m\"}"), 24);
}

// Continuous batching: with one worker busy on a long text, a new text joins its decode at once,
// and is answered as soon as it is finished, long before the long one.
TEST_F(BatchSchedulerTest, TextsJoinARunningDecodeAndLeaveWhenFinished) {
  BatchingOptions options;
  options.workers = 1;
  auto scheduler = Scheduler(options);
  Results results;
  // The long text polls `cancelled` once per step.
  const std::string& looping = BatchSchedulerTest::looping();
  std::atomic<int> long_polls = 0;
  std::vector<TranslationTask> long_request;
  long_request.push_back(Task(looping, Beam(1), results.Slot(0)));
  long_request.back().cancelled = [&long_polls] {
    ++long_polls;
    return false;
  };
  ASSERT_TRUE(scheduler->Submit(std::move(long_request)).ok());
  while (long_polls < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::atomic<int> long_polls_when_short_done = -1;
  std::vector<TranslationTask> short_request;
  auto short_slot = results.Slot(1);
  short_request.push_back(Task(texts()[0], Beam(1), [&](absl::StatusOr<TranslationResult> r) {
    long_polls_when_short_done = long_polls.load();
    short_slot(std::move(r));
  }));
  ASSERT_TRUE(scheduler->Submit(std::move(short_request)).ok());
  const auto done = results.Wait(2);
  ExpectSameResult(done.at(0), Offline(looping, Beam(1)));
  ExpectSameResult(done.at(1), Offline(texts()[0], Beam(1)));
  EXPECT_EQ(done.at(0)->hypotheses[0].ids.size(), 255u);
  // The short text (about 15 steps) finished while the long one was still decoding.
  EXPECT_GT(long_polls_when_short_done, 0);
  EXPECT_LT(long_polls_when_short_done, 100);
  // One decode: started with the long text, joined by the short one (then 2 texts).
  EXPECT_EQ(Batches(), 2);
  EXPECT_EQ(BatchedSentences(), 1 + 2);
}

// A text the engine refuses (here a token id outside the vocabulary, which the server's checks
// never let through but a fault could) fails alone: the texts decoded with it, from other callers,
// get their translations, whether they start a decode together or join a running one.
TEST_F(BatchSchedulerTest, ATextTheEngineRefusesFailsAlone) {
  BatchingOptions options;
  options.workers = 1;
  options.max_batch_size = 4;
  auto scheduler = Scheduler(options);
  Results results;
  auto bad_task = [&](int slot) {
    TranslationTask task = Task(texts()[0], Beam(1), results.Slot(slot));
    task.source_ids.front() = model_->config().vocab_size + 5;
    return task;
  };
  std::vector<TranslationTask> batch;
  for (int i = 0; i < 4; ++i) {
    batch.push_back(i == 2 ? bad_task(i) : Task(texts()[i], Beam(1), results.Slot(i)));
  }
  ASSERT_TRUE(scheduler->Submit(std::move(batch)).ok());
  auto done = results.Wait(4);
  for (int i : {0, 1, 3}) ExpectSameResult(done.at(i), Offline(texts()[i], Beam(1)));
  EXPECT_EQ(done.at(2).status().code(), absl::StatusCode::kInvalidArgument) << done.at(2).status();

  // Three texts, the middle one bad, joining a decode that runs the long text.
  std::atomic<int> long_polls = 0;
  std::vector<TranslationTask> long_request;
  long_request.push_back(Task(looping(), Beam(1), results.Slot(10)));
  long_request.back().cancelled = [&long_polls] {
    ++long_polls;
    return false;
  };
  std::vector<TranslationTask> fill;  // They join the long text's decode.
  for (int i = 11; i < 14; ++i) fill.push_back(Task(texts()[i], Beam(1), results.Slot(i)));
  ASSERT_TRUE(scheduler->Submit(std::move(long_request)).ok());
  ASSERT_TRUE(scheduler->Submit(std::move(fill)).ok());
  while (long_polls < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<TranslationTask> joiners;
  joiners.push_back(Task(texts()[4], Beam(1), results.Slot(20)));
  joiners.push_back(bad_task(21));
  joiners.push_back(Task(texts()[5], Beam(1), results.Slot(22)));
  ASSERT_TRUE(scheduler->Submit(std::move(joiners)).ok());
  done = results.Wait(4 + 4 + 3);
  ExpectSameResult(done.at(10), Offline(looping(), Beam(1)));
  ExpectSameResult(done.at(20), Offline(texts()[4], Beam(1)));
  ExpectSameResult(done.at(22), Offline(texts()[5], Beam(1)));
  EXPECT_EQ(done.at(21).status().code(), absl::StatusCode::kInvalidArgument)
      << done.at(21).status();
}

// With a memory budget that holds 4 of these texts (decode_memory.h's bound, beam 4), no decode
// ever holds more than 4, while the same 8 texts without a budget start as one decode of 8; the
// results are the offline ones either way.
TEST_F(BatchSchedulerTest, MemoryBudgetBoundsTheTextsADecodeHolds) {
  DecodingOptions beam = Beam(4);
  beam.max_length = 60;
  int longest = 0;
  for (int i = 0; i < 8; ++i) {
    longest =
        std::max(longest, static_cast<int>(model_->tokenizer().EncodeSource(texts()[i]).size()));
  }
  const DecodeMemory memory(model_->config(), beam);
  for (const bool budget : {false, true}) {
    SCOPED_TRACE(budget ? "budget for 4 texts" : "no budget");
    SetUp();  // Fresh metrics.
    BatchingOptions options;
    options.workers = 1;  // The first decode starts with all 8 queued.
    options.max_batch_size = 8;
    options.worker_memory_bytes = budget ? memory.Admitting(4, longest, 4, longest) : 0;
    auto scheduler = Scheduler(options);
    Results results;
    std::vector<TranslationTask> tasks;
    for (int i = 0; i < 8; ++i) tasks.push_back(Task(texts()[i], beam, results.Slot(i)));
    ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
    const auto done = results.Wait(8);
    for (int i = 0; i < 8; ++i) ExpectSameResult(done.at(i), Offline(texts()[i], beam));
    const std::string scrape = metrics_->Scrape();
    const double decodes = Sample(scrape, "mtserve_batch_size_sentences_count{model=\"m\"}");
    const double at_most_4 =
        Sample(scrape, "mtserve_batch_size_sentences_bucket{model=\"m\",le=\"4\"}");
    ASSERT_GT(decodes, 0);
    if (budget) {
      EXPECT_EQ(at_most_4, decodes) << "a decode held more than 4 texts";
    } else {
      EXPECT_LT(at_most_4, decodes);
    }
  }
}

// Requests over the queue's bound are taken whole and admitted as it drains: every text is
// translated, as offline decoding translates it.
TEST_F(BatchSchedulerTest, RequestsOverTheQueueBoundAreAdmittedAsItDrains) {
  BatchingOptions options;
  options.max_queued_texts = 3;
  options.max_batch_size = 100;
  auto scheduler = Scheduler(options);
  Results results;
  absl::Notification release;
  HoldAWorker(*scheduler, results, 10, release);  // The only worker: nothing else runs.
  std::vector<TranslationTask> four;
  for (int i = 0; i < 4; ++i) four.push_back(Task(texts()[i], Beam(1), results.Slot(i)));
  ASSERT_TRUE(scheduler->Submit(std::move(four)).ok());
  EXPECT_EQ(scheduler->queued_texts(), 3);  // The bound: the fourth waits for room.
  std::vector<TranslationTask> two;
  for (int i = 4; i < 6; ++i) two.push_back(Task(texts()[i], Beam(1), results.Slot(i)));
  ASSERT_TRUE(scheduler->Submit(std::move(two)).ok());
  EXPECT_EQ(scheduler->queued_texts(), 3);

  release.Notify();
  scheduler->Stop();  // Runs what is queued, and what waits as room comes.
  const auto done = results.Wait(7);
  ASSERT_EQ(done.size(), 7u);
  for (int i = 0; i < 6; ++i) ExpectSameResult(done.at(i), Offline(texts()[i], Beam(1)));
  EXPECT_EQ(done.at(10).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(scheduler->Submit({Task(texts()[0], Beam(1), results.Slot(9))}).code(),
            absl::StatusCode::kUnavailable);
}

// Texts queued behind the only worker's decode: one's deadline passes, the other's caller leaves.
TEST_F(BatchSchedulerTest, ExpiredOrCancelledWhileQueuedIsNeverComputed) {
  BatchingOptions options;
  options.max_batch_size = 100;
  auto scheduler = Scheduler(options);
  Results results;
  absl::Notification release;
  HoldAWorker(*scheduler, results, 10, release);
  std::atomic<bool> cancelled = true;  // Its caller left before a worker looked at it.
  TranslationTask expired = Task(texts()[0], Beam(1), results.Slot(0));
  expired.deadline = absl::Now() + absl::Milliseconds(20);
  TranslationTask abandoned = Task(texts()[1], Beam(1), results.Slot(1));
  abandoned.cancelled = [&] { return cancelled.load(); };
  std::vector<TranslationTask> tasks;
  tasks.push_back(std::move(expired));
  tasks.push_back(std::move(abandoned));
  const absl::Time deadline = tasks.front().deadline;
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  while (absl::Now() <= deadline) absl::SleepFor(absl::Milliseconds(1));
  release.Notify();
  const auto done = results.Wait(3);
  EXPECT_EQ(done.at(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(done.at(1).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(done.at(10).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(scheduler->queued_texts(), 0);
  EXPECT_EQ(BatchedSentences(), 1);  // Only the holding text was ever decoded.
}

TEST_F(BatchSchedulerTest, CancellationJustBeforeTheDeadlineIsTheDeadlines) {
  // A client cancels when its own deadline passes, which is a little before the server's copy.
  // Both are seen before either is taken to decode.
  BatchingOptions options;
  options.max_batch_size = 100;
  auto scheduler = Scheduler(options);
  Results results;
  std::vector<TranslationTask> tasks;
  tasks.push_back(Task(texts()[0], Beam(1), results.Slot(0)));
  tasks.back().deadline = absl::Now() + absl::Milliseconds(100);
  tasks.back().cancelled = [] { return true; };
  tasks.push_back(Task(texts()[1], Beam(1), results.Slot(1)));
  tasks.back().deadline = absl::Now() + absl::Hours(1);
  tasks.back().cancelled = [] { return true; };
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  const auto done = results.Wait(2);
  EXPECT_EQ(done.at(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(done.at(1).status().code(), absl::StatusCode::kCancelled);
}

TEST_F(BatchSchedulerTest, CancelledDuringDecodingStopsWithinAStepAndLeavesItsBatchAlone) {
  BatchingOptions options;
  options.max_batch_size = 4;  // The four texts run as one batch.
  auto scheduler = Scheduler(options);
  Results results;
  // The long text's caller goes away at the 20th poll: while queued it is polled once, then once
  // per decoding step.
  const std::string& looping = BatchSchedulerTest::looping();
  int polls = 0;
  std::vector<TranslationTask> tasks;
  TranslationTask long_task = Task(looping, Beam(1), results.Slot(0));
  long_task.cancelled = [&polls] { return ++polls >= 20; };
  tasks.push_back(std::move(long_task));
  for (int i = 1; i < 4; ++i) tasks.push_back(Task(texts()[i], Beam(1), results.Slot(i)));
  ASSERT_TRUE(scheduler->Submit(std::move(tasks)).ok());
  const auto done = results.Wait(4);
  EXPECT_EQ(done.at(0).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(polls, 20);  // Never polled again once cancelled.
  for (int i = 1; i < 4; ++i) ExpectSameResult(done.at(i), Offline(texts()[i], Beam(1)));
  // Generated tokens count only the three finished texts.
  double generated = 0;
  for (int i = 1; i < 4; ++i) {
    generated += TargetTokens(done.at(i)->hypotheses[0], model_->config().eos_token_id);
  }
  EXPECT_EQ(Sample(metrics_->Scrape(), "mtserve_generated_tokens_total{model=\"m\"}"), generated);
}

}  // namespace
}  // namespace mtserve
