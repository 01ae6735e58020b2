#include "frontends/http/http_json.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "frontends/http/json_null_elements.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

// Readies `value` (a JSON object for `descriptor`, at `path` in the body: "" or "options.") for
// protobuf's JSON parser: the text of `bytes` fields rewritten as base64, the form that parser
// reads them in, and a bool field that is neither a JSON boolean nor null refused (that parser
// takes the strings "true" and "false" too, which an API that says boolean should not). Fields it
// does not know are left for that parser to refuse.
absl::Status ToProtobufJson(nlohmann::json& value, const google::protobuf::Descriptor& descriptor,
                            const std::string& path, absl::string_view what) {
  if (!value.is_object()) return absl::OkStatus();
  for (auto& [key, field_value] : value.items()) {
    const google::protobuf::FieldDescriptor* field = descriptor.FindFieldByName(key);
    for (int i = 0; field == nullptr && i < descriptor.field_count(); ++i) {
      if (descriptor.field(i)->json_name() == key) field = descriptor.field(i);
    }
    if (field == nullptr || field->is_map()) continue;
    const std::string name = absl::StrCat(path, Excerpt(key));  // A key is the client's.
    auto convert = [&](nlohmann::json& element, const std::string& at) -> absl::Status {
      switch (field->type()) {
        case google::protobuf::FieldDescriptor::TYPE_BYTES:
          if (element.is_string()) {
            element = absl::Base64Escape(element.get_ref<const std::string&>());
          }
          return absl::OkStatus();
        case google::protobuf::FieldDescriptor::TYPE_BOOL:
          if (element.is_boolean() || element.is_null()) return absl::OkStatus();
          return absl::InvalidArgumentError(absl::StrCat(what, ": ", at,
                                                         " must be a boolean (true or false), not ",
                                                         Excerpt(element.dump(), 40)));
        case google::protobuf::FieldDescriptor::TYPE_MESSAGE:
          return ToProtobufJson(element, *field->message_type(), absl::StrCat(at, "."), what);
        default:
          return absl::OkStatus();
      }
    };
    if (field->is_repeated() && field_value.is_array()) {
      for (size_t i = 0; i < field_value.size(); ++i) {
        MT_RETURN_IF_ERROR(convert(field_value[i], absl::StrCat(name, "[", i, "]")));
      }
    } else {
      MT_RETURN_IF_ERROR(convert(field_value, name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseJson(absl::string_view json, absl::string_view what, const ValueBounds& bounds,
                       google::protobuf::Message& message) {
  absl::StatusOr<nlohmann::json> parsed = ParseJsonWithin(json, what, bounds);
  if (!parsed.ok()) return parsed.status();
  nlohmann::json& tree = *parsed;
  if (absl::Status status = RefuseNullElements(tree, what); !status.ok()) return status;
  MT_RETURN_IF_ERROR(ToProtobufJson(tree, *message.GetDescriptor(), "", what));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // A misspelt option is an error, not a silent default.
  const auto status = google::protobuf::util::JsonStringToMessage(tree.dump(), &message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a valid ",
                                                   message.GetDescriptor()->full_name(), ": ",
                                                   Excerpt(status.message().ToString(), 200)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // Every field, at its default too: a JSON client reads `begin` 0 rather than finds none.
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot write the answer as JSON: ", status.message().ToString()));
  }
  return json;
}

}  // namespace mtserve
