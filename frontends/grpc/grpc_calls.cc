#include "frontends/grpc/grpc_calls.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "frontends/proto/proto_bounds.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "serving/auth/api_key_auth.h"
#include "serving/auth/api_key_quota.h"

namespace mtserve {
namespace {

absl::Status NotAMessage(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is not a valid ",
                   "message: its bytes do not parse (wrong message type "
                   "or a string field that is not UTF-8)"));
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

std::optional<std::string> ApiKeyOf(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto value = [&](const char* name) -> std::optional<absl::string_view> {
    auto it = metadata.find(name);
    if (it == metadata.end()) return std::nullopt;
    return absl::string_view(it->second.data(), it->second.size());
  };
  return PresentedApiKey(value("authorization"), value("x-api-key"));
}

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

void AddRetryAfter(grpc::CallbackServerContext& context, const absl::Status& status) {
  if (const absl::Duration wait = RetryAfter(status); wait > absl::ZeroDuration()) {
    context.AddTrailingMetadata("retry-after", absl::StrCat(absl::ToInt64Seconds(wait)));
  }
}

absl::Status ParseMessage(const grpc::ByteBuffer& bytes, const ValueBounds& bounds,
                          absl::string_view what, google::protobuf::Message& message) {
  grpc::Slice slice;
  if (!bytes.DumpToSingleSlice(&slice).ok()) return NotAMessage(what);
  const absl::string_view data(reinterpret_cast<const char*>(slice.begin()), slice.size());
  MT_RETURN_IF_ERROR(CheckProtoBounds(data, *message.GetDescriptor(), bounds, what));
  if (!message.ParseFromArray(data.data(), static_cast<int>(data.size()))) return NotAMessage(what);
  return absl::OkStatus();
}

void SerializeMessage(const google::protobuf::Message& message, grpc::ByteBuffer& bytes) {
  grpc::ProtoBufferWriter writer(&bytes, grpc::kProtoBufferWriterMaxBufferLength,
                                 static_cast<int>(message.ByteSizeLong()));
  message.SerializeToZeroCopyStream(&writer);
}

}  // namespace mtserve
