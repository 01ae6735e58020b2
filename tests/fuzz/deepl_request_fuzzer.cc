// DeepL's API request bodies through their parsers (frontends/deepl/deepl_request.h): the same
// bytes as a /v2/translate body (ParseDeepLTranslate), a /v2/glossaries body
// (ParseDeepLGlossary), a document's status call (ParseDeepLDocumentKey, the bytes also as its
// query) and a /v2/document upload (ParseDeepLDocumentUpload); as JSON, as a form, as multipart
// and with no Content-Type (the input's first byte chooses: j, f, m, anything else), and with or
// without a header key (second byte). The key check accepts only the key "good". Any bytes give a
// request the core can take, or INVALID_ARGUMENT, or the key check's own error, on the stack of
// an HTTP request thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "frontends/deepl/deepl_request.h"
#include "serving/request_limits.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"

namespace {

absl::string_view ContentType(char c) {
  switch (c) {
    case 'j':
      return "application/json";
    case 'f':
      return "application/x-www-form-urlencoded";
    case 'm':
      return "multipart/form-data; boundary=x";
    default:
      return "";
  }
}

// The key check of one parse: called once, first; only "good" (or none) passes.
struct KeyCheck {
  bool checked = false;
  std::optional<std::string> key;
  absl::Status operator()(const std::optional<std::string>& presented) {
    FUZZ_CHECK(!checked);
    checked = true;
    key = presented;
    return presented.has_value() && *presented != "good"
               ? absl::UnauthenticatedError("not the good key")
               : absl::OkStatus();
  }
};

// A refusal is INVALID_ARGUMENT, or the key's own after it was checked.
void CheckRefusal(const absl::Status& status, const KeyCheck& check) {
  FUZZ_CHECK(absl::IsInvalidArgument(status) ||
             (absl::IsUnauthenticated(status) && check.checked && check.key != "good"));
}

// A language the models know: lower-case letters only.
bool IsModelLanguage(const std::string& code) {
  if (code.size() < 2 || code.size() > 3) return false;
  for (char c : code) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

void CheckTranslate(absl::string_view content_type, const std::optional<std::string>& header_key,
                    absl::string_view body) {
  KeyCheck check;
  const absl::StatusOr<mtserve::DeepLTranslateRequest> request = mtserve::ParseDeepLTranslate(
      body, content_type, mtserve::RequestValueBounds(mtserve::RequestLimits{}), header_key,
      [&check](const std::optional<std::string>& key) { return check(key); });
  if (!request.ok()) return CheckRefusal(request.status(), check);
  const mtserve::TranslationRequest& core = request->core;
  // Only a request whose key passed, carrying that key to the core.
  FUZZ_CHECK(check.checked && core.api_key == check.key);
  FUZZ_CHECK(!core.api_key.has_value() || *core.api_key == "good");
  // Routed by languages the models know, never by model; texts named as DeepL names them.
  FUZZ_CHECK(core.model.empty() && !core.texts.empty());
  FUZZ_CHECK(IsModelLanguage(core.target_language));
  FUZZ_CHECK(core.source_language == "auto"
                 ? request->source_lang.empty()
                 : IsModelLanguage(core.source_language) && !request->source_lang.empty());
  FUZZ_CHECK(core.texts_field == "text" && core.target_field == "target_lang");
  FUZZ_CHECK(core.options.format == mtserve::RequestedOptions::kPlainText ||
             core.options.format == mtserve::RequestedOptions::kHtml);
  // A glossary needs a source language; ignored tags need markup.
  FUZZ_CHECK(core.options.glossary_id.empty() || core.source_language != "auto");
  FUZZ_CHECK(core.options.ignore_tags.empty() ||
             core.options.format == mtserve::RequestedOptions::kHtml);
  for (const std::string& tag : core.options.ignore_tags) {
    FUZZ_CHECK(!tag.empty() && tag.size() <= 64 && tag.find(',') == std::string::npos);
  }
  FUZZ_CHECK(content_type.substr(0, 9) != "multipart");
}

void CheckGlossary(absl::string_view content_type, const std::optional<std::string>& header_key,
                   absl::string_view body) {
  KeyCheck check;
  const absl::StatusOr<mtserve::DeepLGlossaryRequest> request = mtserve::ParseDeepLGlossary(
      body, content_type, mtserve::RequestValueBounds(mtserve::RequestLimits{}), header_key,
      [&check](const std::optional<std::string>& key) { return check(key); });
  if (!request.ok()) return CheckRefusal(request.status(), check);
  FUZZ_CHECK(check.checked && request->api_key == check.key);
  FUZZ_CHECK(!request->name.empty() && !request->entries.empty());
  FUZZ_CHECK(IsModelLanguage(request->source_language) &&
             IsModelLanguage(request->target_language));
}

void CheckDocumentKey(absl::string_view content_type, const std::optional<std::string>& header_key,
                      absl::string_view body) {
  // The bytes as the body, and as the query of a call with no body.
  for (const bool as_query : {false, true}) {
    KeyCheck check;
    const absl::StatusOr<mtserve::DeepLDocumentKey> key = mtserve::ParseDeepLDocumentKey(
        as_query ? absl::string_view() : body, content_type, as_query ? body : absl::string_view(),
        mtserve::RequestValueBounds(mtserve::RequestLimits{}), header_key,
        [&check](const std::optional<std::string>& key) { return check(key); });
    if (!key.ok()) {
      CheckRefusal(key.status(), check);
      continue;
    }
    FUZZ_CHECK(check.checked && key->api_key == check.key && !key->document_key.empty());
  }
}

void CheckUpload(absl::string_view content_type, const std::optional<std::string>& header_key,
                 absl::string_view body) {
  KeyCheck check;
  const absl::StatusOr<mtserve::DeepLDocumentUpload> upload = mtserve::ParseDeepLDocumentUpload(
      body, content_type, 1 << 20, header_key,
      [&check](const std::optional<std::string>& key) { return check(key); });
  if (!upload.ok()) return CheckRefusal(upload.status(), check);
  // Only multipart bodies hold a document, whose bytes are the body's.
  FUZZ_CHECK(content_type.substr(0, 9) == "multipart");
  FUZZ_CHECK(check.checked && upload->translation.api_key == check.key);
  FUZZ_CHECK(upload->content.size() <= body.size());
  FUZZ_CHECK(IsModelLanguage(upload->translation.target_language));
  FUZZ_CHECK(upload->translation.source_language == "auto" ||
             IsModelLanguage(upload->translation.source_language));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const absl::string_view content_type = ContentType(bytes[0]);
  const std::optional<std::string> header_key = bytes[1] == 'k' ? std::optional<std::string>("good")
                                                : bytes[1] == 'b'
                                                    ? std::optional<std::string>("bad")
                                                    : std::nullopt;
  const absl::string_view body = bytes.substr(2);
  // On the stack the server parses it on (an HTTP request thread's).
  mtserve::RunOnRequestThreadStack([&] {
    CheckTranslate(content_type, header_key, body);
    CheckGlossary(content_type, header_key, body);
    CheckDocumentKey(content_type, header_key, body);
    CheckUpload(content_type, header_key, body);
  });
  return 0;
}
