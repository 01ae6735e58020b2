// The model repository's budget rules (serving/repository/model_budget.h) with explicit sizes and
// times: what fits, what is unloaded first, what never is. Sizes are in bytes; each expectation is
// worked out by hand in its comment.
#include "serving/repository/model_budget.h"

#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = ModelBudget::SlotUse::Kind;
using Outcome = ModelBudget::Plan::Outcome;

const absl::Time kT0 = absl::FromUnixSeconds(1000000);

// A loaded model of `bytes` held by `leases` requests, last used `seconds` after kT0.
ModelBudget::SlotUse Loaded(int64_t bytes, int leases, int seconds) {
  ModelBudget::SlotUse use;
  use.kind = Kind::kLoaded;
  use.bytes = bytes;
  use.leases = leases;
  use.last_used = kT0 + absl::Seconds(seconds);
  return use;
}

ModelBudget::SlotUse Loading(int64_t estimated_bytes) {
  ModelBudget::SlotUse use;
  use.kind = Kind::kLoading;
  use.bytes = estimated_bytes;
  return use;
}

ModelBudget::SlotUse NotLoaded() { return ModelBudget::SlotUse(); }

TEST(ModelBudgetTest, WithoutABudgetEverythingFits) {
  const ModelBudget budget(0);
  EXPECT_TRUE(budget.FitsAlone(int64_t{1} << 50));
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(1000, 0, 1), Loaded(1000, 1, 2), NotLoaded()}, 2, int64_t{1} << 50);
  EXPECT_EQ(plan.outcome, Outcome::kFits);
  EXPECT_THAT(plan.unload, IsEmpty());
}

TEST(ModelBudgetTest, AModelFitsAloneUpToTheBudget) {
  const ModelBudget budget(500);
  EXPECT_TRUE(budget.FitsAlone(499));
  EXPECT_TRUE(budget.FitsAlone(500));
  EXPECT_FALSE(budget.FitsAlone(501));
}

TEST(ModelBudgetTest, UsedCountsLoadedBytesAndLoadingEstimates) {
  // 300 loaded + 200 loading; the not-loaded slot's stale bytes do not count: 500.
  ModelBudget::SlotUse stale = NotLoaded();
  stale.bytes = 7000;
  EXPECT_EQ(ModelBudget::Used({Loaded(300, 2, 1), Loading(200), stale}), 500);
  EXPECT_EQ(ModelBudget::Used({}), 0);
}

TEST(ModelBudgetTest, AModelThatFitsBesideTheLoadedOnesUnloadsNothing) {
  const ModelBudget budget(1000);
  // 300 + 200 loaded, 500 to load: exactly 1000.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(300, 1, 1), Loaded(200, 0, 2), NotLoaded()}, 2, 500);
  EXPECT_EQ(plan.outcome, Outcome::kFits);
  EXPECT_THAT(plan.unload, IsEmpty());
}

TEST(ModelBudgetTest, OneByteOverUnloadsTheIdleModel) {
  const ModelBudget budget(1000);
  // 300 (leased) + 200 (idle) + 501 = 1001: the idle one goes, leaving 300 + 501 = 801.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(300, 1, 1), Loaded(200, 0, 2), NotLoaded()}, 2, 501);
  EXPECT_EQ(plan.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(plan.unload, ElementsAre(1));
}

TEST(ModelBudgetTest, LeastRecentlyUsedIdleModelsGoFirstAndNoMoreThanNeeded) {
  const ModelBudget budget(400);
  // Three idle models of 100 used at +5 s, +1 s, +3 s; 250 to load needs the 300 loaded down
  // to 150: the one used at +1 s (slot 1) leaves 200, not enough; then +3 s (slot 2) leaves 100.
  // Slot 0, the most recent, stays.
  const ModelBudget::Plan plan = budget.PlanLoad(
      {Loaded(100, 0, 5), Loaded(100, 0, 1), Loaded(100, 0, 3), NotLoaded()}, 3, 250);
  EXPECT_EQ(plan.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(plan.unload, ElementsAre(1, 2));
}

TEST(ModelBudgetTest, RecencyDecidesNotSize) {
  const ModelBudget budget(500);
  // 100 used at +1 s and 400 at +2 s; 200 to load needs 500 down to 300. The 400 alone would
  // do, but the older 100 goes first (leaving 400, too much), then the 400.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(100, 0, 1), Loaded(400, 0, 2), NotLoaded()}, 2, 200);
  EXPECT_EQ(plan.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(plan.unload, ElementsAre(0, 1));
}

TEST(ModelBudgetTest, EqualTimesUnloadTheLowerSlotFirst) {
  const ModelBudget budget(200);
  // Two idle 100s used at the same time; 100 to load needs one of them gone: slot 0.
  const ModelBudget::Plan plan =
      budget.PlanLoad({NotLoaded(), Loaded(100, 0, 4), Loaded(100, 0, 4)}, 0, 100);
  EXPECT_EQ(plan.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(plan.unload, ElementsAre(1));
}

TEST(ModelBudgetTest, AModelWithALeaseIsNeverUnloadedEvenIfOldest) {
  const ModelBudget budget(600);
  // 300 leased (used at +1 s, the oldest) and 200 idle (+5 s); 300 to load needs 500 down to
  // 300: only the idle one may go, and that is enough.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(300, 1, 1), Loaded(200, 0, 5), NotLoaded()}, 2, 300);
  EXPECT_EQ(plan.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(plan.unload, ElementsAre(1));
}

TEST(ModelBudgetTest, NoRoomWhenTheLeasedModelsLeaveTooLittleAndNothingIsUnloaded) {
  const ModelBudget budget(500);
  // 400 leased + 100 idle; 200 to load: even without the idle one, 400 + 200 = 600 > 500. The
  // idle one is not unloaded for nothing.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loaded(400, 2, 1), Loaded(100, 0, 2), NotLoaded()}, 2, 200);
  EXPECT_EQ(plan.outcome, Outcome::kNoRoom);
  EXPECT_THAT(plan.unload, IsEmpty());
}

TEST(ModelBudgetTest, AModelBeingLoadedCountsItsEstimateAndIsNeverUnloaded) {
  const ModelBudget budget(500);
  // 300 loading + 100 idle loaded; 250 to load: 650 > 500, and without the idle one still
  // 550 > 500. The loading one cannot be unloaded: no room.
  const ModelBudget::Plan plan =
      budget.PlanLoad({Loading(300), Loaded(100, 0, 1), NotLoaded()}, 2, 250);
  EXPECT_EQ(plan.outcome, Outcome::kNoRoom);
  EXPECT_THAT(plan.unload, IsEmpty());
  // 200 to load: 600 > 500; without the idle one 500: it goes.
  const ModelBudget::Plan smaller =
      budget.PlanLoad({Loading(300), Loaded(100, 0, 1), NotLoaded()}, 2, 200);
  EXPECT_EQ(smaller.outcome, Outcome::kUnloadFirst);
  EXPECT_THAT(smaller.unload, ElementsAre(1));
}

TEST(ModelBudgetTest, TheSlotToLoadDoesNotCountAgainstItself) {
  const ModelBudget budget(300);
  // The slot's own entry (marked loading, 300) is ignored: its 300 alone fits 300.
  const ModelBudget::Plan plan = budget.PlanLoad({Loading(300), NotLoaded()}, 0, 300);
  EXPECT_EQ(plan.outcome, Outcome::kFits);
}

}  // namespace
}  // namespace mtserve
