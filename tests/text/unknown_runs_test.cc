// Runs of characters the model cannot spell come through a translation (text/unknown_runs.h):
// put back where the decoder generated an unknown token for them, or listed as dropped; a sentence
// of nothing else is its own translation. On hand-made hypotheses (the test model never generates
// an unknown token), and on the test model's real translations of CJK and emoji in English.
#include "text/unknown_runs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/translator.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "text/document.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class UnknownRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  // The source position of the first unknown piece of `sentence`.
  int UnknownPosition(absl::string_view sentence) const {
    const std::vector<int> ids = tokenizer().EncodeSource(sentence);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == tokenizer().unk_id()) return static_cast<int>(i);
    }
    return -1;
  }

  // A hypothesis "`before` <unk> `after`" (as target ids, </s> last), its unknown token aligned to
  // source position `unknown_at` and every other token to position 0.
  Hypothesis WithUnknown(absl::string_view before, absl::string_view after, int unknown_at) const {
    Hypothesis h;
    std::vector<int> first = tokenizer().EncodeTarget(before);
    first.pop_back();  // </s>
    h.ids = first;
    h.ids.push_back(tokenizer().unk_id());
    const std::vector<int> rest = tokenizer().EncodeTarget(after);
    h.ids.insert(h.ids.end(), rest.begin(), rest.end());
    h.alignment.assign(h.ids.size(), 0);
    h.alignment[first.size()] = unknown_at;
    h.text = tokenizer().DecodeTarget(h.ids);
    h.token_log_probs.assign(h.ids.size(), -0.1f);
    return h;
  }

  // `text` of `format` translated by the test model, as the server does it (sentences that need
  // the alignment decoded with it).
  TextTranslation Translate(const std::string& text, DocumentFormat format) const {
    absl::StatusOr<TextTranslation> t = testing::TranslateDocument(
        model_, text, format, {splitter_.get(), &tokenizer(), 256, {}, ""});
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : TextTranslation{};
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_F(UnknownRunsTest, PiecesSpanTheirBytesAndAnUnknownRunIsOnePiece) {
  const std::string sentence = "A man 你好世界 is here.";
  const std::vector<Segment> spans = tokenizer().SourcePieceSpans(sentence);
  const std::vector<int> ids = tokenizer().EncodeSource(sentence);
  ASSERT_EQ(spans.size() + 1, ids.size());
  const int unknown = UnknownPosition(sentence);
  ASSERT_GE(unknown, 0);
  // "你好世界" is bytes 6-18 (four characters of three bytes).
  EXPECT_EQ(spans[unknown], (Segment{6, 18}));
  size_t unknowns = 0;
  for (int id : ids) unknowns += id == tokenizer().unk_id();
  EXPECT_EQ(unknowns, 1u);
}

// A generated unknown token takes the source run it is aligned to, with the source's spaces.
TEST_F(UnknownRunsTest, AGeneratedUnknownTokenBecomesItsSourceRun) {
  const std::string sentence = "A man 你好世界 is riding a bike.";
  const Hypothesis h = WithUnknown("Ein Mann", "fährt Fahrrad.", UnknownPosition(sentence));
  ASSERT_EQ(h.text, "Ein Mann fährt Fahrrad.");
  const UnknownRuns runs = FindUnknownRuns(sentence, h.ids, h.alignment, tokenizer(), tokenizer());
  EXPECT_FALSE(runs.verbatim);
  EXPECT_THAT(runs.dropped, IsEmpty());
  EXPECT_EQ(WithUnknownRuns(h.text, sentence, runs), "Ein Mann 你好世界 fährt Fahrrad.");

  // Without an alignment nothing ties the token to the run: it is listed as dropped.
  const UnknownRuns unaligned = FindUnknownRuns(sentence, h.ids, {}, tokenizer(), tokenizer());
  EXPECT_THAT(unaligned.insertions, IsEmpty());
  EXPECT_THAT(unaligned.dropped, ElementsAre(Segment{6, 18}));
  EXPECT_EQ(WithUnknownRuns(h.text, sentence, unaligned), h.text);
}

// A sentence of nothing but unknown runs, spaces and punctuation has nothing to translate.
TEST_F(UnknownRunsTest, ASentenceOfNothingElseIsItsOwnTranslation) {
  for (const std::string sentence : {"你好世界", "你好。", "😀😀!", " 🚲 🚲 "}) {
    SCOPED_TRACE(sentence);
    const UnknownRuns runs = FindUnknownRuns(sentence, {5, 0}, {}, tokenizer(), tokenizer());
    EXPECT_TRUE(runs.verbatim);
    EXPECT_EQ(WithUnknownRuns("Das ist es.", sentence, runs), sentence);
  }
  // A sentence the model can spell has no unknown runs at all, a letter beside a run is something
  // to translate.
  EXPECT_FALSE(FindUnknownRuns("A dog.", {5, 0}, {}, tokenizer(), tokenizer()).verbatim);
  EXPECT_FALSE(FindUnknownRuns("Hi 你好", {5, 0}, {}, tokenizer(), tokenizer()).verbatim);
}

// Joined into a text: the runs put back in each sentence, the dropped ones as bytes of the text;
// an HTML inline around a run goes around it in the translation.
TEST_F(UnknownRunsTest, DocumentsPutRunsBackAndListTheDroppedOnes) {
  const std::string first = "A man 你好世界 is riding a bike.";
  const std::string text = absl::StrCat(first, " The dog 😀 runs.");
  absl::StatusOr<std::unique_ptr<Document>> document = PrepareDocument(
      text, DocumentFormat::kPlainText, {splitter_.get(), &tokenizer(), 256, {}, ""});
  ASSERT_TRUE(document.ok());
  ASSERT_EQ((*document)->sentences().size(), 2u);
  EXPECT_TRUE((*document)->NeedsAlignment(0));
  std::vector<TranslationResult> results(2);
  results[0].hypotheses = {WithUnknown("Ein Mann", "fährt Fahrrad.", UnknownPosition(first))};
  Hypothesis dog;  // No unknown token generated for the emoji.
  dog.ids = tokenizer().EncodeTarget("Der Hund rennt.");
  dog.alignment.assign(dog.ids.size(), 0);
  dog.text = tokenizer().DecodeTarget(dog.ids);
  results[1].hypotheses = {dog};
  const TextTranslation joined = JoinDocument(**document, std::move(results), 1, tokenizer());
  EXPECT_EQ(joined.hypotheses[0].text, "Ein Mann 你好世界 fährt Fahrrad. Der Hund rennt.");
  // "😀" is bytes 8-12 of "The dog 😀 runs.", which starts at byte 37 of the text (the first
  // sentence is 36 bytes, "你好世界" twelve of them).
  ASSERT_EQ(joined.dropped.size(), 1u);
  EXPECT_THAT(joined.dropped[0], ElementsAre(Segment{45, 49}));
  EXPECT_EQ(text.substr(45, 4), "😀");

  const std::string html = "<p>A man <b>你好世界</b> is riding a bike.</p>";
  absl::StatusOr<std::unique_ptr<Document>> page =
      PrepareDocument(html, DocumentFormat::kHtml, {splitter_.get(), &tokenizer(), 256, {}, ""});
  ASSERT_TRUE(page.ok());
  std::vector<TranslationResult> page_results(1);
  page_results[0].hypotheses = {WithUnknown("Ein Mann", "fährt Fahrrad.", UnknownPosition(first))};
  EXPECT_EQ(JoinDocument(**page, page_results, 1, tokenizer()).hypotheses[0].text,
            "<p>Ein Mann <b>你好世界</b> fährt Fahrrad.</p>");
  // Dropped: the run's bytes in the document.
  page_results[0].hypotheses[0].alignment.clear();
  const TextTranslation dropped = JoinDocument(**page, page_results, 1, tokenizer());
  ASSERT_EQ(dropped.dropped.size(), 1u);
  ASSERT_THAT(dropped.dropped[0], ElementsAre(Segment{12, 24}));
  EXPECT_EQ(html.substr(12, 12), "你好世界");
}

// The property the API promises, on the test model's own translations: every character of an
// unknown run is in the translation or in a dropped range.
TEST_F(UnknownRunsTest, EveryUnknownCharacterComesBackOrIsListed) {
  for (const std::string text : {"A man 你好世界 is riding a bike.", "The dog 😀😀 runs. A 🚲 bike.",
                                 "你好。世界。", "Two men 東京 and 大阪 are talking.", "😀"}) {
    for (const DocumentFormat format : {DocumentFormat::kPlainText, DocumentFormat::kHtml}) {
      SCOPED_TRACE(text);
      const std::string input = format == DocumentFormat::kHtml ? "<p>" + text + "</p>" : text;
      const TextTranslation joined = Translate(input, format);
      ASSERT_EQ(joined.hypotheses.size(), 1u);
      const std::string& out = joined.hypotheses[0].text;
      // The runs, found independently: the source's characters of three or four UTF-8 bytes.
      for (size_t i = 0; i < input.size();) {
        const unsigned char c = input[i];
        const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (length >= 3) {
          const std::string character = input.substr(i, length);
          bool listed = false;
          for (const Segment& d : joined.dropped[0]) listed |= d.begin <= i && i + length <= d.end;
          EXPECT_TRUE(absl::StrContains(out, character) || listed)
              << character << " at byte " << i << " of \"" << input << "\" in \"" << out << "\"";
        }
        i += length;
      }
    }
  }
}

// 1 MiB of CJK (one sentence, and sentences ended by "。") is not reduced to a few bytes.
TEST_F(UnknownRunsTest, AMebibyteOfCjkComesBack) {
  std::string one, many;
  while (one.size() < (1 << 20)) one += "你好世界";
  while (many.size() < 3000) many += "你好世界。";
  for (const std::string& text : {one, many}) {
    const TextTranslation joined = Translate(text, DocumentFormat::kPlainText);
    ASSERT_EQ(joined.hypotheses.size(), 1u);
    EXPECT_EQ(joined.hypotheses[0].text, text);
    EXPECT_THAT(joined.dropped[0], IsEmpty());
  }
}

}  // namespace
}  // namespace mtserve
