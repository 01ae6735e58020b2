// Parity with the independent PyTorch implementation on the two other trained models
// (models/multi30k-de-en, models/multi30k-fr-en): the first 200 lines of test_2016_flickr in each
// model's source language (tests/data/golden/MODEL/, copied from the reference outputs; see
// tests/data/golden/README.md). The embedded model's parity is golden_test.cc's.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/model.h"
#include "model/translator.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/bleu.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

constexpr double kLogProbTolerance = 1e-3;  // The reference README's bound for a fp32 engine.

using ::mtserve::testing::ModelsDir;
using ::mtserve::testing::ReadJsonLines;
using ::mtserve::testing::TestDataDir;

class OtherModelsGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<const Model>> model =
        Model::Load(ModelsDir() + "/" + GetParam());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    reference_ = ReadJsonLines(TestDataDir() + "/golden/" + GetParam() +
                               "/greedy.test_2016_flickr.200.jsonl");
    ASSERT_EQ(reference_.size(), 200u);
    for (const nlohmann::json& line : reference_) sources_.push_back(line["src"]);
  }

  // Every line decoded with `options` in batches of 32, as a user would.
  std::vector<TranslationResult> TranslateAll(const DecodingOptions& options) {
    Translator translator(model_, 1);  // ctest runs two tests at once on two cores.
    std::vector<TranslationResult> all;
    for (size_t first = 0; first < sources_.size(); first += 32) {
      const std::vector<std::string> batch(
          sources_.begin() + first, sources_.begin() + std::min(sources_.size(), first + 32));
      absl::StatusOr<std::vector<TranslationResult>> results = translator.Translate(batch, options);
      EXPECT_TRUE(results.ok()) << results.status();
      if (!results.ok()) return {};
      for (TranslationResult& r : *results) all.push_back(std::move(r));
    }
    return all;
  }

  std::shared_ptr<const Model> model_;
  std::vector<nlohmann::json> reference_;
  std::vector<std::string> sources_;
};

TEST_P(OtherModelsGoldenTest, LanguagesComeFromTheTokenizerConfig) {
  const std::string& name = GetParam();  // multi30k-SOURCE-TARGET
  EXPECT_EQ(model_->config().source_lang, name.substr(9, 2));
  EXPECT_EQ(model_->config().target_lang, name.substr(12, 2));
}

// Same ids, same text, log-probabilities within tolerance, on every line.
TEST_P(OtherModelsGoldenTest, GreedyMatchesReference) {
  const std::vector<TranslationResult> results = TranslateAll(DecodingOptions());
  ASSERT_EQ(results.size(), reference_.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& ref = reference_[i];
    const Hypothesis& h = results[i].hypotheses.at(0);
    ASSERT_EQ(h.ids, ref["greedy_ids"].get<std::vector<int>>())
        << "line " << i << ": " << sources_[i];
    EXPECT_EQ(h.text, ref["greedy_text"].get<std::string>()) << "line " << i;
    const auto ref_log_probs = ref["greedy_logprobs"].get<std::vector<double>>();
    ASSERT_EQ(h.token_log_probs.size(), ref_log_probs.size()) << "line " << i;
    for (size_t t = 0; t < ref_log_probs.size(); ++t) {
      ASSERT_NEAR(h.token_log_probs[t], ref_log_probs[t], kLogProbTolerance)
          << "line " << i << " token " << t;
    }
  }
}

// Beam search is approximate: the reference bounds it (at least about as good a normalised score
// on nearly every line), and its BLEU against the human English is at least the reference
// greedy search's.
TEST_P(OtherModelsGoldenTest, BeamSearchIsAtLeastAsGoodAsReferenceOnNearlyEveryLine) {
  DecodingOptions options;
  options.beam_size = 4;
  const std::vector<TranslationResult> results = TranslateAll(options);
  ASSERT_EQ(results.size(), reference_.size());
  int worse = 0;
  std::vector<std::string> beam_texts, reference_greedy_texts;
  for (size_t i = 0; i < results.size(); ++i) {
    const Hypothesis& h = results[i].hypotheses.at(0);
    if (h.score < reference_[i]["beam_norm_score"].get<double>() - 1e-3) ++worse;
    beam_texts.push_back(h.text);
    reference_greedy_texts.push_back(reference_[i]["greedy_text"]);
  }
  EXPECT_LE(worse, 2) << "lines where beam search found a worse hypothesis than the reference";
  std::vector<std::string> english;
  std::ifstream in(TestDataDir() + "/multi30k/test_2016_flickr.en");
  for (std::string line; english.size() < results.size() && std::getline(in, line);) {
    english.push_back(line);
  }
  ASSERT_EQ(english.size(), results.size());
  EXPECT_GE(CorpusBleu(beam_texts, english), CorpusBleu(reference_greedy_texts, english));
}

INSTANTIATE_TEST_SUITE_P(Models, OtherModelsGoldenTest,
                         ::testing::Values("multi30k-de-en", "multi30k-fr-en"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(9);  // de-en
                           name[2] = '_';
                           return name;
                         });

}  // namespace
}  // namespace mtserve
