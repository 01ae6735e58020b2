// A terminology's one check (text/terminology.h): bounds and form of entries and kept terms, each
// refusal naming the field, the entry and the limit.
#include "text/terminology.h"

#include <string>

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

}  // namespace
}  // namespace mtserve
