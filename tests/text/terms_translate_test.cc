// Terms end to end on the test model: a text of each format taken apart with a terminology,
// each sentence decoded with its terms as the decoder's constraints (the engine's lexically
// constrained search), and joined: every glossary form and kept span is in the translation
// exactly as written, in plain text, HTML, Markdown, subtitles and office files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "model/translator.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "text/document.h"
#include "text/office/office_package.h"
#include "text/subtitle_document.h"
#include "text/term_matcher.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

class TermsTranslateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
    Terminology t;
    // Forms the model would never write by itself.
    t.glossary = {{"red shirt", {"Zorblax-Hemd"}},
                  {"bike", {"Velociped"}},
                  {"river", {"Flussbett"}},
                  {"park", {"Stadtgarten"}},
                  {"blue jacket", {"Jacke aus Zorblax"}}};
    t.keep_patterns = {KeepPattern::kPlaceholders};
    ASSERT_OK_AND_ASSIGN(matcher_, CompileTerminology(t, model_->tokenizer(), "options."));
  }

  std::string Translate(const std::string& text, DocumentFormat format) const {
    SentenceRules rules{splitter_.get(), &model_->tokenizer(), 256, {}, "de"};
    rules.terms = matcher_.get();
    absl::StatusOr<TextTranslation> t = testing::TranslateDocument(model_, text, format, rules);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? t->hypotheses[0].text : "";
  }

  // The text of every entry of the office file `bytes` (its XML parts, markup left in).
  static std::string Entries(const std::string& bytes) {
    absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
    EXPECT_TRUE(package.ok()) << package.status();
    std::string all;
    if (!package.ok()) return all;
    for (const std::string& name : package->names()) {
      absl::StatusOr<std::string> entry = package->Read(name);
      if (entry.ok()) all += *entry;
    }
    return all;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
  std::shared_ptr<const TermMatcher> matcher_;
};

TEST_F(TermsTranslateTest, TextFormats) {
  const std::string sentence = "Hello {name}, a man in a red shirt is riding a bike.";
  const std::pair<DocumentFormat, std::string> texts[] = {
      {DocumentFormat::kPlainText, sentence},
      {DocumentFormat::kHtml, "<p>" + sentence + "</p>"},
      {DocumentFormat::kMarkdown, sentence + "\n"},
      {DocumentFormat::kSrt, "1\n00:00:01,000 --> 00:00:04,000\n" + sentence + "\n"},
      {DocumentFormat::kVtt, "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n" + sentence + "\n"},
  };
  for (const auto& [format, text] : texts) {
    const std::string translated = Translate(text, format);
    EXPECT_THAT(translated, HasSubstr("Zorblax-Hemd")) << text;
    EXPECT_THAT(translated, HasSubstr("Velociped")) << text;
    EXPECT_THAT(translated, HasSubstr("{name}")) << text;
  }
  // Without the terminology the model writes none of them.
  const std::string plain =
      testing::TranslateDocument(model_, *splitter_, sentence, DocumentFormat::kPlainText)
          .value_or("");
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("Zorblax")));
}

TEST_F(TermsTranslateTest, HtmlMarkupAroundATermAndTranslateNo) {
  const std::string translated = Translate(
      "<p>A man in a <b>red shirt</b> is riding a <span translate=\"no\">Brompton</span> bike.</p>",
      DocumentFormat::kHtml);
  EXPECT_THAT(translated, HasSubstr("<b>Zorblax-Hemd</b>"));
  EXPECT_THAT(translated, HasSubstr("<span translate=\"no\">Brompton</span>"));
  EXPECT_THAT(translated, HasSubstr("Velociped"));
}

TEST_F(TermsTranslateTest, SubtitleSentenceOverTwoCuesKeepsAFormInOneCue) {
  // The sentence's words divided over its cues never divide the form's three words.
  const std::string translated = Translate(
      "1\n00:00:01,000 --> 00:00:02,000\nA man in a blue\n\n"
      "2\n00:00:02,100 --> 00:00:04,000\njacket is riding a bike.\n",
      DocumentFormat::kSrt);
  absl::StatusOr<SubtitleDocument> document =
      SubtitleDocument::Parse(translated, SubtitleDocument::Kind::kSrt);
  ASSERT_TRUE(document.ok()) << document.status() << "\n" << translated;
  ASSERT_EQ(document->cues().size(), 2u) << translated;
  int whole = 0;
  for (const SubtitleDocument::Cue& cue : document->cues()) {
    const std::string text =
        document->stream().substr(cue.text.begin, cue.text.end - cue.text.begin);
    if (absl::StrContains(text, "Jacke aus Zorblax")) {
      ++whole;
    } else {
      EXPECT_FALSE(absl::StrContains(text, "Zorblax")) << translated;
    }
  }
  EXPECT_EQ(whole, 1) << translated;
}

TEST_F(TermsTranslateTest, OfficeFiles) {
  const std::pair<DocumentFormat, std::string> files[] = {
      {DocumentFormat::kDocx, "simple.docx"},
      {DocumentFormat::kOdt, "simple.odt"},
      {DocumentFormat::kPptx, "slides.pptx"},
  };
  for (const auto& [format, name] : files) {
    const std::string translated = Entries(Translate(testing::ReadOfficeFixture(name), format));
    EXPECT_THAT(translated,
                format == DocumentFormat::kPptx ? HasSubstr("Stadtgarten") : HasSubstr("Flussbett"))
        << name;
  }
}

}  // namespace
}  // namespace mtserve
