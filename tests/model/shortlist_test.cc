// Lexical shortlists (model/shortlist.h): CTranslate2's vocabulary maps and Marian's text lexical
// shortlists on a hand-made vocabulary, each candidate set worked out by hand from the format's
// rules; every error a file can give; and a model directory that holds one (loaded with the
// model, in its fingerprint and its memory).
#include "model/shortlist.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/model.h"
#include "model/ops/linear.h"
#include "model/vocab.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using LexicalOptions = Shortlist::LexicalOptions;

// Ids 0 to 9.
Vocab TestVocab() {
  absl::StatusOr<Vocab> vocab = Vocab::Parse(
      R"({"</s>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "x": 5, "y": 6, "z": 7, "w": 8,
          "<pad>": 9})",
      "vocab.json");
  EXPECT_TRUE(vocab.ok()) << vocab.status();
  return *std::move(vocab);
}

std::vector<int> CandidatesOf(const Shortlist& list, std::vector<int> source,
                              std::vector<int> ids = {}) {
  list.Candidates(source, ids);
  return ids;
}

// The status message of a parse that must fail with InvalidArgument.
std::string VmapError(const std::string& text) {
  const absl::StatusOr<Shortlist> list =
      Shortlist::ParseVocabularyMap(text, "m/vmap.txt", TestVocab());
  EXPECT_TRUE(absl::IsInvalidArgument(list.status())) << list.status();
  return std::string(list.status().message());
}

std::string LexicalError(const std::string& text, const LexicalOptions& options = {}) {
  const absl::StatusOr<Shortlist> list =
      Shortlist::ParseLexical(text, "m/lex.s2t", TestVocab(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(list.status())) << list.status();
  return std::string(list.status().message());
}

TEST(VocabularyMapTest, MatchesEveryNgramOfTheSource) {
  // a -> x; "a b" -> y z; "b c a" -> c; always w.
  ASSERT_OK_AND_ASSIGN(
      const Shortlist list,
      Shortlist::ParseVocabularyMap("a\tx\na b\ty z\nb c a\tc\n\tw\n", "vmap.txt", TestVocab()));
  EXPECT_THAT(list.always(), ElementsAre(8));
  EXPECT_EQ(list.skipped_pieces(), 0);
  EXPECT_EQ(list.path(), "vmap.txt");
  // a b: the unigram a and the bigram "a b".
  EXPECT_THAT(CandidatesOf(list, {2, 3}), ElementsAre(5, 6, 7, 8));
  // b a: no bigram "b a"; a alone.
  EXPECT_THAT(CandidatesOf(list, {3, 2}), ElementsAre(5, 8));
  // The trigram b c a, inside a longer sentence, and a after it.
  EXPECT_THAT(CandidatesOf(list, {0, 3, 4, 2, 0}), ElementsAre(4, 5, 8));
  // b c without its a: nothing but the always line.
  EXPECT_THAT(CandidatesOf(list, {3, 4}), ElementsAre(8));
  EXPECT_THAT(CandidatesOf(list, {}), ElementsAre(8));
  // What `ids` held is kept, sorted in.
  EXPECT_THAT(CandidatesOf(list, {2}, {9, 0, 5}), ElementsAre(0, 5, 8, 9));
  EXPECT_GT(list.memory_bytes(), static_cast<int64_t>(sizeof(Shortlist)));
}

TEST(VocabularyMapTest, MergesLinesOfOneSourceAndSkipsUnknownPieces) {
  // a's two lines merge; "a q" and "q" cannot match (q is no piece); "qq" and "rr" are no targets.
  ASSERT_OK_AND_ASSIGN(const Shortlist list, Shortlist::ParseVocabularyMap(
                                                 "a\tx qq\r\n\n a  \ty x\r\na q\tz\nq\tw\n\tc rr\n",
                                                 "vmap.txt", TestVocab()));
  EXPECT_EQ(list.skipped_pieces(), 4);
  EXPECT_THAT(list.always(), ElementsAre(4));
  EXPECT_THAT(CandidatesOf(list, {2}), ElementsAre(4, 5, 6));
  EXPECT_THAT(CandidatesOf(list, {3}), ElementsAre(4));
}

TEST(VocabularyMapTest, TheLongestNgramAllowed) {
  std::string source;
  for (int i = 0; i < Shortlist::kMaxNgram; ++i) source += "a ";
  ASSERT_OK_AND_ASSIGN(const Shortlist list,
                       Shortlist::ParseVocabularyMap(source + "\tz", "vmap.txt", TestVocab()));
  EXPECT_THAT(CandidatesOf(list, std::vector<int>(Shortlist::kMaxNgram - 1, 2)), IsEmpty());
  EXPECT_THAT(CandidatesOf(list, std::vector<int>(Shortlist::kMaxNgram + 3, 2)), ElementsAre(7));
  EXPECT_THAT(VmapError(source + "a\tz"),
              HasSubstr("m/vmap.txt, line 1: the source has 17 pieces; the limit is 16"));
}

TEST(VocabularyMapTest, Errors) {
  EXPECT_EQ(VmapError(""), "m/vmap.txt: holds no rule");
  EXPECT_EQ(VmapError("\n\r\n"), "m/vmap.txt: holds no rule");
  EXPECT_THAT(VmapError("a\tx\na x\n"),
              HasSubstr("m/vmap.txt, line 2: no tab after the source 'a x'"));
  EXPECT_THAT(VmapError("a\tx\ty\n"), HasSubstr("m/vmap.txt, line 1: more than one tab"));
  EXPECT_EQ(VmapError("a\tx\nb\ty\xff\n"), "m/vmap.txt, line 2: not valid UTF-8");
  EXPECT_EQ(VmapError("q\tx\na\tqq rr\n"),
            "m/vmap.txt: none of its 2 rules is left: 3 of its pieces are not in the model's "
            "vocabulary (a list made for another model's vocabulary?)");
}

TEST(LexicalShortlistTest, FirstBestAndThreshold) {
  // TARGET SOURCE PROBABILITY. For a: x 0.5, y 0.3, z 0.2; for b: w 0.9; NULL lines skipped.
  const std::string text = "x a 0.5\ny\ta 0.3\nz a 2e-1\nw b 0.9\nNULL a 0.1\nx NULL 0.4\n";
  ASSERT_OK_AND_ASSIGN(const Shortlist list,
                       Shortlist::ParseLexical(text, "lex.s2t", TestVocab(),
                                               {.first = 2, .best = 2, .threshold = 0.25f}));
  EXPECT_THAT(list.always(), ElementsAre(0, 1));
  EXPECT_EQ(list.skipped_pieces(), 0);
  // The ids below 2 and the source's best 2 targets above 0.25 (not the source's own ids: the
  // translator adds those whatever the list).
  EXPECT_THAT(CandidatesOf(list, {2, 0}), ElementsAre(0, 1, 5, 6));
  EXPECT_THAT(CandidatesOf(list, {3}), ElementsAre(0, 1, 8));
  EXPECT_THAT(CandidatesOf(list, {4}), ElementsAre(0, 1));

  // Above the threshold, strictly: y's 0.3 is not above 0.3.
  ASSERT_OK_AND_ASSIGN(const Shortlist strict,
                       Shortlist::ParseLexical(text, "lex.s2t", TestVocab(),
                                               {.first = 0, .best = 5, .threshold = 0.3f}));
  EXPECT_THAT(CandidatesOf(strict, {2}), ElementsAre(5));
  // Marian's defaults: the first 100 ids (all 10 here), every target above 0.
  ASSERT_OK_AND_ASSIGN(const Shortlist defaults,
                       Shortlist::ParseLexical(text, "lex.s2t", TestVocab(), {}));
  EXPECT_EQ(defaults.always().size(), 10u);
  ASSERT_OK_AND_ASSIGN(const Shortlist none,
                       Shortlist::ParseLexical(text, "lex.s2t", TestVocab(),
                                               {.first = 0, .best = 100, .threshold = 0.f}));
  EXPECT_THAT(CandidatesOf(none, {2}), ElementsAre(5, 6, 7));
  // best 0: no target of any source.
  ASSERT_OK_AND_ASSIGN(const Shortlist zero,
                       Shortlist::ParseLexical(text, "lex.s2t", TestVocab(),
                                               {.first = 0, .best = 0, .threshold = 0.f}));
  EXPECT_THAT(CandidatesOf(zero, {2, 3}), IsEmpty());
}

TEST(LexicalShortlistTest, TiesTakeTheLargerIdAndRepeatedPairsTheirLargestProbability) {
  ASSERT_OK_AND_ASSIGN(
      const Shortlist ties,
      Shortlist::ParseLexical("x c 0.5\nz c 0.5\ny c 0.5\n", "lex.s2t", TestVocab(),
                              {.first = 0, .best = 2, .threshold = 0.f}));
  EXPECT_THAT(CandidatesOf(ties, {4}), ElementsAre(6, 7));
  ASSERT_OK_AND_ASSIGN(
      const Shortlist repeated,
      Shortlist::ParseLexical("x a 0.1\ny a 0.5\nx a 0.6\nx a 0.2\n", "lex.s2t", TestVocab(),
                              {.first = 0, .best = 1, .threshold = 0.f}));
  EXPECT_THAT(CandidatesOf(repeated, {2}), ElementsAre(5));
}

TEST(LexicalShortlistTest, SkipsUnknownPieces) {
  ASSERT_OK_AND_ASSIGN(
      const Shortlist list,
      Shortlist::ParseLexical("x q 0.5\nqq a 0.5\nqq rr 0.5\ny a 0.5\n", "lex.s2t", TestVocab(),
                              {.first = 0, .best = 100, .threshold = 0.f}));
  EXPECT_EQ(list.skipped_pieces(), 4);
  EXPECT_THAT(CandidatesOf(list, {2}), ElementsAre(6));
}

TEST(LexicalShortlistTest, Errors) {
  EXPECT_EQ(LexicalError(""), "m/lex.s2t: holds no rule");
  EXPECT_EQ(LexicalError("x a 0.5\nx a\n"),
            "m/lex.s2t, line 2: 2 fields (expected TARGET SOURCE PROBABILITY)");
  EXPECT_EQ(LexicalError("x a 0.5 1\n"),
            "m/lex.s2t, line 1: more than 3 fields (expected TARGET SOURCE PROBABILITY)");
  EXPECT_EQ(LexicalError("x a 0,5\n"), "m/lex.s2t, line 1: the probability '0,5' is not a number");
  EXPECT_EQ(LexicalError("x a nan\n"),
            "m/lex.s2t, line 1: the probability nan is not in [0, 1] (the list holds "
            "probabilities, not logs)");
  EXPECT_THAT(LexicalError("x a -0.69\n"), HasSubstr("line 1: the probability -0.69 is not in"));
  EXPECT_THAT(LexicalError("x a 1.5\n"), HasSubstr("line 1: the probability 1.5 is not in"));
  EXPECT_EQ(LexicalError("x a 0.5\n\xc3\x28 a 0.5\n"), "m/lex.s2t, line 2: not valid UTF-8");
  EXPECT_EQ(LexicalError("x q 0.5\nNULL a 0.5\n"),
            "m/lex.s2t: none of its 2 rules is left: 1 of its pieces are not in the model's "
            "vocabulary and 1 of its rules have a NULL piece (a list made for another model's "
            "vocabulary?)");
  EXPECT_EQ(LexicalError("x a 0.5\n", {.first = -1}),
            "m/lex.s2t: first (-1) and best (100) must be at least 0");
  EXPECT_EQ(LexicalError("x a 0.5\n", {.threshold = std::nanf("")}),
            "m/lex.s2t: the threshold is not a number");
}

TEST(ShortlistFilesTest, FindsTheVocabularyMapFirst) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Shortlist> none,
                       Shortlist::FindInModelDirectory(dir.path().string(), TestVocab()));
  EXPECT_EQ(none, nullptr);

  dir.Write("lex.s2t", "x a 0.5\n");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Shortlist> lexical,
                       Shortlist::FindInModelDirectory(dir.path().string(), TestVocab()));
  ASSERT_NE(lexical, nullptr);
  EXPECT_EQ(lexical->path(), dir.File("lex.s2t"));
  EXPECT_EQ(lexical->always().size(), 10u);  // Marian's default first 100, of 10 ids.

  dir.Write("vmap.txt", "a\tz\n");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Shortlist> map,
                       Shortlist::FindInModelDirectory(dir.path().string(), TestVocab()));
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->path(), dir.File("vmap.txt"));
  EXPECT_THAT(CandidatesOf(*map, {2}), ElementsAre(7));

  dir.Write("vmap.txt", "a z\n");
  const auto invalid = Shortlist::FindInModelDirectory(dir.path().string(), TestVocab());
  EXPECT_EQ(invalid.status(),
            absl::InvalidArgumentError(dir.File("vmap.txt") +
                                       ", line 1: no tab after the source 'a z' (expected "
                                       "SOURCE<TAB>TARGET TARGET ...)"));
  std::filesystem::remove(dir.File("vmap.txt"));
  std::filesystem::create_directory(dir.File("vmap.txt"));
  EXPECT_EQ(Shortlist::FindInModelDirectory(dir.path().string(), TestVocab()).status(),
            absl::InvalidArgumentError(dir.File("vmap.txt") + ": not a regular file"));
}

// The embedded model copied with a shortlist of its own pieces: loaded with it, counted in its
// memory and its fingerprint.
TEST(ShortlistFilesTest, ModelLoadsItsDirectorysShortlist) {
  testing::TempDir dir;
  const std::string copy = dir.File("model");
  std::filesystem::copy(testing::TestModelDir(), copy, std::filesystem::copy_options::recursive);
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> plain, Model::Load(copy));
  EXPECT_EQ(plain->shortlist(), nullptr);

  const Vocab& vocab = plain->tokenizer().vocab();
  const std::string map = vocab.Piece(10) + "\t" + vocab.Piece(20) + " " + vocab.Piece(30) +
                          "\n\t" + vocab.Piece(40) + "\n";
  std::ofstream(copy + "/vmap.txt") << map;
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> listed, Model::Load(copy));
  ASSERT_NE(listed->shortlist(), nullptr);
  EXPECT_EQ(listed->shortlist()->path(), copy + "/vmap.txt");
  EXPECT_THAT(CandidatesOf(*listed->shortlist(), {10, 11}), ElementsAre(20, 30, 40));
  // Its always-line's projection, packed at load, counts with it: at least its weights.
  ASSERT_NE(listed->always_projection(), nullptr);
  EXPECT_EQ(listed->always_projection()->out_features(), 1);
  EXPECT_GE(listed->shortlist_bytes(),
            listed->shortlist()->memory_bytes() +
                static_cast<int64_t>(listed->config().d_model * sizeof(float)));
  EXPECT_EQ(listed->shortlist_bytes(),
            listed->shortlist()->memory_bytes() + listed->always_projection()->memory_bytes());
  EXPECT_EQ(listed->resident_bytes(), plain->resident_bytes() + listed->shortlist_bytes());
  EXPECT_NE(listed->content_fingerprint(), plain->content_fingerprint());

  // Another list: another fingerprint. The same list again: the same one.
  std::ofstream(copy + "/vmap.txt") << map << "\t" << vocab.Piece(50) << "\n";
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> changed, Model::Load(copy));
  EXPECT_NE(changed->content_fingerprint(), listed->content_fingerprint());
  std::ofstream(copy + "/vmap.txt") << map;
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> again, Model::Load(copy));
  EXPECT_EQ(again->content_fingerprint(), listed->content_fingerprint());

  // The same rules as Marian's list: yet another fingerprint (file names count).
  std::filesystem::remove(copy + "/vmap.txt");
  std::ofstream(copy + "/lex.s2t") << vocab.Piece(20) << " " << vocab.Piece(10) << " 0.5\n";
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> lexical, Model::Load(copy));
  ASSERT_NE(lexical->shortlist(), nullptr);
  EXPECT_EQ(lexical->shortlist()->path(), copy + "/lex.s2t");
  EXPECT_NE(lexical->content_fingerprint(), plain->content_fingerprint());

  // A list of another vocabulary fails the load, naming the file.
  std::ofstream(copy + "/lex.s2t") << "\xe2\x96\x81nowhere \xe2\x96\x81nothing 0.5\n";
  const auto wrong = Model::Load(copy);
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status())) << wrong.status();
  EXPECT_THAT(wrong.status().message(), HasSubstr(copy + "/lex.s2t: none of its 1 rules"));
}

}  // namespace
}  // namespace mtserve
