// Routing by languages (serving/language_routes.h) over a server's pairs.
#include "serving/language_routes.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

LanguageRoutes ThreeModels() {
  return LanguageRoutes({{"en-de", "en", "de"},
                         {"de-en", "de", "en"},
                         {"fr-en", "fr", "en"},
                         {"mystery", "", ""},
                         {"de-en-big", "de", "en"}});
}

TEST(LanguageRoutesTest, SourcesIntoATargetAreTheLanguagesModelsReadIntoIt) {
  const LanguageRoutes routes = ThreeModels();
  EXPECT_THAT(routes.SourcesInto("en"), ElementsAre("de", "fr"));
  EXPECT_THAT(routes.SourcesInto("de"), ElementsAre("en"));
  EXPECT_THAT(routes.SourcesInto("EN"), ElementsAre("de", "fr"));
  EXPECT_THAT(routes.SourcesInto(""), ElementsAre("en", "de", "fr"));
  EXPECT_TRUE(routes.SourcesInto("cs").empty());
}

TEST(LanguageRoutesTest, APairRoutesToTheFirstModelServingIt) {
  const LanguageRoutes routes = ThreeModels();
  EXPECT_EQ(routes.Route("de", "en").value(), 1);
  EXPECT_EQ(routes.Route("fr", "en").value(), 2);
  EXPECT_EQ(routes.Route("en", "de").value(), 0);
  EXPECT_EQ(routes.Route("en_US", "de-DE").value(), 0) << "tags compared by language";
}

TEST(LanguageRoutesTest, AnUnservedPairNamesTheLanguagesAndThePairsServed) {
  const LanguageRoutes routes = ThreeModels();
  for (auto [source, target] : {std::pair{"fr", "de"}, {"cs", "en"}, {"en", "en"}, {"", "en"}}) {
    const absl::StatusOr<int> route = routes.Route(source, target);
    ASSERT_FALSE(route.ok()) << source << "->" << target;
    EXPECT_EQ(route.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(route.status().message(),
                                  std::string("translates ") + source + " into " + target))
        << route.status();
    EXPECT_TRUE(absl::StrContains(route.status().message(),
                                  "en->de (en-de), de->en (de-en), fr->en (fr-en), mystery (no "
                                  "languages in its config), de->en (de-en-big)"))
        << route.status();
  }
  EXPECT_EQ(LanguageRoutes({}).Describe(), "none");
}

}  // namespace
}  // namespace mtserve
