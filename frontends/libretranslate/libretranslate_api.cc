#include "frontends/libretranslate/libretranslate_api.h"

#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/excerpt.h"
#include "frontends/http/http_status.h"
#include "nlohmann/json.hpp"
#include "text/file_format.h"

namespace mtserve {
namespace {

using Json = nlohmann::json;

// Answers carry the texts the model wrote: should one not be UTF-8, it is replaced rather than
// the whole answer failing.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// The key's check before a body's other fields are read: the core's, worded for LibreTranslate's
// clients when no key was given.
absl::Status CheckKey(const TranslationCore& core, const std::optional<std::string>& key) {
  absl::Status status = core.CheckApiKey(key, /*charge_request=*/false);
  if (!status.ok() && !key.has_value()) {
    return absl::UnauthenticatedError(
        "an API key is required: send it as api_key (or in an Authorization: Bearer header)");
  }
  return status;
}

}  // namespace

std::string LanguageName(absl::string_view code) {
  // LibreTranslate's names for the languages most models serve.
  static const auto* const kNames = new std::map<std::string, std::string, std::less<>>{
      {"ar", "Arabic"},     {"bg", "Bulgarian"},  {"ca", "Catalan"},    {"cs", "Czech"},
      {"da", "Danish"},     {"de", "German"},     {"el", "Greek"},      {"en", "English"},
      {"es", "Spanish"},    {"et", "Estonian"},   {"fa", "Persian"},    {"fi", "Finnish"},
      {"fr", "French"},     {"he", "Hebrew"},     {"hi", "Hindi"},      {"hu", "Hungarian"},
      {"id", "Indonesian"}, {"it", "Italian"},    {"ja", "Japanese"},   {"ko", "Korean"},
      {"lt", "Lithuanian"}, {"lv", "Latvian"},    {"nl", "Dutch"},      {"no", "Norwegian"},
      {"pl", "Polish"},     {"pt", "Portuguese"}, {"ro", "Romanian"},   {"ru", "Russian"},
      {"sk", "Slovak"},     {"sl", "Slovenian"},  {"sv", "Swedish"},    {"th", "Thai"},
      {"tr", "Turkish"},    {"uk", "Ukrainian"},  {"vi", "Vietnamese"}, {"zh", "Chinese"},
  };
  auto it = kNames->find(code);
  return it == kNames->end() ? std::string(code) : it->second;
}

absl::StatusOr<DetectionRequest> ParseLibreTranslateDetect(
    absl::string_view body, absl::string_view content_type,
    const std::optional<std::string>& header_key, const TranslationCore& core) {
  return ParseLibreTranslateDetectFields(
      body, content_type, RequestValueBounds(core.limits()), header_key,
      [&core](const std::optional<std::string>& key) { return CheckKey(core, key); });
}

std::string LibreTranslateDetectAnswer(const DetectionReply& reply) {
  Json answer = Json::array();
  for (const std::vector<DetectedLanguage>& text : reply.texts) {
    for (const DetectedLanguage& language : text) {
      answer.push_back({{"confidence", language.confidence}, {"language", language.language}});
    }
    if (text.empty()) answer.push_back({{"confidence", 0.0}, {"language", "und"}});
  }
  return Dump(answer);
}

absl::StatusOr<LibreTranslateRequest> ParseLibreTranslateRequest(
    absl::string_view body, absl::string_view content_type,
    const std::optional<std::string>& header_key, const TranslationCore& core) {
  absl::StatusOr<LibreTranslateRequest> request = ParseLibreTranslateFields(
      body, content_type, RequestValueBounds(core.limits()), header_key,
      [&core](const std::optional<std::string>& key) { return CheckKey(core, key); });
  if (!request.ok()) return request.status();
  // The core routes each text by these (and detects each text's language for "auto").
  request->core.source_language = request->source;
  request->core.target_language = request->target;
  request->core.source_field = "source";
  request->core.target_field = "target";
  return request;
}

absl::StatusOr<std::string> LibreTranslateAnswer(const LibreTranslateRequest& request,
                                                 const std::vector<std::string>& texts,
                                                 const TranslationCore::Reply& reply) {
  const bool array = request.q_is_array;
  // A single text that was not translated is the request's error; in an array, it comes back as
  // it was sent, with its error in `errors`, and the others are translated.
  if (!array && !reply.routed.empty() && !reply.routed.front().status.ok()) {
    return reply.routed.front().status;
  }
  Json translated = Json::array();
  Json alternatives = Json::array();
  Json detected = Json::array();
  Json errors = Json::array();
  bool failed = false;
  for (size_t i = 0; i < reply.translations.size(); ++i) {
    const TextTranslation& result = reply.translations[i];
    const RoutedText* routed = i < reply.routed.size() ? &reply.routed[i] : nullptr;
    if (routed != nullptr && !routed->status.ok()) {
      failed = true;
      translated.push_back(texts[i]);
      errors.push_back(std::string(routed->status.message()));
    } else {
      translated.push_back(result.hypotheses.empty() ? "" : result.hypotheses.front().text);
      errors.push_back(nullptr);
    }
    Json others = Json::array();
    for (size_t k = 1; k < result.hypotheses.size(); ++k)
      others.push_back(result.hypotheses[k].text);
    alternatives.push_back(std::move(others));
    if (routed != nullptr && routed->detected.has_value()) {
      detected.push_back(
          {{"confidence", routed->detected->confidence}, {"language", routed->detected->language}});
    }
  }
  Json answer = Json::object();
  answer["translatedText"] = array ? translated : translated.at(0);
  if (request.alternatives > 0) answer["alternatives"] = array ? alternatives : alternatives.at(0);
  if (!detected.empty()) answer["detectedLanguage"] = array ? detected : detected.at(0);
  if (failed) answer["errors"] = errors;
  return Dump(answer);
}

absl::StatusOr<std::string> LibreTranslateLanguages(const TranslationCore& core) {
  // Every language a model reads or writes (LibreTranslate's clients check a target against
  // these codes too), with the targets a model or a chain of them (pivot translation)
  // translates it into.
  const std::shared_ptr<const LanguageRoutes> routes = core.routes();
  if (routes == nullptr) return absl::UnavailableError("the server is loading its models");
  Json languages = Json::array();
  for (const auto& [code, to] : routes->Targets()) {
    languages.push_back({{"code", code}, {"name", LanguageName(code)}, {"targets", to}});
  }
  return Dump(languages);
}

std::string LibreTranslateSettings(const TranslationCore& core) {
  const std::shared_ptr<const ModelRepository::Catalog> models = core.models();
  auto language = [](const std::string& code) {
    return Json{{"code", code}, {"name", LanguageName(code)}};
  };
  Json settings = {
      // LibreTranslate counts characters; mtserve's limit is in bytes, which is never fewer.
      {"charLimit", core.limits().max_text_bytes},
      // How long the web UI waits after a keystroke before it translates, in milliseconds.
      {"frontendTimeout", 500},
      {"apiKeys", core.requires_api_keys()},
      {"keyRequired", core.requires_api_keys()},
      {"suggestions", false},
      // POST /translate_file: the extensions of the formats the file API translates
      // (text/file_format.h), as LibreTranslate lists its own.
      {"filesTranslation", true},
      {"supportedFilesFormat", TranslatedFileExtensions()},
  };
  if (models != nullptr && !models->served.empty()) {
    const ModelConfig& c = models->slots[models->served.front()].config;
    settings["language"] = {{"source", language(c.source_lang)},
                            {"target", language(c.target_lang)}};
  }
  return Dump(settings);
}

absl::Status LibreTranslateCoreError(const LibreTranslateRequest& request,
                                     const absl::Status& status) {
  // The core names the options the request became; say which field they came from.
  if (request.alternatives > 0 && status.code() == absl::StatusCode::kInvalidArgument &&
      absl::StrContains(status.message(), "options.")) {
    return absl::InvalidArgumentError(
        absl::StrCat("alternatives ", request.alternatives, " asks for a beam search of ",
                     request.alternatives + 1, " hypotheses: ", status.message()));
  }
  return status;
}

int LibreTranslateHttpStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 403;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return HttpStatusFor(status.code());
    default:
      return 500;
  }
}

std::string LibreTranslateErrorJson(const absl::Status& status) {
  return Dump(Json{{"error", std::string(status.message())}});
}

}  // namespace mtserve
