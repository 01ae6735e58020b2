// Route paths with values in them (frontends/http/route_path.h): which paths a route takes, and
// the values percent-decoded, against RFC 3986's encoding written out by hand.
#include "frontends/http/route_path.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

constexpr char kLoad[] = "/v1/models/{name}:load";

TEST(RoutePathTest, APathWithoutANameMatchesItselfOnly) {
  EXPECT_TRUE(RoutePathMatches("/v1/models", "/v1/models"));
  EXPECT_FALSE(RoutePathMatches("/v1/models", "/v1/models/"));
  EXPECT_FALSE(RoutePathMatches("/v1/models", "/v1/model"));
}

TEST(RoutePathTest, TheNameIsOneNonEmptySegment) {
  EXPECT_TRUE(RoutePathMatches(kLoad, "/v1/models/en-de:load"));
  EXPECT_TRUE(RoutePathMatches(kLoad, "/v1/models/a:b:load"));  // The last :load is the call's.
  EXPECT_FALSE(RoutePathMatches(kLoad, "/v1/models/:load"));
  EXPECT_FALSE(RoutePathMatches(kLoad, "/v1/models/a/b:load"));
  EXPECT_FALSE(RoutePathMatches(kLoad, "/v1/models/en-de:unload"));
  EXPECT_FALSE(RoutePathMatches(kLoad, "/v1/models/en-de"));
  EXPECT_FALSE(RoutePathMatches(kLoad, "/v2/models/en-de:load"));
}

TEST(RoutePathTest, TheNameIsPercentDecoded) {
  EXPECT_EQ(RoutePathName(kLoad, "/v1/models/en-de:load").value(), "en-de");
  EXPECT_EQ(RoutePathName(kLoad, "/v1/models/a:b:load").value(), "a:b");
  // "/" is %2F, " " %20, "é" %C3%A9 (its UTF-8 bytes); either case of hex digit.
  EXPECT_EQ(RoutePathName(kLoad, "/v1/models/opus%2fmt%20x:load").value(), "opus/mt x");
  EXPECT_EQ(RoutePathName(kLoad, "/v1/models/caf%C3%A9:load").value(), "caf\xC3\xA9");
}

TEST(RoutePathTest, APercentWithoutTwoHexDigitsIsRefusedNamingThePath) {
  for (const char* path : {"/v1/models/a%:load", "/v1/models/a%2:load", "/v1/models/a%zz:load"}) {
    const absl::StatusOr<std::string> name = RoutePathName(kLoad, path);
    ASSERT_FALSE(name.ok()) << path;
    EXPECT_EQ(name.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(name.status().message(), HasSubstr("has a % not followed by two hex digits"));
  }
}

constexpr char kResult[] = "/v1/jobs/{id}/result";
constexpr char kDownload[] = "/download_file/{id}/{file}";

TEST(RoutePathTest, EachHoleOfAPatternIsOneNonEmptySegment) {
  EXPECT_TRUE(RoutePathMatches(kResult, "/v1/jobs/abc/result"));
  EXPECT_FALSE(RoutePathMatches(kResult, "/v1/jobs//result"));
  EXPECT_FALSE(RoutePathMatches(kResult, "/v1/jobs/a/b/result"));
  EXPECT_FALSE(RoutePathMatches(kResult, "/v1/jobs/abc"));
  EXPECT_FALSE(RoutePathMatches(kResult, "/v1/jobs/abc/result/"));
  EXPECT_TRUE(RoutePathMatches(kDownload, "/download_file/abc/notes.md"));
  EXPECT_FALSE(RoutePathMatches(kDownload, "/download_file/abc/"));
  EXPECT_FALSE(RoutePathMatches(kDownload, "/download_file//notes.md"));
  EXPECT_FALSE(RoutePathMatches(kDownload, "/download_file/abc/d/notes.md"));
  EXPECT_FALSE(RoutePathMatches(kDownload, "/download_file/abc"));
  // A job's route is not its result's.
  EXPECT_FALSE(RoutePathMatches("/v1/jobs/{id}", "/v1/jobs/abc/result"));
}

TEST(RoutePathTest, EachHoleIsReadByItsName) {
  EXPECT_EQ(RoutePathName(kResult, "/v1/jobs/abc/result", "{id}").value(), "abc");
  EXPECT_EQ(RoutePathName(kDownload, "/download_file/abc/my%20notes.md", "{id}").value(), "abc");
  EXPECT_EQ(RoutePathName(kDownload, "/download_file/abc/my%20notes.md", "{file}").value(),
            "my notes.md");
  const absl::StatusOr<std::string> none = RoutePathName(kResult, "/v1/jobs/abc/result", "{file}");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mtserve
