// Bounds on what a protobuf request from the network may build, checked on its bytes before it is
// parsed: every field, at every level, becomes an object of some tens of bytes (an empty `texts`
// element is 2 bytes on the wire and about 50 in memory, unknown fields too), so a 4 MiB message
// could become 100 MiB.
#ifndef MTSERVE_FRONTENDS_PROTO_PROTO_BOUNDS_H_
#define MTSERVE_FRONTENDS_PROTO_PROTO_BOUNDS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "google/protobuf/descriptor.h"

namespace mtserve {

// OK if `bytes`, a serialized message of type `descriptor`, has at most bounds.max_values fields
// (nested messages' fields and unknown fields included; a message field counts once more) nested
// at most bounds.max_depth deep; otherwise INVALID_ARGUMENT naming `what` and the limit. Bytes that
// are not a message at all are left for the parser to refuse.
absl::Status CheckProtoBounds(absl::string_view bytes,
                              const google::protobuf::Descriptor& descriptor,
                              const ValueBounds& bounds, absl::string_view what);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_PROTO_PROTO_BOUNDS_H_
