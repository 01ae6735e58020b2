// MTSERVE_<FLAG> environment variables set flags (base/env_flags.h).
#include "base/env_flags.h"

#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, test_workers, 1, "");
ABSL_FLAG(absl::Duration, test_delay, absl::Milliseconds(2), "");
ABSL_FLAG(std::vector<std::string>, test_models, {}, "");

namespace mtserve {
namespace {

TEST(EnvFlagsTest, VariablesSetTheirFlags) {
  setenv("TESTENV_TEST_WORKERS", "4", 1);
  setenv("TESTENV_TEST_DELAY", "500us", 1);
  setenv("TESTENV_TEST_MODELS", "a=/x,b=/y", 1);
  ASSERT_TRUE(
      SetFlagsFromEnvironment("TESTENV_", {"test_workers", "test_delay", "test_models"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_workers), 4);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_delay), absl::Microseconds(500));
  EXPECT_THAT(absl::GetFlag(FLAGS_test_models), testing::ElementsAre("a=/x", "b=/y"));
}

TEST(EnvFlagsTest, FlagsDefinedInAFile) {
  EXPECT_THAT(FlagsDefinedIn(__FILE__),
              testing::ElementsAre("test_delay", "test_models", "test_workers"));
}

TEST(EnvFlagsTest, UnsetVariablesLeaveDefaults) {
  unsetenv("TESTENV2_TEST_WORKERS");
  absl::SetFlag(&FLAGS_test_workers, 1);
  ASSERT_TRUE(SetFlagsFromEnvironment("TESTENV2_", {"test_workers"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_workers), 1);
}

TEST(EnvFlagsTest, BadValueNamesTheVariable) {
  setenv("TESTENV3_TEST_WORKERS", "many", 1);
  const absl::Status status = SetFlagsFromEnvironment("TESTENV3_", {"test_workers"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), testing::HasSubstr("TESTENV3_TEST_WORKERS=many"));
}

}  // namespace
}  // namespace mtserve
