#include "serving/state/job_id.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace mtserve {

absl::StatusOr<std::string> NewJobId() {
  unsigned char bytes[kJobIdSelectorBytes + kJobIdSecretBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("cannot draw a job id: OpenSSL's RAND_bytes failed");
  }
  // WebSafeBase64Escape writes no padding: 24 bytes are 32 characters.
  return absl::WebSafeBase64Escape(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

std::optional<JobIdParts> SplitJobId(absl::string_view id) {
  if (id.size() != kJobIdChars) return std::nullopt;
  std::string bytes;
  if (!absl::WebSafeBase64Unescape(id, &bytes)) return std::nullopt;
  if (bytes.size() != kJobIdSelectorBytes + kJobIdSecretBytes) return std::nullopt;
  // Base64 has one spelling of 24 bytes in 32 characters (no unused bits), but the decoder
  // also takes '=' and the other alphabet's characters: only the canonical spelling names a
  // job, so that one job has one id.
  if (absl::WebSafeBase64Escape(bytes) != id) return std::nullopt;
  return JobIdParts{bytes.substr(0, kJobIdSelectorBytes), bytes.substr(kJobIdSelectorBytes)};
}

bool JobSecretsEqual(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace mtserve
