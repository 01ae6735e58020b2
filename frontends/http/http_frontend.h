// The HTTP/1.1 front end: a thin adapter over the TranslationCore, as the gRPC service is, so that
// limits, errors, sentence splitting, the cache, deadlines and metrics are the same over both. It
// maps JSON bodies to core requests (http_json.h: protobuf's JSON mapping of the same messages)
// and statuses to HTTP ones (http_status.h). The routes:
//
//   POST /v1/translate         TranslateRequest -> TranslateResponse
//   POST /v1/translate:stream  TranslateStreamRequest per line (NDJSON) -> TranslateStreamResponse
//                              per line, each as soon as its text is translated
//   GET  /v1/models            ListModelsResponse
//   POST /v1/models/{name}:load, POST /v1/models/{name}:unload
//                              (LoadModelRequest, UnloadModelRequest: optional) -> ModelInfo;
//                              the operators' calls (TranslationCore::LoadModel, UnloadModel)
//   POST /v1/detect            DetectRequest -> DetectResponse
//   POST /v1/translate_file    a file as multipart/form-data (file_upload.h) -> 202 Accepted,
//                              its FileJob, Location: /v1/jobs/{id} (serving/file_jobs.h)
//   GET  /v1/jobs/{id}         FileJob; DELETE cancels and forgets it -> FileJob as it ended
//   GET  /v1/jobs/{id}/result  the translated file, as an attachment (409 before it is done)
//   POST /v1/glossaries        CreateGlossaryRequest -> 201 Created, GlossaryInfo, Location:
//                              /v1/glossaries/{id}; GET: ListGlossariesResponse
//   GET  /v1/glossaries/{id}   Glossary; DELETE -> DeleteGlossaryResponse ({})
//                              (serving/glossaries.h)
//   GET  /healthz              200 while the process runs
//   GET  /readyz               200 while serving, 503 while models load and while draining
//   GET  /openapi.json         the OpenAPI description of these routes
//   (frontends/http/openapi.json) GET  /                     the translation page
//   (frontends/http/web/) POST /translate, POST /detect, GET /languages, GET /frontend/settings,
//                              POST /translate_file, GET /download_file/{id}/{file}
//                              LibreTranslate's API (libretranslate_api.h)
//   /v2/translate, /v2/languages, /v2/usage, /v2/glossaries[/{id}[/entries]],
//   /v2/glossary-language-pairs, /v2/document[/{id}[/result]]
//                              DeepL's API (frontends/deepl/deepl_api.h)
//
// The bytes move in the HTTP transport (http_server.h): the health paths, the files and every
// refusal that needs no body are answered on its I/O threads; the API's routes run on its handler
// threads, each blocking on its translation. A client that disconnects cancels its translation;
// a file job outlives the request that made it (its deadline is FileJobs'), but LibreTranslate's
// /translate_file, which waits for its job, cancels it when its client leaves.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "frontends/http/http_exchange.h"
#include "frontends/http/http_server.h"
#include "serving/drain_gate.h"
#include "serving/file_jobs.h"
#include "serving/glossaries.h"
#include "serving/translation_core.h"

namespace mtserve {

class HttpFrontend : public HttpService {
 public:
  // Listens and serves at once (the core answers UNAVAILABLE until its models are loaded). Each
  // API request is counted in flight in `drain`; once `drain` drains, /readyz answers 503 and
  // requests get 503 (UNAVAILABLE), while those in flight go on. Files are translated as jobs of
  // `file_jobs`, whose max_file_bytes (plus kFileFormOverheadBytes) bounds the file routes'
  // bodies. The glossary routes (the native API's and DeepL's) use `glossaries` (null: they
  // answer 501). `core`, `drain`, `file_jobs` and `glossaries` outlive the front end.
  static absl::StatusOr<std::unique_ptr<HttpFrontend>> Start(const HttpServer::Options& options,
                                                             TranslationCore* core,
                                                             DrainGate* drain, FileJobs* file_jobs,
                                                             Glossaries* glossaries = nullptr);
  ~HttpFrontend() override;

  HttpFrontend(const HttpFrontend&) = delete;
  HttpFrontend& operator=(const HttpFrontend&) = delete;

  int port() const { return server_->port(); }

  // Once `drain` drains: every answer closes its connection (HttpServer::Drain).
  void StartDraining() { server_->Drain(); }
  // Drains `drain` if it is not draining yet, cancels the requests still in flight, lets their
  // answers be written, and stops.
  void Stop();

  // HttpService.
  std::optional<HttpAnswer> Route(const HttpRequest& head) override;
  HttpAnswer Refuse(const HttpRequest& head, const absl::Status& status, int http_status) override;
  bool TakesFileBody(const HttpRequest& head) override;
  void Handle(const HttpRequest& request, HttpReply& reply) override;

  // The API's routes, on a handler thread (the route table in http_frontend.cc names them).
  void Translate(const HttpRequest& request, HttpReply& reply);
  void TranslateStream(const HttpRequest& request, HttpReply& reply);
  void ListModels(const HttpRequest& request, HttpReply& reply);
  void LoadModel(const HttpRequest& request, HttpReply& reply);
  void UnloadModel(const HttpRequest& request, HttpReply& reply);
  void Detect(const HttpRequest& request, HttpReply& reply);
  void LibreTranslateDetect(const HttpRequest& request, HttpReply& reply);
  void LibreTranslate(const HttpRequest& request, HttpReply& reply);
  void LibreTranslateLanguages(const HttpRequest& request, HttpReply& reply);
  void LibreTranslateSettings(const HttpRequest& request, HttpReply& reply);
  void TranslateFile(const HttpRequest& request, HttpReply& reply);
  void GetJob(const HttpRequest& request, HttpReply& reply);
  void DeleteJob(const HttpRequest& request, HttpReply& reply);
  void GetJobResult(const HttpRequest& request, HttpReply& reply);
  void LibreTranslateFile(const HttpRequest& request, HttpReply& reply);
  void LibreTranslateDownload(const HttpRequest& request, HttpReply& reply);
  void CreateGlossary(const HttpRequest& request, HttpReply& reply);
  void ListGlossaries(const HttpRequest& request, HttpReply& reply);
  void GetGlossary(const HttpRequest& request, HttpReply& reply);
  void DeleteGlossary(const HttpRequest& request, HttpReply& reply);
  void DeepLTranslate(const HttpRequest& request, HttpReply& reply);
  void DeepLLanguages(const HttpRequest& request, HttpReply& reply);
  void DeepLUsage(const HttpRequest& request, HttpReply& reply);
  void DeepLGlossaryPairs(const HttpRequest& request, HttpReply& reply);
  void DeepLCreateGlossary(const HttpRequest& request, HttpReply& reply);
  void DeepLListGlossaries(const HttpRequest& request, HttpReply& reply);
  void DeepLGetGlossary(const HttpRequest& request, HttpReply& reply);
  void DeepLDeleteGlossary(const HttpRequest& request, HttpReply& reply);
  void DeepLGlossaryEntries(const HttpRequest& request, HttpReply& reply);
  void DeepLUploadDocument(const HttpRequest& request, HttpReply& reply);
  void DeepLDocumentStatus(const HttpRequest& request, HttpReply& reply);
  void DeepLDocumentResult(const HttpRequest& request, HttpReply& reply);

 private:
  HttpFrontend(TranslationCore* core, DrainGate* drain, FileJobs* file_jobs, Glossaries* glossaries)
      : core_(core), drain_(drain), file_jobs_(file_jobs), glossaries_(glossaries) {}

  // A call that Stop cancels until it is released.
  void TrackCall(TranslationCore::Call* call);
  void ReleaseCall(TranslationCore::Call* call);
  // Runs `request` in the core and waits for its reply; Stop and the client leaving cancel it.
  absl::StatusOr<TranslationCore::Reply> RunCall(TranslationCore::Request request,
                                                 HttpReply& reply);
  // The answer of a done job's result: its bytes, type and name as an attachment.
  HttpAnswer ResultAnswer(absl::string_view path, const JobRecord& record);

  TranslationCore* const core_;
  DrainGate* const drain_;
  FileJobs* const file_jobs_;
  Glossaries* const glossaries_;
  bool https_ = false;  // LibreTranslate's file URLs are https: ones.
  std::unique_ptr<HttpServer> server_;

  absl::Mutex mutex_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::set<TranslationCore::Call*> calls_ ABSL_GUARDED_BY(mutex_);  // To cancel on Stop.
  // The jobs LibreTranslate's /translate_file waits for: Stop cancels them.
  std::set<std::string> waited_jobs_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_FRONTEND_H_
