// A terminology's one check (text/terminology.h): bounds and form of entries and kept terms, each
// refusal naming the field, the entry and the limit; sources compared as the matcher compares them.
#include "text/terminology.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

TerminologyLimits Small() {
  TerminologyLimits limits;
  limits.max_entries = 3;
  limits.max_targets = 2;
  limits.max_term_bytes = 8;
  return limits;
}

std::string Refusal(const Terminology& terminology) {
  const absl::Status status = ValidateTerminology(terminology, Small(), "options.");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(TerminologyTest, WithinTheLimitsIsValid) {
  Terminology terminology;
  terminology.glossary = {{"car", {"Wagen", "Auto"}}, {"car", {"Wagen"}}};
  terminology.keep = {"mtserve"};
  EXPECT_TRUE(ValidateTerminology(terminology, Small(), "options.").ok());
}

TEST(TerminologyTest, EntriesAndKeptTermsCountTogether) {
  Terminology terminology;
  terminology.glossary = {{"a", {"b"}}, {"c", {"d"}}};
  terminology.keep = {"e", "f"};
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.glossary and options.keep: 2 entries and 2 kept terms, over the "
                        "limit of 3"));
}

TEST(TerminologyTest, EachTermsFormNamesTheEntry) {
  Terminology terminology;
  terminology.glossary = {{"a", {"b"}}, {"", {"d"}}};
  EXPECT_THAT(Refusal(terminology), HasSubstr("options.glossary[1].source: empty"));
  terminology.glossary = {{"a", {}}};
  EXPECT_THAT(Refusal(terminology), HasSubstr("options.glossary[0].targets: empty"));
  terminology.glossary = {{"a", {"b", "c", "d"}}};
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.glossary[0].targets: 3 forms, over the limit of 2"));
  terminology.glossary = {{"a", {"b", "123456789"}}};
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.glossary[0].targets[1]: 9 bytes, over the limit of 8"));
  terminology.glossary = {{"a\xFF", {"b"}}};
  EXPECT_THAT(Refusal(terminology), HasSubstr("options.glossary[0].source: not UTF-8"));
  terminology.glossary = {{"a\nb", {"b"}}};
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.glossary[0].source: holds a control character (U+000A)"));
  terminology.glossary = {{"a", {"<b>"}}};
  EXPECT_THAT(Refusal(terminology), HasSubstr("options.glossary[0].targets[0]: holds markup"));
  terminology.glossary = {};
  terminology.keep = {"ok", "x>y"};
  EXPECT_THAT(Refusal(terminology), HasSubstr("options.keep[1]: holds markup"));
}

TEST(TerminologyTest, KeptTermThatIsAlsoASourceIsRefused) {
  Terminology terminology;
  terminology.glossary = {{"a", {"b"}}, {"Mars", {"Mars"}}};
  terminology.keep = {"Mars"};
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.keep[0]: \"Mars\" is also options.glossary[1]'s source"));
}

TEST(TerminologyTest, IgnoringCaseSourcesMayNotDifferOnlyInCase) {
  Terminology terminology;
  terminology.glossary = {{"House", {"Haus"}}, {"house", {"Heim"}}};
  EXPECT_TRUE(ValidateTerminology(terminology, Small(), "options.").ok());
  terminology.ignore_case = true;
  EXPECT_THAT(Refusal(terminology),
              HasSubstr("options.glossary[1].source: \"house\" is options.glossary[0]'s source "
                        "\"House\" in another case"));
}

// With ignore_case sources are compared by Unicode's full case folding, as the matcher finds
// them (CaseFolding.txt: U+00DF ß folds to "ss", U+00C4 Ä to U+00E4 ä, U+03A3 Σ and U+03C2 ς to
// U+03C3 σ), not by ASCII's lower case, which leaves every non-ASCII letter as it is.
TEST(TerminologyTest, IgnoringCaseSourcesAreComparedByFullCaseFolding) {
  EXPECT_EQ(SourceKey("Straße", true), "strasse");
  EXPECT_EQ(SourceKey("STRASSE", true), "strasse");
  EXPECT_EQ(SourceKey("ÄRGER", true), "ärger");
  EXPECT_EQ(SourceKey("ÄRGER", false), "ÄRGER");
  EXPECT_EQ(SourceKey("ΟΔΟΣ", true), SourceKey("οδος", true));
  EXPECT_EQ(SourceKey("Straße", false), "Straße");
  TerminologyLimits limits = Small();
  limits.max_term_bytes = 16;
  const struct {
    std::string first, second;
  } kSame[] = {{"Straße", "STRASSE"}, {"ärger", "ÄRGER"}, {"straße", "Strasse"}, {"ΟΔΟΣ", "οδος"}};
  for (const auto& [first, second] : kSame) {
    Terminology terminology;
    terminology.glossary = {{first, {"a"}}, {second, {"b"}}};
    EXPECT_TRUE(ValidateTerminology(terminology, limits, "options.").ok()) << first;
    terminology.ignore_case = true;
    const absl::Status status = ValidateTerminology(terminology, limits, "options.");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << first;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("options.glossary[1].source: \"", second,
                                                         "\" is options.glossary[0]'s source \"",
                                                         first, "\" in another case")));
  }
  // A kept term is compared with the sources alike.
  Terminology kept;
  kept.glossary = {{"Straße", {"a"}}};
  kept.keep = {"STRASSE"};
  EXPECT_TRUE(ValidateTerminology(kept, limits, "options.").ok());
  kept.ignore_case = true;
  EXPECT_THAT(std::string(ValidateTerminology(kept, limits, "options.").message()),
              HasSubstr("options.keep[0]: \"STRASSE\" is also options.glossary[0]'s source "
                        "\"Straße\" in another case"));
  // Letters that differ by more than case are two sources.
  Terminology distinct;
  distinct.ignore_case = true;
  distinct.glossary = {{"Ärger", {"a"}}, {"Arger", {"b"}}, {"Strase", {"c"}}};
  EXPECT_TRUE(ValidateTerminology(distinct, limits, "options.").ok());
}

}  // namespace
}  // namespace mtserve
