// LibreTranslate's HTTP API (https://libretranslate.com/docs) on the TranslationCore, so that the
// many clients and integrations written for LibreTranslate work with mtserve unchanged:
//
//   POST /translate          {q, source, target, format, alternatives, api_key} as JSON or as a
//                            form (application/x-www-form-urlencoded) -> {translatedText, ...}
//   GET  /languages          [{code, name, targets}], from the served models' languages
//   GET  /frontend/settings  what LibreTranslate's web UI and some clients read first
//   POST /translate_file     a file as multipart/form-data {file, source, target, api_key}
//                            -> {translatedFileUrl}, once it is translated (the HTTP front end's
//                            file job: frontends/http/file_upload.h, serving/file_jobs.h)
//   GET  /download_file/{id}/{name}  the translated file
//
// This is only the mapping between LibreTranslate's shapes and the core's: the core checks every
// limit and option, as it does for the native API. The HTTP front end reads the body, runs the
// core request and writes the answers made here. Languages route to models by the source and
// target languages of each model's config.
#ifndef MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_API_H_
#define MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_API_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontends/libretranslate/libretranslate_request.h"
#include "serving/translation_core.h"

namespace mtserve {

// Parses a /translate body (ParseLibreTranslateFields) and routes it to a served model. When the
// core requires API keys, the body's api_key (or apiKey), else `header_key`, must be one:
// UNAUTHENTICATED, checked before anything else. INVALID_ARGUMENT for a malformed request, an
// unknown language pair or an "auto" that more than one model could serve; UNAVAILABLE while the
// models load.
absl::StatusOr<LibreTranslateRequest> ParseLibreTranslateRequest(
    absl::string_view body, absl::string_view content_type,
    const std::optional<std::string>& header_key, const TranslationCore& core);

// Parses a /detect body (ParseLibreTranslateDetectFields), the key checked as for /translate.
absl::StatusOr<DetectionRequest> ParseLibreTranslateDetect(
    absl::string_view body, absl::string_view content_type,
    const std::optional<std::string>& header_key, const TranslationCore& core);

// The JSON answer to a /detect: [{"confidence": 92.0, "language": "fr"}, ...], best first, over
// the served languages; for a text with no letters, [{"confidence": 0.0, "language": "und"}]
// (BCP 47's "undetermined"): never a guess.
std::string LibreTranslateDetectAnswer(const DetectionReply& reply);

// The JSON answer to `request`, whose q held `texts`: {"translatedText": ...} with
// "alternatives" when they were asked for and "detectedLanguage" (per text for an array) for
// "auto". A text the core did not translate (its detected language is served into no model of the
// target) is the error of a request of one text; in an array it comes back as sent, and "errors"
// (null for each text translated) says why.
absl::StatusOr<std::string> LibreTranslateAnswer(const LibreTranslateRequest& request,
                                                 const std::vector<std::string>& texts,
                                                 const TranslationCore::Reply& reply);

// The core's error for `request`, worded for its fields (alternatives become beam search
// options).
absl::Status LibreTranslateCoreError(const LibreTranslateRequest& request,
                                     const absl::Status& status);

// GET /languages: every language a served model translates from or into, each with the targets
// served from it. UNAVAILABLE while the models load.
absl::StatusOr<std::string> LibreTranslateLanguages(const TranslationCore& core);

// GET /frontend/settings: the limits and defaults a LibreTranslate client reads.
std::string LibreTranslateSettings(const TranslationCore& core);

// LibreTranslate's error answer: {"error": "message"}, and its HTTP status. LibreTranslate answers
// 400 for every bad request (an unknown language too, which the core would call NOT_FOUND), 403
// for a missing or invalid API key, 429 when it is too busy or over a key's limit and 500
// otherwise; mtserve keeps its own statuses where LibreTranslate has
// none (413 for a body over the limit, 503 while loading or draining, 504 past a deadline).
int LibreTranslateHttpStatus(const absl::Status& status);
std::string LibreTranslateErrorJson(const absl::Status& status);

// The display name of a language code ("en": "English"); the code itself when it is not in the
// table.
std::string LanguageName(absl::string_view code);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_LIBRETRANSLATE_LIBRETRANSLATE_API_H_
