// The server's wiring and lifecycle (server.h): start, load, serve, drain.
#include "server/server.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/server_builder.h"
#include "model/compute_type.h"
#include "model/model_config.h"
#include "model/model_size.h"
#include "server/ready_file.h"
#include "serving/translator_engine.h"

namespace mtserve {
namespace {

constexpr char kServiceName[] = "mtserve.v1.Translator";
// How long a pinged gRPC client has to answer before its connection is closed.
constexpr absl::Duration kKeepaliveTimeout = absl::Seconds(20);
// How long a new gRPC connection has for its handshake (TLS and HTTP/2's preface): a client that
// opens a connection and says nothing holds only that connection's memory, and not for long.
constexpr absl::Duration kHandshakeTimeout = absl::Seconds(20);

}  // namespace

absl::Status Server::Start(const ServerConfig& config) {
  config_ = config;
  metrics_ = Metrics::Create();
  if (absl::Status status = StartMetrics(); !status.ok()) return status;
  if (absl::Status status = StartReloadedFiles(); !status.ok()) return status;
  rescan_ = std::make_shared<ModelDirRescan>(ModelDirRescan::Options{
      config_.model_dirs, config_.default_compute_type, config_.model_dir_poll});
  core_ = std::make_unique<TranslationCore>(config_.limits, config_.batching.max_queued_texts,
                                            config_.cache_bytes, metrics_.get(), &drain_);
  if (api_keys_ != nullptr) core_->RequireApiKeys(api_keys_.get());
  core_->UsePivotLanguage(config_.pivot_language);
  if (absl::Status status = StartGlossaries(); !status.ok()) return status;
  if (absl::Status status = StartFileJobs(); !status.ok()) return status;
  if (absl::Status status = StartGrpc(); !status.ok()) return status;
  if (absl::Status status = StartHttp(); !status.ok()) return status;
  PrintListening();
  return WriteReadyFile("loading");
}

absl::Status Server::StartReloadedFiles() {
  if (!config_.tls_cert.empty() || !config_.tls_key.empty() || !config_.tls_client_ca.empty()) {
    ServerTls::Options options;
    options.certificate_path = config_.tls_cert;
    options.private_key_path = config_.tls_key;
    options.client_ca_path = config_.tls_client_ca;
    options.poll_interval = config_.reload_interval;
    absl::StatusOr<std::unique_ptr<ServerTls>> started = ServerTls::Start(options);
    if (!started.ok()) return started.status();
    tls_ = *std::move(started);
  }
  if (!config_.api_keys_file.empty()) {
    absl::StatusOr<std::unique_ptr<ApiKeyAuthenticator>> started =
        ApiKeyAuthenticator::Start(config_.api_keys_file, config_.reload_interval, metrics_.get());
    if (!started.ok()) return started.status();
    api_keys_ = *std::move(started);
  }
  return absl::OkStatus();
}

absl::Status Server::StartFileJobs() {
  const ServerConfig::Files& files = config_.files;
  LocalJobStore::Options options;
  options.retention = files.retention;
  options.max_jobs = files.max_jobs;
  options.max_result_bytes = files.results_bytes;
  auto now = [] { return absl::Now(); };
  if (files.job_dir.empty()) {
    job_store_ = std::make_unique<LocalJobStore>(options, now);
  } else {
    absl::StatusOr<std::unique_ptr<LocalJobStore>> store =
        LocalJobStore::InDirectory(files.job_dir, options, now);
    if (!store.ok()) {
      return absl::Status(store.status().code(), absl::StrCat("--job_dir=", files.job_dir, ": ",
                                                              store.status().message()));
    }
    job_store_ = *std::move(store);
  }
  file_jobs_ = std::make_unique<FileJobs>(
      core_.get(), job_store_.get(),
      FileJobs::Options{files.max_file_bytes, files.job_timeout, metrics_.get()});
  // Expired jobs' results are removed within a minute even when no call comes.
  job_sweep_ = std::make_unique<JobSweep>(absl::Minutes(1), [this] {
    job_store_->RemoveExpired();
    const JobStore::Stats stats = job_store_->stats();
    metrics_->SetFileJobsHeld(stats.jobs, stats.result_bytes);
  });
  return absl::OkStatus();
}

absl::Status Server::StartGlossaries() {
  const ServerConfig::Glossaries& flags = config_.glossaries;
  GlossaryLimits limits;
  limits.max_entries = flags.max_entries;
  limits.max_glossaries_per_key = flags.max_per_key;
  limits.terms = config_.limits.terms;
  auto now = [] { return absl::Now(); };
  if (flags.store_dir.empty()) {
    glossary_store_ = std::make_unique<LocalGlossaryStore>(now);
  } else {
    // A stored glossary's file: each entry's source and targets, JSON-escaped, and its fields.
    const int64_t max_file_bytes = int64_t{limits.max_entries} * (limits.terms.max_targets + 1) *
                                       (2 * int64_t{limits.terms.max_term_bytes} + 16) +
                                   (1 << 20);
    absl::StatusOr<std::unique_ptr<LocalGlossaryStore>> store =
        LocalGlossaryStore::InDirectory(flags.store_dir, max_file_bytes, now);
    if (!store.ok()) {
      return absl::Status(
          store.status().code(),
          absl::StrCat("--glossary_store_dir=", flags.store_dir, ": ", store.status().message()));
    }
    glossary_store_ = *std::move(store);
  }
  // A glossary is made for a pair some model, or chain of models, translates (none while the
  // models load).
  auto pair_served = [core = core_.get()](const std::string& source, const std::string& target) {
    const std::shared_ptr<const LanguageRoutes> routes = core->routes();
    return routes != nullptr && routes->Route(source, target).ok();
  };
  absl::StatusOr<std::unique_ptr<Glossaries>> glossaries =
      Glossaries::Start(glossary_store_.get(), api_keys_.get(), limits, std::move(pair_served),
                        flags.dir, config_.reload_interval);
  if (!glossaries.ok()) return glossaries.status();
  glossaries_ = *std::move(glossaries);
  core_->UseGlossaries(glossaries_.get());
  return absl::OkStatus();
}

absl::Status Server::StartGrpc() {
  service_ = std::make_unique<TranslationService>(core_.get(), &drain_, file_jobs_.get(),
                                                  config_.grpc.max_file_calls, glossaries_.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(
      config_.listen, tls_ != nullptr ? tls_->GrpcCredentials() : grpc::InsecureServerCredentials(),
      &grpc_port_);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.SetMaxSendMessageSize(-1);
  if (config_.max_connection_age > absl::ZeroDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config_.max_connection_age)));
    // Calls still running when the age is reached get this long to finish.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               static_cast<int>(absl::ToInt64Milliseconds(config_.shutdown_grace)));
  }
  // Connections: a bound on each one's calls; idle ones closed; dead peers found by pinging them;
  // clients that ping too often (with or without calls) sent away; handshakes (TLS and HTTP/2's
  // preface) done within kHandshakeTimeout or dropped.
  const ServerConfig::Grpc& connections = config_.grpc;
  auto milliseconds = [](absl::Duration d) {
    return static_cast<int>(absl::ToInt64Milliseconds(d));
  };
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             connections.max_streams_per_connection);
  if (connections.idle_timeout > absl::ZeroDuration()) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                               milliseconds(connections.idle_timeout));
  }
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, milliseconds(connections.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, milliseconds(kKeepaliveTimeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             milliseconds(connections.min_ping_interval));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, milliseconds(kHandshakeTimeout));
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.listen, " (--listen)"));
  }
  health_ = grpc_server_->GetHealthCheckService();
  health_->SetServingStatus(false);  // Until the models are loaded.
  health_->SetServingStatus(kServiceName, false);
  return absl::OkStatus();
}

HttpServer::Options Server::HttpOptions() const {
  HttpServer::Options options;
  options.listen = config_.http_listen;
  options.io_threads = 2;  // TLS handshakes take CPU: two, so that one never holds up the rest.
  options.handler_threads = config_.http_threads;
  options.max_queued_requests = config_.http_max_queued;
  options.timeouts = config_.http_timeouts;
  options.max_body_bytes = config_.max_message_bytes;
  options.connection_limits.max_per_address = config_.http_max_connections_per_address;
  options.connection_limits.trusted_proxies = config_.http_trusted_proxies;
  return options;
}

absl::Status Server::StartMetrics() {
  if (config_.metrics_listen.empty()) return absl::OkStatus();
  // The API's deadlines, without TLS (a scraper on the private network) or a per-address cap
  // (one scraper).
  HttpServer::Options options = HttpOptions();
  options.listen = config_.metrics_listen;
  options.listen_flag = "--metrics_listen";
  options.io_threads = 1;
  options.connection_limits = {};
  absl::StatusOr<std::unique_ptr<MetricsService>> started =
      MetricsService::Start(options, [metrics = metrics_.get()] { return metrics->Scrape(); });
  if (!started.ok()) return started.status();
  metrics_service_ = *std::move(started);
  return absl::OkStatus();
}

absl::Status Server::StartHttp() {
  // Like gRPC, HTTP answers at once: /readyz 503 and translations UNAVAILABLE until the models
  // are loaded.
  if (config_.http_listen.empty()) return absl::OkStatus();
  HttpServer::Options options = HttpOptions();
  options.tls = tls_.get();
  options.drain = &drain_;
  absl::StatusOr<std::unique_ptr<HttpFrontend>> started =
      HttpFrontend::Start(options, core_.get(), &drain_, file_jobs_.get(), glossaries_.get());
  if (!started.ok()) return started.status();
  http_ = *std::move(started);
  return absl::OkStatus();
}

void Server::PrintListening() const {
  // The ports chosen are printed for people and tools that ask for port 0.
  const std::string metrics_where =
      metrics_port() == 0
          ? std::string("metrics off")
          : absl::StrCat("metrics on ", config_.metrics_listen, " (port ", metrics_port(), ")");
  std::fprintf(stderr, "mtserve: listening on %s (port %d), %s\n", config_.listen.c_str(),
               grpc_port_, metrics_where.c_str());
  if (api_keys_ != nullptr) {
    std::fprintf(stderr, "mtserve: API keys required (%s)\n", config_.api_keys_file.c_str());
  }
  if (tls_ != nullptr) {
    std::fprintf(stderr, "mtserve: TLS on gRPC and HTTP%s\n",
                 tls_->verifies_clients() ? ", client certificates required" : "");
  }
  if (http_ != nullptr) {
    std::fprintf(stderr, "mtserve: HTTP on %s (port %d)\n", config_.http_listen.c_str(),
                 http_->port());
  } else {
    std::fprintf(stderr, "mtserve: HTTP off\n");
  }
}

std::function<void(int hangups)> Server::HangupHandler() const {
  return [tls = tls_, api_keys = api_keys_, rescan = rescan_,
          glossaries = config_.glossaries.dir.empty() ? nullptr : glossaries_](int hangups) {
    // Says what it found, if anything changed or failed.
    if (rescan != nullptr) rescan->Rescan(/*signalled=*/true);
    if (tls == nullptr && api_keys == nullptr && glossaries == nullptr) return;
    // One line a reload, however many signals it answers (at most one reload a kHangupGap).
    std::fprintf(stderr, "mtserve: reloading on SIGHUP (%d since the last reload)\n", hangups);
    // Each logs its outcome.
    if (tls != nullptr) tls->Reload().IgnoreError();
    if (api_keys != nullptr) api_keys->Reload().IgnoreError();
    if (glossaries != nullptr) glossaries->Reload().IgnoreError();
  };
}

absl::Status Server::LoadModels() {
  // What each model is, from its config files, without loading it.
  std::vector<ModelRepository::Slot> slots;
  for (const ModelSpec& spec : config_.models) {
    absl::StatusOr<ModelConfig> config = LoadModelConfig(spec.dir);
    if (!config.ok()) return config.status();
    metrics_->SetModelInfo({spec.name, config->source_lang, config->target_lang,
                            ArchitectureSummary(*config),
                            std::string(ComputeTypeName(*spec.compute_type))});
    absl::StatusOr<int64_t> bytes = EstimateModelBytes(spec.dir, *spec.compute_type);
    if (!bytes.ok()) return bytes.status();
    slots.push_back({spec.name, spec.dir, *spec.compute_type, *std::move(config), *bytes});
  }
  ModelRepository::Options options;
  options.memory_budget = config_.model_memory;
  options.measure = [](const Model& model) { return model.resident_bytes(); };
  options.unloaded = [this](int slot, int64_t bytes) {
    const std::shared_ptr<const ModelRepository::Catalog> catalog = repository_->catalog();
    const std::string& name = catalog->slots[slot].name;
    const std::vector<int>& served = catalog->served;
    const bool retired = std::find(served.begin(), served.end(), slot) == served.end();
    std::fprintf(stderr, "mtserve: model %s unloaded (%s)\n", name.c_str(),
                 retired ? "replaced or removed, its last request ended" : "--model_memory");
    metrics_->RecordModelUnload(name, bytes);
    if (scheduler_ != nullptr) scheduler_->ForgetModel(slot);
  };
  metrics_->SetModelMemoryBudget(config_.model_memory);
  absl::StatusOr<std::unique_ptr<ModelRepository>> repository = ModelRepository::Create(
      std::move(slots), std::move(options),
      [metrics = metrics_.get()](const ModelRepository::Slot& slot) {
        const absl::Time start = absl::Now();
        absl::StatusOr<std::shared_ptr<const Model>> model =
            Model::Load(slot.dir, slot.compute_type);
        metrics->RecordModelLoad(slot.name, model.ok(), absl::ToDoubleSeconds(absl::Now() - start),
                                 model.ok() ? (*model)->resident_bytes() : 0);
        if (!model.ok()) {
          std::fprintf(stderr, "mtserve: model %s failed to load: %s\n", slot.name.c_str(),
                       std::string(model.status().message()).c_str());
        } else {
          std::fprintf(stderr, "mtserve: model %s (%s; %s) loaded from %s in %.1f s\n",
                       slot.name.c_str(), ArchitectureSummary(slot.config).c_str(),
                       std::string(ComputeTypeName(slot.compute_type)).c_str(), slot.dir.c_str(),
                       absl::ToDoubleSeconds(absl::Now() - start));
        }
        return model;
      });
  if (!repository.ok()) return repository.status();
  repository_ = *std::move(repository);
  // --model and --preload models now: a server that cannot load them should not start.
  for (size_t i = 0; i < config_.models.size(); ++i) {
    if (!config_.models[i].on_demand) MT_RETURN_IF_ERROR(repository_->LoadNow(static_cast<int>(i)));
  }
  if (!config_.language_model.empty()) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<LanguageDetector>> detector =
        LanguageDetector::Load(config_.language_model);
    if (!detector.ok()) {
      return absl::Status(detector.status().code(),
                          absl::StrCat("--language_model: ", detector.status().message()));
    }
    language_detector_ = *std::move(detector);
    std::fprintf(stderr, "mtserve: language detector (%zu languages) loaded from %s in %.1f s\n",
                 language_detector_->languages().size(), config_.language_model.c_str(),
                 absl::ToDoubleSeconds(absl::Now() - start));
    core_->UseLanguageDetector(language_detector_.get());
  }
  return absl::OkStatus();
}

absl::Status Server::WriteReadyFile(absl::string_view state) const {
  if (config_.ready_file.empty()) return absl::OkStatus();
  ReadyPorts ports;
  ports.grpc = grpc_port_;
  if (http_ != nullptr) ports.http = http_->port();
  if (metrics_port() != 0) ports.metrics = metrics_port();
  const absl::Status status =
      WriteFileAtomically(config_.ready_file, ReadyFileContent(state, ports));
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("--ready_file: ", status.message()));
}

absl::Status Server::Serve() {
  std::vector<ModelConfig> configs;
  // Held for the loop (a rescan may replace the catalog meanwhile).
  const std::shared_ptr<const ModelRepository::Catalog> catalog = repository_->catalog();
  for (const ModelRepository::Slot& slot : catalog->slots) configs.push_back(slot.config);
  // Each worker's engine finds a slot's model in the repository (a request holds it loaded).
  scheduler_ = std::make_unique<BatchScheduler>(
      std::move(configs), config_.batching, metrics_.get(),
      [repository = repository_.get(), threads = config_.batching.threads_per_worker] {
        return std::make_unique<TranslatorEngine>(
            [repository](int slot) { return repository->Loaded(slot); }, threads);
      });
  core_->StartServing(repository_.get(), scheduler_.get());
  rescan_->Start(config_.models, repository_.get(), scheduler_.get(), core_.get(), metrics_.get());
  health_->SetServingStatus(true);
  health_->SetServingStatus(kServiceName, true);
  std::fprintf(stderr, "mtserve: serving (%d workers x %d threads)\n", config_.batching.workers,
               config_.batching.threads_per_worker);
  return WriteReadyFile("serving");
}

void Server::Drain(int signal_number) {
  health_->SetServingStatus(false);
  drain_.StartDraining();  // New requests and streams: UNAVAILABLE; HTTP and /readyz: 503.
  if (http_ != nullptr) http_->StartDraining();  // Every HTTP answer closes its connection.
  service_->EndStreams();                        // Open streams end once their texts are answered.
  // Once every front end drains: whoever reads it finds them all refusing.
  std::fprintf(stderr, "mtserve: %s: draining\n", strsignal(signal_number));
  // Kept, saying so, until the process ends (a file left by an ended process says nothing).
  if (absl::Status status = WriteReadyFile("draining"); !status.ok()) {
    std::fprintf(stderr, "mtserve: %s\n", std::string(status.message()).c_str());
  }
  const absl::Time deadline = absl::Now() + config_.shutdown_grace;
  const bool idle = drain_.WaitUntilIdle(deadline);
  if (!idle) std::fprintf(stderr, "mtserve: grace period over; cancelling what is left\n");
  grpc_server_->Shutdown(absl::ToChronoTime(absl::Now()));  // Cancels whatever is still running.
  if (http_ != nullptr) http_->Stop();  // Cancels its requests; before the scheduler stops.
  // The file jobs still running are cancelled and waited for, their calls ending with the
  // scheduler still running.
  job_sweep_.reset();
  file_jobs_.reset();
  rescan_->Stop();
  scheduler_->Stop();
  std::fprintf(stderr, "mtserve: stopped\n");
}

}  // namespace mtserve
