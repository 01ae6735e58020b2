// The API keys file's parser, the key lookup, and the quota arithmetic with an explicit clock.
#include "serving/auth/api_keys.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "serving/auth/api_key_auth.h"
#include "serving/auth/api_key_quota.h"
#include "serving/state/local_quota_store.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

// SHA-256 of "alice-key" (printf %s alice-key | sha256sum): lookups are checked against an
// independent tool's hash.
constexpr char kAliceHash[] = "72ee9d4355ccb9d3a4c9dbf37382e38e75c1b1a225b5bd1f729ee91bbda30c20";

std::string HashLine(const std::string& name, const std::string& key,
                     const std::string& limits = "") {
  std::string hex;
  for (unsigned char byte : Sha256Of(key)) absl::StrAppend(&hex, absl::Hex(byte, absl::kZeroPad2));
  return absl::StrCat(name, " sha256:", hex, limits.empty() ? "" : " ", limits, "\n");
}

TEST(ApiKeysTest, Sha256MatchesTheStandardTestVector) {
  // FIPS 180-2's "abc".
  std::string hex;
  for (unsigned char byte : Sha256Of("abc"))
    absl::StrAppend(&hex, absl::Hex(byte, absl::kZeroPad2));
  EXPECT_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ApiKeysTest, ParsesKeysLimitsCommentsAndFindsKeysByTheirHash) {
  const std::string text =
      "# comment\n\n" + HashLine("alice", "alice-key", "requests_per_minute=60") + "  " +
      HashLine("bob.2_x-y", "bob-key", "characters_per_day=1000 requests_per_minute=5") +
      HashLine("carol", "carol-key");
  ASSERT_OK_AND_ASSIGN(const ApiKeys keys, ParseApiKeys(text));
  ASSERT_EQ(keys.keys().size(), 3u);
  EXPECT_EQ(keys.keys()[0].requests_per_minute, 60);
  EXPECT_EQ(keys.keys()[0].characters_per_day, std::nullopt);
  EXPECT_EQ(keys.keys()[1].name, "bob.2_x-y");
  EXPECT_EQ(keys.keys()[1].characters_per_day, 1000);
  EXPECT_EQ(keys.keys()[1].requests_per_minute, 5);
  EXPECT_EQ(keys.keys()[2].requests_per_minute, std::nullopt);
  ASSERT_NE(keys.Find("bob-key"), nullptr);
  EXPECT_EQ(keys.Find("bob-key")->name, "bob.2_x-y");
  EXPECT_EQ(keys.Find("carol-key")->name, "carol");
  EXPECT_EQ(keys.Find("carol-key "), nullptr);
  EXPECT_EQ(keys.Find(""), nullptr);
}

TEST(ApiKeysTest, OnlyKeysMarkedAdminAreAdmin) {
  const std::string text = HashLine("ops", "ops-key", "admin=true") +
                           HashLine("limited-ops", "l-key", "requests_per_minute=5 admin=true") +
                           HashLine("user", "user-key") + HashLine("off", "off-key", "admin=false");
  ASSERT_OK_AND_ASSIGN(const ApiKeys keys, ParseApiKeys(text));
  ASSERT_EQ(keys.keys().size(), 4u);
  EXPECT_TRUE(keys.Find("ops-key")->admin);
  EXPECT_TRUE(keys.Find("l-key")->admin);
  EXPECT_EQ(keys.Find("l-key")->requests_per_minute, 5);
  EXPECT_FALSE(keys.Find("user-key")->admin);
  EXPECT_FALSE(keys.Find("off-key")->admin);
}

TEST(ApiKeysTest, HashesFromSha256sumFindTheirKeysInEitherCase) {
  ASSERT_OK_AND_ASSIGN(const ApiKeys lower,
                       ParseApiKeys(absl::StrCat("alice sha256:", kAliceHash)));
  ASSERT_NE(lower.Find("alice-key"), nullptr);
  EXPECT_EQ(lower.Find("alice-key")->name, "alice");
  EXPECT_EQ(lower.Find("alice-kez"), nullptr);
  ASSERT_OK_AND_ASSIGN(
      const ApiKeys upper,
      ParseApiKeys(absl::StrCat("alice sha256:", absl::AsciiStrToUpper(kAliceHash))));
  EXPECT_NE(upper.Find("alice-key"), nullptr);
}

TEST(ApiKeysTest, AnEmptyFileHasNoKeys) {
  ASSERT_OK_AND_ASSIGN(const ApiKeys keys, ParseApiKeys("# no keys yet\n"));
  EXPECT_TRUE(keys.keys().empty());
  EXPECT_EQ(keys.Find("anything"), nullptr);
}

TEST(ApiKeysTest, BadLinesAreRefusedNamingTheLineAndTheProblem) {
  const std::string good = HashLine("alice", "alice-key");
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"alice\n", "line 1: a key is NAME sha256:HEX"},
      {"# c\nalice 5d3ab0\n", "line 2: the key of \"alice\" is not sha256: and 64 hex digits"},
      {absl::StrCat("alice ", kAliceHash, "\n"), "is not sha256:"},  // No prefix: a raw key?
      {absl::StrCat("alice sha256:", std::string(63, 'a'), "g\n"), "is not sha256:"},
      {good + good, "line 2: the name \"alice\" is given twice"},
      {good + HashLine("bob", "alice-key"), "line 2: the key of \"bob\" is another name's key"},
      {HashLine("al ice", "k"), "line 1: the key of \"al\" is not sha256:"},
      {HashLine("al/ice", "k"), "the name \"al/ice\" is not 1 to 64 of"},
      {HashLine(std::string(65, 'a'), "k"), "is not 1 to 64 of"},
      {HashLine("a", "k", "requests_per_minute=0"), "requests_per_minute is \"0\"; it must be"},
      {HashLine("a", "k", "requests_per_minute=-1"), "it must be a whole number"},
      {HashLine("a", "k", "characters_per_day=1.5"), "characters_per_day is \"1.5\""},
      {HashLine("a", "k", "characters_per_day=99999999999999999999"), "whole number from 1"},
      {HashLine("a", "k", "requests_per_minute"), "requests_per_minute is \"\""},
      {HashLine("a", "k", "rpm=5"), "unknown field \"rpm=5\""},
      {HashLine("a", "k", "requests_per_minute=1 requests_per_minute=2"), "given twice"},
      {"# c\n" + HashLine("a", "k", "admin=yes"),
       "line 2: admin is \"yes\"; it must be true or false"},
      {HashLine("a", "k", "admin"), "line 1: admin is \"\"; it must be true or false"},
      {HashLine("a", "k", "admin=TRUE"), "admin is \"TRUE\""},
      {HashLine("a", "k", "admin=true admin=false"), "line 1: admin is given twice"},
      {HashLine("a", "k", "Admin=true"), "unknown field \"Admin=true\""},
  };
  for (const auto& c : cases) {
    const absl::StatusOr<ApiKeys> keys = ParseApiKeys(c.text);
    ASSERT_FALSE(keys.ok()) << c.text;
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(keys.status().message(), c.message))
        << keys.status() << "\nexpected: " << c.message;
  }
}

TEST(ApiKeysTest, MoreThanTheLimitOfKeysIsRefused) {
  std::string text;
  for (int i = 0; i <= kMaxApiKeys; ++i) {
    text += HashLine(absl::StrCat("k", i), absl::StrCat("key", i));
  }
  const absl::StatusOr<ApiKeys> keys = ParseApiKeys(text);
  ASSERT_FALSE(keys.ok());
  EXPECT_TRUE(absl::StrContains(
      keys.status().message(), absl::StrCat("line ", kMaxApiKeys + 1, ": more than ", kMaxApiKeys)))
      << keys.status();
}

TEST(ApiKeysTest, PresentedKeyComesFromBearerOrXApiKey) {
  EXPECT_EQ(PresentedApiKey("Bearer abc", std::nullopt), "abc");
  EXPECT_EQ(PresentedApiKey("bearer  abc ", "other"), "abc");
  EXPECT_EQ(PresentedApiKey(std::nullopt, "xyz"), "xyz");
  EXPECT_EQ(PresentedApiKey("Basic dXNlcjpwYXNz", "xyz"), "xyz");
  EXPECT_EQ(PresentedApiKey("Basic dXNlcjpwYXNz", std::nullopt), std::nullopt);
  EXPECT_EQ(PresentedApiKey("Bearer ", std::nullopt), std::nullopt);
  EXPECT_EQ(PresentedApiKey(std::nullopt, "  "), std::nullopt);
  EXPECT_EQ(PresentedApiKey(std::nullopt, std::nullopt), std::nullopt);
}

ApiKey KeyWith(std::optional<int64_t> requests_per_minute,
               std::optional<int64_t> characters_per_day) {
  ApiKey key;
  key.name = std::string("k");  // Not the literal: GCC 12's false -Wrestrict, bug 105329.
  key.requests_per_minute = requests_per_minute;
  key.characters_per_day = characters_per_day;
  return key;
}

// Noon, 2026-11-23 UTC (midnight is 1795392000).
const absl::Time kNoon = absl::FromUnixSeconds(1795392000 + 12 * 3600);

TEST(ApiKeyQuotaTest, RequestsPerMinuteIsATokenBucket) {
  ApiKeyQuota quota;
  const ApiKey key = KeyWith(6, std::nullopt);  // A request every 10 s; bursts of 6.
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(quota.Charge(key, 1, 0, kNoon).ok()) << i;
  const absl::Status over = quota.Charge(key, 1, 0, kNoon);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(over.message(), "has used its 6 requests per minute")) << over;
  EXPECT_TRUE(absl::StrContains(over.message(), "retry in 10 s")) << over;
  EXPECT_EQ(RetryAfter(over), absl::Seconds(10));
  // 4 s later a token is 40 % back: 6 s to wait.
  EXPECT_EQ(RetryAfter(quota.Charge(key, 1, 0, kNoon + absl::Seconds(4))), absl::Seconds(6));
  EXPECT_TRUE(quota.Charge(key, 1, 0, kNoon + absl::Seconds(10)).ok());
  EXPECT_FALSE(quota.Charge(key, 1, 0, kNoon + absl::Seconds(10)).ok());
  // A long pause refills to the burst, no more.
  const absl::Time later = kNoon + absl::Hours(1);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(quota.Charge(key, 1, 0, later).ok()) << i;
  EXPECT_FALSE(quota.Charge(key, 1, 0, later).ok());
  // Zero requests (a stream's start) never counts.
  EXPECT_TRUE(quota.Charge(key, 0, 0, later).ok());
}

TEST(ApiKeyQuotaTest, CharactersPerDayResetAtMidnightUtc) {
  ApiKeyQuota quota;
  const ApiKey key = KeyWith(std::nullopt, 100);
  EXPECT_TRUE(quota.Charge(key, 1, 60, kNoon).ok());
  const absl::Status over = quota.Charge(key, 1, 41, kNoon);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(over.message(), "has used 60 of its 100 characters today (UTC)"))
      << over;
  EXPECT_EQ(RetryAfter(over), absl::Hours(12));  // Until midnight.
  EXPECT_TRUE(quota.Charge(key, 1, 40, kNoon).ok()) << "a refused request charges nothing";
  EXPECT_FALSE(quota.Charge(key, 1, 1, kNoon + absl::Hours(11)).ok());
  EXPECT_TRUE(quota.Charge(key, 1, 100, kNoon + absl::Hours(12)).ok()) << "a new day";
  // More than a whole day allows can never pass: no retry time.
  const absl::Status never = quota.Charge(key, 1, 101, kNoon + absl::Hours(36));
  EXPECT_EQ(never.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RetryAfter(never), absl::ZeroDuration());
}

TEST(ApiKeyQuotaTest, CharactersReadsTodaysUsageWithoutCharging) {
  ApiKeyQuota quota;
  const ApiKey key = KeyWith(std::nullopt, 100);
  EXPECT_EQ(quota.Characters(key, kNoon).characters_today, 0);
  EXPECT_EQ(quota.Characters(key, kNoon).characters_per_day, 100);
  ASSERT_TRUE(quota.Charge(key, 1, 60, kNoon).ok());
  EXPECT_EQ(quota.Characters(key, kNoon).characters_today, 60);
  EXPECT_EQ(quota.Characters(key, kNoon).characters_today, 60) << "reading charges nothing";
  EXPECT_EQ(quota.Characters(key, kNoon + absl::Hours(12)).characters_today, 0) << "a new day";
  EXPECT_EQ(quota.Characters(KeyWith(6, std::nullopt), kNoon).characters_per_day, std::nullopt);
}

TEST(ApiKeyQuotaTest, OnlyTheCharacterLimitIsMarkedAsIt) {
  ApiKeyQuota quota;
  const ApiKey words = KeyWith(std::nullopt, 10);
  ASSERT_TRUE(quota.Charge(words, 1, 10, kNoon).ok());
  const absl::Status characters = quota.Charge(words, 1, 1, kNoon);
  EXPECT_TRUE(absl::IsResourceExhausted(characters)) << characters;
  EXPECT_TRUE(IsCharacterQuotaExhausted(characters));
  const ApiKey paced = KeyWith(1, std::nullopt);
  ASSERT_TRUE(quota.Charge(paced, 1, 0, kNoon).ok());
  const absl::Status requests = quota.Charge(paced, 1, 0, kNoon);
  EXPECT_TRUE(absl::IsResourceExhausted(requests)) << requests;
  EXPECT_FALSE(IsCharacterQuotaExhausted(requests));
  EXPECT_FALSE(IsCharacterQuotaExhausted(absl::OkStatus()));
}

TEST(ApiKeyQuotaTest, ARequestRefusedByOneLimitChargesTheOtherNothing) {
  ApiKeyQuota quota;
  const ApiKey key = KeyWith(2, 10);
  EXPECT_TRUE(quota.Charge(key, 1, 10, kNoon).ok());
  EXPECT_FALSE(quota.Charge(key, 1, 1, kNoon).ok());  // Characters over: the request not charged.
  EXPECT_TRUE(quota.Charge(key, 1, 0, kNoon).ok());   // So the second request still fits.
  EXPECT_EQ(quota.Charge(key, 1, 0, kNoon).code(), absl::StatusCode::kResourceExhausted);
  // Keys without limits are never refused.
  EXPECT_TRUE(quota.Charge(KeyWith(std::nullopt, std::nullopt), 1000, 1 << 30, kNoon).ok());
}

TEST(ApiKeyQuotaTest, QuotasOverOneStoreShareUsage) {
  // As replicas sharing a store would: a key's burst spent through one is spent for the other.
  LocalQuotaStore store;
  ApiKeyQuota first(&store), second(&store), apart;
  const ApiKey key = KeyWith(2, std::nullopt);
  EXPECT_TRUE(first.Charge(key, 1, 0, kNoon).ok());
  EXPECT_TRUE(second.Charge(key, 1, 0, kNoon).ok());
  EXPECT_EQ(first.Charge(key, 1, 0, kNoon).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.Charge(key, 1, 0, kNoon).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(apart.Charge(key, 1, 0, kNoon).ok()) << "a quota of its own store";
}

TEST(LocalQuotaStoreTest, KeepsAChangeOnlyWhenItSucceeds) {
  LocalQuotaStore store;
  EXPECT_TRUE(store
                  .Update("k",
                          [](QuotaUsage& usage) {
                            EXPECT_EQ(usage.characters, 0) << "a new key starts from nothing";
                            usage.characters = 5;
                            return absl::OkStatus();
                          })
                  .ok());
  EXPECT_EQ(store
                .Update("k",
                        [](QuotaUsage& usage) {
                          usage.characters = 100;
                          return absl::ResourceExhaustedError("over");
                        })
                .code(),
            absl::StatusCode::kResourceExhausted);
  int64_t seen = -1;
  EXPECT_TRUE(store
                  .Update("k",
                          [&](QuotaUsage& usage) {
                            seen = usage.characters;
                            return absl::OkStatus();
                          })
                  .ok());
  EXPECT_EQ(seen, 5);
}

TEST(ApiKeyQuotaTest, CountsUnicodeCharacters) {
  EXPECT_EQ(CountCharacters(""), 0);
  EXPECT_EQ(CountCharacters("abc"), 3);
  EXPECT_EQ(CountCharacters("Fahrräder 🚲"), 11);
}

}  // namespace
}  // namespace mtserve
