// Reading cgroup CPU quotas (base/cpu_count.h).
#include "base/cpu_count.h"

#include <thread>

#include "gtest/gtest.h"

namespace mtserve {
namespace {

TEST(CpuCountTest, CgroupV2CpuMax) {
  EXPECT_EQ(CpuMaxQuota("max 100000\n"), std::nullopt);
  EXPECT_EQ(CpuMaxQuota("200000 100000\n"), 2.0);
  EXPECT_EQ(CpuMaxQuota("150000 100000"), 1.5);
  EXPECT_EQ(CpuMaxQuota(""), std::nullopt);
  EXPECT_EQ(CpuMaxQuota("garbage"), std::nullopt);
}

TEST(CpuCountTest, CgroupV1Cfs) {
  EXPECT_EQ(CfsQuota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(CfsQuota("400000\n", "100000\n"), 4.0);
  EXPECT_EQ(CfsQuota("", ""), std::nullopt);
}

TEST(CpuCountTest, UsableCpusIsWithinTheMachine) {
  const int cpus = UsableCpus();
  EXPECT_GE(cpus, 1);
  EXPECT_LE(cpus, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace mtserve
