#include "frontends/libretranslate/libretranslate_request.h"

#include <cstdint>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "base/url_form.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

using Json = nlohmann::json;

// A request's fields, whichever way they came, within `bounds` (a form's fields count as values).
// A form's values are strings; JSON's keep their types, so that q may be an array.
absl::StatusOr<Json> ParseBody(absl::string_view body, absl::string_view content_type,
                               const ValueBounds& bounds) {
  // curl -d sends JSON labelled as a form; a form whose first name starts with "{" is not one
  // LibreTranslate's clients send.
  const bool form = absl::StartsWithIgnoreCase(content_type, "application/x-www-form-urlencoded") &&
                    !absl::StartsWith(absl::StripLeadingAsciiWhitespace(body), "{");
  if (absl::StartsWithIgnoreCase(content_type, "multipart/form-data")) {
    return absl::InvalidArgumentError(
        "Invalid request: multipart/form-data bodies are not supported here; send JSON or "
        "application/x-www-form-urlencoded");
  }
  if (!form) {
    absl::StatusOr<Json> json = ParseJsonWithin(body, "the body", bounds);
    if (!json.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid request: ", json.status().message(),
                       absl::StartsWithIgnoreCase(content_type, "application/json")
                           ? ""
                           : " (a form's Content-Type is application/x-www-form-urlencoded)"));
    }
    if (!json->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid request: the body is JSON, but ",
                                                     DescribeJson(*json), ", not an object"));
    }
    return json;
  }
  const int64_t pairs = absl::c_count(body, '&') + 1;
  if (pairs > bounds.max_values) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid request: the form has ", pairs,
                                                   " fields; the limit is ", bounds.max_values,
                                                   " (", bounds.values_limit, ")"));
  }
  Json fields = Json::object();
  for (auto& [name, value] : ParseUrlForm(body)) {
    // The first of repeated names, as LibreTranslate (Flask) takes it.
    if (!fields.contains(name)) fields[name] = std::move(value);
  }
  return fields;
}

// The string field `name`; INVALID_ARGUMENT as LibreTranslate words it when missing.
absl::StatusOr<std::string> StringField(const Json& fields, const std::string& name) {
  auto it = fields.find(name);
  if (it == fields.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid request: missing ", name, " parameter"));
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid request: ", name, " is not a string"));
  }
  return it->get<std::string>();
}

// The key a request presents: the body's api_key (or apiKey), else `header_key`.
std::optional<std::string> PresentedKey(const Json& fields,
                                        const std::optional<std::string>& header_key) {
  for (const char* name : {"api_key", "apiKey"}) {
    auto key = fields.find(name);
    if (key != fields.end() && key->is_string() && !key->get_ref<const std::string&>().empty()) {
      return key->get<std::string>();
    }
  }
  return header_key;
}

}  // namespace

absl::StatusOr<LibreTranslateRequest> ParseLibreTranslateFields(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key,
    absl::FunctionRef<absl::Status(const std::optional<std::string>& key)> check_key) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type, bounds);
  if (!fields.ok()) return fields.status();
  LibreTranslateRequest request;
  TranslationRequest& core_request = request.core;
  // LibreTranslate's clients send api_key (some apiKey); a header works too. Checked first, so a
  // caller without a key learns nothing else; the core checks it again and charges it.
  core_request.api_key = PresentedKey(*fields, header_key);
  if (absl::Status status = check_key(core_request.api_key); !status.ok()) return status;
  // Errors name the texts as the request does. (Assigning the literal itself trips GCC 12's
  // false -Wrestrict warning, bug 105329.)
  core_request.texts_field = std::string("q");
  core_request.format_field = std::string("format");

  auto q = fields->find("q");
  if (q == fields->end() || q->is_null()) {
    return absl::InvalidArgumentError("Invalid request: missing q parameter");
  }
  if (q->is_string()) {
    core_request.texts.push_back(q->get<std::string>());
    core_request.texts_repeated = false;
  } else if (q->is_array()) {
    request.q_is_array = true;
    for (const Json& text : *q) {
      if (!text.is_string()) {
        return absl::InvalidArgumentError("Invalid request: q is an array of other than strings");
      }
      core_request.texts.push_back(text.get<std::string>());
    }
  } else {
    return absl::InvalidArgumentError(
        "Invalid request: q is neither a string nor an array of strings");
  }
  absl::StatusOr<std::string> source = StringField(*fields, "source");
  if (!source.ok()) return source.status();
  request.source = *std::move(source);
  absl::StatusOr<std::string> target = StringField(*fields, "target");
  if (!target.ok()) return target.status();
  request.target = *std::move(target);

  if (auto format = fields->find("format"); format != fields->end() && !format->is_null()) {
    const std::string value = format->is_string() ? format->get<std::string>() : "";
    // The office documents' formats are named too, so that the core refuses them as a text's
    // format, pointing to /translate_file (it names the field as this API does).
    static constexpr std::pair<absl::string_view, int> kFormats[] = {
        {"html", RequestedOptions::kHtml}, {"markdown", RequestedOptions::kMarkdown},
        {"srt", RequestedOptions::kSrt},   {"vtt", RequestedOptions::kVtt},
        {"docx", RequestedOptions::kDocx}, {"pptx", RequestedOptions::kPptx},
        {"odt", RequestedOptions::kOdt},   {"odp", RequestedOptions::kOdp},
        {"epub", RequestedOptions::kEpub},
    };
    bool known = value == "text" || (format->is_string() && value.empty());
    for (const auto& [name, value_of] : kFormats) {
      if (value == name) {
        core_request.options.format = value_of;
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid request: format is ",
                                                     DescribeJson(*format),
                                                     "; it is text, html, markdown, srt or vtt"));
    }
  }
  if (auto alternatives = fields->find("alternatives");
      alternatives != fields->end() && !alternatives->is_null()) {
    int n = -1;
    if (alternatives->is_number_integer()) {
      const int64_t value = alternatives->get<int64_t>();
      if (value >= 0 && value < 1000) n = static_cast<int>(value);
    } else if (alternatives->is_string()) {
      // A form's value (LibreTranslate's web UI sends "0").
      const std::string value = alternatives->get<std::string>();
      int parsed = 0;
      if (value.empty()) {
        n = 0;
      } else if (absl::SimpleAtoi(value, &parsed) && parsed >= 0 && parsed < 1000) {
        n = parsed;
      }
    }
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid request: alternatives is ",
                                                     DescribeJson(*alternatives),
                                                     "; it is a number from 0 to 999"));
    }
    request.alternatives = n;
  }
  if (request.alternatives > 0) {
    // Alternatives are the next best hypotheses of a beam search wide enough to hold them; the
    // core checks the beam against --max_beam_size.
    core_request.options.beam_size = static_cast<uint32_t>(request.alternatives) + 1;
    core_request.options.num_hypotheses = static_cast<uint32_t>(request.alternatives) + 1;
  }
  return request;
}

absl::StatusOr<DetectionRequest> ParseLibreTranslateDetectFields(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key,
    absl::FunctionRef<absl::Status(const std::optional<std::string>& key)> check_key) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type, bounds);
  if (!fields.ok()) return fields.status();
  DetectionRequest request;
  request.api_key = PresentedKey(*fields, header_key);
  if (absl::Status status = check_key(request.api_key); !status.ok()) return status;
  absl::StatusOr<std::string> q = StringField(*fields, "q");
  if (!q.ok()) return q.status();
  request.texts.push_back(*std::move(q));
  request.texts_field = std::string("q");
  request.texts_repeated = false;
  return request;
}

}  // namespace mtserve
