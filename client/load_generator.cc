#include "client/load_generator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mtserve {
namespace {

using Clock = std::chrono::steady_clock;

// What one phase (warmup or measured) produced.
struct PhaseResult {
  LoadReport report;  // All but the settings.
  absl::Status first_error;
};

void MergeInto(PhaseResult& into, PhaseResult&& from) {
  LoadReport& a = into.report;
  const LoadReport& b = from.report;
  a.requests += b.requests;
  a.failed_requests += b.failed_requests;
  a.texts += b.texts;
  a.sentences += b.sentences;
  a.target_tokens += b.target_tokens;
  a.source_tokens += b.source_tokens;
  a.latencies.insert(a.latencies.end(), b.latencies.begin(), b.latencies.end());
  for (const auto& [code, count] : b.errors) a.errors[code] += count;
  if (into.first_error.ok()) into.first_error = std::move(from.first_error);
}

// Sends requests first_request, first_request + 1, ... from `concurrency` threads until `count`
// have been sent (count > 0) or, with count 0, until `stop_at`.
PhaseResult RunPhase(const TranslationClient& client, const LoadOptions& options,
                     int64_t first_request, int64_t count, Clock::time_point stop_at) {
  std::atomic<int64_t> next{0};
  std::vector<PhaseResult> results(options.concurrency);
  auto work = [&](PhaseResult& result) {
    v1::TranslateRequest request;
    request.set_model(options.model);
    *request.mutable_options() = options.decoding;
    const size_t num_texts = options.texts.size();
    for (;;) {
      if (count == 0 && Clock::now() >= stop_at) return;
      const int64_t i = next.fetch_add(1);
      if (count > 0 && i >= count) return;
      request.clear_texts();
      const size_t first_text =
          static_cast<size_t>((first_request + i) % static_cast<int64_t>(num_texts)) *
          options.texts_per_request % num_texts;
      for (int j = 0; j < options.texts_per_request; ++j) {
        request.add_texts(options.texts[(first_text + j) % num_texts]);
      }
      const Clock::time_point start = Clock::now();
      absl::StatusOr<v1::TranslateResponse> response = client.Translate(request, options.timeout);
      const absl::Duration latency = absl::FromChrono(Clock::now() - start);
      ++result.report.requests;
      if (!response.ok()) {
        ++result.report.failed_requests;
        ++result.report.errors[absl::StatusCodeToString(response.status().code())];
        if (result.first_error.ok()) result.first_error = response.status();
        continue;
      }
      result.report.latencies.push_back(latency);
      for (const v1::Translation& translation : response->translations()) {
        ++result.report.texts;
        result.report.sentences += translation.sentences_size();
        result.report.source_tokens += translation.source_tokens();
        if (translation.hypotheses_size() > 0) {
          result.report.target_tokens += translation.hypotheses(0).num_tokens();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (PhaseResult& result : results) threads.emplace_back(work, std::ref(result));
  for (std::thread& thread : threads) thread.join();
  PhaseResult total;
  for (PhaseResult& result : results) MergeInto(total, std::move(result));
  return total;
}

// Nearest-rank percentile of a non-empty ascending list; p = 1 is the maximum.
absl::Duration Percentile(const std::vector<absl::Duration>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * sorted.size()));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

}  // namespace

absl::StatusOr<LoadReport> RunLoad(const TranslationClient& client, const LoadOptions& options) {
  if (options.texts.empty()) return absl::InvalidArgumentError("no texts to send");
  if (options.texts_per_request < 1 || options.concurrency < 1 || options.warmup_requests < 0) {
    return absl::InvalidArgumentError(
        "need texts_per_request >= 1, concurrency >= 1 and warmup_requests >= 0");
  }
  if ((options.requests > 0) == (options.duration > absl::ZeroDuration()) || options.requests < 0 ||
      options.duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("give exactly one of requests and duration, positive");
  }

  if (options.warmup_requests > 0) {
    PhaseResult warmup = RunPhase(client, options, 0, options.warmup_requests, Clock::now());
    if (warmup.report.failed_requests == warmup.report.requests) return warmup.first_error;
  }

  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at =
      options.requests > 0 ? start : start + absl::ToChronoNanoseconds(options.duration);
  PhaseResult measured =
      RunPhase(client, options, options.warmup_requests, options.requests, stop_at);
  LoadReport report = std::move(measured.report);
  report.duration = absl::FromChrono(Clock::now() - start);
  report.concurrency = options.concurrency;
  report.texts_per_request = options.texts_per_request;
  report.warmup_requests = options.warmup_requests;
  std::sort(report.latencies.begin(), report.latencies.end());
  return report;
}

std::string FormatLoadReport(const LoadReport& report) {
  std::string out;
  auto line = [&out](absl::string_view key, absl::string_view value) {
    absl::StrAppendFormat(&out, "%-28s %s\n", absl::StrCat(key, ":"), value);
  };
  const double seconds = absl::ToDoubleSeconds(report.duration);
  auto rate = [seconds](int64_t n) {
    return seconds > 0 ? absl::StrFormat("%.2f", n / seconds) : std::string("n/a");
  };
  auto ms = [&report](double p) {
    if (report.latencies.empty()) return std::string("n/a");
    return absl::StrFormat("%.2f", absl::ToDoubleMilliseconds(Percentile(report.latencies, p)));
  };
  const int64_t succeeded = report.requests - report.failed_requests;

  line("concurrency", absl::StrCat(report.concurrency));
  line("texts_per_request", absl::StrCat(report.texts_per_request));
  line("warmup_requests", absl::StrCat(report.warmup_requests));
  line("requests", absl::StrCat(report.requests));
  line("failed_requests", absl::StrCat(report.failed_requests));
  line("duration_s", absl::StrFormat("%.3f", seconds));
  line("texts", absl::StrCat(report.texts));
  line("sentences", absl::StrCat(report.sentences));
  line("target_tokens", absl::StrCat(report.target_tokens));
  line("source_tokens", absl::StrCat(report.source_tokens));
  line("requests_per_s", rate(succeeded));
  line("texts_per_s", rate(report.texts));
  line("sentences_per_s", rate(report.sentences));
  line("target_tokens_per_s", rate(report.target_tokens));
  line("source_tokens_per_s", rate(report.source_tokens));
  line("latency_p50_ms", ms(0.50));
  line("latency_p90_ms", ms(0.90));
  line("latency_p99_ms", ms(0.99));
  line("latency_max_ms", ms(1.0));
  for (const auto& [code, count] : report.errors) {
    line(absl::StrCat("errors.", code), absl::StrCat(count));
  }
  return out;
}

}  // namespace mtserve
