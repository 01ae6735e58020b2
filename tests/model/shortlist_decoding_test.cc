// Decoding with a lexical shortlist (model/shortlist.h, VocabularySelection) on the test model:
// - a sentence's result is the same alone, in a batch, and joining a running decode, in every
//   compute type, greedy and beam (the candidates of the others change the projection's width
//   and which columns it computes, never a sentence's choices);
// - every generated token is one of the sentence's candidates;
// - where a sentence's candidates hold the tokens of its translation with the whole vocabulary,
//   greedy search gives that translation (the best token of the vocabulary is then the best of
//   the candidates at every step);
// - options.shortlist = false decodes exactly as the model without a shortlist.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "model/compute_type.h"
#include "model/decode_memory.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/vocabulary_selection.h"
#include "model/model.h"
#include "model/shortlist.h"
#include "model/translator.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using Ids = std::vector<int>;

constexpr int kSentences = 24;

// The same ids, and per-token log-probabilities equal up to the rounding of sums over batches of
// other shapes (docs/api.md#batching: about 1e-5).
void ExpectSameHypotheses(const std::vector<Hypothesis>& got, const std::vector<Hypothesis>& want,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t h = 0; h < got.size(); ++h) {
    EXPECT_EQ(got[h].ids, want[h].ids) << what << ", hypothesis " << h;
    ASSERT_EQ(got[h].token_log_probs.size(), want[h].token_log_probs.size()) << what;
    for (size_t t = 0; t < got[h].token_log_probs.size(); ++t) {
      EXPECT_NEAR(got[h].token_log_probs[t], want[h].token_log_probs[t], 1e-4)
          << what << ", hypothesis " << h << ", token " << t;
    }
  }
}

class ShortlistDecodingTest : public ::testing::TestWithParam<ComputeType> {
 protected:
  void SetUp() override {
    MT_SKIP_IF_UNSUPPORTED(GetParam());
    const auto& full = testing::TestModel(GetParam());
    ASSERT_TRUE(full.ok()) << full.status();
    full_ = *full;
    const std::vector<std::string> lines =
        testing::ReadLines(testing::TestDataDir() + "/multi30k/test_2016_flickr.en");
    for (int i = 0; i < kSentences; ++i) {
      sources_.push_back(full_->tokenizer().EncodeSource(lines[i]));
    }
    Translator translator(full_, 1);
    DecodingOptions greedy;
    auto translations = translator.TranslateIds(sources_, greedy);
    ASSERT_TRUE(translations.ok()) << translations.status();
    for (const auto& hypotheses : *translations) full_greedy_.push_back(hypotheses[0].ids);
  }

  const Vocab& vocab() const { return full_->tokenizer().vocab(); }

  // The test model's files beside `vmap` as its vmap.txt (in a directory of their own), loaded.
  std::shared_ptr<const Model> WithVocabularyMap(const std::string& vmap) {
    const std::filesystem::path dir = dir_.path() / absl::StrCat("model-", models_++);
    std::filesystem::create_directory(dir);
    testing::LinkModelFiles(full_->dir(), dir);
    std::ofstream(dir / std::string(Shortlist::kVocabularyMapFile)) << vmap;
    auto model = Model::Load(dir.string(), GetParam());
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return nullptr;
    EXPECT_NE((*model)->shortlist(), nullptr);
    EXPECT_TRUE((*model)->config().lexical_shortlist);
    return *model;
  }

  // A vocabulary map whose always-line holds ids [0, always) and whose rules send each source
  // piece of sentence i to the tokens of its translation with the whole vocabulary: each
  // sentence's candidates then hold its own translation, and differ from the others'.
  std::string CoveringMap(int always) const {
    std::vector<std::string> pieces;
    for (int id = 0; id < always; ++id) pieces.push_back(vocab().Piece(id));
    std::string map = absl::StrCat("\t", absl::StrJoin(pieces, " "), "\n");
    for (int i = 0; i < kSentences; ++i) {
      std::vector<std::string> targets;
      for (int id : full_greedy_[i]) targets.push_back(vocab().Piece(id));
      for (size_t t = 0; t + 1 < sources_[i].size(); ++t) {  // Not </s>.
        absl::StrAppend(&map, vocab().Piece(sources_[i][t]), "\t", absl::StrJoin(targets, " "),
                        "\n");
      }
    }
    return map;
  }

  // Each sentence alone, then all of them in one batch, then joining a running decode a few at a
  // time: the same hypotheses every way.
  void ExpectBatchIndependent(const std::shared_ptr<const Model>& model,
                              const DecodingOptions& options) {
    Translator translator(model, 1);
    std::vector<std::vector<Hypothesis>> alone;
    for (const Ids& source : sources_) {
      auto result = translator.TranslateIds({source}, options);
      ASSERT_TRUE(result.ok()) << result.status();
      alone.push_back((*result)[0]);
    }
    auto batch = translator.TranslateIds(sources_, options);
    ASSERT_TRUE(batch.ok()) << batch.status();
    for (int i = 0; i < kSentences; ++i) {
      ExpectSameHypotheses((*batch)[i], alone[i], absl::StrCat("sentence ", i, " in a batch"));
    }

    auto session = translator.StartDecoding(options);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<int> index_of(2 * kSentences, -1);
    std::vector<std::vector<Hypothesis>> joined(kSentences);
    std::vector<FinishedSentence> finished;
    int next = 0;
    for (int step = 0; next < kSentences || (*session)->inputs() > 0; ++step) {
      if (next < kSentences && step % 3 == 0) {
        const int count = std::min(1 + step % 5, kSentences - next);
        std::vector<Ids> joining(sources_.begin() + next, sources_.begin() + next + count);
        auto ids = (*session)->AddInputs(joining);
        ASSERT_TRUE(ids.ok()) << ids.status();
        for (int k = 0; k < count; ++k) index_of[(*ids)[k]] = next + k;
        next += count;
      }
      finished.clear();
      (*session)->Step(finished);
      // Within the bound the server admits by, the shortlist's projection and masks included.
      int longest = 0;
      for (int i = 0; i < next; ++i) {
        longest = std::max(longest, static_cast<int>(sources_[i].size()));
      }
      EXPECT_LE((*session)->memory_bytes(),
                DecodeMemory(model->config(), options).Decoding(next, longest));
      for (FinishedSentence& f : finished) joined[index_of[f.sentence]] = std::move(f.hypotheses);
    }
    for (int i = 0; i < kSentences; ++i) {
      ExpectSameHypotheses(joined[i], alone[i], absl::StrCat("sentence ", i, " joining"));
    }
  }

  std::shared_ptr<const Model> full_;
  std::vector<Ids> sources_;
  std::vector<Ids> full_greedy_;  // With the whole vocabulary, </s> included.
  testing::TempDir dir_;
  int models_ = 0;  // Directories WithVocabularyMap made.
};

TEST_P(ShortlistDecodingTest, GreedyKeepsTheTranslationItsCandidatesHold) {
  const std::shared_ptr<const Model> model = WithVocabularyMap(CoveringMap(50));
  ASSERT_NE(model, nullptr);
  Translator translator(model, 1);
  auto result = translator.TranslateIds(sources_, DecodingOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < kSentences; ++i) {
    EXPECT_EQ((*result)[i][0].ids, full_greedy_[i]) << "sentence " << i;
  }
}

TEST_P(ShortlistDecodingTest, EveryTokenIsACandidate) {
  // Candidates too few for the translations: the tokens generated are still among them.
  const std::shared_ptr<const Model> model =
      WithVocabularyMap(absl::StrCat("\t", vocab().Piece(1), " ", vocab().Piece(2), "\n",
                                     vocab().Piece(10), "\t", vocab().Piece(20), "\n"));
  ASSERT_NE(model, nullptr);
  Translator translator(model, 1);
  for (const int beam : {1, 4}) {
    DecodingOptions options;
    options.beam_size = beam;
    auto result = translator.TranslateIds(sources_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    for (int i = 0; i < kSentences; ++i) {
      Ids candidates = sources_[i];
      candidates.push_back(model->config().eos_token_id);
      model->shortlist()->Candidates(sources_[i], candidates);
      const std::set<int> allowed(candidates.begin(), candidates.end());
      for (const Hypothesis& h : (*result)[i]) {
        for (int id : h.ids) {
          EXPECT_TRUE(allowed.count(id)) << "sentence " << i << " beam " << beam << ": id " << id;
        }
        // Scores normalised over the candidates: a token's probability is at most 1.
        for (float lp : h.token_log_probs) EXPECT_LE(lp, 0.f);
      }
    }
  }
}

TEST_P(ShortlistDecodingTest, ASentencesOwnPiecesAreCandidates) {
  // A list of one target and no rules: what else a sentence generates can only be its own source
  // pieces (copied through: names, numbers) and </s>, which decoding adds to every list.
  const std::shared_ptr<const Model> model =
      WithVocabularyMap(absl::StrCat("\t", vocab().Piece(1), "\n"));
  ASSERT_NE(model, nullptr);
  Translator translator(model, 1);
  auto result = translator.TranslateIds(sources_, DecodingOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  int copied = 0;
  for (int i = 0; i < kSentences; ++i) {
    const std::set<int> own(sources_[i].begin(), sources_[i].end());
    for (int id : (*result)[i][0].ids) {
      if (id == 1 || id == model->config().eos_token_id) continue;
      EXPECT_TRUE(own.count(id)) << "sentence " << i << ": id " << id;
      ++copied;
    }
  }
  EXPECT_GT(copied, 0) << "no sentence generated a piece of its own source";
}

TEST_P(ShortlistDecodingTest, ResultDoesNotDependOnTheBatch) {
  // Narrow lists (the projection a few hundred wide, its width changing with the batch), with an
  // always-line (its columns from the projection packed at load, the others' packed per union)
  // and without one (every column packed per union).
  for (const int always : {100, 0}) {
    const std::shared_ptr<const Model> model = WithVocabularyMap(CoveringMap(always));
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(model->always_projection() != nullptr, always > 0);
    for (const int beam : {1, 4}) {
      SCOPED_TRACE(absl::StrCat("always-line ", always, ", beam ", beam));
      DecodingOptions options;
      options.beam_size = beam;
      ExpectBatchIndependent(model, options);
    }
  }
}

TEST_P(ShortlistDecodingTest, ResultDoesNotDependOnTheBatchAcrossTheWholeVocabularyWidth) {
  // Lists near VocabularySelection::kMaxRestrictedShare of the vocabulary: alone a sentence's
  // union is restricted, in a batch it is computed as the whole vocabulary, masked.
  const int always =
      static_cast<int>(VocabularySelection::kMaxRestrictedShare * full_->config().vocab_size) - 200;
  const std::shared_ptr<const Model> model = WithVocabularyMap(CoveringMap(always));
  ASSERT_NE(model, nullptr);
  DecodingOptions options;
  options.beam_size = 4;
  ExpectBatchIndependent(model, options);
}

TEST_P(ShortlistDecodingTest, OffDecodesWithTheWholeVocabulary) {
  const std::shared_ptr<const Model> model = WithVocabularyMap(CoveringMap(0));
  ASSERT_NE(model, nullptr);
  for (const int beam : {1, 4}) {
    DecodingOptions options;
    options.beam_size = beam;
    options.shortlist = false;
    Translator with(model, 1);
    Translator without(full_, 1);
    auto got = with.TranslateIds(sources_, options);
    auto want = without.TranslateIds(sources_, options);
    ASSERT_TRUE(got.ok() && want.ok());
    for (int i = 0; i < kSentences; ++i) {
      ExpectSameHypotheses((*got)[i], (*want)[i], absl::StrCat("sentence ", i));
    }
    // And on, the same model gives other scores (normalised over its candidates).
    options.shortlist = true;
    auto on = with.TranslateIds(sources_, options);
    ASSERT_TRUE(on.ok());
    EXPECT_NE((*on)[0][0].token_log_probs, (*want)[0][0].token_log_probs);
  }
}

INSTANTIATE_TEST_SUITE_P(ComputeTypes, ShortlistDecodingTest,
                         ::testing::ValuesIn(testing::kAllComputeTypes),
                         testing::ComputeTypeTestName);

}  // namespace
}  // namespace mtserve
