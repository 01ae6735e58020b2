// A text of each format taken apart into sentences and put back together around their
// translations (text/document.h), with hand-written "translations". Expected sentences and texts
// are written from the text's meaning.
#include "text/document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/test_lib/test_util.h"
#include "text/html_document.h"
#include "text/inline_placement.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class DocumentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }
  SentenceRules Rules(int max_tokens = 512) const {
    return {splitter_.get(), &tokenizer(), max_tokens, {}, ""};
  }

  std::unique_ptr<Document> Prepare(absl::string_view text, DocumentFormat format) const {
    absl::StatusOr<std::unique_ptr<Document>> document = PrepareDocument(text, format, Rules());
    EXPECT_TRUE(document.ok()) << document.status();
    return document.ok() ? *std::move(document) : nullptr;
  }

  // A result per sentence: hypothesis k of sentence i is translations[i][k], with two ids (a word
  // and </s>), a score of -(i + 1) - k and source_tokens i + 2.
  std::vector<TranslationResult> Results(
      const std::vector<std::vector<std::string>>& translations) const {
    std::vector<TranslationResult> results;
    for (size_t i = 0; i < translations.size(); ++i) {
      TranslationResult& r = results.emplace_back();
      r.source_tokens = static_cast<int>(i) + 2;
      for (size_t k = 0; k < translations[i].size(); ++k) {
        Hypothesis h;
        h.text = translations[i][k];
        h.ids = {static_cast<int>(10 + i), tokenizer().eos_id()};
        h.token_log_probs = {-0.5f, -0.5f};
        h.log_prob = -1;
        h.score = -static_cast<float>(i + 1 + k);
        r.hypotheses.push_back(h);
      }
    }
    return results;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

std::vector<std::string> Texts(absl::string_view text, const Document& document) {
  std::vector<std::string> out;
  for (const SourceSentence& s : document.sentences()) {
    out.emplace_back(text.substr(s.range.begin, s.range.end - s.range.begin));
  }
  return out;
}

TEST(DocumentFormatTest, NamesAndAlignment) {
  EXPECT_EQ(*ParseDocumentFormat("text"), DocumentFormat::kPlainText);
  EXPECT_EQ(*ParseDocumentFormat("html"), DocumentFormat::kHtml);
  EXPECT_EQ(*ParseDocumentFormat("markdown"), DocumentFormat::kMarkdown);
  EXPECT_EQ(*ParseDocumentFormat("srt"), DocumentFormat::kSrt);
  EXPECT_EQ(*ParseDocumentFormat("vtt"), DocumentFormat::kVtt);
  EXPECT_EQ(*ParseDocumentFormat("docx"), DocumentFormat::kDocx);
  EXPECT_EQ(*ParseDocumentFormat("pptx"), DocumentFormat::kPptx);
  EXPECT_EQ(*ParseDocumentFormat("odt"), DocumentFormat::kOdt);
  EXPECT_EQ(*ParseDocumentFormat("odp"), DocumentFormat::kOdp);
  EXPECT_EQ(*ParseDocumentFormat("epub"), DocumentFormat::kEpub);
  const absl::StatusOr<DocumentFormat> pdf = ParseDocumentFormat("pdf");
  EXPECT_EQ(pdf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pdf.status().message(),
              HasSubstr("text, html, markdown, srt, vtt, docx, pptx, odt, odp, epub"));
  // The values are the API's TextFormat's.
  EXPECT_EQ(static_cast<int>(DocumentFormat::kPlainText), 0);
  EXPECT_EQ(static_cast<int>(DocumentFormat::kHtml), 1);
  EXPECT_EQ(static_cast<int>(DocumentFormat::kMarkdown), 2);
  EXPECT_EQ(static_cast<int>(DocumentFormat::kSrt), 3);
  EXPECT_EQ(static_cast<int>(DocumentFormat::kVtt), 4);
  EXPECT_FALSE(NeedsAlignment(DocumentFormat::kPlainText));
  EXPECT_TRUE(NeedsAlignment(DocumentFormat::kHtml));
  EXPECT_TRUE(NeedsAlignment(DocumentFormat::kMarkdown));
}

// Plain text: the sentences text/sentences.h finds, joined in the text's layout, with where each
// sentence lies in the text and in each hypothesis.
// A document's characters are those of the text it translates: not its markup, cue numbers or
// timings, nor the whitespace around and between sentences. Counted by hand: "A dog runs." is
// 11, "A café." 7 (é one character of two bytes).
TEST_F(DocumentTest, CharactersAreThoseOfTheTextTranslated) {
  EXPECT_EQ(Prepare("  A dog runs.  A café.\n", DocumentFormat::kPlainText)->characters(), 18);
  EXPECT_EQ(Prepare("<p class=\"x\"><b>A dog</b> runs.</p><p>A café.</p>", DocumentFormat::kHtml)
                ->characters(),
            18);
  EXPECT_EQ(Prepare("# A dog runs.\n\n*A café.*\n", DocumentFormat::kMarkdown)->characters(), 18);
  EXPECT_EQ(Prepare("1\n00:00:01,000 --> 00:00:02,000\nA dog runs.\n\n"
                    "2\n00:00:03,000 --> 00:00:04,000\n<i>A café.</i>\n",
                    DocumentFormat::kSrt)
                ->characters(),
            18);
}

TEST_F(DocumentTest, PlainTextIsItsSentencesJoinedInItsLayout) {
  const std::string text = "  A dog runs.  Two cats sleep!\n";
  const std::unique_ptr<Document> document = Prepare(text, DocumentFormat::kPlainText);
  ASSERT_NE(document, nullptr);
  ASSERT_THAT(Texts(text, *document), ElementsAre("A dog runs.", "Two cats sleep!"));
  for (const SourceSentence& s : document->sentences()) {
    EXPECT_EQ(s.ids,
              tokenizer().EncodeSource(text.substr(s.range.begin, s.range.end - s.range.begin)));
  }
  const TextTranslation joined = JoinDocument(
      *document, Results({{"Ein Hund rennt.", "Hund rennt."}, {"Zwei Katzen schlafen!", "Z!"}}), 2,
      tokenizer());
  ASSERT_EQ(joined.hypotheses.size(), 2u);
  EXPECT_EQ(joined.hypotheses[0].text, "  Ein Hund rennt.  Zwei Katzen schlafen!\n");
  EXPECT_EQ(joined.hypotheses[1].text, "  Hund rennt.  Z!\n");
  EXPECT_FLOAT_EQ(joined.hypotheses[0].score, -3);
  EXPECT_FLOAT_EQ(joined.hypotheses[1].score, -5);
  EXPECT_EQ(joined.source_tokens, 5);
  EXPECT_THAT(joined.sentences, ElementsAre(Segment{2, 13}, Segment{15, 30}));
  ASSERT_EQ(joined.hypothesis_sentences.size(), 2u);
  EXPECT_THAT(joined.hypothesis_sentences[0], ElementsAre(Segment{2, 17}, Segment{19, 40}));
  EXPECT_THAT(joined.hypothesis_sentences[1], ElementsAre(Segment{2, 13}, Segment{15, 17}));
}

// HTML: each run's sentences in document order (a block's text, then an alt value), the document
// rendered around their translations with every byte of markup kept; no sentence ranges (they
// are in the runs' text, not the document's bytes).
TEST_F(DocumentTest, HtmlIsItsRunsSentencesRenderedInTheDocument) {
  const std::string html =
      "<div><p>A dog runs. A cat sleeps.</p>\n<img src=\"c.png\" alt=\"A red car.\"></div>";
  const std::unique_ptr<Document> document = Prepare(html, DocumentFormat::kHtml);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 3u);
  EXPECT_EQ(document->sentences()[0].ids, tokenizer().EncodeSource("A dog runs."));
  EXPECT_EQ(document->sentences()[1].ids, tokenizer().EncodeSource("A cat sleeps."));
  EXPECT_EQ(document->sentences()[2].ids, tokenizer().EncodeSource("A red car."));
  const TextTranslation joined = JoinDocument(*document,
                                              Results({{"Ein Hund rennt.", "Hund."},
                                                       {"Eine Katze schläft.", "Katze."},
                                                       {"Ein \"rotes\" Auto.", "Auto."}}),
                                              2, tokenizer());
  ASSERT_EQ(joined.hypotheses.size(), 2u);
  EXPECT_EQ(joined.hypotheses[0].text,
            "<div><p>Ein Hund rennt. Eine Katze schläft.</p>\n"
            "<img src=\"c.png\" alt=\"Ein &quot;rotes&quot; Auto.\"></div>");
  EXPECT_EQ(joined.hypotheses[1].text,
            "<div><p>Hund. Katze.</p>\n<img src=\"c.png\" alt=\"Auto.\"></div>");
  // Scores, ids and tokens summed over the runs' sentences.
  EXPECT_FLOAT_EQ(joined.hypotheses[0].score, -6);
  EXPECT_FLOAT_EQ(joined.hypotheses[1].score, -9);
  EXPECT_EQ(joined.hypotheses[0].ids.size(), 6u);
  EXPECT_EQ(joined.source_tokens, 9);
  EXPECT_THAT(joined.sentences, IsEmpty());
  EXPECT_THAT(joined.hypothesis_sentences, IsEmpty());
}

// Inline markup goes around the target words the decoder aligned to its source words; where the
// alignment says nothing, by position.
TEST_F(DocumentTest, HtmlInlineMarkupFollowsTheAlignment) {
  const std::string html = "<p>A <b>big</b> dog runs.</p>";
  const std::unique_ptr<Document> document = Prepare(html, DocumentFormat::kHtml);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 1u);
  const std::vector<std::string> pieces = tokenizer().SourcePieces("A big dog runs.");
  const int big =
      static_cast<int>(std::find(pieces.begin(), pieces.end(), "\u2581big") - pieces.begin());
  ASSERT_LT(big, static_cast<int>(pieces.size()));

  TranslationResult result;
  result.source_tokens = static_cast<int>(document->sentences()[0].ids.size());
  Hypothesis& h = result.hypotheses.emplace_back();
  h.text = "Ein großer Hund rennt.";
  h.ids = tokenizer().EncodeTarget(h.text);
  // Every target token aligned to "big": <b> goes over the whole translation.
  h.alignment.assign(h.ids.size(), big);
  EXPECT_EQ(JoinDocument(*document, {result}, 1, tokenizer()).hypotheses[0].text,
            "<p><b>Ein großer Hund rennt.</b></p>");
  // Nothing aligned to it: placed by position, over the word where "big" stood.
  result.hypotheses[0].alignment.assign(h.ids.size(), 0);
  EXPECT_EQ(JoinDocument(*document, {result}, 1, tokenizer()).hypotheses[0].text,
            "<p>Ein <b>großer</b> Hund rennt.</p>");
}

// Markdown: emphasis goes around the target words the decoder aligned to its words; a code span
// keeps its bytes, written in place of the words aligned to its own; the block markup is kept.
TEST_F(DocumentTest, MarkdownInlineMarkupFollowsTheAlignment) {
  const std::string markdown = "# A dog\n\nA *big* dog runs `fast`.\n";
  const std::unique_ptr<Document> document = Prepare(markdown, DocumentFormat::kMarkdown);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 2u);
  EXPECT_EQ(document->sentences()[0].ids, tokenizer().EncodeSource("A dog"));
  // The code span's words are in the sentence (so that it reads whole), not its backticks.
  EXPECT_EQ(document->sentences()[1].ids, tokenizer().EncodeSource("A big dog runs fast."));
  const std::vector<std::string> pieces = tokenizer().SourcePieces("A big dog runs fast.");
  auto piece = [&](absl::string_view p) {
    return static_cast<int>(std::find(pieces.begin(), pieces.end(), p) - pieces.begin());
  };
  const int big = piece("\u2581big"), fast = piece("\u2581fast");
  ASSERT_LT(big, static_cast<int>(pieces.size()));
  ASSERT_LT(fast, static_cast<int>(pieces.size()));

  std::vector<TranslationResult> results(2);
  for (TranslationResult& r : results) r.source_tokens = 8;
  Hypothesis& heading = results[0].hypotheses.emplace_back();
  heading.text = "Ein Hund";
  heading.ids = tokenizer().EncodeTarget(heading.text);
  heading.alignment.assign(heading.ids.size(), 0);
  Hypothesis& h = results[1].hypotheses.emplace_back();
  h.text = "Ein großer Hund rennt schnell.";
  h.ids = tokenizer().EncodeTarget(h.text);
  // "schnell" aligned to "fast", "großer" to "big", the rest to "A".
  const std::string target = h.text;
  const std::vector<Segment> tokens = TargetTokenRanges(h.ids, target, tokenizer());
  for (const Segment& t : tokens) {
    const absl::string_view word = absl::string_view(target).substr(t.begin, t.end - t.begin);
    h.alignment.push_back(absl::StartsWith("schnell", word) && !word.empty()  ? fast
                          : absl::StartsWith("großer", word) && !word.empty() ? big
                                                                              : 0);
  }
  EXPECT_EQ(JoinDocument(*document, results, 1, tokenizer()).hypotheses[0].text,
            "# Ein Hund\n\nEin *großer* Hund rennt `fast`.\n");
}

// Misnested markup translates as its sentences do: the same sentences as the text without its
// tags (before, the adoption agency's clones cut "A man rides a bike." into four fragments).
// Markdown the format keeps untranslated (a paragraph md4c's events do not map back to its bytes:
// raw inline HTML over a quote's lines) is not silently left so: every hypothesis lists its bytes
// in `dropped`, in order with the runs the model dropped.
TEST_F(DocumentTest, MarkdownKeptUntranslatedIsListedAsDropped) {
  const std::string markdown = "A dog.\n\n> a <b\n> c> d\n";
  const std::unique_ptr<Document> document = Prepare(markdown, DocumentFormat::kMarkdown);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 1u);
  std::vector<TranslationResult> results(1);
  results[0].source_tokens = 3;
  for (const char* text : {"Ein Hund.", "Der Hund."}) {
    Hypothesis& h = results[0].hypotheses.emplace_back();
    h.text = text;
    h.ids = tokenizer().EncodeTarget(h.text);
    h.alignment.assign(h.ids.size(), 0);
  }
  const TextTranslation joined = JoinDocument(*document, results, 2, tokenizer());
  ASSERT_EQ(joined.hypotheses.size(), 2u);
  EXPECT_EQ(joined.hypotheses[0].text, "Ein Hund.\n\n> a <b\n> c> d\n");
  const Segment kept{markdown.find("a <b"), markdown.size() - 1};
  ASSERT_EQ(joined.dropped.size(), 2u);
  for (const std::vector<Segment>& dropped : joined.dropped) {
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].begin, kept.begin);
    EXPECT_EQ(dropped[0].end, kept.end);
  }
}

TEST_F(DocumentTest, MisnestedHtmlHasTheSentencesOfItsText) {
  struct Case {
    std::string html;
    std::string text;  // The same without its tags, written by hand.
  };
  for (const Case& c : std::vector<Case>{
           {"<p>A <b>man <i>rides</b> a</i> bike.</p>", "A man rides a bike."},
           {"<p><font color=red>A red <b>car</font> stops.</b> Two dogs <i>run</u>.</i></p>",
            "A red car stops. Two dogs run."},
           {"<p>See <a href=1>this <a href=2>page</a> now</a>. It <em>helps</span>.</em></p>",
            "See this page now. It helps."},
           {"<p>A <b>dog <i>runs. A <u>cat</b> sleeps.</i> Birds</u> sing.</p>",
            "A dog runs. A cat sleeps. Birds sing."},
       }) {
    SCOPED_TRACE(c.html);
    const std::unique_ptr<Document> html = Prepare(c.html, DocumentFormat::kHtml);
    const std::unique_ptr<Document> plain = Prepare(c.text, DocumentFormat::kPlainText);
    ASSERT_NE(html, nullptr);
    ASSERT_NE(plain, nullptr);
    ASSERT_EQ(html->sentences().size(), plain->sentences().size());
    for (size_t i = 0; i < plain->sentences().size(); ++i) {
      EXPECT_EQ(html->sentences()[i].ids, plain->sentences()[i].ids);
    }
  }
}

TEST_F(DocumentTest, ErrorsNameSentencesByTheirBytesOnlyInPlainText) {
  const std::string text = "A dog runs. A cat sleeps.";
  const std::unique_ptr<Document> plain = Prepare(text, DocumentFormat::kPlainText);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->SentenceName("texts[0]", 1), "texts[0] sentence 2 of 2 (bytes 12-25)");
  const std::unique_ptr<Document> html =
      Prepare(absl::StrCat("<p>", text, "</p>"), DocumentFormat::kHtml);
  ASSERT_NE(html, nullptr);
  EXPECT_EQ(html->SentenceName("texts[0]", 1), "texts[0] sentence 2 of 2");
  const std::unique_ptr<Document> one = Prepare("A dog runs.", DocumentFormat::kPlainText);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->SentenceName("text", 0), "text");
}

// Without sentence rules each text (an HTML document: each run) is one sentence; a sentence over
// the token limit is cut into pieces within it.
TEST_F(DocumentTest, RulesDecideTheSentences) {
  const std::string text = "A dog runs. A cat sleeps.";
  absl::StatusOr<std::unique_ptr<Document>> whole =
      PrepareDocument(absl::StrCat("<p>", text, "</p><p>Hi.</p>"), DocumentFormat::kHtml,
                      {nullptr, &tokenizer(), 512, {}, ""});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ((*whole)->sentences().size(), 2u);
  EXPECT_EQ((*whole)->sentences()[0].ids, tokenizer().EncodeSource(text));

  std::string words;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&words, i == 0 ? "" : " ", "a dog runs");
  absl::StatusOr<std::unique_ptr<Document>> cut =
      PrepareDocument(words, DocumentFormat::kPlainText, Rules(/*max_tokens=*/16));
  ASSERT_TRUE(cut.ok()) << cut.status();
  ASSERT_GT((*cut)->sentences().size(), 1u);
  for (const SourceSentence& s : (*cut)->sentences()) EXPECT_LE(s.ids.size(), 16u);
}

TEST_F(DocumentTest, HtmlItsFormatRefusesIsAnError) {
  std::string deep;
  for (size_t i = 0; i <= HtmlDocument::kMaxDepth; ++i) deep += "<div>";
  const absl::StatusOr<std::unique_ptr<Document>> document =
      PrepareDocument(deep, DocumentFormat::kHtml, Rules());
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  // The same bytes as plain text are just text.
  EXPECT_TRUE(PrepareDocument(deep, DocumentFormat::kPlainText, Rules()).ok());
}

// A caller gone (cancelled, past its deadline) stops the taking apart: CANCELLED, whether it
// went before or part way through a long text.
TEST_F(DocumentTest, ACallerGoneStopsTakingTheTextApart) {
  EXPECT_EQ(PrepareDocument("A dog runs.", DocumentFormat::kPlainText, Rules(), [] { return true; })
                .status()
                .code(),
            absl::StatusCode::kCancelled);
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "A dog runs. ";
  int polls = 0;
  auto gone_after_ten = [&] { return ++polls > 10; };
  EXPECT_EQ(
      PrepareDocument(text, DocumentFormat::kPlainText, Rules(), gone_after_ten).status().code(),
      absl::StatusCode::kCancelled);
  EXPECT_LT(polls, 20);  // It stopped at once, not after the text's 1,000 sentences.
  EXPECT_TRUE(
      PrepareDocument(text, DocumentFormat::kPlainText, Rules(), [] { return false; }).ok());
}

}  // namespace
}  // namespace mtserve
