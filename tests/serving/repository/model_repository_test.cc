// The model repository (serving/repository/model_repository.h) with a loader and a clock the test
// controls: loads held, counted and failed at will, every slot's model the test model (loaded
// once), sizes chosen here. Tests wait for events (callbacks, loads begun) with notifications and
// condition waits whose timeouts only guard against a hang; they never sleep or time anything.
#include "serving/repository/model_repository.h"

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_lib/fake_clock.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using State = ModelRepository::State;

constexpr int64_t kMiB = int64_t{1} << 20;
// Every slot's estimate; what measure() says a loaded model holds.
constexpr int64_t kEstimate = 120 * kMiB;
constexpr int64_t kMeasured = 100 * kMiB;
// Room for two loaded models (2 x 100 measured + 120 estimated = 320 > 250; 100 + 120 = 220).
constexpr int64_t kTwoModels = 250 * kMiB;
// A guard against a hang only: every wait below ends on an event long before.
constexpr absl::Duration kGuard = absl::Seconds(60);

const absl::Time kT0 = testing::FakeClock::Start();

// Loads by slot name: counts its calls, holds a load until the test lets it go, fails on demand,
// else gives the test model.
class TestLoader {
 public:
  explicit TestLoader(std::shared_ptr<const Model> model) : model_(std::move(model)) {}

  absl::StatusOr<std::shared_ptr<const Model>> Load(const ModelRepository::Slot& slot) {
    absl::Notification* gate = nullptr;
    absl::Status failure;
    {
      absl::MutexLock lock(&mu_);
      ++calls_[slot.name];
      gate = gates_[slot.name];
      failure = failures_[slot.name];
    }
    if (gate != nullptr) gate->WaitForNotification();
    if (!failure.ok()) return failure;
    return model_;
  }

  // Loads of `name` from now on wait until the gate returned is notified.
  absl::Notification& Hold(const std::string& name) {
    absl::MutexLock lock(&mu_);
    owned_.push_back(std::make_unique<absl::Notification>());
    gates_[name] = owned_.back().get();
    return *owned_.back();
  }
  // Loads of `name` from now on do not wait.
  void Unhold(const std::string& name) {
    absl::MutexLock lock(&mu_);
    gates_.erase(name);
  }
  // Lets every held load go (before the repository is destroyed, so that a test that failed
  // while holding one ends instead of hanging).
  void OpenAll() {
    absl::MutexLock lock(&mu_);
    for (const auto& gate : owned_) {
      if (!gate->HasBeenNotified()) gate->Notify();
    }
  }
  // Loads of `name` fail with `status` (OK: succeed again).
  void Fail(const std::string& name, absl::Status status) {
    absl::MutexLock lock(&mu_);
    failures_[name] = std::move(status);
  }
  int calls(const std::string& name) const {
    absl::MutexLock lock(&mu_);
    const auto it = calls_.find(name);
    return it == calls_.end() ? 0 : it->second;
  }
  // Waits until `count` loads of `name` have begun.
  bool WaitForCalls(const std::string& name, int count) const {
    absl::MutexLock lock(&mu_);
    auto begun = [this, &name, count] {
      const auto it = calls_.find(name);
      return it != calls_.end() && it->second >= count;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&begun), kGuard);
  }

 private:
  const std::shared_ptr<const Model> model_;
  mutable absl::Mutex mu_;
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Notification*> gates_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> failures_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<absl::Notification>> owned_ ABSL_GUARDED_BY(mu_);
};

// What one `ready` got, and on which thread. Shared with the callback, so a callback the
// repository still holds never outlives it.
struct Answer {
  absl::Notification done;
  absl::StatusOr<std::unique_ptr<ModelRepository::Lease>> lease;
  std::thread::id thread;

  bool Wait() { return done.WaitForNotificationWithTimeout(kGuard); }
  absl::StatusCode code() const { return lease.status().code(); }
  std::string message() const { return std::string(lease.status().message()); }
};

ModelRepository::Ready Into(const std::shared_ptr<Answer>& answer) {
  return [answer](absl::StatusOr<std::unique_ptr<ModelRepository::Lease>> lease) {
    answer->lease = std::move(lease);
    answer->thread = std::this_thread::get_id();
    answer->done.Notify();
  };
}

class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<std::shared_ptr<const Model>>& model = testing::TestModel();
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
    loader_ = std::make_unique<TestLoader>(model_);
  }

  void TearDown() override {
    if (loader_ != nullptr) loader_->OpenAll();
    repository_.reset();
  }

  // Three slots m0, m1, m2 of kEstimate each, within `budget`.
  void Make(int64_t budget, absl::Duration retry_after_failure = absl::Seconds(10)) {
    std::vector<ModelRepository::Slot> slots(3);
    for (int i = 0; i < 3; ++i) {
      slots[i].name = absl::StrCat("m", i);
      slots[i].dir = absl::StrCat("/models/m", i);
      slots[i].estimated_bytes = kEstimate;
    }
    ModelRepository::Options options;
    options.memory_budget = budget;
    options.retry_after_failure = retry_after_failure;
    options.measure = [](const Model&) { return kMeasured; };
    options.unloaded = [this](int slot, int64_t) {
      absl::MutexLock lock(&unloaded_mu_);
      unloaded_.push_back(slot);
    };
    options.clock = [this] { return clock_.Now(); };
    absl::StatusOr<std::unique_ptr<ModelRepository>> repository = ModelRepository::Create(
        std::move(slots), std::move(options),
        [loader = loader_.get()](const ModelRepository::Slot& slot) { return loader->Load(slot); });
    ASSERT_TRUE(repository.ok()) << repository.status();
    repository_ = *std::move(repository);
  }

  std::shared_ptr<Answer> Acquire(int slot, absl::Time deadline = absl::InfiniteFuture()) {
    auto answer = std::make_shared<Answer>();
    repository_->Acquire(slot, deadline, Into(answer));
    return answer;
  }

  // Acquires `slot` and waits for its lease.
  std::unique_ptr<ModelRepository::Lease> Lease(int slot) {
    std::shared_ptr<Answer> answer = Acquire(slot);
    EXPECT_TRUE(answer->Wait());
    EXPECT_TRUE(answer->lease.ok()) << answer->lease.status();
    return answer->lease.ok() ? *std::move(answer->lease) : nullptr;
  }

  // Waits until `slot`'s model was unloaded.
  bool WaitUnloaded(int slot) {
    absl::MutexLock lock(&unloaded_mu_);
    auto unloaded = [this, slot] {
      unloaded_mu_.AssertHeld();
      return std::find(unloaded_.begin(), unloaded_.end(), slot) != unloaded_.end();
    };
    return unloaded_mu_.AwaitWithTimeout(absl::Condition(&unloaded), kGuard);
  }

  // A slot like Make's, named `name`.
  static ModelRepository::Slot NewSlot(const std::string& name) {
    ModelRepository::Slot slot;
    slot.name = name;
    slot.dir = "/models/" + name;
    slot.estimated_bytes = kEstimate;
    return slot;
  }

  std::vector<int> Unloaded() {
    absl::MutexLock lock(&unloaded_mu_);
    return unloaded_;
  }
  // Waits until `count` unloads have been told.
  bool WaitForUnloads(size_t count) {
    absl::MutexLock lock(&unloaded_mu_);
    auto told = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(unloaded_mu_) {
      return unloaded_.size() >= count;
    };
    return unloaded_mu_.AwaitWithTimeout(absl::Condition(&told), kGuard);
  }
  // Load(slot, deadline)'s outcome, once it comes.
  struct Loaded {
    absl::Notification done;
    absl::Status status;
  };
  std::shared_ptr<Loaded> Load(int slot, absl::Time deadline) {
    auto loaded = std::make_shared<Loaded>();
    repository_->Load(slot, deadline, [loaded](absl::Status status) {
      loaded->status = std::move(status);
      loaded->done.Notify();
    });
    return loaded;
  }

  std::shared_ptr<const Model> model_;
  testing::FakeClock clock_;
  std::unique_ptr<TestLoader> loader_;
  absl::Mutex unloaded_mu_;
  std::vector<int> unloaded_ ABSL_GUARDED_BY(unloaded_mu_);
  std::unique_ptr<ModelRepository> repository_;  // Destroyed in TearDown.
};

TEST_F(ModelRepositoryTest, CreateRefusesASlotLargerThanTheBudgetAlone) {
  std::vector<ModelRepository::Slot> slots(2);
  slots[0].name = "small";
  slots[0].estimated_bytes = 200 * kMiB;
  slots[1].name = "big";
  slots[1].estimated_bytes = 300 * kMiB;
  ModelRepository::Options options;
  options.memory_budget = 256 * kMiB;
  auto loader = [](const ModelRepository::Slot&) -> absl::StatusOr<std::shared_ptr<const Model>> {
    return absl::InternalError("never called");
  };
  const absl::StatusOr<std::unique_ptr<ModelRepository>> refused =
      ModelRepository::Create(slots, options, loader);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "model big needs about 300 MiB (estimated), more than --model_memory=256MiB");

  // Without a budget any size is taken; with one that fits, too.
  options.memory_budget = 0;
  EXPECT_TRUE(ModelRepository::Create(slots, options, loader).ok());
  options.memory_budget = 300 * kMiB;
  EXPECT_TRUE(ModelRepository::Create(slots, options, loader).ok());
}

TEST_F(ModelRepositoryTest, NothingIsLoadedAtFirst) {
  Make(kTwoModels);
  ASSERT_EQ(repository_->catalog()->slots.size(), 3u);
  EXPECT_EQ(repository_->catalog()->slots[1].name, "m1");
  EXPECT_THAT(repository_->catalog()->served, ElementsAre(0, 1, 2));
  for (int slot = 0; slot < 3; ++slot) {
    EXPECT_EQ(repository_->status(slot).state, State::kAvailable);
    EXPECT_EQ(repository_->Loaded(slot), nullptr);
  }
  EXPECT_EQ(repository_->resident_bytes(), 0);
  EXPECT_EQ(loader_->calls("m0"), 0);
}

TEST_F(ModelRepositoryTest, AcquireOfALoadedModelAnswersAtOnceOnTheCallingThread) {
  Make(kTwoModels);
  ASSERT_TRUE(repository_->LoadNow(0).ok());
  std::shared_ptr<Answer> answer = Acquire(0);
  // Answered before Acquire returned, here.
  ASSERT_TRUE(answer->done.HasBeenNotified());
  EXPECT_EQ(answer->thread, std::this_thread::get_id());
  ASSERT_TRUE(answer->lease.ok()) << answer->lease.status();
  EXPECT_EQ((*answer->lease)->slot(), 0);
  EXPECT_EQ((*answer->lease)->model(), model_);
  EXPECT_EQ(repository_->status(0).leases, 1);
  EXPECT_EQ(loader_->calls("m0"), 1);

  answer->lease = absl::CancelledError("lease dropped");
  EXPECT_EQ(repository_->status(0).leases, 0);
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
}

TEST_F(ModelRepositoryTest, AModelIsLoadedOnTheLoaderThreadWhenFirstAcquired) {
  Make(kTwoModels);
  std::shared_ptr<Answer> answer = Acquire(1);
  ASSERT_TRUE(answer->Wait());
  ASSERT_TRUE(answer->lease.ok()) << answer->lease.status();
  EXPECT_NE(answer->thread, std::this_thread::get_id());
  EXPECT_EQ((*answer->lease)->model(), model_);
  EXPECT_EQ(repository_->Loaded(1), model_);

  // It counts what measure() says, not its estimate.
  const ModelRepository::SlotStatus status = repository_->status(1);
  EXPECT_EQ(status.state, State::kLoaded);
  EXPECT_EQ(status.resident_bytes, kMeasured);
  EXPECT_EQ(status.leases, 1);
  EXPECT_EQ(repository_->resident_bytes(), kMeasured);
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
}

TEST_F(ModelRepositoryTest, ConcurrentAcquiresOfAModelLoadingCauseOneLoad) {
  Make(kTwoModels);
  absl::Notification& gate = loader_->Hold("m0");
  std::shared_ptr<Answer> first = Acquire(0);
  ASSERT_TRUE(loader_->WaitForCalls("m0", 1));
  EXPECT_EQ(repository_->status(0).state, State::kLoading);
  EXPECT_EQ(repository_->resident_bytes(), 0);

  // Four more requests from four threads while it loads.
  std::vector<std::shared_ptr<Answer>> answers = {first};
  for (int i = 0; i < 4; ++i) answers.push_back(std::make_shared<Answer>());
  std::vector<std::thread> threads;
  for (int i = 1; i <= 4; ++i) {
    threads.emplace_back([this, answer = answers[i]] {
      repository_->Acquire(0, absl::InfiniteFuture(), Into(answer));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& answer : answers) EXPECT_FALSE(answer->done.HasBeenNotified());

  gate.Notify();
  for (const auto& answer : answers) {
    ASSERT_TRUE(answer->Wait());
    ASSERT_TRUE(answer->lease.ok()) << answer->lease.status();
    EXPECT_EQ((*answer->lease)->model(), model_);
  }
  EXPECT_EQ(loader_->calls("m0"), 1);
  EXPECT_EQ(repository_->status(0).leases, 5);
  // The leases end (their callbacks may still be held a moment by the loader thread).
  for (const auto& answer : answers) answer->lease = absl::CancelledError("done with it");
  EXPECT_EQ(repository_->status(0).leases, 0);
}

TEST_F(ModelRepositoryTest, ModelsThatFitTogetherStayLoaded) {
  // Three measured models (300 MiB) fit 330 MiB; so does the third's load beside two (100 + 100
  // + 120 estimated): nothing is unloaded. By the estimates alone (360) it would not fit.
  Make(330 * kMiB);
  for (int slot = 0; slot < 3; ++slot) ASSERT_NE(Lease(slot), nullptr);
  EXPECT_EQ(repository_->resident_bytes(), 3 * kMeasured);
  EXPECT_THAT(Unloaded(), IsEmpty());
}

TEST_F(ModelRepositoryTest, TheLeastRecentlyUsedIdleModelIsUnloadedForAnother) {
  Make(kTwoModels);
  ASSERT_NE(Lease(0), nullptr);  // Used (and released) at kT0.
  clock_.Advance(absl::Seconds(1));
  ASSERT_NE(Lease(1), nullptr);  // At kT0 + 1 s.
  clock_.Advance(absl::Seconds(1));
  ASSERT_NE(Lease(0), nullptr);  // Loaded already: at once; m0 is now the more recent.
  EXPECT_EQ(loader_->calls("m0"), 1);
  EXPECT_EQ(repository_->resident_bytes(), 2 * kMeasured);
  clock_.Advance(absl::Seconds(1));

  // 100 + 100 + 120 > 250: m1, the least recently used, goes.
  std::unique_ptr<ModelRepository::Lease> lease = Lease(2);
  ASSERT_NE(lease, nullptr);
  EXPECT_THAT(Unloaded(), ElementsAre(1));
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);
  EXPECT_EQ(repository_->status(1).resident_bytes, 0);
  EXPECT_EQ(repository_->Loaded(1), nullptr);
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
  EXPECT_EQ(repository_->status(2).state, State::kLoaded);
  EXPECT_EQ(repository_->resident_bytes(), 2 * kMeasured);

  // m1 again: m0 is now the least recently used idle one (m2 is leased).
  ASSERT_NE(Lease(1), nullptr);
  EXPECT_THAT(Unloaded(), ElementsAre(1, 0));
  EXPECT_EQ(loader_->calls("m1"), 2);
}

TEST_F(ModelRepositoryTest, AModelWithALeaseIsNeverUnloadedEvenIfLeastRecentlyUsed) {
  Make(kTwoModels);
  std::unique_ptr<ModelRepository::Lease> held = Lease(0);  // The oldest use, still held.
  ASSERT_NE(held, nullptr);
  clock_.Advance(absl::Seconds(1));
  ASSERT_NE(Lease(1), nullptr);
  clock_.Advance(absl::Seconds(1));

  ASSERT_NE(Lease(2), nullptr);
  EXPECT_THAT(Unloaded(), ElementsAre(1));
  EXPECT_EQ(repository_->Loaded(0), model_);
  EXPECT_EQ(repository_->status(0).leases, 1);
}

TEST_F(ModelRepositoryTest, WhenEveryLoadedModelIsLeasedARequestWaitsForALeaseToEnd) {
  Make(kTwoModels);
  std::unique_ptr<ModelRepository::Lease> lease0 = Lease(0);
  std::unique_ptr<ModelRepository::Lease> lease1 = Lease(1);
  ASSERT_NE(lease0, nullptr);
  ASSERT_NE(lease1, nullptr);

  std::shared_ptr<Answer> waiting = Acquire(2);
  // LoadNow of the same slot does not wait for room: its UNAVAILABLE says the loader thread has
  // weighed m2 against the budget, with the request above waiting (it was queued first).
  const absl::Status now = repository_->LoadNow(2);
  EXPECT_EQ(now.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(now.message(), HasSubstr("--model_memory=250MiB"));
  EXPECT_THAT(now.message(), HasSubstr("model m2"));
  EXPECT_FALSE(waiting->done.HasBeenNotified());
  EXPECT_EQ(loader_->calls("m2"), 0);
  EXPECT_EQ(repository_->status(2).state, State::kLoading);
  EXPECT_THAT(Unloaded(), IsEmpty());

  // m1's lease ends: m1 goes, m2 comes, and the request gets it.
  lease1.reset();
  ASSERT_TRUE(waiting->Wait());
  ASSERT_TRUE(waiting->lease.ok()) << waiting->lease.status();
  EXPECT_EQ((*waiting->lease)->slot(), 2);
  EXPECT_THAT(Unloaded(), ElementsAre(1));
  EXPECT_EQ(repository_->status(0).leases, 1);
  EXPECT_EQ(repository_->status(2).leases, 1);
  EXPECT_EQ(repository_->resident_bytes(), 2 * kMeasured);
}

TEST_F(ModelRepositoryTest, ARequestWaitingForRoomFailsUnavailableAtItsDeadline) {
  Make(kTwoModels);
  std::unique_ptr<ModelRepository::Lease> lease0 = Lease(0);
  std::unique_ptr<ModelRepository::Lease> lease1 = Lease(1);
  ASSERT_NE(lease0, nullptr);
  ASSERT_NE(lease1, nullptr);

  std::shared_ptr<Answer> waiting = Acquire(2, clock_.Now() + absl::Milliseconds(1));
  EXPECT_FALSE(waiting->done.HasBeenNotified());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(waiting->Wait());
  EXPECT_EQ(waiting->code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(waiting->message(), HasSubstr("--model_memory=250MiB"));
  EXPECT_THAT(waiting->message(), HasSubstr("model m2"));
  // Nothing was unloaded or loaded for it; with no one waiting, m2 is no longer to load.
  EXPECT_THAT(Unloaded(), IsEmpty());
  EXPECT_EQ(loader_->calls("m2"), 0);
  EXPECT_EQ(repository_->status(2).state, State::kAvailable);
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
}

TEST_F(ModelRepositoryTest, ARequestWaitingForALoadFailsDeadlineExceededAndTheLoadGoesOn) {
  Make(kTwoModels);
  absl::Notification& gate = loader_->Hold("m0");
  std::shared_ptr<Answer> waiting = Acquire(0, clock_.Now() + absl::Milliseconds(1));
  ASSERT_TRUE(loader_->WaitForCalls("m0", 1));
  clock_.Advance(absl::Seconds(1));
  // Answered while the load is still held.
  ASSERT_TRUE(waiting->Wait());
  EXPECT_EQ(waiting->code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(waiting->message(), HasSubstr("m0"));
  EXPECT_EQ(repository_->status(0).state, State::kLoading);

  gate.Notify();
  // The load completes and serves the next request at once.
  ASSERT_NE(Lease(0), nullptr);
  EXPECT_EQ(loader_->calls("m0"), 1);
}

TEST_F(ModelRepositoryTest, ARequestWhoseDeadlineHasPassedFailsAtOnce) {
  Make(kTwoModels);
  std::shared_ptr<Answer> late = Acquire(0, clock_.Now());
  ASSERT_TRUE(late->done.HasBeenNotified());
  EXPECT_EQ(late->code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(loader_->calls("m0"), 0);
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
}

TEST_F(ModelRepositoryTest, AFailedLoadFailsItsWaitersThenAnswersAtOnceUntilRetryIsDue) {
  Make(kTwoModels, /*retry_after_failure=*/absl::Seconds(10));
  const absl::Status broken =
      absl::NotFoundError("/models/m1/config.json: no such file (reading config)");
  loader_->Fail("m1", broken);
  absl::Notification& gate = loader_->Hold("m1");
  std::shared_ptr<Answer> first = Acquire(1);
  ASSERT_TRUE(loader_->WaitForCalls("m1", 1));
  std::shared_ptr<Answer> second = Acquire(1);
  gate.Notify();
  for (const auto& answer : {first, second}) {
    ASSERT_TRUE(answer->Wait());
    EXPECT_EQ(answer->lease.status(), broken);
  }
  EXPECT_EQ(repository_->status(1).state, State::kFailed);
  EXPECT_EQ(repository_->status(1).failure, broken.message());
  EXPECT_EQ(repository_->resident_bytes(), 0);
  loader_->Unhold("m1");
  loader_->Fail("m1", absl::OkStatus());  // Would load now, but not before the retry is due.

  // 9.999 s later: the same error at once, on this thread, without a load.
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  std::shared_ptr<Answer> early = Acquire(1);
  ASSERT_TRUE(early->done.HasBeenNotified());
  EXPECT_EQ(early->thread, std::this_thread::get_id());
  EXPECT_EQ(early->lease.status(), broken);
  EXPECT_EQ(repository_->LoadNow(1), broken);
  EXPECT_EQ(loader_->calls("m1"), 1);

  // 10 s after the failure: tried again.
  clock_.Advance(absl::Milliseconds(1));
  std::unique_ptr<ModelRepository::Lease> lease = Lease(1);
  ASSERT_NE(lease, nullptr);
  EXPECT_EQ(loader_->calls("m1"), 2);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
  EXPECT_EQ(repository_->status(1).failure, "");
}

TEST_F(ModelRepositoryTest, LoadNowLoadsAndWaitsWithoutHoldingALease) {
  Make(kTwoModels);
  EXPECT_TRUE(repository_->LoadNow(2).ok());
  EXPECT_EQ(loader_->calls("m2"), 1);
  const ModelRepository::SlotStatus status = repository_->status(2);
  EXPECT_EQ(status.state, State::kLoaded);
  EXPECT_EQ(status.leases, 0);
  EXPECT_EQ(status.resident_bytes, kMeasured);
  EXPECT_EQ(repository_->Loaded(2), model_);
  // Again: already loaded, no second load.
  EXPECT_TRUE(repository_->LoadNow(2).ok());
  EXPECT_EQ(loader_->calls("m2"), 1);

  // A failing load: its error.
  const absl::Status broken = absl::InvalidArgumentError("bad checkpoint");
  loader_->Fail("m0", broken);
  EXPECT_EQ(repository_->LoadNow(0), broken);
  EXPECT_EQ(repository_->status(0).state, State::kFailed);
}

TEST_F(ModelRepositoryTest, LoadNowUnloadsIdleModelsAsAcquireDoes) {
  Make(kTwoModels);
  ASSERT_TRUE(repository_->LoadNow(0).ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(repository_->LoadNow(1).ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(repository_->LoadNow(2).ok());
  EXPECT_THAT(Unloaded(), ElementsAre(0));
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
  EXPECT_EQ(repository_->resident_bytes(), 2 * kMeasured);
}

TEST_F(ModelRepositoryTest, UnloadOfAnIdleModelUnloadsItAtOnceAndARequestLoadsItAgain) {
  Make(kTwoModels);
  ASSERT_TRUE(repository_->LoadNow(1).ok());
  ASSERT_TRUE(repository_->Unload(1).ok());
  // Done before Unload returned, and told.
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);
  EXPECT_EQ(repository_->Loaded(1), nullptr);
  EXPECT_EQ(repository_->resident_bytes(), 0);
  EXPECT_THAT(Unloaded(), ElementsAre(1));

  // Not disabled: the next request loads it again.
  ASSERT_NE(Lease(1), nullptr);
  EXPECT_EQ(loader_->calls("m1"), 2);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
}

TEST_F(ModelRepositoryTest, UnloadOfALeasedModelWaitsForItsLeasesToEnd) {
  Make(kTwoModels);
  std::unique_ptr<ModelRepository::Lease> first = Lease(0);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(repository_->Unload(0).ok());
  ModelRepository::SlotStatus status = repository_->status(0);
  EXPECT_EQ(status.state, State::kLoaded);
  EXPECT_TRUE(status.unload_pending);
  EXPECT_EQ(repository_->Loaded(0), model_);
  EXPECT_THAT(Unloaded(), IsEmpty());

  // A request meanwhile still takes it, without a load.
  std::unique_ptr<ModelRepository::Lease> second = Lease(0);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(loader_->calls("m0"), 1);

  first.reset();
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);  // One lease left.
  second.reset();
  // The last lease's end: the loader thread unloads it.
  ASSERT_TRUE(WaitForUnloads(1));
  EXPECT_THAT(Unloaded(), ElementsAre(0));
  status = repository_->status(0);
  EXPECT_EQ(status.state, State::kAvailable);
  EXPECT_FALSE(status.unload_pending);
  EXPECT_EQ(repository_->Loaded(0), nullptr);

  // Loaded again on demand, and not unloaded when that request's lease ends.
  ASSERT_NE(Lease(0), nullptr);
  EXPECT_EQ(loader_->calls("m0"), 2);
  ASSERT_NE(Lease(1), nullptr);  // The loader thread has run its loop again since.
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
  EXPECT_THAT(Unloaded(), ElementsAre(0));
}

TEST_F(ModelRepositoryTest, UnloadOfAModelNotLoadedDoesNothingAndOfOneLoadingIsRefused) {
  Make(kTwoModels);
  EXPECT_TRUE(repository_->Unload(2).ok());
  EXPECT_EQ(repository_->status(2).state, State::kAvailable);
  EXPECT_EQ(repository_->Unload(3).code(), absl::StatusCode::kInvalidArgument);

  absl::Notification& gate = loader_->Hold("m0");
  std::shared_ptr<Answer> loading = Acquire(0);
  ASSERT_TRUE(loader_->WaitForCalls("m0", 1));
  const absl::Status refused = repository_->Unload(0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("model m0 is loading"));
  gate.Notify();
  ASSERT_TRUE(loading->Wait());
  EXPECT_TRUE(loading->lease.ok());
  EXPECT_THAT(Unloaded(), IsEmpty());
}

TEST_F(ModelRepositoryTest, AnUnloadMakesRoomForALoadWaitingForIt) {
  Make(kTwoModels);
  std::unique_ptr<ModelRepository::Lease> lease0 = Lease(0);
  std::unique_ptr<ModelRepository::Lease> lease1 = Lease(1);
  ASSERT_NE(lease0, nullptr);
  ASSERT_NE(lease1, nullptr);
  std::shared_ptr<Answer> waiting = Acquire(2);
  ASSERT_TRUE(repository_->Unload(1).ok());
  EXPECT_FALSE(waiting->done.HasBeenNotified());
  lease1.reset();
  ASSERT_TRUE(waiting->Wait());
  ASSERT_TRUE(waiting->lease.ok()) << waiting->lease.status();
  EXPECT_THAT(Unloaded(), ElementsAre(1));
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);
}

TEST_F(ModelRepositoryTest, LoadAnswersWithoutALeaseAndRefusesAtOnceWithoutRoom) {
  Make(kTwoModels);
  std::shared_ptr<Loaded> loaded = Load(0, absl::InfiniteFuture());
  ASSERT_TRUE(loaded->done.WaitForNotificationWithTimeout(kGuard));
  EXPECT_TRUE(loaded->status.ok()) << loaded->status;
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
  EXPECT_EQ(repository_->status(0).leases, 0);
  // Loaded already: answered at once.
  EXPECT_TRUE(Load(0, absl::InfiniteFuture())->done.HasBeenNotified());

  // With both loaded models leased there is no room for m2: UNAVAILABLE, not a wait.
  std::unique_ptr<ModelRepository::Lease> lease0 = Lease(0);
  std::unique_ptr<ModelRepository::Lease> lease1 = Lease(1);
  std::shared_ptr<Loaded> no_room = Load(2, absl::InfiniteFuture());
  ASSERT_TRUE(no_room->done.WaitForNotificationWithTimeout(kGuard));
  EXPECT_EQ(no_room->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(no_room->status.message(), HasSubstr("--model_memory=250MiB"));
  EXPECT_EQ(loader_->calls("m2"), 0);
  EXPECT_EQ(repository_->status(2).state, State::kAvailable);
}

TEST_F(ModelRepositoryTest, LoadFailsDeadlineExceededWhenItsDeadlinePassesDuringTheLoad) {
  Make(kTwoModels);
  absl::Notification& gate = loader_->Hold("m1");
  std::shared_ptr<Loaded> loaded = Load(1, clock_.Now() + absl::Milliseconds(1));
  ASSERT_TRUE(loader_->WaitForCalls("m1", 1));
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(loaded->done.WaitForNotificationWithTimeout(kGuard));
  EXPECT_EQ(loaded->status.code(), absl::StatusCode::kDeadlineExceeded);
  gate.Notify();
  ASSERT_NE(Lease(1), nullptr);  // The load went on.
  EXPECT_EQ(loader_->calls("m1"), 1);
}

TEST_F(ModelRepositoryTest, TheDestructorAnswersWaitingRequestsUnavailable) {
  Make(kTwoModels);
  absl::Notification& gate = loader_->Hold("m0");
  std::shared_ptr<Answer> loading = Acquire(0);
  ASSERT_TRUE(loader_->WaitForCalls("m0", 1));
  std::shared_ptr<Answer> queued = Acquire(1);  // Behind m0's load.

  // The destructor answers both at once, then waits for the held load to end.
  std::thread stopping([this] { repository_.reset(); });
  for (const auto& answer : {loading, queued}) {
    if (!answer->Wait()) {
      ADD_FAILURE() << "not answered";
      continue;
    }
    EXPECT_EQ(answer->code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(answer->message(), HasSubstr("the server is shutting down"));
  }
  gate.Notify();
  stopping.join();
  EXPECT_EQ(loader_->calls("m1"), 0);
}

// A slot added while serving comes after the others and loads when first needed.
TEST_F(ModelRepositoryTest, AddServesANewSlotAfterTheOthers) {
  Make(kTwoModels);
  const absl::StatusOr<int> added = repository_->Add(NewSlot("m3"));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, 3);
  EXPECT_THAT(repository_->catalog()->served, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(repository_->catalog()->slots[3].name, "m3");
  EXPECT_EQ(repository_->status(3).state, State::kAvailable);
  EXPECT_EQ(loader_->calls("m3"), 0);
  EXPECT_NE(Lease(3), nullptr);
  EXPECT_EQ(loader_->calls("m3"), 1);

  // One that could never fit is refused, and nothing changes.
  ModelRepository::Slot big = NewSlot("big");
  big.estimated_bytes = 300 * kMiB;
  EXPECT_EQ(repository_->Add(big).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(repository_->catalog()->served, ElementsAre(0, 1, 2, 3));
}

// A slot replaced (its folder changed) keeps serving the requests that hold it, then is unloaded;
// the new one takes its place in the order, and a request for the old one that holds no lease
// is told to retry.
TEST_F(ModelRepositoryTest, AReplacedSlotFinishesItsLeasesThenUnloads) {
  Make(0);
  std::unique_ptr<ModelRepository::Lease> held = Lease(1);
  ASSERT_NE(held, nullptr);
  const absl::StatusOr<int> added = repository_->Add(NewSlot("m1"), /*replaces=*/1);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, 3);
  EXPECT_THAT(repository_->catalog()->served, ElementsAre(0, 3, 2));
  // Still loaded while held; a request that chose it just before gets it too.
  EXPECT_NE(repository_->Loaded(1), nullptr);
  std::unique_ptr<ModelRepository::Lease> late = Lease(1);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->model(), held->model());
  held.reset();
  EXPECT_THAT(Unloaded(), IsEmpty());
  late.reset();
  ASSERT_TRUE(WaitUnloaded(1));
  EXPECT_EQ(repository_->Loaded(1), nullptr);
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);
  // Never loaded again.
  std::shared_ptr<Answer> answer = Acquire(1);
  ASSERT_TRUE(answer->Wait());
  EXPECT_EQ(answer->code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(answer->message(), HasSubstr("model m1 was replaced or removed"));
  EXPECT_EQ(loader_->calls("m1"), 1);
  // The new one loads on its own.
  EXPECT_NE(Lease(3), nullptr);
  EXPECT_EQ(loader_->calls("m1"), 2);
}

// Retired without leases: unloaded at once; a load queued for it is given up.
TEST_F(ModelRepositoryTest, RetireUnloadsAnIdleModelAndDropsAQueuedLoad) {
  Make(0);
  ASSERT_NE(Lease(0), nullptr);  // Loaded, no lease left.
  repository_->Retire(0);
  EXPECT_THAT(repository_->catalog()->served, ElementsAre(1, 2));
  ASSERT_TRUE(WaitUnloaded(0));

  absl::Notification& gate = loader_->Hold("m1");
  std::shared_ptr<Answer> loading = Acquire(1);
  ASSERT_TRUE(loader_->WaitForCalls("m1", 1));
  std::shared_ptr<Answer> queued = Acquire(2);
  repository_->Retire(2);
  ASSERT_TRUE(queued->Wait());
  EXPECT_EQ(queued->code(), absl::StatusCode::kUnavailable);
  gate.Notify();
  ASSERT_TRUE(loading->Wait());
  EXPECT_TRUE(loading->lease.ok());
  EXPECT_EQ(loader_->calls("m2"), 0);
}

}  // namespace
}  // namespace mtserve
