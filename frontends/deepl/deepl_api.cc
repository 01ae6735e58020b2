// DeepL's API over the core: its answers and errors (deepl_api.h).
#include "frontends/deepl/deepl_api.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/excerpt.h"
#include "frontends/http/http_status.h"
#include "frontends/libretranslate/libretranslate_api.h"
#include "nlohmann/json.hpp"
#include "serving/state/job_id.h"
#include "text/glossary_file.h"

namespace mtserve {
namespace {

using Json = nlohmann::json;

// Answers carry the texts the model wrote: should one not be UTF-8, it is replaced rather than
// the whole answer failing.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// DeepL's codes of a target language: English and Portuguese by their regional variants, as
// DeepL lists them (and as its clients require), others upper-cased.
std::vector<std::pair<std::string, std::string>> TargetCodes(const std::string& language) {
  if (language == "en") return {{"EN-GB", "English (British)"}, {"EN-US", "English (American)"}};
  if (language == "pt") {
    return {{"PT-BR", "Portuguese (Brazilian)"}, {"PT-PT", "Portuguese (European)"}};
  }
  return {{absl::AsciiStrToUpper(language), LanguageName(language)}};
}

// The source language of the model `name` serves, upper-cased ("" if it is not in `models`).
std::string ModelSource(const ModelRepository::Catalog* models, const std::string& name) {
  if (models == nullptr) return "";
  for (const ModelRepository::Slot& slot : models->slots) {
    if (slot.name == name) return absl::AsciiStrToUpper(slot.config.source_lang);
  }
  return "";
}

// A source term's lines in `entries` beside the entries parsed from them: a source given twice
// with the same target is merged by the parser, so lines are counted (blank ones skipped; no term
// holds a line break).
int64_t EntryLines(absl::string_view entries) {
  int64_t lines = 0;
  for (absl::string_view line : absl::StrSplit(entries, '\n')) {
    if (!absl::StripAsciiWhitespace(line).empty() && line != "\xEF\xBB\xBF") ++lines;
  }
  return lines;
}

}  // namespace

absl::Status DeepLCheckKey(const TranslationCore& core, const std::optional<std::string>& key) {
  absl::Status status = core.CheckApiKey(key, /*charge_request=*/false);
  if (!status.ok() && !key.has_value()) {
    return absl::UnauthenticatedError(
        "an API key is required: send it in an Authorization: DeepL-Auth-Key KEY header");
  }
  return status;
}

absl::StatusOr<std::string> DeepLTranslateAnswer(const DeepLTranslateRequest& request,
                                                 const TranslationCore& core,
                                                 const TranslationCore::Reply& reply) {
  const std::shared_ptr<const ModelRepository::Catalog> models = core.models();
  Json translations = Json::array();
  for (size_t i = 0; i < reply.translations.size(); ++i) {
    const TextTranslation& result = reply.translations[i];
    const RoutedText* routed = i < reply.routed.size() ? &reply.routed[i] : nullptr;
    if (routed != nullptr && !routed->status.ok()) return routed->status;
    std::string source = request.source_lang;
    if (source.empty() && routed != nullptr) {
      source = routed->detected.has_value() && routed->detected->confidence > 0
                   ? absl::AsciiStrToUpper(routed->detected->language)
                   : ModelSource(models.get(), routed->model);
    }
    const std::string text = result.hypotheses.empty() ? "" : result.hypotheses.front().text;
    Json translation = {{"detected_source_language", source}, {"text", text}};
    if (request.show_billed_characters) {
      translation["billed_characters"] = CountCharacters(request.core.texts[i]);
    }
    translations.push_back(std::move(translation));
  }
  return Dump(Json{{"translations", std::move(translations)}});
}

absl::StatusOr<std::string> DeepLLanguages(const TranslationCore& core, absl::string_view type) {
  const std::string kind = absl::AsciiStrToLower(type);
  if (kind != "" && kind != "source" && kind != "target") {
    return absl::InvalidArgumentError(absl::StrCat("Bad request: parameter 'type' is \"",
                                                   Excerpt(type), "\"; it is source or target"));
  }
  const std::shared_ptr<const LanguageRoutes> routes = core.routes();
  if (routes == nullptr) return absl::UnavailableError("the server is loading its models");
  std::set<std::string> sources;
  std::set<std::string> targets;
  for (const auto& [code, to] : routes->Targets()) {
    if (to.empty()) continue;
    sources.insert(code);
    targets.insert(to.begin(), to.end());
  }
  Json languages = Json::array();
  if (kind == "target") {
    for (const std::string& language : targets) {
      for (const auto& [code, name] : TargetCodes(language)) {
        languages.push_back({{"language", code}, {"name", name}, {"supports_formality", false}});
      }
    }
  } else {
    for (const std::string& language : sources) {
      languages.push_back(
          {{"language", absl::AsciiStrToUpper(language)}, {"name", LanguageName(language)}});
    }
  }
  return Dump(languages);
}

std::string DeepLUsageAnswer(const CharacterUsage& usage) {
  return Dump(Json{{"character_count", usage.characters_today},
                   {"character_limit", usage.characters_per_day.value_or(kDeepLNoCharacterLimit)}});
}

absl::StatusOr<std::string> DeepLGlossaryPairs(const TranslationCore& core) {
  const std::shared_ptr<const LanguageRoutes> routes = core.routes();
  if (routes == nullptr) return absl::UnavailableError("the server is loading its models");
  Json pairs = Json::array();
  for (const auto& [source, targets] : routes->Targets()) {
    for (const std::string& target : targets) {
      pairs.push_back({{"source_lang", source}, {"target_lang", target}});
    }
  }
  return Dump(Json{{"supported_languages", std::move(pairs)}});
}

absl::StatusOr<Glossary> DeepLGlossaryOf(const DeepLGlossaryRequest& request,
                                         const GlossaryLimits& limits) {
  GlossaryFileOptions options;
  options.format = request.csv ? GlossaryFileFormat::kCsv : GlossaryFileFormat::kTsv;
  options.limits = GlossaryFileLimitsFor(limits.max_entries, limits.terms);
  options.source_language = request.source_language;
  options.target_language = request.target_language;
  absl::StatusOr<std::vector<GlossaryEntry>> entries =
      ParseGlossaryFile(request.entries, options, "parameter 'entries'");
  if (!entries.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Bad request: ", entries.status().message()));
  }
  // DeepL's glossaries hold one target per source: a source listed again is refused, not merged.
  for (const GlossaryEntry& entry : *entries) {
    if (entry.targets.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Bad request: parameter 'entries' lists the source \"", Excerpt(entry.source),
          "\" more than once (with \"", Excerpt(entry.targets[0]), "\" and \"",
          Excerpt(entry.targets[1]), "\"); each source term is listed once"));
    }
  }
  if (EntryLines(request.entries) > static_cast<int64_t>(entries->size())) {
    return absl::InvalidArgumentError(
        "Bad request: parameter 'entries' lists a source term more than once; each source term "
        "is listed once");
  }
  if (entries->empty()) {
    return absl::InvalidArgumentError("Bad request: parameter 'entries' holds no entry");
  }
  Glossary glossary;
  glossary.info.name = request.name;
  glossary.info.source_language = request.source_language;
  glossary.info.target_language = request.target_language;
  glossary.info.entry_count = static_cast<int64_t>(entries->size());
  glossary.entries = *std::move(entries);
  return glossary;
}

std::string DeepLGlossaryJson(const GlossaryInfo& info) {
  return Dump(Json{
      {"glossary_id", info.id},
      {"name", info.name},
      {"ready", true},
      {"source_lang", info.source_language},
      {"target_lang", info.target_language},
      {"creation_time",
       absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", info.created, absl::UTCTimeZone())},
      {"entry_count", info.entry_count},
  });
}

std::string DeepLGlossaryListJson(const std::vector<GlossaryInfo>& glossaries) {
  Json list = Json::array();
  for (const GlossaryInfo& info : glossaries) list.push_back(Json::parse(DeepLGlossaryJson(info)));
  return Dump(Json{{"glossaries", std::move(list)}});
}

std::string DeepLDocumentAnswer(absl::string_view job_id) {
  const size_t half = job_id.size() / 2;
  return Dump(Json{{"document_id", std::string(job_id.substr(0, half))},
                   {"document_key", std::string(job_id.substr(half))}});
}

std::string DeepLJobId(absl::string_view document_id, absl::string_view document_key) {
  return absl::StrCat(document_id, document_key);
}

std::string DeepLDocumentStatus(absl::string_view document_id, const JobRecord& record) {
  Json status = {{"document_id", std::string(document_id)}};
  switch (record.state) {
    case JobState::kQueued:
      status["status"] = "queued";
      break;
    case JobState::kRunning:
      status["status"] = "translating";
      break;
    case JobState::kDone:
      status["status"] = "done";
      break;
    case JobState::kFailed:
    case JobState::kCancelled:
      status["status"] = "error";
      status["error_message"] = std::string(record.error.message());
      break;
  }
  return Dump(status);
}

int DeepLHttpStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return IsCharacterQuotaExhausted(status) ? 456 : 429;
    default:
      return HttpStatusFor(status.code());
  }
}

std::string DeepLErrorJson(const absl::Status& status) {
  return Dump(Json{{"message", std::string(status.message())}});
}

}  // namespace mtserve
