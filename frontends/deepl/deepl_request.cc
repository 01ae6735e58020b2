// DeepL's API request bodies read into the core's requests (deepl_request.h).
#include "frontends/deepl/deepl_request.h"

#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/excerpt.h"
#include "base/url_form.h"
#include "frontends/http/multipart_form.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

using Json = nlohmann::json;

// DeepL's own wording starts its messages so; ours go on to name the field and the value.
constexpr char kBadRequest[] = "Bad request: ";

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(kBadRequest, message));
}

// The form's pairs as JSON: each name's value a string, a name given again an array of its
// values (DeepL repeats `text`).
Json FormFields(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json fields = Json::object();
  for (const auto& [name, value] : pairs) {
    auto it = fields.find(name);
    if (it == fields.end()) {
      fields[name] = value;
    } else {
      if (!it->is_array()) *it = Json::array({*it});
      it->push_back(value);
    }
  }
  return fields;
}

// A request's fields, whichever way they came, within `bounds`.
absl::StatusOr<Json> ParseBody(absl::string_view body, absl::string_view content_type,
                               const ValueBounds& bounds) {
  if (absl::StartsWithIgnoreCase(content_type, "multipart/form-data")) {
    return Invalid(
        "multipart/form-data bodies are taken by POST /v2/document only; send JSON or "
        "application/x-www-form-urlencoded");
  }
  const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(body);
  if (stripped.empty()) return Json::object();
  const bool json = absl::StartsWithIgnoreCase(content_type, "application/json") ||
                    absl::StartsWith(stripped, "{");
  if (json) {
    absl::StatusOr<Json> parsed = ParseJsonWithin(body, "the body", bounds);
    if (!parsed.ok()) return Invalid(parsed.status().message());
    if (!parsed->is_object()) {
      return Invalid(
          absl::StrCat("the body is JSON, but ", DescribeJson(*parsed), ", not an object"));
    }
    return parsed;
  }
  const int64_t pairs = absl::c_count(body, '&') + 1;
  if (pairs > bounds.max_values) {
    return Invalid(absl::StrCat("the form has ", pairs, " fields; the limit is ", bounds.max_values,
                                " (", bounds.values_limit, ")"));
  }
  return FormFields(ParseUrlForm(body));
}

// The string field `name`, or none when it is absent or null. INVALID_ARGUMENT when it is given
// twice (a form) or is not a string.
absl::StatusOr<std::optional<std::string>> OptionalString(const Json& fields,
                                                          absl::string_view name) {
  auto it = fields.find(name);
  if (it == fields.end() || it->is_null()) return std::nullopt;
  if (it->is_array()) {
    return Invalid(
        absl::StrCat("parameter '", name, "' is given ", it->size(), " times; it takes one value"));
  }
  if (!it->is_string()) {
    return Invalid(
        absl::StrCat("parameter '", name, "' is ", DescribeJson(*it), "; it is a string"));
  }
  return it->get<std::string>();
}

// The string field `name`, required and not empty.
absl::StatusOr<std::string> RequiredString(const Json& fields, absl::string_view name) {
  absl::StatusOr<std::optional<std::string>> value = OptionalString(fields, name);
  if (!value.ok()) return value.status();
  if (!value->has_value() || (*value)->empty()) {
    return Invalid(absl::StrCat("parameter '", name, "' not specified"));
  }
  return **std::move(value);
}

// A field that is a flag: "0" or "1" (a form's), false or true, 0 or 1 (JSON's); `fallback` when
// absent.
absl::StatusOr<bool> Flag(const Json& fields, absl::string_view name, bool fallback) {
  auto it = fields.find(name);
  if (it == fields.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number_integer() && (it->get<int64_t>() == 0 || it->get<int64_t>() == 1)) {
    return it->get<int64_t>() == 1;
  }
  if (it->is_string()) {
    const std::string value = absl::AsciiStrToLower(it->get<std::string>());
    if (value == "0" || value == "false") return false;
    if (value == "1" || value == "true") return true;
  }
  return Invalid(absl::StrCat("parameter '", name, "' is ", DescribeJson(*it),
                              "; it is 0 or 1 (or false or true)"));
}

// Whether `name` is an XML or HTML element's name: a letter or '_', then letters, digits and
// "_-.:", at most 64 bytes.
bool IsTagName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (!absl::ascii_isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  return absl::c_all_of(name, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::string_view("_-.:").find(c) != absl::string_view::npos;
  });
}

// A list of tags: comma-separated names in one string (a form's, or JSON's), or JSON's array of
// names (each perhaps comma-separated too); empty names are skipped, as DeepL does.
absl::StatusOr<std::vector<std::string>> TagList(const Json& fields, absl::string_view name) {
  std::vector<std::string> tags;
  auto it = fields.find(name);
  if (it == fields.end() || it->is_null()) return tags;
  std::vector<const Json*> values;
  if (it->is_array()) {
    for (const Json& value : *it) values.push_back(&value);
  } else {
    values.push_back(&*it);
  }
  for (const Json* value : values) {
    if (!value->is_string()) {
      return Invalid(absl::StrCat("parameter '", name, "' holds ", DescribeJson(*value),
                                  "; it is a list of tag names"));
    }
    for (absl::string_view tag :
         absl::StrSplit(value->get_ref<const std::string&>(), ',', absl::SkipWhitespace())) {
      tag = absl::StripAsciiWhitespace(tag);
      if (!IsTagName(tag)) {
        return Invalid(absl::StrCat("parameter '", name, "' holds \"", Excerpt(tag),
                                    "\", which is not a tag's name"));
      }
      tags.emplace_back(tag);
    }
  }
  return tags;
}

// The key a request presents: the body's auth_key, else `header_key`.
std::optional<std::string> PresentedKey(const Json& fields,
                                        const std::optional<std::string>& header_key) {
  auto key = fields.find("auth_key");
  if (key != fields.end() && key->is_string() && !key->get_ref<const std::string&>().empty()) {
    return key->get<std::string>();
  }
  return header_key;
}

// A language field's models' code; none when absent (or empty).
absl::StatusOr<std::optional<std::string>> Language(const Json& fields, absl::string_view name) {
  absl::StatusOr<std::optional<std::string>> code = OptionalString(fields, name);
  if (!code.ok()) return code.status();
  if (!code->has_value() || (*code)->empty()) return std::nullopt;
  absl::StatusOr<std::string> language = ModelLanguageOfDeepL(**code, name);
  if (!language.ok()) return language.status();
  return *std::move(language);
}

// formality: mtserve's models write one register, the default. DeepL's prefer_more and
// prefer_less fall back to it where a language has no other, and so are taken.
absl::Status CheckFormality(const std::optional<std::string>& formality) {
  if (!formality.has_value()) return absl::OkStatus();
  const std::string value = absl::AsciiStrToLower(*formality);
  if (value.empty() || value == "default" || value == "prefer_more" || value == "prefer_less") {
    return absl::OkStatus();
  }
  if (value == "more" || value == "less") {
    return Invalid(absl::StrCat("formality '", value,
                                "' is not supported for the target language: mtserve's models "
                                "have no formality (send default, prefer_more or prefer_less)"));
  }
  return Invalid(absl::StrCat("parameter 'formality' is \"", Excerpt(*formality),
                              "\"; it is default, more, less, prefer_more or prefer_less"));
}

// The options every translation takes: the glossary (which needs the source language, as in
// DeepL's API) and formality.
absl::Status GlossaryAndFormality(const Json& fields, bool has_source, RequestedOptions& options) {
  absl::StatusOr<std::optional<std::string>> glossary = OptionalString(fields, "glossary_id");
  if (!glossary.ok()) return glossary.status();
  if (glossary->has_value() && !(*glossary)->empty()) {
    if (!has_source) {
      return Invalid(
          "parameter 'glossary_id' needs 'source_lang': a glossary is of a pair of "
          "languages");
    }
    options.glossary_id = **glossary;
  }
  absl::StatusOr<std::optional<std::string>> formality = OptionalString(fields, "formality");
  if (!formality.ok()) return formality.status();
  return CheckFormality(*formality);
}

}  // namespace

absl::StatusOr<std::string> ModelLanguageOfDeepL(absl::string_view code, absl::string_view field) {
  const std::vector<absl::string_view> parts = absl::StrSplit(code, '-');
  auto letters = [](absl::string_view s, size_t min, size_t max, bool digits) {
    return s.size() >= min && s.size() <= max && absl::c_all_of(s, [digits](char c) {
             return absl::ascii_isalpha(static_cast<unsigned char>(c)) ||
                    (digits && absl::ascii_isdigit(static_cast<unsigned char>(c)));
           });
  };
  if (parts.size() > 2 || !letters(parts[0], 2, 3, false) ||
      (parts.size() == 2 && !letters(parts[1], 2, 4, true))) {
    return Invalid(absl::StrCat("value for '", field, "' not supported: \"", Excerpt(code),
                                "\" is not a language code such as DE, EN-GB or PT-BR"));
  }
  // A regional variant (EN-GB, PT-BR, ZH-HANS) is its language to the models.
  return absl::AsciiStrToLower(parts[0]);
}

std::optional<std::string> DeepLAuthKey(std::optional<absl::string_view> authorization) {
  constexpr absl::string_view kScheme = "DeepL-Auth-Key ";
  if (!authorization.has_value() || !absl::StartsWithIgnoreCase(*authorization, kScheme)) {
    return std::nullopt;
  }
  const absl::string_view key = absl::StripAsciiWhitespace(authorization->substr(kScheme.size()));
  if (key.empty()) return std::nullopt;
  return std::string(key);
}

absl::StatusOr<DeepLTranslateRequest> ParseDeepLTranslate(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type, bounds);
  if (!fields.ok()) return fields.status();
  DeepLTranslateRequest request;
  TranslationRequest& core = request.core;
  // Checked first, so a caller without a key learns nothing else; the core checks it again and
  // charges it.
  core.api_key = PresentedKey(*fields, header_key);
  if (absl::Status status = check_key(core.api_key); !status.ok()) return status;
  // Errors name the fields as DeepL's API does. (Assigning the literals trips GCC 12's false
  // -Wrestrict warning, bug 105329.)
  core.texts_field = std::string("text");
  core.source_field = std::string("source_lang");
  core.target_field = std::string("target_lang");
  core.format_field = std::string("tag_handling");

  auto text = fields->find("text");
  if (text == fields->end() || text->is_null()) return Invalid("parameter 'text' not specified");
  if (text->is_string()) {
    core.texts.push_back(text->get<std::string>());
  } else if (text->is_array() && !text->empty()) {
    for (const Json& one : *text) {
      if (!one.is_string()) {
        return Invalid(absl::StrCat("parameter 'text' holds ", DescribeJson(one),
                                    "; it is a string or an array of strings"));
      }
      core.texts.push_back(one.get<std::string>());
    }
  } else {
    return Invalid(absl::StrCat("parameter 'text' is ", DescribeJson(*text),
                                "; it is a string or an array of strings"));
  }

  absl::StatusOr<std::optional<std::string>> target = Language(*fields, "target_lang");
  if (!target.ok()) return target.status();
  if (!target->has_value()) return Invalid("parameter 'target_lang' not specified");
  core.target_language = **target;
  absl::StatusOr<std::optional<std::string>> source = Language(*fields, "source_lang");
  if (!source.ok()) return source.status();
  if (source->has_value()) {
    core.source_language = **source;
    request.source_lang = absl::AsciiStrToUpper(fields->at("source_lang").get<std::string>());
  } else {
    core.source_language = "auto";
  }

  absl::StatusOr<std::optional<std::string>> tag_handling = OptionalString(*fields, "tag_handling");
  if (!tag_handling.ok()) return tag_handling.status();
  bool markup = false;
  if (tag_handling->has_value() && !(*tag_handling)->empty()) {
    const std::string value = absl::AsciiStrToLower(**tag_handling);
    // XML is taken as HTML is: its markup kept byte for byte around the translated text.
    if (value != "html" && value != "xml") {
      return Invalid(absl::StrCat("parameter 'tag_handling' is \"", Excerpt(**tag_handling),
                                  "\"; it is html or xml"));
    }
    core.options.format = RequestedOptions::kHtml;
    markup = true;
  }

  if (auto split = fields->find("split_sentences"); split != fields->end() && !split->is_null()) {
    std::string value = split->is_string() ? absl::AsciiStrToLower(split->get<std::string>())
                        : split->is_number_integer() ? absl::StrCat(split->get<int64_t>())
                                                     : "?";
    if (value != "0" && value != "1" && value != "nonewlines") {
      return Invalid(absl::StrCat("parameter 'split_sentences' is ", DescribeJson(*split),
                                  "; it is 0, 1 or nonewlines"));
    }
    core.options.split_sentences = value != "0";
  }
  if (absl::StatusOr<bool> preserve = Flag(*fields, "preserve_formatting", false); !preserve.ok()) {
    return preserve.status();
  }
  absl::StatusOr<bool> billed = Flag(*fields, "show_billed_characters", false);
  if (!billed.ok()) return billed.status();
  request.show_billed_characters = *billed;

  absl::StatusOr<std::vector<std::string>> ignore_tags = TagList(*fields, "ignore_tags");
  if (!ignore_tags.ok()) return ignore_tags.status();
  if (!ignore_tags->empty() && !markup) {
    return Invalid("parameter 'ignore_tags' needs tag_handling html or xml");
  }
  core.options.ignore_tags = *std::move(ignore_tags);
  // The XML options that shape sentences: checked, and left to mtserve's own splitting.
  for (absl::string_view name : {"non_splitting_tags", "splitting_tags"}) {
    if (absl::StatusOr<std::vector<std::string>> tags = TagList(*fields, name); !tags.ok()) {
      return tags.status();
    }
  }
  if (absl::StatusOr<bool> outline = Flag(*fields, "outline_detection", true); !outline.ok()) {
    return outline.status();
  }
  // context steers DeepL's own model; mtserve's translate each sentence alone.
  if (absl::StatusOr<std::optional<std::string>> context = OptionalString(*fields, "context");
      !context.ok()) {
    return context.status();
  }
  if (absl::Status status = GlossaryAndFormality(*fields, source->has_value(), core.options);
      !status.ok()) {
    return status;
  }
  return request;
}

absl::StatusOr<DeepLGlossaryRequest> ParseDeepLGlossary(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type, bounds);
  if (!fields.ok()) return fields.status();
  DeepLGlossaryRequest request;
  request.api_key = PresentedKey(*fields, header_key);
  if (absl::Status status = check_key(request.api_key); !status.ok()) return status;
  absl::StatusOr<std::string> name = RequiredString(*fields, "name");
  if (!name.ok()) return name.status();
  request.name = *std::move(name);
  for (absl::string_view field : {"source_lang", "target_lang"}) {
    absl::StatusOr<std::optional<std::string>> language = Language(*fields, field);
    if (!language.ok()) return language.status();
    if (!language->has_value())
      return Invalid(absl::StrCat("parameter '", field, "' not specified"));
    (field == "source_lang" ? request.source_language : request.target_language) = **language;
  }
  absl::StatusOr<std::string> entries = RequiredString(*fields, "entries");
  if (!entries.ok()) return entries.status();
  request.entries = *std::move(entries);
  absl::StatusOr<std::optional<std::string>> format = OptionalString(*fields, "entries_format");
  if (!format.ok()) return format.status();
  const std::string value = absl::AsciiStrToLower(format->value_or("tsv"));
  if (value != "tsv" && value != "csv") {
    return Invalid(absl::StrCat("parameter 'entries_format' is \"", Excerpt(**format),
                                "\"; it is tsv or csv"));
  }
  request.csv = value == "csv";
  return request;
}

absl::StatusOr<DeepLDocumentKey> ParseDeepLDocumentKey(absl::string_view body,
                                                       absl::string_view content_type,
                                                       absl::string_view query,
                                                       const ValueBounds& bounds,
                                                       const std::optional<std::string>& header_key,
                                                       DeepLKeyCheck check_key) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type, bounds);
  if (!fields.ok()) return fields.status();
  if (fields->empty() && !query.empty()) {
    const auto pairs = ParseUrlForm(query);
    if (static_cast<int64_t>(pairs.size()) > bounds.max_values) {
      return Invalid(absl::StrCat("the query has ", pairs.size(), " fields; the limit is ",
                                  bounds.max_values, " (", bounds.values_limit, ")"));
    }
    *fields = FormFields(pairs);
  }
  DeepLDocumentKey key;
  key.api_key = PresentedKey(*fields, header_key);
  if (absl::Status status = check_key(key.api_key); !status.ok()) return status;
  absl::StatusOr<std::string> document_key = RequiredString(*fields, "document_key");
  if (!document_key.ok()) return document_key.status();
  key.document_key = *std::move(document_key);
  return key;
}

absl::StatusOr<DeepLDocumentUpload> ParseDeepLDocumentUpload(
    absl::string_view body, absl::string_view content_type, int64_t max_body_bytes,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key) {
  absl::StatusOr<std::string> boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) {
    return Invalid(absl::StrCat("header Content-Type: ", boundary.status().message(),
                                " (a document is sent as multipart/form-data)"));
  }
  MultipartLimits limits;
  limits.max_body_bytes = static_cast<size_t>(std::max<int64_t>(0, max_body_bytes));
  absl::StatusOr<std::vector<FormPart>> parts =
      ParseMultipartForm(body, *boundary, limits, "the request body");
  if (!parts.ok()) return Invalid(parts.status().message());
  // The fields besides the file, as a form's: the first of each name.
  Json fields = Json::object();
  for (const FormPart& part : *parts) {
    if (part.name != "file" && !fields.contains(part.name)) {
      fields[part.name] = std::string(part.body);
    }
  }
  DeepLDocumentUpload upload;
  TranslationRequest& translation = upload.translation;
  translation.api_key = PresentedKey(fields, header_key);
  if (absl::Status status = check_key(translation.api_key); !status.ok()) return status;
  translation.source_field = std::string("source_lang");
  translation.target_field = std::string("target_lang");

  const FormPart* file = FindFormPart(*parts, "file");
  if (file == nullptr) return Invalid("parameter 'file' not specified");
  upload.content = std::string(file->body);
  upload.media_type = file->content_type;
  upload.file_name = file->file_name.value_or("");
  if (auto name = fields.find("filename");
      name != fields.end() && !name->get_ref<const std::string&>().empty()) {
    upload.file_name = name->get<std::string>();
  }
  absl::StatusOr<std::optional<std::string>> target = Language(fields, "target_lang");
  if (!target.ok()) return target.status();
  if (!target->has_value()) return Invalid("parameter 'target_lang' not specified");
  translation.target_language = **target;
  absl::StatusOr<std::optional<std::string>> source = Language(fields, "source_lang");
  if (!source.ok()) return source.status();
  translation.source_language = source->value_or("auto");
  if (auto output = fields.find("output_format"); output != fields.end()) {
    const std::string wanted = absl::AsciiStrToLower(output->get<std::string>());
    const size_t dot = upload.file_name.rfind('.');
    const std::string own = dot == std::string::npos
                                ? std::string()
                                : absl::AsciiStrToLower(upload.file_name.substr(dot + 1));
    if (!wanted.empty() && wanted != own) {
      return Invalid(absl::StrCat("parameter 'output_format' is \"", Excerpt(wanted),
                                  "\": mtserve writes a translated file in its own format (",
                                  own.empty() ? "the file's" : own, ")"));
    }
  }
  if (absl::Status status = GlossaryAndFormality(fields, source->has_value(), translation.options);
      !status.ok()) {
    return status;
  }
  return upload;
}

}  // namespace mtserve
