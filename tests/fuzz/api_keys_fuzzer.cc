// The API keys file's bytes through ParseApiKeys, what the server runs on each version of
// --api_keys_file: any bytes give keys with valid names, distinct names and hashes, positive
// limits and at most kMaxApiKeys entries, or an
// InvalidArgument.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "serving/auth/api_keys.h"
#include "tests/test_lib/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<mtserve::ApiKeys> keys =
      mtserve::ParseApiKeys(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!keys.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(keys.status()));
    return 0;
  }
  FUZZ_CHECK(keys->keys().size() <= static_cast<size_t>(mtserve::kMaxApiKeys));
  std::set<std::string> names;
  std::set<mtserve::Sha256> hashes;
  for (const mtserve::ApiKey& key : keys->keys()) {
    FUZZ_CHECK(!key.name.empty() && key.name.size() <= mtserve::kMaxApiKeyNameBytes);
    for (const char c : key.name) {
      FUZZ_CHECK(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                 c == '-');
    }
    FUZZ_CHECK(names.insert(key.name).second && hashes.insert(key.sha256).second);
    FUZZ_CHECK(!key.requests_per_minute || *key.requests_per_minute > 0);
    FUZZ_CHECK(!key.characters_per_day || *key.characters_per_day > 0);
  }
  // A key nobody listed is not found (its hash is that of the empty key unless listed).
  const mtserve::ApiKey* found = keys->Find("");
  FUZZ_CHECK(found == nullptr || found->sha256 == mtserve::Sha256Of(""));
  return 0;
}
