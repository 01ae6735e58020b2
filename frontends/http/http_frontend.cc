// The HTTP front end's routes (http_frontend.h): which route a request takes, the checks made on
// its head, and each route's mapping between JSON and the core.
#include "frontends/http/http_frontend.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "base/excerpt.h"
#include "base/status_macros.h"
#include "base/url_form.h"
#include "frontends/deepl/deepl_api.h"
#include "frontends/http/embedded_files.h"
#include "frontends/http/file_upload.h"
#include "frontends/http/http_json.h"
#include "frontends/http/http_status.h"
#include "frontends/http/route_path.h"
#include "frontends/libretranslate/libretranslate_api.h"
#include "frontends/proto/glossary_mapping.h"
#include "frontends/proto/proto_mapping.h"
#include "frontends/proto/request_mapping.h"
#include "nlohmann/json.hpp"
#include "serving/auth/api_key_auth.h"
#include "serving/auth/api_key_quota.h"
#include "serving/stream_window.h"
#include "text/glossary_file.h"

namespace mtserve {
namespace {

// The header that gives a request's deadline, as gRPC's timeout does: "2.5s", "500ms", "1m", or
// plain seconds ("2.5").
constexpr char kTimeoutHeader[] = "X-Request-Timeout";

constexpr char kJson[] = "application/json";
constexpr char kNdjson[] = "application/x-ndjson";

// The files served as they are (frontends/http/embedded_files.h): the translation page and the
// API's description. Answered while loading and draining, as the health paths, and not counted.
struct StaticFile {
  absl::string_view path;
  absl::string_view file;  // EmbeddedFile's name.
  absl::string_view content_type;
};
constexpr StaticFile kStaticFiles[] = {
    {"/", "web/index.html", "text/html; charset=utf-8"},
    {"/web/app.js", "web/app.js", "text/javascript; charset=utf-8"},
    {"/web/style.css", "web/style.css", "text/css; charset=utf-8"},
    {"/openapi.json", "openapi.json", kJson},
};

// The page loads nothing from elsewhere and runs no inline script: a browser refuses any other
// source, should an injection ever slip through.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// With --api_keys_file, which key is checked on the head, before the body is read (so that a
// client without a key cannot make the server read and parse a body): the headers' key, or
// (LibreTranslate's /translate, whose key may be in the body) the headers' key when there is one;
// the body's key is checked once the body is parsed. None is charged here: the core charges the
// request.
enum class KeyCheck { kNone, kHeader, kHeaderIfPresent };

// The APIs the routes belong to.
enum class Api { kNative, kLibreTranslate, kDeepL };

struct ApiRoute {
  absl::string_view path;
  absl::string_view method;
  void (HttpFrontend::*handle)(const HttpRequest&, HttpReply&);
  Api api;  // Whose API: its error shape and how it presents a key.
  KeyCheck key_check;
  absl::string_view counted_as;  // The requests metric's method label; empty: not counted.
  bool file_body = false;        // Its body carries a file (HttpService::TakesFileBody).
};

// The route of `path` and `method`; with `method` empty, the first route of `path`.
const ApiRoute* FindRoute(absl::string_view path, absl::string_view method = "");

// An answer the browser and caches take as it is.
HttpAnswer Answer(int status, absl::string_view content_type, std::string body) {
  HttpAnswer answer;
  answer.status = status;
  answer.content_type = std::string(content_type);
  answer.body = std::move(body);
  answer.headers = {{"Cache-Control", "no-store"}, {"X-Content-Type-Options", "nosniff"}};
  return answer;
}

// `status` in the shape of `path`'s API; `http_status` 0: the status's own.
HttpAnswer ErrorAnswer(absl::string_view path, const absl::Status& status, int http_status = 0) {
  const ApiRoute* route = FindRoute(path);
  // A path under /v2/ that is no route is still answered in DeepL's shape.
  const Api api = route != nullptr                 ? route->api
                  : absl::StartsWith(path, "/v2/") ? Api::kDeepL
                                                   : Api::kNative;
  HttpAnswer answer =
      api == Api::kLibreTranslate
          ? Answer(http_status != 0 ? http_status : LibreTranslateHttpStatus(status), kJson,
                   LibreTranslateErrorJson(status))
      : api == Api::kDeepL ? Answer(http_status != 0 ? http_status : DeepLHttpStatus(status), kJson,
                                    DeepLErrorJson(status))
                           : Answer(http_status != 0 ? http_status : HttpStatusFor(status.code()),
                                    kJson, ErrorJson(status) + "\n");
  // How to authenticate, and when to come back over an API key's limit.
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    answer.headers.emplace_back("WWW-Authenticate",
                                api == Api::kDeepL ? "DeepL-Auth-Key" : "Bearer");
  }
  if (const absl::Duration wait = RetryAfter(status); wait > absl::ZeroDuration()) {
    answer.headers.emplace_back("Retry-After", absl::StrCat(absl::ToInt64Seconds(wait)));
  }
  return answer;
}

// 405, with the methods the path takes (e.g. "GET, HEAD") in Allow.
HttpAnswer MethodNotAllowed(const HttpRequest& head, absl::string_view allowed) {
  HttpAnswer answer =
      ErrorAnswer(head.path(),
                  absl::UnimplementedError(absl::StrCat(head.path(), " takes ", allowed, ", not ",
                                                        Excerpt(head.method()))),
                  405);
  answer.headers.emplace_back("Allow", std::string(allowed));
  return answer;
}

HttpAnswer MessageAnswer(absl::string_view path, const google::protobuf::Message& message) {
  absl::StatusOr<std::string> json = ToJson(message);
  if (!json.ok()) return ErrorAnswer(path, json.status());
  return Answer(200, kJson, *json + "\n");
}

// The API key of the request's headers: "Authorization: Bearer KEY" or "X-API-Key: KEY".
std::optional<std::string> HeaderApiKey(const HttpRequest& request) {
  return PresentedApiKey(request.header("Authorization"), request.header("X-API-Key"));
}

// The deadline of kTimeoutHeader, counted from the request's arrival; INVALID_ARGUMENT if it is
// not a duration.
absl::StatusOr<absl::Time> Deadline(const HttpRequest& request) {
  const std::optional<absl::string_view> value = request.header(kTimeoutHeader);
  if (!value.has_value()) return absl::InfiniteFuture();
  absl::Duration timeout;
  double seconds;
  if (absl::SimpleAtod(*value, &seconds) && std::isfinite(seconds)) {
    timeout = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(std::string(*value), &timeout)) {
    timeout = -absl::InfiniteDuration();
  }
  if (timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("header ", kTimeoutHeader, " is \"", Excerpt(*value),
                     "\": not a duration such as 2.5s, 500ms or 2.5 (seconds)"));
  }
  return request.received + timeout;
}

// The API key of a DeepL route's headers: "Authorization: DeepL-Auth-Key KEY", else mtserve's own
// (HeaderApiKey).
std::optional<std::string> DeepLKey(const HttpRequest& request) {
  std::optional<std::string> key = DeepLAuthKey(request.header("Authorization"));
  return key.has_value() ? key : HeaderApiKey(request);
}

std::string ContentType(const HttpRequest& request) {
  return std::string(request.header("Content-Type").value_or(""));
}

}  // namespace

namespace {

constexpr ApiRoute kApi[] = {
    {"/v1/translate", "POST", &HttpFrontend::Translate, Api::kNative, KeyCheck::kHeader,
     "Translate"},
    {"/v1/translate:stream", "POST", &HttpFrontend::TranslateStream, Api::kNative,
     KeyCheck::kHeader, "TranslateStream"},
    {"/v1/models", "GET", &HttpFrontend::ListModels, Api::kNative, KeyCheck::kHeader, ""},
    {"/v1/models/{name}:load", "POST", &HttpFrontend::LoadModel, Api::kNative, KeyCheck::kHeader,
     "LoadModel"},
    {"/v1/models/{name}:unload", "POST", &HttpFrontend::UnloadModel, Api::kNative,
     KeyCheck::kHeader, "UnloadModel"},
    {"/v1/detect", "POST", &HttpFrontend::Detect, Api::kNative, KeyCheck::kHeader, "Detect"},
    {"/translate", "POST", &HttpFrontend::LibreTranslate, Api::kLibreTranslate,
     KeyCheck::kHeaderIfPresent, "LibreTranslate"},
    {"/detect", "POST", &HttpFrontend::LibreTranslateDetect, Api::kLibreTranslate,
     KeyCheck::kHeaderIfPresent, "LibreTranslateDetect"},
    {"/languages", "GET", &HttpFrontend::LibreTranslateLanguages, Api::kLibreTranslate,
     KeyCheck::kNone, ""},
    {"/v1/glossaries", "POST", &HttpFrontend::CreateGlossary, Api::kNative, KeyCheck::kHeader, ""},
    {"/v1/glossaries", "GET", &HttpFrontend::ListGlossaries, Api::kNative, KeyCheck::kHeader, ""},
    {"/v1/glossaries/{id}", "GET", &HttpFrontend::GetGlossary, Api::kNative, KeyCheck::kHeader, ""},
    {"/v1/glossaries/{id}", "DELETE", &HttpFrontend::DeleteGlossary, Api::kNative,
     KeyCheck::kHeader, ""},
    {"/frontend/settings", "GET", &HttpFrontend::LibreTranslateSettings, Api::kLibreTranslate,
     KeyCheck::kNone, ""},
    // A job's id is a capability (serving/file_jobs.h): its routes take no key.
    {"/v1/translate_file", "POST", &HttpFrontend::TranslateFile, Api::kNative, KeyCheck::kHeader,
     "TranslateFile", /*file_body=*/true},
    {"/v1/jobs/{id}", "GET", &HttpFrontend::GetJob, Api::kNative, KeyCheck::kNone, ""},
    {"/v1/jobs/{id}", "DELETE", &HttpFrontend::DeleteJob, Api::kNative, KeyCheck::kNone, ""},
    {"/v1/jobs/{id}/result", "GET", &HttpFrontend::GetJobResult, Api::kNative, KeyCheck::kNone, ""},
    {"/translate_file", "POST", &HttpFrontend::LibreTranslateFile, Api::kLibreTranslate,
     KeyCheck::kHeaderIfPresent, "LibreTranslateFile", /*file_body=*/true},
    {"/download_file/{id}/{file}", "GET", &HttpFrontend::LibreTranslateDownload,
     Api::kLibreTranslate, KeyCheck::kNone, ""},
    // DeepL's API: its key in the header (DeepL-Auth-Key), or in the body's auth_key where the
    // route takes a body.
    {"/v2/translate", "POST", &HttpFrontend::DeepLTranslate, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, "DeepLTranslate"},
    {"/v2/languages", "GET", &HttpFrontend::DeepLLanguages, Api::kDeepL, KeyCheck::kHeader, ""},
    {"/v2/languages", "POST", &HttpFrontend::DeepLLanguages, Api::kDeepL, KeyCheck::kHeader, ""},
    {"/v2/usage", "GET", &HttpFrontend::DeepLUsage, Api::kDeepL, KeyCheck::kHeader, ""},
    {"/v2/usage", "POST", &HttpFrontend::DeepLUsage, Api::kDeepL, KeyCheck::kHeader, ""},
    {"/v2/glossary-language-pairs", "GET", &HttpFrontend::DeepLGlossaryPairs, Api::kDeepL,
     KeyCheck::kHeader, ""},
    {"/v2/glossaries", "POST", &HttpFrontend::DeepLCreateGlossary, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, ""},
    {"/v2/glossaries", "GET", &HttpFrontend::DeepLListGlossaries, Api::kDeepL, KeyCheck::kHeader,
     ""},
    {"/v2/glossaries/{id}", "GET", &HttpFrontend::DeepLGetGlossary, Api::kDeepL, KeyCheck::kHeader,
     ""},
    {"/v2/glossaries/{id}", "DELETE", &HttpFrontend::DeepLDeleteGlossary, Api::kDeepL,
     KeyCheck::kHeader, ""},
    {"/v2/glossaries/{id}/entries", "GET", &HttpFrontend::DeepLGlossaryEntries, Api::kDeepL,
     KeyCheck::kHeader, ""},
    {"/v2/document", "POST", &HttpFrontend::DeepLUploadDocument, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, "DeepLDocument", /*file_body=*/true},
    {"/v2/document/{id}", "POST", &HttpFrontend::DeepLDocumentStatus, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, ""},
    {"/v2/document/{id}", "GET", &HttpFrontend::DeepLDocumentStatus, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, ""},
    {"/v2/document/{id}/result", "POST", &HttpFrontend::DeepLDocumentResult, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, ""},
    {"/v2/document/{id}/result", "GET", &HttpFrontend::DeepLDocumentResult, Api::kDeepL,
     KeyCheck::kHeaderIfPresent, ""},
};

const ApiRoute* FindRoute(absl::string_view path, absl::string_view method) {
  for (const ApiRoute& route : kApi) {
    if (RoutePathMatches(route.path, path) && (method.empty() || route.method == method)) {
      return &route;
    }
  }
  return nullptr;
}

// The methods `path` takes ("GET, DELETE").
std::string AllowedMethods(absl::string_view path) {
  std::string allowed;
  for (const ApiRoute& route : kApi) {
    if (RoutePathMatches(route.path, path)) {
      absl::StrAppend(&allowed, allowed.empty() ? "" : ", ", route.method);
    }
  }
  return allowed;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpFrontend>> HttpFrontend::Start(
    const HttpServer::Options& options, TranslationCore* core, DrainGate* drain,
    FileJobs* file_jobs, Glossaries* glossaries) {
  std::unique_ptr<HttpFrontend> frontend(new HttpFrontend(core, drain, file_jobs, glossaries));
  frontend->https_ = options.tls != nullptr;
  HttpServer::Options with_files = options;
  with_files.max_file_body_bytes = file_jobs->options().max_file_bytes + kFileFormOverheadBytes;
  with_files.max_file_body_flag = absl::StrCat("--max_file_bytes, plus ", kFileFormOverheadBytes,
                                               " bytes for the form's other parts");
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(with_files, frontend.get());
  if (!server.ok()) return server.status();
  frontend->server_ = *std::move(server);
  return frontend;
}

HttpFrontend::~HttpFrontend() { Stop(); }

void HttpFrontend::Stop() {
  if (server_ == nullptr) return;
  drain_->StartDraining();
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    for (TranslationCore::Call* call : calls_) call->Cancel();
    // LibreTranslate's /translate_file answers once its job ends.
    for (const std::string& id : waited_jobs_) file_jobs_->Cancel(id).IgnoreError();
  }
  server_->Stop();  // Waits for the handlers, whose requests now end at once.
  server_.reset();
}

void HttpFrontend::TrackCall(TranslationCore::Call* call) {
  absl::MutexLock lock(&mutex_);
  calls_.insert(call);
  // Stop may have cancelled the others already.
  if (stopping_) call->Cancel();
}

void HttpFrontend::ReleaseCall(TranslationCore::Call* call) {
  absl::MutexLock lock(&mutex_);
  calls_.erase(call);
}

std::optional<HttpAnswer> HttpFrontend::Route(const HttpRequest& head) {
  const absl::string_view path = head.path();
  const absl::string_view method = head.method();
  if (path == "/healthz" || path == "/readyz") {
    if (method != "GET" && method != "HEAD") return MethodNotAllowed(head, "GET, HEAD");
    // Live while the process answers; ready as the gRPC health of the Translator: SERVING once
    // the models are loaded, until draining.
    const bool ready =
        path == "/healthz" || (!drain_->draining() && core_->repository() != nullptr);
    return Answer(ready ? 200 : 503, kJson,
                  absl::StrCat("{\"status\":\"", ready ? "SERVING" : "NOT_SERVING", "\"}\n"));
  }
  for (const StaticFile& file : kStaticFiles) {
    if (path != file.path) continue;
    if (method != "GET" && method != "HEAD") return MethodNotAllowed(head, "GET, HEAD");
    HttpAnswer answer = Answer(200, file.content_type, std::string(EmbeddedFile(file.file)));
    if (file.content_type != kJson) {
      answer.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
    }
    return answer;
  }
  const ApiRoute* route = FindRoute(path);
  if (route == nullptr) {
    // LibreTranslate's routes are named without methods: "METHOD /path" items are the routes
    // /openapi.json describes (tests/e2e/scripts/openapi_test.py holds the two equal), and it
    // describes the native API only.
    return ErrorAnswer(
        path, absl::NotFoundError(absl::StrCat(
                  "no ", Excerpt(path),
                  " here; the API is POST /v1/translate, POST /v1/translate:stream, GET "
                  "/v1/models, POST /v1/models/{name}:load, POST /v1/models/{name}:unload, POST "
                  "/v1/detect, POST /v1/translate_file, GET /v1/jobs/{id}, DELETE /v1/jobs/{id}, "
                  "GET /v1/jobs/{id}/result, POST /v1/glossaries, GET /v1/glossaries, GET "
                  "/v1/glossaries/{id}, DELETE /v1/glossaries/{id}, GET /healthz, GET /readyz, "
                  "GET /openapi.json, and "
                  "LibreTranslate's /translate, /detect, /languages, /frontend/settings, "
                  "/translate_file and /download_file/{id}/{file}, and DeepL's /v2/translate, "
                  "/v2/languages, /v2/usage, /v2/glossaries, /v2/glossary-language-pairs and "
                  "/v2/document; the translation page is /")));
  }
  route = FindRoute(path, method);
  if (route == nullptr) return MethodNotAllowed(head, AllowedMethods(path));
  const std::optional<std::string> key =
      route->api == Api::kDeepL ? DeepLKey(head) : HeaderApiKey(head);
  if (route->key_check == KeyCheck::kHeader ||
      (route->key_check == KeyCheck::kHeaderIfPresent && key.has_value())) {
    if (absl::Status status = core_->CheckApiKey(key, /*charge_request=*/false); !status.ok()) {
      if (!route->counted_as.empty()) {
        core_->RecordRefused(Frontend::kHttp, std::string(route->counted_as), status);
      }
      return ErrorAnswer(path, status);
    }
  }
  return std::nullopt;  // Its body, then Handle.
}

HttpAnswer HttpFrontend::Refuse(const HttpRequest& head, const absl::Status& status,
                                int http_status) {
  // A translation refused before it reached the core is counted as the core counts its own.
  if (const ApiRoute* route = FindRoute(head.path(), head.method());
      route != nullptr && !route->counted_as.empty()) {
    core_->RecordRefused(Frontend::kHttp, std::string(route->counted_as), status);
  }
  return ErrorAnswer(head.path(), status, http_status);
}

bool HttpFrontend::TakesFileBody(const HttpRequest& head) {
  const ApiRoute* route = FindRoute(head.path(), head.method());
  return route != nullptr && route->file_body;
}

void HttpFrontend::Handle(const HttpRequest& request, HttpReply& reply) {
  const ApiRoute* route = FindRoute(request.path(), request.method());
  if (route == nullptr)
    return reply.Send(ErrorAnswer(request.path(), absl::InternalError("no route")));
  // Read whole, perhaps after draining started: then refused, as new work is.
  if (!drain_->TryEnter()) {
    return reply.Send(
        ErrorAnswer(request.path(), absl::UnavailableError("the server is shutting down")));
  }
  (this->*route->handle)(request, reply);
  drain_->Leave();
}

void HttpFrontend::ListModels(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<v1::ListModelsResponse> models =
      mtserve::ListModels(*core_, HeaderApiKey(request), file_jobs_->options().max_file_bytes);
  if (!models.ok()) return reply.Send(ErrorAnswer(request.path(), models.status()));
  reply.Send(MessageAnswer(request.path(), *models));
}

namespace {

// The operator's call of `request` to `route` (LoadModel, UnloadModel): the model named by the
// path; the body, if any, a LoadModelRequest or UnloadModelRequest whose name is empty or the
// path's.
absl::StatusOr<TranslationCore::ModelCall> ModelCallOf(const HttpRequest& request,
                                                       absl::string_view route,
                                                       const std::string& method,
                                                       const TranslationCore& core,
                                                       google::protobuf::Message& body) {
  TranslationCore::ModelCall call;
  MT_ASSIGN_OR_RETURN(call.model, RoutePathName(route, request.path()));
  MT_ASSIGN_OR_RETURN(call.deadline, Deadline(request));
  if (!absl::StripAsciiWhitespace(request.body()).empty()) {
    MT_RETURN_IF_ERROR(
        ParseJson(request.body(), "the request body", RequestValueBounds(core.limits()), body));
    const std::string named =
        body.GetReflection()->GetString(body, body.GetDescriptor()->FindFieldByName("name"));
    if (!named.empty() && named != call.model) {
      return absl::InvalidArgumentError(absl::StrCat("name: \"", Excerpt(named),
                                                     "\" in the body is not the path's \"",
                                                     Excerpt(call.model), "\""));
    }
  }
  call.api_key = HeaderApiKey(request);
  call.frontend = Frontend::kHttp;
  call.method = method;
  return call;
}

}  // namespace

void HttpFrontend::LoadModel(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "LoadModel";
  v1::LoadModelRequest body;
  absl::StatusOr<TranslationCore::ModelCall> call =
      ModelCallOf(request, "/v1/models/{name}:load", kMethod, *core_, body);
  if (!call.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, call.status());
    return reply.Send(ErrorAnswer(request.path(), call.status()));
  }
  // This handler thread waits for the load (within the deadline), as for a translation.
  absl::Notification done;
  absl::StatusOr<int> slot;
  core_->LoadModel(*std::move(call), [&](absl::StatusOr<int> loaded) {
    slot = std::move(loaded);
    done.Notify();
  });
  done.WaitForNotification();
  if (!slot.ok()) return reply.Send(ErrorAnswer(request.path(), slot.status()));
  reply.Send(MessageAnswer(request.path(), ToModelInfo(*core_, *slot)));
}

void HttpFrontend::UnloadModel(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "UnloadModel";
  v1::UnloadModelRequest body;
  absl::StatusOr<TranslationCore::ModelCall> call =
      ModelCallOf(request, "/v1/models/{name}:unload", kMethod, *core_, body);
  if (!call.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, call.status());
    return reply.Send(ErrorAnswer(request.path(), call.status()));
  }
  const absl::StatusOr<int> slot = core_->UnloadModel(*call);
  if (!slot.ok()) return reply.Send(ErrorAnswer(request.path(), slot.status()));
  reply.Send(MessageAnswer(request.path(), ToModelInfo(*core_, *slot)));
}

absl::StatusOr<TranslationCore::Reply> HttpFrontend::RunCall(TranslationCore::Request request,
                                                             HttpReply& reply) {
  // Shared with the callback, which may run after this thread stops waiting on it.
  struct Result {
    absl::Notification done;
    absl::StatusOr<TranslationCore::Reply> reply;
  };
  auto result = std::make_shared<Result>();
  auto call = std::make_shared<TranslationCore::Call>();
  TrackCall(call.get());
  reply.OnClientGone([call] { call->Cancel(); });
  core_->Translate(std::move(request), call,
                   [result](absl::StatusOr<TranslationCore::Reply> reply) {
                     result->reply = std::move(reply);
                     result->done.Notify();
                   });
  result->done.WaitForNotification();
  ReleaseCall(call.get());
  return std::move(result->reply);
}

void HttpFrontend::Translate(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "Translate";
  v1::TranslateRequest message;
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  const absl::Status parsed = [&]() -> absl::Status {
    if (!deadline.ok()) return deadline.status();
    return ParseJson(request.body(), "the request body", RequestValueBounds(core_->limits()),
                     message);
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed);
    return reply.Send(ErrorAnswer(request.path(), parsed));
  }
  TranslationCore::Request core_request =
      ToCoreRequest(message, *deadline, kMethod, Frontend::kHttp);
  core_request.api_key = HeaderApiKey(request);
  absl::StatusOr<TranslationCore::Reply> translated = RunCall(std::move(core_request), reply);
  if (!translated.ok()) return reply.Send(ErrorAnswer(request.path(), translated.status()));
  reply.Send(MessageAnswer(
      request.path(), ToTranslateResponse(*core_, *translated, message.options().return_scores())));
}

void HttpFrontend::LibreTranslate(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "LibreTranslate";
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  absl::StatusOr<LibreTranslateRequest> parsed = [&]() -> absl::StatusOr<LibreTranslateRequest> {
    if (!deadline.ok()) return deadline.status();
    return ParseLibreTranslateRequest(request.body(), ContentType(request), HeaderApiKey(request),
                                      *core_);
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  const std::vector<std::string> texts = parsed->core.texts;  // For the answer.
  TranslationCore::Request core_request = std::move(parsed->core);
  core_request.deadline = *deadline;
  core_request.method = kMethod;
  core_request.frontend = Frontend::kHttp;
  absl::StatusOr<TranslationCore::Reply> translated = RunCall(std::move(core_request), reply);
  absl::StatusOr<std::string> answer =
      translated.ok() ? LibreTranslateAnswer(*parsed, texts, *translated) : translated.status();
  if (!answer.ok()) {
    return reply.Send(
        ErrorAnswer(request.path(), LibreTranslateCoreError(*parsed, answer.status())));
  }
  reply.Send(Answer(200, kJson, *answer));
}

void HttpFrontend::Detect(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "Detect";
  v1::DetectRequest message;
  const absl::Status parsed =
      ParseJson(request.body(), "the request body", RequestValueBounds(core_->limits()), message);
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed);
    return reply.Send(ErrorAnswer(request.path(), parsed));
  }
  DetectionRequest core_request = ToCoreRequest(message, kMethod, Frontend::kHttp);
  core_request.api_key = HeaderApiKey(request);
  absl::StatusOr<DetectionReply> detected = core_->Detect(core_request);
  if (!detected.ok()) return reply.Send(ErrorAnswer(request.path(), detected.status()));
  reply.Send(MessageAnswer(request.path(), ToDetectResponse(*detected)));
}

void HttpFrontend::LibreTranslateDetect(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "LibreTranslateDetect";
  absl::StatusOr<DetectionRequest> parsed = ParseLibreTranslateDetect(
      request.body(), ContentType(request), HeaderApiKey(request), *core_);
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  parsed->method = kMethod;
  parsed->frontend = Frontend::kHttp;
  absl::StatusOr<DetectionReply> detected = core_->Detect(*parsed);
  if (!detected.ok()) return reply.Send(ErrorAnswer(request.path(), detected.status()));
  reply.Send(Answer(200, kJson, LibreTranslateDetectAnswer(*detected)));
}

void HttpFrontend::LibreTranslateLanguages(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<std::string> languages = mtserve::LibreTranslateLanguages(*core_);
  if (!languages.ok()) return reply.Send(ErrorAnswer(request.path(), languages.status()));
  reply.Send(Answer(200, kJson, *std::move(languages)));
}

void HttpFrontend::LibreTranslateSettings(const HttpRequest&, HttpReply& reply) {
  reply.Send(Answer(200, kJson, mtserve::LibreTranslateSettings(*core_)));
}

void HttpFrontend::TranslateStream(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "TranslateStream";
  // Every line is parsed before any is translated, so that a body that is not valid is refused
  // whole, with a status, rather than after some of its answers; and again when its turn comes,
  // so that a stream holds its body and the texts in the core rather than a message per line.
  const ValueBounds bounds = RequestValueBounds(core_->limits());
  auto parse_line = [&](absl::string_view line, int line_number,
                        v1::TranslateStreamRequest& message) {
    return ParseJson(line, absl::StrCat("line ", line_number, " of the request body"), bounds,
                     message);
  };
  // The lines that are not blank, one after the other.
  struct Lines {
    absl::string_view rest;
    int number = 0;
    bool Next(absl::string_view& line) {
      while (!rest.empty()) {
        const size_t end = std::min(rest.find('\n'), rest.size());
        line = rest.substr(0, end);
        rest.remove_prefix(std::min(end + 1, rest.size()));
        ++number;
        if (line.find_first_not_of(" \t\r") != absl::string_view::npos) return true;
      }
      return false;
    }
  };
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  const absl::Status parsed = [&]() -> absl::Status {
    if (!deadline.ok()) return deadline.status();
    Lines lines{request.body()};
    absl::string_view line;
    while (lines.Next(line)) {
      v1::TranslateStreamRequest message;
      MT_RETURN_IF_ERROR(parse_line(line, lines.number, message));
    }
    return absl::OkStatus();
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed);
    return reply.Send(ErrorAnswer(request.path(), parsed));
  }

  // Answers as they come, from core and worker threads; this thread hands them to the transport.
  struct Answers {
    absl::Mutex mutex;
    std::deque<std::string> lines ABSL_GUARDED_BY(mutex);
    StreamWindow in_core ABSL_GUARDED_BY(mutex);  // Texts in the core.
  };
  auto answers = std::make_shared<Answers>();
  auto call = std::make_shared<TranslationCore::Call>();
  TrackCall(call.get());
  reply.OnClientGone([call] { call->Cancel(); });
  bool client_gone = !reply.StartChunks(Answer(200, kNdjson, ""));
  if (client_gone) call->Cancel();
  const std::optional<std::string> api_key = HeaderApiKey(request);
  Lines lines{request.body()};
  absl::string_view line;
  bool more = lines.Next(line);
  while (true) {
    // Hands texts to the core while fewer than the bound are in it. Every text gets its line,
    // an error if the server drains or stops meanwhile, unless the client is gone.
    while (more && !client_gone) {
      {
        absl::MutexLock lock(&answers->mutex);
        if (!answers->in_core.HasRoom()) break;
        answers->in_core.Take();
      }
      v1::TranslateStreamRequest message;
      // Parsed once already: it cannot fail now.
      parse_line(line, lines.number, message).IgnoreError();
      more = lines.Next(line);
      TranslationCore::Request core_request =
          ToCoreRequest(message, *deadline, kMethod, Frontend::kHttp);
      core_request.api_key = api_key;
      core_->Translate(std::move(core_request), call,
                       [this, answers, id = std::move(*message.mutable_id()),
                        with_scores = message.options().return_scores()](
                           absl::StatusOr<TranslationCore::Reply> reply) {
                         absl::StatusOr<std::string> json =
                             ToJson(ToStreamResponse(*core_, id, reply, with_scores));
                         if (!json.ok()) {
                           json = ToJson(ToStreamResponse(*core_, id, json.status(), with_scores));
                         }
                         absl::MutexLock lock(&answers->mutex);
                         answers->lines.push_back(json.value_or("") + "\n");
                         answers->in_core.Release();
                       });
    }
    std::deque<std::string> ready;
    bool finished;
    {
      absl::MutexLock lock(&answers->mutex);
      auto can_go_on = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(answers->mutex) {
        return !answers->lines.empty() || answers->in_core.texts() == 0;
      };
      answers->mutex.Await(absl::Condition(&can_go_on));
      ready.swap(answers->lines);
      finished = answers->in_core.texts() == 0 && (!more || client_gone);
    }
    // The lines ready together go out as one chunk.
    std::string chunk;
    for (const std::string& ready_line : ready) chunk += ready_line;
    if (!client_gone && !chunk.empty() && !reply.SendChunk(std::move(chunk))) {
      // A client that is gone reads no more: its texts still in the core stop.
      client_gone = true;
      call->Cancel();
    }
    if (finished) break;
  }
  if (!client_gone) reply.EndChunks();
  ReleaseCall(call.get());
}

namespace {

// The job's id in `path`, of the route `pattern`.
absl::StatusOr<std::string> JobId(absl::string_view pattern, absl::string_view path) {
  return RoutePathName(pattern, path, "{id}");
}

// A job's record as its FileJob's JSON.
HttpAnswer JobAnswer(absl::string_view path, const JobRecord& record, int status = 200) {
  HttpAnswer answer = MessageAnswer(path, ToFileJobProto(record, /*with_result_url=*/true));
  if (answer.status == 200) answer.status = status;
  return answer;
}

// Why a job that is not done has no result: FAILED_PRECONDITION naming its state (and its error).
absl::Status NoResult(const JobRecord& record) {
  std::string why = absl::StrCat("job ", record.id, " is ", JobStateName(record.state));
  if (!record.error.ok()) absl::StrAppend(&why, " (", record.error.message(), ")");
  absl::StrAppend(
      &why, IsFinal(record.state) ? ": it has no result" : ": its result is there once it is done");
  return absl::FailedPreconditionError(why);
}

// The host a LibreTranslate client reached, for the absolute URLs it is given: the Host header,
// if it is a host (and port) name.
absl::StatusOr<std::string> RequestHost(const HttpRequest& request) {
  const std::optional<absl::string_view> host = request.header("Host");
  if (!host.has_value() || host->empty()) {
    return absl::InvalidArgumentError(
        "Invalid request: header Host is missing; it names the server in translatedFileUrl");
  }
  for (const char c : *host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        absl::string_view(".-:[]_").find(c) == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid request: header Host, \"",
                                                     Excerpt(*host), "\", is not a host name"));
    }
  }
  return std::string(*host);
}

// `name` percent-encoded as one path segment (RFC 3986's unreserved characters as they are).
std::string PathSegment(absl::string_view name) {
  std::string out;
  for (const char c : name) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out += c;
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

}  // namespace

HttpAnswer HttpFrontend::ResultAnswer(absl::string_view path, const JobRecord& record) {
  if (record.state != JobState::kDone) return ErrorAnswer(path, NoResult(record), 409);
  std::string bytes;
  if (record.result_bytes > 0) {
    absl::StatusOr<std::string> read = file_jobs_->ReadResult(record.id, 0, record.result_bytes);
    if (!read.ok()) {
      return ErrorAnswer(path, read.status(),
                         read.status().code() == absl::StatusCode::kFailedPrecondition ? 409 : 0);
    }
    bytes = *std::move(read);
  }
  HttpAnswer answer = Answer(200, record.result_media_type, std::move(bytes));
  answer.headers.emplace_back("Content-Disposition",
                              AttachmentDisposition(record.result_file_name));
  return answer;
}

void HttpFrontend::TranslateFile(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "TranslateFile";
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  absl::StatusOr<FileRequest> parsed = [&]() -> absl::StatusOr<FileRequest> {
    if (!deadline.ok()) return deadline.status();
    return ParseFileUpload(request.body(), ContentType(request),
                           file_jobs_->options().max_file_bytes + kFileFormOverheadBytes,
                           RequestValueBounds(core_->limits()));
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  // The job outlives this request: its deadline is X-Request-Timeout's if given, bounded by
  // FileJobs' own (--file_job_timeout).
  parsed->translation.deadline = *deadline;
  parsed->translation.api_key = HeaderApiKey(request);
  parsed->translation.frontend = Frontend::kHttp;
  parsed->translation.method = kMethod;
  absl::StatusOr<JobRecord> job = file_jobs_->Submit(*std::move(parsed));
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  HttpAnswer answer = JobAnswer(request.path(), *job, 202);
  answer.headers.emplace_back("Location", absl::StrCat("/v1/jobs/", job->id));
  reply.Send(std::move(answer));
}

void HttpFrontend::GetJob(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const std::string id, JobId("/v1/jobs/{id}", request.path()));
    return file_jobs_->Get(id);
  }();
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  reply.Send(JobAnswer(request.path(), *job));
}

void HttpFrontend::DeleteJob(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const std::string id, JobId("/v1/jobs/{id}", request.path()));
    // Cancelled first, so that the answer is the job as it ended; a finished job stays as it was.
    if (absl::Status cancelled = file_jobs_->Cancel(id);
        !cancelled.ok() && cancelled.code() != absl::StatusCode::kFailedPrecondition) {
      return cancelled;
    }
    MT_ASSIGN_OR_RETURN(JobRecord ended, file_jobs_->Get(id));
    MT_RETURN_IF_ERROR(file_jobs_->Delete(id));
    return ended;
  }();
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  reply.Send(JobAnswer(request.path(), *job));
}

void HttpFrontend::GetJobResult(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const std::string id, JobId("/v1/jobs/{id}/result", request.path()));
    return file_jobs_->Get(id);
  }();
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  reply.Send(ResultAnswer(request.path(), *job));
}

void HttpFrontend::LibreTranslateFile(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "LibreTranslateFile";
  absl::StatusOr<std::string> host = RequestHost(request);
  absl::StatusOr<FileRequest> parsed = [&]() -> absl::StatusOr<FileRequest> {
    if (!host.ok()) return host.status();
    return ParseLibreTranslateFileUpload(
        request.body(), ContentType(request),
        file_jobs_->options().max_file_bytes + kFileFormOverheadBytes);
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  // The form's key, else the headers'.
  if (!parsed->translation.api_key.has_value()) parsed->translation.api_key = HeaderApiKey(request);
  parsed->translation.frontend = Frontend::kHttp;
  parsed->translation.method = kMethod;
  absl::StatusOr<JobRecord> job = file_jobs_->Submit(*std::move(parsed));
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  const std::string id = job->id;
  {
    absl::MutexLock lock(&mutex_);
    waited_jobs_.insert(id);
    if (stopping_) file_jobs_->Cancel(id).IgnoreError();
  }
  // LibreTranslate answers once the file is translated: this thread waits for the job, which
  // ends by its deadline (FileJobs fails it then), and a client that leaves cancels it.
  reply.OnClientGone([file_jobs = file_jobs_, id] { file_jobs->Cancel(id).IgnoreError(); });
  const absl::Time deadline =
      absl::Now() + file_jobs_->options().max_job_duration + absl::Seconds(1);
  while (job.ok() && !IsFinal(job->state) && absl::Now() < deadline) {
    job = file_jobs_->WaitForChange(id, *job, deadline);
  }
  {
    absl::MutexLock lock(&mutex_);
    waited_jobs_.erase(id);
  }
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  if (job->state != JobState::kDone) {
    const absl::Status failed = !job->error.ok()
                                    ? job->error
                                    : absl::DeadlineExceededError(absl::StrCat(
                                          "job ", id, " did not end within --file_job_timeout"));
    return reply.Send(ErrorAnswer(request.path(), failed));
  }
  nlohmann::json answer = {
      {"translatedFileUrl", absl::StrCat(https_ ? "https://" : "http://", *host, "/download_file/",
                                         id, "/", PathSegment(job->result_file_name))}};
  reply.Send(Answer(200, kJson, answer.dump() + "\n"));
}

void HttpFrontend::LibreTranslateDownload(const HttpRequest& request, HttpReply& reply) {
  // The file's name in the path is for the browser's save dialog: the id finds the job.
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const std::string id, JobId("/download_file/{id}/{file}", request.path()));
    return file_jobs_->Get(id);
  }();
  // No such file is 404 here (LibreTranslate's 400 for NOT_FOUND is for unknown languages).
  if (!job.ok()) {
    return reply.Send(ErrorAnswer(request.path(), job.status(),
                                  job.status().code() == absl::StatusCode::kNotFound ? 404 : 0));
  }
  reply.Send(ResultAnswer(request.path(), *job));
}

namespace {

absl::Status NoGlossaries() { return absl::UnimplementedError("this server keeps no glossaries"); }

}  // namespace

void HttpFrontend::CreateGlossary(const HttpRequest& request, HttpReply& reply) {
  if (glossaries_ == nullptr) return reply.Send(ErrorAnswer(request.path(), NoGlossaries()));
  absl::StatusOr<GlossaryInfo> info = [&]() -> absl::StatusOr<GlossaryInfo> {
    v1::CreateGlossaryRequest message;
    MT_RETURN_IF_ERROR(ParseJson(request.body(), "the request body",
                                 GlossaryValueBounds(glossaries_->limits()), message));
    return glossaries_->Create(HeaderApiKey(request), ToGlossary(message));
  }();
  if (!info.ok()) return reply.Send(ErrorAnswer(request.path(), info.status()));
  HttpAnswer answer = MessageAnswer(request.path(), ToGlossaryInfoProto(*info));
  if (answer.status == 200) {
    answer.status = 201;
    answer.headers.emplace_back("Location", absl::StrCat("/v1/glossaries/", info->id));
  }
  reply.Send(std::move(answer));
}

void HttpFrontend::ListGlossaries(const HttpRequest& request, HttpReply& reply) {
  if (glossaries_ == nullptr) return reply.Send(ErrorAnswer(request.path(), NoGlossaries()));
  const absl::StatusOr<std::vector<GlossaryInfo>> infos = glossaries_->List(HeaderApiKey(request));
  if (!infos.ok()) return reply.Send(ErrorAnswer(request.path(), infos.status()));
  reply.Send(MessageAnswer(request.path(), ToListGlossariesResponse(*infos)));
}

void HttpFrontend::GetGlossary(const HttpRequest& request, HttpReply& reply) {
  if (glossaries_ == nullptr) return reply.Send(ErrorAnswer(request.path(), NoGlossaries()));
  const absl::StatusOr<Glossary> glossary = [&]() -> absl::StatusOr<Glossary> {
    MT_ASSIGN_OR_RETURN(const std::string id,
                        RoutePathName("/v1/glossaries/{id}", request.path(), "{id}"));
    return glossaries_->Get(HeaderApiKey(request), id);
  }();
  if (!glossary.ok()) return reply.Send(ErrorAnswer(request.path(), glossary.status()));
  reply.Send(MessageAnswer(request.path(), ToGlossaryProto(*glossary)));
}

void HttpFrontend::DeleteGlossary(const HttpRequest& request, HttpReply& reply) {
  if (glossaries_ == nullptr) return reply.Send(ErrorAnswer(request.path(), NoGlossaries()));
  const absl::Status deleted = [&]() -> absl::Status {
    MT_ASSIGN_OR_RETURN(const std::string id,
                        RoutePathName("/v1/glossaries/{id}", request.path(), "{id}"));
    return glossaries_->Delete(HeaderApiKey(request), id);
  }();
  if (!deleted.ok()) return reply.Send(ErrorAnswer(request.path(), deleted));
  reply.Send(MessageAnswer(request.path(), v1::DeleteGlossaryResponse()));
}

}  // namespace mtserve

namespace mtserve {
namespace {

// The key check DeepL's parsers run before a body's other fields.
auto DeepLKeyChecker(const TranslationCore& core) {
  return [&core](const std::optional<std::string>& key) { return DeepLCheckKey(core, key); };
}

// The glossaries, or UNIMPLEMENTED naming why there are none.
absl::StatusOr<Glossaries*> GlossariesOrError(Glossaries* glossaries) {
  if (glossaries == nullptr) return NoGlossaries();
  return glossaries;
}

// The value of `name` in a form's pairs (a query's, or a form body's), if given.
std::optional<std::string> FormValue(absl::string_view form, absl::string_view name) {
  for (auto& [key, value] : ParseUrlForm(form)) {
    if (key == name) return std::move(value);
  }
  return std::nullopt;
}

}  // namespace

void HttpFrontend::DeepLTranslate(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "DeepLTranslate";
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  absl::StatusOr<DeepLTranslateRequest> parsed = [&]() -> absl::StatusOr<DeepLTranslateRequest> {
    if (!deadline.ok()) return deadline.status();
    return ParseDeepLTranslate(request.body(), ContentType(request),
                               RequestValueBounds(core_->limits()), DeepLKey(request),
                               DeepLKeyChecker(*core_));
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  TranslationCore::Request core_request = parsed->core;
  core_request.deadline = *deadline;
  core_request.method = kMethod;
  core_request.frontend = Frontend::kHttp;
  absl::StatusOr<TranslationCore::Reply> translated = RunCall(std::move(core_request), reply);
  absl::StatusOr<std::string> answer =
      translated.ok() ? DeepLTranslateAnswer(*parsed, *core_, *translated) : translated.status();
  if (!answer.ok()) return reply.Send(ErrorAnswer(request.path(), answer.status()));
  reply.Send(Answer(200, kJson, *std::move(answer)));
}

void HttpFrontend::DeepLLanguages(const HttpRequest& request, HttpReply& reply) {
  // type in the query, or in a POST's form.
  std::optional<std::string> type = FormValue(request.query(), "type");
  if (!type.has_value() &&
      !absl::StartsWith(absl::StripLeadingAsciiWhitespace(request.body()), "{")) {
    type = FormValue(request.body(), "type");
  }
  absl::StatusOr<std::string> languages = mtserve::DeepLLanguages(*core_, type.value_or(""));
  if (!languages.ok()) return reply.Send(ErrorAnswer(request.path(), languages.status()));
  reply.Send(Answer(200, kJson, *std::move(languages)));
}

void HttpFrontend::DeepLUsage(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<CharacterUsage> usage = core_->ApiKeyCharacters(DeepLKey(request));
  if (!usage.ok()) return reply.Send(ErrorAnswer(request.path(), usage.status()));
  reply.Send(Answer(200, kJson, DeepLUsageAnswer(*usage)));
}

void HttpFrontend::DeepLGlossaryPairs(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<std::string> pairs = mtserve::DeepLGlossaryPairs(*core_);
  if (!pairs.ok()) return reply.Send(ErrorAnswer(request.path(), pairs.status()));
  reply.Send(Answer(200, kJson, *std::move(pairs)));
}

void HttpFrontend::DeepLCreateGlossary(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<GlossaryInfo> created = [&]() -> absl::StatusOr<GlossaryInfo> {
    MT_ASSIGN_OR_RETURN(Glossaries * glossaries, GlossariesOrError(glossaries_));
    MT_ASSIGN_OR_RETURN(const DeepLGlossaryRequest parsed,
                        ParseDeepLGlossary(request.body(), ContentType(request),
                                           RequestValueBounds(core_->limits()), DeepLKey(request),
                                           DeepLKeyChecker(*core_)));
    MT_ASSIGN_OR_RETURN(Glossary glossary, DeepLGlossaryOf(parsed, glossaries->limits()));
    return glossaries->Create(parsed.api_key, std::move(glossary));
  }();
  if (!created.ok()) return reply.Send(ErrorAnswer(request.path(), created.status()));
  reply.Send(Answer(201, kJson, DeepLGlossaryJson(*created)));
}

void HttpFrontend::DeepLListGlossaries(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<std::vector<GlossaryInfo>> listed =
      [&]() -> absl::StatusOr<std::vector<GlossaryInfo>> {
    MT_ASSIGN_OR_RETURN(Glossaries * glossaries, GlossariesOrError(glossaries_));
    return glossaries->List(DeepLKey(request));
  }();
  if (!listed.ok()) return reply.Send(ErrorAnswer(request.path(), listed.status()));
  reply.Send(Answer(200, kJson, DeepLGlossaryListJson(*listed)));
}

namespace {

// The glossary of a /v2/glossaries/{id}[/entries] path.
absl::StatusOr<Glossary> PathGlossary(Glossaries* glossaries, const HttpRequest& request,
                                      absl::string_view pattern,
                                      const std::optional<std::string>& key) {
  MT_ASSIGN_OR_RETURN(Glossaries * found, GlossariesOrError(glossaries));
  MT_ASSIGN_OR_RETURN(const std::string id, RoutePathName(pattern, request.path(), "{id}"));
  return found->Get(key, id);
}

}  // namespace

void HttpFrontend::DeepLGetGlossary(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<Glossary> glossary =
      PathGlossary(glossaries_, request, "/v2/glossaries/{id}", DeepLKey(request));
  if (!glossary.ok()) return reply.Send(ErrorAnswer(request.path(), glossary.status()));
  reply.Send(Answer(200, kJson, DeepLGlossaryJson(glossary->info)));
}

void HttpFrontend::DeepLDeleteGlossary(const HttpRequest& request, HttpReply& reply) {
  const absl::Status deleted = [&]() -> absl::Status {
    MT_ASSIGN_OR_RETURN(Glossaries * glossaries, GlossariesOrError(glossaries_));
    MT_ASSIGN_OR_RETURN(const std::string id,
                        RoutePathName("/v2/glossaries/{id}", request.path(), "{id}"));
    return glossaries->Delete(DeepLKey(request), id);
  }();
  if (!deleted.ok()) return reply.Send(ErrorAnswer(request.path(), deleted));
  reply.Send(Answer(204, "", ""));
}

void HttpFrontend::DeepLGlossaryEntries(const HttpRequest& request, HttpReply& reply) {
  // TSV is the one format of entries DeepL answers with.
  if (const std::optional<absl::string_view> accept = request.header("Accept");
      accept.has_value() && !accept->empty() &&
      !absl::StrContains(absl::AsciiStrToLower(*accept), "text/tab-separated-values") &&
      !absl::StrContains(*accept, "*/*")) {
    return reply.Send(ErrorAnswer(
        request.path(),
        absl::InvalidArgumentError(absl::StrCat("header Accept is \"", Excerpt(*accept),
                                                "\"; entries are text/tab-separated-values")),
        415));
  }
  absl::StatusOr<Glossary> glossary =
      PathGlossary(glossaries_, request, "/v2/glossaries/{id}/entries", DeepLKey(request));
  if (!glossary.ok()) return reply.Send(ErrorAnswer(request.path(), glossary.status()));
  reply.Send(
      Answer(200, "text/tab-separated-values; charset=utf-8", WriteGlossaryTsv(glossary->entries)));
}

void HttpFrontend::DeepLUploadDocument(const HttpRequest& request, HttpReply& reply) {
  constexpr char kMethod[] = "DeepLDocument";
  absl::StatusOr<absl::Time> deadline = Deadline(request);
  absl::StatusOr<DeepLDocumentUpload> parsed = [&]() -> absl::StatusOr<DeepLDocumentUpload> {
    if (!deadline.ok()) return deadline.status();
    return ParseDeepLDocumentUpload(request.body(), ContentType(request),
                                    file_jobs_->options().max_file_bytes + kFileFormOverheadBytes,
                                    DeepLKey(request), DeepLKeyChecker(*core_));
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed.status());
    return reply.Send(ErrorAnswer(request.path(), parsed.status()));
  }
  FileRequest file;
  file.content = std::move(parsed->content);
  file.file_name = std::move(parsed->file_name);
  file.media_type = std::move(parsed->media_type);
  file.translation = std::move(parsed->translation);
  file.translation.deadline = *deadline;
  file.translation.frontend = Frontend::kHttp;
  file.translation.method = kMethod;
  file.file_field = "file";
  file.format_field = "file";  // DeepL's form has no format: the file's name says it.
  absl::StatusOr<JobRecord> job = file_jobs_->Submit(std::move(file));
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  reply.Send(Answer(200, kJson, DeepLDocumentAnswer(job->id)));
}

namespace {

// The document_id of a /v2/document/{id}[/result] path and the job its document_key makes of it.
struct DocumentCall {
  std::string document_id;
  std::string job_id;
};
absl::StatusOr<DocumentCall> DocumentOf(const HttpRequest& request, absl::string_view pattern,
                                        const TranslationCore& core,
                                        const std::optional<std::string>& header_key) {
  DocumentCall call;
  MT_ASSIGN_OR_RETURN(call.document_id, RoutePathName(pattern, request.path(), "{id}"));
  MT_ASSIGN_OR_RETURN(
      const DeepLDocumentKey key,
      ParseDeepLDocumentKey(request.body(), ContentType(request), request.query(),
                            RequestValueBounds(core.limits()), header_key, DeepLKeyChecker(core)));
  call.job_id = DeepLJobId(call.document_id, key.document_key);
  return call;
}

// The job of `call`: NOT_FOUND in DeepL's terms when the pair names none.
absl::StatusOr<JobRecord> DocumentJob(FileJobs& file_jobs, const DocumentCall& call) {
  absl::StatusOr<JobRecord> job = file_jobs.Get(call.job_id);
  if (absl::IsNotFound(job.status())) {
    return absl::NotFoundError(
        absl::StrCat("no document ", Excerpt(call.document_id),
                     " with that document_key (or it was downloaded, cancelled or has expired)"));
  }
  return job;
}

}  // namespace

void HttpFrontend::DeepLDocumentStatus(const HttpRequest& request, HttpReply& reply) {
  std::string document_id;
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const DocumentCall call,
                        DocumentOf(request, "/v2/document/{id}", *core_, DeepLKey(request)));
    document_id = call.document_id;
    return DocumentJob(*file_jobs_, call);
  }();
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  reply.Send(Answer(200, kJson, mtserve::DeepLDocumentStatus(document_id, *job)));
}

void HttpFrontend::DeepLDocumentResult(const HttpRequest& request, HttpReply& reply) {
  absl::StatusOr<JobRecord> job = [&]() -> absl::StatusOr<JobRecord> {
    MT_ASSIGN_OR_RETURN(const DocumentCall call,
                        DocumentOf(request, "/v2/document/{id}/result", *core_, DeepLKey(request)));
    return DocumentJob(*file_jobs_, call);
  }();
  if (!job.ok()) return reply.Send(ErrorAnswer(request.path(), job.status()));
  // DeepL's clients wait on 503 for a document not translated yet.
  if (job->state != JobState::kDone) {
    return reply.Send(ErrorAnswer(request.path(), NoResult(*job), IsFinal(job->state) ? 400 : 503));
  }
  HttpAnswer answer = ResultAnswer(request.path(), *job);
  // As DeepL does, a document downloaded is gone.
  if (answer.status == 200) file_jobs_->Delete(job->id).IgnoreError();
  reply.Send(std::move(answer));
}

}  // namespace mtserve
