// A closed-loop load generator for an mtserve server: `concurrency` threads, each with one blocking
// Translate call outstanding at a time, cycling through a list of texts. It measures what a
// capacity plan needs: throughput in requests, sentences and tokens, latency percentiles and
// errors by status code. Blocking calls on threads (rather than the async API) keep it simple; one
// thread per outstanding request is cheap at the concurrencies a CPU translation server sustains.
#ifndef MTSERVE_CLIENT_LOAD_GENERATOR_H_
#define MTSERVE_CLIENT_LOAD_GENERATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/translation_client.h"
#include "mtserve/v1/translation.pb.h"

namespace mtserve {

struct LoadOptions {
  // Request i carries texts (i * texts_per_request + j) mod texts.size(), j < texts_per_request.
  std::vector<std::string> texts;
  int texts_per_request = 1;
  int concurrency = 1;
  // How long to run: exactly one of them is positive. With `duration`, no request starts after it
  // has passed; those in flight are waited for and counted.
  int64_t requests = 0;
  absl::Duration duration = absl::ZeroDuration();
  // Requests sent before measuring (with the same concurrency), left out of every figure: they
  // pay for connecting and for the server's first-use costs.
  int64_t warmup_requests = 0;
  absl::Duration timeout = absl::InfiniteDuration();
  std::string model;
  v1::DecodingOptions decoding;
};

struct LoadReport {
  int concurrency = 0;
  int texts_per_request = 0;
  int64_t warmup_requests = 0;
  // Measured requests that completed, whether they succeeded or failed.
  int64_t requests = 0;
  int64_t failed_requests = 0;
  // From the first measured request's start to the last one's end.
  absl::Duration duration = absl::ZeroDuration();
  // Summed over the succeeded requests: texts; the best hypothesis's generated tokens (Hypothesis
  // num_tokens: the final </s> not counted, as mttranslate --benchmark counts them); source
  // tokens (</s> included).
  int64_t texts = 0;
  int64_t sentences = 0;  // The texts' sentences, as the server split them.
  int64_t target_tokens = 0;
  int64_t source_tokens = 0;
  // Of the succeeded requests, ascending.
  std::vector<absl::Duration> latencies;
  // Failed requests by status code name, e.g. "RESOURCE_EXHAUSTED".
  std::map<std::string, int64_t> errors;
};

// Runs the load. Fails without measuring when the options are inconsistent, or when every warmup
// request failed (with the first error: server down, bad options...).
absl::StatusOr<LoadReport> RunLoad(const TranslationClient& client, const LoadOptions& options);

// The report as "key: value" lines, values aligned, one figure per line (for scripts to grep):
// the settings, totals, rates per second, latency p50/p90/p99/max in ms and errors.CODE counts.
std::string FormatLoadReport(const LoadReport& report);

}  // namespace mtserve

#endif  // MTSERVE_CLIENT_LOAD_GENERATOR_H_
