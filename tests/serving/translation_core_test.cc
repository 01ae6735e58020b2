// The serving core in process (serving/translation_core.h), no sockets: requests as a front end
// makes them (serving/translation_request.h), answered by the core over the test model's
// tokenizer and either the real engine (the limits, whose "at the limit: fine" halves need real
// translations) or the fake one (tests/test_lib/fake_engine.h: deadlines, cancellation and
// draining at a step the test chooses). Every limit and field check the front ends share is
// asserted here, with its code and message; tests/e2e/server_test.cc keeps one check per status
// code through gRPC, and the HTTP suites through HTTP. Expected values come from the limits set
// below and the API's documented messages.
#include "serving/translation_core.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/decode_memory.h"
#include "model/translator.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/request_limits.h"
#include "serving/translation_request.h"
#include "tests/test_lib/api_key_files.h"
#include "tests/test_lib/fake_engine.h"
#include "tests/test_lib/test_util.h"
#include "text/terminology.h"
#include "text/text_translation.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kModel[] = "multi30k-en-de";

// The limits tests/e2e/server_test.cc's LimitsTest gives the server on its command line.
RequestLimits LowLimits() {
  RequestLimits limits;
  limits.max_texts_per_request = 4;
  limits.max_input_tokens = 16;
  limits.max_output_tokens = 40;
  limits.max_beam_size = 4;
  limits.max_sampling_topk = 50;
  limits.max_text_bytes = 32 << 10;
  limits.worker_memory_bytes = int64_t{1} << 30;  // mtserve's default --worker_memory.
  return limits;
}

// A small memory budget per worker (tests/e2e/server_test.cc's --worker_memory=16MiB), the other
// limits the server's defaults.
RequestLimits SmallMemoryLimits() {
  RequestLimits limits;
  limits.worker_memory_bytes = 16 << 20;
  return limits;
}

TranslationRequest Request(std::vector<std::string> texts, RequestedOptions options = {},
                           std::string model = "") {
  TranslationRequest request;
  request.model = std::move(model);
  request.texts = std::move(texts);
  request.options = options;
  request.method = "Translate";
  return request;
}

RequestedOptions Beam(uint32_t beam_size, uint32_t num_hypotheses, uint32_t max_length = 0) {
  RequestedOptions options;
  options.beam_size = beam_size;
  options.num_hypotheses = num_hypotheses;
  options.max_length = max_length;
  return options;
}

RequestedOptions Sampling(uint32_t topk) {
  RequestedOptions options;
  options.sampling_topk = topk;
  options.sampling_temperature = 1.0f;
  options.seed = 7;
  options.max_length = 8;
  return options;
}

// A core serving the test model as kModel, over the real engine or `engines`; the gate is its own.
class Core {
 public:
  Core(std::shared_ptr<const Model> model, const RequestLimits& limits,
       const BatchingOptions& batching, DecodeEngineFactory engines = nullptr)
      : core_(limits, batching.max_queued_texts, /*cache_bytes=*/0, /*metrics=*/nullptr, &drain_) {
    scheduler_ = testing::SchedulerOf(model, batching, std::move(engines));
    models_.push_back({kModel, std::move(model), nullptr});
  }
  // Answers what is still queued or decoding before the core goes.
  ~Core() { scheduler_->Stop(); }

  void StartServing() { core_.StartServing(models_, scheduler_.get()); }

  // `request`'s reply, waited for; `call` may cancel it.
  absl::StatusOr<TranslationReply> Translate(
      TranslationRequest request,
      std::shared_ptr<TranslationCore::Call> call = std::make_shared<TranslationCore::Call>()) {
    absl::Notification done;
    absl::StatusOr<TranslationReply> reply;
    core_.Translate(std::move(request), std::move(call), [&](absl::StatusOr<TranslationReply> r) {
      reply = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return reply;
  }

  TranslationCore& core() { return core_; }
  DrainGate& drain() { return drain_; }
  BatchScheduler& scheduler() { return *scheduler_; }

 private:
  DrainGate drain_;
  TranslationCore core_;
  std::unique_ptr<BatchScheduler> scheduler_;
  std::vector<ServedModel> models_;
};

// The status of `reply`, which must be an error of `code` whose message has every one of
// `parts`.
void ExpectError(const absl::StatusOr<TranslationReply>& reply, absl::StatusCode code,
                 const std::vector<std::string>& parts = {}) {
  ASSERT_FALSE(reply.ok()) << "expected " << absl::StatusCodeToString(code);
  EXPECT_EQ(reply.status().code(), code) << reply.status();
  for (const std::string& part : parts) {
    EXPECT_THAT(reply.status().message(), HasSubstr(part));
  }
}

// Over the real engine, with a server's defaults but for `limits` and one worker.
class CoreLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(model_, testing::TestModel()); }
  std::unique_ptr<Core> Serve(const RequestLimits& limits, BatchingOptions batching = {}) {
    batching.worker_memory_bytes = limits.worker_memory_bytes;
    auto core = std::make_unique<Core>(model_, limits, batching);
    core->StartServing();
    return core;
  }

  std::shared_ptr<const Model> model_;
};

// Characters the model cannot spell (text/unknown_runs.h): the sentence holding them is decoded
// with the alignment, which the answer carries only if asked for; a run the model generated
// nothing for is listed in the hypothesis's dropped ranges (bytes of the text), a sentence of
// nothing else comes back as written.
TEST_F(CoreLimitsTest, UnknownCharactersComeBackOrAreListed) {
  const std::unique_ptr<Core> core = Serve(LowLimits());
  // "😀" is bytes 18-22 of the first text.
  absl::StatusOr<TranslationReply> reply =
      core->Translate(Request({"A dog runs. A man 😀 sleeps.", "你好世界。"}));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->translations.size(), 2u);
  const TextTranslation& dog = reply->translations[0];
  ASSERT_EQ(dog.dropped.size(), 1u);
  EXPECT_THAT(dog.dropped[0], ElementsAre(Segment{18, 22}));
  EXPECT_TRUE(dog.hypotheses[0].alignment.empty());
  EXPECT_EQ(reply->translations[1].hypotheses[0].text, "你好世界。");

  RequestedOptions aligned;
  aligned.return_alignment = true;
  reply = core->Translate(Request({"A dog runs. A man 😀 sleeps."}, aligned));
  ASSERT_TRUE(reply.ok()) << reply.status();
  const Hypothesis& h = reply->translations[0].hypotheses[0];
  EXPECT_EQ(h.alignment.size(), h.ids.size());
}

TEST_F(CoreLimitsTest, UnavailableWhileLoading) {
  Core core(model_, LowLimits(), BatchingOptions());
  ExpectError(core.Translate(Request({"A dog runs."})), absl::StatusCode::kUnavailable,
              {"the server is loading its models"});
  core.StartServing();
  EXPECT_TRUE(core.Translate(Request({"A dog runs."})).ok());
}

TEST_F(CoreLimitsTest, TooManyTexts) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request(std::vector<std::string>(5, "A dog runs."))),
              absl::StatusCode::kInvalidArgument,
              {"texts has 5 entries; the limit is 4", "--max_texts_per_request"});
  // At the limit: fine.
  absl::StatusOr<TranslationReply> ok =
      core->Translate(Request(std::vector<std::string>(4, "A dog runs.")));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations.size(), 4u);
}

// A text's bytes are checked before it is split or tokenised.
TEST_F(CoreLimitsTest, LongTextsAreRefusedByBytes) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request({"A dog.", std::string(40 * 1024, 'a')})),
              absl::StatusCode::kInvalidArgument,
              {"texts[1] has 40960 bytes; the limit is 32768 (the server's --max_text_bytes)"});
}

// What the model allows is checked in one place (the engine's ValidateDecodingOptions), and its
// messages name the API's fields as the server's own limits do.
TEST_F(CoreLimitsTest, ModelRulesNameTheOptionsFields) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  RequestedOptions sampling_beam = Beam(2, 1);
  sampling_beam.sampling_topk = 5;
  RequestedOptions cold;
  cold.sampling_temperature = -1;
  ExpectError(core->Translate(Request({"A dog runs."}, sampling_beam)),
              absl::StatusCode::kInvalidArgument,
              {"options.sampling_topk is 5; sampling needs options.beam_size 1, not 2"});
  ExpectError(core->Translate(Request({"A dog runs."}, cold)), absl::StatusCode::kInvalidArgument,
              {"options.sampling_temperature is -1; it must be a positive number"});
}

TEST_F(CoreLimitsTest, MaxLengthOverMaxOutputTokens) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  RequestedOptions options;
  options.max_length = 41;
  ExpectError(core->Translate(Request({"A dog runs."}, options)),
              absl::StatusCode::kInvalidArgument,
              {"options.max_length is 41; the limit is 40", "--max_output_tokens"});

  // At the limit, with min_length forcing every token: exactly 40 ids (</s> included, if any).
  options.max_length = 40;
  options.min_length = 40;
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs."}, options));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations[0].hypotheses[0].ids.size(), 40u);

  // Unset, max_length is the model's (255) capped by --max_output_tokens: 40, so min_length may
  // be 40 and not 41.
  options = RequestedOptions();
  options.return_scores = true;
  options.min_length = 40;
  absl::StatusOr<TranslationReply> capped = core->Translate(Request({"A dog runs."}, options));
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->translations[0].hypotheses[0].token_log_probs.size(), 40u);
  options.min_length = 41;
  ExpectError(core->Translate(Request({"A dog runs."}, options)),
              absl::StatusCode::kInvalidArgument, {"options.min_length is 41; the limit is 40"});
}

TEST_F(CoreLimitsTest, BeamSizeOverMaxBeamSize) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request({"A dog runs."}, Beam(5, 1))),
              absl::StatusCode::kInvalidArgument,
              {"options.beam_size is 5; the limit is 4", "--max_beam_size"});
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs."}, Beam(4, 4)));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations[0].hypotheses.size(), 4u);
}

TEST_F(CoreLimitsTest, NumHypothesesOverBeamSize) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request({"A dog runs."}, Beam(2, 3))),
              absl::StatusCode::kInvalidArgument,
              {"options.num_hypotheses is 3; the limit is 2 (options.beam_size)"});
  // beam_size unset means 1.
  ExpectError(core->Translate(Request({"A dog runs."}, Beam(0, 2))),
              absl::StatusCode::kInvalidArgument, {"options.num_hypotheses is 2; the limit is 1"});
}

// Finding the k best tokens costs each step time that grows with k: the server bounds it.
TEST_F(CoreLimitsTest, SamplingTopkOverMaxSamplingTopk) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request({"A dog runs."}, Sampling(51))),
              absl::StatusCode::kInvalidArgument,
              {"options.sampling_topk is 51; the limit is 50 (the server's --max_sampling_topk)"});
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs."}, Sampling(50)));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations[0].hypotheses.size(), 1u);
}

// With a sampling limit above the vocabulary, the model's own limit shows.
TEST_F(CoreLimitsTest, SamplingTopkOverVocabulary) {
  RequestLimits limits = LowLimits();
  limits.max_sampling_topk = 100000;
  std::unique_ptr<Core> core = Serve(limits);
  const int vocab = model_->config().vocab_size;
  ExpectError(core->Translate(Request({"A dog runs."}, Sampling(vocab + 1))),
              absl::StatusCode::kInvalidArgument,
              {absl::StrCat("options.sampling_topk is ", vocab + 1, "; the limit is ", vocab)});
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs."}, Sampling(vocab)));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations[0].hypotheses.size(), 1u);
}

TEST_F(CoreLimitsTest, UnknownFormatIsInvalid) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  RequestedOptions options;
  for (const int format : {10, -1}) {
    options.format = format;
    ExpectError(core->Translate(Request({"A dog."}, options)), absl::StatusCode::kInvalidArgument,
                {absl::StrCat("options.format is ", format), "TEXT_FORMAT_VTT (4)"});
  }
}

// An office document's format is a file's (binary: a zip archive), not a text's: a text API's
// request is told to use the file API, its field named as the front end names it.
TEST_F(CoreLimitsTest, BinaryFormatsAreForFilesOnly) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  RequestedOptions options;
  const std::vector<std::pair<int, std::string>> formats = {{RequestedOptions::kDocx, "DOCX"},
                                                            {RequestedOptions::kPptx, "PPTX"},
                                                            {RequestedOptions::kOdt, "ODT"},
                                                            {RequestedOptions::kOdp, "ODP"},
                                                            {RequestedOptions::kEpub, "EPUB"}};
  for (const auto& [format, name] : formats) {
    options.format = format;
    ExpectError(core->Translate(Request({"A dog."}, options)), absl::StatusCode::kInvalidArgument,
                {absl::StrCat("options.format is ", name), "file API", "/v1/translate_file"});
  }
  TranslationRequest request = Request({"A dog."}, options);
  request.format_field = "format";
  ExpectError(core->Translate(std::move(request)), absl::StatusCode::kInvalidArgument,
              {"format is EPUB"});
  // A file's bytes of such a format are not held to UTF-8: what refuses them is their format.
  request = Request({"PK\x03\x04 \xff\xfe not an archive"}, options);
  request.file = true;
  request.texts_field = "file";
  request.texts_repeated = false;
  const absl::StatusOr<TranslationReply> reply = core->Translate(std::move(request));
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.status().message(), HasSubstr("file: "));
  EXPECT_THAT(reply.status().message(), Not(HasSubstr("UTF-8")));
}

// A text whose decode could outgrow a worker's memory budget (every beam decoded to max_length)
// is refused at once, naming it and the flag; with a smaller beam it translates.
TEST_F(CoreLimitsTest, TextThatCannotFitTheMemoryBudgetIsRefused) {
  std::unique_ptr<Core> core = Serve(SmallMemoryLimits());
  const RequestedOptions options = Beam(16, 1, /*max_length=*/200);
  ExpectError(
      core->Translate(Request({"", "A dog runs."}, options)), absl::StatusCode::kInvalidArgument,
      {"texts[1] (5 tokens) can need up to", "the limit is 16 MiB (the server's --worker_memory)"});
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"", "A dog runs."}, Beam(2, 1)));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations[1].hypotheses.size(), 1u);
}

// A text whose one sentence cannot fit the memory budget fails, naming the sentence.
TEST_F(CoreLimitsTest, ASentenceThatCannotFitTheMemoryBudgetIsNamed) {
  std::unique_ptr<Core> core = Serve(SmallMemoryLimits());
  // At beam 8 and max_length 100 a sentence of 5 tokens fits 16 MiB, one of 281 does not.
  const RequestedOptions options = Beam(8, 1, /*max_length=*/100);
  std::string text = "A dog runs. Two dogs run";
  for (int i = 0; i < 40; ++i) absl::StrAppend(&text, " and a dog runs on the beach");
  ExpectError(core->Translate(Request({text}, options)), absl::StatusCode::kInvalidArgument,
              {"texts[0] sentence 2 of 2 (bytes 12-", "--worker_memory"});
}

// A sentence whose decode fits the memory budget, but not with the memory its glossary terms take
// in the search (each a few hundred bytes per token of its forms), is refused at once, naming
// it, the budget and the terms' share; without them it translates.
TEST_F(CoreLimitsTest, TermsThatPushASentenceOverTheMemoryBudgetAreRefused) {
  const RequestedOptions plain = Beam(4, 1, /*max_length=*/40);
  // The budget: what the sentence's decode needs without terms, and 64 KiB more.
  ASSERT_OK_AND_ASSIGN(const DecodingOptions decoding,
                       ToDecodingOptions(plain, model_->config(), RequestLimits()));
  const int source_tokens =
      static_cast<int>(model_->tokenizer().EncodeSource("A dog runs.").size());
  RequestLimits limits = SmallMemoryLimits();
  limits.worker_memory_bytes =
      DecodeMemory(model_->config(), decoding).Admitting(1, source_tokens, 1, source_tokens) +
      (64 << 10);
  std::unique_ptr<Core> core = Serve(limits);
  const absl::StatusOr<TranslationReply> fits = core->Translate(Request({"A dog runs."}, plain));
  ASSERT_TRUE(fits.ok()) << fits.status();
  // One glossary entry of 8 targets of about 200 bytes each: its forms hold hundreds of tokens.
  RequestedOptions with_terms = plain;
  GlossaryEntry entry{"dog", {"Hund"}};
  for (int t = 1; t < 8; ++t) {
    std::string target = absl::StrCat("Hund", t);
    while (target.size() < 200) absl::StrAppend(&target, " Schäferhund", t, " mit Leine");
    entry.targets.push_back(target);
  }
  with_terms.terms.glossary.push_back(entry);
  ExpectError(core->Translate(Request({"A dog runs."}, with_terms)),
              absl::StatusCode::kInvalidArgument,
              {absl::StrCat("texts[0] (", source_tokens, " tokens) can need up to"),
               "of it for its terms; the limit is", "(the server's --worker_memory)",
               "or fewer or shorter terms"});
}

// A sentence whose terms need more tokens than its translation may have is refused by the
// engine's one check of them, named, with both figures and the options that make the bound.
TEST_F(CoreLimitsTest, TermsLongerThanTheLengthBoundAreRefused) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  RequestedOptions options = Beam(2, 1, /*max_length=*/4);
  options.terms.glossary.push_back({"dog", {"Schäferhund mit langer Leine"}});
  ExpectError(core->Translate(Request({"A cat sleeps.", "A dog runs."}, options)),
              absl::StatusCode::kInvalidArgument,
              {"texts[1]: its terms need ",
               " tokens of translation; a translation of it may have 3 "
               "(max_length 4, or max_length_factor"});
  // With room for them, it translates.
  options.max_length = 30;
  const absl::StatusOr<TranslationReply> reply =
      core->Translate(Request({"A cat sleeps.", "A dog runs."}, options));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(reply->translations[1].hypotheses[0].text, HasSubstr("Schäferhund mit langer Leine"));
}

TEST_F(CoreLimitsTest, InvalidUtf8IsInvalidArgument) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  for (const std::string& bad : {std::string("A dog \xff runs."), std::string("caf\xc3"),
                                 std::string("\xed\xa0\x80")}) {  // 0xFF, truncated, surrogate.
    SCOPED_TRACE(::testing::PrintToString(bad));
    ExpectError(core->Translate(Request({"A dog runs.", bad})), absl::StatusCode::kInvalidArgument,
                {"texts[1] is not valid UTF-8"});
  }
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs.", "caf\xc3\xa9"}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->translations.size(), 2u);
}

TEST_F(CoreLimitsTest, UnknownModelIsNotFound) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  ExpectError(core->Translate(Request({"A dog runs."}, {}, "en-xx")), absl::StatusCode::kNotFound,
              {"\"en-xx\"", kModel});  // What is served.
  // Naming the served model explicitly works.
  absl::StatusOr<TranslationReply> ok = core->Translate(Request({"A dog runs."}, {}, kModel));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->model, kModel);
}

// A sentence that stops at its length bound says so: its text's hypothesis counts it, never
// silently (the API's Hypothesis.truncated_sentences).
TEST_F(CoreLimitsTest, SentencesCutAtTheirLengthBoundAreCounted) {
  std::unique_ptr<Core> core = Serve(LowLimits());
  // Three tokens are not enough for any of these sentences' translations.
  absl::StatusOr<TranslationReply> cut = core->Translate(Request(
      {"A dog runs. A cat sleeps.", "A man is riding a bike."}, Beam(1, 1, /*max_length=*/3)));
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->translations[0].hypotheses[0].truncated, 2);
  EXPECT_EQ(cut->translations[1].hypotheses[0].truncated, 1);
  absl::StatusOr<TranslationReply> whole = core->Translate(Request({"A dog runs. A cat sleeps."}));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->translations[0].hypotheses[0].truncated, 0);
}

// A text of more sentences than the queue holds is translated: its sentences are admitted as the
// queue drains.
TEST_F(CoreLimitsTest, MoreSentencesThanTheQueueHoldsAreTranslated) {
  BatchingOptions batching;
  batching.max_queued_texts = 2;
  std::unique_ptr<Core> core = Serve(RequestLimits(), batching);
  const std::string text = "A dog runs. A cat sleeps. A bird sings.";
  absl::StatusOr<TranslationReply> reply = core->Translate(Request({text}));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->translations.size(), 1u);
  EXPECT_EQ(reply->translations[0].sentences.size(), 3u);
  // Each sentence as it translates alone.
  std::string expected;
  for (const std::string sentence : {"A dog runs.", "A cat sleeps.", "A bird sings."}) {
    absl::StatusOr<TranslationReply> alone = core->Translate(Request({sentence}));
    ASSERT_TRUE(alone.ok()) << alone.status();
    absl::StrAppend(&expected, expected.empty() ? "" : " ",
                    alone->translations[0].hypotheses[0].text);
  }
  EXPECT_EQ(reply->translations[0].hypotheses[0].text, expected);
}

// API keys: none or an unknown one is UNAUTHENTICATED before anything else is looked at; a
// request over the key's limit is RESOURCE_EXHAUSTED.
TEST_F(CoreLimitsTest, ApiKeysAreRequiredAndCharged) {
  const testing::TempDir dir;
  dir.Write("keys", testing::AliceKeysFile("requests_per_minute=1"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ApiKeyAuthenticator> keys,
                       ApiKeyAuthenticator::Start(dir.File("keys"), absl::Hours(1), nullptr));
  std::unique_ptr<Core> core = Serve(LowLimits());
  core->core().RequireApiKeys(keys.get());
  TranslationRequest request = Request({"A dog runs."}, {}, "no-such-model");
  ExpectError(core->Translate(request), absl::StatusCode::kUnauthenticated);
  request.api_key = "mallory-key";
  ExpectError(core->Translate(request), absl::StatusCode::kUnauthenticated);
  request.api_key = "alice-key";
  ExpectError(core->Translate(request), absl::StatusCode::kNotFound);  // Not charged.
  request.model = "";
  ASSERT_TRUE(core->Translate(request).ok());
  ExpectError(core->Translate(request), absl::StatusCode::kResourceExhausted);
}

// A marked-up text is charged the characters it translates, not its markup: of a key's 20
// characters a day, an HTML text of 40 bytes whose text is "A dog runs." (11) takes 11, so the
// next one is over the day's characters.
TEST_F(CoreLimitsTest, MarkedUpTextIsChargedItsTextNotItsMarkup) {
  const testing::TempDir dir;
  dir.Write("keys", testing::AliceKeysFile("characters_per_day=20"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ApiKeyAuthenticator> keys,
                       ApiKeyAuthenticator::Start(dir.File("keys"), absl::Hours(1), nullptr));
  std::unique_ptr<Core> core = Serve(LowLimits());
  core->core().RequireApiKeys(keys.get());
  RequestedOptions html;
  html.format = RequestedOptions::kHtml;
  TranslationRequest request = Request({"<p class=\"lead\"><b>A dog</b> runs.</p>"}, html);
  request.api_key = "alice-key";
  ASSERT_TRUE(core->Translate(request).ok());
  ExpectError(core->Translate(request), absl::StatusCode::kResourceExhausted, {"characters"});
}

// Over the fake engine: the test chooses when decoding moves on.
class CoreFakeEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(model_, testing::TestModel()); }

  std::unique_ptr<Core> Serve(const BatchingOptions& batching) {
    auto core = std::make_unique<Core>(model_, RequestLimits(), batching, [this] {
      return std::make_unique<testing::FakeEngine>(log_);
    });
    core->StartServing();
    return core;
  }

  std::shared_ptr<const Model> model_;
  testing::EngineLog log_;  // Outlives the cores.
};

// A text queued behind the only worker's decode whose deadline passes there is answered
// DEADLINE_EXCEEDED without being computed.
TEST_F(CoreFakeEngineTest, DeadlineWhileQueued) {
  absl::Notification decoding, go_on;
  log_.SetStepHook([&](int step) {
    if (step != 1) return;
    decoding.Notify();
    go_on.WaitForNotification();
  });
  std::unique_ptr<Core> core = Serve(BatchingOptions());  // One worker.
  absl::StatusOr<TranslationReply> first, late;
  absl::Notification first_done, late_done;
  core->core().Translate(Request({"A dog runs."}), std::make_shared<TranslationCore::Call>(),
                         [&](absl::StatusOr<TranslationReply> reply) {
                           first = std::move(reply);
                           first_done.Notify();
                         });
  decoding.WaitForNotification();  // The worker holds at the first request's first step.
  TranslationRequest request = Request({"A cat sleeps."});
  request.deadline = absl::Now() + absl::Milliseconds(200);
  const absl::Time deadline = request.deadline;
  core->core().Translate(std::move(request), std::make_shared<TranslationCore::Call>(),
                         [&](absl::StatusOr<TranslationReply> reply) {
                           late = std::move(reply);
                           late_done.Notify();
                         });
  // It waits in the scheduler (unless the core saw its deadline pass first), then the deadline
  // passes.
  while (core->scheduler().pending_texts() != 1 && !late_done.HasBeenNotified()) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  while (absl::Now() <= deadline) absl::SleepFor(absl::Milliseconds(1));
  go_on.Notify();
  late_done.WaitForNotification();
  ExpectError(late, absl::StatusCode::kDeadlineExceeded);
  first_done.WaitForNotification();
  ASSERT_TRUE(first.ok()) << first.status();
  // The engine only ever got the first request's sentence.
  EXPECT_EQ(log_.groups().size(), 1u);
  // Nothing is left in flight (the core counts a request out once its answer has been given).
  EXPECT_TRUE(core->drain().WaitUntilIdle(absl::Now() + absl::Seconds(60)));
}

// A request cancelled before its texts are split, or while they decode, is answered CANCELLED.
TEST_F(CoreFakeEngineTest, CancellationBeforeAndDuringDecoding) {
  auto call = std::make_shared<TranslationCore::Call>();
  log_.SetStepHook([call](int step) {
    if (step == 1) call->Cancel();
  });
  std::unique_ptr<Core> core = Serve(BatchingOptions());
  auto early = std::make_shared<TranslationCore::Call>();
  early->Cancel();
  ExpectError(core->Translate(Request({"A dog runs."}), early), absl::StatusCode::kCancelled);
  EXPECT_EQ(log_.decodes(), 0);

  ExpectError(core->Translate(Request({"A dog runs."}), call), absl::StatusCode::kCancelled);
  EXPECT_EQ(log_.decodes(), 1);
}

// Once the gate drains, new requests get UNAVAILABLE; one in flight finishes, and the gate
// waits for it.
TEST_F(CoreFakeEngineTest, DrainingRefusesNewRequestsAndWaitsForThoseInFlight) {
  absl::Notification decoding, go_on;
  log_.SetStepHook([&](int step) {
    if (step != 1) return;
    decoding.Notify();
    go_on.WaitForNotification();
  });
  std::unique_ptr<Core> core = Serve(BatchingOptions());
  absl::Notification answered;
  absl::StatusOr<TranslationReply> first;
  core->core().Translate(Request({"A dog runs."}), std::make_shared<TranslationCore::Call>(),
                         [&](absl::StatusOr<TranslationReply> reply) {
                           first = std::move(reply);
                           answered.Notify();
                         });
  decoding.WaitForNotification();
  core->drain().StartDraining();
  ExpectError(core->Translate(Request({"A cat sleeps."})), absl::StatusCode::kUnavailable,
              {"the server is shutting down"});
  EXPECT_FALSE(core->drain().WaitUntilIdle(absl::Now()));
  go_on.Notify();
  answered.WaitForNotification();
  EXPECT_TRUE(core->drain().WaitUntilIdle(absl::Now() + absl::Seconds(60)));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->translations.size(), 1u);
  EXPECT_THAT(first->translations[0].hypotheses[0].text, HasSubstr("text of "));
}

// A document of 5,000 sentences (five times the queue's bound) is translated, and a request of
// one sentence sent while it is decoding is answered before it: requests take turns.
TEST_F(CoreFakeEngineTest, AShortRequestIsAnsweredBeforeADocumentSentBeforeIt) {
  absl::Notification decoding, go_on;
  log_.SetStepHook([&](int step) {
    if (step != 1) return;
    decoding.Notify();
    go_on.WaitForNotification();
  });
  BatchingOptions batching;
  batching.max_queued_texts = 1000;
  std::unique_ptr<Core> core = Serve(batching);
  constexpr int kSentences = 5000;
  std::string document;
  for (int i = 0; i < kSentences; ++i) absl::StrAppend(&document, i > 0 ? " " : "", "A dog runs.");

  absl::Mutex mutex;
  std::vector<std::string> answered;  // In the order the answers came.
  absl::StatusOr<TranslationReply> document_reply, short_reply;
  absl::Notification document_done, short_done;
  auto record = [&](const std::string& name, absl::StatusOr<TranslationReply>& into,
                    absl::Notification& done) {
    return [&, name](absl::StatusOr<TranslationReply> reply) {
      {
        absl::MutexLock lock(&mutex);
        answered.push_back(name);
      }
      into = std::move(reply);
      done.Notify();
    };
  };
  core->core().Translate(Request({document}), std::make_shared<TranslationCore::Call>(),
                         record("document", document_reply, document_done));
  decoding.WaitForNotification();  // The document's first decode is at its first step.
  const int pending = core->scheduler().pending_texts();
  EXPECT_GT(pending, 0);
  core->core().Translate(Request({"A cat sleeps."}), std::make_shared<TranslationCore::Call>(),
                         record("short", short_reply, short_done));
  // The document holds at its first step until the short request is in the scheduler.
  while (core->scheduler().pending_texts() != pending + 1) absl::SleepFor(absl::Milliseconds(1));
  go_on.Notify();
  short_done.WaitForNotification();
  document_done.WaitForNotification();

  EXPECT_THAT(answered, ::testing::ElementsAre("short", "document"));
  ASSERT_TRUE(short_reply.ok()) << short_reply.status();
  ASSERT_TRUE(document_reply.ok()) << document_reply.status();
  ASSERT_EQ(document_reply->translations.size(), 1u);
  const TextTranslation& translation = document_reply->translations[0];
  EXPECT_EQ(translation.sentences.size(), static_cast<size_t>(kSentences));
  ASSERT_EQ(translation.hypotheses.size(), 1u);
  EXPECT_EQ(translation.hypothesis_sentences[0].size(), static_cast<size_t>(kSentences));
}

}  // namespace
}  // namespace mtserve
