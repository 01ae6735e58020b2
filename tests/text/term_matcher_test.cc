// A terminology compiled for the test model (text/term_matcher.h): its forms spelled in the target
// vocabulary and refused when they do not read back, and its occurrences found in sentences as
// whole words, longest first, without overlaps, by case or by Unicode case folding, with the keep
// patterns' spans and a format's kept spans, within the limit per sentence; and their source
// tokens carried into a translation of the sentence through its alignment (a pivot's bridge).
#include "text/term_matcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/decoding/term_constraints.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TermMatcherTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(model_, testing::TestModel()); }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  // `form` as EncodeTarget spells it, without its </s>.
  std::vector<int> Spelled(absl::string_view form) const {
    std::vector<int> ids = tokenizer().EncodeTarget(form);
    ids.pop_back();
    return ids;
  }

  std::shared_ptr<const TermMatcher> Compile(const Terminology& terminology) const {
    absl::StatusOr<std::shared_ptr<const TermMatcher>> matcher =
        CompileTerminology(terminology, tokenizer(), "options.");
    EXPECT_TRUE(matcher.ok()) << matcher.status();
    return matcher.ok() ? *matcher : nullptr;
  }

  // The occurrences `matcher` finds in the whole of `text`, as the strings they cover.
  static std::vector<std::string> Found(const TermMatcher& matcher, absl::string_view text) {
    std::vector<std::string> out;
    absl::StatusOr<std::shared_ptr<const SentenceTerms>> terms =
        matcher.Match(text, {0, text.size()});
    EXPECT_TRUE(terms.ok()) << terms.status();
    if (!terms.ok() || *terms == nullptr) return out;
    for (const SentenceTerms::Term& t : (*terms)->terms) {
      out.emplace_back(text.substr(t.source.begin, t.source.end - t.source.begin));
    }
    return out;
  }

  std::shared_ptr<const Model> model_;
};

Terminology Glossary(std::vector<GlossaryEntry> entries, bool ignore_case = false) {
  Terminology t;
  t.glossary = std::move(entries);
  t.ignore_case = ignore_case;
  return t;
}

TEST_F(TermMatcherTest, FormsAreTheTargetSpellingWithoutEos) {
  auto matcher = Compile(Glossary({{"bank account", {"Bankkonto", "Konto"}}}));
  ASSERT_NE(matcher, nullptr);
  const std::string text = "My bank account is empty.";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->constraints.terms.size(), 1u);
  const TermConstraint& c = terms->constraints.terms[0];
  EXPECT_THAT(c.forms, ElementsAre(Spelled("Bankkonto"), Spelled("Konto")));
  EXPECT_TRUE(c.initial_forms.empty());  // Both begin with a capital already.
  ASSERT_EQ(terms->terms.size(), 1u);
  EXPECT_EQ(terms->terms[0].source.begin, 3u);
  EXPECT_EQ(terms->terms[0].source.end, 15u);
  EXPECT_FALSE(terms->terms[0].kept);
  ASSERT_EQ(terms->terms[0].forms.size(), 2u);
  EXPECT_EQ(terms->terms[0].forms[0].text, "Bankkonto");
  EXPECT_EQ(terms->terms[0].forms[1].text, "Konto");
}

TEST_F(TermMatcherTest, LowerCaseFormGetsATitleCaseInitialForm) {
  auto matcher = Compile(Glossary({{"dog", {"kleiner Hund"}}, {"ice", {"Eis"}}}));
  ASSERT_NE(matcher, nullptr);
  const std::string text = "dog on ice";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->constraints.terms.size(), 2u);
  EXPECT_THAT(terms->constraints.terms[0].initial_forms, ElementsAre(Spelled("Kleiner Hund")));
  EXPECT_EQ(terms->terms[0].initial_forms[0].text, "Kleiner Hund");
  EXPECT_TRUE(terms->constraints.terms[1].initial_forms.empty());
}

TEST_F(TermMatcherTest, FormWithCharactersTheVocabularyLacksSpellsThemUnknown) {
  Terminology t;
  t.keep = {"{name}"};
  auto matcher = Compile(t);
  ASSERT_NE(matcher, nullptr);
  const std::string text = "Hello {name}, welcome.";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->terms.size(), 1u);
  const std::vector<int>& ids = terms->constraints.terms[0].forms[0];
  EXPECT_EQ(ids, Spelled("{name}"));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), tokenizer().unk_id()), 2);  // "{" and "}".
  const TermForm& form = terms->terms[0].forms[0];
  EXPECT_EQ(form.text, "{name}");
  ASSERT_EQ(form.unknown.size(), 2u);
  EXPECT_EQ(form.text.substr(form.unknown[0].begin, 1), "{");
  EXPECT_EQ(form.text.substr(form.unknown[1].begin, 1), "}");
  EXPECT_TRUE(terms->terms[0].kept);
}

TEST_F(TermMatcherTest, FormThatDoesNotReadBackIsRefusedNamingEntryAndForm) {
  // SentencePiece's normalisation reads the ligature as "fi" and folds the two spaces.
  for (const std::string& bad : {std::string("\xEF\xAC\x81sh"), std::string("rote  Katze")}) {
    absl::StatusOr<std::shared_ptr<const TermMatcher>> matcher = CompileTerminology(
        Glossary({{"dog", {"Hund"}}, {"cat", {"Katze", bad}}}), tokenizer(), "options.");
    ASSERT_FALSE(matcher.ok());
    EXPECT_EQ(matcher.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(matcher.status().message(), HasSubstr("options.glossary[1].targets[1]"));
    EXPECT_THAT(matcher.status().message(), HasSubstr(bad));
  }
  Terminology keep;
  keep.keep = {"ok", "\xEF\xAC\x81sh"};
  absl::StatusOr<std::shared_ptr<const TermMatcher>> matcher =
      CompileTerminology(keep, tokenizer(), "");
  ASSERT_FALSE(matcher.ok());
  EXPECT_THAT(matcher.status().message(), HasSubstr("keep[1]"));
}

TEST_F(TermMatcherTest, WholeWordsOnly) {
  auto matcher = Compile(Glossary({{"cat", {"Katze"}}}));
  ASSERT_NE(matcher, nullptr);
  EXPECT_THAT(Found(*matcher, "A cat, a category, a tomcat and cat."), ElementsAre("cat", "cat"));
  EXPECT_THAT(Found(*matcher, "cats"), ElementsAre());
  EXPECT_THAT(Found(*matcher, "(cat)"), ElementsAre("cat"));
  EXPECT_EQ(*matcher->Match("concatenate", {0, 11}), nullptr);
}

TEST_F(TermMatcherTest, CaseAsWrittenUnlessIgnored) {
  auto exact = Compile(Glossary({{"Apple", {"Apple"}}}));
  ASSERT_NE(exact, nullptr);
  EXPECT_THAT(Found(*exact, "an apple from Apple"), ElementsAre("Apple"));
  auto folded = Compile(Glossary({{"Apple", {"Apple"}}}, true));
  ASSERT_NE(folded, nullptr);
  EXPECT_THAT(Found(*folded, "an apple from APPLE"), ElementsAre("apple", "APPLE"));
}

TEST_F(TermMatcherTest, IgnoringCaseFoldsStrasseAndSharpS) {
  // ICU's full case folding maps ß to "ss": "straße", "Straße", "STRASSE" and "strasse" are one.
  auto matcher = Compile(Glossary({{"straße", {"street"}}}, true));
  ASSERT_NE(matcher, nullptr);
  EXPECT_THAT(Found(*matcher, "Die STRASSE, die Straße und die strasse."),
              ElementsAre("STRASSE", "Straße", "strasse"));
  auto upper = Compile(Glossary({{"STRASSE", {"street"}}}, true));
  ASSERT_NE(upper, nullptr);
  EXPECT_THAT(Found(*upper, "die Straße"), ElementsAre("Straße"));
  // As written, none of the other spellings match.
  auto exact = Compile(Glossary({{"straße", {"street"}}}));
  ASSERT_NE(exact, nullptr);
  EXPECT_THAT(Found(*exact, "Die STRASSE, die Straße und die straße."), ElementsAre("straße"));
}

TEST_F(TermMatcherTest, LongestFirstThenLeftToRightWithoutOverlaps) {
  auto matcher = Compile(Glossary({{"New York", {"New York"}},
                                   {"New York City", {"New York City"}},
                                   {"York City", {"York City"}},
                                   {"City Hall", {"Rathaus"}}}));
  ASSERT_NE(matcher, nullptr);
  EXPECT_THAT(Found(*matcher, "New York City Hall"), ElementsAre("New York City"));
  EXPECT_THAT(Found(*matcher, "New York and York City Hall"), ElementsAre("New York", "York City"));
  EXPECT_THAT(Found(*matcher, "in New York."), ElementsAre("New York"));
}

TEST_F(TermMatcherTest, MultibyteAndScriptsWithoutSpaces) {
  auto matcher = Compile(Glossary({{"café", {"Café"}}, {"東京", {"Tokio"}}}));
  ASSERT_NE(matcher, nullptr);
  const std::string text = "Un café à 東京 et 我在東京住 mais pas cafés ni cafe\xCC\x81.";
  EXPECT_THAT(Found(*matcher, text), ElementsAre("café", "東京", "東京"));
  const std::string cafe = "Un café";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(cafe, {0, cafe.size()}));
  ASSERT_NE(terms, nullptr);
  EXPECT_EQ(terms->terms[0].source.begin, 3u);
  EXPECT_EQ(terms->terms[0].source.end, 3u + 5u);  // "é" is two bytes.
}

TEST_F(TermMatcherTest, KeptTermsMatchAsWrittenEvenWhenTheGlossaryIgnoresCase) {
  Terminology t = Glossary({{"dog", {"Hund"}}}, true);
  t.keep = {"GitHub"};
  auto matcher = Compile(t);
  ASSERT_NE(matcher, nullptr);
  EXPECT_THAT(Found(*matcher, "a DOG on GitHub, not github"), ElementsAre("DOG", "GitHub"));
}

TEST_F(TermMatcherTest, PatternsAreKeptSpans) {
  Terminology t = Glossary({{"name", {"Name"}}});
  t.keep_patterns = {KeepPattern::kPlaceholders, KeepPattern::kUrls};
  auto matcher = Compile(t);
  ASSERT_NE(matcher, nullptr);
  const std::string text = "Hello {name}, see https://example.com/x or name.";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->terms.size(), 3u);
  EXPECT_EQ(terms->terms[0].forms[0].text, "{name}");  // The longer span wins over "name".
  EXPECT_TRUE(terms->terms[0].kept);
  EXPECT_EQ(terms->constraints.terms[0].forms[0], Spelled("{name}"));
  EXPECT_EQ(terms->terms[1].forms[0].text, "https://example.com/x");
  EXPECT_EQ(terms->terms[2].forms[0].text, "Name");
}

TEST_F(TermMatcherTest, AFormatsKeptSpansAreAlwaysTaken) {
  auto matcher = Compile(Glossary({{"red car", {"rotes Auto"}}}));
  ASSERT_NE(matcher, nullptr);
  const std::string text = "a red car here";
  const Segment kept[] = {{6, 9}};  // "car", kept by the format: "red car" cannot match.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}, kept));
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->terms.size(), 1u);
  EXPECT_EQ(terms->terms[0].forms[0].text, "car");
  EXPECT_TRUE(terms->terms[0].kept);
}

TEST_F(TermMatcherTest, MoreThanTheLimitInOneSentenceIsAnError) {
  auto matcher = Compile(Glossary({{"cat", {"Katze"}}}));
  ASSERT_NE(matcher, nullptr);
  std::string text;
  for (int i = 0; i < kMaxTermConstraints; ++i) absl::StrAppend(&text, "cat ");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  EXPECT_EQ(terms->terms.size(), static_cast<size_t>(kMaxTermConstraints));
  text += "cat";
  absl::StatusOr<std::shared_ptr<const SentenceTerms>> over =
      matcher->Match(text, {0, text.size()});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.status().message(), HasSubstr("at most 64"));
  // Find, for the splitter, lists them all.
  EXPECT_EQ(matcher->Find(text, {0, text.size()}).size(), 65u);
}

TEST_F(TermMatcherTest, DuplicateSourcesAreMerged) {
  auto matcher = Compile(Glossary({{"car", {"Auto"}}, {"car", {"Wagen", "Auto"}}}));
  ASSERT_NE(matcher, nullptr);
  const std::string text = "car";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SentenceTerms> terms,
                       matcher->Match(text, {0, text.size()}));
  ASSERT_NE(terms, nullptr);
  EXPECT_THAT(terms->constraints.terms[0].forms, ElementsAre(Spelled("Auto"), Spelled("Wagen")));
}

// Hand-made: the sentence "Un homme avec un chapeau orange ." read as the source tokens Un(0)
// homme(1) avec(2) un(3) chap(4) eau(5) orange(6) .(7) </s>(8), translated "A man in an orange
// hat." whose tokens (A, man, in, an, orange, ha, t, ., </s>) wrote bytes 0-1, 2-5, 6-8, 9-11,
// 12-18, 19-21, 21-22, 22-23 and nothing, aligned to 0, 1, 2, 3, 6, 4, 5, 7, 8; that translation
// read as the pieces 0-1, 1-5, 5-8, 8-11, 11-18, 18-22, 22-23 (each with the space before it).
class TranslatedSourcePositionsTest : public ::testing::Test {
 protected:
  // Constraints over the given source tokens (each [begin, end), -1 for unknown).
  static std::shared_ptr<const SentenceTerms> Terms(std::vector<std::pair<int, int>> sources) {
    auto terms = std::make_shared<SentenceTerms>();
    for (const auto& [begin, end] : sources) {
      TermConstraint& constraint = terms->constraints.terms.emplace_back();
      constraint.forms = {{7}};
      constraint.source_begin = begin;
      constraint.source_end = end;
      terms->terms.emplace_back();
    }
    return terms;
  }
  static std::vector<std::pair<int, int>> Positions(const SentenceTerms& terms) {
    std::vector<std::pair<int, int>> out;
    for (const TermConstraint& c : terms.constraints.terms) {
      out.emplace_back(c.source_begin, c.source_end);
    }
    return out;
  }

  const std::vector<int> alignment_ = {0, 1, 2, 3, 6, 4, 5, 7, 8};
  const std::vector<Segment> written_ = {{0, 1},   {2, 5},   {6, 8},   {9, 11}, {12, 18},
                                         {19, 21}, {21, 22}, {22, 23}, {23, 23}};
  const std::vector<Segment> pieces_ = {{0, 1},   {1, 5},   {5, 8},  {8, 11},
                                        {11, 18}, {18, 22}, {22, 23}};
};

TEST_F(TranslatedSourcePositionsTest, EachTermGoesToThePiecesItsSourceWasTranslatedInto) {
  // "homme" -> "man" (piece 1); "chapeau" (two tokens) -> "hat" (two tokens, piece 5), after
  // "orange" there as the translation reorders them; "orange" -> piece 4; an unknown source
  // stays unknown.
  const std::shared_ptr<const SentenceTerms> placed = WithTranslatedSourcePositions(
      Terms({{1, 2}, {4, 6}, {-1, -1}, {6, 7}}), alignment_, written_, pieces_);
  ASSERT_NE(placed, nullptr);
  EXPECT_THAT(Positions(*placed),
              ElementsAre(std::pair(1, 2), std::pair(5, 6), std::pair(-1, -1), std::pair(4, 5)));
  // A source wider than one word spans from the first word it went to to the last: "avec un
  // chapeau" -> "in an orange hat" (pieces 2 to 5).
  EXPECT_THAT(
      Positions(*WithTranslatedSourcePositions(Terms({{2, 6}}), alignment_, written_, pieces_)),
      ElementsAre(std::pair(2, 6)));
  EXPECT_EQ(WithTranslatedSourcePositions(nullptr, alignment_, written_, pieces_), nullptr);
}

TEST_F(TranslatedSourcePositionsTest, WhatTheAlignmentCannotTellStaysUnknown) {
  // No token aligned into it ("Un homme" is 0-1; source token 8 is </s>, which wrote nothing).
  std::vector<int> alignment = alignment_;
  alignment[1] = 0;
  EXPECT_THAT(Positions(*WithTranslatedSourcePositions(Terms({{1, 2}, {8, 9}}), alignment, written_,
                                                       pieces_)),
              ElementsAre(std::pair(-1, -1), std::pair(-1, -1)));
  // Two terms whose words fall in the same piece: "hat" is one piece for "chap" and for "eau".
  EXPECT_THAT(Positions(*WithTranslatedSourcePositions(Terms({{4, 5}, {5, 6}, {1, 2}}), alignment_,
                                                       written_, pieces_)),
              ElementsAre(std::pair(-1, -1), std::pair(-1, -1), std::pair(1, 2)));
  // An alignment that is not one source token per written token.
  EXPECT_THAT(Positions(*WithTranslatedSourcePositions(
                  Terms({{1, 2}}), std::vector<int>(alignment_.begin(), alignment_.end() - 1),
                  written_, pieces_)),
              ElementsAre(std::pair(-1, -1)));
}

}  // namespace
}  // namespace mtserve
