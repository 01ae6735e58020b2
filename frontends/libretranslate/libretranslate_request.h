// A LibreTranslate POST /translate or /detect body (libretranslate_api.h) read into the core's
// request: JSON or a form (application/x-www-form-urlencoded), its fields checked as LibreTranslate
// checks them. Apart from the rest of the API because it needs no server: its fuzz target runs it
// alone.
#ifndef MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_REQUEST_H_
#define MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_REQUEST_H_

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "serving/translation_request.h"

namespace mtserve {

// A LibreTranslate /translate request, as the core request it becomes and what its answer needs.
struct LibreTranslateRequest {
  TranslationRequest core;
  bool q_is_array = false;  // The answer's translatedText is then an array too.
  int alternatives = 0;     // Hypotheses besides the best one to answer.
  std::string source;       // As the request gives them ("auto" included).
  std::string target;
};

// Reads a /translate body (`content_type` says whether it is a form; otherwise it is JSON) into a
// request that the core routes by its languages (core.source_language and target_language). Its
// JSON, or its form's fields, must be within `bounds` (RequestValueBounds), checked before anything
// is built. `check_key` is given the key (the body's api_key or apiKey, else `header_key`) before
// any other field is looked at; its error is returned. Otherwise INVALID_ARGUMENT, in
// LibreTranslate's words, for a malformed body or field.
absl::StatusOr<LibreTranslateRequest> ParseLibreTranslateFields(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key,
    absl::FunctionRef<absl::Status(const std::optional<std::string>& key)> check_key);

// Reads a /detect body (JSON or a form, as for /translate) into a detection of its one text, q
// (a string), among the served languages. The key as for ParseLibreTranslateFields.
absl::StatusOr<DetectionRequest> ParseLibreTranslateDetectFields(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key,
    absl::FunctionRef<absl::Status(const std::optional<std::string>& key)> check_key);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_REQUEST_H_
