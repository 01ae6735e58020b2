// Translation quality of the reduced-precision compute types (model/compute_type.h) on the
// embedded model, against float32 and the golden files (tests/data/golden): teacher-forced
// log-probabilities of the reference German, greedy output identical to float32 on most of the
// 1,000 test_2016_flickr lines, and BLEU within a small margin of float32's, greedy and beam 4.
//
// float32's greedy output is the golden file's: golden_test.cc checks that the float32 engine
// gives exactly those ids and texts on all 1,000 lines, so it is not translated again here.
//
// Each translation of the 1,000 lines runs once per process (the results are kept), on two
// threads with a Translator each: ctest runs every test in a process of its own, so each test
// translates only what it checks.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "model/compute_type.h"
#include "model/decoding/decoding_options.h"
#include "model/model.h"
#include "model/translator.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/bleu.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::mtserve::testing::ReadJsonLines;
using ::mtserve::testing::ReadLines;
using ::mtserve::testing::TestDataDir;
using ::mtserve::testing::TestModel;

// What each reduced type must keep of float32's quality, bfloat16 (8 significant bits) more than
// int8 (per-row and per-channel steps of max/127). Measured on the embedded model (2026-11-23,
// oneDNN on AVX-512 with VNNI and BF16), each bound then set with the margin and reason given:
struct Tolerances {
  // Teacher forcing over the 5,004 tokens of forced.val.jsonl, against float32 and the golden
  // file alike (float32 is within 1e-3 of it). Measured mean |diff| 0.0023 (bfloat16) and 0.0100
  // (int8): a mean over 5,000 tokens is stable, so twice that leaves room for other kernels or
  // summation orders while a real fault (a wrong scale, a skipped rounding, a layer in the wrong
  // type) moves it by far more.
  double mean_log_prob_diff;
  // Measured largest |diff| of one token 0.045 (bfloat16) and 0.129 (int8): an extreme of 5,000
  // draws moves more than the mean, so about 2.2 to 2.3 times that.
  double max_log_prob_diff;
  // Of the 1,000 lines, greedy ids identical to float32's: measured 973 (bfloat16) and 928
  // (int8). A near-tie between two tokens flips with any rounding and changes the rest of the
  // line, so the count moves by a few percent with the kernels: 95% and 88% (2.3 and 4.8 points
  // below the measurement; the lines that differ roughly double before a threshold is crossed).
  int min_identical_greedy;
  // |BLEU - float32's BLEU| on test_2016_flickr, greedy and beam 4 (issue 10's requirement).
  // Measured: bfloat16 +0.03 greedy, -0.04 beam; int8 -0.21 greedy, +0.11 beam.
  double max_bleu_diff;
};

Tolerances TolerancesFor(ComputeType type) {
  if (type == ComputeType::kBFloat16) {
    return {/*mean_log_prob_diff=*/0.005, /*max_log_prob_diff=*/0.1,
            /*min_identical_greedy=*/950, /*max_bleu_diff=*/0.2};
  }
  return {/*mean_log_prob_diff=*/0.02, /*max_log_prob_diff=*/0.3, /*min_identical_greedy=*/880,
          /*max_bleu_diff=*/0.5};
}

struct Translations {
  std::vector<std::vector<int>> ids;
  std::vector<std::string> texts;
};

const std::vector<nlohmann::json>& Golden() {
  static const auto* const golden = new std::vector<nlohmann::json>(
      ReadJsonLines(TestDataDir() + "/golden/greedy.test_2016_flickr.jsonl"));
  return *golden;
}

// The 1,000 lines of test_2016_flickr translated by `model` with `beam_size` (1: greedy), in
// batches of 32 as a user would send them, on two threads; kept per type and beam for the process.
const Translations& TranslateTestSet(const std::shared_ptr<const Model>& model, int beam_size) {
  static auto* const cache = new std::map<std::pair<ComputeType, int>, Translations>();
  const auto key = std::pair(model->compute_type(), beam_size);
  if (const auto it = cache->find(key); it != cache->end()) return it->second;

  std::vector<std::string> sources;
  for (const nlohmann::json& line : Golden()) sources.push_back(line["src"]);
  DecodingOptions options;
  options.beam_size = beam_size;
  constexpr size_t kBatchSize = 32;
  constexpr int kWorkers = 2;  // The machines have two cores; a translator on one thread each.
  Translations result;
  result.ids.resize(sources.size());
  result.texts.resize(sources.size());
  std::vector<absl::Status> statuses(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      Translator translator(model, 1);
      for (size_t first = w * kBatchSize; first < sources.size(); first += kWorkers * kBatchSize) {
        const size_t end = std::min(sources.size(), first + kBatchSize);
        auto results =
            translator.Translate({sources.begin() + first, sources.begin() + end}, options);
        if (!results.ok()) {
          statuses[w] = results.status();
          return;
        }
        for (size_t i = first; i < end; ++i) {
          result.ids[i] = (*results)[i - first].hypotheses.at(0).ids;
          result.texts[i] = (*results)[i - first].hypotheses.at(0).text;
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (const absl::Status& status : statuses) EXPECT_TRUE(status.ok()) << status;
  return cache->emplace(key, std::move(result)).first->second;
}

const std::vector<std::string>& GermanReferences() {
  static const auto* const references =
      new std::vector<std::string>(ReadLines(TestDataDir() + "/multi30k/test_2016_flickr.de"));
  return *references;
}

class ComputeTypeQualityTest : public ::testing::TestWithParam<ComputeType> {
 protected:
  void SetUp() override {
    MT_SKIP_IF_UNSUPPORTED(GetParam());
    ASSERT_TRUE(TestModel().ok()) << TestModel().status();
    ASSERT_TRUE(TestModel(GetParam()).ok()) << TestModel(GetParam()).status();
    float32_ = *TestModel();
    model_ = *TestModel(GetParam());
    ASSERT_EQ(model_->compute_type(), GetParam());
    ASSERT_EQ(Golden().size(), 1000u);
    ASSERT_EQ(GermanReferences().size(), 1000u);
    tolerances_ = TolerancesFor(GetParam());
  }

  const char* name() const { return ComputeTypeName(GetParam()).data(); }

  std::shared_ptr<const Model> float32_;
  std::shared_ptr<const Model> model_;
  Tolerances tolerances_;
};

// Teacher-forced log-probabilities of the reference German of val (300 lines, 4,000+ tokens),
// against the float32 engine's and the golden file's.
TEST_P(ComputeTypeQualityTest, TeacherForcedLogProbsNearFloat32AndGolden) {
  const auto forced = ReadJsonLines(TestDataDir() + "/golden/forced.val.jsonl");
  ASSERT_EQ(forced.size(), 300u);
  std::vector<std::vector<int>> sources, targets;
  for (const auto& line : forced) {
    sources.push_back(line["src_ids"].get<std::vector<int>>());
    targets.push_back(line["tgt_ids"].get<std::vector<int>>());
  }
  Translator float32(float32_, 1);
  Translator reduced(model_, 1);
  ASSERT_OK_AND_ASSIGN(const auto float32_scores, float32.Score(sources, targets));
  ASSERT_OK_AND_ASSIGN(const auto scores, reduced.Score(sources, targets));
  for (const bool against_golden : {false, true}) {
    SCOPED_TRACE(against_golden ? "against the golden file" : "against the float32 engine");
    double sum = 0, max = 0;
    int tokens = 0;
    for (size_t i = 0; i < forced.size(); ++i) {
      const std::vector<double> expected =
          against_golden ? forced[i]["logprobs"].get<std::vector<double>>()
                         : std::vector<double>(float32_scores[i].begin(), float32_scores[i].end());
      ASSERT_EQ(scores[i].size(), expected.size()) << "line " << i;
      for (size_t t = 0; t < expected.size(); ++t) {
        const double diff = std::abs(scores[i][t] - expected[t]);
        sum += diff;
        max = std::max(max, diff);
        ++tokens;
      }
    }
    const double mean = sum / tokens;
    std::cout << name() << (against_golden ? " vs golden" : " vs float32")
              << ": teacher-forced log-prob |diff| mean " << mean << ", max " << max << " over "
              << tokens << " tokens\n";
    EXPECT_LE(mean, tolerances_.mean_log_prob_diff);
    EXPECT_LE(max, tolerances_.max_log_prob_diff);
  }
}

// Greedy search on the 1,000 lines: mostly the same ids as float32, and BLEU close to float32's.
TEST_P(ComputeTypeQualityTest, GreedyOutputMostlyIdenticalToFloat32AndBleuClose) {
  const Translations& reduced = TranslateTestSet(model_, 1);
  int identical = 0;
  std::vector<std::string> float32_texts;
  for (size_t i = 0; i < Golden().size(); ++i) {
    if (reduced.ids[i] == Golden()[i]["greedy_ids"].get<std::vector<int>>()) ++identical;
    float32_texts.push_back(Golden()[i]["greedy_text"]);
  }
  const double float32_bleu = CorpusBleu(float32_texts, GermanReferences());
  const double bleu = CorpusBleu(reduced.texts, GermanReferences());
  std::cout << name() << " greedy: " << identical << "/1000 identical to float32, BLEU " << bleu
            << " (float32 " << float32_bleu << ")\n";
  EXPECT_GE(identical, tolerances_.min_identical_greedy);
  EXPECT_NEAR(bleu, float32_bleu, tolerances_.max_bleu_diff);
}

TEST_P(ComputeTypeQualityTest, BeamSearchBleuCloseToFloat32) {
  const Translations& float32 = TranslateTestSet(float32_, 4);
  const Translations& reduced = TranslateTestSet(model_, 4);
  int identical = 0;
  for (size_t i = 0; i < reduced.ids.size(); ++i) identical += reduced.ids[i] == float32.ids[i];
  const double float32_bleu = CorpusBleu(float32.texts, GermanReferences());
  const double bleu = CorpusBleu(reduced.texts, GermanReferences());
  std::cout << name() << " beam 4: " << identical << "/1000 identical to float32, BLEU " << bleu
            << " (float32 " << float32_bleu << ")\n";
  EXPECT_NEAR(bleu, float32_bleu, tolerances_.max_bleu_diff);
}

INSTANTIATE_TEST_SUITE_P(ReducedTypes, ComputeTypeQualityTest,
                         ::testing::Values(ComputeType::kBFloat16, ComputeType::kInt8),
                         ::mtserve::testing::ComputeTypeTestName);

}  // namespace
}  // namespace mtserve
