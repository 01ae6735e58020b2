#include "serving/auth/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/excerpt.h"

namespace mtserve {
namespace {

constexpr absl::string_view kHashPrefix = "sha256:";
// Over a year of requests at a million a second: large enough for any real limit, and small
// enough that sums of it never overflow.
constexpr int64_t kMaxLimit = int64_t{1} << 50;

bool IsNameCharacter(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

std::optional<Sha256> ParseHash(absl::string_view hex) {
  if (hex.size() != 2 * Sha256().size()) return std::nullopt;
  Sha256 hash;
  for (size_t i = 0; i < hash.size(); ++i) {
    int byte = 0;
    for (char c : hex.substr(2 * i, 2)) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      const int digit = absl::ascii_isdigit(static_cast<unsigned char>(c))
                            ? c - '0'
                            : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      byte = byte * 16 + digit;
    }
    hash[i] = static_cast<unsigned char>(byte);
  }
  return hash;
}

}  // namespace

Sha256 Sha256Of(absl::string_view bytes) {
  Sha256 hash;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), hash.data());
  return hash;
}

const ApiKey* ApiKeys::Find(absl::string_view key) const {
  const Sha256 hash = Sha256Of(key);
  const ApiKey* found = nullptr;
  for (const ApiKey& entry : keys_) {
    // No early exit: every entry costs the same whether or not it matches.
    const bool match = CRYPTO_memcmp(entry.sha256.data(), hash.data(), hash.size()) == 0;
    found = match ? &entry : found;
  }
  return found;
}

absl::StatusOr<ApiKeys> ParseApiKeys(absl::string_view text) {
  std::vector<ApiKey> keys;
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<std::string> hashes;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", what));
    };
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 2) {
      return error(
          "a key is NAME sha256:HEX [requests_per_minute=N] [characters_per_day=N] "
          "[admin=true]");
    }
    ApiKey key;
    const absl::string_view name = fields[0];
    if (name.size() > static_cast<size_t>(kMaxApiKeyNameBytes) ||
        !std::all_of(name.begin(), name.end(), IsNameCharacter)) {
      return error(absl::StrCat("the name \"", Excerpt(name, 70), "\" is not 1 to ",
                                kMaxApiKeyNameBytes, " of A-Z a-z 0-9 . _ -"));
    }
    key.name = std::string(name);
    if (!names.insert(key.name).second) {
      return error(absl::StrCat("the name \"", key.name, "\" is given twice"));
    }
    absl::string_view hex = fields[1];
    std::optional<Sha256> hash;
    if (absl::ConsumePrefix(&hex, kHashPrefix)) hash = ParseHash(hex);
    if (!hash.has_value()) {
      return error(absl::StrCat("the key of \"", key.name,
                                "\" is not sha256: and 64 hex digits (the SHA-256 of the key, "
                                "never the key itself)"));
    }
    key.sha256 = *hash;
    if (!hashes.insert(std::string(hash->begin(), hash->end())).second) {
      return error(absl::StrCat("the key of \"", key.name, "\" is another name's key too"));
    }
    bool admin_given = false;
    for (size_t i = 2; i < fields.size(); ++i) {
      const std::pair<absl::string_view, absl::string_view> field =
          absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
      if (field.first == "admin") {
        if (admin_given) return error("admin is given twice");
        admin_given = true;
        if (field.second != "true" && field.second != "false") {
          return error(absl::StrCat("admin is \"", Excerpt(field.second, 30),
                                    "\"; it must be true or false"));
        }
        key.admin = field.second == "true";
        continue;
      }
      std::optional<int64_t>* limit = nullptr;
      if (field.first == "requests_per_minute") limit = &key.requests_per_minute;
      if (field.first == "characters_per_day") limit = &key.characters_per_day;
      if (limit == nullptr) {
        return error(absl::StrCat("unknown field \"", Excerpt(fields[i], 70),
                                  "\"; the fields are requests_per_minute=N, "
                                  "characters_per_day=N and admin=true"));
      }
      if (limit->has_value()) {
        return error(absl::StrCat(field.first, " is given twice"));
      }
      int64_t value = 0;
      if (!absl::SimpleAtoi(field.second, &value) || value < 1 || value > kMaxLimit) {
        return error(absl::StrCat(field.first, " is \"", Excerpt(field.second, 30),
                                  "\"; it must be a whole number from 1 to ", kMaxLimit));
      }
      *limit = value;
    }
    if (keys.size() == kMaxApiKeys) {
      return error(absl::StrCat("more than ", kMaxApiKeys, " keys"));
    }
    keys.push_back(std::move(key));
  }
  return ApiKeys(std::move(keys));
}

}  // namespace mtserve
