// The server's Prometheus metrics, as the text exposition format (Scrape); the server serves them
// on their own HTTP port (/metrics: frontends/http/metrics_service.h).
//
// Names follow Prometheus conventions: an mtserve_ prefix, base units (seconds, bytes), _total on
// counters. Process metrics use the standard process_ names that dashboards expect.
#ifndef MTSERVE_SERVING_METRICS_H_
#define MTSERVE_SERVING_METRICS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "serving/translation_request.h"

namespace mtserve {

// The `frontend` label's value.
const char* FrontendName(Frontend frontend);

struct ModelInfoLabels {
  std::string model;
  std::string source_language;
  std::string target_language;
  std::string architecture;
  std::string compute_type;
};

// Thread-safe.
class Metrics {
 public:
  static std::unique_ptr<Metrics> Create();

  // A constant 1 labelled with what the model is; and its load and unload counters, at 0 until
  // the first (so that rate() and increase() see that one too).
  void SetModelInfo(const ModelInfoLabels& info);

  // A finished RPC or HTTP request (or streamed text): `code` is the gRPC status code name, e.g.
  // "OK", whatever the front end.
  void RecordRequest(Frontend frontend, const std::string& model, const std::string& method,
                     const std::string& code, double seconds);
  void RecordQueueWait(const std::string& model, double seconds);
  void RecordBatch(const std::string& model, int sentences, int padded_source_tokens);
  void AddTokens(const std::string& model, int input_tokens, int generated_tokens);
  prometheus::Gauge& QueuedTexts(const std::string& model);
  prometheus::Gauge& InFlightRequests(const std::string& model);
  // The sentence cache (state/sentence_cache.h): lookups, and what it holds now.
  void RecordCacheLookup(bool hit);
  void SetCacheSize(int64_t entries, int64_t bytes);
  // A call's API key check (api_key_auth.h): `key` is the key's name from the keys file, "none"
  // or "unknown", so the label stays bounded by the file; `code` as for RecordRequest.
  void RecordApiKeyRequest(const std::string& key, const std::string& code);
  // A file job (file_jobs.h) that ended: its format ("text", "html", "markdown", "srt", "vtt") and
  // its result ("done", "failed", "cancelled").
  void RecordFileJob(const std::string& format, const std::string& result);
  // What the job store holds now: jobs (unfinished and finished) and their results' bytes.
  void SetFileJobsHeld(int64_t jobs, int64_t result_bytes);

  // The model repository (repository/model_repository.h): a load that ended (`ok` or not) after
  // `seconds`, the model then holding `bytes`; an unload of one that held `bytes`; the budget
  // (0: none). A name's resident bytes are those of its loaded models: while a replaced model's
  // last requests finish, the old one and the new one.
  void RecordModelLoad(const std::string& model, bool ok, double seconds, int64_t bytes);
  void RecordModelUnload(const std::string& model, int64_t bytes);
  // A model no longer served under these labels (removed, or replaced by another).
  void RemoveModelInfo(const ModelInfoLabels& info);
  // A re-scan of the --model_dir directories ended: "unchanged", "changed" (a model added,
  // replaced or removed), or "failed" (a directory or folder could not be read: what it served
  // is kept).
  void RecordModelRescan(const std::string& result);
  void SetModelMemoryBudget(int64_t bytes);

  // The text exposition format, as /metrics serves it.
  std::string Scrape() const;

 private:
  Metrics();

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> process_collector_;

  prometheus::Family<prometheus::Gauge>& model_info_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Family<prometheus::Histogram>& queue_wait_;
  prometheus::Family<prometheus::Histogram>& batch_sentences_;
  prometheus::Family<prometheus::Histogram>& batch_tokens_;
  prometheus::Family<prometheus::Counter>& input_tokens_;
  prometheus::Family<prometheus::Counter>& generated_tokens_;
  prometheus::Family<prometheus::Gauge>& queued_texts_;
  prometheus::Family<prometheus::Gauge>& in_flight_;
  prometheus::Family<prometheus::Counter>& api_key_requests_;
  prometheus::Family<prometheus::Counter>& model_loads_;
  prometheus::Family<prometheus::Histogram>& model_load_seconds_;
  prometheus::Family<prometheus::Counter>& model_unloads_;
  prometheus::Family<prometheus::Counter>& model_rescans_;
  prometheus::Family<prometheus::Gauge>& model_resident_bytes_;
  prometheus::Gauge& model_memory_budget_;
  prometheus::Counter& cache_hits_;
  prometheus::Counter& cache_misses_;
  prometheus::Gauge& cache_entries_;
  prometheus::Gauge& cache_bytes_;
  prometheus::Family<prometheus::Counter>& file_jobs_;
  prometheus::Gauge& file_jobs_held_;
  prometheus::Gauge& file_job_result_bytes_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_METRICS_H_
