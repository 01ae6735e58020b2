// The API keys file (--api_keys_file): who may call the server, and how much. One key a line:
//
//   # NAME  SHA-256 of the key     [requests_per_minute=N] [characters_per_day=N] [admin=true]
//   alice   sha256:9f86d081884c7d65...(64 hex digits)   requests_per_minute=60
//   batch   sha256:60303ae22b998861...  characters_per_day=1000000
//   ops     sha256:2c26b46b68ffc68f...  admin=true
//
// admin=true (or admin=false, the default) marks a key that may make the operators' calls
// (LoadModel, UnloadModel: docs/operations.md, "Admin keys") besides the others.
//
// The file holds hashes, never keys (printf %s "$KEY" | sha256sum); blank lines and lines
// starting with # are skipped. Keys must be random (openssl rand -hex 32): an unsalted hash
// protects nothing else. Names label the metrics, so they are short and from a small alphabet.
// This file parses the text only (ParseApiKeys, the fuzzing entry point); FileReloader reads it.
#ifndef MTSERVE_SERVING_AUTH_API_KEYS_H_
#define MTSERVE_SERVING_AUTH_API_KEYS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

inline constexpr int kMaxApiKeys = 1000;  // Bounds the metrics' key label too.
inline constexpr int kMaxApiKeyNameBytes = 64;

using Sha256 = std::array<unsigned char, 32>;

struct ApiKey {
  std::string name;                            // [A-Za-z0-9._-]{1,64}, unique in the file.
  Sha256 sha256;                               // Of the key's bytes.
  std::optional<int64_t> requests_per_minute;  // No limit when absent.
  std::optional<int64_t> characters_per_day;   // Unicode characters of the texts; UTC days.
  bool admin = false;                          // May make the operators' calls.
};

class ApiKeys {
 public:
  explicit ApiKeys(std::vector<ApiKey> keys) : keys_(std::move(keys)) {}

  const std::vector<ApiKey>& keys() const { return keys_; }
  // The entry of `key`, or none. Every entry's hash is compared in full, in constant time, so
  // the time taken says nothing about which entry matched or how much of a hash did.
  const ApiKey* Find(absl::string_view key) const;

 private:
  std::vector<ApiKey> keys_;
};

// The entries of a keys file's text: InvalidArgument naming the line and what is wrong with it
// (an unknown field, a hash that is not 64 hex digits, a duplicate name or hash, a limit that is
// not a positive integer, admin neither true nor false, a field given twice, more than
// kMaxApiKeys keys). Never echoes a hash back.
absl::StatusOr<ApiKeys> ParseApiKeys(absl::string_view text);

Sha256 Sha256Of(absl::string_view bytes);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_AUTH_API_KEYS_H_
