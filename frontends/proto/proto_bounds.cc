#include "frontends/proto/proto_bounds.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace mtserve {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

enum class Scan { kWithin, kTooDeep, kTooMany, kMalformed };

// Counts the fields of the message of `descriptor` that `input` holds up to its limit into
// `values`, stopping as soon as a bound is passed.
Scan CountFields(CodedInputStream& input, const Descriptor& descriptor, int depth,
                 const ValueBounds& bounds, int64_t& values) {
  if (depth > bounds.max_depth) return Scan::kTooDeep;
  while (const uint32_t tag = input.ReadTag()) {
    if (++values > bounds.max_values) return Scan::kTooMany;
    const FieldDescriptor* field =
        descriptor.FindFieldByNumber(static_cast<int>(WireFormatLite::GetTagFieldNumber(tag)));
    if (field != nullptr && field->type() == FieldDescriptor::TYPE_MESSAGE &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length;
      if (!input.ReadVarint32(&length)) return Scan::kMalformed;
      const CodedInputStream::Limit limit = input.PushLimit(static_cast<int>(length));
      const Scan nested = CountFields(input, *field->message_type(), depth + 1, bounds, values);
      if (nested != Scan::kWithin) return nested;
      if (!input.ConsumedEntireMessage() || input.BytesUntilLimit() != 0) {
        return Scan::kMalformed;
      }
      input.PopLimit(limit);
    } else if (!WireFormatLite::SkipField(&input, tag)) {
      return Scan::kMalformed;
    }
  }
  return Scan::kWithin;
}

}  // namespace

absl::Status CheckProtoBounds(absl::string_view bytes, const Descriptor& descriptor,
                              const ValueBounds& bounds, absl::string_view what) {
  CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                         static_cast<int>(bytes.size()));
  int64_t values = 1;  // The message itself, as a JSON body's object counts.
  switch (CountFields(input, descriptor, 1, bounds, values)) {
    case Scan::kTooDeep:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " nests messages deeper than ", bounds.max_depth, " levels"));
    case Scan::kTooMany:
      return absl::InvalidArgumentError(absl::StrCat(what, " has more than ", bounds.max_values,
                                                     " fields, the limit (", bounds.values_limit,
                                                     ")"));
    case Scan::kWithin:
    case Scan::kMalformed:
      break;
  }
  return absl::OkStatus();
}

}  // namespace mtserve
