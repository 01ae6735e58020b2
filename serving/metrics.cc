#include "serving/metrics.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace mtserve {
namespace {

// Standard process metrics, read from /proc at each scrape (prometheus-cpp has no collector for
// them).
class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    // /proc/self/stat: after "(comm)", field 14 utime, 15 stime, 22 starttime, 24 rss (1-based).
    std::FILE* file = std::fopen("/proc/self/stat", "r");
    if (file == nullptr) return {};
    char buffer[1024];
    const size_t size = std::fread(buffer, 1, sizeof(buffer) - 1, file);
    std::fclose(file);
    buffer[size] = '\0';
    const char* fields = std::strrchr(buffer, ')');
    if (fields == nullptr) return {};
    unsigned long utime = 0, stime = 0;
    unsigned long long start_ticks = 0;
    long rss_pages = 0;
    // Fields 3..24, keeping 14, 15, 22 and 24.
    if (std::sscanf(fields + 2,
                    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d "
                    "%llu %*u %ld",
                    &utime, &stime, &start_ticks, &rss_pages) != 4) {
      return {};
    }
    const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
    return {
        Family("process_cpu_seconds_total", "User and system CPU time spent, in seconds.",
               prometheus::MetricType::Counter, (utime + stime) / ticks_per_second),
        Family("process_resident_memory_bytes", "Resident memory size in bytes.",
               prometheus::MetricType::Gauge,
               static_cast<double>(rss_pages) * static_cast<double>(sysconf(_SC_PAGESIZE))),
        Family("process_start_time_seconds", "Start time of the process since the Unix epoch.",
               prometheus::MetricType::Gauge,
               BootTimeSeconds() + static_cast<double>(start_ticks) / ticks_per_second),
    };
  }

 private:
  static prometheus::MetricFamily Family(const std::string& name, const std::string& help,
                                         prometheus::MetricType type, double value) {
    prometheus::MetricFamily family{name, help, type, {}};
    prometheus::ClientMetric metric;
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(metric);
    return family;
  }

  static double BootTimeSeconds() {
    std::FILE* file = std::fopen("/proc/stat", "r");
    if (file == nullptr) return 0;
    char line[256];
    double boot_time = 0;
    while (std::fgets(line, sizeof(line), file) != nullptr) {
      if (std::sscanf(line, "btime %lf", &boot_time) == 1) break;
    }
    std::fclose(file);
    return boot_time;
  }
};

prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double bound = start; count-- > 0; bound *= factor) bounds.push_back(bound);
  return bounds;
}

}  // namespace

const char* FrontendName(Frontend frontend) {
  return frontend == Frontend::kHttp ? "http" : "grpc";
}

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      process_collector_(std::make_shared<ProcessCollector>()),
      model_info_(prometheus::BuildGauge()
                      .Name("mtserve_model_info")
                      .Help("A served model (always 1), labelled with its languages and shape.")
                      .Register(*registry_)),
      requests_(prometheus::BuildCounter()
                    .Name("mtserve_requests_total")
                    .Help("Finished RPCs and HTTP requests (a streamed text counts as one), by "
                          "front end and gRPC status code.")
                    .Register(*registry_)),
      request_duration_(prometheus::BuildHistogram()
                            .Name("mtserve_request_duration_seconds")
                            .Help("Time from receiving a request to answering it.")
                            .Register(*registry_)),
      queue_wait_(prometheus::BuildHistogram()
                      .Name("mtserve_queue_wait_seconds")
                      .Help("Time a text waited in the batching queue.")
                      .Register(*registry_)),
      batch_sentences_(prometheus::BuildHistogram()
                           .Name("mtserve_batch_size_sentences")
                           .Help("Texts decoding together, observed when a decode starts and "
                                 "whenever texts join it.")
                           .Register(*registry_)),
      batch_tokens_(prometheus::BuildHistogram()
                        .Name("mtserve_batch_size_tokens")
                        .Help("Texts x longest source text of a decode, observed as "
                              "mtserve_batch_size_sentences.")
                        .Register(*registry_)),
      input_tokens_(prometheus::BuildCounter()
                        .Name("mtserve_input_tokens_total")
                        .Help("Source tokens translated, </s> included.")
                        .Register(*registry_)),
      generated_tokens_(
          prometheus::BuildCounter()
              .Name("mtserve_generated_tokens_total")
              .Help("Target tokens of the best hypotheses, the final </s> not counted.")
              .Register(*registry_)),
      queued_texts_(prometheus::BuildGauge()
                        .Name("mtserve_queue_depth")
                        .Help("Texts waiting in the batching queue.")
                        .Register(*registry_)),
      in_flight_(prometheus::BuildGauge()
                     .Name("mtserve_in_flight_requests")
                     .Help("RPCs received and not yet answered (a streamed text counts as one).")
                     .Register(*registry_)),
      api_key_requests_(prometheus::BuildCounter()
                            .Name("mtserve_api_key_requests_total")
                            .Help("Calls checked against the API keys file, by key name (none: "
                                  "no key; unknown: a key not in the file) and status code: OK, "
                                  "UNAUTHENTICATED, RESOURCE_EXHAUSTED (over a limit).")
                            .Register(*registry_)),
      model_loads_(prometheus::BuildCounter()
                       .Name("mtserve_model_loads_total")
                       .Help("Model loads that ended, by model and result (ok, failed).")
                       .Register(*registry_)),
      model_load_seconds_(prometheus::BuildHistogram()
                              .Name("mtserve_model_load_seconds")
                              .Help("Time a model's load took (successful loads).")
                              .Register(*registry_)),
      model_unloads_(prometheus::BuildCounter()
                         .Name("mtserve_model_unloads_total")
                         .Help("Models unloaded: to make room within --model_memory, replaced "
                               "or removed from their --model_dir, or by an operator's "
                               "UnloadModel.")
                         .Register(*registry_)),
      model_rescans_(prometheus::BuildCounter()
                         .Name("mtserve_model_rescans_total")
                         .Help("Re-scans of the --model_dir directories, by result: unchanged, "
                               "changed, failed.")
                         .Register(*registry_)),
      model_resident_bytes_(prometheus::BuildGauge()
                                .Name("mtserve_model_resident_bytes")
                                .Help("Bytes the loaded models of a name hold (0 once unloaded).")
                                .Register(*registry_)),
      model_memory_budget_(prometheus::BuildGauge()
                               .Name("mtserve_model_memory_budget_bytes")
                               .Help("--model_memory: the bytes loaded models may hold (0: no "
                                     "limit).")
                               .Register(*registry_)
                               .Add({})),
      cache_hits_(prometheus::BuildCounter()
                      .Name("mtserve_cache_hits_total")
                      .Help("Sentences answered from the translation cache.")
                      .Register(*registry_)
                      .Add({})),
      cache_misses_(prometheus::BuildCounter()
                        .Name("mtserve_cache_misses_total")
                        .Help("Cacheable sentences not in the translation cache.")
                        .Register(*registry_)
                        .Add({})),
      cache_entries_(prometheus::BuildGauge()
                         .Name("mtserve_cache_entries")
                         .Help("Sentence translations in the cache.")
                         .Register(*registry_)
                         .Add({})),
      cache_bytes_(prometheus::BuildGauge()
                       .Name("mtserve_cache_bytes")
                       .Help("Bytes the translation cache holds (at most --cache_bytes).")
                       .Register(*registry_)
                       .Add({})),
      file_jobs_(prometheus::BuildCounter()
                     .Name("mtserve_file_jobs_total")
                     .Help("File jobs ended, by the file's format and the job's result (done, "
                           "failed, cancelled).")
                     .Register(*registry_)),
      file_jobs_held_(prometheus::BuildGauge()
                          .Name("mtserve_file_jobs_held")
                          .Help("File jobs the job store holds, unfinished and finished (at most "
                                "--max_jobs).")
                          .Register(*registry_)
                          .Add({})),
      file_job_result_bytes_(prometheus::BuildGauge()
                                 .Name("mtserve_file_job_result_bytes")
                                 .Help("Bytes of translated files the job store holds (at most "
                                       "--job_results_bytes).")
                                 .Register(*registry_)
                                 .Add({})) {}

void Metrics::RecordFileJob(const std::string& format, const std::string& result) {
  file_jobs_.Add({{"format", format}, {"result", result}}).Increment();
}

void Metrics::SetFileJobsHeld(int64_t jobs, int64_t result_bytes) {
  file_jobs_held_.Set(static_cast<double>(jobs));
  file_job_result_bytes_.Set(static_cast<double>(result_bytes));
}

void Metrics::RecordModelLoad(const std::string& model, bool ok, double seconds, int64_t bytes) {
  model_loads_.Add({{"model", model}, {"result", ok ? "ok" : "failed"}}).Increment();
  if (!ok) return;
  static const auto* const kBuckets = new auto(ExponentialBuckets(0.01, 2, 14));  // to ~80 s
  model_load_seconds_.Add({{"model", model}}, *kBuckets).Observe(seconds);
  model_resident_bytes_.Add({{"model", model}}).Increment(static_cast<double>(bytes));
}

void Metrics::RecordModelUnload(const std::string& model, int64_t bytes) {
  model_unloads_.Add({{"model", model}}).Increment();
  model_resident_bytes_.Add({{"model", model}}).Decrement(static_cast<double>(bytes));
}

void Metrics::RemoveModelInfo(const ModelInfoLabels& info) {
  model_info_.Remove(&model_info_.Add({{"model", info.model},
                                       {"source_language", info.source_language},
                                       {"target_language", info.target_language},
                                       {"architecture", info.architecture},
                                       {"compute_type", info.compute_type}}));
}

void Metrics::RecordModelRescan(const std::string& result) {
  model_rescans_.Add({{"result", result}}).Increment();
}

void Metrics::SetModelMemoryBudget(int64_t bytes) {
  model_memory_budget_.Set(static_cast<double>(bytes));
}

std::unique_ptr<Metrics> Metrics::Create() { return std::unique_ptr<Metrics>(new Metrics()); }

void Metrics::SetModelInfo(const ModelInfoLabels& info) {
  model_info_
      .Add({{"model", info.model},
            {"source_language", info.source_language},
            {"target_language", info.target_language},
            {"architecture", info.architecture},
            {"compute_type", info.compute_type}})
      .Set(1);
  model_loads_.Add({{"model", info.model}, {"result", "ok"}});
  model_loads_.Add({{"model", info.model}, {"result", "failed"}});
  model_unloads_.Add({{"model", info.model}});
  model_resident_bytes_.Add({{"model", info.model}});
  for (const char* result : {"unchanged", "changed", "failed"}) {
    model_rescans_.Add({{"result", result}});
  }
}

void Metrics::RecordRequest(Frontend frontend, const std::string& model, const std::string& method,
                            const std::string& code, double seconds) {
  const prometheus::Labels labels{
      {"frontend", FrontendName(frontend)}, {"model", model}, {"method", method}, {"code", code}};
  requests_.Add(labels).Increment();
  static const auto* const kBuckets = new auto(ExponentialBuckets(0.001, 2, 17));  // to ~65 s
  request_duration_.Add(labels, *kBuckets).Observe(seconds);
}

void Metrics::RecordQueueWait(const std::string& model, double seconds) {
  static const auto* const kBuckets = new auto(ExponentialBuckets(0.0001, 2, 18));  // to ~13 s
  queue_wait_.Add({{"model", model}}, *kBuckets).Observe(seconds);
}

void Metrics::RecordBatch(const std::string& model, int sentences, int padded_source_tokens) {
  static const auto* const kSentenceBuckets = new auto(ExponentialBuckets(1, 2, 10));  // to 512
  static const auto* const kTokenBuckets = new auto(ExponentialBuckets(16, 2, 12));    // to 32768
  batch_sentences_.Add({{"model", model}}, *kSentenceBuckets).Observe(sentences);
  batch_tokens_.Add({{"model", model}}, *kTokenBuckets).Observe(padded_source_tokens);
}

void Metrics::AddTokens(const std::string& model, int input_tokens, int generated_tokens) {
  input_tokens_.Add({{"model", model}}).Increment(input_tokens);
  generated_tokens_.Add({{"model", model}}).Increment(generated_tokens);
}

prometheus::Gauge& Metrics::QueuedTexts(const std::string& model) {
  return queued_texts_.Add({{"model", model}});
}

prometheus::Gauge& Metrics::InFlightRequests(const std::string& model) {
  return in_flight_.Add({{"model", model}});
}

void Metrics::RecordCacheLookup(bool hit) { (hit ? cache_hits_ : cache_misses_).Increment(); }

void Metrics::SetCacheSize(int64_t entries, int64_t bytes) {
  cache_entries_.Set(static_cast<double>(entries));
  cache_bytes_.Set(static_cast<double>(bytes));
}

void Metrics::RecordApiKeyRequest(const std::string& key, const std::string& code) {
  api_key_requests_.Add({{"key", key}, {"code", code}}).Increment();
}

std::string Metrics::Scrape() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (auto& family : process_collector_->Collect()) families.push_back(std::move(family));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace mtserve
