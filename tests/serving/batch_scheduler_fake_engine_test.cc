// The scheduler's threads and decode loop (serving/batch_scheduler.h) over a fake engine and a
// clock the test sets: a text's first source id is the number of steps it decodes for (a negative
// one the engine refuses), and the test acts between steps from the engine's step hook, which
// runs on the worker's thread. Expected values come from the batching contract.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/batch_scheduler.h"
#include "serving/decode_engine.h"
#include "tests/test_lib/fake_clock.h"
#include "tests/test_lib/fake_engine.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using testing::EngineLog;
using testing::FakeClock;
using testing::FakeEngine;

// Each text's answers, and the engine step at which each came.
class Answers {
 public:
  std::function<void(absl::StatusOr<TranslationResult>)> Slot(int index) {
    return [this, index](absl::StatusOr<TranslationResult> result) {
      const int step = log_ != nullptr ? log_->steps() : 0;
      absl::MutexLock lock(&mutex_);
      answers_[index].push_back(std::move(result));
      steps_[index] = step;
    };
  }
  void set_log(const EngineLog* log) { log_ = log; }

  // Waits until `count` texts are answered.
  void Wait(int count) {
    absl::MutexLock lock(&mutex_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
      return static_cast<int>(answers_.size()) >= count;
    };
    mutex_.Await(absl::Condition(&done));
  }
  int times(int index) const {
    absl::MutexLock lock(&mutex_);
    auto it = answers_.find(index);
    return it == answers_.end() ? 0 : static_cast<int>(it->second.size());
  }
  absl::StatusOr<TranslationResult> answer(int index) const {
    absl::MutexLock lock(&mutex_);
    return answers_.at(index).front();
  }
  // The engine's step count when the text was answered.
  int step(int index) const {
    absl::MutexLock lock(&mutex_);
    return steps_.at(index);
  }

 private:
  const EngineLog* log_ = nullptr;
  mutable absl::Mutex mutex_;
  std::map<int, std::vector<absl::StatusOr<TranslationResult>>> answers_ ABSL_GUARDED_BY(mutex_);
  std::map<int, int> steps_ ABSL_GUARDED_BY(mutex_);
};

class BatchSchedulerFakeEngineTest : public ::testing::Test {
 protected:
  BatchSchedulerFakeEngineTest() { answers_.set_log(&log_); }

  // Options under which every queued text is ready at once: only the contract's other rules
  // (and the order of events the test makes) decide.
  static BatchingOptions Options(int workers) {
    BatchingOptions options;
    options.workers = workers;
    options.max_batch_size = 8;
    options.max_queue_delay = absl::ZeroDuration();
    return options;
  }

  std::unique_ptr<BatchScheduler> Scheduler(const BatchingOptions& options) {
    return std::make_unique<BatchScheduler>(
        std::vector<ModelConfig>{ModelConfig()}, options, /*metrics=*/nullptr,
        [this] { return std::make_unique<FakeEngine>(log_); }, [this] { return clock_.Now(); });
  }

  // Text `index` that decodes for `steps` steps (refused by the engine when negative).
  TranslationTask Text(int index, int steps, int beam = 1) {
    TranslationTask task;
    task.model_name = "model";  // Not one character: GCC bug 105329 (see tests/CMakeLists.txt).
    task.source_ids = {steps, 5, 2};
    task.options.beam_size = beam;
    task.done = answers_.Slot(index);
    return task;
  }

  static std::vector<TranslationTask> Tasks(std::vector<TranslationTask> tasks) { return tasks; }

  void ExpectTranslated(int index, int steps) {
    const absl::StatusOr<TranslationResult> answer = answers_.answer(index);
    ASSERT_TRUE(answer.ok()) << index << ": " << answer.status();
    ASSERT_EQ(answer->hypotheses.size(), 1u);
    EXPECT_EQ(answer->hypotheses[0].ids, std::vector<int>({steps, 5, 2}));
    EXPECT_EQ(answer->hypotheses[0].text, absl::StrCat("text of ", steps));
    EXPECT_EQ(answer->source_tokens, 3);
  }

  EngineLog log_;
  FakeClock clock_;
  Answers answers_;
  // Last: it stops (and its workers end) before what they use goes.
  std::unique_ptr<BatchScheduler> scheduler_;
};

TEST_F(BatchSchedulerFakeEngineTest, ATextJoinsARunningDecodeBetweenSteps) {
  log_.SetStepHook([this](int step) {
    // Queued while the first text decodes: it joins after this step, without a new decode.
    if (step == 1) {
      ASSERT_TRUE(scheduler_->Submit(Tasks({Text(1, 2)})).ok());
    }
  });
  scheduler_ = Scheduler(Options(1));
  ASSERT_TRUE(scheduler_->Submit(Tasks({Text(0, 3)})).ok());
  answers_.Wait(2);
  scheduler_->Stop();
  EXPECT_EQ(log_.decodes(), 1);
  EXPECT_THAT(log_.groups(), ElementsAre(ElementsAre(3), ElementsAre(2)));
  ExpectTranslated(0, 3);
  ExpectTranslated(1, 2);
  EXPECT_EQ(answers_.step(0), 3);
  EXPECT_EQ(answers_.step(1), 3);  // Steps 2 and 3.
  EXPECT_EQ(log_.steps(), 3);
}

TEST_F(BatchSchedulerFakeEngineTest, ACancelledTextLeavesWithinAStepWhileTheOthersGoOn) {
  std::atomic<bool> cancelled = false;
  log_.SetStepHook([&](int step) {
    if (step == 2) cancelled = true;
  });
  scheduler_ = Scheduler(Options(1));
  TranslationTask leaving = Text(0, 10);
  leaving.cancelled = [&] { return cancelled.load(); };
  ASSERT_TRUE(scheduler_->Submit(Tasks({std::move(leaving), Text(1, 4)})).ok());
  answers_.Wait(2);
  scheduler_->Stop();
  EXPECT_EQ(answers_.answer(0).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(answers_.step(0), 2);
  ExpectTranslated(1, 4);
  EXPECT_EQ(answers_.step(1), 4);
  EXPECT_EQ(log_.steps(), 4);
  EXPECT_EQ(log_.decodes(), 1);
}

TEST_F(BatchSchedulerFakeEngineTest, ADeadlinePassingWhileQueuedIsAnsweredWithoutComputing) {
  log_.SetStepHook([this](int step) {
    if (step == 1) {
      // Other options: it waits for the worker, busy with the first text.
      TranslationTask late = Text(1, 1, /*beam=*/2);
      late.deadline = clock_.Now() + absl::Seconds(1);
      ASSERT_TRUE(scheduler_->Submit(Tasks({std::move(late)})).ok());
    }
    if (step == 2) clock_.Advance(absl::Seconds(2));
  });
  scheduler_ = Scheduler(Options(1));
  ASSERT_TRUE(scheduler_->Submit(Tasks({Text(0, 3)})).ok());
  answers_.Wait(2);
  scheduler_->Stop();
  EXPECT_EQ(answers_.answer(1).status().code(), absl::StatusCode::kDeadlineExceeded);
  ExpectTranslated(0, 3);
  EXPECT_THAT(log_.groups(), ElementsAre(ElementsAre(3)));  // The late text never reached it.
  EXPECT_EQ(log_.decodes(), 1);
  EXPECT_EQ(scheduler_->queued_texts(), 0);
}

TEST_F(BatchSchedulerFakeEngineTest, ATextTheEngineRefusesFailsAlone) {
  scheduler_ = Scheduler(Options(1));
  ASSERT_TRUE(scheduler_->Submit(Tasks({Text(0, 2), Text(1, -1), Text(2, 3)})).ok());
  answers_.Wait(3);
  EXPECT_EQ(answers_.answer(1).status().code(), absl::StatusCode::kInvalidArgument);
  ExpectTranslated(0, 2);
  ExpectTranslated(2, 3);
  // The refused text holds no place: the next text still decodes.
  ASSERT_TRUE(scheduler_->Submit(Tasks({Text(3, 1)})).ok());
  answers_.Wait(4);
  scheduler_->Stop();
  ExpectTranslated(3, 1);
  EXPECT_EQ(answers_.times(1), 1);
}

TEST_F(BatchSchedulerFakeEngineTest, EachTextIsAnsweredExactlyOnce) {
  scheduler_ = Scheduler(Options(2));
  constexpr int kTexts = 40;
  std::vector<TranslationTask> tasks;
  for (int i = 0; i < kTexts; ++i) {
    const int kind = i % 5;
    TranslationTask task = Text(i, kind == 3 ? -1 : 1 + i % 7, /*beam=*/1 + i % 2);
    if (kind == 1) task.cancelled = [] { return true; };
    if (kind == 2) task.deadline = clock_.Now() - absl::Seconds(1);
    tasks.push_back(std::move(task));
  }
  ASSERT_TRUE(scheduler_->Submit(std::move(tasks)).ok());
  scheduler_->Stop();            // Finishes what is queued and running.
  EXPECT_EQ(log_.engines(), 2);  // One engine per worker.
  for (int i = 0; i < kTexts; ++i) {
    ASSERT_EQ(answers_.times(i), 1) << i;
    switch (i % 5) {
      case 1:
        EXPECT_EQ(answers_.answer(i).status().code(), absl::StatusCode::kCancelled) << i;
        break;
      case 2:
        EXPECT_EQ(answers_.answer(i).status().code(), absl::StatusCode::kDeadlineExceeded) << i;
        break;
      case 3:
        EXPECT_EQ(answers_.answer(i).status().code(), absl::StatusCode::kInvalidArgument) << i;
        break;
      default:
        ExpectTranslated(i, 1 + i % 7);
    }
  }
  EXPECT_EQ(scheduler_->queued_texts(), 0);
  EXPECT_EQ(scheduler_->Submit(Tasks({Text(kTexts, 1)})).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace mtserve
