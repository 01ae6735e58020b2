// What the gRPC service's calls share: the API key and deadline a call carries, messages read
// from and written to raw bytes (so that a message that does not parse is INVALID_ARGUMENT
// saying so, and is bounded before it is built), and statuses turned into gRPC's.
#ifndef MTSERVE_FRONTENDS_GRPC_GRPC_CALLS_H_
#define MTSERVE_FRONTENDS_GRPC_GRPC_CALLS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/json_file.h"
#include "google/protobuf/message.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"

namespace mtserve {

// A gRPC status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The API key in the call's metadata: "authorization: Bearer KEY" or "x-api-key: KEY".
std::optional<std::string> ApiKeyOf(const grpc::CallbackServerContext& context);

// The call's deadline (absl::InfiniteFuture() when it has none).
absl::Time DeadlineOf(const grpc::CallbackServerContext& context);

// Over an API key's limit (`status` says how long to wait): trailing metadata "retry-after"
// (seconds), as HTTP's Retry-After. Call before Finish.
void AddRetryAfter(grpc::CallbackServerContext& context, const absl::Status& status);

// `message` from the bytes of a request, named `what` in errors: INVALID_ARGUMENT if they are
// over `bounds` (checked before anything is built) or do not parse. proto3 parsing also refuses a
// `string` field that is not UTF-8.
absl::Status ParseMessage(const grpc::ByteBuffer& bytes, const ValueBounds& bounds,
                          absl::string_view what, google::protobuf::Message& message);

// `message`'s bytes into `bytes`.
void SerializeMessage(const google::protobuf::Message& message, grpc::ByteBuffer& bytes);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_GRPC_GRPC_CALLS_H_
