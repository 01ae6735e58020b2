// Texts as the engine translates them (text/sentences.h): split into sentences, cut to the token
// limit, and joined back in their layout. Expected values are written from the text's meaning.
#include "text/sentences.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "model/translator.h"
#include "tests/test_lib/bleu.h"
#include "tests/test_lib/test_util.h"
#include "text/inline_placement.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Texts(absl::string_view text, const std::vector<SourceSentence>& s) {
  std::vector<std::string> out;
  for (const SourceSentence& x : s) {
    out.emplace_back(text.substr(x.range.begin, x.range.end - x.range.begin));
  }
  return out;
}

class SentencesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_F(SentencesTest, SplitsAndTokenisesEachSentence) {
  const std::string text = "  A dog runs.  Two cats sleep!\n\nIs it raining?  ";
  const std::vector<SourceSentence> s = SplitIntoSentences(text, splitter_.get(), tokenizer(), 512);
  EXPECT_THAT(Texts(text, s), ElementsAre("A dog runs.", "Two cats sleep!", "Is it raining?"));
  for (const SourceSentence& x : s) {
    EXPECT_EQ(x.ids,
              tokenizer().EncodeSource(text.substr(x.range.begin, x.range.end - x.range.begin)));
  }
}

TEST_F(SentencesTest, WithoutASplitterTheTrimmedTextIsOneSentence) {
  const std::string text = " A dog runs. Two cats sleep. ";
  const std::vector<SourceSentence> s = SplitIntoSentences(text, nullptr, tokenizer(), 512);
  EXPECT_THAT(Texts(text, s), ElementsAre("A dog runs. Two cats sleep."));
  EXPECT_TRUE(SplitIntoSentences(" \n\t", nullptr, tokenizer(), 512).empty());
  EXPECT_TRUE(SplitIntoSentences("", splitter_.get(), tokenizer(), 512).empty());
}

// Each term's constraint names the source tokens of its occurrence in its own sentence's ids:
// the pieces that spell the occurrence's words (read back from the pieces, not from spans).
TEST_F(SentencesTest, TermsKnowTheSourceTokensOfTheirOccurrence) {
  Terminology terminology;
  terminology.glossary = {{"bike", {"Zweirad"}}, {"balance beam", {"Schwebebalken"}}};
  terminology.keep_patterns = {KeepPattern::kUrls};
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TermMatcher> matcher,
                       CompileTerminology(terminology, tokenizer(), "options."));
  const std::string text =
      "A man rides a bike past the unbelievably tall balance beam. "
      "See https://example.com/a?b=1 for a bike.";
  ASSERT_OK_AND_ASSIGN(
      const std::vector<SourceSentence> s,
      SplitIntoSentences(text, splitter_.get(), tokenizer(), 512, matcher.get(), {}, nullptr));
  ASSERT_EQ(s.size(), 2u);
  // The words a constraint's source tokens spell: its pieces joined, word marks as spaces.
  auto spelled = [&](const SourceSentence& sentence, const TermConstraint& term) {
    const std::vector<std::string> pieces = tokenizer().SourcePieces(
        text.substr(sentence.range.begin, sentence.range.end - sentence.range.begin));
    EXPECT_EQ(pieces.size() + 1, sentence.ids.size());
    EXPECT_GE(term.source_begin, 0);
    EXPECT_LE(term.source_end, static_cast<int>(pieces.size()));
    std::string words;
    for (int i = std::max(term.source_begin, 0); i < std::min<int>(term.source_end, pieces.size());
         ++i) {
      words += pieces[i];
    }
    absl::StrReplaceAll({{"\xE2\x96\x81", " "}}, &words);
    return std::string(absl::StripAsciiWhitespace(words));
  };
  std::vector<std::vector<std::string>> found;
  for (const SourceSentence& sentence : s) {
    ASSERT_NE(sentence.terms, nullptr);
    std::vector<std::string>& words = found.emplace_back();
    for (const TermConstraint& term : sentence.terms->constraints.terms) {
      words.push_back(spelled(sentence, term));
    }
  }
  EXPECT_THAT(found[0], ElementsAre("bike", "balance beam"));
  EXPECT_THAT(found[1], ElementsAre("https://example.com/a?b=1", "bike"));
  // A pivot's last leg has other tokens: the positions go, the forms stay.
  const std::shared_ptr<const SentenceTerms> unplaced = WithoutSourcePositions(s[1].terms);
  ASSERT_EQ(unplaced->constraints.terms.size(), 2u);
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(unplaced->constraints.terms[t].source_begin, -1);
    EXPECT_EQ(unplaced->constraints.terms[t].source_end, -1);
    EXPECT_EQ(unplaced->constraints.terms[t].forms, s[1].terms->constraints.terms[t].forms);
  }
}

// A sentence over the limit comes back in pieces within it that cover every word.
TEST_F(SentencesTest, ALongSentenceIsCutIntoPiecesWithinTheLimit) {
  std::string text;
  for (int i = 0; i < 60; ++i)
    absl::StrAppend(&text, i == 0 ? "" : " ", "a dog runs on the beach and");
  const int limit = 40;
  const std::vector<SourceSentence> s =
      SplitIntoSentences(text, splitter_.get(), tokenizer(), limit);
  ASSERT_GT(s.size(), 1u);
  std::string words;
  size_t previous_end = 0;
  for (const SourceSentence& x : s) {
    EXPECT_LE(x.ids.size(), static_cast<size_t>(limit));
    // Only a space between pieces: they are cut between words.
    EXPECT_EQ(text.substr(previous_end, x.range.begin - previous_end),
              previous_end == 0 ? "" : " ");
    previous_end = x.range.end;
  }
  EXPECT_EQ(previous_end, text.size());
}

struct ParagraphBleu {
  double sentences_alone = 0;  // Each line translated alone, the outputs joined.
  double split = 0;            // Each paragraph translated as a text: split, joined.
  double whole = 0;            // Each paragraph translated as one sequence.
  int paragraphs = 0;
  int identical = 0;  // Paragraphs where `split` gives exactly the joined lines' translations.
};

// Lines (with their references) joined into paragraphs of 3, 4, ..., 8, 3, ... lines, translated
// greedily the three ways; BLEU against the references joined the same way.
ParagraphBleu TranslateParagraphs(const Model& model, const SentenceSplitter& splitter,
                                  const std::vector<std::string>& lines,
                                  const std::vector<std::string>& german) {
  Translator translator(std::shared_ptr<const Model>(&model, [](const Model*) {}), 2);
  const DecodingOptions greedy;
  const std::vector<TranslationResult> alone = translator.Translate(lines, greedy).value();
  std::vector<std::string> paragraphs, references, joined_alone, split, whole;
  for (size_t i = 0, n = 3; i < lines.size(); i += n, n = n == 8 ? 3 : n + 1) {
    std::vector<std::string> source, reference, target;
    for (size_t j = i; j < std::min(lines.size(), i + n); ++j) {
      source.push_back(lines[j]);
      reference.push_back(german[j]);
      target.push_back(alone[j].hypotheses[0].text);
    }
    paragraphs.push_back(absl::StrJoin(source, " "));
    references.push_back(absl::StrJoin(reference, " "));
    joined_alone.push_back(absl::StrJoin(target, " "));
  }
  ParagraphBleu bleu;
  bleu.paragraphs = static_cast<int>(paragraphs.size());
  for (size_t p = 0; p < paragraphs.size(); ++p) {
    const std::vector<SourceSentence> sentences =
        SplitIntoSentences(paragraphs[p], &splitter, model.tokenizer(), 512);
    std::vector<std::string> texts;
    for (const SourceSentence& s : sentences) {
      texts.push_back(paragraphs[p].substr(s.range.begin, s.range.end - s.range.begin));
    }
    std::vector<TranslationResult> results = translator.Translate(texts, greedy).value();
    split.push_back(
        JoinSentences(paragraphs[p], sentences, std::move(results), 1).hypotheses[0].text);
    bleu.identical += split.back() == joined_alone[p];
  }
  const std::vector<TranslationResult> unsplit = translator.Translate(paragraphs, greedy).value();
  for (const TranslationResult& r : unsplit) {
    whole.push_back(r.hypotheses[0].text);
  }
  bleu.sentences_alone = CorpusBleu(joined_alone, references);
  bleu.split = CorpusBleu(split, references);
  bleu.whole = CorpusBleu(whole, references);
  std::printf(
      "BLEU on %d paragraphs: lines one by one %.2f, paragraphs split %.2f, paragraphs "
      "whole %.2f; %d paragraphs identical\n",
      bleu.paragraphs, bleu.sentences_alone, bleu.split, bleu.whole, bleu.identical);
  return bleu;
}

// The quality promise of sentence splitting: Multi30k test lines sent as paragraphs translate
// exactly as the lines do one by one (the same computation), where a paragraph taken as one
// sequence collapses (the model was trained on single sentences).
TEST_F(SentencesTest, ParagraphsTranslateAsTheirSentencesDo) {
  const std::vector<std::string> lines =
      testing::ReadLines(testing::TestDataDir() + "/multi30k/test_2016_flickr.en");
  const std::vector<std::string> german =
      testing::ReadLines(testing::TestDataDir() + "/multi30k/test_2016_flickr.de");
  // Lines that are sentences by Unicode's rules (UAX #29, which ICU follows) once joined: they
  // end with a full stop (about 95 % do; a reader too would take one without and the next as one
  // sentence) and start with a capital (after ". ", "2 blond girls ..." continues a sentence).
  std::vector<std::string> ended, ended_german;
  for (size_t i = 0; i < lines.size() && ended.size() < 300; ++i) {
    if (!lines[i].empty() && absl::ascii_isupper(static_cast<unsigned char>(lines[i][0])) &&
        absl::string_view(".!?").find(lines[i].back()) != std::string::npos) {
      ended.push_back(lines[i]);
      ended_german.push_back(german[i]);
    }
  }
  const ParagraphBleu bleu = TranslateParagraphs(*model_, *splitter_, ended, ended_german);
  EXPECT_EQ(bleu.identical, bleu.paragraphs);
  EXPECT_DOUBLE_EQ(bleu.split, bleu.sentences_alone);
  EXPECT_LT(bleu.whole, bleu.sentences_alone / 2);
}

TranslationResult Result(std::vector<std::string> texts, std::vector<float> scores,
                         int source_tokens) {
  TranslationResult r;
  r.source_tokens = source_tokens;
  for (size_t i = 0; i < texts.size(); ++i) {
    Hypothesis h;
    h.text = texts[i];
    h.ids = {static_cast<int>(10 + i), 0};
    h.token_log_probs = {-0.5f, -0.25f};
    h.log_prob = -0.75f;
    h.score = scores[i];
    r.hypotheses.push_back(h);
  }
  return r;
}

// Whatever the layout, a "translation" that gives each sentence back gives the text back: every
// byte outside the sentences is kept where it was.
TEST_F(SentencesTest, IdentityTranslationGivesAnyTextBack) {
  const std::vector<std::string> parts = {
      "A dog runs.",    " ",      "  ",        "\t",     "\n",
      "\r\n",           "\n\n",   "Two cats!", "Is it?", "Dr. Smith came.",
      "\u00e9t\u00e9.", "\u2028", "no stop",   "  \t\n"};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) text += parts[rng() % parts.size()];
    const int limit = trial % 3 == 0 ? 4 : 512;  // Some sentences cut into pieces.
    const std::vector<SourceSentence> s =
        SplitIntoSentences(text, splitter_.get(), tokenizer(), limit);
    std::vector<TranslationResult> results(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      Hypothesis h;
      h.text = text.substr(s[i].range.begin, s[i].range.end - s[i].range.begin);
      results[i].hypotheses.push_back(h);
    }
    const TextTranslation joined = JoinSentences(text, s, std::move(results), 1);
    ASSERT_EQ(joined.hypotheses[0].text, text) << "trial " << trial;
    EXPECT_EQ(joined.hypothesis_sentences[0], joined.sentences) << "trial " << trial;
  }
}

// Marked-up source words go to the target words the decoder aligned to them.
TEST_F(SentencesTest, InlineMarkupFollowsTheAlignment) {
  const std::string text = "A big dog runs.";
  const Segment big{2, 5};
  const std::vector<SourceSentence> sentences =
      SplitIntoSentences(text, splitter_.get(), tokenizer(), 512);
  ASSERT_EQ(sentences.size(), 1u);
  const std::vector<std::string> pieces = tokenizer().SourcePieces(text);
  const int big_piece =
      static_cast<int>(std::find(pieces.begin(), pieces.end(), "\u2581big") - pieces.begin());
  ASSERT_LT(big_piece, static_cast<int>(pieces.size()));

  Hypothesis part;
  part.text = "Ein großer Hund rennt.";
  part.ids = tokenizer().EncodeTarget(part.text);
  const std::vector<Segment> joined = {{0, part.text.size()}};
  // Every target token aligned to "big": "big" goes over the whole translation.
  part.alignment.assign(part.ids.size(), big_piece);
  std::vector<std::optional<Segment>> placed =
      PlaceByAlignment(text, sentences, {part}, part.text, joined, tokenizer(), tokenizer(), {big});
  ASSERT_TRUE(placed[0].has_value());
  EXPECT_EQ(*placed[0], (Segment{0, part.text.size()}));
  // None aligned to it: the alignment says nothing (the caller places it otherwise).
  part.alignment.assign(part.ids.size(), 0);
  placed =
      PlaceByAlignment(text, sentences, {part}, part.text, joined, tokenizer(), tokenizer(), {big});
  EXPECT_FALSE(placed[0].has_value());
  // No alignment at all: likewise.
  part.alignment.clear();
  placed =
      PlaceByAlignment(text, sentences, {part}, part.text, joined, tokenizer(), tokenizer(), {big});
  EXPECT_FALSE(placed[0].has_value());
}

TEST(JoinSentencesTest, HypothesisKJoinsEachSentencesKthBestInTheLayout) {
  const std::string text = "  One.   Two.\n\tThree.  ";
  std::vector<SourceSentence> s(3);
  s[0].range = {2, 6};
  s[1].range = {9, 13};
  s[2].range = {15, 21};
  std::vector<TranslationResult> results = {Result({"Eins.", "Ein."}, {-1, -2}, 3),
                                            Result({"Zwei.", "Zwo."}, {-3, -4}, 4),
                                            Result({"Drei.", "Dreie."}, {-5, -6}, 5)};
  const TextTranslation joined = JoinSentences(text, s, results, 2);
  EXPECT_EQ(joined.source_tokens, 12);
  EXPECT_THAT(joined.sentences, ElementsAre(Segment{2, 6}, Segment{9, 13}, Segment{15, 21}));
  ASSERT_EQ(joined.hypotheses.size(), 2u);
  EXPECT_EQ(joined.hypotheses[0].text, "  Eins.   Zwei.\n\tDrei.  ");
  EXPECT_EQ(joined.hypotheses[1].text, "  Ein.   Zwo.\n\tDreie.  ");
  EXPECT_FLOAT_EQ(joined.hypotheses[0].score, -9);
  EXPECT_FLOAT_EQ(joined.hypotheses[1].score, -12);
  EXPECT_FLOAT_EQ(joined.hypotheses[0].log_prob, -2.25f);
  EXPECT_EQ(joined.hypotheses[0].ids.size(), 6u);
  EXPECT_EQ(joined.hypotheses[0].token_log_probs.size(), 6u);
  EXPECT_EQ(TargetTokens(joined.hypotheses[0], /*eos_id=*/0), 3);
  EXPECT_THAT(joined.hypothesis_sentences[0],
              ElementsAre(Segment{2, 7}, Segment{10, 15}, Segment{17, 22}));
}

// Each sentence's alignment indexes its own source tokens; joined, they index the text's, so the
// second sentence's move past the first's 3 source tokens and the third's past 3 + 4.
TEST(JoinSentencesTest, AlignmentsAreOffsetBySourceTokensOfTheSentencesBefore) {
  const std::string text = "One. Two. Three.";
  std::vector<SourceSentence> s(3);
  s[0].range = {0, 4};
  s[1].range = {5, 9};
  s[2].range = {10, 16};
  std::vector<TranslationResult> results = {Result({"Eins.", "Ein."}, {-1, -2}, 3),
                                            Result({"Zwei.", "Zwo."}, {-3, -4}, 4),
                                            Result({"Drei.", "Dreie."}, {-5, -6}, 5)};
  // Two ids per hypothesis (a word and </s>), so two positions each.
  results[0].hypotheses[0].alignment = {0, 2};
  results[0].hypotheses[1].alignment = {1, 2};
  results[1].hypotheses[0].alignment = {3, 0};
  results[1].hypotheses[1].alignment = {1, 3};
  results[2].hypotheses[0].alignment = {4, 4};
  results[2].hypotheses[1].alignment = {0, 2};
  const TextTranslation joined = JoinSentences(text, s, results, 2);
  EXPECT_EQ(joined.source_tokens, 12);
  EXPECT_THAT(joined.hypotheses[0].alignment, ElementsAre(0, 2, 6, 3, 11, 11));
  EXPECT_THAT(joined.hypotheses[1].alignment, ElementsAre(1, 2, 4, 6, 7, 9));
  EXPECT_EQ(joined.hypotheses[0].alignment.size(), joined.hypotheses[0].ids.size());

  // Without alignments (not asked for), none.
  const TextTranslation plain = JoinSentences(
      text, s, {Result({"Eins."}, {-1}, 3), Result({"Zwei."}, {-3}, 4), Result({"Drei."}, {-5}, 5)},
      1);
  EXPECT_TRUE(plain.hypotheses[0].alignment.empty());

  // One whole sentence keeps its result's alignment as it is.
  std::vector<SourceSentence> whole(1);
  whole[0].range = {0, 4};
  std::vector<TranslationResult> one = {Result({"Eins."}, {-1}, 3)};
  one[0].hypotheses[0].alignment = {1, 2};
  EXPECT_THAT(JoinSentences("One.", whole, one, 1).hypotheses[0].alignment, ElementsAre(1, 2));
}

TEST(JoinSentencesTest, OneWholeSentenceIsItsResultAndWhitespaceComesBack) {
  const std::string text = "One.";
  std::vector<SourceSentence> s(1);
  s[0].range = {0, 4};
  const TextTranslation joined = JoinSentences(text, s, {Result({"Eins."}, {-1}, 3)}, 1);
  EXPECT_EQ(joined.hypotheses[0].text, "Eins.");
  EXPECT_FLOAT_EQ(joined.hypotheses[0].score, -1);
  EXPECT_EQ(joined.source_tokens, 3);

  const TextTranslation blank = JoinSentences(" \n ", {}, {}, 2);
  ASSERT_EQ(blank.hypotheses.size(), 2u);
  EXPECT_EQ(blank.hypotheses[1].text, " \n ");
  EXPECT_TRUE(blank.sentences.empty());
}

}  // namespace
}  // namespace mtserve
