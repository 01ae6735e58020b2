// The operators' calls of the serving core (TranslationCore::LoadModel and UnloadModel): each
// status they answer, over a repository of two slots of the test model within a budget that holds
// one loaded model, with API keys from a file of an admin key and a plain one. The repository's
// own rules (leases, the budget) are tested in tests/serving/repository/model_repository_test.cc.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/metrics.h"
#include "serving/repository/model_repository.h"
#include "serving/translation_core.h"
#include "tests/test_lib/fake_engine.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using State = ModelRepository::State;

constexpr int64_t kMiB = int64_t{1} << 20;
// A guard against a hang only.
constexpr absl::Duration kGuard = absl::Seconds(60);

// SHA-256 of "ops-key" and "user-key" (printf %s ops-key | sha256sum).
constexpr char kKeys[] =
    "ops sha256:2c69bc9111c27110a9b9a7974ba3f8ac0c053c16b23a0738115ee829fbc4d57b admin=true\n"
    "user sha256:0845e3658edc1c91bfc9d172eeae3e60417056b1b7fe9909c00e05023adb7f1d\n";

class CoreAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Model> model, testing::TestModel());
    // Two slots, each estimated at 120 MiB and measured at 100 MiB once loaded: 150 MiB holds
    // one, and a second's load needs the first unloaded.
    std::vector<ModelRepository::Slot> slots(2);
    for (int i = 0; i < 2; ++i) {
      slots[i].name = absl::StrCat("m", i);
      slots[i].dir = model->dir();
      slots[i].config = model->config();
      slots[i].estimated_bytes = 120 * kMiB;
    }
    ModelRepository::Options options;
    options.memory_budget = 150 * kMiB;
    options.measure = [](const Model&) { return 100 * kMiB; };
    ASSERT_OK_AND_ASSIGN(
        repository_,
        ModelRepository::Create(std::move(slots), std::move(options),
                                [model](const ModelRepository::Slot&) {
                                  return absl::StatusOr<std::shared_ptr<const Model>>(model);
                                }));
    scheduler_ = std::make_unique<BatchScheduler>(
        std::vector<ModelConfig>{model->config(), model->config()}, BatchingOptions(), nullptr,
        [this] { return std::make_unique<testing::FakeEngine>(log_); });
    metrics_ = Metrics::Create();
    core_ = std::make_unique<TranslationCore>(RequestLimits(), 100, 0, metrics_.get(), &drain_);
    dir_.Write("keys", kKeys);
    ASSERT_OK_AND_ASSIGN(
        keys_, ApiKeyAuthenticator::Start(dir_.File("keys"), absl::Hours(1), metrics_.get()));
  }

  void TearDown() override {
    core_.reset();
    scheduler_->Stop();
  }

  // With keys required (as a server with --api_keys_file), serving.
  void Serve() {
    core_->RequireApiKeys(keys_.get());
    core_->StartServing(repository_.get(), scheduler_.get());
  }

  static TranslationCore::ModelCall Call(std::string model, std::optional<std::string> key,
                                         std::string method = "LoadModel") {
    TranslationCore::ModelCall call;
    call.model = std::move(model);
    call.api_key = std::move(key);
    call.method = std::move(method);
    call.frontend = Frontend::kHttp;
    return call;
  }

  // LoadModel's answer, waited for.
  absl::StatusOr<int> Load(TranslationCore::ModelCall call) {
    absl::Notification done;
    absl::StatusOr<int> slot;
    core_->LoadModel(std::move(call), [&](absl::StatusOr<int> answer) {
      slot = std::move(answer);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(kGuard));
    return slot;
  }
  absl::StatusOr<int> Unload(const std::string& model, std::optional<std::string> key) {
    return core_->UnloadModel(Call(model, std::move(key), "UnloadModel"));
  }

  testing::TempDir dir_;
  testing::EngineLog log_;
  DrainGate drain_;
  std::unique_ptr<ModelRepository> repository_;
  std::unique_ptr<BatchScheduler> scheduler_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<ApiKeyAuthenticator> keys_;
  std::unique_ptr<TranslationCore> core_;
};

void ExpectError(const absl::StatusOr<int>& answer, absl::StatusCode code,
                 const std::vector<std::string>& parts) {
  ASSERT_FALSE(answer.ok()) << "expected " << absl::StatusCodeToString(code);
  EXPECT_EQ(answer.status().code(), code) << answer.status();
  for (const std::string& part : parts) EXPECT_THAT(answer.status().message(), HasSubstr(part));
}

TEST_F(CoreAdminTest, WithoutApiKeysTheCallsDoNotExist) {
  core_->StartServing(repository_.get(), scheduler_.get());
  ExpectError(Load(Call("m0", "ops-key")), absl::StatusCode::kUnimplemented,
              {"LoadModel exists only on a server with API keys (--api_keys_file)", "admin=true"});
  ExpectError(Unload("m0", std::nullopt), absl::StatusCode::kUnimplemented,
              {"UnloadModel exists only"});
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
}

TEST_F(CoreAdminTest, NoKeyOrAnUnknownOneIsUnauthenticated) {
  Serve();
  ExpectError(Load(Call("m0", std::nullopt)), absl::StatusCode::kUnauthenticated,
              {"an API key is required"});
  ExpectError(Unload("m0", "mallory-key"), absl::StatusCode::kUnauthenticated,
              {"the API key is not valid"});
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
}

TEST_F(CoreAdminTest, AKeyWithoutTheAdminAttributeIsDeniedByName) {
  Serve();
  const absl::StatusOr<int> denied = Load(Call("m0", "user-key"));
  ExpectError(denied, absl::StatusCode::kPermissionDenied,
              {"the API key \"user\" lacks the admin attribute", "LoadModel"});
  EXPECT_THAT(denied.status().message(), Not(HasSubstr("user-key")));
  ExpectError(Unload("m0", "user-key"), absl::StatusCode::kPermissionDenied,
              {"\"user\" lacks the admin attribute"});
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
}

TEST_F(CoreAdminTest, AModelNotServedIsNotFoundByNameAndANameIsRequired) {
  Serve();
  ExpectError(Load(Call("no-such", "ops-key")), absl::StatusCode::kNotFound,
              {"model \"no-such\" is not served", "m0, m1"});
  ExpectError(Unload("no-such", "ops-key"), absl::StatusCode::kNotFound, {"\"no-such\""});
  ExpectError(Load(Call("", "ops-key")), absl::StatusCode::kInvalidArgument, {"name: required"});
}

TEST_F(CoreAdminTest, UnavailableBeforeServing) {
  core_->RequireApiKeys(keys_.get());
  ExpectError(Load(Call("m0", "ops-key")), absl::StatusCode::kUnavailable, {"loading"});
}

TEST_F(CoreAdminTest, AnAdminLoadsAndUnloadsAndTheCallsAreCounted) {
  Serve();
  ASSERT_OK_AND_ASSIGN(const int loaded, Load(Call("m1", "ops-key")));
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
  EXPECT_EQ(repository_->status(1).leases, 0);
  // Again: nothing to do, the same answer.
  ASSERT_OK_AND_ASSIGN(const int again, Load(Call("m1", "ops-key")));
  EXPECT_EQ(again, 1);

  ASSERT_OK_AND_ASSIGN(const int unloaded, Unload("m1", "ops-key"));
  EXPECT_EQ(unloaded, 1);
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);

  // Counted as other calls are: by front end, model, method and code.
  const std::string scraped = metrics_->Scrape();
  EXPECT_THAT(scraped, HasSubstr("mtserve_requests_total{code=\"OK\",frontend=\"http\",method="
                                 "\"LoadModel\",model=\"m1\"} 2"));
  EXPECT_THAT(scraped, HasSubstr("mtserve_requests_total{code=\"OK\",frontend=\"http\",method="
                                 "\"UnloadModel\",model=\"m1\"} 1"));
}

TEST_F(CoreAdminTest, UnloadOfAModelARequestHoldsWaitsForItsEnd) {
  Serve();
  ASSERT_TRUE(Load(Call("m0", "ops-key")).ok());
  // A request holding m0 (its lease, as the core's Acquire takes one).
  absl::Notification leased;
  std::unique_ptr<ModelRepository::Lease> lease;
  repository_->Acquire(0, absl::InfiniteFuture(),
                       [&](absl::StatusOr<std::unique_ptr<ModelRepository::Lease>> answer) {
                         if (answer.ok()) lease = *std::move(answer);
                         leased.Notify();
                       });
  ASSERT_TRUE(leased.WaitForNotificationWithTimeout(kGuard));
  ASSERT_NE(lease, nullptr);

  ASSERT_TRUE(Unload("m0", "ops-key").ok());
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
  EXPECT_TRUE(repository_->status(0).unload_pending);

  // While m0 is held, m1 has no room: UNAVAILABLE at once, naming the budget.
  ExpectError(Load(Call("m1", "ops-key")), absl::StatusCode::kUnavailable,
              {"no room for model m1", "--model_memory=150MiB"});
  EXPECT_EQ(repository_->status(1).state, State::kAvailable);

  // Once the request ends, m0 goes, and m1 then loads.
  lease.reset();
  ASSERT_OK_AND_ASSIGN(const int loaded, Load(Call("m1", "ops-key")));
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
}

TEST_F(CoreAdminTest, LoadingWithinTheBudgetUnloadsTheIdleModelAsARequestDoes) {
  Serve();
  ASSERT_TRUE(Load(Call("m0", "ops-key")).ok());
  ASSERT_TRUE(Load(Call("m1", "ops-key")).ok());
  EXPECT_EQ(repository_->status(0).state, State::kAvailable);
  EXPECT_EQ(repository_->status(1).state, State::kLoaded);
}

TEST_F(CoreAdminTest, AnAdminKeyOverItsRequestLimitIsRefused) {
  dir_.Write("keys",
             "ops sha256:2c69bc9111c27110a9b9a7974ba3f8ac0c053c16b23a0738115ee829fbc4d57b "
             "admin=true requests_per_minute=1\n");
  ASSERT_TRUE(keys_->Reload().ok());
  Serve();
  ASSERT_TRUE(Load(Call("m0", "ops-key")).ok());
  ExpectError(Unload("m0", "ops-key"), absl::StatusCode::kResourceExhausted, {});
  EXPECT_EQ(repository_->status(0).state, State::kLoaded);
}

}  // namespace
}  // namespace mtserve
