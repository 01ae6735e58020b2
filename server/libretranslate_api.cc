#include "server/libretranslate_api.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "civetweb.h"
#include "model/excerpt.h"
#include "nlohmann/json.hpp"
#include "server/http_status.h"

namespace mtserve {
namespace {

using Json = nlohmann::json;

// Answers carry the texts the model wrote: should one not be UTF-8, it is replaced rather than
// the whole answer failing.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// A request's fields, whichever way they came. A form's values are strings; JSON's keep their
// types, so that q may be an array.
absl::StatusOr<Json> ParseBody(absl::string_view body, absl::string_view content_type) {
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
    Json json = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) {
      return absl::InvalidArgumentError(
          "Invalid request: the body is not a JSON object (nor a form: its Content-Type is not "
          "application/x-www-form-urlencoded)");
    }
    return json;
  }
  Json fields = Json::object();
  for (absl::string_view pair : absl::StrSplit(body, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> name_value =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    auto decode = [](absl::string_view text) {
      std::string out(text.size() + 1, '\0');
      const int n = mg_url_decode(text.data(), static_cast<int>(text.size()), out.data(),
                                  static_cast<int>(out.size()), /*is_form_url_encoded=*/1);
      out.resize(n < 0 ? 0 : static_cast<size_t>(n));
      return out;
    };
    const std::string name = decode(name_value.first);
    // The first of repeated names, as LibreTranslate (Flask) takes it.
    if (!fields.contains(name)) fields[name] = decode(name_value.second);
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

std::string PairName(const ServedModel& served) {
  const ModelConfig& c = served.model->config();
  return absl::StrCat(c.source_lang, "->", c.target_lang, " (", served.name, ")");
}

std::string ServedPairs(const std::vector<ServedModel>& models) {
  return absl::StrJoin(models, ", ", [](std::string* out, const ServedModel& served) {
    out->append(PairName(served));
  });
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

absl::StatusOr<LibreTranslateRequest> ParseLibreTranslateRequest(
    absl::string_view body, absl::string_view content_type,
    const std::optional<std::string>& header_key, const TranslationCore& core) {
  absl::StatusOr<Json> fields = ParseBody(body, content_type);
  if (!fields.ok()) return fields.status();
  LibreTranslateRequest request;
  TranslationCore::Request& core_request = request.core;
  // LibreTranslate's clients send api_key (some apiKey); a header works too. Checked first, so a
  // caller without a key learns nothing else; the core checks it again and charges it.
  core_request.api_key = header_key;
  for (const char* name : {"api_key", "apiKey"}) {
    auto key = fields->find(name);
    if (key != fields->end() && key->is_string() && !key->get_ref<const std::string&>().empty()) {
      core_request.api_key = key->get<std::string>();
      break;
    }
  }
  if (absl::Status status = core.CheckApiKey(core_request.api_key, /*charge_request=*/false);
      !status.ok()) {
    if (!core_request.api_key.has_value()) {
      return absl::UnauthenticatedError(
          "an API key is required: send it as api_key (or in an Authorization: Bearer header)");
    }
    return status;
  }
  // Errors name the texts as the request does. (Assigning the literal itself trips GCC 12's
  // false -Wrestrict warning, bug 105329.)
  core_request.texts_field = std::string("q");

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
  absl::StatusOr<std::string> target = StringField(*fields, "target");
  if (!target.ok()) return target.status();

  if (auto format = fields->find("format"); format != fields->end() && !format->is_null()) {
    const std::string value = format->is_string() ? format->get<std::string>() : format->dump();
    if (value == "html") {
      core_request.options.format = RequestedOptions::kHtml;
    } else if (value != "text" && !value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid request: format is \"", Excerpt(value), "\"; it is text or html"));
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
                                                     Excerpt(alternatives->dump()),
                                                     "; it is a number of 0 or more"));
    }
    request.alternatives = n;
  }
  if (request.alternatives > 0) {
    // Alternatives are the next best hypotheses of a beam search wide enough to hold them; the
    // core checks the beam against --max_beam_size.
    core_request.options.beam_size = static_cast<uint32_t>(request.alternatives) + 1;
    core_request.options.num_hypotheses = static_cast<uint32_t>(request.alternatives) + 1;
  }
  // Routing: the first served model for the pair; for "auto", the one source language that
  // translates into the target.
  const std::vector<ServedModel> models = core.models();
  if (models.empty()) return absl::UnavailableError("the server is loading its models");
  const ServedModel* chosen = nullptr;
  if (*source == "auto") {
    std::vector<const ServedModel*> candidates;
    std::set<std::string> sources;
    for (const ServedModel& served : models) {
      if (served.model->config().target_lang != *target) continue;
      if (sources.insert(served.model->config().source_lang).second) {
        candidates.push_back(&served);
      }
    }
    if (candidates.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid request: source \"auto\" cannot choose between the models that translate into ",
          Excerpt(*target), ": ",
          absl::StrJoin(
              candidates, ", ",
              [](std::string* out, const ServedModel* served) { out->append(PairName(*served)); }),
          " (mtserve does not detect languages); give the source language"));
    }
    if (!candidates.empty()) {
      chosen = candidates.front();
      request.detected_language = chosen->model->config().source_lang;
    }
  } else {
    for (const ServedModel& served : models) {
      const ModelConfig& c = served.model->config();
      if (c.source_lang == *source && c.target_lang == *target) {
        chosen = &served;
        break;
      }
    }
  }
  if (chosen == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid request: no model here translates ",
                                                   Excerpt(*source), " to ", Excerpt(*target),
                                                   "; the pairs served: ", ServedPairs(models)));
  }
  core_request.model = chosen->name;
  return request;
}

std::string LibreTranslateAnswer(const LibreTranslateRequest& request,
                                 const TranslationCore::Reply& reply) {
  Json translated = Json::array();
  Json alternatives = Json::array();
  for (const TranslationResult& result : reply.translations) {
    translated.push_back(result.hypotheses.empty() ? "" : result.hypotheses.front().text);
    Json others = Json::array();
    for (size_t i = 1; i < result.hypotheses.size(); ++i) {
      others.push_back(result.hypotheses[i].text);
    }
    alternatives.push_back(std::move(others));
  }
  Json answer = Json::object();
  const bool array = request.q_is_array;
  answer["translatedText"] = array ? translated : translated.at(0);
  if (request.alternatives > 0) answer["alternatives"] = array ? alternatives : alternatives.at(0);
  if (!request.detected_language.empty()) {
    // Not detected: the only source language served into the target, hence certain.
    const Json detected = {{"confidence", 100.0}, {"language", request.detected_language}};
    answer["detectedLanguage"] =
        array ? Json(std::vector<Json>(reply.translations.size(), detected)) : detected;
  }
  return Dump(answer);
}

absl::StatusOr<std::string> LibreTranslateLanguages(const TranslationCore& core) {
  const std::vector<ServedModel> models = core.models();
  if (models.empty()) return absl::UnavailableError("the server is loading its models");
  // Every language a model reads or writes: LibreTranslate's clients check a target against
  // these codes too.
  std::map<std::string, std::set<std::string>> targets;
  for (const ServedModel& served : models) {
    const ModelConfig& c = served.model->config();
    if (c.source_lang.empty() || c.target_lang.empty()) continue;  // Not routable by language.
    targets[c.source_lang].insert(c.target_lang);
    targets[c.target_lang];
  }
  Json languages = Json::array();
  for (const auto& [code, to] : targets) {
    languages.push_back({{"code", code},
                         {"name", LanguageName(code)},
                         {"targets", std::vector<std::string>(to.begin(), to.end())}});
  }
  return Dump(languages);
}

std::string LibreTranslateSettings(const TranslationCore& core) {
  const std::vector<ServedModel> models = core.models();
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
      {"filesTranslation", false},
      {"supportedFilesFormat", Json::array()},
  };
  if (!models.empty()) {
    const ModelConfig& c = models.front().model->config();
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
