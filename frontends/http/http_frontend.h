// The HTTP/1.1 front end: a thin adapter over the TranslationCore, as the gRPC service is, so that
// limits, errors, sentence splitting, the cache, deadlines and metrics are the same over both. It
// maps JSON bodies to core requests (http_json.h: protobuf's JSON mapping of the same messages)
// and statuses to HTTP ones (http_status.h).
//
//   POST /v1/translate         TranslateRequest -> TranslateResponse
//   POST /v1/translate:stream  TranslateStreamRequest per line (NDJSON) -> TranslateStreamResponse
//                              per line, each as soon as its text is translated
//   GET  /v1/models            ListModelsResponse
//   GET  /healthz              200 while the process runs
//   GET  /readyz               200 while serving, 503 while models load and while draining
//   GET  /openapi.json         the OpenAPI description of these routes
//   (frontends/http/openapi.json) GET  /                     the translation page
//   (frontends/http/web/), which calls the routes above POST /translate, GET /languages, GET
//   /frontend/settings
//                              LibreTranslate's API (libretranslate_api.h)
//
// The server is civetweb (Debian's libcivetweb, which prometheus-cpp's /metrics already runs
// on): a fixed pool of threads, each serving one connection at a time, with keep-alive, a bound
// on the time a client may take to send a request (headers and body) and to take each write of
// the answer, and a bounded queue of accepted connections. A translation blocks its thread, so
// the pool bounds the HTTP requests translating at once. cpp-httplib would do as well, but it is
// another package to install, and its timeouts are per read, which lets a client that sends a
// byte now and then hold a thread for ever.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "frontends/tls/server_tls.h"
#include "serving/drain_gate.h"
#include "serving/translation_core.h"

struct mg_context;
struct mg_connection;

namespace mtserve {

class HttpFrontend {
 public:
  struct Options {
    std::string listen;  // HOST:PORT, HOST an IP address; port 0: the kernel chooses.
    // Connections served at once (each holds a thread while it sends a request, waits for its
    // answer, or idles between requests); as many more wait to be accepted.
    int threads = 16;
    // How long a client may take to send a request's headers and body, and to take each write of
    // an answer; also how long an idle keep-alive connection stays open.
    absl::Duration timeout = absl::Seconds(10);
    int64_t max_body_bytes = 4 << 20;  // Bigger bodies get 413.
    // HTTPS with these files (and client certificates when it verifies clients); null: HTTP.
    ServerTls* tls = nullptr;
  };

  // Listens and serves at once (the core answers UNAVAILABLE until its models are loaded). Each
  // request is counted in flight in `drain`; once `drain` drains, /readyz answers 503 and new
  // requests get 503 (UNAVAILABLE), while those in flight go on and their connections close after
  // the answer (clients reconnect to another server). `core` and `drain` outlive the front end.
  static absl::StatusOr<std::unique_ptr<HttpFrontend>> Start(const Options& options,
                                                             TranslationCore* core,
                                                             DrainGate* drain);
  ~HttpFrontend();

  HttpFrontend(const HttpFrontend&) = delete;
  HttpFrontend& operator=(const HttpFrontend&) = delete;

  // The port it listens on (useful with port 0).
  int port() const { return port_; }

  // Drains `drain` if it is not draining yet, cancels the requests still in flight, waits for
  // their answers, and stops listening.
  void Stop();

 private:
  class Exchange;

  HttpFrontend(const Options& options, TranslationCore* core, DrainGate* drain);

  static int HandleRequest(mg_connection* connection, void* frontend);
  // A call that Stop cancels until it is released.
  void TrackCall(TranslationCore::Call* call);
  void ReleaseCall(TranslationCore::Call* call);
  bool draining() const;

  void Translate(Exchange& exchange);
  void TranslateStream(Exchange& exchange);
  void ListModels(Exchange& exchange);
  void LibreTranslate(Exchange& exchange);
  void LibreTranslateLanguages(Exchange& exchange);
  void LibreTranslateSettings(Exchange& exchange);
  // Runs `request` in the core and waits for its reply; Stop cancels it.
  absl::StatusOr<TranslationCore::Reply> RunCall(TranslationCore::Request request);

  const Options options_;
  TranslationCore* const core_;
  DrainGate* const drain_;
  mg_context* context_ = nullptr;
  int port_ = 0;

  mutable absl::Mutex mutex_;
  bool context_stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::set<TranslationCore::Call*> calls_ ABSL_GUARDED_BY(mutex_);  // To cancel on Stop.
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_
