// Subtitle files taken apart into their cues' text and tags and rebuilt (text/subtitle_document.h),
// and cue text wrapped. Expected streams, ranges and layouts are written from the files by hand.
#include "text/subtitle_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = SubtitleDocument::Kind;

std::string Text(const SubtitleDocument& d, Segment s) {
  return d.stream().substr(s.begin, s.end - s.begin);
}

std::vector<std::string> OwnTexts(const SubtitleDocument& d) {
  std::vector<std::string> texts;
  for (const SubtitleDocument::Cue& cue : d.cues()) {
    texts.push_back(d.bytes().substr(cue.payload.begin, cue.payload.end - cue.payload.begin));
  }
  return texts;
}

TEST(SubtitleDocumentTest, SrtCuesTextAndTags) {
  const std::string srt =
      "\xEF\xBB\xBF"
      "1\r\n00:00:01,000 --> 00:00:02,500\r\nI went to the\r\n<i>big</i> store\r\n\r\n"
      "2\r\n00:00:03,000 --> 00:00:04,000 X1:10 X2:20\r\n{\\an8}yesterday.\r\n";
  absl::StatusOr<SubtitleDocument> d = SubtitleDocument::Parse(srt, Kind::kSrt);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->stream(), "I went to the big store yesterday.");
  ASSERT_EQ(d->cues().size(), 2u);
  const SubtitleDocument::Cue& first = d->cues()[0];
  EXPECT_EQ(first.number, 1);
  EXPECT_EQ(first.line, 2u);
  EXPECT_EQ(first.line_end, "\r\n");
  EXPECT_EQ(Text(*d, first.text), "I went to the big store");
  EXPECT_THAT(first.line_breaks, ElementsAre(13u));
  ASSERT_EQ(first.inlines.size(), 1u);
  EXPECT_EQ(Text(*d, first.inlines[0].range), "big");
  EXPECT_EQ(first.inlines[0].open, "<i>");
  EXPECT_EQ(first.inlines[0].close, "</i>");
  const SubtitleDocument::Cue& second = d->cues()[1];
  EXPECT_EQ(Text(*d, second.text), "yesterday.");
  ASSERT_EQ(second.inlines.size(), 1u);
  EXPECT_EQ(second.inlines[0].open, "{\\an8}");
  EXPECT_EQ(second.inlines[0].range, (Segment{second.text.begin, second.text.begin}));
  EXPECT_THAT(OwnTexts(*d), ElementsAre("I went to the\r\n<i>big</i> store", "{\\an8}yesterday."));
  // Each cue's own text back: the file back, byte for byte.
  EXPECT_EQ(d->Render(OwnTexts(*d)), srt);
  EXPECT_EQ(d->Render({"A", "B"}),
            "\xEF\xBB\xBF"
            "1\r\n00:00:01,000 --> 00:00:02,500\r\nA\r\n\r\n"
            "2\r\n00:00:03,000 --> 00:00:04,000 X1:10 X2:20\r\nB\r\n");
}

TEST(SubtitleDocumentTest, VttKeepsHeaderNotesStyleAndSettings) {
  const std::string vtt =
      "WEBVTT - a film\nKind: captions\n\n"
      "STYLE\n::cue { color: red }\n\n"
      "NOTE a note --> with an arrow\n\n"
      "intro\n00:01.000 --> 00:02.000 align:start line:0\n<v Bob>Hello <c.loud>there</c>.</v>\n\n"
      "01:00:02.000 --> 01:00:03.000\nBye<00:00:02.500> now.\n";
  absl::StatusOr<SubtitleDocument> d = SubtitleDocument::Parse(vtt, Kind::kVtt);
  ASSERT_TRUE(d.ok()) << d.status();
  // The first cue ends a sentence (and an hour passes): a line break between them.
  EXPECT_EQ(d->stream(), "Hello there.\nBye now.");
  ASSERT_EQ(d->cues().size(), 2u);
  const SubtitleDocument::Cue& first = d->cues()[0];
  ASSERT_EQ(first.inlines.size(), 2u);
  EXPECT_EQ(first.inlines[0].open, "<v Bob>");
  EXPECT_EQ(Text(*d, first.inlines[0].range), "Hello there.");
  EXPECT_EQ(first.inlines[1].open, "<c.loud>");
  EXPECT_EQ(first.inlines[1].close, "</c>");
  EXPECT_EQ(first.inlines[1].parent, 0);
  EXPECT_EQ(Text(*d, first.inlines[1].range), "there");
  EXPECT_EQ(d->cues()[1].inlines.size(), 1u);  // The timestamp: a point.
  EXPECT_EQ(d->Render(OwnTexts(*d)), vtt);
  EXPECT_EQ(d->Render({"Hallo.", "Tschüss."}),
            "WEBVTT - a film\nKind: captions\n\n"
            "STYLE\n::cue { color: red }\n\n"
            "NOTE a note --> with an arrow\n\n"
            "intro\n00:01.000 --> 00:02.000 align:start line:0\nHallo.\n\n"
            "01:00:02.000 --> 01:00:03.000\nTschüss.\n");
}

// Between two cues the stream has a space where a sentence may run on from one into the next, and
// a line break (which ends a sentence) after a cue that ends one or before a long silence.
TEST(SubtitleDocumentTest, CueBoundariesEndSentencesAfterPunctuationAndLongGaps) {
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nA\n\n"
      "2\n00:00:02,500 --> 00:00:03,000\nb.\n\n"         // 0.5 s after: runs on.
      "3\n00:00:03,100 --> 00:00:04,000\nc\n\n"          // After a full stop: a break.
      "4\n00:00:07,000 --> 00:00:08,000\nd\n\n"          // Exactly 3 s after: runs on.
      "5\n00:00:11,001 --> 00:00:12,000\ne\n\n"          // 3.001 s after: a break.
      "6\n00:00:11,500 --> 00:00:13,000\n<i>f?</i>\n\n"  // Overlapping: runs on.
      "7\n00:00:13,000 --> 00:00:14,000\ng...\n\n"       // After "?" behind a tag: a break.
      "8\n00:00:14,000 --> 00:00:15,000\nh\n";           // After an ellipsis: runs on.
  absl::StatusOr<SubtitleDocument> d = SubtitleDocument::Parse(srt, Kind::kSrt);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->stream(), "A b.\nc d\ne f?\ng... h");
  EXPECT_EQ(d->cues()[4].start_ms, 11001);
  EXPECT_EQ(d->cues()[4].end_ms, 12000);
  // A longer gap allowed: only the full stop and the question mark end sentences.
  absl::StatusOr<SubtitleDocument> lenient =
      SubtitleDocument::Parse(srt, Kind::kSrt, {.max_sentence_gap_ms = 5000});
  ASSERT_TRUE(lenient.ok()) << lenient.status();
  EXPECT_EQ(lenient->stream(), "A b.\nc d e f?\ng... h");
  // None allowed: only cues that touch or overlap run on.
  absl::StatusOr<SubtitleDocument> strict =
      SubtitleDocument::Parse(srt, Kind::kSrt, {.max_sentence_gap_ms = 0});
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(strict->stream(), "A\nb.\nc\nd\ne f?\ng... h");
}

TEST(EndsSentenceTest, FullStopsQuestionAndExclamationMarksButNotEllipses) {
  for (absl::string_view ends :
       {"Stop.", "Why?", "No!", "What?!", "He said \"go.\"", "(Quietly.)  ",
        "\xE2\x80\x9CYes.\xE2\x80\x9D", "\xE8\xA1\x8C\xE3\x81\x8F\xE3\x80\x82", "Wer\xEF\xBC\x9F",
        "Dr."}) {
    EXPECT_TRUE(EndsSentence(ends)) << ends;
  }
  for (absl::string_view goes_on : {"", "and", "I think...", "I think..", "Well\xE2\x80\xA6", "So,",
                                    "Wait:", "\"Go\"", "3.5 m"}) {
    EXPECT_FALSE(EndsSentence(goes_on)) << goes_on;
  }
}

TEST(SubtitleDocumentTest, RefusalsNameTheCueTheLineAndTheLimit) {
  struct Case {
    std::string bytes;
    Kind kind;
    std::vector<std::string> message;
  };
  for (const Case& c : std::vector<Case>{
           {"1\n00:00:01,000 --> 00:00:0x,000\nHi.\n", Kind::kSrt, {"cue 1 (line 2)", "timing"}},
           {"1\n00:00:02,000 --> 00:00:03,000\nA.\n\n2\n00:00:01,000 --> 00:00:04,000\nB.\n",
            Kind::kSrt,
            {"cue 2 (line 6)", "out of order"}},
           {"1\n00:00:02,000 --> 00:00:01,000\nA.\n", Kind::kSrt, {"cue 1 (line 2)", "ends"}},
           {"Hello\nthere\n", Kind::kSrt, {"cue 1 (line 1)", "cue number or a timing"}},
           {"1\n00:00:01,000 --> 00:00:02,000\nA.\n", Kind::kVtt, {"line 1", "WEBVTT"}},
           {"WEBVTT\n\n00:01.000 --> 00:02.000\nA.\n", Kind::kSrt, {"line 1", "format vtt"}},
           {"WEBVTT\n\njust text\n", Kind::kVtt, {"cue 1 (line 3)", "NOTE, STYLE or REGION"}},
           {"1\n00:00:01,000 --> 00:00:02,000\n" + std::string(5000, 'a') + "\n",
            Kind::kSrt,
            {"cue 1 (line 2)", "4096"}},
       }) {
    SCOPED_TRACE(c.bytes.substr(0, 60));
    const absl::Status status = SubtitleDocument::Parse(c.bytes, c.kind).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    for (const std::string& part : c.message) EXPECT_THAT(status.message(), HasSubstr(part));
  }
}

TEST(SubtitleDocumentTest, MoreCuesThanTheLimitAreRefused) {
  std::string srt;
  for (size_t i = 0; i <= SubtitleDocument::kMaxCues; ++i) {
    srt += "1\n00:00:01,000 --> 00:00:02,000\na\n\n";
  }
  const absl::Status status = SubtitleDocument::Parse(srt, Kind::kSrt).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cue 100001"));
  EXPECT_THAT(status.message(), HasSubstr("100000"));
}

// Lines: one if the text fits, else the fewest lines that fit, balanced; '\n' always ends one.
TEST(LineEndsTest, WrapsBalancedWithinTheLimits) {
  const SubtitleLayout layout{20, 2};
  EXPECT_THAT(LineEnds("A short line.", layout), ElementsAre());
  // 32 characters: two lines, the break where they are most even (15 and 16), not where a greedy
  // fill would put it (19 and 12).
  const std::string two = "Four words here and four more go";
  EXPECT_THAT(LineEnds(two, layout), ElementsAre(Segment{15, 16}));
  EXPECT_THAT(LineEnds("One.\nTwo.", layout), ElementsAre(Segment{4, 5}));
  // More than two lines of twenty: more lines, nothing dropped, none over twenty.
  const std::string long_text =
      "This sentence is far too long to fit on two lines of twenty characters";
  const std::vector<Segment> ends = LineEnds(long_text, layout);
  EXPECT_EQ(ends.size(), 3u);
  size_t begin = 0;
  for (size_t i = 0; i <= ends.size(); ++i) {
    const size_t end = i < ends.size() ? ends[i].begin : long_text.size();
    EXPECT_LE(end - begin, 20u);
    begin = i < ends.size() ? ends[i].end : begin;
  }
  // A word longer than a line is not cut: its line is longer.
  EXPECT_THAT(LineEnds("Donaudampfschifffahrtsgesellschaft ja", layout),
              ElementsAre(Segment{34, 35}));
  // Characters are code points, not bytes: 19 characters (37 bytes) fit on one line.
  std::string umlauts;
  for (int i = 0; i < 9; ++i) umlauts += "\xC3\xA4";
  EXPECT_THAT(LineEnds(umlauts + " " + umlauts, layout), ElementsAre());
}

TEST(SubtitleDocumentTest, CueTextWrapsAndPlacesTags) {
  const std::string srt = "1\n00:00:01,000 --> 00:00:02,000\n<i>Hello</i> world.\n";
  absl::StatusOr<SubtitleDocument> d = SubtitleDocument::Parse(srt, Kind::kSrt);
  ASSERT_TRUE(d.ok()) << d.status();
  const SubtitleDocument::Cue& cue = d->cues()[0];
  const SubtitleLayout layout{16, 2};
  // Its own text within the limits: its own bytes.
  EXPECT_EQ(d->CueText(cue, "Hello world.", {{0, 5}}, layout), "<i>Hello</i> world.");
  // A translation: tags around their range, lines wrapped by the layout.
  EXPECT_EQ(d->CueText(cue, "Hallo du schöne Welt.", {{0, 5}}, layout),
            "<i>Hallo</i> du\nschöne Welt.");
  // Its own text over the limits is wrapped like any other.
  EXPECT_EQ(d->CueText(cue, "Hello world.", {{0, 5}}, SubtitleLayout{6, 2}),
            "<i>Hello</i>\nworld.");
}

}  // namespace
}  // namespace mtserve
