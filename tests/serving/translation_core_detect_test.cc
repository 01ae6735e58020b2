// The serving core's language detection in process (TranslationCore::Detect): the ranking among
// the served models' languages or all the detector knows, each text on its own, and the errors
// every front end shares. The core serves the three trained models (en-de, de-en, fr-en) over
// the fake engine: detection translates nothing.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/translation_core.h"
#include "tests/test_lib/fake_engine.h"
#include "tests/test_lib/test_util.h"
#include "text/language_detector.h"

namespace mtserve {
namespace {

using ::mtserve::testing::LangidModelPath;
using ::mtserve::testing::ModelsDir;
using ::testing::HasSubstr;

class CoreDetectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const auto* const detector = new absl::StatusOr<std::unique_ptr<LanguageDetector>>(
        LanguageDetector::Load(LangidModelPath()));
    ASSERT_TRUE(detector->ok()) << detector->status();
    std::vector<ModelConfig> configs;
    for (const char* name : {"en-de", "de-en", "fr-en"}) {
      absl::StatusOr<std::shared_ptr<const Model>> model =
          Model::Load(ModelsDir() + "/multi30k-" + name);
      ASSERT_TRUE(model.ok()) << model.status();
      configs.push_back((*model)->config());
      models_.push_back({name, *std::move(model), nullptr});
    }
    limits_.max_texts_per_request = 4;
    limits_.max_text_bytes = 1000;
    core_ = std::make_unique<TranslationCore>(limits_, 64, 0, nullptr, &drain_);
    core_->UseLanguageDetector(detector->value().get());
    scheduler_ = std::make_unique<BatchScheduler>(configs, BatchingOptions(), nullptr, [this] {
      return std::make_unique<testing::FakeEngine>(log_);
    });
  }
  void TearDown() override {
    if (scheduler_ != nullptr) scheduler_->Stop();
  }

  static DetectionRequest Request(std::vector<std::string> texts, std::string target = "") {
    DetectionRequest request;
    request.texts = std::move(texts);
    request.target = std::move(target);
    request.method = "Detect";
    return request;
  }

  // The best language of each text ("" for none), the core serving.
  std::vector<std::string> Best(const DetectionRequest& request) {
    absl::StatusOr<DetectionReply> reply = core_->Detect(request);
    EXPECT_TRUE(reply.ok()) << reply.status();
    std::vector<std::string> best;
    if (!reply.ok()) return best;
    for (const auto& ranking : reply->texts)
      best.push_back(ranking.empty() ? "" : ranking[0].language);
    return best;
  }

  RequestLimits limits_;
  DrainGate drain_;
  testing::EngineLog log_;
  std::vector<ServedModel> models_;
  std::unique_ptr<TranslationCore> core_;
  std::unique_ptr<BatchScheduler> scheduler_;
};

TEST_F(CoreDetectTest, EachTextIsRankedOnItsOwnAmongTheServedSources) {
  core_->StartServing(models_, scheduler_.get());
  EXPECT_EQ(Best(Request({"Ein Mann fährt Fahrrad.", "Un homme fait du vélo.",
                          "A man rides a bike.", "12 345"})),
            (std::vector<std::string>{"de", "fr", "en", ""}));
  // Into English, only German and French are read: an English text is ranked among them.
  const absl::StatusOr<DetectionReply> into_english =
      core_->Detect(Request({"Zwei Hunde laufen über eine Wiese."}, "en"));
  ASSERT_TRUE(into_english.ok()) << into_english.status();
  ASSERT_EQ(into_english->texts.size(), 1u);
  ASSERT_EQ(into_english->texts[0].size(), 2u);
  EXPECT_EQ(into_english->texts[0][0].language, "de");
  EXPECT_GT(into_english->texts[0][0].confidence, 90);
  EXPECT_LE(into_english->texts[0][0].confidence, 100);
  EXPECT_EQ(into_english->texts[0][1].language, "fr");
}

// A Czech text: among the served languages each is unlikely; among all, it is Czech.
TEST_F(CoreDetectTest, AllLanguagesOnRequest) {
  core_->StartServing(models_, scheduler_.get());
  DetectionRequest request = Request({"Muž jede na kole po horské silnici."});
  const absl::StatusOr<DetectionReply> served = core_->Detect(request);
  ASSERT_TRUE(served.ok()) << served.status();
  ASSERT_EQ(served->texts[0].size(), 3u);
  for (const DetectedLanguage& language : served->texts[0]) EXPECT_LT(language.confidence, 20);
  request.all_languages = true;
  request.max_results = 2;
  const absl::StatusOr<DetectionReply> all = core_->Detect(request);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->texts[0].size(), 2u);
  EXPECT_EQ(all->texts[0][0].language, "cs");
  EXPECT_GT(all->texts[0][0].confidence, 50);
}

TEST_F(CoreDetectTest, ErrorsNameTheFieldAndTheLimit) {
  EXPECT_EQ(core_->Detect(Request({"A man."})).status().code(), absl::StatusCode::kUnavailable)
      << "while loading";
  core_->StartServing(models_, scheduler_.get());
  const absl::Status many = core_->Detect(Request({"a", "b", "c", "d", "e"})).status();
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(many.message(), HasSubstr("texts has 5 entries; the limit is 4"));
  const absl::Status long_text = core_->Detect(Request({"ok", std::string(1001, 'a')})).status();
  EXPECT_EQ(long_text.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(long_text.message(), HasSubstr("texts[1] has 1001 bytes; the limit is 1000"));
  const absl::Status bad_utf8 = core_->Detect(Request({"ok", "caf\xc3"})).status();
  EXPECT_EQ(bad_utf8.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_utf8.message(), HasSubstr("texts[1]"));
  const absl::Status target = core_->Detect(Request({"Un homme."}, "cs")).status();
  EXPECT_EQ(target.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(target.message(), HasSubstr("no model here translates into cs"));
  EXPECT_THAT(target.message(), HasSubstr("en->de (en-de), de->en (de-en), fr->en (fr-en)"));
  drain_.StartDraining();
  EXPECT_EQ(core_->Detect(Request({"A man."})).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(CoreDetectTest, WithoutADetectorDetectionIsOff) {
  TranslationCore core(limits_, 64, 0, nullptr, &drain_);
  core.StartServing(models_, scheduler_.get());
  const absl::Status off = core.Detect(Request({"A man."})).status();
  EXPECT_EQ(off.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(off.message(), HasSubstr("--language_model"));
}

}  // namespace
}  // namespace mtserve
