// Subtitle files through PrepareDocument and JoinDocument (text/document.h), with hand-written
// "translations" and alignments: what comes back is written from the files' meaning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/test_lib/test_util.h"
#include "text/document.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr absl::string_view kWordStart = "\xE2\x96\x81";

class SubtitleFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  std::unique_ptr<Document> Prepare(absl::string_view text, DocumentFormat format,
                                    SubtitleLayout layout = {}) const {
    SentenceRules rules{splitter_.get(), &tokenizer(), 512, {}, ""};
    rules.subtitle_layout = layout;
    absl::StatusOr<std::unique_ptr<Document>> document = PrepareDocument(text, format, rules);
    EXPECT_TRUE(document.ok()) << document.status();
    return document.ok() ? *std::move(document) : nullptr;
  }

  // A translation `text` of source sentence `source` whose target word w is aligned to source
  // word words[w] (words are what lies between spaces; -1: aligned to nothing).
  Hypothesis Aligned(absl::string_view source, const std::string& text,
                     const std::vector<int>& words) const {
    Hypothesis h;
    h.text = text;
    h.ids = tokenizer().EncodeTarget(text);
    // The piece each source word starts with.
    std::vector<int> word_piece;
    const std::vector<std::string> pieces = tokenizer().SourcePieces(source);
    for (size_t p = 0; p < pieces.size(); ++p) {
      if (absl::StartsWith(pieces[p], kWordStart)) word_piece.push_back(static_cast<int>(p));
    }
    for (size_t k = 0; k < h.ids.size(); ++k) {
      const std::string prefix = tokenizer().DecodeTarget(absl::MakeConstSpan(h.ids.data(), k + 1));
      const std::vector<absl::string_view> so_far =
          absl::StrSplit(prefix, ' ', absl::SkipWhitespace());
      const int word = so_far.empty() ? 0 : static_cast<int>(so_far.size()) - 1;
      const int source_word = word < static_cast<int>(words.size()) ? words[word] : -1;
      h.alignment.push_back(source_word < 0 ? static_cast<int>(pieces.size())
                                            : word_piece[source_word]);
    }
    return h;
  }

  // Results whose hypothesis is `hypotheses[i]` for sentence i.
  static std::vector<TranslationResult> Results(const Document& document,
                                                std::vector<Hypothesis> hypotheses) {
    std::vector<TranslationResult> results;
    for (size_t i = 0; i < hypotheses.size(); ++i) {
      TranslationResult& r = results.emplace_back();
      r.source_tokens = static_cast<int>(document.sentences()[i].ids.size());
      r.hypotheses.push_back(std::move(hypotheses[i]));
    }
    return results;
  }

  // Each sentence translated as itself, with no alignment.
  std::vector<TranslationResult> Identity(absl::string_view stream_of,
                                          const Document& document) const {
    std::vector<Hypothesis> hypotheses;
    for (const SourceSentence& s : document.sentences()) {
      Hypothesis h;
      h.text = std::string(stream_of.substr(s.range.begin, s.range.end - s.range.begin));
      h.ids = tokenizer().EncodeTarget(h.text);
      hypotheses.push_back(std::move(h));
    }
    return Results(document, std::move(hypotheses));
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_F(SubtitleFormatTest, NamesAndAlignment) {
  EXPECT_EQ(*ParseDocumentFormat("srt"), DocumentFormat::kSrt);
  EXPECT_EQ(*ParseDocumentFormat("vtt"), DocumentFormat::kVtt);
  EXPECT_TRUE(NeedsAlignment(DocumentFormat::kSrt));
  EXPECT_TRUE(NeedsAlignment(DocumentFormat::kVtt));
}

// Translated as itself, a file comes back byte for byte: numbers, timings, settings, tags, notes,
// blank lines, CRLF and the byte order mark; a sentence over two cues is one sentence.
TEST_F(SubtitleFormatTest, IdentityTranslationGivesTheFileBack) {
  const std::string stream = "I went to the big store yesterday. It was closed.";
  const std::string srt =
      "\xEF\xBB\xBF"
      "1\r\n00:00:01,000 --> 00:00:02,500\r\nI went to the\r\n<i>big</i> store\r\n\r\n"
      "2\r\n00:00:03,000 --> 00:00:04,000 X1:10\r\n{\\an8}yesterday. It was closed.\r\n";
  const std::unique_ptr<Document> document = Prepare(srt, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 2u);
  EXPECT_EQ(document->sentences()[0].ids,
            tokenizer().EncodeSource("I went to the big store yesterday."));
  EXPECT_EQ(JoinDocument(*document, Identity(stream, *document), 1, tokenizer()).hypotheses[0].text,
            srt);

  const std::string vtt =
      "WEBVTT\n\nNOTE kept\n\nSTYLE\n::cue { color: red }\n\n"
      "a\n00:01.000 --> 00:02.000 align:start\n<v Bob>The dog that I saw</v>\n\n"
      "00:02.000 --> 00:03.000\n<v Bob>was big.</v> <c.x>Yes.</c>\n";
  const std::unique_ptr<Document> vtt_document = Prepare(vtt, DocumentFormat::kVtt);
  ASSERT_NE(vtt_document, nullptr);
  EXPECT_EQ(JoinDocument(*vtt_document, Identity("The dog that I saw was big. Yes.", *vtt_document),
                         1, tokenizer())
                .hypotheses[0]
                .text,
            vtt);
}

// A sentence over two cues is divided by the alignment: each cue gets the target words aligned to
// its source words, in order, whatever their relative position.
TEST_F(SubtitleFormatTest, ASentenceOverTwoCuesIsDividedByTheAlignment) {
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:03,000\nYesterday evening at home I saw\n\n"
      "2\n00:00:03,000 --> 00:00:04,000\na dog.\n";
  const std::string source = "Yesterday evening at home I saw a dog.";
  const std::unique_ptr<Document> document = Prepare(srt, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 1u);
  const std::string german = "Ich sah gestern Abend zu Hause einen Hund.";
  // Ich sah gestern Abend zu Hause einen Hund. -> I saw Yesterday evening at home a dog.
  const Hypothesis aligned = Aligned(source, german, {4, 5, 0, 1, 2, 3, 6, 7});
  EXPECT_EQ(
      JoinDocument(*document, Results(*document, {aligned}), 1, tokenizer()).hypotheses[0].text,
      "1\n00:00:01,000 --> 00:00:03,000\nIch sah gestern Abend zu Hause\n\n"
      "2\n00:00:03,000 --> 00:00:04,000\neinen Hund.\n");
  // Aligned the other way round ("einen" to "saw"), "einen" goes with the first cue.
  const Hypothesis other = Aligned(source, german, {4, 5, 0, 1, 2, 3, 5, 7});
  EXPECT_EQ(JoinDocument(*document, Results(*document, {other}), 1, tokenizer()).hypotheses[0].text,
            "1\n00:00:01,000 --> 00:00:03,000\nIch sah gestern Abend zu Hause einen\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\nHund.\n");
  // Everything aligned to the first cue's words: the second cue still gets the last word.
  const Hypothesis all_first = Aligned(source, german, {0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(
      JoinDocument(*document, Results(*document, {all_first}), 1, tokenizer()).hypotheses[0].text,
      "1\n00:00:01,000 --> 00:00:03,000\nIch sah gestern Abend zu Hause einen\n\n"
      "2\n00:00:03,000 --> 00:00:04,000\nHund.\n");
}

// Tags go on the aligned words; dialogue lines stay lines, their dashes kept, not translated; long
// text is wrapped to the layout.
TEST_F(SubtitleFormatTest, TagsFollowTheAlignmentAndTextIsWrapped) {
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nA <i>big</i> dog runs.\n\n"
      "2\n00:00:02,000 --> 00:00:03,000\n- Hi.\n- Hello.\n";
  const std::unique_ptr<Document> document = Prepare(srt, DocumentFormat::kSrt, {20, 2});
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 3u);
  EXPECT_EQ(document->sentences()[1].ids, tokenizer().EncodeSource("Hi."));
  Hypothesis first =
      Aligned("A big dog runs.", "Ein sehr großer Hund rennt schnell.", {0, 1, 1, 2, 3, 3});
  Hypothesis hi;
  hi.text = "Hallo.";
  Hypothesis hello;
  hello.text = "Guten Tag.";
  EXPECT_EQ(JoinDocument(*document, Results(*document, {first, hi, hello}), 1, tokenizer())
                .hypotheses[0]
                .text,
            "1\n00:00:01,000 --> 00:00:02,000\nEin <i>sehr großer</i>\nHund rennt schnell.\n\n"
            "2\n00:00:02,000 --> 00:00:03,000\n- Hallo.\n- Guten Tag.\n");
}

// A translation of fewer words than the cues its sentence is over is divided by characters: no
// cue is empty, and the cues hold the translation's characters in order.
TEST_F(SubtitleFormatTest, FewerWordsThanCuesAreDividedByCharacters) {
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nSo\n\n"
      "2\n00:00:02,000 --> 00:00:03,000\nI\n\n"
      "3\n00:00:03,000 --> 00:00:04,000\nwent home.\n";
  const std::unique_ptr<Document> document = Prepare(srt, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  ASSERT_EQ(document->sentences().size(), 1u);
  Hypothesis h;
  h.text = "Ich ging.";
  h.ids = tokenizer().EncodeTarget(h.text);
  const std::string out =
      JoinDocument(*document, Results(*document, {h}), 1, tokenizer()).hypotheses[0].text;
  // The cue texts: the line after each timing line.
  std::vector<std::string> cues;
  const std::vector<std::string> lines = absl::StrSplit(out, '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (absl::StrContains(lines[i], "-->")) cues.push_back(lines[i + 1]);
  }
  ASSERT_EQ(cues.size(), 3u) << out;
  for (const std::string& cue : cues) EXPECT_FALSE(cue.empty()) << out;
  EXPECT_EQ(absl::StrCat(cues[0], cues[1], cues[2]), "Ichging.") << out;
}

// Which cues are translated together: a sentence runs on into the next cue only if the cue before
// does not end with a full stop, question or exclamation mark and the next starts at most
// max_sentence_gap_ms (3 s by default) after it ends.
TEST_F(SubtitleFormatTest, SentencesStopAtSentencePunctuationAndLongGaps) {
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nI saw it.\n\n"
      "2\n00:00:02,100 --> 00:00:03,000\nand then I left\n\n"
      "3\n00:00:03,200 --> 00:00:05,000\nthrough the back door\n\n"
      "4\n00:00:12,000 --> 00:00:14,000\nthe storm came\n\n"
      "5\n00:00:14,500 --> 00:00:16,000\nover the hills\n\n"
      "6\n00:00:20,000 --> 00:00:21,000\n<i>\"Who is there?\"</i>\n\n"
      "7\n00:00:21,100 --> 00:00:22,000\nshe asked.\n";
  const std::unique_ptr<Document> document = Prepare(srt, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  std::vector<std::vector<int>> ids;
  for (const SourceSentence& s : document->sentences()) ids.push_back(s.ids);
  EXPECT_THAT(ids, ElementsAre(tokenizer().EncodeSource("I saw it."),
                               tokenizer().EncodeSource("and then I left through the back door"),
                               tokenizer().EncodeSource("the storm came over the hills"),
                               tokenizer().EncodeSource("\"Who is there?\""),
                               tokenizer().EncodeSource("she asked.")));
  // Each sentence's translation goes to its own cues only.
  std::vector<Hypothesis> hypotheses;
  for (absl::string_view text :
       {"Ich sah es.", "und dann ging ich durch die Hintertür", "der Sturm kam über die Hügel",
        "\"Wer ist da?\"", "fragte sie."}) {
    Hypothesis& h = hypotheses.emplace_back();
    h.text = std::string(text);
    h.ids = tokenizer().EncodeTarget(h.text);
  }
  const std::string out =
      JoinDocument(*document, Results(*document, hypotheses), 1, tokenizer()).hypotheses[0].text;
  EXPECT_THAT(out, HasSubstr("00:00:02,000\nIch sah es.\n\n"));
  EXPECT_THAT(out, HasSubstr("00:00:21,000\n<i>\"Wer ist da?\"</i>\n\n"));
  EXPECT_THAT(out, HasSubstr("00:00:22,000\nfragte sie.\n"));

  // WebVTT alike, with a gap of one's own: 1 s allowed, the 1.5 s silence ends a sentence.
  const std::string vtt =
      "WEBVTT\n\n"
      "00:01.000 --> 00:02.000\nThe dog that I saw\n\n"
      "00:02.800 --> 00:03.000\nwas big\n\n"
      "00:04.500 --> 00:05.000\nand the cat was small\n";
  const std::unique_ptr<Document> vtt_document =
      Prepare(vtt, DocumentFormat::kVtt, {.max_sentence_gap_ms = 1000});
  ASSERT_NE(vtt_document, nullptr);
  ids.clear();
  for (const SourceSentence& s : vtt_document->sentences()) ids.push_back(s.ids);
  EXPECT_THAT(ids, ElementsAre(tokenizer().EncodeSource("The dog that I saw was big"),
                               tokenizer().EncodeSource("and the cat was small")));
}

TEST_F(SubtitleFormatTest, ARefusedFileIsAnError) {
  SentenceRules rules{splitter_.get(), &tokenizer(), 512, {}, ""};
  const absl::Status status =
      PrepareDocument("1\n00:00:01,000 --> 00:00:0x,000\nHi.\n", DocumentFormat::kSrt, rules)
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cue 1 (line 2)"));
}

}  // namespace
}  // namespace mtserve
