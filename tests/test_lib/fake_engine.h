// A fake DecodeEngine (serving/decode_engine.h) for tests of what decodes through it (the
// scheduler, the core) without a model: a text's first source id is the number of steps it
// decodes for (a negative one the engine refuses), and its hypothesis is its source, with the text
// "text of ID". An EngineLog shared by all the engines records what they did and runs a test's
// hook at the start of every step, on the worker's thread.
#ifndef MTSERVE_TESTS_TEST_LIB_FAKE_ENGINE_H_
#define MTSERVE_TESTS_TEST_LIB_FAKE_ENGINE_H_

#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/model.h"
#include "serving/batch_scheduler.h"
#include "serving/decode_engine.h"

namespace mtserve::testing {

// What the fake engines did, shared by all of them.
class EngineLog {
 public:
  // Called at the start of every step with its number (from 1, over all decodes).
  void SetStepHook(std::function<void(int)> hook) { step_hook_ = std::move(hook); }

  int NextStep() {
    int step;
    {
      absl::MutexLock lock(&mutex_);
      step = ++steps_;
    }
    if (step_hook_) step_hook_(step);
    return step;
  }
  void Started() {
    absl::MutexLock lock(&mutex_);
    ++decodes_;
  }
  void Made() {
    absl::MutexLock lock(&mutex_);
    ++engines_;
  }
  void Added(const std::vector<std::vector<int>>& sources) {
    absl::MutexLock lock(&mutex_);
    std::vector<int> group;
    for (const auto& source : sources) group.push_back(source.front());
    groups_.push_back(std::move(group));
  }
  int steps() const {
    absl::MutexLock lock(&mutex_);
    return steps_;
  }
  int decodes() const {
    absl::MutexLock lock(&mutex_);
    return decodes_;
  }
  int engines() const {
    absl::MutexLock lock(&mutex_);
    return engines_;
  }
  // The first source id of each text of each successful AddInputs call.
  std::vector<std::vector<int>> groups() const {
    absl::MutexLock lock(&mutex_);
    return groups_;
  }

 private:
  mutable absl::Mutex mutex_;
  std::function<void(int)> step_hook_;  // Set before the scheduler starts.
  int steps_ ABSL_GUARDED_BY(mutex_) = 0;
  int decodes_ ABSL_GUARDED_BY(mutex_) = 0;
  int engines_ ABSL_GUARDED_BY(mutex_) = 0;
  std::vector<std::vector<int>> groups_ ABSL_GUARDED_BY(mutex_);
};

// A text finishes after as many steps as its first source id; its hypothesis is its source.
class FakeDecode : public EngineDecode {
 public:
  FakeDecode(EngineLog& log, std::function<bool(int)> stopped)
      : log_(log), stopped_(std::move(stopped)) {}

  absl::StatusOr<std::vector<int>> AddInputs(
      const std::vector<std::vector<int>>& sources,
      const std::vector<std::shared_ptr<const TermConstraints>>& constraints) override {
    for (const auto& source : sources) {
      if (source.front() < 0) return absl::InvalidArgumentError("the engine refuses this text");
    }
    log_.Added(sources);
    std::vector<int> ids;
    for (const auto& source : sources) {
      int id = 0;
      while (inputs_.count(id) > 0) ++id;  // Ids are reused once free.
      inputs_[id] = {source, source.front()};
      ids.push_back(id);
    }
    return ids;
  }

  void Step(std::vector<FinishedSentence>& finished) override {
    log_.NextStep();
    for (auto it = inputs_.begin(); it != inputs_.end();) {
      Input& input = it->second;
      if (stopped_(it->first)) {
        finished.push_back({it->first, {}});
        it = inputs_.erase(it);
        continue;
      }
      if (--input.steps_left > 0) {
        ++it;
        continue;
      }
      Hypothesis hypothesis;
      hypothesis.ids = input.source;
      hypothesis.text = absl::StrCat("text of ", input.source.front());
      finished.push_back({it->first, {hypothesis}});
      it = inputs_.erase(it);
    }
  }

  int TargetTokens(const Hypothesis& hypothesis) const override {
    return static_cast<int>(hypothesis.ids.size()) - 1;  // Without </s>.
  }

 private:
  struct Input {
    std::vector<int> source;
    int steps_left = 0;
  };
  EngineLog& log_;
  const std::function<bool(int)> stopped_;
  std::map<int, Input> inputs_;
};

class FakeEngine : public DecodeEngine {
 public:
  explicit FakeEngine(EngineLog& log) : log_(log) { log_.Made(); }

  absl::StatusOr<std::unique_ptr<EngineDecode>> Start(int /*model*/,
                                                      const DecodingOptions& /*options*/,
                                                      std::function<bool(int)> stopped) override {
    log_.Started();
    return std::make_unique<FakeDecode>(log_, std::move(stopped));
  }

 private:
  EngineLog& log_;
};

// A scheduler of `model` alone: over the real engine, or over `engines` (fake ones) when given.
inline std::unique_ptr<BatchScheduler> SchedulerOf(std::shared_ptr<const Model> model,
                                                   const BatchingOptions& batching,
                                                   DecodeEngineFactory engines) {
  if (engines == nullptr) {
    return std::make_unique<BatchScheduler>(std::vector<std::shared_ptr<const Model>>{model},
                                            batching, nullptr);
  }
  return std::make_unique<BatchScheduler>(std::vector<ModelConfig>{model->config()}, batching,
                                          nullptr, std::move(engines));
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_FAKE_ENGINE_H_
