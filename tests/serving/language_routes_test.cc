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
  EXPECT_THAT(routes.SourcesInto("EN"), ElementsAre("de", "fr"));
  EXPECT_THAT(routes.SourcesInto(""), ElementsAre("en", "de", "fr"));
  EXPECT_TRUE(routes.SourcesInto("cs").empty());
}

TEST(LanguageRoutesTest, APairRoutesToTheFirstModelServingIt) {
  const LanguageRoutes routes = ThreeModels();
  EXPECT_THAT(routes.Route("de", "en").value(), ElementsAre(1));
  EXPECT_THAT(routes.Route("fr", "en").value(), ElementsAre(2));
  EXPECT_THAT(routes.Route("en", "de").value(), ElementsAre(0));
  EXPECT_THAT(routes.Route("en_US", "de-DE").value(), ElementsAre(0)) << "tags by language";
}

TEST(LanguageRoutesTest, APairWithoutAModelRoutesThroughTheShortestChain) {
  const LanguageRoutes routes = ThreeModels();
  // fr->en (fr-en), then en->de (en-de).
  EXPECT_THAT(routes.Route("fr", "de").value(), ElementsAre(2, 0));
  EXPECT_THAT(routes.Route("fr_FR", "DE").value(), ElementsAre(2, 0));
  // Three legs when no two do: cs->fr, fr->en, en->de.
  const LanguageRoutes longer(
      {{"cs-fr", "cs", "fr"}, {"fr-en", "fr", "en"}, {"en-de", "en", "de"}});
  EXPECT_THAT(longer.Route("cs", "de").value(), ElementsAre(0, 1, 2));
  EXPECT_THAT(longer.Route("cs", "en").value(), ElementsAre(0, 1));
  EXPECT_FALSE(longer.Route("de", "cs").ok()) << "chains follow the models' direction";
}

TEST(LanguageRoutesTest, ADirectModelComesBeforeAnyChain) {
  const LanguageRoutes routes(
      {{"fr-en", "fr", "en"}, {"en-de", "en", "de"}, {"fr-de", "fr", "de"}});
  EXPECT_THAT(routes.Route("fr", "de").value(), ElementsAre(2));
}

TEST(LanguageRoutesTest, ThePivotLanguageBreaksTiesBetweenBridges) {
  // fr->de through es (served first) or through en: two legs either way.
  std::vector<LanguageRoutes::Pair> pairs = {
      {"fr-es", "fr", "es"}, {"es-de", "es", "de"}, {"fr-en", "fr", "en"}, {"en-de", "en", "de"}};
  EXPECT_THAT(LanguageRoutes(pairs).Route("fr", "de").value(), ElementsAre(2, 3)) << "en";
  EXPECT_THAT(LanguageRoutes(pairs, "es").Route("fr", "de").value(), ElementsAre(0, 1));
  EXPECT_THAT(LanguageRoutes(pairs, "it").Route("fr", "de").value(), ElementsAre(0, 1))
      << "no bridge in the pivot language: the served order";
  // A shorter chain wins over one through the pivot.
  EXPECT_THAT(LanguageRoutes({{"fr-es", "fr", "es"},
                              {"es-de", "es", "de"},
                              {"fr-en", "fr", "en"},
                              {"en-it", "en", "it"},
                              {"it-de", "it", "de"}})
                  .Route("fr", "de")
                  .value(),
              ElementsAre(0, 1));
}

TEST(LanguageRoutesTest, SourcesIntoATargetIncludeTheLanguagesChainsReadIntoIt) {
  const LanguageRoutes routes = ThreeModels();
  // en directly; fr through en; de->en->de is not a translation.
  EXPECT_THAT(routes.SourcesInto("de"), ElementsAre("en", "fr"));
  EXPECT_THAT(
      routes.Targets(),
      ElementsAre(std::pair<const std::string, std::vector<std::string>>{"de", {"en"}},
                  std::pair<const std::string, std::vector<std::string>>{"en", {"de"}},
                  std::pair<const std::string, std::vector<std::string>>{"fr", {"de", "en"}}));
}

// What an office document's language tags say of a translation: the model's language as BCP 47
// writes it.
TEST(LanguageRoutesTest, AModelsLanguageAsALanguageTag) {
  EXPECT_EQ(LanguageTag("de"), "de");
  EXPECT_EQ(LanguageTag("pt_BR"), "pt-BR");
  EXPECT_EQ(LanguageTag("zh_Hant_TW"), "zh-Hant-TW");
  EXPECT_EQ(LanguageTag(""), "");
}

TEST(LanguageRoutesTest, AnUnservedPairNamesTheLanguagesAndThePairsServed) {
  const LanguageRoutes routes = ThreeModels();
  for (auto [source, target] : {std::pair{"de", "fr"}, {"cs", "en"}, {"en", "en"}, {"", "en"}}) {
    const absl::StatusOr<std::vector<int>> route = routes.Route(source, target);
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
