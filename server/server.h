// The mtserve server: the core, the front ends (gRPC with health and reflection, HTTP), metrics,
// TLS and API keys wired together from a ServerConfig, and its lifecycle: the ports open first
// (health NOT_SERVING), the models load, it serves, and on a signal it drains and stops.
#ifndef MTSERVE_SERVER_SERVER_H_
#define MTSERVE_SERVER_SERVER_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "frontends/grpc/translation_service.h"
#include "frontends/http/http_frontend.h"
#include "frontends/http/metrics_service.h"
#include "frontends/tls/server_tls.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "model/model.h"
#include "server/job_sweep.h"
#include "server/model_dir_rescan.h"
#include "server/server_flags.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/file_jobs.h"
#include "serving/glossaries.h"
#include "serving/metrics.h"
#include "serving/repository/model_repository.h"
#include "serving/state/local_glossary_store.h"
#include "serving/state/local_job_store.h"
#include "serving/translation_core.h"
#include "text/language_detector.h"

namespace mtserve {

class Server {
 public:
  Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the metrics, gRPC and HTTP ports (health NOT_SERVING, translations UNAVAILABLE until
  // Serve), with TLS and API keys when configured, prints where it listens and writes the ready
  // file: "loading". On an error the caller ends the process at once: what was started is not
  // stopped.
  absl::Status Start(const ServerConfig& config);

  // What SIGHUP does: re-reads the TLS files, API keys and --glossary_dir, if any, saying so. It
  // shares what it reloads, so it may run after this Server is gone (the signal thread lives until
  // the end).
  std::function<void(int hangups)> HangupHandler() const;

  // Loads the models one after the other, printing each, then the language detector.
  absl::Status LoadModels();

  // Starts the workers and serves: health SERVING, the ready file "serving".
  absl::Status Serve();

  // After `signal_number` (SIGTERM or SIGINT): health NOT_SERVING, every front end refuses new
  // work (then the ready file says "draining"), what is in flight finishes within
  // --shutdown_grace (then it is cancelled), and everything stops. The whole drain sequence, in
  // order.
  void Drain(int signal_number);

  // The file API's jobs (serving/file_jobs.h), for the front ends' file calls: made by Start
  // before the front ends, gone once Drain has cancelled those left.
  FileJobs* file_jobs() const { return file_jobs_.get(); }

 private:
  // The parts of Start.
  absl::Status StartReloadedFiles();  // TLS and API keys.
  absl::Status StartFileJobs();       // The job store (--job_dir), its sweep, the jobs.
  // The glossary store (--glossary_store_dir) and the glossaries (--glossary_dir), for the core.
  absl::Status StartGlossaries();
  absl::Status StartGrpc();
  absl::Status StartMetrics();
  absl::Status StartHttp();
  // The HTTP transport's options from the flags (the API's and /metrics').
  HttpServer::Options HttpOptions() const;
  int metrics_port() const { return metrics_service_ == nullptr ? 0 : metrics_service_->port(); }
  void PrintListening() const;
  // Writes `state` and the ports into --ready_file, if any; the error names the flag.
  absl::Status WriteReadyFile(absl::string_view state) const;

  ServerConfig config_;
  // Declared in the order they start, so that they are destroyed in reverse.
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<MetricsService> metrics_service_;  // None without --metrics_listen.
  std::shared_ptr<ServerTls> tls_;                   // Shared with the SIGHUP handler.
  std::shared_ptr<ApiKeyAuthenticator> api_keys_;    // Shared with the SIGHUP handler.
  // One gate for the core and both front ends: draining refuses new work everywhere at once.
  DrainGate drain_;
  // Loaded with the models, used by the core: outlives it.
  std::unique_ptr<LanguageDetector> language_detector_;
  // Stored glossaries, used by the core and the front ends: outlive them. The glossaries are
  // shared with the SIGHUP handler, which re-reads --glossary_dir.
  std::unique_ptr<LocalGlossaryStore> glossary_store_;
  std::shared_ptr<Glossaries> glossaries_;
  std::unique_ptr<TranslationCore> core_;
  // The file jobs over the core, their store, and its sweep.
  std::unique_ptr<LocalJobStore> job_store_;
  std::unique_ptr<FileJobs> file_jobs_;
  std::unique_ptr<JobSweep> job_sweep_;
  std::unique_ptr<TranslationService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  int grpc_port_ = 0;
  grpc::HealthCheckServiceInterface* health_ = nullptr;  // grpc_server_'s.
  std::unique_ptr<HttpFrontend> http_;                   // None without --http_listen.
  // The served models (loaded at start or on demand); before the scheduler, which its unloads
  // tell, and the core, which uses it.
  std::unique_ptr<ModelRepository> repository_;
  std::unique_ptr<BatchScheduler> scheduler_;
  // Re-reads --model_dir (shared with the SIGHUP handler); stopped before the parts it uses.
  std::shared_ptr<ModelDirRescan> rescan_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_SERVER_H_
