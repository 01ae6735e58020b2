// Job ids (serving/state/job_id.h): URL-safe, distinct, split into selector and secret, only
// the canonical spelling accepted, secrets compared whole.
#include "serving/state/job_id.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/ascii.h"

namespace mtserve {
namespace {

TEST(JobIdTest, IdsAreUrlSafeDistinctAndSplit) {
  const absl::StatusOr<std::string> drawn_a = NewJobId();
  const absl::StatusOr<std::string> drawn_b = NewJobId();
  ASSERT_TRUE(drawn_a.ok() && drawn_b.ok());
  const std::string& a = *drawn_a;
  const std::string& b = *drawn_b;
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 32u);
  for (char c : a) {
    EXPECT_TRUE(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << a;
  }
  const std::optional<JobIdParts> parts = SplitJobId(a);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->selector.size(), 8u);
  EXPECT_EQ(parts->secret.size(), 16u);
  EXPECT_TRUE(JobSecretsEqual(parts->secret, SplitJobId(a)->secret));
  EXPECT_FALSE(JobSecretsEqual(parts->secret, SplitJobId(b)->secret));
  EXPECT_FALSE(JobSecretsEqual(parts->secret, parts->secret.substr(1)));
}

TEST(JobIdTest, OnlyCanonicalIdsSplit) {
  EXPECT_FALSE(SplitJobId("").has_value());
  EXPECT_FALSE(SplitJobId(std::string(31, 'A')).has_value());
  EXPECT_FALSE(SplitJobId(std::string(33, 'A')).has_value());
  EXPECT_TRUE(SplitJobId(std::string(32, 'A')).has_value());
  // The other base64 alphabet, padding, and characters outside both.
  EXPECT_FALSE(SplitJobId(std::string(31, 'A') + "+").has_value());
  EXPECT_FALSE(SplitJobId(std::string(31, 'A') + "/").has_value());
  EXPECT_FALSE(SplitJobId(std::string(31, 'A') + "=").has_value());
  EXPECT_FALSE(SplitJobId(std::string(31, 'A') + ".").has_value());
}

}  // namespace
}  // namespace mtserve
