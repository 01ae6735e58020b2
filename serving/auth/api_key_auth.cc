#include "serving/auth/api_key_auth.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace mtserve {
namespace {

// The metrics' key label for calls without a key, and with one the file does not have.
constexpr char kNoKey[] = "none";
constexpr char kUnknownKey[] = "unknown";

}  // namespace

absl::StatusOr<std::unique_ptr<ApiKeyAuthenticator>> ApiKeyAuthenticator::Start(
    const std::string& path, absl::Duration poll_interval, Metrics* metrics) {
  std::unique_ptr<ApiKeyAuthenticator> authenticator(new ApiKeyAuthenticator(metrics));
  FileReloader::Options options;
  options.what = "the API keys file (--api_keys_file)";
  options.paths = {path};
  options.max_bytes = 16 << 20;
  options.poll_interval = poll_interval;
  absl::StatusOr<std::unique_ptr<FileReloader>> reloader = FileReloader::Start(
      options, [self = authenticator.get()](const std::vector<std::string>& contents) {
        absl::StatusOr<ApiKeys> keys = ParseApiKeys(contents[0]);
        if (!keys.ok()) return keys.status();
        auto shared = std::make_shared<const ApiKeys>(*std::move(keys));
        absl::MutexLock lock(&self->mutex_);
        self->keys_ = std::move(shared);
        return absl::OkStatus();
      });
  if (!reloader.ok()) return reloader.status();
  authenticator->reloader_ = *std::move(reloader);
  return authenticator;
}

absl::StatusOr<ApiKey> ApiKeyAuthenticator::Authenticate(
    const std::optional<std::string>& presented) const {
  if (!presented.has_value()) {
    const absl::Status status = absl::UnauthenticatedError(
        "an API key is required: send \"Authorization: Bearer KEY\" or \"X-API-Key: KEY\"");
    Record(kNoKey, status);
    return status;
  }
  std::shared_ptr<const ApiKeys> keys;
  {
    absl::MutexLock lock(&mutex_);
    keys = keys_;
  }
  const ApiKey* key = keys->Find(*presented);
  if (key == nullptr) {
    const absl::Status status = absl::UnauthenticatedError("the API key is not valid");
    Record(kUnknownKey, status);
    return status;
  }
  return *key;
}

absl::Status ApiKeyAuthenticator::Charge(const ApiKey& key, int64_t requests, int64_t characters) {
  const absl::Status status = quota_.Charge(key, requests, characters, absl::Now());
  Record(key.name, status);
  return status;
}

void ApiKeyAuthenticator::Record(const std::string& name, const absl::Status& status) const {
  if (metrics_ != nullptr) {
    metrics_->RecordApiKeyRequest(name, absl::StatusCodeToString(status.code()));
  }
}

std::optional<std::string> PresentedApiKey(std::optional<absl::string_view> authorization,
                                           std::optional<absl::string_view> x_api_key) {
  if (authorization.has_value()) {
    absl::string_view value = absl::StripAsciiWhitespace(*authorization);
    if (value.size() > 7 && absl::StartsWithIgnoreCase(value, "bearer ")) {
      value = absl::StripAsciiWhitespace(value.substr(7));
      if (!value.empty()) return std::string(value);
    }
  }
  if (x_api_key.has_value()) {
    const absl::string_view value = absl::StripAsciiWhitespace(*x_api_key);
    if (!value.empty()) return std::string(value);
  }
  return std::nullopt;
}

}  // namespace mtserve
