// The flags of mtserve (each also MTSERVE_<FLAG> in the environment) and their checks, read
// into a ServerConfig.
#include "server/server_flags.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/byte_size.h"
#include "base/cpu_count.h"
#include "base/env_flags.h"
#include "base/repeated_flag_values.h"
#include "base/status_macros.h"
#include "model/compute_type.h"

ABSL_FLAG(std::vector<std::string>, model, {},
          "A model to serve, as NAME=DIR or DIR (named after the directory): a Hugging Face "
          "MarianMT checkpoint. Repeatable (or comma-separated); the first is the default model. "
          "DIR@TYPE or NAME=DIR@TYPE serves it in that compute type instead of --compute_type's. "
          "Without it: the embedded model " MTSERVE_DEFAULT_MODEL_DIR);
ABSL_FLAG(std::vector<std::string>, model_dir, {},
          "A directory of models to serve: each subfolder holding a checkpoint (a config.json) "
          "is one, named after the subfolder unless an mtserve.json in it sets \"name\" (and "
          "\"compute_type\"), after the --model ones, in name order. Repeatable (or "
          "comma-separated). Each loads when a request first needs it (or at start: --preload)");
ABSL_FLAG(std::vector<std::string>, preload, {},
          "--model_dir models to load at start (by name) rather than when a request first needs "
          "one. Repeatable (or comma-separated)");
ABSL_FLAG(mtserve::ByteSize, model_memory, mtserve::ByteSize{0},
          "The memory for loaded models (e.g. 2GiB): a model that must load when they fill it "
          "first unloads the least recently used idle ones; 0: no limit, nothing unloaded");
ABSL_FLAG(int, max_cold_loads_per_minute, 30,
          "Models one caller (an API key; all callers without keys together) may have loaded per "
          "minute, in bursts of as many: a request needing one more is refused "
          "RESOURCE_EXHAUSTED; 0: no limit");
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
          "HTTP requests handled at once (each handler thread waits for its translation); "
          "connections themselves hold no thread");
ABSL_FLAG(int, http_max_queued, 16,
          "HTTP requests read whole that may wait for a handler thread (--http_threads); more get "
          "503 at once. The request bodies held at once take at most (--http_threads + this) x "
          "--max_message_bytes (a body past that gets 503)");
ABSL_FLAG(absl::Duration, http_timeout, absl::Seconds(10),
          "HTTP deadlines, each on its own: a TLS handshake, a request's headers (from their first "
          "byte), its body (from the end of the headers; 408 past it), each write of an answer, "
          "and (unless --http_idle_timeout) an idle keep-alive connection");
ABSL_FLAG(absl::Duration, http_idle_timeout, absl::ZeroDuration(),
          "How long an HTTP keep-alive connection may wait for its next request; 0: "
          "--http_timeout");
ABSL_FLAG(int, http_max_connections_per_address, 0,
          "HTTP connections one client address may hold open at once (more are closed when "
          "accepted); behind a proxy of --http_trusted_proxies, requests in progress per "
          "forwarded client address (more get 429). 0: no cap");
ABSL_FLAG(std::vector<std::string>, http_trusted_proxies, {},
          "IP addresses of proxies whose X-Forwarded-For or Forwarded header names the client, "
          "for --http_max_connections_per_address (comma-separated)");
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
          "While a decode runs, how long an idle worker lets a text wait for others to start a "
          "decode with, e.g. 500us, 2ms (with nothing decoding a text starts at once; a running "
          "decode takes new texts at its next step, without waiting)");
ABSL_FLAG(int, max_queued_texts, 1024,
          "Texts waiting in the queue at most; requests beyond get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_texts_per_request, 256,
          "Texts in one Translate request at most (no more than --max_queued_texts)");
ABSL_FLAG(mtserve::ByteSize, max_text_bytes, mtserve::ByteSize{1 << 20},
          "Bytes of one text at most (KiB, MiB), checked before anything else is done with it");
ABSL_FLAG(int, subtitle_max_line_chars, 42,
          "Characters (code points) per line of a translated subtitle cue (formats srt, vtt): "
          "longer text is wrapped over balanced lines");
ABSL_FLAG(int, subtitle_max_lines, 2,
          "Lines per translated subtitle cue where its text fits; text that does not fit in "
          "these many lines of --subtitle_max_line_chars takes more lines (none is dropped)");
ABSL_FLAG(int, subtitle_max_sentence_gap_ms, 3000,
          "A sentence of a subtitle file runs on from one cue into the next only if the next "
          "starts at most these many milliseconds after the first ends (and the first does not "
          "end with a full stop, question or exclamation mark)");
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
ABSL_FLAG(std::string, language_model, MTSERVE_DEFAULT_LANGID_MODEL,
          "fastText language identification model, for detection (/detect, source \"auto\"); "
          "empty: no detection. Default: lid.176.ftz as scripts/install-deps.sh installs it");
ABSL_FLAG(std::string, pivot_language, "en",
          "A pair no model translates goes through the shortest chain of models that does "
          "(fr->en->de: fr-en, then en-de); of several shortest chains, those through this "
          "language first");
ABSL_FLAG(int, grpc_max_streams_per_connection, 100,
          "Calls a gRPC connection may have open at once (HTTP/2 concurrent streams); a client "
          "queues the others until one ends");
ABSL_FLAG(int, grpc_max_file_calls, 16,
          "TranslateFile calls the server takes at once (each holds up to --max_file_bytes while "
          "its file arrives, and a thread while it follows its job); one more gets "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, grpc_idle_timeout, absl::Minutes(5),
          "Close a gRPC connection (gracefully) after this long without a call; 0: never");
ABSL_FLAG(absl::Duration, grpc_keepalive_time, absl::Minutes(1),
          "Ping a gRPC client after this long without traffic, and close its connection if the "
          "ping is not answered within 20 s (a peer gone without closing)");
ABSL_FLAG(absl::Duration, grpc_min_ping_interval, absl::Seconds(30),
          "A gRPC client may ping at most this often (with or without calls open); a client that "
          "pings more often is sent GOAWAY (too_many_pings) after 2 strikes");
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
ABSL_FLAG(absl::Duration, model_dir_poll, absl::Seconds(30),
          "How often the --model_dir directories are re-read while serving: a new checkpoint "
          "folder is served, a removed one no longer, a changed one replaced, once two re-reads in "
          "a row see it the same; SIGHUP re-reads them at once. 0: only on SIGHUP");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(25),
          "On SIGTERM/SIGINT, how long requests in flight may take to finish before they are "
          "cancelled");
ABSL_FLAG(mtserve::ByteSize, max_file_bytes, mtserve::ByteSize{10 << 20},
          "Bytes of one file to translate at most (KiB, MiB; the file API: a file is a job, "
          "checked against this rather than --max_text_bytes)");
ABSL_FLAG(absl::Duration, file_job_timeout, absl::Minutes(10),
          "How long a file job may take at most from its submission, queued and translating "
          "(sooner if its caller's deadline is); then it fails DEADLINE_EXCEEDED");
ABSL_FLAG(std::string, job_dir, "",
          "Directory for translated files (made if missing; files of a previous run in it are "
          "removed at start); empty: they are kept in memory. In Kubernetes an emptyDir");
ABSL_FLAG(absl::Duration, job_retention, absl::Hours(1),
          "How long a file job and its result are kept after it finished (an unfinished one: "
          "after it was submitted); then its id is unknown");
ABSL_FLAG(mtserve::ByteSize, job_results_bytes, mtserve::ByteSize{1LL << 30},
          "Bytes of translated files kept at most (KiB, MiB, GiB): a result that would pass it "
          "first forgets the done jobs that finished first");
ABSL_FLAG(int, max_jobs, 10000,
          "File jobs kept at most, unfinished and finished; more are refused RESOURCE_EXHAUSTED "
          "until some expire (--job_retention) or are deleted");
ABSL_FLAG(std::string, glossary_dir, "",
          "Directory of read-only glossaries every caller may use: files NAME.SRC-TGT.tsv or "
          "NAME.SRC-TGT.csv (DeepL's entry formats), each the glossary of id NAME.SRC-TGT. Re-read "
          "when it changes (see --reload_interval) or on SIGHUP; a file that does not parse fails "
          "the start (later, the previous files stay)");
ABSL_FLAG(std::string, glossary_store_dir, "",
          "Directory where the glossaries made through the APIs are kept (made if missing; read "
          "back at start, so that they survive a restart); empty: kept in memory only. In "
          "Kubernetes a persistent volume");
ABSL_FLAG(int, max_glossary_entries, 10000,
          "Entries (distinct sources) of one stored glossary at most, made through the APIs or "
          "read from --glossary_dir");
ABSL_FLAG(int, max_glossaries_per_key, 100,
          "Glossaries one API key (all callers together without keys) may have made at most; "
          "more are refused RESOURCE_EXHAUSTED until some are deleted");
ABSL_FLAG(int, max_request_terms, 256,
          "Glossary entries and kept terms one translation request may carry at most");
ABSL_FLAG(std::string, ready_file, "",
          "File written (atomically: a temporary file renamed) as JSON once the ports are open, "
          "{\"state\": \"loading\", \"grpc\": PORT, \"http\": PORT, \"metrics\": PORT} (null: "
          "off), then with \"state\": \"serving\" once the models are loaded and \"draining\" on "
          "SIGTERM/SIGINT; for tools and tests that ask for port 0. Its directory must exist");

namespace mtserve {
namespace {

// The flags' values, unchecked.
ServerConfig ReadFlags() {
  ServerConfig config;
  BatchingOptions& batching = config.batching;
  batching.threads_per_worker = absl::GetFlag(FLAGS_threads_per_worker);
  batching.workers = absl::GetFlag(FLAGS_workers) > 0
                         ? absl::GetFlag(FLAGS_workers)
                         : std::max(1, UsableCpus() / std::max(1, batching.threads_per_worker));
  batching.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  batching.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  batching.max_queue_delay = absl::GetFlag(FLAGS_max_queue_delay);
  batching.max_queued_texts = absl::GetFlag(FLAGS_max_queued_texts);
  batching.worker_memory_bytes = absl::GetFlag(FLAGS_worker_memory).bytes;
  RequestLimits& limits = config.limits;
  limits.max_texts_per_request = absl::GetFlag(FLAGS_max_texts_per_request);
  limits.max_input_tokens = absl::GetFlag(FLAGS_max_input_tokens);
  limits.max_output_tokens = absl::GetFlag(FLAGS_max_output_tokens);
  limits.max_beam_size = absl::GetFlag(FLAGS_max_beam_size);
  limits.max_sampling_topk = absl::GetFlag(FLAGS_max_sampling_topk);
  limits.worker_memory_bytes = batching.worker_memory_bytes;
  limits.max_text_bytes = absl::GetFlag(FLAGS_max_text_bytes).bytes;
  limits.max_cold_loads_per_minute = absl::GetFlag(FLAGS_max_cold_loads_per_minute);
  limits.subtitle_layout = {absl::GetFlag(FLAGS_subtitle_max_line_chars),
                            absl::GetFlag(FLAGS_subtitle_max_lines),
                            absl::GetFlag(FLAGS_subtitle_max_sentence_gap_ms)};
  config.cache_bytes = absl::GetFlag(FLAGS_cache_bytes).bytes;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.http_listen = absl::GetFlag(FLAGS_http_listen);
  config.http_threads = absl::GetFlag(FLAGS_http_threads);
  config.http_max_queued = absl::GetFlag(FLAGS_http_max_queued);
  const absl::Duration timeout = absl::GetFlag(FLAGS_http_timeout);
  const absl::Duration idle = absl::GetFlag(FLAGS_http_idle_timeout);
  config.http_timeouts = {timeout, timeout, timeout, timeout,
                          idle == absl::ZeroDuration() ? timeout : idle};
  config.http_max_connections_per_address = absl::GetFlag(FLAGS_http_max_connections_per_address);
  config.http_trusted_proxies = absl::GetFlag(FLAGS_http_trusted_proxies);
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes).bytes;
  config.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  config.grpc.max_streams_per_connection = absl::GetFlag(FLAGS_grpc_max_streams_per_connection);
  config.grpc.max_file_calls = absl::GetFlag(FLAGS_grpc_max_file_calls);
  config.grpc.idle_timeout = absl::GetFlag(FLAGS_grpc_idle_timeout);
  config.grpc.keepalive_time = absl::GetFlag(FLAGS_grpc_keepalive_time);
  config.grpc.min_ping_interval = absl::GetFlag(FLAGS_grpc_min_ping_interval);
  config.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  config.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  config.reload_interval = absl::GetFlag(FLAGS_reload_interval);
  config.model_dir_poll = absl::GetFlag(FLAGS_model_dir_poll);
  config.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  config.ready_file = absl::GetFlag(FLAGS_ready_file);
  config.language_model = absl::GetFlag(FLAGS_language_model);
  config.pivot_language = absl::GetFlag(FLAGS_pivot_language);
  config.files.max_file_bytes = absl::GetFlag(FLAGS_max_file_bytes).bytes;
  config.files.job_timeout = absl::GetFlag(FLAGS_file_job_timeout);
  config.files.job_dir = absl::GetFlag(FLAGS_job_dir);
  config.files.retention = absl::GetFlag(FLAGS_job_retention);
  config.files.results_bytes = absl::GetFlag(FLAGS_job_results_bytes).bytes;
  config.files.max_jobs = absl::GetFlag(FLAGS_max_jobs);
  config.glossaries.dir = absl::GetFlag(FLAGS_glossary_dir);
  config.glossaries.store_dir = absl::GetFlag(FLAGS_glossary_store_dir);
  config.glossaries.max_entries = absl::GetFlag(FLAGS_max_glossary_entries);
  config.glossaries.max_per_key = absl::GetFlag(FLAGS_max_glossaries_per_key);
  limits.terms.max_entries = absl::GetFlag(FLAGS_max_request_terms);
  return config;
}

// --model and --compute_type: every model with its compute type, which this CPU must run.
absl::StatusOr<std::vector<ModelSpec>> ReadModels(int argc, char** argv) {
  // --model is repeatable, which absl flags are not: read every occurrence from the command
  // line, else the flag's value (from MTSERVE_MODEL).
  std::vector<std::string> model_values = RepeatedFlagValues(argc, argv, "model");
  if (model_values.empty()) model_values = absl::GetFlag(FLAGS_model);
  std::vector<std::string> dirs = RepeatedFlagValues(argc, argv, "model_dir");
  if (dirs.empty()) dirs = absl::GetFlag(FLAGS_model_dir);
  // The embedded model when neither flag names one.
  std::vector<ModelSpec> specs;
  if (!model_values.empty() || dirs.empty()) {
    MT_ASSIGN_OR_RETURN(specs, ParseModelSpecs(model_values, MTSERVE_DEFAULT_MODEL_DIR));
  }
  MT_ASSIGN_OR_RETURN(specs, JoinModelSpecs(std::move(specs), dirs));
  std::vector<std::string> preload = RepeatedFlagValues(argc, argv, "preload");
  if (preload.empty()) preload = absl::GetFlag(FLAGS_preload);
  for (const std::string& name : preload) {
    auto it = std::find_if(specs.begin(), specs.end(),
                           [&](const ModelSpec& spec) { return spec.name == name; });
    if (it == specs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--preload=", name, ": no model of that name (in --model or --model_dir)"));
    }
    it->on_demand = false;
  }
  if (specs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--model_dir=", absl::StrJoin(dirs, ","),
                                                   ": no checkpoint (a subfolder with a "
                                                   "config.json) in it, and no --model"));
  }
  // Checked when parsed (ComputeTypeFlag), so this cannot fail; "auto" resolves for this CPU.
  MT_ASSIGN_OR_RETURN(const ComputeType default_compute_type,
                      ParseComputeType(absl::GetFlag(FLAGS_compute_type).name));
  // Before the port opens: a type this CPU cannot run would fail the load anyway, and a server
  // that cannot serve what it was asked to should not get as far as answering health checks.
  for (ModelSpec& spec : specs) {
    spec.compute_type = spec.compute_type.value_or(default_compute_type);
    if (absl::Status status = CheckComputeTypeSupported(*spec.compute_type); !status.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("model ", spec.name, ": ", status.message()));
    }
  }
  return specs;
}

// The file API's limits.
absl::Status CheckFileLimits(const ServerConfig::Files& files) {
  if (files.max_file_bytes < 1) {
    return absl::InvalidArgumentError("--max_file_bytes must be at least 1");
  }
  // A file at the limit must be able to be kept as a result.
  if (files.results_bytes < files.max_file_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--job_results_bytes (", files.results_bytes, ") must be at least --max_file_bytes (",
        files.max_file_bytes, "): a file that long could never be kept translated"));
  }
  for (auto [name, value] :
       {std::pair{"file_job_timeout", files.job_timeout}, {"job_retention", files.retention}}) {
    if (value <= absl::ZeroDuration() || value == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be positive and finite, not ", absl::FormatDuration(value)));
    }
  }
  if (files.max_jobs < 1) return absl::InvalidArgumentError("--max_jobs must be at least 1");
  return absl::OkStatus();
}

// The limits alone and together.
absl::Status CheckLimits(const ServerConfig& config) {
  const BatchingOptions& batching = config.batching;
  const RequestLimits& limits = config.limits;
  for (auto [name, value] :
       {std::pair{"workers", batching.workers},
        {"threads_per_worker", batching.threads_per_worker},
        {"max_batch_size", batching.max_batch_size},
        {"max_batch_tokens", batching.max_batch_tokens},
        {"max_queued_texts", batching.max_queued_texts},
        {"max_texts_per_request", limits.max_texts_per_request},
        {"max_input_tokens", limits.max_input_tokens},
        {"max_output_tokens", limits.max_output_tokens},
        {"max_beam_size", limits.max_beam_size},
        {"max_sampling_topk", limits.max_sampling_topk},
        {"http_threads", config.http_threads},
        {"http_max_queued", config.http_max_queued},
        {"grpc_max_streams_per_connection", config.grpc.max_streams_per_connection},
        {"grpc_max_file_calls", config.grpc.max_file_calls},
        {"max_glossary_entries", config.glossaries.max_entries},
        {"max_glossaries_per_key", config.glossaries.max_per_key},
        {"max_request_terms", limits.terms.max_entries}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " must be at least 1"));
    }
  }
  // A sentence's pieces hold a token and </s> at least.
  if (limits.max_input_tokens < 2) {
    return absl::InvalidArgumentError("--max_input_tokens must be at least 2");
  }
  if (config.http_timeouts.header <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--http_timeout must be positive");
  }
  if (config.http_timeouts.idle <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--http_idle_timeout must be positive (0: --http_timeout)");
  }
  if (config.http_max_connections_per_address < 0) {
    return absl::InvalidArgumentError(
        "--http_max_connections_per_address must be 0 (no cap) or more");
  }
  // gRPC takes them in whole milliseconds, as an int.
  for (auto [name, value] : {std::pair{"grpc_idle_timeout", config.grpc.idle_timeout},
                             {"grpc_keepalive_time", config.grpc.keepalive_time},
                             {"grpc_min_ping_interval", config.grpc.min_ping_interval}}) {
    if (value < absl::ZeroDuration() || value > absl::Hours(24 * 24)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be from 0 to 24 days (gRPC's bound), not ",
                       absl::FormatDuration(value)));
    }
  }
  if (config.grpc.keepalive_time == absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--grpc_keepalive_time must be positive");
  }
  // gRPC takes the message limit as an int.
  if (config.max_message_bytes < 1 || config.max_message_bytes > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes is ", config.max_message_bytes, "; it must be 1 to ",
                     std::numeric_limits<int>::max(), " (under 2GiB, gRPC's bound)"));
  }
  if (limits.max_text_bytes < 1) {
    return absl::InvalidArgumentError("--max_text_bytes must be at least 1");
  }
  if (limits.subtitle_layout.max_line_chars < 1 || limits.subtitle_layout.max_lines < 1) {
    return absl::InvalidArgumentError(
        "--subtitle_max_line_chars and --subtitle_max_lines must be at least 1");
  }
  if (limits.subtitle_layout.max_sentence_gap_ms < 0) {
    return absl::InvalidArgumentError("--subtitle_max_sentence_gap_ms must be at least 0");
  }
  // A text at the byte limit must be able to arrive in a message.
  if (limits.max_text_bytes > config.max_message_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_text_bytes (", limits.max_text_bytes, ") must not exceed --max_message_bytes (",
        config.max_message_bytes, "): a text that long could never arrive"));
  }
  // A request is queued whole or not at all: one larger than the queue could never be.
  if (limits.max_texts_per_request > batching.max_queued_texts) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_texts_per_request (", limits.max_texts_per_request,
                     ") must not exceed --max_queued_texts (", batching.max_queued_texts,
                     "): a request of that many texts could never be queued"));
  }
  if (config.reload_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--reload_interval must be positive");
  }
  return CheckFileLimits(config.files);
}

// Before the ports open: the file is written once they are, next to where it goes.
absl::Status CheckReadyFile(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ready_file=", path, ": its directory ", dir.string(), " does not exist"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerConfig> ParseServerFlags(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves machine translation over gRPC (mtserve.v1.Translator) and HTTP/JSON.\n"
      "Usage: mtserve [--model=NAME=DIR[@TYPE] ...] [--compute_type=TYPE] [--listen=HOST:PORT]\n"
      "               [--http_listen=HOST:PORT] [--metrics_listen=HOST:PORT]\n"
      "Every flag can also be set by the environment variable MTSERVE_<FLAG NAME IN CAPITALS>;\n"
      "the command line wins.");
  // Every flag can also come from the environment (MTSERVE_LISTEN=..., MTSERVE_MODEL=a=/x,b=/y).
  MT_RETURN_IF_ERROR(SetFlagsFromEnvironment("MTSERVE_", FlagsDefinedIn(__FILE__)));
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument: ", args[1]));
  }
  ServerConfig config = ReadFlags();
  MT_ASSIGN_OR_RETURN(config.models, ReadModels(argc, argv));
  config.model_dirs = RepeatedFlagValues(argc, argv, "model_dir");
  if (config.model_dirs.empty()) config.model_dirs = absl::GetFlag(FLAGS_model_dir);
  MT_ASSIGN_OR_RETURN(config.default_compute_type,
                      ParseComputeType(absl::GetFlag(FLAGS_compute_type).name));
  if (config.model_dir_poll < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--model_dir_poll must not be negative");
  }
  config.model_memory = absl::GetFlag(FLAGS_model_memory).bytes;
  MT_RETURN_IF_ERROR(CheckLimits(config));
  MT_RETURN_IF_ERROR(CheckReadyFile(config.ready_file));
  return config;
}

}  // namespace mtserve
