#include "frontends/http/http_frontend.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "base/excerpt.h"
#include "base/status_macros.h"
#include "civetweb.h"
#include "frontends/http/embedded_files.h"
#include "frontends/http/http_framing.h"
#include "frontends/http/http_json.h"
#include "frontends/http/http_status.h"
#include "frontends/libretranslate/libretranslate_api.h"
#include "frontends/proto/proto_mapping.h"
#include "frontends/proto/request_mapping.h"
#include "serving/auth/api_key_auth.h"
#include "serving/auth/api_key_quota.h"
#include "serving/stream_window.h"

namespace mtserve {
namespace {

// The header that gives a request's deadline, as gRPC's timeout does: "2.5s", "500ms", "1m", or
// plain seconds ("2.5").
constexpr char kTimeoutHeader[] = "X-Request-Timeout";

// civetweb's messages while Start starts it, on Start's thread.
thread_local std::string* start_message = nullptr;

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

}  // namespace

// One request and its answer on a connection.
class HttpFrontend::Exchange {
 public:
  Exchange(mg_connection* connection, const HttpFrontend& frontend)
      : connection_(connection),
        info_(*mg_get_request_info(connection)),
        frontend_(frontend),
        start_(absl::Now()) {}

  absl::string_view method() const { return info_.request_method; }
  // The body's framing from the headers (http_framing.h); its error is the caller's to answer,
  // on a connection that then closes (CloseAfterAnswer).
  absl::Status CheckFraming() {
    std::vector<HeaderField> fields;
    fields.reserve(static_cast<size_t>(info_.num_headers));
    for (int i = 0; i < info_.num_headers; ++i) {
      fields.push_back({info_.http_headers[i].name, info_.http_headers[i].value});
    }
    absl::StatusOr<BodyFraming> framing = RequestBodyFraming(fields, MG_MAX_HEADERS);
    if (!framing.ok()) return framing.status();
    framing_ = *framing;
    return absl::OkStatus();
  }
  // The connection closes after the answer.
  void CloseAfterAnswer() { mg_disable_connection_keep_alive(connection_); }
  absl::string_view path() const { return info_.local_uri == nullptr ? "" : info_.local_uri; }
  int status() const { return status_; }
  absl::string_view content_type() const {
    const char* value = mg_get_header(connection_, "Content-Type");
    return value == nullptr ? "" : value;
  }
  // Errors from now on in LibreTranslate's shape ({"error": ...}) and statuses.
  void UseLibreTranslateErrors() { libre_translate_errors_ = true; }
  // A header for the answer (sent with the status line).
  void AddHeader(std::string name, std::string value) {
    headers_.emplace_back(std::move(name), std::move(value));
  }
  // The API key of the request's headers: "Authorization: Bearer KEY" or "X-API-Key: KEY".
  std::optional<std::string> ApiKey() const {
    auto header = [&](const char* name) -> std::optional<absl::string_view> {
      const char* value = mg_get_header(connection_, name);
      if (value == nullptr) return std::nullopt;
      return value;
    };
    return PresentedApiKey(header("Authorization"), header("X-API-Key"));
  }

  // The body, whole: 413 (RESOURCE_EXHAUSTED) if over the limit, 408 (DEADLINE_EXCEEDED) if it
  // does not arrive within the timeout, 400 (INVALID_ARGUMENT) if its chunked framing is broken.
  // Each is answered here, on a connection that then closes; the caller only counts it.
  absl::StatusOr<std::string> ReadBody() {
    const int64_t limit = frontend_.options_.max_body_bytes;
    auto too_large = [&] {
      const absl::Status status = absl::ResourceExhaustedError(
          absl::StrCat("the request body is over ", limit,
                       " bytes, the limit (the server's --max_message_bytes)"));
      SendError(status, 413);
      return status;
    };
    if (framing_.content_length > limit) return too_large();
    // curl asks for this before bodies over 1 MiB, and waits a second for it otherwise.
    if (const char* expect = mg_get_header(connection_, "Expect");
        expect != nullptr && absl::EqualsIgnoreCase(expect, "100-continue")) {
      mg_printf(connection_, "HTTP/1.1 100 Continue\r\n\r\n");
      continue_sent_ = true;
    }
    // civetweb decodes a chunked body inside mg_read, which answers 0 once the last (zero-size)
    // chunk is read and -1 when the body cannot go on: a read failed (the client stopped
    // sending, or closed) or the framing is broken (civetweb 1.15 also counts a chunk extension,
    // ";name=value", as broken). Only the first ends a chunked body.
    const bool chunked = framing_.chunked;
    std::string body;
    // Each read is bounded by civetweb's timeout, this by the whole body's.
    const absl::Duration timeout = frontend_.options_.timeout;
    const absl::Time deadline = start_ + timeout;
    const size_t want =
        chunked ? static_cast<size_t>(limit) + 1 : static_cast<size_t>(framing_.content_length);
    body.resize(want);
    size_t got = 0;
    bool ended = false;       // A chunked body's last chunk was read.
    bool waited_out = false;  // A read failed after waiting the timeout for the client.
    while (got < want) {
      const absl::Time read_start = absl::Now();
      const int n = mg_read(connection_, body.data() + got, want - got);
      if (n == 0 && chunked) {
        ended = true;
        break;
      }
      if (n <= 0) {
        // civetweb waits for each read up to its request_timeout_ms, the timeout in whole ms.
        waited_out =
            absl::Now() - read_start >= absl::Milliseconds(absl::ToInt64Milliseconds(timeout));
        break;
      }
      got += static_cast<size_t>(n);
      if (absl::Now() > deadline) {
        waited_out = true;
        break;
      }
    }
    body.resize(got);
    if (static_cast<int64_t>(got) > limit) return too_large();
    body_read_ = chunked ? ended : got == want;
    if (body_read_) return body;
    absl::Status status;
    if (!chunked) {
      status = absl::DeadlineExceededError(
          absl::StrCat("the request body did not arrive: ", got, " of its ", want,
                       " bytes within the server's --http_timeout"));
    } else if (waited_out) {
      status = absl::DeadlineExceededError(
          "the chunked request body stopped arriving before its last (zero-size) chunk, within "
          "the server's --http_timeout");
    } else {
      status = absl::InvalidArgumentError(
          "the chunked request body is malformed or ends before its last (zero-size) chunk: each "
          "chunk is its size in hexadecimal, CRLF, its bytes, CRLF, and the body ends with "
          "0 CRLF CRLF (RFC 9112 §7.1); chunk extensions (\";name=value\") are not supported");
    }
    SendError(status, status.code() == absl::StatusCode::kDeadlineExceeded ? 408 : 400);
    return status;
  }

  // The deadline of kTimeoutHeader; INVALID_ARGUMENT if it is not a duration.
  absl::StatusOr<absl::Time> Deadline() const {
    const char* value = mg_get_header(connection_, kTimeoutHeader);
    if (value == nullptr) return absl::InfiniteFuture();
    absl::Duration timeout;
    double seconds;
    if (absl::SimpleAtod(value, &seconds) && std::isfinite(seconds)) {
      timeout = absl::Seconds(seconds);
    } else if (!absl::ParseDuration(value, &timeout)) {
      timeout = -absl::InfiniteDuration();
    }
    if (timeout < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("header ", kTimeoutHeader, " is \"", Excerpt(value),
                       "\": not a duration such as 2.5s, 500ms or 2.5 (seconds)"));
    }
    return start_ + timeout;
  }

  // A whole answer with its length.
  void Send(int status, absl::string_view content_type, absl::string_view body) {
    StartAnswer(status, content_type, static_cast<int64_t>(body.size()));
    if (method() != "HEAD") mg_write(connection_, body.data(), body.size());
  }
  void SendError(const absl::Status& status, int http_status = 0) {
    // How to authenticate, and when to come back over an API key's limit.
    if (status.code() == absl::StatusCode::kUnauthenticated) {
      AddHeader("WWW-Authenticate", "Bearer");
    }
    if (const absl::Duration wait = RetryAfter(status); wait > absl::ZeroDuration()) {
      AddHeader("Retry-After", absl::StrCat(absl::ToInt64Seconds(wait)));
    }
    if (libre_translate_errors_) {
      Send(http_status != 0 ? http_status : LibreTranslateHttpStatus(status), kJson,
           LibreTranslateErrorJson(status));
      return;
    }
    Send(http_status != 0 ? http_status : HttpStatusFor(status.code()), kJson,
         ErrorJson(status) + "\n");
  }
  // 405, with the methods `path()` takes (e.g. "GET, HEAD") in Allow.
  void SendMethodNotAllowed(absl::string_view allowed) {
    AddHeader("Allow", std::string(allowed));
    SendError(absl::UnimplementedError(
                  absl::StrCat(path(), " takes ", allowed, ", not ", Excerpt(method()))),
              405);
  }
  void SendMessage(const google::protobuf::Message& message) {
    absl::StatusOr<std::string> json = ToJson(message);
    if (!json.ok()) {
      SendError(json.status());
      return;
    }
    Send(200, kJson, *json + "\n");
  }

  // Answers 200 in chunks (one connection per stream: it closes after).
  void StartChunks(absl::string_view content_type) {
    mg_disable_connection_keep_alive(connection_);
    StartAnswer(200, content_type, -1);
  }
  // False if the client is gone.
  bool SendChunk(absl::string_view chunk) {
    return mg_send_chunk(connection_, chunk.data(), static_cast<unsigned int>(chunk.size())) > 0;
  }
  void EndChunks() { mg_send_chunk(connection_, "", 0); }

 private:
  // The status line and headers; `length` -1: chunked.
  void StartAnswer(int status, absl::string_view content_type, int64_t length) {
    status_ = status;
    // Clients reconnect to a server that is not draining.
    if (frontend_.draining()) mg_disable_connection_keep_alive(connection_);
    // A body not read whole (refused before, over the limit, late) would be read as the next
    // request.
    if (!body_read_ && framing_.has_body()) mg_disable_connection_keep_alive(connection_);
    headers_.emplace_back("Content-Type", std::string(content_type));
    if (length >= 0) {
      headers_.emplace_back("Content-Length", absl::StrCat(length));
    } else {
      headers_.emplace_back("Transfer-Encoding", "chunked");
    }
    headers_.emplace_back("Cache-Control", "no-store");
    headers_.emplace_back("X-Content-Type-Options", "nosniff");
    if (continue_sent_) {
      // civetweb's header functions refuse to start an answer once anything was written (the
      // 100 Continue), so its head is written as bytes, on a connection that then closes (the
      // keep-alive headers are civetweb's to add).
      mg_disable_connection_keep_alive(connection_);
      std::string head = absl::StrCat("HTTP/1.1 ", status, " ",
                                      mg_get_response_code_text(connection_, status), "\r\n");
      for (const auto& [name, value] : headers_) absl::StrAppend(&head, name, ": ", value, "\r\n");
      absl::StrAppend(&head, "Connection: close\r\n\r\n");
      mg_write(connection_, head.data(), head.size());
      return;
    }
    mg_response_header_start(connection_, status);
    for (const auto& [name, value] : headers_) {
      mg_response_header_add(connection_, name.c_str(), value.c_str(),
                             static_cast<int>(value.size()));
    }
    mg_response_header_send(connection_);
  }

  mg_connection* const connection_;
  const mg_request_info& info_;
  const HttpFrontend& frontend_;
  const absl::Time start_;
  int status_ = 0;
  BodyFraming framing_;  // CheckFraming's; no body until then.
  bool body_read_ = false;
  bool libre_translate_errors_ = false;
  bool continue_sent_ = false;  // "100 Continue" was written.
  std::vector<std::pair<std::string, std::string>> headers_;
};

absl::StatusOr<std::unique_ptr<HttpFrontend>> HttpFrontend::Start(const Options& options,
                                                                  TranslationCore* core,
                                                                  DrainGate* drain) {
  std::unique_ptr<HttpFrontend> frontend(new HttpFrontend(options, core, drain));
  mg_init_library(options.tls != nullptr ? MG_FEATURES_SSL : 0);
  // civetweb marks a TLS port with a trailing "s".
  const std::string ports = options.tls != nullptr ? options.listen + "s" : options.listen;
  const std::string threads = absl::StrCat(options.threads);
  const std::string timeout_ms = absl::StrCat(absl::ToInt64Milliseconds(options.timeout));
  const std::pair<std::string, std::string> settings[] = {
      {"listening_ports", ports},
      {"num_threads", threads},
      // Accepted connections waiting for a thread; beyond them the kernel's backlog.
      {"connection_queue", threads},
      // Bounds the whole time a request's headers take to arrive (not each read), and each write.
      {"request_timeout_ms", timeout_ms},
      {"enable_keep_alive", "yes"},
      {"keep_alive_timeout_ms", timeout_ms},
      {"enable_auth_domain_check", "no"},
  };
  std::vector<const char*> config;
  for (const auto& [name, value] : settings) {
    config.push_back(name.c_str());
    config.push_back(value.c_str());
  }
  config.push_back(nullptr);
  mg_callbacks callbacks = {};
  // civetweb's messages are not printed: those that say why it cannot start (its error only says
  // that it cannot) go into the status; later ones are about single connections.
  callbacks.log_message = [](const mg_connection*, const char* message) {
    if (start_message != nullptr) absl::StrAppend(start_message, ": ", message);
    return 1;
  };
  if (options.tls != nullptr) {
    // The SSL_CTX is set up by ServerTls alone (1: civetweb loads no files itself), so that each
    // handshake takes the files current at that moment.
    callbacks.init_ssl = [](void* context, void* frontend) {
      const absl::Status status =
          static_cast<HttpFrontend*>(frontend)->options_.tls->ConfigureSslContext(
              static_cast<SSL_CTX*>(context));
      if (!status.ok() && start_message != nullptr) {
        absl::StrAppend(start_message, ": ", status.message());
      }
      return status.ok() ? 1 : -1;
    };
  }
  mg_init_data init = {&callbacks, frontend.get(), config.data()};
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error = {&error_code, error_text, sizeof(error_text)};
  std::string message;
  start_message = &message;
  frontend->context_ = mg_start2(&init, &error);
  start_message = nullptr;
  if (frontend->context_ == nullptr) {
    mg_exit_library();
    // The messages end with the error's text.
    return absl::UnavailableError(
        absl::StrCat("cannot serve HTTP on ", options.listen, " (--http_listen)",
                     message.empty() ? absl::StrCat(": ", error_text) : message));
  }
  mg_set_request_handler(frontend->context_, "/", &HttpFrontend::HandleRequest, frontend.get());
  mg_server_port port = {};
  if (mg_get_server_ports(frontend->context_, 1, &port) == 1) frontend->port_ = port.port;
  return frontend;
}

HttpFrontend::HttpFrontend(const Options& options, TranslationCore* core, DrainGate* drain)
    : options_(options), core_(core), drain_(drain) {}

HttpFrontend::~HttpFrontend() { Stop(); }

bool HttpFrontend::draining() const { return drain_->draining(); }

void HttpFrontend::Stop() {
  if (context_ == nullptr) return;
  drain_->StartDraining();
  {
    absl::MutexLock lock(&mutex_);
    context_stopping_ = true;
    for (TranslationCore::Call* call : calls_) call->Cancel();
  }
  mg_stop(context_);  // Waits for the threads, whose requests now end at once.
  context_ = nullptr;
  mg_exit_library();
}

void HttpFrontend::TrackCall(TranslationCore::Call* call) {
  absl::MutexLock lock(&mutex_);
  calls_.insert(call);
  // Stop may have cancelled the others already.
  if (context_stopping_) call->Cancel();
}

void HttpFrontend::ReleaseCall(TranslationCore::Call* call) {
  absl::MutexLock lock(&mutex_);
  calls_.erase(call);
}

int HttpFrontend::HandleRequest(mg_connection* connection, void* data) {
  HttpFrontend& self = *static_cast<HttpFrontend*>(data);
  Exchange exchange(connection, self);
  const absl::string_view path = exchange.path();
  const absl::string_view method = exchange.method();
  // With --api_keys_file, which key is checked before the body is read (so that a client without
  // a key cannot make the server read and parse a body): the headers' key, or (LibreTranslate's
  // /translate, whose key may be in the body) the headers' key when there is one; the body's key
  // is checked once the body is parsed. None is charged here: the core charges the request.
  enum class KeyCheck { kNone, kHeader, kHeaderIfPresent };
  struct Route {
    absl::string_view path;
    absl::string_view method;
    void (HttpFrontend::*handle)(Exchange&);
    bool libre_translate;  // LibreTranslate's API: its error shape.
    KeyCheck key_check;
    absl::string_view counted_as;  // The requests metric's method label; empty: not counted.
  };
  static constexpr Route kApi[] = {
      {"/v1/translate", "POST", &HttpFrontend::Translate, false, KeyCheck::kHeader, "Translate"},
      {"/v1/translate:stream", "POST", &HttpFrontend::TranslateStream, false, KeyCheck::kHeader,
       "TranslateStream"},
      {"/v1/models", "GET", &HttpFrontend::ListModels, false, KeyCheck::kHeader, ""},
      {"/translate", "POST", &HttpFrontend::LibreTranslate, true, KeyCheck::kHeaderIfPresent,
       "LibreTranslate"},
      {"/languages", "GET", &HttpFrontend::LibreTranslateLanguages, true, KeyCheck::kNone, ""},
      {"/frontend/settings", "GET", &HttpFrontend::LibreTranslateSettings, true, KeyCheck::kNone,
       ""},
  };
  const Route* route = nullptr;
  for (const Route& candidate : kApi) {
    if (path == candidate.path) route = &candidate;
  }
  if (route != nullptr && route->libre_translate) exchange.UseLibreTranslateErrors();
  // Framing two readers could take differently: 400, and no next request on this connection.
  if (absl::Status framing = exchange.CheckFraming(); !framing.ok()) {
    exchange.CloseAfterAnswer();
    exchange.SendError(framing);
    return exchange.status();
  }
  if (path == "/healthz" || path == "/readyz") {
    if (method != "GET" && method != "HEAD") {
      exchange.SendMethodNotAllowed("GET, HEAD");
      return exchange.status();
    }
    // Live while the process answers; ready as the gRPC health of the Translator: SERVING once
    // the models are loaded, until draining.
    const bool ready = path == "/healthz" || (!self.draining() && !self.core_->models().empty());
    exchange.Send(ready ? 200 : 503, kJson,
                  absl::StrCat("{\"status\":\"", ready ? "SERVING" : "NOT_SERVING", "\"}\n"));
    return exchange.status();
  }
  for (const StaticFile& file : kStaticFiles) {
    if (path != file.path) continue;
    if (method != "GET" && method != "HEAD") {
      exchange.SendMethodNotAllowed("GET, HEAD");
    } else {
      if (file.content_type != kJson) {
        exchange.AddHeader("Content-Security-Policy", kContentSecurityPolicy);
      }
      exchange.Send(200, file.content_type, EmbeddedFile(file.file));
    }
    return exchange.status();
  }
  if (route != nullptr) {
    if (method != route->method) {
      exchange.SendMethodNotAllowed(route->method);
      return exchange.status();
    }
    const std::optional<std::string> key = exchange.ApiKey();
    if (route->key_check == KeyCheck::kHeader ||
        (route->key_check == KeyCheck::kHeaderIfPresent && key.has_value())) {
      if (absl::Status status = self.core_->CheckApiKey(key, /*charge_request=*/false);
          !status.ok()) {
        if (!route->counted_as.empty()) {
          self.core_->RecordRefused(Frontend::kHttp, std::string(route->counted_as), status);
        }
        exchange.SendError(status);
        return exchange.status();
      }
    }
    if (!self.drain_->TryEnter()) {
      exchange.SendError(absl::UnavailableError("the server is shutting down"));
      return exchange.status();
    }
    (self.*route->handle)(exchange);
    self.drain_->Leave();
    return exchange.status();
  }
  // LibreTranslate's routes are named without methods: "METHOD /path" items are the routes
  // /openapi.json describes (tests/e2e/scripts/openapi_test.py holds the two equal), and it
  // describes the native API only.
  exchange.SendError(absl::NotFoundError(
      absl::StrCat("no ", Excerpt(path),
                   " here; the API is POST /v1/translate, POST /v1/translate:stream, GET "
                   "/v1/models, GET /healthz, GET /readyz, GET /openapi.json, and LibreTranslate's "
                   "/translate, /languages and /frontend/settings; the translation page is /")));
  return exchange.status();
}

void HttpFrontend::ListModels(Exchange& exchange) {
  absl::StatusOr<v1::ListModelsResponse> models = mtserve::ListModels(*core_, exchange.ApiKey());
  if (!models.ok()) {
    exchange.SendError(models.status());
    return;
  }
  exchange.SendMessage(*models);
}

void HttpFrontend::Translate(Exchange& exchange) {
  constexpr char kMethod[] = "Translate";
  v1::TranslateRequest message;
  absl::StatusOr<absl::Time> deadline = exchange.Deadline();
  const absl::Status parsed = [&]() -> absl::Status {
    if (!deadline.ok()) return deadline.status();
    absl::StatusOr<std::string> body = exchange.ReadBody();
    if (!body.ok()) return body.status();
    return ParseJson(*body, "the request body", RequestValueBounds(core_->limits()), message);
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed);
    if (exchange.status() == 0) exchange.SendError(parsed);
    return;
  }
  TranslationCore::Request request = ToCoreRequest(message, *deadline, kMethod, Frontend::kHttp);
  request.api_key = exchange.ApiKey();
  absl::StatusOr<TranslationCore::Reply> reply = RunCall(std::move(request));
  if (!reply.ok()) {
    exchange.SendError(reply.status());
    return;
  }
  exchange.SendMessage(ToTranslateResponse(*core_, *reply, message.options().return_scores()));
}

absl::StatusOr<TranslationCore::Reply> HttpFrontend::RunCall(TranslationCore::Request request) {
  // Shared with the callback, which may run after this thread stops waiting on it.
  struct Result {
    absl::Notification done;
    absl::StatusOr<TranslationCore::Reply> reply;
  };
  auto result = std::make_shared<Result>();
  auto call = std::make_shared<TranslationCore::Call>();
  TrackCall(call.get());
  core_->Translate(std::move(request), call,
                   [result](absl::StatusOr<TranslationCore::Reply> reply) {
                     result->reply = std::move(reply);
                     result->done.Notify();
                   });
  result->done.WaitForNotification();
  ReleaseCall(call.get());
  return std::move(result->reply);
}

void HttpFrontend::LibreTranslate(Exchange& exchange) {
  constexpr char kMethod[] = "LibreTranslate";
  absl::StatusOr<absl::Time> deadline = exchange.Deadline();
  absl::StatusOr<LibreTranslateRequest> request = [&]() -> absl::StatusOr<LibreTranslateRequest> {
    if (!deadline.ok()) return deadline.status();
    absl::StatusOr<std::string> body = exchange.ReadBody();
    if (!body.ok()) return body.status();
    return ParseLibreTranslateRequest(*body, exchange.content_type(), exchange.ApiKey(), *core_);
  }();
  if (!request.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, request.status());
    if (exchange.status() == 0) exchange.SendError(request.status());
    return;
  }
  TranslationCore::Request core_request = std::move(request->core);
  core_request.deadline = *deadline;
  core_request.method = kMethod;
  core_request.frontend = Frontend::kHttp;
  absl::StatusOr<TranslationCore::Reply> reply = RunCall(std::move(core_request));
  if (!reply.ok()) {
    exchange.SendError(LibreTranslateCoreError(*request, reply.status()));
    return;
  }
  exchange.Send(200, kJson, LibreTranslateAnswer(*request, *reply));
}

void HttpFrontend::LibreTranslateLanguages(Exchange& exchange) {
  absl::StatusOr<std::string> languages = mtserve::LibreTranslateLanguages(*core_);
  if (!languages.ok()) {
    exchange.SendError(languages.status());
    return;
  }
  exchange.Send(200, kJson, *languages);
}

void HttpFrontend::LibreTranslateSettings(Exchange& exchange) {
  exchange.Send(200, kJson, mtserve::LibreTranslateSettings(*core_));
}

void HttpFrontend::TranslateStream(Exchange& exchange) {
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
  absl::StatusOr<absl::Time> deadline = exchange.Deadline();
  absl::StatusOr<std::string> body = absl::UnknownError("not read");
  const absl::Status parsed = [&]() -> absl::Status {
    if (!deadline.ok()) return deadline.status();
    body = exchange.ReadBody();
    if (!body.ok()) return body.status();
    Lines lines{*body};
    absl::string_view line;
    while (lines.Next(line)) {
      v1::TranslateStreamRequest message;
      MT_RETURN_IF_ERROR(parse_line(line, lines.number, message));
    }
    return absl::OkStatus();
  }();
  if (!parsed.ok()) {
    core_->RecordRefused(Frontend::kHttp, kMethod, parsed);
    if (exchange.status() == 0) exchange.SendError(parsed);
    return;
  }

  // Answers as they come, from core and worker threads; this thread writes them.
  struct Answers {
    absl::Mutex mutex;
    std::deque<std::string> lines ABSL_GUARDED_BY(mutex);
    StreamWindow in_core ABSL_GUARDED_BY(mutex);  // Texts in the core.
  };
  auto answers = std::make_shared<Answers>();
  auto call = std::make_shared<TranslationCore::Call>();
  TrackCall(call.get());
  exchange.StartChunks(kNdjson);
  Lines lines{*body};
  absl::string_view line;
  bool more = lines.Next(line);
  bool client_gone = false;
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
      TranslationCore::Request request;
      request.model = message.model();
      request.texts.push_back(std::move(*message.mutable_text()));
      request.options = ToRequested(message.options());
      request.deadline = *deadline;
      request.texts_field = "text";
      request.texts_repeated = false;
      request.method = kMethod;
      request.frontend = Frontend::kHttp;
      request.api_key = exchange.ApiKey();
      core_->Translate(std::move(request), call,
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
    for (const std::string& line : ready) {
      if (client_gone) break;
      if (!exchange.SendChunk(line)) {
        // A client that is gone reads no more: its texts still in the core stop.
        client_gone = true;
        call->Cancel();
      }
    }
    if (finished) break;
  }
  if (!client_gone) exchange.EndChunks();
  ReleaseCall(call.get());
}

}  // namespace mtserve
