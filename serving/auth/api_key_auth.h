// API keys for every front end (--api_keys_file): which key a call presents, whether the keys
// file knows it, and whether its limits allow the call. The file is re-read when it changes or on
// SIGHUP (FileReloader), as the TLS files are; a file that does not parse keeps the previous
// keys. Keys are never logged or echoed: errors and metrics name the key's name.
#ifndef MTSERVE_SERVING_AUTH_API_KEY_AUTH_H_
#define MTSERVE_SERVING_AUTH_API_KEY_AUTH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/file_reloader.h"
#include "serving/auth/api_key_quota.h"
#include "serving/auth/api_keys.h"
#include "serving/metrics.h"

namespace mtserve {

class ApiKeyAuthenticator {
 public:
  // Reads the keys file (InvalidArgument naming it and the line if it does not parse) and checks
  // it for changes every `poll_interval`. `metrics` may be null.
  static absl::StatusOr<std::unique_ptr<ApiKeyAuthenticator>> Start(const std::string& path,
                                                                    absl::Duration poll_interval,
                                                                    Metrics* metrics);

  // The entry of the key a call presents (none: it presented none): UNAUTHENTICATED when it
  // presented none or one the file does not have.
  absl::StatusOr<ApiKey> Authenticate(const std::optional<std::string>& presented) const;
  // Charges a call of `requests` requests and `characters` characters to `key` (ApiKeyQuota):
  // RESOURCE_EXHAUSTED over a limit, with RetryAfter.
  absl::Status Charge(const ApiKey& key, int64_t requests, int64_t characters);
  // What `key` has used of its characters today, charging nothing.
  CharacterUsage Characters(const ApiKey& key) const { return quota_.Characters(key, absl::Now()); }
  // Re-reads the keys file now (SIGHUP); logs the outcome.
  absl::Status Reload() { return reloader_->Reload(); }

 private:
  explicit ApiKeyAuthenticator(Metrics* metrics) : metrics_(metrics) {}
  void Record(const std::string& name, const absl::Status& status) const;

  Metrics* const metrics_;
  mutable absl::Mutex mutex_;
  std::shared_ptr<const ApiKeys> keys_ ABSL_GUARDED_BY(mutex_);
  ApiKeyQuota quota_;
  std::unique_ptr<FileReloader> reloader_;
};

// The key of a call from its headers (gRPC metadata or HTTP): "Bearer KEY" in `authorization`
// (the scheme in any case), else `x_api_key`; none when neither holds one.
std::optional<std::string> PresentedApiKey(std::optional<absl::string_view> authorization,
                                           std::optional<absl::string_view> x_api_key);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_AUTH_API_KEY_AUTH_H_
