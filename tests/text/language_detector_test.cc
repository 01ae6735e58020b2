// Language detection (text/language_detector.h) against texts whose language is known: the
// Multi30k test sets in four languages, texts of one script, texts with no language, and the
// ranking restricted to a server's languages.
#include "text/language_detector.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::mtserve::testing::LangidModelPath;
using ::mtserve::testing::TestDataDir;

class LanguageDetectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const auto* const detector = new absl::StatusOr<std::unique_ptr<LanguageDetector>>(
        LanguageDetector::Load(LangidModelPath()));
    ASSERT_TRUE(detector->ok()) << detector->status()
                                << " (scripts/install-deps.sh installs the model)";
    detector_ = detector->value().get();
  }

  // The best language of `text` ("" when none).
  std::string Best(const std::string& text, std::vector<std::string> candidates = {}) const {
    const std::vector<LanguageGuess> ranking = detector_->Detect(text, candidates);
    return ranking.empty() ? "" : ranking[0].language;
  }

  static std::vector<std::string> Lines(const std::string& language) {
    std::vector<std::string> lines;
    std::ifstream in(TestDataDir() + "/multi30k/test_2016_flickr." + language);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  const LanguageDetector* detector_ = nullptr;
};

TEST_F(LanguageDetectorTest, KnowsTheModelsLanguages) {
  EXPECT_EQ(detector_->languages().size(), 176u);
  for (const char* language : {"en", "de", "fr", "cs", "zh", "ja", "ko"}) {
    EXPECT_NE(std::find(detector_->languages().begin(), detector_->languages().end(), language),
              detector_->languages().end())
        << language;
  }
}

// The sentences of Multi30k's test set in each language, one at a time: nearly all detected as
// their language, among all 176 and among a server's three.
TEST_F(LanguageDetectorTest, DetectsTheTestSetsSentences) {
  const std::vector<std::string> served = {"en", "de", "fr"};
  for (const std::string language : {"en", "de", "fr", "cs"}) {
    const std::vector<std::string> lines = Lines(language);
    ASSERT_EQ(lines.size(), 1000u) << language;
    int right = 0, right_among_served = 0;
    for (const std::string& line : lines) {
      right += Best(line) == language;
      right_among_served += Best(line, served) == language;
    }
    EXPECT_GE(right, 980) << language << ": sentences detected right among all languages";
    if (language != "cs") {
      EXPECT_GE(right_among_served, 990) << language << ": among en, de, fr";
    }
  }
}

TEST_F(LanguageDetectorTest, ProbabilitiesAreARanking) {
  const std::vector<LanguageGuess> ranking =
      detector_->Detect("Zwei junge Männer spielen im Park Fußball.", {}, 176);
  ASSERT_FALSE(ranking.empty());
  EXPECT_EQ(ranking[0].language, "de");
  EXPECT_GT(ranking[0].probability, 0.9);
  double total = 0;
  for (size_t i = 0; i < ranking.size(); ++i) {
    total += ranking[i].probability;
    if (i > 0) {
      EXPECT_LE(ranking[i].probability, ranking[i - 1].probability);
    }
  }
  EXPECT_NEAR(total, 1.0, 1e-3);
  EXPECT_EQ(detector_->Detect("Zwei junge Männer spielen im Park Fußball.", {}, 3).size(), 3u);
}

// A Czech sentence ranked over a server's languages is not forced into one of them with
// confidence: each has the small probability the model gives it, and Czech stays the best guess
// when nothing restricts it.
TEST_F(LanguageDetectorTest, RestrictedRankingKeepsTheModelsProbabilities) {
  const std::string czech = "Muž jede na kole po horské silnici.";
  EXPECT_EQ(Best(czech), "cs");
  const std::vector<LanguageGuess> restricted = detector_->Detect(czech, {"en", "de", "fr"});
  ASSERT_EQ(restricted.size(), 3u);
  double total = 0;
  for (const LanguageGuess& guess : restricted) total += guess.probability;
  EXPECT_LT(total, 0.2) << "three unlikely languages stay unlikely";
  // Tags as models name their languages.
  const std::vector<LanguageGuess> tags =
      detector_->Detect("A man rides a bike.", {"EN", "pt_BR", "de-DE"});
  ASSERT_EQ(tags.size(), 3u);
  EXPECT_EQ(tags[0].language, "en");
}

// Scripts written by one language decide; Han without kana is Chinese, never Korean (a common
// complaint about other detectors); kana make it Japanese.
TEST_F(LanguageDetectorTest, ScriptsDecideWhatTheyCan) {
  EXPECT_EQ(Best("안녕하세요"), "ko");
  EXPECT_EQ(Best("你好"), "zh");
  EXPECT_EQ(Best("我们今天去公园"), "zh");
  EXPECT_EQ(Best("こんにちは世界"), "ja");
  EXPECT_EQ(Best("東京へ行きます"), "ja");
  EXPECT_EQ(Best("Καλημέρα"), "el");
  EXPECT_EQ(Best("สวัสดีครับ"), "th");
  for (const char* text : {"你好", "中国"}) {
    for (const LanguageGuess& guess : detector_->Detect(text, {}, 176)) {
      EXPECT_NE(guess.language, "ko") << text;
      EXPECT_NE(guess.language, "ja") << text;
    }
  }
}

TEST_F(LanguageDetectorTest, TextsWithoutLettersHaveNoLanguage) {
  for (const std::string text :
       {"", "   ", "12345", "3.14 + 2 = 5.14", "!!! ???", "https://example.com/a/b?c=d",
        "someone@example.org", "www.example.com 2024"}) {
    EXPECT_TRUE(detector_->Detect(text).empty()) << text;
    EXPECT_TRUE(detector_->Detect(text, {"en", "de"}).empty()) << text;
  }
  // An address inside a sentence is left out; the sentence still has its language.
  EXPECT_EQ(Best("Bitte schreiben Sie an info@example.de oder besuchen Sie https://example.de"),
            "de");
}

// Only the first kMaxDetectedBytes are read, cut at a character: a long text costs no more
// than that, and a cut never splits a character into invalid bytes.
TEST_F(LanguageDetectorTest, LongTextsAreReadFromTheirStart) {
  std::string text;
  while (text.size() < 3 * LanguageDetector::kMaxDetectedBytes) text += "Fußgänger überqueren. ";
  EXPECT_EQ(Best(text), "de");
  std::string english_then_german(LanguageDetector::kMaxDetectedBytes, ' ');
  english_then_german.replace(0, 40, "The children are playing in the garden.");
  english_then_german += "Die Kinder spielen im Garten und die Eltern sehen zu.";
  EXPECT_EQ(Best(english_then_german), "en");
}

TEST(LanguageCodeTest, FirstSubtagInLowerCase) {
  EXPECT_EQ(LanguageCode("pt_BR"), "pt");
  EXPECT_EQ(LanguageCode("zh-Hant-TW"), "zh");
  EXPECT_EQ(LanguageCode("EN"), "en");
  EXPECT_EQ(LanguageCode("fr"), "fr");
}

TEST(LanguageDetectorLoadTest, AFileThatIsNotAModelIsRefused) {
  const std::string path = ::testing::TempDir() + "/not_a_model.ftz";
  std::ofstream(path) << "not a model";
  const absl::StatusOr<std::unique_ptr<LanguageDetector>> detector = LanguageDetector::Load(path);
  ASSERT_FALSE(detector.ok());
  EXPECT_EQ(detector.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(detector.status().message().find(path), std::string::npos) << detector.status();
  EXPECT_FALSE(LanguageDetector::Load("/nonexistent/lid.176.ftz").ok());
}

}  // namespace
}  // namespace mtserve
