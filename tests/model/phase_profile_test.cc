// The engine's phase profile (model/ops/phase_profile.h) on the embedded model: its calls and
// multiply-adds are those the decoded outputs imply (steps, layers, lengths and the model's shape),
// and profiling changes no output, bit for bit. Times are not asserted: they depend on the machine.
#include "model/ops/phase_profile.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/compute_type.h"
#include "model/decoding/decoding_options.h"
#include "model/model.h"
#include "model/translator.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::mtserve::testing::ReadLines;
using ::mtserve::testing::TestDataDir;
using ::mtserve::testing::TestModel;

// 0-based lines of test_2016_flickr.en, of 6 to 36 tokens.
constexpr int kLines[] = {5, 50, 90, 133, 158, 219, 251, 256};

std::vector<std::string> Texts() {
  const std::vector<std::string> lines = ReadLines(TestDataDir() + "/multi30k/test_2016_flickr.en");
  std::vector<std::string> texts;
  for (int line : kLines) texts.push_back(lines.at(line));
  return texts;
}

const PhaseStats& Of(const PhaseTable& table, Phase phase) {
  return table[static_cast<int>(phase)];
}

// What the profiles collected while `run` ran with profiling on; each is translated with a
// translator of its own, made and destroyed inside.
template <typename Run>
PhaseTable Profiled(Run&& run) {
  const PhaseTable before = CollectedPhaseProfiles();
  EnablePhaseProfiles(true);
  run();
  EnablePhaseProfiles(false);
  PhaseTable table = CollectedPhaseProfiles();
  for (int p = 0; p < kNumPhases; ++p) {
    table[p].nanoseconds -= before[p].nanoseconds;
    table[p].calls -= before[p].calls;
    table[p].macs -= before[p].macs;
  }
  return table;
}

class PhaseProfileTest : public ::testing::TestWithParam<ComputeType> {
 protected:
  void SetUp() override {
    const auto& model = TestModel(GetParam());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
  }

  // Texts() translated with `options` on one translator while profiling: their results, and the
  // table.
  PhaseTable TranslateProfiled(const DecodingOptions& options,
                               std::vector<TranslationResult>& results) {
    return Profiled([&] {
      Translator translator(model_, 1);
      auto translated = translator.Translate(Texts(), options);
      ASSERT_TRUE(translated.ok()) << translated.status();
      results = *std::move(translated);
    });
  }

  std::shared_ptr<const Model> model_;
};

// Greedy search over one batch: a sentence of N tokens (its </s> included) takes part in N steps,
// the decode lasts as many steps as its longest sentence, and each step runs every phase once
// (the decoder's per layer). The multiply-adds follow from the shapes: per row and layer, 3d²
// (QKV) + d² (output) for self-attention and 2d² for cross-attention's projections, 2·d·ffn for
// the feed-forward, d·vocab for the projection, and attention 2·d per position read (the t
// positions generated at step t, the source's tokens).
TEST_P(PhaseProfileTest, GreedyCallsAndMultiplyAddsFollowFromTheOutputs) {
  std::vector<TranslationResult> results;
  const PhaseTable table = TranslateProfiled(DecodingOptions(), results);
  const ModelConfig& config = model_->config();
  const int64_t d = config.d_model;
  const int64_t layers = config.decoder_layers;
  int64_t steps = 0;
  int64_t rows = 0;            // Sum over steps of the rows decoded: every sentence's tokens.
  int64_t self_positions = 0;  // Positions self-attention read, over rows and steps.
  int64_t cross_positions = 0;
  for (const TranslationResult& result : results) {
    const int64_t n = static_cast<int64_t>(result.hypotheses.at(0).ids.size());
    steps = std::max(steps, n);
    rows += n;
    self_positions += n * (n + 1) / 2;
    cross_positions += n * result.source_tokens;
  }
  ASSERT_GT(steps, 1);

  EXPECT_EQ(Of(table, Phase::kEncoder).calls, 1);
  EXPECT_EQ(Of(table, Phase::kCrossKeyValues).calls, 1);
  for (Phase phase : {Phase::kEmbeddings, Phase::kVocabProjection, Phase::kLogits, Phase::kTopK,
                      Phase::kSearch}) {
    EXPECT_EQ(Of(table, phase).calls, steps) << PhaseName(phase);
  }
  for (Phase phase : {Phase::kSelfAttention, Phase::kCrossAttention, Phase::kFeedForward}) {
    EXPECT_EQ(Of(table, phase).calls, steps * layers) << PhaseName(phase);
  }

  EXPECT_EQ(Of(table, Phase::kSelfAttention).macs,
            layers * (rows * 4 * d * d + 2 * d * self_positions));
  EXPECT_EQ(Of(table, Phase::kCrossAttention).macs,
            layers * (rows * 2 * d * d + 2 * d * cross_positions));
  EXPECT_EQ(Of(table, Phase::kFeedForward).macs, layers * rows * 2 * d * config.decoder_ffn_dim);
  EXPECT_EQ(Of(table, Phase::kVocabProjection).macs, rows * d * config.vocab_size);
  EXPECT_GT(Of(table, Phase::kEncoder).macs, 0);
  EXPECT_GT(Of(table, Phase::kCrossKeyValues).macs, 0);
  for (Phase phase : {Phase::kEmbeddings, Phase::kLogits, Phase::kTopK, Phase::kSearch}) {
    EXPECT_EQ(Of(table, phase).macs, 0) << PhaseName(phase);
  }
}

// Beam search: every step runs the decoder once per layer and the projection, logits, top-k and
// search once, however many rows it has; the decode's steps are those of its longest sentence,
// which is at least its best hypothesis's tokens.
TEST_P(PhaseProfileTest, BeamCallsFollowFromTheSteps) {
  DecodingOptions options;
  options.beam_size = 4;
  std::vector<TranslationResult> results;
  const PhaseTable table = TranslateProfiled(options, results);
  const int64_t layers = model_->config().decoder_layers;
  const int64_t steps = Of(table, Phase::kVocabProjection).calls;
  for (const TranslationResult& result : results) {
    EXPECT_GE(steps, static_cast<int64_t>(result.hypotheses.at(0).ids.size()));
  }
  EXPECT_EQ(Of(table, Phase::kEncoder).calls, 1);
  EXPECT_EQ(Of(table, Phase::kCrossKeyValues).calls, 1);
  for (Phase phase : {Phase::kEmbeddings, Phase::kLogits, Phase::kTopK, Phase::kSearch}) {
    EXPECT_EQ(Of(table, phase).calls, steps) << PhaseName(phase);
  }
  for (Phase phase : {Phase::kSelfAttention, Phase::kCrossAttention, Phase::kFeedForward}) {
    EXPECT_EQ(Of(table, phase).calls, steps * layers) << PhaseName(phase);
  }
  // Beams are rows: at least beam_size rows per step after the first, for the longest sentence.
  const int64_t d = model_->config().d_model;
  EXPECT_GT(Of(table, Phase::kVocabProjection).macs, steps * d * model_->config().vocab_size);
}

// Profiling only reads the clock: the same translations, scores and alignments, bit for bit, in
// greedy and beam search.
TEST_P(PhaseProfileTest, ProfilingChangesNoOutput) {
  const std::vector<std::string> texts = Texts();
  for (int beam_size : {1, 4}) {
    SCOPED_TRACE(absl::StrCat("beam ", beam_size));
    DecodingOptions options;
    options.beam_size = beam_size;
    options.num_hypotheses = beam_size;
    options.return_alignment = true;
    EnablePhaseProfiles(false);
    Translator plain(model_, 1);
    auto expected = plain.Translate(texts, options);
    ASSERT_TRUE(expected.ok()) << expected.status();
    absl::StatusOr<std::vector<TranslationResult>> actual;
    const PhaseTable table = Profiled([&] {
      Translator profiled(model_, 1);
      actual = profiled.Translate(texts, options);
    });
    ASSERT_TRUE(actual.ok()) << actual.status();
    ASSERT_GT(Of(table, Phase::kVocabProjection).calls, 0);  // It did profile.
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t i = 0; i < actual->size(); ++i) {
      const auto& a = (*actual)[i].hypotheses;
      const auto& e = (*expected)[i].hypotheses;
      ASSERT_EQ(a.size(), e.size()) << "text " << i;
      for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a[k].ids, e[k].ids) << "text " << i << " hypothesis " << k;
        EXPECT_EQ(a[k].text, e[k].text);
        EXPECT_EQ(a[k].alignment, e[k].alignment);
        EXPECT_EQ(a[k].token_log_probs, e[k].token_log_probs);  // Exactly.
        EXPECT_EQ(a[k].score, e[k].score);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, PhaseProfileTest,
                         ::testing::ValuesIn(::mtserve::testing::kAllComputeTypes),
                         ::mtserve::testing::ComputeTypeTestName);

}  // namespace
}  // namespace mtserve
