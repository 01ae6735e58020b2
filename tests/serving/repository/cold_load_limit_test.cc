// The cold-load allowance (serving/repository/cold_load_limit.h) with explicit times: a burst of
// the allowance, then refusals naming the flag, refilled at the rate; callers apart.
#include "serving/repository/cold_load_limit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1000000);

TEST(ColdLoadLimitTest, ABurstOfTheAllowanceThenOneLoadPerRefill) {
  ColdLoadLimit limit(3);  // 3 a minute: one every 20 s.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limit.Take("", kStart).ok()) << i;
  const absl::Status refused = limit.Take("", kStart);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(),
              AllOf(HasSubstr("--max_cold_loads_per_minute 3"), HasSubstr("retry in 20 s")));
  // 19 s later the bucket holds 0.95 loads: still no; at 20 s one.
  EXPECT_FALSE(limit.Take("", kStart + absl::Seconds(19)).ok());
  EXPECT_TRUE(limit.Take("", kStart + absl::Seconds(20)).ok());
  EXPECT_FALSE(limit.Take("", kStart + absl::Seconds(20)).ok());
  // After a long pause the bucket is full again, never fuller.
  const absl::Time later = kStart + absl::Hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limit.Take("", later).ok()) << i;
  EXPECT_FALSE(limit.Take("", later).ok());
}

TEST(ColdLoadLimitTest, EachCallerHasItsOwnAllowance) {
  ColdLoadLimit limit(1);
  EXPECT_TRUE(limit.Take("alice", kStart).ok());
  EXPECT_FALSE(limit.Take("alice", kStart).ok());
  EXPECT_TRUE(limit.Take("bob", kStart).ok());
  EXPECT_TRUE(limit.Take("", kStart).ok());
}

TEST(ColdLoadLimitTest, ZeroIsNoLimit) {
  ColdLoadLimit limit(0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limit.Take("", kStart).ok());
}

}  // namespace
}  // namespace mtserve
