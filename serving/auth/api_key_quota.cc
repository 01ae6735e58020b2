#include "serving/auth/api_key_quota.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "serving/state/local_quota_store.h"

namespace mtserve {
namespace {

// The Status payload carrying the seconds to wait, for the front ends' Retry-After.
constexpr char kRetryAfterPayload[] = "type.mtserve.dev/retry-after-seconds";
// The payload marking a status over characters_per_day.
constexpr char kCharacterQuotaPayload[] = "type.mtserve.dev/characters-per-day";

// A UTC day's number: days since the epoch.
int64_t DayOf(absl::Time now) {
  return absl::ToUnixSeconds(now) / 86400 - (absl::ToUnixSeconds(now) % 86400 < 0 ? 1 : 0);
}

absl::Status Exhausted(absl::string_view message, absl::Duration wait) {
  const int64_t seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(wait, absl::Seconds(1))));
  absl::Status status =
      absl::ResourceExhaustedError(absl::StrCat(message, "; retry in ", seconds, " s"));
  status.SetPayload(kRetryAfterPayload, absl::Cord(absl::StrCat(seconds)));
  return status;
}

}  // namespace

ApiKeyQuota::ApiKeyQuota()
    : own_store_(std::make_unique<LocalQuotaStore>()), store_(own_store_.get()) {}

absl::Status ApiKeyQuota::Charge(const ApiKey& key, int64_t requests, int64_t characters,
                                 absl::Time now) {
  if (key.characters_per_day.has_value() && characters > *key.characters_per_day) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request has ", characters, " characters; the API key \"", key.name,
                     "\" may send ", *key.characters_per_day, " a day: send smaller requests"));
  }
  return store_->Update(key.name, [&](QuotaUsage& usage) -> absl::Status {
    // Requests: refill the bucket for the time since it was last looked at.
    if (key.requests_per_minute.has_value()) {
      const double capacity = static_cast<double>(*key.requests_per_minute);
      const double per_second = capacity / 60;
      const double elapsed = usage.refilled == absl::InfinitePast()
                                 ? 60.0
                                 : std::max(0.0, absl::ToDoubleSeconds(now - usage.refilled));
      usage.tokens = std::min(capacity, usage.tokens + elapsed * per_second);
      usage.refilled = now;
      if (usage.tokens < static_cast<double>(requests)) {
        return Exhausted(
            absl::StrCat("the API key \"", key.name, "\" has used its ", *key.requests_per_minute,
                         " requests per minute"),
            absl::Seconds((static_cast<double>(requests) - usage.tokens) / per_second));
      }
    }
    // Characters: a new UTC day starts from zero.
    const int64_t day = DayOf(now);
    if (day != usage.day) {
      usage.day = day;
      usage.characters = 0;
    }
    if (key.characters_per_day.has_value() &&
        usage.characters + characters > *key.characters_per_day) {
      absl::Status exhausted =
          Exhausted(absl::StrCat("the API key \"", key.name, "\" has used ", usage.characters,
                                 " of its ", *key.characters_per_day,
                                 " characters today (UTC), and the request has ", characters),
                    absl::FromUnixSeconds((day + 1) * 86400) - now);
      exhausted.SetPayload(kCharacterQuotaPayload, absl::Cord("1"));
      return exhausted;
    }
    if (key.requests_per_minute.has_value()) usage.tokens -= static_cast<double>(requests);
    usage.characters += characters;
    return absl::OkStatus();
  });
}

CharacterUsage ApiKeyQuota::Characters(const ApiKey& key, absl::Time now) const {
  CharacterUsage used;
  used.characters_per_day = key.characters_per_day;
  // A change that keeps the usage as it is: only read.
  store_
      ->Update(key.name,
               [&](QuotaUsage& usage) {
                 if (usage.day == DayOf(now)) used.characters_today = usage.characters;
                 return absl::OkStatus();
               })
      .IgnoreError();
  return used;
}

bool IsCharacterQuotaExhausted(const absl::Status& status) {
  return status.GetPayload(kCharacterQuotaPayload).has_value();
}

absl::Duration RetryAfter(const absl::Status& status) {
  const auto payload = status.GetPayload(kRetryAfterPayload);
  int64_t seconds = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &seconds)) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(seconds);
}

int64_t CountCharacters(absl::string_view text) {
  int64_t count = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;  // Not a continuation byte.
  }
  return count;
}

}  // namespace mtserve
