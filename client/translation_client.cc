#include "client/translation_client.h"

#include <string>

#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace mtserve {
namespace {

void SetTimeout(grpc::ClientContext& context, absl::Duration timeout) {
  if (timeout != absl::InfiniteDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
}

void SetAuthorization(grpc::ClientContext& context, const std::string& authorization) {
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
}

}  // namespace

absl::Status ToAbslStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string HealthStatusName(HealthStatus status) {
  return ::grpc::health::v1::HealthCheckResponse::ServingStatus_Name(status);
}

TranslationClient::TranslationClient(const std::string& target)
    : TranslationClient(target, Options()) {}

TranslationClient::TranslationClient(const std::string& target, const Options& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca_pem;
    ssl.pem_cert_chain = options.tls_cert_pem;
    ssl.pem_private_key = options.tls_key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  channel_ = grpc::CreateCustomChannel(target, credentials, args);
  if (!options.api_key.empty()) authorization_ = "Bearer " + options.api_key;
  translator_ = v1::Translator::NewStub(channel_);
  health_ = ::grpc::health::v1::Health::NewStub(channel_);
}

absl::StatusOr<v1::TranslateResponse> TranslationClient::Translate(
    const v1::TranslateRequest& request, absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  v1::TranslateResponse response;
  if (grpc::Status status = translator_->Translate(&context, request, &response); !status.ok()) {
    return ToAbslStatus(status);
  }
  return response;
}

absl::StatusOr<v1::ListModelsResponse> TranslationClient::ListModels(absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  v1::ListModelsResponse response;
  if (grpc::Status status = translator_->ListModels(&context, v1::ListModelsRequest(), &response);
      !status.ok()) {
    return ToAbslStatus(status);
  }
  return response;
}

absl::StatusOr<v1::DetectResponse> TranslationClient::Detect(const v1::DetectRequest& request,
                                                             absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  v1::DetectResponse response;
  if (grpc::Status status = translator_->Detect(&context, request, &response); !status.ok()) {
    return ToAbslStatus(status);
  }
  return response;
}

absl::StatusOr<v1::ModelInfo> TranslationClient::LoadModel(const std::string& name,
                                                           absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  v1::LoadModelRequest request;
  request.set_name(name);
  v1::ModelInfo response;
  if (grpc::Status status = translator_->LoadModel(&context, request, &response); !status.ok()) {
    return ToAbslStatus(status);
  }
  return response;
}

absl::StatusOr<v1::ModelInfo> TranslationClient::UnloadModel(const std::string& name,
                                                             absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  v1::UnloadModelRequest request;
  request.set_name(name);
  v1::ModelInfo response;
  if (grpc::Status status = translator_->UnloadModel(&context, request, &response); !status.ok()) {
    return ToAbslStatus(status);
  }
  return response;
}

absl::StatusOr<HealthStatus> TranslationClient::Health(const std::string& service,
                                                       absl::Duration timeout) const {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  ::grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  ::grpc::health::v1::HealthCheckResponse response;
  if (grpc::Status status = health_->Check(&context, request, &response); !status.ok()) {
    return ToAbslStatus(status);
  }
  return response.status();
}

}  // namespace mtserve
