// Job ids (serving/state/job_store.h): capabilities, so unguessable. An id is 24 bytes from
// OpenSSL's CSPRNG (RAND_bytes), written in URL-safe base64 without padding (32 characters): an
// 8-byte selector a store finds the job by (a map key, a file name), then a 16-byte (128-bit)
// secret it compares in constant time (CRYPTO_memcmp), so that neither a lookup's nor a
// comparison's timing tells anything of the secret.
#ifndef MTSERVE_SERVING_STATE_JOB_ID_H_
#define MTSERVE_SERVING_STATE_JOB_ID_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

inline constexpr size_t kJobIdSelectorBytes = 8;
inline constexpr size_t kJobIdSecretBytes = 16;
inline constexpr size_t kJobIdChars = 32;  // 24 bytes in base64.

struct JobIdParts {
  std::string selector;  // kJobIdSelectorBytes raw bytes.
  std::string secret;    // kJobIdSecretBytes raw bytes.
};

// A fresh id; INTERNAL if the CSPRNG fails (it does not once seeded from the system).
absl::StatusOr<std::string> NewJobId();

// The parts of `id`, or nullopt if it is not an id (wrong length or characters).
std::optional<JobIdParts> SplitJobId(absl::string_view id);

// Whether two secrets are equal, in time that depends only on their lengths.
bool JobSecretsEqual(absl::string_view a, absl::string_view b);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_JOB_ID_H_
