// Sentence splitting, cutting to a token limit and reassembly (text/). Expected sentences and
// byte offsets are worked out by hand from the texts.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/segment.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/cut_to_token_limit.h"
#include "text/sentence_splitter.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::unique_ptr<SentenceSplitter> MakeSplitter(absl::string_view language) {
  absl::StatusOr<std::unique_ptr<SentenceSplitter>> splitter = SentenceSplitter::Create(language);
  EXPECT_TRUE(splitter.ok()) << splitter.status();
  return splitter.ok() ? *std::move(splitter) : nullptr;
}

std::vector<std::string> Substrings(absl::string_view text, const std::vector<Segment>& segments) {
  std::vector<std::string> out;
  for (const Segment& s : segments) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

std::vector<std::string> Sentences(const SentenceSplitter& splitter, absl::string_view text) {
  return Substrings(text, splitter.Split(text));
}

// The length of the whitespace character (as the tests' texts use them) at the start of `s`, or 0.
size_t WhitespaceLength(absl::string_view s) {
  for (absl::string_view ws : {" ", "\t", "\n", "\r", "\v", "\f", "\u0085", "\u00A0", "\u2028",
                               "\u2029", "\u3000", "\u2003"}) {
    if (absl::StartsWith(s, ws)) return ws.size();
  }
  return 0;
}

bool IsWhitespaceOnly(absl::string_view s) {
  while (!s.empty()) {
    const size_t n = WhitespaceLength(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

bool EndsWithWhitespace(absl::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (WhitespaceLength(s.substr(i)) == s.size() - i) return true;
  }
  return false;
}

// The splitter's contract on any text: sorted, non-empty, in range, no whitespace at either end,
// only whitespace in between.
void ExpectValidSentences(absl::string_view text, const std::vector<Segment>& segments) {
  size_t pos = 0;
  for (const Segment& s : segments) {
    ASSERT_LE(pos, s.begin) << text;
    ASSERT_LT(s.begin, s.end) << text;
    ASSERT_LE(s.end, text.size()) << text;
    const absl::string_view sentence = text.substr(s.begin, s.end - s.begin);
    EXPECT_EQ(WhitespaceLength(sentence), 0u) << sentence;
    EXPECT_FALSE(EndsWithWhitespace(sentence)) << sentence;
    EXPECT_TRUE(IsWhitespaceOnly(text.substr(pos, s.begin - pos))) << text;
    pos = s.end;
  }
  EXPECT_TRUE(IsWhitespaceOnly(text.substr(pos))) << text;
}

// ---------------------------------------------------------------------------------------------
// SentenceSplitter

TEST(SentenceSplitterTest, CreatesForKnownUnknownAndEmptyLanguages) {
  for (absl::string_view language : {"en", "de", "fr", "", "xx", "en-US", "de_CH", "zh"}) {
    EXPECT_TRUE(SentenceSplitter::Create(language).ok()) << language;
  }
}

TEST(SentenceSplitterTest, RejectsMalformedLanguageCodes) {
  for (absl::string_view language :
       std::vector<absl::string_view>{"en@ss=none", "e n", "de;x", absl::string_view("e\0n", 3)}) {
    EXPECT_EQ(SentenceSplitter::Create(language).status().code(),
              absl::StatusCode::kInvalidArgument)
        << language;
  }
}

TEST(SentenceSplitterTest, SplitsAnEnglishParagraph) {
  auto splitter = MakeSplitter("en");
  const std::string text = "A man is riding a bike. Two dogs play in the snow! Is it raining?";
  EXPECT_THAT(splitter->Split(text), ElementsAre(Segment{0, 23}, Segment{24, 50}, Segment{51, 65}));
  EXPECT_THAT(
      Sentences(*splitter, text),
      ElementsAre("A man is riding a bike.", "Two dogs play in the snow!", "Is it raining?"));
}

TEST(SentenceSplitterTest, OneSentenceWithoutFinalPunctuation) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(Sentences(*splitter, "A girl in a red coat"), ElementsAre("A girl in a red coat"));
}

TEST(SentenceSplitterTest, EnglishAbbreviationsDoNotEndSentences) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(Sentences(*splitter, "Dr. Smith arrived. He sat down."),
              ElementsAre("Dr. Smith arrived.", "He sat down."));
  EXPECT_THAT(Sentences(*splitter, "Mr. Jones left!"), ElementsAre("Mr. Jones left!"));
  EXPECT_THAT(Sentences(*splitter, "We met Prof. Brown. Then we met Mrs. Green."),
              ElementsAre("We met Prof. Brown.", "Then we met Mrs. Green."));
  // From our own list rather than CLDR's.
  EXPECT_THAT(Sentences(*splitter, "He lives on Baker St. Paul lives elsewhere."),
              ElementsAre("He lives on Baker St. Paul lives elsewhere."));
  EXPECT_THAT(Sentences(*splitter, "See Fig. 3 for details. It is clear."),
              ElementsAre("See Fig. 3 for details.", "It is clear."));
  EXPECT_THAT(Sentences(*splitter, "A fight with Sgt. Pepper. It was loud."),
              ElementsAre("A fight with Sgt. Pepper.", "It was loud."));
  // CLDR's "OK." is an everyday word here.
  EXPECT_THAT(Sentences(*splitter, "It is OK. We go."), ElementsAre("It is OK.", "We go."));
  // Only as a whole word: "Mr." inside "HerMr." is no abbreviation.
  EXPECT_THAT(Sentences(*splitter, "He saw HerMr. Then he left."),
              ElementsAre("He saw HerMr.", "Then he left."));
}

TEST(SentenceSplitterTest, GermanAbbreviationsDoNotEndSentences) {
  auto splitter = MakeSplitter("de");
  EXPECT_THAT(Sentences(*splitter, "Das ist z.B. ein Test. Er kam."),
              ElementsAre("Das ist z.B. ein Test.", "Er kam."));
  EXPECT_THAT(Sentences(*splitter, "Dr. Müller kam. Er ging."),
              ElementsAre("Dr. Müller kam.", "Er ging."));
  EXPECT_THAT(Sentences(*splitter, "Das kostet ca. 5 Euro. Gut."),
              ElementsAre("Das kostet ca. 5 Euro.", "Gut."));
  EXPECT_THAT(Sentences(*splitter, "Er wohnt in Haus Nr. 7. Sie nicht."),
              ElementsAre("Er wohnt in Haus Nr. 7.", "Sie nicht."));
  // Abbreviations count as whole words only: CLDR's "am." does not join "kam. Das", and its
  // "Test." (Testament) is an everyday word.
  EXPECT_THAT(Sentences(*splitter, "Er kam. Das Haus. Ein Test."),
              ElementsAre("Er kam.", "Das Haus.", "Ein Test."));
  EXPECT_THAT(Sentences(*splitter, "Siehe s. oben. (Dr. Maier) kam."),
              ElementsAre("Siehe s. oben.", "(Dr. Maier) kam."));
}

TEST(SentenceSplitterTest, UnknownLanguageUsesRootRules) {
  auto splitter = MakeSplitter("xx");
  EXPECT_THAT(Sentences(*splitter, "One. Two! Three?"), ElementsAre("One.", "Two!", "Three?"));
  auto root = MakeSplitter("");
  EXPECT_THAT(Sentences(*root, "One. Two! Three?"), ElementsAre("One.", "Two!", "Three?"));
}

TEST(SentenceSplitterTest, LineBreaksAreHardBoundaries) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(Sentences(*splitter, "This line has no end\nthe next line does."),
              ElementsAre("This line has no end", "the next line does."));
  // Even after an abbreviation that would otherwise join them.
  EXPECT_THAT(Sentences(*splitter, "Ask Dr.\nSmith knows."),
              ElementsAre("Ask Dr.", "Smith knows."));
  EXPECT_THAT(Sentences(*splitter, "a\rb"), ElementsAre("a", "b"));
  EXPECT_THAT(Sentences(*splitter, "first line\u2028second line"),
              ElementsAre("first line", "second line"));
  EXPECT_THAT(Sentences(*splitter, "first paragraph\u2029second paragraph"),
              ElementsAre("first paragraph", "second paragraph"));
}

TEST(SentenceSplitterTest, BlankLinesSeparateParagraphs) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(splitter->Split("First one.\n\n\nSecond one."),
              ElementsAre(Segment{0, 10}, Segment{13, 24}));
}

TEST(SentenceSplitterTest, CrLfLineBreaks) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(splitter->Split("One.\r\nTwo\r\nThree."),
              ElementsAre(Segment{0, 4}, Segment{6, 9}, Segment{11, 17}));
}

TEST(SentenceSplitterTest, LeadingTrailingAndIndentationWhitespaceIsOutside) {
  auto splitter = MakeSplitter("en");
  const std::string text = "  \tHello there.  Bye now. \n    Indented line.\t ";
  ASSERT_EQ(text.size(), 47u);
  EXPECT_THAT(splitter->Split(text), ElementsAre(Segment{3, 15}, Segment{17, 25}, Segment{31, 45}));
}

TEST(SentenceSplitterTest, WhitespaceOnlyAndEmptyTextsHaveNoSentences) {
  auto splitter = MakeSplitter("en");
  EXPECT_THAT(splitter->Split(""), IsEmpty());
  EXPECT_THAT(splitter->Split(" "), IsEmpty());
  EXPECT_THAT(splitter->Split(" \t\n\r\n \v\f\u00A0\u3000\u2028\u2029\u0085"), IsEmpty());
}

TEST(SentenceSplitterTest, MultiByteCharactersHaveByteOffsets) {
  auto splitter = MakeSplitter("en");
  // "é" and "Ü" are two bytes each.
  EXPECT_THAT(splitter->Split("Café au lait. Über alles."),
              ElementsAre(Segment{0, 14}, Segment{15, 27}));
  // Emoji are four bytes (two UTF-16 units).
  EXPECT_THAT(splitter->Split("I love pizza 🍕. Me too! 😀"),
              ElementsAre(Segment{0, 18}, Segment{19, 26}, Segment{27, 31}));
  // A non-breaking space at the end is whitespace too, and excluded.
  EXPECT_THAT(splitter->Split("Süß.\u00A0"), ElementsAre(Segment{0, 6}));
}

TEST(SentenceSplitterTest, ChineseSentencesWithoutSpaces) {
  for (absl::string_view language : {"zh", "en", ""}) {
    auto splitter = MakeSplitter(language);
    // Three bytes per character; "。" ends a sentence without a following space.
    EXPECT_THAT(splitter->Split("我来了。你好。"), ElementsAre(Segment{0, 12}, Segment{12, 21}))
        << language;
    // An ideographic space (three bytes) between them stays outside.
    EXPECT_THAT(splitter->Split("你好。\u3000再见。"), ElementsAre(Segment{0, 9}, Segment{12, 21}))
        << language;
  }
}

TEST(SentenceSplitterTest, InvalidUtf8DoesNotCrash) {
  auto splitter = MakeSplitter("en");
  // The invalid bytes stay inside their sentence.
  EXPECT_THAT(splitter->Split("Bad \xFF\xFE byte. Next one."),
              ElementsAre(Segment{0, 12}, Segment{13, 22}));
  // Truncated sequences, lone continuation bytes, overlong forms, surrogates.
  for (absl::string_view text : std::vector<absl::string_view>{
           absl::string_view("\xC3"), absl::string_view("Ok. \xE2\x82"),
           absl::string_view("\xF0\x9F\x98 x. y"), absl::string_view("\x80\x80. \x80"),
           absl::string_view("\xC0\xAF. \xED\xA0\x80."), absl::string_view("a\0b. c", 6)}) {
    const std::vector<Segment> segments = splitter->Split(text);
    ExpectValidSentences(text, segments);
    EXPECT_FALSE(segments.empty());
  }
  // Random bytes, biased towards spaces, periods and UTF-8 lead bytes.
  std::mt19937 rng(42);
  const std::string alphabet = " .!\n\rAb\x80\xBF\xC3\xE2\xF0\xFF";
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 40, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    const std::vector<Segment> segments = splitter->Split(text);
    size_t pos = 0;
    for (const Segment& s : segments) {
      ASSERT_LE(pos, s.begin);
      ASSERT_LT(s.begin, s.end);
      ASSERT_LE(s.end, text.size());
      pos = s.end;
    }
  }
}

TEST(SentenceSplitterTest, IsThreadSafe) {
  auto splitter = MakeSplitter("en");
  const std::string text =
      "A man is riding a bike. Two dogs play in the snow!\nIs it raining? Dr. Smith arrived.";
  const std::vector<Segment> expected = splitter->Split(text);
  ASSERT_EQ(expected.size(), 4u);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (splitter->Split(text) != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ::testing::Each(0));
}

// ---------------------------------------------------------------------------------------------
// Every text

const char* const kTexts[] = {
    "",
    "   ",
    "A man is riding a bike. Two dogs play in the snow! Is it raining?",
    "  \tHello there.  Bye now. \n    Indented line.\t ",
    "One.\r\nTwo\r\nThree.\r\n",
    "First one.\n\n\nSecond one.\n",
    "Dr. Smith arrived. He sat down.",
    "Café au lait. Über alles.\u00A0\u2028 Ende.",
    "我来了。你好。\u3000再见。",
    "I love pizza 🍕. Me too! 😀\n",
    "Bad \xFF\xFE byte. Next one. \xC3",
    "no punctuation at all",
};

// Whatever the text and the language, the sentences are in order, disjoint and trimmed, and
// only whitespace lies outside them (text/sentences.h keeps those bytes as they are).
TEST(SentenceSplitterTest, OnlyWhitespaceLiesOutsideTheSentences) {
  for (absl::string_view language : {"en", "de", ""}) {
    auto splitter = MakeSplitter(language);
    for (absl::string_view text : kTexts) ExpectValidSentences(text, splitter->Split(text));
  }
}

// ---------------------------------------------------------------------------------------------
// CutToTokenLimit

// Words (runs of non-space ASCII) plus the end-of-sentence token.
int CountWords(absl::string_view s) {
  int words = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words + 1;
}

// Non-space characters (UTF-8 code points) plus the end-of-sentence token.
int CountChars(absl::string_view s) {
  int chars = 0;
  for (char c : s) {
    if (c != ' ' && (static_cast<unsigned char>(c) & 0xC0) != 0x80) ++chars;
  }
  return chars + 1;
}

std::vector<std::string> Pieces(absl::string_view text, int max_tokens,
                                const std::function<int(absl::string_view)>& count) {
  return Substrings(text, CutToTokenLimit(text, Segment{0, text.size()}, max_tokens, count));
}

// Every piece within the limit (unless a single character is over it), no whitespace at either
// end, and the pieces with the whitespace between them give back the sentence exactly.
void ExpectValidPieces(absl::string_view text, Segment sentence, int max_tokens,
                       const std::function<int(absl::string_view)>& count,
                       const std::vector<Segment>& pieces) {
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.front().begin, sentence.begin);
  EXPECT_EQ(pieces.back().end, sentence.end);
  std::string rebuilt;
  size_t pos = sentence.begin;
  for (const Segment& p : pieces) {
    ASSERT_LE(pos, p.begin);
    ASSERT_LT(p.begin, p.end);
    const absl::string_view gap = text.substr(pos, p.begin - pos);
    const absl::string_view piece = text.substr(p.begin, p.end - p.begin);
    EXPECT_TRUE(IsWhitespaceOnly(gap));
    EXPECT_LE(count(piece), max_tokens) << piece;
    EXPECT_EQ(WhitespaceLength(piece), 0u) << piece;
    EXPECT_FALSE(EndsWithWhitespace(piece)) << piece;
    // Starts on a character boundary: never a UTF-8 continuation byte.
    EXPECT_NE(static_cast<unsigned char>(piece[0]) & 0xC0, 0x80) << piece;
    absl::StrAppend(&rebuilt, gap, piece);
    pos = p.end;
  }
  EXPECT_EQ(rebuilt, text.substr(sentence.begin, sentence.end - sentence.begin));
}

TEST(CutToTokenLimitTest, SentenceWithinTheLimitIsOnePiece) {
  const std::string text = "A man is riding a bike.";  // Six words: seven tokens.
  EXPECT_THAT(CutToTokenLimit(text, Segment{0, 23}, 7, CountWords), ElementsAre(Segment{0, 23}));
  EXPECT_THAT(CutToTokenLimit(text, Segment{0, 23}, 100, CountWords), ElementsAre(Segment{0, 23}));
  // A sentence inside a longer text keeps its offsets.
  const std::string padded = "  Hi. A man is riding a bike.  ";
  EXPECT_THAT(CutToTokenLimit(padded, Segment{6, 29}, 7, CountWords), ElementsAre(Segment{6, 29}));
}

TEST(CutToTokenLimitTest, PrefersToCutAfterPunctuation) {
  // Four words fit (five tokens); "four" would be the latest word end, but "two," ends a clause.
  EXPECT_THAT(Pieces("one two, three four five six", 5, CountWords),
              ElementsAre("one two,", "three four five six"));
  EXPECT_THAT(CutToTokenLimit("one two, three four five six", Segment{0, 28}, 5, CountWords),
              ElementsAre(Segment{0, 8}, Segment{9, 28}));
  // Only punctuation followed by whitespace counts: "3.5" is no cut.
  EXPECT_THAT(Pieces("one 3.5 two three four", 4, CountWords),
              ElementsAre("one 3.5 two", "three four"));
}

TEST(CutToTokenLimitTest, PunctuationBeyondTheLimitIsNotUsed) {
  // Two words per piece: the comma after "d" only helps the second piece.
  EXPECT_THAT(Pieces("a b c d, e f", 3, CountWords), ElementsAre("a b", "c d,", "e f"));
}

TEST(CutToTokenLimitTest, CutsAtWhitespaceAsLateAsPossible) {
  EXPECT_THAT(CutToTokenLimit("one two three four five six seven", Segment{0, 33}, 4, CountWords),
              ElementsAre(Segment{0, 13}, Segment{14, 27}, Segment{28, 33}));
  // Several spaces between pieces stay outside them.
  EXPECT_THAT(Pieces("one  two \t three   four", 3, CountWords),
              ElementsAre("one  two", "three   four"));
  // The smallest limit: one word per piece.
  EXPECT_THAT(Pieces("a bb ccc", 2, CountWords), ElementsAre("a", "bb", "ccc"));
}

TEST(CutToTokenLimitTest, CutsAnOverlongWordAtCharacterBoundaries) {
  // Five characters per piece.
  EXPECT_THAT(Pieces("Donaudampfschiff", 6, CountChars),
              ElementsAre("Donau", "dampf", "schif", "f"));
  EXPECT_THAT(Pieces("ab Donaudampfschiff cd", 6, CountChars),
              ElementsAre("ab", "Donau", "dampf", "schif", "f cd"));
  // Two-byte "é": three characters (six bytes) per piece.
  EXPECT_THAT(CutToTokenLimit("ééééééé", Segment{0, 14}, 4, CountChars),
              ElementsAre(Segment{0, 6}, Segment{6, 12}, Segment{12, 14}));
  // Four-byte emoji and three-byte CJK characters, two per piece.
  EXPECT_THAT(Pieces("😀😀😀", 3, CountChars), ElementsAre("😀😀", "😀"));
  EXPECT_THAT(Pieces("我来了你好", 3, CountChars), ElementsAre("我来", "了你", "好"));
}

TEST(CutToTokenLimitTest, ACharacterOverTheLimitStillProgresses) {
  // A tokenizer that makes three tokens of every character: nothing fits a limit of 2.
  auto expensive = [](absl::string_view s) { return 3 * static_cast<int>(s.size()); };
  EXPECT_THAT(Pieces("ab c", 2, expensive), ElementsAre("a", "b", "c"));
}

TEST(CutToTokenLimitTest, InvalidUtf8DoesNotCrash) {
  const std::string text = "ab\xFF\xC3 \xE2\x82\xAC\xE2\x82 cd";
  std::vector<Segment> pieces = CutToTokenLimit(text, Segment{0, text.size()}, 2, CountChars);
  ExpectValidPieces(text, Segment{0, text.size()}, 2, CountChars, pieces);
}

TEST(CutToTokenLimitTest, PiecesAreWithinTheLimitAndCoverTheSentence) {
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"a", "man",       "riding,", "bike.", "über",
                                          "😀", "Zweiräder", "snow;",   "x",     "Donaudampfschiff"};
  for (int i = 0; i < 300; ++i) {
    std::string text = "  ";  // The sentence is a range inside a longer text.
    const size_t begin = text.size();
    const int n = 1 + rng() % 60;
    for (int w = 0; w < n; ++w) {
      if (w > 0) text += rng() % 5 == 0 ? "  " : " ";
      text += words[rng() % words.size()];
    }
    const Segment sentence{begin, text.size()};
    text += " Next.";
    for (int max_tokens : {2, 3, 5, 8, 20, 100}) {
      for (const auto& count :
           std::vector<std::function<int(absl::string_view)>>{CountWords, CountChars}) {
        const std::vector<Segment> pieces = CutToTokenLimit(text, sentence, max_tokens, count);
        ExpectValidPieces(text, sentence, max_tokens, count, pieces);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CutToTokenLimitTest, TokenisesOnlyNLogNTimes) {
  constexpr int kWords = 2000;
  std::string text;
  for (int i = 0; i < kWords; ++i) {
    if (i > 0) text += ' ';
    text += i % 17 == 16 ? "word," : "word";
  }
  const double n_log_n = kWords * std::log2(kWords);  // About 21,900.
  for (int max_tokens : {2, 5, 50, 500, 1999, 2000}) {
    int calls = 0;
    auto counting = [&](absl::string_view s) {
      ++calls;
      return CountWords(s);
    };
    const std::vector<Segment> pieces =
        CutToTokenLimit(text, Segment{0, text.size()}, max_tokens, counting);
    ExpectValidPieces(text, Segment{0, text.size()}, max_tokens, CountWords, pieces);
    EXPECT_LE(calls, n_log_n) << max_tokens;
  }
  // The same for a single overlong "word" cut at character boundaries.
  const std::string word(kWords, 'x');
  for (int max_tokens : {2, 7, 100, 1500}) {
    int calls = 0;
    auto counting = [&](absl::string_view s) {
      ++calls;
      return CountChars(s);
    };
    const std::vector<Segment> pieces =
        CutToTokenLimit(word, Segment{0, word.size()}, max_tokens, counting);
    ExpectValidPieces(word, Segment{0, word.size()}, max_tokens, CountChars, pieces);
    EXPECT_LE(calls, n_log_n) << max_tokens;
  }
}

// What is tokenised per piece is about the piece, not the rest of the sentence: a megabyte without
// a full stop took 31 s when each piece tokenised the whole remainder to see whether it fit.
TEST(CutToTokenLimitTest, TokenisesAboutEachPieceNotTheRestOfTheSentence) {
  constexpr int kWords = 20000;
  std::string text;
  for (int i = 0; i < kWords; ++i) text += i > 0 ? " word" : "word";
  for (int max_tokens : {5, 50, 500}) {
    size_t bytes = 0;
    auto counting = [&](absl::string_view s) {
      bytes += s.size();
      return CountWords(s);
    };
    const std::vector<Segment> pieces =
        CutToTokenLimit(text, Segment{0, text.size()}, max_tokens, counting);
    ExpectValidPieces(text, Segment{0, text.size()}, max_tokens, CountWords, pieces);
    // The whole sentence once, then per piece an exponential and a binary search: about
    // 2 log2(max_tokens) probes, each at most twice the piece.
    const double bound = text.size() * (2 + 4 * std::log2(max_tokens));
    EXPECT_LE(bytes, bound) << max_tokens << ": " << bytes / text.size() << " x the sentence";
  }
}

// A run without spaces too long to fit (more than kMaxBytesPerToken bytes a token) is never
// tokenised whole, and each piece after the first starts its search at the previous piece's
// length: pieces alike cost about two tokenisations each, about twice the text in all.
TEST(CutToTokenLimitTest, ALongRunWithoutSpacesIsCutWithoutTokenisingItWhole) {
  const std::string run(200000, 'a');
  constexpr int kMaxTokens = 10;  // 9 characters and the end-of-sentence token.
  size_t longest = 0;
  size_t bytes = 0;
  int calls = 0;
  auto counting = [&](absl::string_view s) {
    longest = std::max(longest, s.size());
    bytes += s.size();
    ++calls;
    return CountChars(s);
  };
  const std::vector<Segment> pieces =
      CutToTokenLimit(run, Segment{0, run.size()}, kMaxTokens, counting);
  ExpectValidPieces(run, Segment{0, run.size()}, kMaxTokens, CountChars, pieces);
  ASSERT_EQ(pieces.size(), (run.size() + 8) / 9);
  for (size_t i = 0; i + 1 < pieces.size(); ++i) EXPECT_EQ(pieces[i].end - pieces[i].begin, 9u);
  EXPECT_LE(longest, kMaxBytesPerToken * kMaxTokens);
  // Two a piece, the first piece's search from nothing (a few), and once the rest may fit (its
  // last 640 bytes: 72 pieces) one more each to see whether it does.
  EXPECT_LE(calls, 2 * static_cast<int>(pieces.size()) + 20 + 72);
  EXPECT_LE(bytes, 3 * run.size());
}

// A run the tokenizer folds into one token however long (SentencePiece's unknown token for
// characters it cannot spell) is still cut into pieces of at most kMaxBytesPerToken bytes a token
// allowed, and no string longer than that is tokenised: SentencePiece's cost for such a run grows
// with the square of its length.
TEST(CutToTokenLimitTest, ARunCountedAsOneTokenIsStillCutToTheByteBound) {
  const std::string run(300000, 'x');
  constexpr int kMaxTokens = 8;
  size_t longest = 0;
  auto one_token = [&](absl::string_view s) {
    longest = std::max(longest, s.size());
    return 2;  // The run's unknown token and the end-of-sentence token.
  };
  const std::vector<Segment> pieces =
      CutToTokenLimit(run, Segment{0, run.size()}, kMaxTokens, one_token);
  ExpectValidPieces(run, Segment{0, run.size()}, kMaxTokens, one_token, pieces);
  const size_t bound = kMaxBytesPerToken * kMaxTokens;
  EXPECT_LE(longest, bound);
  ASSERT_EQ(pieces.size(), (run.size() + bound - 1) / bound);
  for (const Segment& piece : pieces) EXPECT_LE(piece.end - piece.begin, bound);
}

// Once `stopped` says so, cutting stops: the pieces so far cover only the sentence's start.
TEST(CutToTokenLimitTest, StopsOnceStopped) {
  const std::string run(1000, 'a');
  int pieces_before_stop = 3;
  auto stopped = [&] { return pieces_before_stop-- <= 0; };
  const std::vector<Segment> pieces =
      CutToTokenLimit(run, Segment{0, run.size()}, 10, CountChars, stopped);
  EXPECT_THAT(pieces, ElementsAre(Segment{0, 9}, Segment{9, 18}, Segment{18, 27}));
}

}  // namespace
}  // namespace mtserve
