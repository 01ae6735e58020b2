// Whose turn it is (serving/fair_share.h): groups in turn, then their flows in turn, newcomers
// after each active one's next turn. Expected orders are worked out by hand from the rule.
#include "serving/fair_share.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

// The next `n` flows served, each served once as it is chosen.
std::vector<uint64_t> Serve(FairShare& share, int n) {
  std::vector<uint64_t> order;
  for (int i = 0; i < n; ++i) {
    std::optional<uint64_t> next = share.Next();
    if (!next.has_value()) break;
    order.push_back(*next);
    share.Served(*next);
  }
  return order;
}

TEST(FairShareTest, FlowsOfOneGroupTakeTurns) {
  FairShare share;
  EXPECT_FALSE(share.Next().has_value());
  share.Add(1, "");
  share.Add(2, "");
  share.Add(3, "");
  EXPECT_THAT(Serve(share, 7), ElementsAre(1, 2, 3, 1, 2, 3, 1));
}

TEST(FairShareTest, ANewcomerGoesAfterEachActiveFlowsNextTurn) {
  FairShare share;
  share.Add(1, "");
  share.Add(2, "");
  EXPECT_THAT(Serve(share, 1000), ::testing::Each(::testing::AnyOf(1u, 2u)));
  // Flow 1 and 2 have had 500 each; 3 does not get 1,000 turns in a row, it joins the rotation.
  share.Add(3, "");
  EXPECT_THAT(Serve(share, 6), ElementsAre(1, 2, 3, 1, 2, 3));
}

TEST(FairShareTest, GroupsTakeTurnsBeforeTheirFlows) {
  FairShare share;
  share.Add(1, "a");
  share.Add(2, "a");
  share.Add(3, "a");
  share.Add(4, "b");
  // Group b's one flow gets every other turn; group a's three share the rest.
  EXPECT_THAT(Serve(share, 8), ElementsAre(1, 4, 2, 4, 3, 4, 1, 4));
}

TEST(FairShareTest, ALeavingFlowTakesNoTurnAndItsGroupLeavesWithItsLast) {
  FairShare share;
  share.Add(1, "a");
  share.Add(2, "b");
  EXPECT_THAT(Serve(share, 4), ElementsAre(1, 2, 1, 2));
  share.Remove(1);
  EXPECT_FALSE(share.Has(1));
  EXPECT_THAT(Serve(share, 2), ElementsAre(2, 2));
  // Group a comes back: it starts at b's count, after b's next turn.
  share.Add(5, "a");
  EXPECT_THAT(Serve(share, 4), ElementsAre(2, 5, 2, 5));
  share.Remove(2);
  share.Remove(5);
  EXPECT_TRUE(share.empty());
}

TEST(FairShareTest, IneligibleFlowsArePassedOver) {
  FairShare share;
  share.Add(1, "");
  share.Add(2, "");
  share.Add(3, "");
  EXPECT_EQ(share.Next([](uint64_t flow) { return flow != 1; }), 2u);
  EXPECT_FALSE(share.Next([](uint64_t) { return false; }).has_value());
}

}  // namespace
}  // namespace mtserve
