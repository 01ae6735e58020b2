// The shortlist make_shortlist derives (tools/shortlist_derivation.h) from the test model's
// translations of a small training sample: it parses as a vocabulary map of the model's pieces,
// its always-line holds the model's most generated tokens (counted here from the model's own
// translations of the sample), and it covers those translations: every token the model generated
// for a line is on the always-line or on the line of one of that line's source pieces (and among
// the candidates the engine's reader of the list, model/shortlist.h, gives that line).
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/model.h"
#include "model/shortlist.h"
#include "model/translator.h"
#include "tests/test_lib/test_util.h"
#include "tools/shortlist_derivation.h"

namespace mtserve {

// How GoogleTest prints the parameter.
void PrintTo(ShortlistCounting counting, std::ostream* os) {
  *os << (counting == ShortlistCounting::kAligned      ? "aligned"
          : counting == ShortlistCounting::kNeighbours ? "neighbours"
                                                       : "sentence");
}

namespace {

using ::testing::HasSubstr;

constexpr int kBeam = 1;  // Greedy: the properties hold for any search, and it is quick.

std::vector<std::string> Sample() {
  return testing::ReadLines(testing::TestDataDir() + "/multi30k/train_sample.en");
}

// A vocabulary map read back: the always-line's ids and each source piece's.
struct Parsed {
  std::set<int> always;
  std::map<int, std::set<int>> rules;
};

// Parses `text` as a vocabulary map of `vocab`'s pieces (failing the test where it is not one:
// a line without a tab, a piece the vocabulary lacks, a second always-line).
void ParseVocabularyMap(const std::string& text, const Vocab& vocab, Parsed& parsed) {
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  lines.pop_back();
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("line ", i + 1, ": ", lines[i]));
    const std::vector<std::string> fields = absl::StrSplit(lines[i], '\t');
    ASSERT_EQ(fields.size(), 2u);
    ASSERT_EQ(fields[0].empty(), i == 0) << "the always-line is the first, and only it";
    std::set<int> targets;
    for (absl::string_view piece : absl::StrSplit(fields[1], ' ')) {
      const std::optional<int> id = vocab.Find(piece);
      ASSERT_TRUE(id.has_value()) << "'" << piece << "' is not in the vocabulary";
      ASSERT_TRUE(targets.insert(*id).second) << "'" << piece << "' twice";
    }
    if (i == 0) {
      parsed.always = targets;
      continue;
    }
    ASSERT_THAT(fields[0], ::testing::Not(HasSubstr(" "))) << "one piece a rule";
    const std::optional<int> source = vocab.Find(fields[0]);
    ASSERT_TRUE(source.has_value()) << "'" << fields[0] << "' is not in the vocabulary";
    ASSERT_TRUE(parsed.rules.emplace(*source, targets).second) << "a second rule for it";
  }
}

// The model's translations of `lines`, each line alone: computed on the first call, for the
// process.
struct Generated {
  absl::Status status;
  std::vector<std::vector<int>> sources;
  std::vector<std::vector<int>> ids;
};
const Generated& ModelTranslations(const std::shared_ptr<const Model>& model,
                                   const std::vector<std::string>& lines) {
  static const Generated* const generated = [&] {
    auto* g = new Generated;
    Translator translator(model, /*num_threads=*/1);
    DecodingOptions options;
    options.beam_size = kBeam;
    for (const std::string& line : lines) {
      g->sources.push_back(model->tokenizer().EncodeSource(line));
      absl::StatusOr<std::vector<std::vector<Hypothesis>>> out =
          translator.TranslateIds({g->sources.back()}, options);
      if (!out.ok()) {
        g->status = out.status();
        break;
      }
      g->ids.push_back((*out)[0][0].ids);
    }
    return g;
  }();
  return *generated;
}

class MakeShortlistTest : public ::testing::TestWithParam<ShortlistCounting> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    lines_ = Sample();
    ASSERT_EQ(lines_.size(), 40u);
    const Generated& generated = ModelTranslations(model_, lines_);
    ASSERT_TRUE(generated.status.ok()) << generated.status;
    sources_ = generated.sources;
    generated_ = generated.ids;
  }

  // The sample's translations counted by the tool's code.
  void Count(ShortlistCounting counting, std::unique_ptr<ShortlistCounts>& counts) {
    counts = std::make_unique<ShortlistCounts>(counting);
    std::vector<std::string> skipped;
    DecodingOptions decoding;
    decoding.beam_size = kBeam;
    const absl::Status counted = CountTranslations(model_, lines_, decoding, /*threads=*/2,
                                                   /*batch_size=*/8, *counts, skipped);
    ASSERT_TRUE(counted.ok()) << counted;
    EXPECT_THAT(skipped, ::testing::IsEmpty());
    EXPECT_EQ(counts->translations(), 40);
  }

  // The shortlist `counts` give with `options`, parsed.
  void Write(const ShortlistCounts& counts, const ShortlistOptions& options, Parsed& parsed) {
    const Tokenizer& tokenizer = model_->tokenizer();
    const ShortlistCounts::Written written =
        counts.VocabularyMap(options, tokenizer.vocab(), tokenizer.eos_id(), tokenizer.pad_id());
    ParseVocabularyMap(written.text, tokenizer.vocab(), parsed);
    EXPECT_EQ(written.always, static_cast<int>(parsed.always.size()));
    EXPECT_EQ(written.rules, static_cast<int>(parsed.rules.size()));
    // The engine reads it the same, every piece found.
    absl::StatusOr<Shortlist> read =
        Shortlist::ParseVocabularyMap(written.text, "vmap.txt", tokenizer.vocab());
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->skipped_pieces(), 0);
    EXPECT_THAT(read->always(), ::testing::ElementsAreArray(parsed.always));
    engine_list_ = std::make_unique<Shortlist>(*std::move(read));
  }

  // The shortlist derived from the sample with `options`, parsed.
  void Derive(const ShortlistOptions& options, Parsed& parsed) {
    std::unique_ptr<ShortlistCounts> counts;
    ASSERT_NO_FATAL_FAILURE(Count(options.counting, counts));
    ASSERT_NO_FATAL_FAILURE(Write(*counts, options, parsed));
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Shortlist> engine_list_;  // The last list Write made, as the engine reads it.
  std::vector<std::string> lines_;
  std::vector<std::vector<int>> sources_;
  std::vector<std::vector<int>> generated_;
};

TEST_P(MakeShortlistTest, AlwaysLineHoldsTheMostGeneratedTokens) {
  ShortlistOptions options;
  options.frequent = 15;
  options.counting = GetParam();
  Parsed parsed;
  ASSERT_NO_FATAL_FAILURE(Derive(options, parsed));

  const int eos = model_->tokenizer().eos_id();
  std::map<int, int> frequency;
  for (const std::vector<int>& ids : generated_) {
    for (int id : ids) frequency[id] += id != eos;
  }
  frequency.erase(eos);
  std::vector<int> counts;
  for (const auto& [id, n] : frequency) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  ASSERT_GT(counts.size(), 15u);
  const int fifteenth = counts[14];
  ASSERT_GT(counts[0], fifteenth) << "a sample whose top tokens stand out";

  EXPECT_EQ(parsed.always.size(), 16u) << "15 tokens and </s>";
  EXPECT_TRUE(parsed.always.contains(eos));
  for (const auto& [id, n] : frequency) {
    SCOPED_TRACE(absl::StrCat(model_->tokenizer().vocab().Piece(id), " generated ", n, " times"));
    if (n > fifteenth) {
      EXPECT_TRUE(parsed.always.contains(id));
    } else if (n < fifteenth) {
      EXPECT_FALSE(parsed.always.contains(id));
    }
  }
}

TEST_P(MakeShortlistTest, CoversItsOwnTranslations) {
  ShortlistOptions options;
  options.frequent = 10;
  options.per_source = 1000;
  options.min_count = 1;
  options.counting = GetParam();
  Parsed parsed;
  ASSERT_NO_FATAL_FAILURE(Derive(options, parsed));

  for (size_t i = 0; i < lines_.size(); ++i) {
    std::set<int> reachable = parsed.always;
    for (int s : sources_[i]) {
      if (auto rule = parsed.rules.find(s); rule != parsed.rules.end()) {
        reachable.insert(rule->second.begin(), rule->second.end());
      }
    }
    std::vector<int> candidates;
    engine_list_->Candidates(sources_[i], candidates);
    for (int id : generated_[i]) {
      EXPECT_TRUE(reachable.contains(id))
          << "line " << i + 1 << " (" << lines_[i] << "): '"
          << model_->tokenizer().vocab().Piece(id) << "' is not reachable";
      EXPECT_TRUE(std::binary_search(candidates.begin(), candidates.end(), id))
          << "line " << i + 1 << ": the engine's candidates lack '"
          << model_->tokenizer().vocab().Piece(id) << "'";
    }
  }
}

TEST_P(MakeShortlistTest, RulesKeepTheirBounds) {
  ShortlistOptions options;
  options.frequent = 10;
  options.per_source = 3;
  options.min_count = 1;
  options.counting = GetParam();
  std::unique_ptr<ShortlistCounts> counts;
  ASSERT_NO_FATAL_FAILURE(Count(options.counting, counts));
  Parsed few;
  ASSERT_NO_FATAL_FAILURE(Write(*counts, options, few));
  ASSERT_FALSE(few.rules.empty());
  for (const auto& [source, targets] : few.rules) {
    EXPECT_LE(targets.size(), 3u);
    for (int t : targets) EXPECT_FALSE(few.always.contains(t)) << "already always a candidate";
  }
  // A higher minimum count keeps fewer targets, never others.
  options.min_count = 3;
  Parsed frequent_only;
  ASSERT_NO_FATAL_FAILURE(Write(*counts, options, frequent_only));
  int64_t few_targets = 0, frequent_targets = 0;
  for (const auto& [source, targets] : few.rules) few_targets += targets.size();
  for (const auto& [source, targets] : frequent_only.rules) {
    frequent_targets += targets.size();
    ASSERT_TRUE(few.rules.contains(source));
    for (int t : targets) EXPECT_TRUE(few.rules.at(source).contains(t));
  }
  EXPECT_LT(frequent_targets, few_targets);
}

INSTANTIATE_TEST_SUITE_P(Countings, MakeShortlistTest,
                         ::testing::Values(ShortlistCounting::kAligned,
                                           ShortlistCounting::kNeighbours,
                                           ShortlistCounting::kSentence),
                         [](const ::testing::TestParamInfo<ShortlistCounting>& info) {
                           return ::testing::PrintToString(info.param);
                         });

// With num_hypotheses, every hypothesis the beam returns is counted, not only the best: the
// always-line, long enough for all, holds every token of the sample's four best translations (each
// line translated alone here), which reach beyond the best translations' tokens.
TEST(MakeShortlistHypothesesTest, EveryHypothesisIsCounted) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Model> model, testing::TestModel());
  const std::vector<std::string> lines = Sample();
  DecodingOptions decoding;
  decoding.beam_size = 4;
  decoding.num_hypotheses = 4;
  const int eos = model->tokenizer().eos_id();
  std::set<int> best = {eos}, all = {eos};
  Translator translator(model, /*num_threads=*/1);
  for (const std::string& line : lines) {
    ASSERT_OK_AND_ASSIGN(
        std::vector<std::vector<Hypothesis>> out,
        translator.TranslateIds({model->tokenizer().EncodeSource(line)}, decoding));
    ASSERT_EQ(out[0].size(), 4u) << line;
    best.insert(out[0][0].ids.begin(), out[0][0].ids.end());
    for (const Hypothesis& hypothesis : out[0]) {
      all.insert(hypothesis.ids.begin(), hypothesis.ids.end());
    }
  }
  ASSERT_GT(all.size(), best.size()) << "a sample whose other hypotheses bring other tokens";

  ShortlistCounts counts(ShortlistCounting::kNeighbours);
  std::vector<std::string> skipped;
  const absl::Status counted =
      CountTranslations(model, lines, decoding, /*threads=*/2, /*batch_size=*/8, counts, skipped);
  ASSERT_TRUE(counted.ok()) << counted;
  EXPECT_EQ(counts.translations(), static_cast<int64_t>(lines.size())) << "lines, not hypotheses";
  ShortlistOptions options;
  options.frequent = model->tokenizer().vocab().size();
  const Tokenizer& tokenizer = model->tokenizer();
  const ShortlistCounts::Written written =
      counts.VocabularyMap(options, tokenizer.vocab(), eos, tokenizer.pad_id());
  EXPECT_THAT(written.always_ids, ::testing::UnorderedElementsAreArray(all));
}

TEST(MakeShortlistInputTest, EmptyAndOverlongLinesAreSkippedAndNamed) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Model> model, testing::TestModel());
  const int limit = model->config().max_position_embeddings;
  std::string overlong;
  for (int i = 0; i < limit; ++i) overlong += "dog ";
  const std::vector<std::string> lines = {"A dog runs.", "", overlong, "A cat sleeps."};
  ShortlistCounts counts(ShortlistCounting::kAligned);
  std::vector<std::string> skipped;
  const absl::Status counted =
      CountTranslations(model, lines, DecodingOptions(), 1, 32, counts, skipped);
  ASSERT_TRUE(counted.ok()) << counted;
  EXPECT_EQ(counts.translations(), 2);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_THAT(skipped[0], HasSubstr("line 3: "));
  EXPECT_THAT(skipped[0], HasSubstr(absl::StrCat("the limit is ", limit)));
}

TEST(MakeShortlistInputTest, InvalidOptionsNameTheFlagAndLimit) {
  ShortlistOptions options;
  options.frequent = -1;
  EXPECT_THAT(ValidateShortlistOptions(options).message(), HasSubstr("--frequent is -1"));
  options = ShortlistOptions();
  options.per_source = -2;
  EXPECT_THAT(ValidateShortlistOptions(options).message(), HasSubstr("--per_source is -2"));
  options = ShortlistOptions();
  options.min_count = 0;
  EXPECT_THAT(ValidateShortlistOptions(options).message(),
              HasSubstr("--min_count is 0; it must be 1 or more"));
  EXPECT_THAT(ParseShortlistCounting("words").status().message(), HasSubstr("--counting"));

  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Model> model, testing::TestModel());
  ShortlistCounts counts(ShortlistCounting::kAligned);
  std::vector<std::string> skipped;
  EXPECT_THAT(
      CountTranslations(model, {"A dog."}, DecodingOptions(), 0, 32, counts, skipped).message(),
      HasSubstr("--threads is 0"));
  DecodingOptions wide;
  wide.beam_size = 0;
  EXPECT_THAT(CountTranslations(model, {"A dog."}, wide, 1, 32, counts, skipped).message(),
              HasSubstr("--beam_size"));
  DecodingOptions many;
  many.beam_size = 2;
  many.num_hypotheses = 3;
  EXPECT_THAT(CountTranslations(model, {"A dog."}, many, 1, 32, counts, skipped).message(),
              HasSubstr("--num_hypotheses is 3"));
}

}  // namespace
}  // namespace mtserve
