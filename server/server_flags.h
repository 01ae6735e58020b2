// mtserve's flags, from the command line and the environment (MTSERVE_<FLAG>), read and checked
// into one ServerConfig: everything the server needs to start, nothing left to look up later.
// Every refusal names the flag and its limit.
#ifndef MTSERVE_SERVER_SERVER_FLAGS_H_
#define MTSERVE_SERVER_SERVER_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "frontends/http/http_server.h"
#include "server/model_specs.h"
#include "serving/batching_policy.h"
#include "serving/request_limits.h"

namespace mtserve {

struct ServerConfig {
  // Each with its compute type (--compute_type's unless it has its own), supported by this CPU.
  std::vector<ModelSpec> models;
  // --model_dir, re-read while serving (model_dir_rescan.h) every model_dir_poll (zero: only on
  // SIGHUP); new models there take --compute_type's type unless they say otherwise.
  std::vector<std::string> model_dirs;
  absl::Duration model_dir_poll = absl::Seconds(30);
  ComputeType default_compute_type = ComputeType::kFloat32;
  int64_t model_memory = 0;  // Bytes of loaded models at most; 0: no limit.
  BatchingOptions batching;  // --workers resolved (0: the usable CPUs / --threads_per_worker).
  RequestLimits limits;
  int64_t cache_bytes = 0;

  std::string listen;          // gRPC, HOST:PORT.
  std::string metrics_listen;  // Empty: no metrics endpoint.
  std::string http_listen;     // Empty: no HTTP.
  int http_threads = 0;        // Handler threads.
  int http_max_queued = 0;     // Requests waiting for one.
  HttpTimeouts http_timeouts;
  int http_max_connections_per_address = 0;  // 0: no cap.
  std::vector<std::string> http_trusted_proxies;
  int64_t max_message_bytes = 0;      // Fits in an int (gRPC's bound).
  absl::Duration max_connection_age;  // Zero: never.
  struct Grpc {
    int max_streams_per_connection = 0;
    int max_file_calls = 0;       // TranslateFile calls at once.
    absl::Duration idle_timeout;  // Zero: never.
    absl::Duration keepalive_time;
    absl::Duration min_ping_interval;
  } grpc;

  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string api_keys_file;
  absl::Duration reload_interval;
  absl::Duration shutdown_grace;

  std::string ready_file;      // Empty: none; else its directory exists.
  std::string language_model;  // Empty: no language detection.
  // Of the shortest chains of models for a pair no model serves, those through it first.
  std::string pivot_language = "en";
  // The file API (serving/file_jobs.h, serving/state/local_job_store.h).
  struct Files {
    int64_t max_file_bytes = 10 << 20;
    absl::Duration job_timeout = absl::Minutes(10);
    std::string job_dir;  // Empty: results in memory.
    absl::Duration retention = absl::Hours(1);
    int64_t results_bytes = int64_t{1} << 30;
    int64_t max_jobs = 10000;
  } files;
  // Stored glossaries (serving/glossaries.h).
  struct Glossaries {
    std::string dir;        // --glossary_dir: read-only glossary files; empty: none.
    std::string store_dir;  // --glossary_store_dir: the API's glossaries kept; empty: in memory.
    int max_entries = 10000;
    int max_per_key = 100;
  } glossaries;
};

// Sets the usage message, reads the flags from the environment and then the command line (which
// wins), and checks them and their combinations. InvalidArgument (FailedPrecondition for a
// compute type this CPU cannot run) naming the flag and its limit.
absl::StatusOr<ServerConfig> ParseServerFlags(int argc, char** argv);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_SERVER_FLAGS_H_
