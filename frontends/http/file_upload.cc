// A file sent to translate as a multipart/form-data body (file_upload.h).
#include "frontends/http/file_upload.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/excerpt.h"
#include "frontends/http/http_json.h"
#include "frontends/http/multipart_form.h"
#include "frontends/proto/request_mapping.h"
#include "mtserve/v1/translation.pb.h"

namespace mtserve {
namespace {

constexpr char kWhat[] = "the request body";

absl::StatusOr<std::vector<FormPart>> ParseForm(absl::string_view body,
                                                absl::string_view content_type,
                                                int64_t max_body_bytes) {
  absl::StatusOr<std::string> boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("header Content-Type: ", boundary.status().message(),
                     " (a file is sent as multipart/form-data, RFC 7578)"));
  }
  MultipartLimits limits;
  limits.max_body_bytes = static_cast<size_t>(max_body_bytes);
  return ParseMultipartForm(body, *boundary, limits, kWhat);
}

// The file part: the request's content, name and media type.
void TakeFile(const FormPart& file, FileRequest& request) {
  request.content = std::string(file.body);
  request.file_name = file.file_name.value_or("");
  request.media_type = file.content_type;
}

}  // namespace

absl::StatusOr<FileRequest> ParseFileUpload(absl::string_view body, absl::string_view content_type,
                                            int64_t max_body_bytes, const ValueBounds& bounds) {
  absl::StatusOr<std::vector<FormPart>> parts = ParseForm(body, content_type, max_body_bytes);
  if (!parts.ok()) return parts.status();
  static constexpr absl::string_view kParts[] = {
      "file", "model", "source_language", "target_language", "format", "options"};
  std::set<std::string> seen;
  for (const FormPart& part : *parts) {
    if (std::find(std::begin(kParts), std::end(kParts), part.name) == std::end(kParts)) {
      return absl::InvalidArgumentError(absl::StrCat(kWhat, ": part \"", Excerpt(part.name),
                                                     "\" is not one this route takes (",
                                                     absl::StrJoin(kParts, ", "), ")"));
    }
    if (!seen.insert(part.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(kWhat, ": part \"", part.name, "\" is given twice"));
    }
  }
  const FormPart* file = FindFormPart(*parts, "file");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWhat,
                     " has no part \"file\": the file to translate (a form's part named "
                     "file, with its filename)"));
  }
  FileRequest request;
  TakeFile(*file, request);
  auto text = [&](absl::string_view name) {
    const FormPart* part = FindFormPart(*parts, name);
    return part == nullptr ? std::string() : std::string(part->body);
  };
  request.translation.model = text("model");
  request.translation.source_language = text("source_language");
  request.translation.target_language = text("target_language");
  request.format = text("format");
  if (const FormPart* options = FindFormPart(*parts, "options"); options != nullptr) {
    v1::DecodingOptions message;
    if (absl::Status parsed = ParseJson(options->body, "part \"options\"", bounds, message);
        !parsed.ok()) {
      return parsed;
    }
    request.translation.options = ToRequested(message);
  }
  request.file_field = "file";
  request.format_field = "format";
  return request;
}

absl::StatusOr<FileRequest> ParseLibreTranslateFileUpload(absl::string_view body,
                                                          absl::string_view content_type,
                                                          int64_t max_body_bytes) {
  absl::StatusOr<std::vector<FormPart>> parts = ParseForm(body, content_type, max_body_bytes);
  if (!parts.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid request: ", parts.status().message()));
  }
  const FormPart* file = FindFormPart(*parts, "file");
  if (file == nullptr) return absl::InvalidArgumentError("Invalid request: missing file parameter");
  FileRequest request;
  for (const absl::string_view name : {"source", "target"}) {
    const FormPart* part = FindFormPart(*parts, name);
    if (part == nullptr || part->body.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid request: missing ", name, " parameter"));
    }
    (name == "source" ? request.translation.source_language : request.translation.target_language) =
        std::string(part->body);
  }
  if (const FormPart* key = FindFormPart(*parts, "api_key"); key != nullptr && !key->body.empty()) {
    request.translation.api_key = std::string(key->body);
  }
  TakeFile(*file, request);
  request.translation.source_field = "source";
  request.translation.target_field = "target";
  request.file_field = "file";
  request.format_field = "file";  // LibreTranslate's form has no format: the file's name says it.
  return request;
}

std::string AttachmentDisposition(absl::string_view file_name) {
  std::string fallback;
  std::string encoded;
  for (const char c : file_name) {
    const unsigned char byte = static_cast<unsigned char>(c);
    const bool printable = byte >= 0x20 && byte < 0x7f;
    fallback += printable && c != '"' && c != '\\' && c != '/' && c != '%' ? c : '_';
    // RFC 8187's attr-char: ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." / "^" / "_" /
    // "`" / "|" / "~"; every other byte percent-encoded.
    if (absl::ascii_isalnum(byte) ||
        absl::string_view("!#$&+-.^_`|~").find(c) != absl::string_view::npos) {
      encoded += c;
    } else {
      absl::StrAppend(&encoded, "%", absl::StrFormat("%02X", byte));
    }
  }
  return absl::StrCat("attachment; filename=\"", fallback, "\"; filename*=UTF-8''", encoded);
}

}  // namespace mtserve
