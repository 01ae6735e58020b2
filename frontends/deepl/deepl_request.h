// DeepL's API request bodies (deepl_api.h) read into the core's requests: POST /v2/translate's
// fields as a form (application/x-www-form-urlencoded, `text` repeated) or as JSON, a glossary's
// (POST /v2/glossaries), a document's upload (multipart/form-data, POST /v2/document) and the
// document_key of its status and result calls; DeepL's language codes mapped onto the models'; the
// key a call presents (`Authorization: DeepL-Auth-Key KEY`, or the legacy auth_key field). Apart
// from the rest of the API because it needs no server: its fuzz target runs it alone.
#ifndef MTSERVE_FRONTENDS_DEEPL_DEEPL_REQUEST_H_
#define MTSERVE_FRONTENDS_DEEPL_DEEPL_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "serving/translation_request.h"

namespace mtserve {

// Called with the key a request presents (none: it presented none) before any other field is
// read; its error is the request's.
using DeepLKeyCheck = absl::FunctionRef<absl::Status(const std::optional<std::string>& key)>;

// The models' code of DeepL's language `code` (any case): a target's regional variants are the
// models' language (EN-GB and EN-US are "en", PT-BR and PT-PT "pt", ZH-HANS and ZH-HANT "zh"),
// every other code lower-cased ("DE" is "de"). INVALID_ARGUMENT naming `field` for what is not a
// language code (two or three letters, perhaps a hyphen and a variant of two to four letters or
// digits).
absl::StatusOr<std::string> ModelLanguageOfDeepL(absl::string_view code, absl::string_view field);

// The key of DeepL's header, `Authorization: DeepL-Auth-Key KEY` (the scheme in any case), or
// none (the HTTP front end then looks for mtserve's own: Bearer, X-API-Key).
std::optional<std::string> DeepLAuthKey(std::optional<absl::string_view> authorization);

// A POST /v2/translate request, as the core request it becomes and what its answer needs.
struct DeepLTranslateRequest {
  TranslationRequest core;  // Routed by language: core.source_language is "auto" without one.
  std::string source_lang;  // As given, upper-cased; "" when the language is to be detected.
  bool show_billed_characters = false;
};

// Reads a /v2/translate body: JSON (application/json, or any body starting with "{") or a form,
// within `bounds` (a form's fields count as values). `check_key` gets the body's auth_key, else
// `header_key`, before anything else. INVALID_ARGUMENT naming the field for: no text, a text that
// is not a string, no target_lang, a language that is not a code, tag_handling other than html or
// xml, split_sentences other than 0, 1 or nonewlines, formality more or less (mtserve's models
// have one register: default, prefer_more and prefer_less are taken), glossary_id without
// source_lang, a tag list with a name that is not one.
absl::StatusOr<DeepLTranslateRequest> ParseDeepLTranslate(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key);

// A POST /v2/glossaries request.
struct DeepLGlossaryRequest {
  std::optional<std::string> api_key;
  std::string name;
  std::string source_language;  // The models' codes.
  std::string target_language;
  std::string entries;  // As sent, in entries_format.
  bool csv = false;     // entries_format "csv" (default "tsv").
};

// Reads a /v2/glossaries body (JSON or a form, as /v2/translate's; the key likewise):
// INVALID_ARGUMENT naming the field when name, source_lang, target_lang or entries is missing or
// not a string, or entries_format is neither tsv nor csv. The entries are parsed by the caller
// (text/glossary_file.h).
absl::StatusOr<DeepLGlossaryRequest> ParseDeepLGlossary(
    absl::string_view body, absl::string_view content_type, const ValueBounds& bounds,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key);

// The document_key of a /v2/document/{document_id} or .../result call, from its body (JSON or a
// form; an empty body has none) or, failing that, `query` (the target's query string). The key as
// for /v2/translate. INVALID_ARGUMENT when document_key is missing.
struct DeepLDocumentKey {
  std::optional<std::string> api_key;
  std::string document_key;
};
absl::StatusOr<DeepLDocumentKey> ParseDeepLDocumentKey(absl::string_view body,
                                                       absl::string_view content_type,
                                                       absl::string_view query,
                                                       const ValueBounds& bounds,
                                                       const std::optional<std::string>& header_key,
                                                       DeepLKeyCheck check_key);

// A POST /v2/document upload: the file and its translation's request.
struct DeepLDocumentUpload {
  std::string content;
  std::string file_name;  // The part's filename, else the filename field.
  std::string media_type;
  TranslationRequest translation;  // Languages, glossary, the key; its texts are unused.
};

// Reads a /v2/document multipart/form-data body of at most `max_body_bytes`: parts file (with its
// filename, or a filename part), target_lang, source_lang, glossary_id, formality, output_format
// and auth_key (the key checked first, as for /v2/translate); others are ignored, as DeepL does.
// INVALID_ARGUMENT naming the part as for /v2/translate, and for an output_format other than the
// file's own extension (mtserve writes a file in its own format).
absl::StatusOr<DeepLDocumentUpload> ParseDeepLDocumentUpload(
    absl::string_view body, absl::string_view content_type, int64_t max_body_bytes,
    const std::optional<std::string>& header_key, DeepLKeyCheck check_key);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_DEEPL_DEEPL_REQUEST_H_
