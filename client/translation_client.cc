#include "client/translation_client.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::string> TranslationClient::TranslateFile(
    const v1::FileHeader& header, absl::string_view content, absl::Duration timeout,
    const std::function<void(const v1::FileJob&)>& progress) const {
  constexpr size_t kChunkBytes = 64 << 10;
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  SetAuthorization(context, authorization_);
  std::unique_ptr<grpc::ClientReaderWriter<v1::TranslateFileRequest, v1::TranslateFileResponse>>
      stream = translator_->TranslateFile(&context);
  v1::TranslateFileRequest request;
  *request.mutable_header() = header;
  // A write fails once the server has ended the call (a file it refuses): its status says why.
  bool writing = stream->Write(request);
  for (size_t offset = 0; writing && offset < content.size(); offset += kChunkBytes) {
    request.set_chunk(std::string(content.substr(offset, kChunkBytes)));
    writing = stream->Write(request);
  }
  if (writing) stream->WritesDone();
  std::string result;
  std::optional<uint64_t> size;  // The DONE job's result_bytes.
  v1::TranslateFileResponse response;
  while (stream->Read(&response)) {
    if (response.has_job()) {
      if (response.job().state() == v1::FILE_JOB_STATE_DONE) size = response.job().result_bytes();
      progress(response.job());
    } else {
      result += response.chunk();
    }
  }
  if (grpc::Status status = stream->Finish(); !status.ok()) return ToAbslStatus(status);
  if (!size.has_value() || *size != result.size()) {
    return absl::DataLossError(absl::StrCat(
        "the call ended with ", result.size(), " bytes of the translated file, not the ",
        size.has_value() ? absl::StrCat(*size) : "(no DONE job)", " its job said"));
  }
  return result;
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
