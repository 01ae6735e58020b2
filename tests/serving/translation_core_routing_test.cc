// Routing by language through the serving core in process (TranslationRequest's source_language
// and target_language): each text of a request goes to the model that reads its language, chosen
// or detected on its own, and translates exactly as a request naming that model does; a text no
// model can read into the target gets its own error while the others are answered; a pair no
// model serves goes through a chain (fr->en->de: fr-en then en-de) and translates exactly as the
// two legs asked for by name do, layout, sentence ranges and inline markup kept, a term placed
// where the first leg translated its source; and the
// request-level errors every front end shares. The core serves the three trained models (en-de,
// de-en, fr-en) with the real engine. Expected values: the models' own translations through
// requests by name, and the languages of Multi30k's test sentences.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/repository/model_repository.h"
#include "serving/translation_core.h"
#include "tests/test_lib/test_util.h"
#include "text/language_detector.h"

namespace mtserve {
namespace {

using ::mtserve::testing::LangidModelPath;
using ::mtserve::testing::ModelsDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Sentences of Multi30k's test_2016_flickr, line 1 of each language.
constexpr char kGerman[] = "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.";
constexpr char kFrench[] = "Un homme avec un chapeau orange regardant quelque chose.";
constexpr char kEnglish[] = "A man in an orange hat starring at something.";
constexpr char kCzech[] = "Muž v oranžovém klobouku na něco zírá.";

class CoreRoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const auto* const detector = new absl::StatusOr<std::unique_ptr<LanguageDetector>>(
        LanguageDetector::Load(LangidModelPath()));
    ASSERT_TRUE(detector->ok()) << detector->status();
    detector_ = detector->value().get();
    std::vector<std::shared_ptr<const Model>> loaded;
    for (const char* name : {"en-de", "de-en", "fr-en"}) {
      static auto* const cache = new std::map<std::string, std::shared_ptr<const Model>>();
      std::shared_ptr<const Model>& model = (*cache)[name];
      if (model == nullptr) {
        absl::StatusOr<std::shared_ptr<const Model>> read =
            Model::Load(ModelsDir() + "/multi30k-" + name);
        ASSERT_TRUE(read.ok()) << read.status();
        model = *std::move(read);
      }
      loaded.push_back(model);
      models_.push_back({name, model, nullptr});
    }
    limits_.max_texts_per_request = 8;
    core_ = std::make_unique<TranslationCore>(limits_, 64, 0, nullptr, &drain_);
    scheduler_ = std::make_unique<BatchScheduler>(loaded, BatchingOptions(), nullptr);
  }
  void TearDown() override { scheduler_->Stop(); }

  void Serve(bool detection = true) {
    if (detection) core_->UseLanguageDetector(detector_);
    core_->StartServing(models_, scheduler_.get());
  }

  // Serves the models through a repository (as the server does: each loaded when first needed)
  // where each is estimated at `model_bytes` and `budget` bounds those loaded (--model_memory).
  void ServeRepository(int64_t model_bytes, int64_t budget) {
    std::vector<ModelRepository::Slot> slots;
    for (const ServedModel& m : models_) {
      slots.push_back(
          {m.name, m.model->dir(), m.model->compute_type(), m.model->config(), model_bytes});
    }
    ModelRepository::Options options;
    options.memory_budget = budget;
    absl::StatusOr<std::unique_ptr<ModelRepository>> repository = ModelRepository::Create(
        std::move(slots), options,
        [models = models_](
            const ModelRepository::Slot& slot) -> absl::StatusOr<std::shared_ptr<const Model>> {
          for (const ServedModel& m : models) {
            if (m.name == slot.name) return m.model;
          }
          return absl::InternalError(slot.name);
        });
    ASSERT_TRUE(repository.ok()) << repository.status();
    repository_ = *std::move(repository);
    core_->StartServing(repository_.get(), scheduler_.get());
  }

  ModelRepository::State StateOf(const std::string& name) const {
    for (size_t i = 0; i < models_.size(); ++i) {
      if (models_[i].name == name) return repository_->status(static_cast<int>(i)).state;
    }
    ADD_FAILURE() << "no model " << name;
    return ModelRepository::State::kFailed;
  }

  static TranslationRequest Routed(std::vector<std::string> texts, std::string target,
                                   std::string source = "auto") {
    TranslationRequest request;
    request.texts = std::move(texts);
    request.source_language = std::move(source);
    request.target_language = std::move(target);
    request.method = "Translate";
    return request;
  }

  absl::StatusOr<TranslationReply> Translate(TranslationRequest request) {
    absl::Notification done;
    absl::StatusOr<TranslationReply> reply;
    core_->Translate(std::move(request), std::make_shared<TranslationCore::Call>(),
                     [&](absl::StatusOr<TranslationReply> r) {
                       reply = std::move(r);
                       done.Notify();
                     });
    done.WaitForNotification();
    return reply;
  }

  // The best translation of `text` by the model named `model`, asked for by name.
  std::string ByName(const std::string& model, const std::string& text) {
    TranslationRequest request;
    request.model = model;
    request.texts = {text};
    absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->translations[0].hypotheses[0].text : "";
  }

  RequestLimits limits_;
  DrainGate drain_;
  const LanguageDetector* detector_ = nullptr;
  std::vector<ServedModel> models_;
  std::unique_ptr<ModelRepository> repository_;  // ServeRepository's; outlives the core.
  std::unique_ptr<TranslationCore> core_;
  std::unique_ptr<BatchScheduler> scheduler_;
};

TEST_F(CoreRoutingTest, AutoSendsEachTextOfAMixedBatchToItsOwnModel) {
  Serve();
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kGerman, kFrench, kGerman}, "en"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->routed.size(), 3u);
  EXPECT_EQ(reply->model, "");  // Two models translated.
  const char* expected_models[] = {"de-en", "fr-en", "de-en"};
  const char* expected_languages[] = {"de", "fr", "de"};
  const char* texts[] = {kGerman, kFrench, kGerman};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const RoutedText& routed = reply->routed[i];
    EXPECT_TRUE(routed.status.ok()) << routed.status;
    EXPECT_EQ(routed.model, expected_models[i]);
    ASSERT_TRUE(routed.detected.has_value());
    EXPECT_EQ(routed.detected->language, expected_languages[i]);
    // A whole sentence is detected with near certainty (docs/benchmarks.md).
    EXPECT_GT(routed.detected->confidence, 90);
    EXPECT_LE(routed.detected->confidence, 100);
    EXPECT_EQ(reply->translations[i].hypotheses[0].text, ByName(expected_models[i], texts[i]));
  }
}

TEST_F(CoreRoutingTest, AGivenSourceRoutesEveryTextWithoutDetecting) {
  Serve();
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kEnglish, "Hallo"}, "de", "en"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->model, "en-de");
  ASSERT_EQ(reply->routed.size(), 2u);
  EXPECT_EQ(reply->routed[1].model, "en-de");
  EXPECT_FALSE(reply->routed[1].detected.has_value());
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, ByName("en-de", kEnglish));
}

TEST_F(CoreRoutingTest, ATextInALanguageNotServedGetsItsOwnErrorAndTheOthersAreTranslated) {
  Serve();
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kFrench, kCzech, kEnglish}, "en"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->routed.size(), 3u);
  EXPECT_EQ(reply->model, "fr-en");
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, ByName("fr-en", kFrench));
  const struct {
    int index;
    const char* language;
  } refused[] = {{1, "cs"}, {2, "en"}};
  for (const auto& [i, language] : refused) {
    SCOPED_TRACE(i);
    const RoutedText& routed = reply->routed[i];
    EXPECT_EQ(routed.status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(routed.status.message(),
                AllOf(HasSubstr(absl::StrCat("texts[", i, "]: detected as ", language)),
                      HasSubstr(absl::StrCat("no model here translates ", language, " into en")),
                      HasSubstr("de->en (de-en), fr->en (fr-en)")));
    EXPECT_EQ(routed.model, "");
    ASSERT_TRUE(routed.detected.has_value());
    EXPECT_EQ(routed.detected->language, language);
    EXPECT_TRUE(reply->translations[i].hypotheses.empty());
  }
}

TEST_F(CoreRoutingTest, ATextWithoutLettersIsUndeterminedAndStillAnswered) {
  Serve();
  absl::StatusOr<TranslationReply> reply = Translate(Routed({"", "1234"}, "en"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  for (const RoutedText& routed : reply->routed) {
    EXPECT_TRUE(routed.status.ok()) << routed.status;
    ASSERT_TRUE(routed.detected.has_value());
    EXPECT_EQ(routed.detected->language, "und");
    EXPECT_EQ(routed.detected->confidence, 0);
    EXPECT_EQ(routed.model, "de-en");  // The first model into English.
  }
  EXPECT_TRUE(reply->translations[0].hypotheses[0].text.empty());
}

TEST_F(CoreRoutingTest, WithoutDetectionAutoTakesTheOnlySourceOrIsRefused) {
  models_.pop_back();  // Without fr-en, nothing but English reads into German.
  Serve(/*detection=*/false);
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kEnglish}, "de"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->routed[0].model, "en-de");
  ASSERT_TRUE(reply->routed[0].detected.has_value());
  EXPECT_EQ(reply->routed[0].detected->language, "en");
  EXPECT_EQ(reply->routed[0].detected->confidence, 0);  // Not detected.

  reply = Translate(Routed({kGerman}, "en"));
  EXPECT_TRUE(reply.ok()) << "de only: " << reply.status();
}

TEST_F(CoreRoutingTest, WithoutDetectionAutoIsRefusedWhenSeveralLanguagesReadIntoTheTarget) {
  Serve(/*detection=*/false);
  for (auto [target, sources] : {std::pair{"en", "(de, fr)"}, {"de", "(en, fr)"}}) {
    absl::StatusOr<TranslationReply> reply = Translate(Routed({kGerman}, target));
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(reply.status().message(),
                AllOf(HasSubstr("source_language \"auto\": language detection is off"),
                      HasSubstr("--language_model"), HasSubstr(sources)));
  }
}

TEST_F(CoreRoutingTest, RequestLevelErrorsNameTheirField) {
  Serve();
  struct Case {
    TranslationRequest request;
    const char* message;
  };
  TranslationRequest both = Routed({kEnglish}, "de");
  both.model = "en-de";
  TranslationRequest no_target = Routed({kEnglish}, "");
  std::vector<Case> cases;
  cases.push_back({Routed({kEnglish}, "es"),
                   "target_language: no model here translates into es; the pairs served: "
                   "en->de (en-de), de->en (de-en), fr->en (fr-en)"});
  cases.push_back({Routed({kEnglish}, "de", "cs"),
                   "source_language: no model here translates cs into de; the pairs served: "});
  cases.push_back({both, "model and target_language: give one or the other"});
  cases.push_back({no_target, "target_language: required with source_language"});
  for (Case& c : cases) {
    SCOPED_TRACE(c.message);
    absl::StatusOr<TranslationReply> reply = Translate(std::move(c.request));
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(reply.status().message(), HasSubstr(c.message));
  }
}

class CorePivotTest : public CoreRoutingTest {
 protected:
  // `text` by name through fr-en, then its translation by en-de taken as one sentence: the
  // pivot by hand.
  Hypothesis ByHand(const std::string& text, RequestedOptions options = {}) {
    const Hypothesis english = Named("fr-en", text, options);
    options.split_sentences = false;
    Hypothesis german = Named("en-de", english.text, options);
    german.score += english.score;
    return german;
  }

  Hypothesis Named(const std::string& model, const std::string& text, RequestedOptions options) {
    TranslationRequest request;
    request.model = model;
    request.texts = {text};
    request.options = options;
    absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->translations[0].hypotheses[0] : Hypothesis();
  }
};

TEST_F(CorePivotTest, APairWithoutAModelTranslatesThroughTheBridgeAsTheTwoLegsDo) {
  Serve();
  RequestedOptions options;
  options.return_scores = true;
  const Hypothesis expected = ByHand(kFrench, options);
  ASSERT_FALSE(expected.text.empty());
  TranslationRequest request = Routed({kFrench}, "de", "fr");
  request.options = options;
  absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->model, "fr-en+en-de");
  EXPECT_EQ(reply->routed[0].model, "fr-en+en-de");
  const Hypothesis& got = reply->translations[0].hypotheses[0];
  EXPECT_EQ(got.text, expected.text);
  EXPECT_FLOAT_EQ(got.score, expected.score) << "the legs' scores summed";
}

TEST_F(CorePivotTest, AutoIntoATargetOnlyAChainReachesDetectsAndPivots) {
  Serve();
  const std::string expected = ByHand(kFrench).text;
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kFrench, kEnglish}, "de"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_TRUE(reply->routed[0].detected.has_value());
  EXPECT_EQ(reply->routed[0].detected->language, "fr");
  EXPECT_EQ(reply->routed[0].model, "fr-en+en-de");
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, expected);
  EXPECT_EQ(reply->routed[1].model, "en-de");
  EXPECT_EQ(reply->translations[1].hypotheses[0].text, ByName("en-de", kEnglish));
  EXPECT_EQ(reply->model, "") << "two chains";
}

TEST_F(CorePivotTest, ATextOfSeveralSentencesKeepsItsLayoutAndSentenceRanges) {
  Serve();
  const std::string first = "Un homme court.", second = "Deux chiens jouent dans l'herbe.",
                    third = "Une femme chante.";
  const std::string text = "  " + first + " " + second + "\n\n" + third + "\n";
  const std::vector<std::string> expected = {ByHand(first).text, ByHand(second).text,
                                             ByHand(third).text};
  absl::StatusOr<TranslationReply> reply = Translate(Routed({text}, "de", "fr"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  const TextTranslation& got = reply->translations[0];
  EXPECT_EQ(got.hypotheses[0].text,
            "  " + expected[0] + " " + expected[1] + "\n\n" + expected[2] + "\n");
  ASSERT_EQ(got.sentences.size(), 3u);
  EXPECT_EQ(text.substr(got.sentences[1].begin, got.sentences[1].end - got.sentences[1].begin),
            second);
  ASSERT_EQ(got.hypothesis_sentences[0].size(), 3u);
  for (size_t j = 0; j < 3; ++j) {
    const Segment s = got.hypothesis_sentences[0][j];
    EXPECT_EQ(got.hypotheses[0].text.substr(s.begin, s.end - s.begin), expected[j]);
  }
}

TEST_F(CorePivotTest, InlineMarkupLandsOnTheWordAlignedThroughTheBridge) {
  Serve();
  // By hand, with each leg's alignment (mttranslate --with_alignment): fr-en writes "A man is
  // running." with "man" (1) aligned to "homme" (1); en-de writes "Ein Mann rennt." from it with
  // "Mann" (1) aligned to "man" (1). So <b> goes around "Mann".
  ASSERT_EQ(ByHand("Un homme court.").text, "Ein Mann rennt.");
  TranslationRequest request = Routed({"<p>Un <b>homme</b> court.</p>"}, "de", "fr");
  request.options.format = RequestedOptions::kHtml;
  absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, "<p>Ein <b>Mann</b> rennt.</p>");
  // The alignment asked for indexes the French source tokens: "Mann" -> "homme" (1).
  request = Routed({"Un homme court."}, "de", "fr");
  request.options.return_alignment = true;
  reply = Translate(std::move(request));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_GE(reply->translations[0].hypotheses[0].alignment.size(), 2u);
  EXPECT_EQ(reply->translations[0].hypotheses[0].alignment[1], 1);
}

// A term is written on the last leg where the first leg translated its source: the French
// "chapeau" into the German "Zorblaxer" gives what en-de writes from fr-en's translation ("A man
// in an orange hat looking at something.") with the English word fr-en aligned to it, "hat", as
// the glossary's source (found in en-de's own source, the term placed where en-de translates
// it). Where that is, the term comes after "Mann" ("homme" comes before "chapeau"); a search that
// does not know (the source tokens of the bridge left unknown) wrote "Ein Zorblaxer Mann mit
// einem orangefarbenen Hut ...".
TEST_F(CorePivotTest, ATermGoesWhereTheFirstLegTranslatedItsSource) {
  Serve();
  const std::string english = Named("fr-en", kFrench, {}).text;
  ASSERT_EQ(english, "A man in an orange hat looking at something.");
  RequestedOptions by_name;
  by_name.split_sentences = false;
  by_name.terms.glossary = {{"hat", {"Zorblaxer"}}};
  const std::string expected = Named("en-de", english, by_name).text;
  TranslationRequest request = Routed({kFrench}, "de", "fr");
  request.options.terms.glossary = {{"chapeau", {"Zorblaxer"}}};
  absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
  ASSERT_TRUE(reply.ok()) << reply.status();
  const std::string& got = reply->translations[0].hypotheses[0].text;
  EXPECT_EQ(got, expected);
  EXPECT_THAT(got, HasSubstr("Zorblaxer"));
  EXPECT_LT(got.find("Mann"), got.find("Zorblaxer")) << got;
}

TEST_F(CorePivotTest, AlternativesAreTheLastLegsNBest) {
  Serve();
  RequestedOptions options;
  options.beam_size = 4;
  options.num_hypotheses = 3;
  const Hypothesis english = Named("fr-en", kFrench, options);
  options.split_sentences = false;
  TranslationRequest second;
  second.model = "en-de";
  second.texts = {english.text};
  second.options = options;
  absl::StatusOr<TranslationReply> expected = Translate(std::move(second));
  ASSERT_TRUE(expected.ok()) << expected.status();
  TranslationRequest request = Routed({kFrench}, "de", "fr");
  request.options = options;
  request.options.split_sentences = true;
  absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->translations[0].hypotheses.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(reply->translations[0].hypotheses[k].text,
              expected->translations[0].hypotheses[k].text);
  }
}

// docs/api.md, "Pivot translation": both models of a chain are held for the request. With a
// --model_memory that holds one of them, French into German can never run: it is refused at once
// (rather than holding fr-en while en-de's load waits for room until the deadline, every other
// load queued behind it), naming both models and the budget, and nothing is loaded for it. Each
// leg asked for by name still translates, the budget holding one model at a time.
TEST_F(CorePivotTest, AChainWhoseModelsCannotFitTogetherIsRefusedAtOnce) {
  ServeRepository(/*model_bytes=*/1000, /*budget=*/1500);
  TranslationRequest request = Routed({kFrench}, "de", "fr");
  // Without the check it would wait for room until this deadline, and fail UNAVAILABLE.
  request.deadline = absl::Now() + absl::Seconds(30);
  absl::StatusOr<TranslationReply> reply = Translate(std::move(request));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition) << reply.status();
  EXPECT_THAT(reply.status().message(),
              AllOf(HasSubstr("fr-en"), HasSubstr("en-de"), HasSubstr("--model_memory=1500")));
  for (const char* name : {"en-de", "de-en", "fr-en"}) {
    EXPECT_EQ(StateOf(name), ModelRepository::State::kAvailable) << name << " was loaded";
  }
  // The legs by name, one model resident at a time.
  const Hypothesis english = Named("fr-en", kFrench, {});
  EXPECT_FALSE(english.text.empty());
  EXPECT_EQ(StateOf("fr-en"), ModelRepository::State::kLoaded);
  RequestedOptions whole;
  whole.split_sentences = false;
  EXPECT_FALSE(Named("en-de", english.text, whole).text.empty());
  EXPECT_EQ(StateOf("en-de"), ModelRepository::State::kLoaded);
  EXPECT_EQ(StateOf("fr-en"), ModelRepository::State::kAvailable) << "unloaded for en-de";
}

// With room for both, the same request is translated through the repository's models, exactly as
// the two legs by name.
TEST_F(CorePivotTest, AChainWhoseModelsFitTogetherIsTranslatedThroughTheRepository) {
  ServeRepository(/*model_bytes=*/1000, /*budget=*/2000);
  const std::string expected = ByHand(kFrench).text;
  absl::StatusOr<TranslationReply> reply = Translate(Routed({kFrench}, "de", "fr"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, expected);
}

}  // namespace
}  // namespace mtserve
