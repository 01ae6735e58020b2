// mtserve: the translation server, over gRPC and HTTP. Starts answering health checks
// (NOT_SERVING) at once, loads the models, serves, and on SIGTERM or SIGINT drains: health goes
// NOT_SERVING, new requests get UNAVAILABLE, requests in flight finish within --shutdown_grace,
// then it exits 0.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/byte_size.h"
#include "base/cpu_count.h"
#include "base/env_flags.h"
#include "frontends/grpc/translation_service.h"
#include "frontends/http/http_frontend.h"
#include "frontends/tls/server_tls.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/model_specs.h"
#include "server/shutdown_signals.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/metrics.h"
#include "serving/translation_core.h"

ABSL_FLAG(std::vector<std::string>, model, {},
          "A model to serve, as NAME=DIR or DIR (named after the directory): a Hugging Face "
          "MarianMT checkpoint. Repeatable (or comma-separated); the first is the default model. "
          "DIR@TYPE or NAME=DIR@TYPE serves it in that compute type instead of --compute_type's. "
          "Without it: the embedded model " MTSERVE_DEFAULT_MODEL_DIR);
ABSL_FLAG(mtserve::ComputeTypeFlag, compute_type, {},
          "Arithmetic of the models' linear layers, for every model without its own @TYPE: "
          "float32, bfloat16 (needs AVX-512), int8, or auto (int8 where the CPU has AVX-512 VNNI "
          "or AVX-VNNI, float32 otherwise)");
ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "gRPC address, HOST:PORT (0.0.0.0 for all)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address, HOST:PORT; empty: no metrics endpoint");
ABSL_FLAG(std::string, http_listen, "127.0.0.1:8080",
          "HTTP/JSON API address, HOST:PORT with HOST an IP address (0.0.0.0 for all); empty: no "
          "HTTP");
ABSL_FLAG(int, http_threads, 16,
          "HTTP connections served at once (a translation holds its connection's thread); as many "
          "more wait to be served");
ABSL_FLAG(absl::Duration, http_timeout, absl::Seconds(10),
          "How long an HTTP client may take to send a request (headers and body, in all) and to "
          "take each write of an answer, and how long an idle keep-alive connection stays open");
ABSL_FLAG(int, workers, 0,
          "Worker threads, each running one decode that texts join and leave between steps; 0: the "
          "CPUs this process may use "
          "(affinity mask and cgroup CPU quota: a container's CPU limit counts) divided by "
          "--threads_per_worker");
ABSL_FLAG(int, threads_per_worker, 1, "Compute threads of each worker");
ABSL_FLAG(int, max_batch_size, 32, "Texts a worker decodes together at most");
ABSL_FLAG(int, max_batch_tokens, 8192,
          "Texts x longest source text a worker decodes together at most");
ABSL_FLAG(absl::Duration, max_queue_delay, absl::Microseconds(500),
          "How long an idle worker lets a text wait for others to start a decode with, e.g. "
          "500us, 2ms (a running decode takes new texts at its next step, without waiting)");
ABSL_FLAG(int, max_queued_texts, 1024,
          "Texts waiting in the queue at most; requests beyond get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_texts_per_request, 256,
          "Texts in one Translate request at most (no more than --max_queued_texts)");
ABSL_FLAG(mtserve::ByteSize, max_text_bytes, mtserve::ByteSize{1 << 20},
          "Bytes of one text at most (KiB, MiB), checked before anything else is done with it");
ABSL_FLAG(int, max_input_tokens, 512,
          "Source tokens per sentence at most (</s> included; the model's positions also limit): "
          "a longer sentence is translated in pieces");
ABSL_FLAG(int, max_output_tokens, 512,
          "Generated tokens per hypothesis at most (the model's positions also limit)");
ABSL_FLAG(int, max_beam_size, 16, "beam_size at most");
ABSL_FLAG(int, max_sampling_topk, 1000,
          "sampling_topk at most (the model's vocabulary also limits it); finding the k best "
          "tokens takes a share of each decoding step that grows with k");
ABSL_FLAG(mtserve::ByteSize, worker_memory, mtserve::ByteSize{1LL << 30},
          "What one worker's decode may hold at most (KiB, MiB, GiB; 0: no limit): texts wait "
          "for room, and a text that could not fit even alone (every beam decoded to "
          "max_length) is refused; a container needs about workers x this plus the models");
ABSL_FLAG(mtserve::ByteSize, cache_bytes, mtserve::ByteSize{32LL << 20},
          "What the cache of sentence translations may hold (KiB, MiB, GiB; 0: no cache): a "
          "sentence translated before with the same model and options is answered at once");
ABSL_FLAG(mtserve::ByteSize, max_message_bytes, mtserve::ByteSize{4 << 20},
          "Size of a gRPC request message, and of an HTTP request body, at most (KiB, MiB; "
          "under 2GiB, gRPC's bound)");
ABSL_FLAG(absl::Duration, max_connection_age, absl::ZeroDuration(),
          "Close client connections after this long (gracefully), so that clients balancing "
          "over DNS (a headless Kubernetes Service) re-resolve and find new replicas; 0: never");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain (the server's certificate first): with --tls_key, gRPC and HTTP "
          "serve TLS only. Re-read when it changes (see --reload_interval) or on SIGHUP");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert, unencrypted");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates: gRPC and HTTP then require client certificates signed by one of "
          "them (mutual TLS)");
ABSL_FLAG(std::string, api_keys_file, "",
          "File of API keys (NAME sha256:HEX [requests_per_minute=N] [characters_per_day=N] a "
          "line): every translation and model list then needs one of them. Re-read when it "
          "changes or on SIGHUP");
ABSL_FLAG(absl::Duration, reload_interval, absl::Seconds(10),
          "How often the files re-read while serving (--tls_*, --api_keys_file) are checked for "
          "changes; SIGHUP re-reads them at once (a burst of SIGHUPs: at most once a second)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(25),
          "On SIGTERM/SIGINT, how long requests in flight may take to finish before they are "
          "cancelled");

namespace mtserve {
namespace {

constexpr char kServiceName[] = "mtserve.v1.Translator";

// Start-up failed: says why and ends the process at once with status 1 (an int, so that callers
// write `return Fail(...)`). Nothing has been served yet, so nothing drains: returning from Run
// instead ran the destructors, which waited for civetweb to stop (its listening thread polls in
// 2 s steps: 2 s for the metrics port, 2 more for HTTP), so a checkpoint that could not load
// exited 4 s after its message.
[[noreturn]] int Fail(const absl::Status& status) {
  std::fprintf(stderr, "mtserve: %s\n", std::string(status.message()).c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

int Run(int argc, char** argv) {
  // Before any other thread starts (they inherit its signal mask). While models load there is
  // nothing to drain, and a load can take minutes (or wait on a slow disk): stop at once.
  ShutdownSignals signals([](int signal) {
    std::fprintf(stderr, "mtserve: %s while loading models; exiting\n", strsignal(signal));
    std::fflush(stderr);
    std::_Exit(128 + signal);
  });

  absl::SetProgramUsageMessage(
      "Serves machine translation over gRPC (mtserve.v1.Translator) and HTTP/JSON.\n"
      "Usage: mtserve [--model=NAME=DIR[@TYPE] ...] [--compute_type=TYPE] [--listen=HOST:PORT]\n"
      "               [--http_listen=HOST:PORT] [--metrics_listen=HOST:PORT]\n"
      "Every flag can also be set by the environment variable MTSERVE_<FLAG NAME IN CAPITALS>;\n"
      "the command line wins.");
  // Every flag can also come from the environment (MTSERVE_LISTEN=..., MTSERVE_MODEL=a=/x,b=/y).
  if (absl::Status status = SetFlagsFromEnvironment("MTSERVE_", FlagsDefinedIn(__FILE__));
      !status.ok()) {
    return Fail(status);
  }
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("unexpected argument: ", args[1])));
  }
  // --model is repeatable, which absl flags are not: read every occurrence from the command
  // line, else the flag's value (from MTSERVE_MODEL).
  std::vector<std::string> model_values = RepeatedFlagValues(argc, argv, "model");
  if (model_values.empty()) model_values = absl::GetFlag(FLAGS_model);
  absl::StatusOr<std::vector<ModelSpec>> specs =
      ParseModelSpecs(model_values, MTSERVE_DEFAULT_MODEL_DIR);
  if (!specs.ok()) return Fail(specs.status());
  // Checked when parsed (ComputeTypeFlag), so this cannot fail; "auto" resolves for this CPU.
  const absl::StatusOr<ComputeType> default_compute_type =
      ParseComputeType(absl::GetFlag(FLAGS_compute_type).name);
  if (!default_compute_type.ok()) return Fail(default_compute_type.status());
  // Before the port opens: a type this CPU cannot run would fail the load anyway, and a server
  // that cannot serve what it was asked to should not get as far as answering health checks.
  for (ModelSpec& spec : *specs) {
    spec.compute_type = spec.compute_type.value_or(*default_compute_type);
    if (absl::Status status = CheckComputeTypeSupported(*spec.compute_type); !status.ok()) {
      return Fail(
          absl::FailedPreconditionError(absl::StrCat("model ", spec.name, ": ", status.message())));
    }
  }

  // A fixed threshold: buffers of 128 KiB or more are mapped on their own and returned to the
  // system when freed, instead of growing glibc's per-thread arenas (which then never shrink).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);

  BatchingOptions batching;
  batching.threads_per_worker = absl::GetFlag(FLAGS_threads_per_worker);
  batching.workers = absl::GetFlag(FLAGS_workers) > 0
                         ? absl::GetFlag(FLAGS_workers)
                         : std::max(1, UsableCpus() / std::max(1, batching.threads_per_worker));
  batching.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  batching.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  batching.max_queue_delay = absl::GetFlag(FLAGS_max_queue_delay);
  batching.max_queued_texts = absl::GetFlag(FLAGS_max_queued_texts);
  batching.worker_memory_bytes = absl::GetFlag(FLAGS_worker_memory).bytes;
  RequestLimits limits;
  limits.max_texts_per_request = absl::GetFlag(FLAGS_max_texts_per_request);
  limits.max_input_tokens = absl::GetFlag(FLAGS_max_input_tokens);
  limits.max_output_tokens = absl::GetFlag(FLAGS_max_output_tokens);
  limits.max_beam_size = absl::GetFlag(FLAGS_max_beam_size);
  limits.max_sampling_topk = absl::GetFlag(FLAGS_max_sampling_topk);
  limits.worker_memory_bytes = batching.worker_memory_bytes;
  limits.max_text_bytes = absl::GetFlag(FLAGS_max_text_bytes).bytes;
  for (auto [name, value] : {std::pair{"workers", batching.workers},
                             {"threads_per_worker", batching.threads_per_worker},
                             {"max_batch_size", batching.max_batch_size},
                             {"max_batch_tokens", batching.max_batch_tokens},
                             {"max_queued_texts", batching.max_queued_texts},
                             {"max_texts_per_request", limits.max_texts_per_request},
                             {"max_input_tokens", limits.max_input_tokens},
                             {"max_output_tokens", limits.max_output_tokens},
                             {"max_beam_size", limits.max_beam_size},
                             {"max_sampling_topk", limits.max_sampling_topk},
                             {"http_threads", absl::GetFlag(FLAGS_http_threads)}}) {
    if (value < 1) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--", name, " must be at least 1")));
    }
  }
  // A sentence's pieces hold a token and </s> at least.
  if (limits.max_input_tokens < 2) {
    return Fail(absl::InvalidArgumentError("--max_input_tokens must be at least 2"));
  }
  if (absl::GetFlag(FLAGS_http_timeout) <= absl::ZeroDuration()) {
    return Fail(absl::InvalidArgumentError("--http_timeout must be positive"));
  }
  // gRPC takes the message limit as an int.
  const int64_t max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes).bytes;
  if (max_message_bytes < 1 || max_message_bytes > std::numeric_limits<int>::max()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes is ", max_message_bytes, "; it must be 1 to ",
                     std::numeric_limits<int>::max(), " (under 2GiB, gRPC's bound)")));
  }
  if (limits.max_text_bytes < 1) {
    return Fail(absl::InvalidArgumentError("--max_text_bytes must be at least 1"));
  }
  // A text at the byte limit must be able to arrive in a message.
  if (limits.max_text_bytes > max_message_bytes) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--max_text_bytes (", limits.max_text_bytes, ") must not exceed --max_message_bytes (",
        max_message_bytes, "): a text that long could never arrive")));
  }
  // A request is queued whole or not at all: one larger than the queue could never be.
  if (limits.max_texts_per_request > batching.max_queued_texts) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--max_texts_per_request (", limits.max_texts_per_request,
                     ") must not exceed --max_queued_texts (", batching.max_queued_texts,
                     "): a request of that many texts could never be queued")));
  }

  absl::StatusOr<std::unique_ptr<Metrics>> metrics =
      Metrics::Create(absl::GetFlag(FLAGS_metrics_listen));
  if (!metrics.ok()) return Fail(metrics.status());

  if (absl::GetFlag(FLAGS_reload_interval) <= absl::ZeroDuration()) {
    return Fail(absl::InvalidArgumentError("--reload_interval must be positive"));
  }
  std::shared_ptr<ServerTls> tls;
  if (!absl::GetFlag(FLAGS_tls_cert).empty() || !absl::GetFlag(FLAGS_tls_key).empty() ||
      !absl::GetFlag(FLAGS_tls_client_ca).empty()) {
    ServerTls::Options options;
    options.certificate_path = absl::GetFlag(FLAGS_tls_cert);
    options.private_key_path = absl::GetFlag(FLAGS_tls_key);
    options.client_ca_path = absl::GetFlag(FLAGS_tls_client_ca);
    options.poll_interval = absl::GetFlag(FLAGS_reload_interval);
    absl::StatusOr<std::unique_ptr<ServerTls>> started = ServerTls::Start(options);
    if (!started.ok()) return Fail(started.status());
    tls = *std::move(started);
  }
  std::shared_ptr<ApiKeyAuthenticator> api_keys;
  if (const std::string path = absl::GetFlag(FLAGS_api_keys_file); !path.empty()) {
    absl::StatusOr<std::unique_ptr<ApiKeyAuthenticator>> started =
        ApiKeyAuthenticator::Start(path, absl::GetFlag(FLAGS_reload_interval), metrics->get());
    if (!started.ok()) return Fail(started.status());
    api_keys = *std::move(started);
  }
  // Shared with the handler, which may run until the process ends.
  signals.OnHangup([tls, api_keys](int hangups) {
    if (tls == nullptr && api_keys == nullptr) return;
    // One line a reload, however many signals it answers (at most one reload a kHangupGap).
    std::fprintf(stderr, "mtserve: reloading on SIGHUP (%d since the last reload)\n", hangups);
    // Each logs its outcome.
    if (tls != nullptr) tls->Reload().IgnoreError();
    if (api_keys != nullptr) api_keys->Reload().IgnoreError();
  });

  // One gate for the core and both front ends: draining refuses new work everywhere at once.
  DrainGate drain;
  TranslationCore core(limits, batching.max_queued_texts, absl::GetFlag(FLAGS_cache_bytes).bytes,
                       metrics->get(), &drain);
  if (api_keys != nullptr) core.RequireApiKeys(api_keys.get());
  TranslationService service(&core, &drain);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      absl::GetFlag(FLAGS_listen),
      tls != nullptr ? tls->GrpcCredentials() : grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder.SetMaxSendMessageSize(-1);
  if (const absl::Duration age = absl::GetFlag(FLAGS_max_connection_age);
      age > absl::ZeroDuration()) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               static_cast<int>(absl::ToInt64Milliseconds(age)));
    // Calls still running when the age is reached get this long to finish.
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(absl::GetFlag(FLAGS_shutdown_grace))));
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(absl::UnavailableError(
        absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen), " (--listen)")));
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(false);  // Until the models are loaded.
  health->SetServingStatus(kServiceName, false);
  // Like gRPC, HTTP answers at once: /readyz 503 and translations UNAVAILABLE until the models
  // are loaded.
  std::unique_ptr<HttpFrontend> http;
  if (const std::string listen = absl::GetFlag(FLAGS_http_listen); !listen.empty()) {
    HttpFrontend::Options options;
    options.listen = listen;
    options.threads = absl::GetFlag(FLAGS_http_threads);
    options.timeout = absl::GetFlag(FLAGS_http_timeout);
    options.max_body_bytes = max_message_bytes;
    options.tls = tls.get();
    absl::StatusOr<std::unique_ptr<HttpFrontend>> started =
        HttpFrontend::Start(options, &core, &drain);
    if (!started.ok()) return Fail(started.status());
    http = *std::move(started);
  }
  // The ports chosen are printed for tools and tests that ask for port 0.
  const std::string metrics_where =
      (*metrics)->port() == 0 ? std::string("metrics off")
                              : absl::StrCat("metrics on ", absl::GetFlag(FLAGS_metrics_listen),
                                             " (port ", (*metrics)->port(), ")");
  std::fprintf(stderr, "mtserve: listening on %s (port %d), %s\n",
               absl::GetFlag(FLAGS_listen).c_str(), port, metrics_where.c_str());
  if (api_keys != nullptr) {
    std::fprintf(stderr, "mtserve: API keys required (%s)\n",
                 absl::GetFlag(FLAGS_api_keys_file).c_str());
  }
  if (tls != nullptr) {
    std::fprintf(stderr, "mtserve: TLS on gRPC and HTTP%s\n",
                 tls->verifies_clients() ? ", client certificates required" : "");
  }
  if (http != nullptr) {
    std::fprintf(stderr, "mtserve: HTTP on %s (port %d)\n",
                 absl::GetFlag(FLAGS_http_listen).c_str(), http->port());
  } else {
    std::fprintf(stderr, "mtserve: HTTP off\n");
  }

  std::vector<ServedModel> models;
  std::vector<std::shared_ptr<const Model>> engine_models;
  for (const ModelSpec& spec : *specs) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(spec.dir, *spec.compute_type);
    if (!model.ok()) return Fail(model.status());
    const ModelConfig& config = (*model)->config();
    (*metrics)->SetModelInfo({spec.name, config.source_lang, config.target_lang,
                              ArchitectureSummary(config),
                              std::string(ComputeTypeName((*model)->compute_type()))});
    std::fprintf(stderr, "mtserve: model %s (%s; %s) loaded from %s in %.1f s\n", spec.name.c_str(),
                 ArchitectureSummary(config).c_str(),
                 std::string(ComputeTypeName((*model)->compute_type())).c_str(), spec.dir.c_str(),
                 absl::ToDoubleSeconds(absl::Now() - start));
    models.push_back({spec.name, *model, nullptr});
    engine_models.push_back(*model);
  }
  signals.Serving();  // Signals drain from now on.
  BatchScheduler scheduler(engine_models, batching, metrics->get());
  core.StartServing(std::move(models), &scheduler);
  health->SetServingStatus(true);
  health->SetServingStatus(kServiceName, true);
  std::fprintf(stderr, "mtserve: serving (%d workers x %d threads)\n", batching.workers,
               batching.threads_per_worker);

  const int signal_number = signals.WaitForShutdown();
  health->SetServingStatus(false);
  drain.StartDraining();  // New requests and streams: UNAVAILABLE; HTTP and /readyz: 503.
  service.EndStreams();   // Open streams end once their texts are answered.
  // Once every front end drains: whoever reads it finds them all refusing.
  std::fprintf(stderr, "mtserve: %s: draining\n", strsignal(signal_number));
  const absl::Time deadline = absl::Now() + absl::GetFlag(FLAGS_shutdown_grace);
  const bool idle = drain.WaitUntilIdle(deadline);
  if (!idle) std::fprintf(stderr, "mtserve: grace period over; cancelling what is left\n");
  server->Shutdown(absl::ToChronoTime(absl::Now()));  // Cancels whatever is still running.
  if (http != nullptr) http->Stop();  // Cancels its requests; before the scheduler stops.
  scheduler.Stop();
  std::fprintf(stderr, "mtserve: stopped\n");
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) { return mtserve::Run(argc, argv); }
