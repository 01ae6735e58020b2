// A blocking C++ client for an mtserve server: translation (texts and files), the model list,
// language detection and the standard health check, with gRPC errors turned into absl::Status (same
// code, same message) so callers handle one error type.
#ifndef MTSERVE_CLIENT_TRANSLATION_CLIENT_H_
#define MTSERVE_CLIENT_TRANSLATION_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/status.h"
#include "mtserve/v1/translation.grpc.pb.h"

namespace mtserve {

using HealthStatus = ::grpc::health::v1::HealthCheckResponse::ServingStatus;

// gRPC's status codes are absl's, value for value.
absl::Status ToAbslStatus(const grpc::Status& status);

// "SERVING", "NOT_SERVING", ...: the proto enum's name.
std::string HealthStatusName(HealthStatus status);

class TranslationClient {
 public:
  struct Options {
    // Largest message sent or received. gRPC's default receive limit (4 MiB) is too small for big
    // batches with scores.
    int max_message_bytes = 64 << 20;
    // TLS instead of plaintext. The server's certificate must be signed by one of `tls_ca_pem`'s
    // CAs (PEM; empty: the system's CAs) and name the target's host.
    bool tls = false;
    std::string tls_ca_pem;
    // A client certificate chain and its private key (PEM), for servers that require one.
    std::string tls_cert_pem;
    std::string tls_key_pem;
    // Sent with every call as "authorization: Bearer KEY" when not empty.
    std::string api_key;
  };

  // `target` is "HOST:PORT" (or any gRPC target URI). The connection is made lazily:
  // an unreachable server shows up as UNAVAILABLE from the first call, not here.
  explicit TranslationClient(const std::string& target);
  TranslationClient(const std::string& target, const Options& options);

  // Thread-safe: any number of threads may call these at once; they share one channel.
  // A timeout of absl::InfiniteDuration() sets no deadline.
  absl::StatusOr<v1::TranslateResponse> Translate(const v1::TranslateRequest& request,
                                                  absl::Duration timeout) const;
  absl::StatusOr<v1::ListModelsResponse> ListModels(
      absl::Duration timeout = absl::Seconds(10)) const;
  absl::StatusOr<v1::DetectResponse> Detect(const v1::DetectRequest& request,
                                            absl::Duration timeout) const;
  // The operators' calls, for an API key with the admin attribute: model `name`'s state after.
  absl::StatusOr<v1::ModelInfo> LoadModel(const std::string& name, absl::Duration timeout) const;
  absl::StatusOr<v1::ModelInfo> UnloadModel(const std::string& name, absl::Duration timeout) const;
  // TranslateFile: sends `header`, then `content` in chunks of 64 KiB (under any server's message
  // limit), and calls `progress` with each FileJob the server sends as the job progresses, the
  // last one DONE (with the translated file's name and media type). The translated file's
  // bytes, or the call's error (the server's, or DATA_LOSS if the bytes received are not the
  // size the DONE job said).
  absl::StatusOr<std::string> TranslateFile(
      const v1::FileHeader& header, absl::string_view content, absl::Duration timeout,
      const std::function<void(const v1::FileJob&)>& progress) const;
  // grpc.health.v1.Health/Check. An empty service asks about the server as a whole. Errors are
  // the RPC's: NOT_FOUND for a service the server does not know, UNAVAILABLE when it is down...
  absl::StatusOr<HealthStatus> Health(const std::string& service = "",
                                      absl::Duration timeout = absl::Seconds(10)) const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Translator::Stub> translator_;
  std::unique_ptr<::grpc::health::v1::Health::Stub> health_;
  std::string authorization_;  // "Bearer KEY", or empty.
};

}  // namespace mtserve

#endif  // MTSERVE_CLIENT_TRANSLATION_CLIENT_H_
