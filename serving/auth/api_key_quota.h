// What each API key has used of its limits (api_keys.h), with time passed in (tests use their
// own clock):
// - requests_per_minute is a token bucket holding at most a minute's requests and refilled
//   continuously (limit / 60 a second): a key may burst its whole minute, then goes at the rate;
// - characters_per_day counts Unicode characters in fixed UTC days (reset at 00:00 UTC).
// Usage is kept by key name in a QuotaStore (serving/state/quota_store.h), so re-reading the keys
// file (new limits, a new key) keeps it, and replicas sharing a store share it.
#ifndef MTSERVE_SERVING_AUTH_API_KEY_QUOTA_H_
#define MTSERVE_SERVING_AUTH_API_KEY_QUOTA_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "serving/auth/api_keys.h"
#include "serving/state/quota_store.h"

namespace mtserve {

// What a key has used of its characters today (UTC), and its daily limit (none: no limit).
struct CharacterUsage {
  int64_t characters_today = 0;
  std::optional<int64_t> characters_per_day;
};

class ApiKeyQuota {
 public:
  // Usage kept in the process (LocalQuotaStore).
  ApiKeyQuota();
  // Usage kept in `store`, which outlives this.
  explicit ApiKeyQuota(QuotaStore* store) : store_(store) {}

  // Charges `requests` (0 or more) and `characters` to `key` at `now` when both fit its limits,
  // else charges nothing and returns RESOURCE_EXHAUSTED naming the limit and when to retry
  // (RetryAfter gives it), or INVALID_ARGUMENT for more characters than a whole day allows.
  absl::Status Charge(const ApiKey& key, int64_t requests, int64_t characters, absl::Time now);
  // What `key` has used of its characters on `now`'s day, charging nothing.
  CharacterUsage Characters(const ApiKey& key, absl::Time now) const;

 private:
  std::unique_ptr<QuotaStore> own_store_;
  QuotaStore* store_;
};

// When to retry after `status` from Charge (rounded up to whole seconds); zero when it says none.
absl::Duration RetryAfter(const absl::Status& status);

// Whether `status` from Charge is over the key's characters_per_day (rather than its
// requests_per_minute): DeepL's API answers it 456.
bool IsCharacterQuotaExhausted(const absl::Status& status);

// Unicode characters in UTF-8 `text` (bytes that do not start a sequence are not counted).
int64_t CountCharacters(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_AUTH_API_KEY_QUOTA_H_
