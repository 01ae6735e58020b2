// frontends/deepl/deepl_api: DeepL's answers (glossaries, documents, usage) and error statuses.
#include "frontends/deepl/deepl_api.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "serving/auth/api_keys.h"

namespace mtserve {
namespace {

using Json = nlohmann::json;

DeepLGlossaryRequest GlossaryRequest(std::string entries, bool csv = false) {
  DeepLGlossaryRequest request;
  request.name = "bikes";
  request.source_language = "en";
  request.target_language = "de";
  request.entries = std::move(entries);
  request.csv = csv;
  return request;
}

TEST(DeepLGlossaryTest, EntriesAreParsedInTheirFormat) {
  absl::StatusOr<Glossary> tsv = DeepLGlossaryOf(GlossaryRequest("bike\tVelo\n\nman\tHerr\n"), {});
  ASSERT_TRUE(tsv.ok()) << tsv.status();
  ASSERT_EQ(tsv->entries.size(), 2u);
  EXPECT_EQ(tsv->entries[0].source, "bike");
  EXPECT_EQ(tsv->entries[0].targets, std::vector<std::string>{"Velo"});
  EXPECT_EQ(tsv->info.entry_count, 2);
  EXPECT_EQ(tsv->info.name, "bikes");
  absl::StatusOr<Glossary> csv =
      DeepLGlossaryOf(GlossaryRequest("\"the bike\",Velo,en,de\r\n", /*csv=*/true), {});
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->entries[0].source, "the bike");
}

TEST(DeepLGlossaryTest, ASourceListedTwiceIsRefusedAsDeepLRefusesIt) {
  const absl::Status different =
      DeepLGlossaryOf(GlossaryRequest("bike\tVelo\nbike\tRad"), {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(different));
  EXPECT_TRUE(absl::StrContains(different.message(), "\"bike\" more than once")) << different;
  const absl::Status same = DeepLGlossaryOf(GlossaryRequest("bike\tVelo\nbike\tVelo"), {}).status();
  EXPECT_TRUE(absl::StrContains(same.message(), "more than once")) << same;
  EXPECT_TRUE(absl::IsInvalidArgument(DeepLGlossaryOf(GlossaryRequest("bike"), {}).status()));
}

TEST(DeepLGlossaryTest, InfoInDeepLsShape) {
  GlossaryInfo info;
  info.id = "g-1";
  info.name = "bikes";
  info.source_language = "en";
  info.target_language = "de";
  info.entry_count = 2;
  info.created = absl::FromUnixMillis(1795392000123);  // 2026-11-23 00:00:00.123 UTC.
  EXPECT_EQ(Json::parse(DeepLGlossaryJson(info)),
            Json({{"glossary_id", "g-1"},
                  {"name", "bikes"},
                  {"ready", true},
                  {"source_lang", "en"},
                  {"target_lang", "de"},
                  {"creation_time", "2026-11-23T00:00:00.123Z"},
                  {"entry_count", 2}}));
  EXPECT_EQ(Json::parse(DeepLGlossaryListJson({info}))["glossaries"].size(), 1u);
}

TEST(DeepLDocumentTest, TheIdAndKeyAreTheJobsIdInTwoHalves) {
  const std::string job = "0123456789abcdefGHIJKLMNOPQRSTUV";
  const Json answer = Json::parse(DeepLDocumentAnswer(job));
  EXPECT_EQ(answer,
            Json({{"document_id", "0123456789abcdef"}, {"document_key", "GHIJKLMNOPQRSTUV"}}));
  EXPECT_EQ(DeepLJobId(answer["document_id"].get<std::string>(),
                       answer["document_key"].get<std::string>()),
            job);
}

TEST(DeepLDocumentTest, StatesAsDeepLNamesThem) {
  JobRecord record;
  record.state = JobState::kQueued;
  EXPECT_EQ(Json::parse(DeepLDocumentStatus("d", record)),
            Json({{"document_id", "d"}, {"status", "queued"}}));
  record.state = JobState::kRunning;
  EXPECT_EQ(Json::parse(DeepLDocumentStatus("d", record))["status"], "translating");
  record.state = JobState::kDone;
  EXPECT_EQ(Json::parse(DeepLDocumentStatus("d", record))["status"], "done");
  record.state = JobState::kFailed;
  record.error = absl::InvalidArgumentError("file: not UTF-8");
  EXPECT_EQ(
      Json::parse(DeepLDocumentStatus("d", record)),
      Json({{"document_id", "d"}, {"status", "error"}, {"error_message", "file: not UTF-8"}}));
}

TEST(DeepLUsageTest, TheKeysLimitOrDeepLsUnlimited) {
  EXPECT_EQ(Json::parse(DeepLUsageAnswer({12, 40})),
            Json({{"character_count", 12}, {"character_limit", 40}}));
  EXPECT_EQ(Json::parse(DeepLUsageAnswer({0, std::nullopt}))["character_limit"], 1000000000000);
}

TEST(DeepLErrorTest, StatusesAsDeepLAnswersThem) {
  EXPECT_EQ(DeepLHttpStatus(absl::InvalidArgumentError("x")), 400);
  EXPECT_EQ(DeepLHttpStatus(absl::FailedPreconditionError("x")), 400);
  EXPECT_EQ(DeepLHttpStatus(absl::UnauthenticatedError("x")), 403);
  EXPECT_EQ(DeepLHttpStatus(absl::PermissionDeniedError("x")), 403);
  EXPECT_EQ(DeepLHttpStatus(absl::NotFoundError("x")), 404);
  EXPECT_EQ(DeepLHttpStatus(absl::ResourceExhaustedError("queue full")), 429);
  EXPECT_EQ(DeepLHttpStatus(absl::UnavailableError("x")), 503);
  EXPECT_EQ(DeepLHttpStatus(absl::DeadlineExceededError("x")), 504);
  // Over a key's characters_per_day: 456, DeepL's "quota exceeded".
  ApiKeyQuota quota;
  ApiKey key;
  key.name = std::string("k");  // Not the literal: GCC 12's false -Wrestrict, bug 105329.
  key.characters_per_day = 5;
  const absl::Time now = absl::FromUnixSeconds(1795392000);
  ASSERT_TRUE(quota.Charge(key, 1, 5, now).ok());
  EXPECT_EQ(DeepLHttpStatus(quota.Charge(key, 1, 1, now)), 456);
  EXPECT_EQ(Json::parse(DeepLErrorJson(absl::NotFoundError("no glossary g"))),
            Json({{"message", "no glossary g"}}));
}

}  // namespace
}  // namespace mtserve
