// The keep patterns (text/keep_patterns.h) against lists of strings that are and are not URLs,
// e-mail addresses, numbers with units and placeholders, each found alone and inside a sentence.
#include "text/keep_patterns.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The strings `pattern` finds in `text`.
std::vector<std::string> Found(absl::string_view text, KeepPattern pattern) {
  std::vector<std::string> out;
  const KeepPattern patterns[] = {pattern};
  for (const PatternSpan& span : FindKeepPatterns(text, {0, text.size()}, patterns)) {
    EXPECT_EQ(span.pattern, pattern);
    out.emplace_back(text.substr(span.range.begin, span.range.end - span.range.begin));
  }
  return out;
}

// Each positive is found whole, alone and between words; each negative's text yields exactly
// `kept` (usually nothing).
struct Case {
  KeepPattern pattern;
  std::vector<std::string> positives;
  std::vector<std::pair<std::string, std::vector<std::string>>> negatives;
};

const Case kCases[] = {
    {KeepPattern::kUrls,
     {"https://example.com", "http://example.com/a/b?c=d&e=f#g", "HTTPS://EXAMPLE.COM/X",
      "www.example.org", "ftp://files.example.net/pub/", "https://de.wikipedia.org/wiki/Foo_(Bar)",
      "https://example.com/caf\xC3\xA9"},
     {{"example.com", {}},
      {"http://", {}},
      {"wwwexample", {}},
      {"see https://example.com.", {"https://example.com"}},
      {"(https://example.com/a)", {"https://example.com/a"}},
      {"\"https://example.com/q\"", {"https://example.com/q"}},
      {"<https://example.com>", {"https://example.com"}},
      {"xhttps://example.com", {}}}},
    {KeepPattern::kEmails,
     {"name@example.com", "first.last+tag@mail.example.co.uk", "a_b-c%d@sub-domain.example.org",
      "X1@y2.io"},
     {{"name@localhost", {}},
      {"@example.com", {}},
      {"name@", {}},
      {"name@example", {}},
      {"mail name@example.com.", {"name@example.com"}},
      {"name@example.c", {}},
      {"a@b..com", {}},
      {"user@@example.com", {}}}},
    {KeepPattern::kNumbersWithUnits,
     {"25 kg", "3.5 GHz", "100 %", "100%", "1,000 \xE2\x82\xAC", "12:30", "08:15:00", "5km",
      "20 \xC2\xB0\x43", "60 km/h", "2,5\xC2\xA0l", "16 GB"},
     {{"25", {}},
      {"25 kilograms", {}},
      {"5 men", {}},
      {"in 1999 and 2000", {}},
      {"v2 GB", {}},
      {"123:456", {}},
      {"at 12:30.", {"12:30"}},
      {"5 meters", {}},
      {"a3 kg", {}}}},
    {KeepPattern::kPlaceholders,
     {"{name}", "{0}", "{}", "{{var}}", "{{ user.name }}", "${HOME}", "%s", "%d", "%1$d", "%-5.2f",
      "%@", "%lld", "<0>", "</0>", "<12/>", "$VAR", "$user_id"},
     {{":name", {}},
      {"100 %", {}},
      {"50% off", {}},
      {"$5", {}},
      {"US$VAR", {}},
      {"{not a name}", {}},
      {"< 0 >", {}},
      {"<b>", {}},
      {"a%sale", {}},
      {"Hello, {name}!", {"{name}"}},
      {"<0>click</0>", {"<0>", "</0>"}}}},
};

TEST(KeepPatternsTest, PositivesAreFoundWholeAloneAndInASentence) {
  for (const Case& c : kCases) {
    for (const std::string& positive : c.positives) {
      EXPECT_THAT(Found(positive, c.pattern), ElementsAre(positive)) << positive;
      const std::string sentence = absl::StrCat("Look at ", positive, " now");
      EXPECT_THAT(Found(sentence, c.pattern), ElementsAre(positive)) << sentence;
    }
  }
}

TEST(KeepPatternsTest, NegativesAreNotFound) {
  for (const Case& c : kCases) {
    for (const auto& [text, kept] : c.negatives) {
      std::vector<std::string> found = Found(text, c.pattern);
      EXPECT_EQ(found, kept) << text;
    }
  }
}

TEST(KeepPatternsTest, OnlyTheAskedPatternsAndOnlyWithinTheRange) {
  const std::string text = "Mail a@b.com about {x} at 5 kg, http://x.org";
  const KeepPattern none[] = {KeepPattern::kPlaceholders};
  const std::vector<PatternSpan> spans = FindKeepPatterns(text, {0, text.size()}, none);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(text.substr(spans[0].range.begin, spans[0].range.end - spans[0].range.begin), "{x}");
  const KeepPattern all[] = {KeepPattern::kUrls, KeepPattern::kEmails,
                             KeepPattern::kNumbersWithUnits, KeepPattern::kPlaceholders};
  EXPECT_EQ(FindKeepPatterns(text, {0, text.size()}, all).size(), 4u);
  // "{x}" cut by the range is not found; positions are the text's.
  const std::vector<PatternSpan> within = FindKeepPatterns(text, {20, text.size()}, all);
  ASSERT_EQ(within.size(), 2u);
  EXPECT_EQ(within[0].range.begin, text.find("5 kg"));
  EXPECT_THAT(FindKeepPatterns(text, {0, text.size()}, {}), IsEmpty());
}

TEST(KeepPatternsTest, ArbitraryBytesAreSafe) {
  const std::string bytes = "{{\xFF}} %\xC3 <9\x80> $\xE2\x82 http://\xF0 a@\xC0.com 5 \xC2";
  const KeepPattern all[] = {KeepPattern::kUrls, KeepPattern::kEmails,
                             KeepPattern::kNumbersWithUnits, KeepPattern::kPlaceholders};
  for (const PatternSpan& span : FindKeepPatterns(bytes, {0, bytes.size()}, all)) {
    EXPECT_LE(span.range.end, bytes.size());
    EXPECT_LT(span.range.begin, span.range.end);
  }
}

}  // namespace
}  // namespace mtserve
