#include "frontends/http/http_json.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "frontends/http/json_null_elements.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

// Rewrites the text of `bytes` fields in `value` (a JSON object for `descriptor`) as base64, the
// form protobuf's JSON parser reads them in. Fields it does not know are left for that parser to
// refuse.
void TextToBase64(nlohmann::json& value, const google::protobuf::Descriptor& descriptor) {
  if (!value.is_object()) return;
  for (auto& [key, field_value] : value.items()) {
    const google::protobuf::FieldDescriptor* field = descriptor.FindFieldByName(key);
    for (int i = 0; field == nullptr && i < descriptor.field_count(); ++i) {
      if (descriptor.field(i)->json_name() == key) field = descriptor.field(i);
    }
    if (field == nullptr || field->is_map()) continue;
    auto convert = [&](nlohmann::json& element) {
      if (field->type() == google::protobuf::FieldDescriptor::TYPE_BYTES && element.is_string()) {
        element = absl::Base64Escape(element.get_ref<const std::string&>());
      } else if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
        TextToBase64(element, *field->message_type());
      }
    };
    if (field->is_repeated() && field_value.is_array()) {
      for (nlohmann::json& element : field_value) convert(element);
    } else {
      convert(field_value);
    }
  }
}

}  // namespace

absl::Status ParseJson(absl::string_view json, absl::string_view what, const ValueBounds& bounds,
                       google::protobuf::Message& message) {
  absl::StatusOr<nlohmann::json> parsed = ParseJsonWithin(json, what, bounds);
  if (!parsed.ok()) return parsed.status();
  nlohmann::json& tree = *parsed;
  if (absl::Status status = RefuseNullElements(tree, what); !status.ok()) return status;
  TextToBase64(tree, *message.GetDescriptor());
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
