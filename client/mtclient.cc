// mtclient: the command-line client of an mtserve server. Subcommands:
//
//   translate  stdin to stdout, one sentence a line, formatted exactly as mttranslate formats its
//              output (so the two can be diffed); by model, or by languages (--source, --target);
//   translate-file  a file (text, HTML, Markdown, SubRip, WebVTT) through TranslateFile, its
//              progress on stderr, the translated file to --output or stdout;
//   models     the served models;
//   detect     the language of each line of stdin;
//   load, unload  an operator's load or unload of a model (an API key with admin=true);
//   health     the grpc.health.v1 status; exit status 0 only when SERVING (a container
//              HEALTHCHECK or Kubernetes exec probe);
//   bench      a load generator (client/load_generator.h).
//
// Exit status: 0 on success, 1 when a request fails ("error: CODE_NAME: message" on stderr) or a
// line is not translated, 2 on a command-line mistake.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "client/decoding_flags.h"
#include "client/load_generator.h"
#include "client/translation_client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "[all] The server, HOST:PORT.");
ABSL_FLAG(std::string, tls_ca, "",
          "[all] PEM file of the CAs that sign the server's certificate: connect with TLS.");
ABSL_FLAG(std::string, tls_cert, "",
          "[all] PEM client certificate (chain) for servers that require one (mutual TLS); with "
          "--tls_key. Connects with TLS (the system's CAs unless --tls_ca).");
ABSL_FLAG(std::string, tls_key, "", "[all] PEM private key of --tls_cert.");
ABSL_FLAG(std::string, api_key, "",
          "[all] API key for a server with --api_keys_file (sent as authorization: Bearer KEY).");
ABSL_FLAG(std::string, api_key_file, "",
          "[all] File holding the API key (its first line), so that it is not on the command "
          "line.");
ABSL_FLAG(double, timeout, 60,
          "[all] Deadline of each request in seconds; 0: none. Probes want a short one, "
          "e.g. --timeout=3.");
ABSL_FLAG(int, batch_size, 32,
          "[translate, detect] Input lines per request; requests are sent one after the other.");
ABSL_FLAG(std::string, target, "",
          "[translate, translate-file] Translate into this language: each line (file) goes to the "
          "served model that reads its language (--source) into it, instead of --model's. "
          "[detect] Rank the "
          "languages the served models read into this language; empty: every language a served "
          "model reads.");
ABSL_FLAG(std::string, source, "",
          "[translate, translate-file] With --target: the language of every line (the file), or "
          "auto (the default) for the server to detect each line's; the language detected and "
          "its confidence go to stderr.");
ABSL_FLAG(std::string, output, "",
          "[translate-file] Write the translated file here; empty: to stdout.");
ABSL_FLAG(std::string, format, "",
          "[translate-file] The file's format: text, html, markdown, srt, vtt, docx, pptx, odt, "
          "odp or epub; empty: the server tells it from the file's name and content.");
ABSL_FLAG(bool, all_languages, false,
          "[detect] Rank every language the server's detector knows, not only the served ones.");
ABSL_FLAG(int, max_results, 1, "[detect] Languages per line at most, best first.");
ABSL_FLAG(std::string, service, "",
          "[health] The service to check, e.g. mtserve.v1.Translator; empty: the whole server.");
ABSL_FLAG(std::string, input, "",
          "[bench] File of texts to send, one a line (empty lines are skipped); requests cycle "
          "through it.");
ABSL_FLAG(int, concurrency, 1, "[bench] Requests outstanding at any time (one thread each).");
ABSL_FLAG(int64_t, requests, 0, "[bench] Measured requests to send. Give this or --duration.");
ABSL_FLAG(double, duration, 0,
          "[bench] Seconds during which requests are started; those in flight at the end are "
          "waited for and counted. Give this or --requests.");
ABSL_FLAG(int, texts_per_request, 1, "[bench] Texts per request, taken in turn from --input.");
ABSL_FLAG(int64_t, warmup, -1,
          "[bench] Requests sent before measuring, left out of every figure; -1: --concurrency "
          "of them.");

namespace mtserve {
namespace {

constexpr char kUsage[] =
    R"(command-line client of an mtserve translation server.

  mtclient translate [--server=HOST:PORT] [--model=NAME | [--source=LANG|auto] --target=LANG]
                     [--beam_size=N] [--num_hypotheses=N]
                     [--length_penalty=X] [--sampling_topk=K --sampling_temperature=T --seed=S]
                     [--max_length=N] [--min_length=N] [--split_sentences=true]
                     [--with_scores] [--batch_size=32]
                     [--timeout=SECONDS] < input.txt > output.txt
      A text a line in, translations out in the same order, formatted as mttranslate
      formats them: --num_hypotheses lines per input line (best first), each prefixed by
      "SCORE<TAB>" (%.6f) with --with_scores; an empty line gives empty lines.
      --target routes each line by language instead of by model: to the served model that
      reads --source (or, with --source=auto or none, the line's detected language) into the
      target; for each detected line, stderr says "line N: detected LANG CONFIDENCE" and the
      model's name in brackets. A line no served model reads into the target gets
      "error: CODE_NAME: line N: message" on stderr and empty output lines; the other lines
      are translated, and the exit status is 1.
  mtclient translate-file FILE [--output=OUT] [--format=text|html|markdown|srt|vtt]
                          [--model=NAME | [--source=LANG|auto] --target=LANG]
                          [decoding flags as for translate] [--timeout=SECONDS]
      Translates FILE (plain text, HTML, Markdown, SubRip or WebVTT, told by its name and
      content, or --format) with its syntax intact, streaming it to the server, and writes the
      translated file to OUT (default: stdout). Progress goes to stderr, a line each time the
      server reports it: "STATE DONE/TOTAL sentences", then "done: NAME, MEDIA TYPE, N bytes".
      --timeout covers the whole job.
  mtclient models [--server=HOST:PORT]
      The served models, one a line: name, (default), languages, compute type, limits,
      architecture and path.
  mtclient detect [--server=HOST:PORT] [--target=LANG | --all_languages] [--max_results=1]
                  [--batch_size=32] < input.txt
      The language of each line, a line each: "LANG CONFIDENCE" pairs, best first (confidence
      in percent), or "-" for a line with no letters (no language).
  mtclient load NAME | mtclient unload NAME  [--server=HOST:PORT] --api_key=KEY
      An operator's load or unload of model NAME (the key must have admin=true in the server's
      --api_keys_file); prints the model's state after, as "NAME  state=STATE
      resident_bytes=N" (and "unload_pending" while requests still use it).
  mtclient health [--server=HOST:PORT] [--service=NAME] [--timeout=SECONDS]
      Prints the grpc.health.v1 status (SERVING, NOT_SERVING, ...); exits 0 only if SERVING.
  mtclient bench [--server=HOST:PORT] --input=FILE [--concurrency=N]
                 (--requests=M | --duration=SECONDS) [--texts_per_request=1] [--warmup=N]
                 [decoding flags as for translate] [--timeout=SECONDS]
      Load generator: N threads each keep one request outstanding. Prints "key: value" lines:
      settings; requests (measured, completed) and failed_requests; duration_s (first measured
      request's start to the last one's end); sentences, target_tokens (the best hypothesis's
      tokens without the final </s>, i.e. Hypothesis.num_tokens, as mttranslate --benchmark
      counts them) and source_tokens (</s>
      included), summed over succeeded requests, and each per second; requests_per_s counts
      succeeded requests; latency_p50/p90/p99/max_ms of succeeded requests (nearest rank);
      errors.CODE_NAME: failed requests by status code.

Every subcommand takes --tls_ca=FILE to connect with TLS, --tls_cert=FILE --tls_key=FILE
for a server that requires client certificates, and --api_key=KEY (or --api_key_file=FILE) for
a server that requires API keys.

Exit status: 0 success; 1 a request failed ("error: CODE_NAME: message" on stderr; translate: or
a line was not translated; bench: no request succeeded); 2 bad command line. Flags are marked with the subcommands they apply to.)";

int Fail(const absl::Status& status) {
  std::cerr << "error: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return 1;
}

int UsageError(const std::string& message) {
  std::cerr << "mtclient: " << message << "\nRun mtclient --help for usage.\n";
  return 2;
}

absl::StatusOr<absl::Duration> TimeoutFromFlag() {
  const double seconds = absl::GetFlag(FLAGS_timeout);
  if (!(seconds >= 0)) return absl::InvalidArgumentError("--timeout must be >= 0");
  return seconds == 0 ? absl::InfiniteDuration() : absl::Seconds(seconds);
}

// Writes one input's translations as mttranslate does: exactly num_hypotheses lines (the server
// sends a single empty hypothesis for an empty text), each "score\t" prefixed with scores.
void AppendTranslation(const v1::Translation& translation, int num_hypotheses, bool with_scores,
                       std::string& out) {
  const int lines = std::max(num_hypotheses, translation.hypotheses_size());
  for (int i = 0; i < lines; ++i) {
    const v1::Hypothesis& h = i < translation.hypotheses_size()
                                  ? translation.hypotheses(i)
                                  : v1::Hypothesis::default_instance();
    if (with_scores) absl::StrAppendFormat(&out, "%.6f\t", h.score());
    out += h.text();
    out += '\n';
  }
}

// Reads stdin a text a line into `texts`, and has `send` send them (and write their answers, and
// clear them) every `batch_size` lines and at the end, so output keeps up with input. The exit
// status: 0, or 1 once a send fails.
int SendLinesInBatches(int batch_size, google::protobuf::RepeatedPtrField<std::string>& texts,
                       absl::FunctionRef<absl::Status()> send) {
  for (std::string line; std::getline(std::cin, line);) {
    texts.Add(std::move(line));
    if (texts.size() == batch_size) {
      if (absl::Status status = send(); !status.ok()) return Fail(status);
    }
  }
  if (absl::Status status = send(); !status.ok()) return Fail(status);
  return 0;
}

int Translate(const TranslationClient& client, absl::Duration timeout) {
  const int batch_size = absl::GetFlag(FLAGS_batch_size);
  if (batch_size < 1) return UsageError("--batch_size must be >= 1");
  absl::StatusOr<v1::DecodingOptions> options = DecodingOptionsFromFlags();
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  const int num_hypotheses = std::max(1, absl::GetFlag(FLAGS_num_hypotheses));
  const bool with_scores = absl::GetFlag(FLAGS_with_scores);
  const std::string model = absl::GetFlag(FLAGS_model);
  const std::string source = absl::GetFlag(FLAGS_source);
  const std::string target = absl::GetFlag(FLAGS_target);
  // As the server: a model by name or the languages, not both.
  if (!model.empty() && !target.empty()) {
    return UsageError(absl::StrCat("give --model or --target, not both (--model=", model,
                                   " --target=", target,
                                   "): --target sends each line to the model of its language"));
  }
  if (!source.empty() && target.empty()) return UsageError("--source needs --target");
  const bool detected = !target.empty() && (source.empty() || source == "auto");

  v1::TranslateRequest request;
  request.set_model(model);
  request.set_source_language(source);
  request.set_target_language(target);
  *request.mutable_options() = *options;
  int64_t first_line = 1;  // The number of the request's first line.
  int64_t failed_lines = 0;
  // Sends the lines read so far and writes their translations, so output keeps up with input.
  auto flush = [&]() -> absl::Status {
    if (request.texts().empty()) return absl::OkStatus();
    absl::StatusOr<v1::TranslateResponse> response = client.Translate(request, timeout);
    if (!response.ok()) return response.status();
    if (response->translations_size() != request.texts_size()) {
      return absl::InternalError(absl::StrFormat("the server answered %d translations for %d texts",
                                                 response->translations_size(),
                                                 request.texts_size()));
    }
    std::string out, notes;
    for (int i = 0; i < response->translations_size(); ++i) {
      const v1::Translation& t = response->translations(i);
      const int64_t line = first_line + i;
      if (t.has_error()) {
        // Not translated (routed by language: no served model reads it into the target): said
        // on stderr; empty lines keep the output in step with the input.
        absl::StrAppendFormat(
            &notes, "error: %s: line %d: %s\n",
            absl::StatusCodeToString(static_cast<absl::StatusCode>(t.error().code())), line,
            t.error().message());
        ++failed_lines;
        out.append(num_hypotheses, '\n');
        continue;
      }
      if (detected && t.has_detected_language()) {
        absl::StrAppendFormat(&notes, "line %d: detected %s %.1f (%s)\n", line,
                              t.detected_language().language(), t.detected_language().confidence(),
                              t.model());
      }
      AppendTranslation(t, num_hypotheses, with_scores, out);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    std::cerr << notes << std::flush;
    first_line += request.texts_size();
    request.clear_texts();
    return absl::OkStatus();
  };
  const int status = SendLinesInBatches(batch_size, *request.mutable_texts(), flush);
  if (status != 0) return status;
  if (failed_lines > 0) {
    std::cerr << "mtclient: " << failed_lines << " of " << first_line - 1
              << " lines not translated\n";
    return 1;
  }
  return 0;
}

// The TextFormat named as --format names it (mttranslate's names).
std::optional<v1::TextFormat> TextFormatNamed(absl::string_view name) {
  static constexpr std::pair<absl::string_view, v1::TextFormat> kFormats[] = {
      {"text", v1::TEXT_FORMAT_PLAIN},        {"html", v1::TEXT_FORMAT_HTML},
      {"markdown", v1::TEXT_FORMAT_MARKDOWN}, {"srt", v1::TEXT_FORMAT_SRT},
      {"vtt", v1::TEXT_FORMAT_VTT},           {"docx", v1::TEXT_FORMAT_DOCX},
      {"pptx", v1::TEXT_FORMAT_PPTX},         {"odt", v1::TEXT_FORMAT_ODT},
      {"odp", v1::TEXT_FORMAT_ODP},           {"epub", v1::TEXT_FORMAT_EPUB}};
  for (const auto& [format_name, format] : kFormats) {
    if (name == format_name) return format;
  }
  return std::nullopt;
}

// Its progress to stderr, a line a report.
void PrintProgress(const v1::FileJob& job) {
  if (job.state() == v1::FILE_JOB_STATE_DONE) {
    std::cerr << absl::StrFormat("done: %s, %s, %d bytes\n", job.file_name(), job.media_type(),
                                 job.result_bytes());
    return;
  }
  std::cerr << absl::StrFormat("%s %d/%d sentences\n",
                               absl::AsciiStrToLower(absl::StripPrefix(
                                   v1::FileJobState_Name(job.state()), "FILE_JOB_STATE_")),
                               job.sentences_done(), job.sentences_total());
}

int TranslateFile(const TranslationClient& client, const std::string& path,
                  absl::Duration timeout) {
  v1::FileHeader header;
  header.set_file_name(std::filesystem::path(path).filename().string());
  if (const std::string format = absl::GetFlag(FLAGS_format); !format.empty()) {
    const std::optional<v1::TextFormat> claimed = TextFormatNamed(format);
    if (!claimed.has_value()) {
      return UsageError(absl::StrCat(
          "--format=", format,
          " is not one of text, html, markdown, srt, vtt, docx, pptx, odt, odp, epub"));
    }
    header.set_format(*claimed);
  }
  header.set_model(absl::GetFlag(FLAGS_model));
  header.set_source_language(absl::GetFlag(FLAGS_source));
  header.set_target_language(absl::GetFlag(FLAGS_target));
  if (!header.model().empty() && !header.target_language().empty()) {
    return UsageError("give --model or --target, not both");
  }
  if (!header.source_language().empty() && header.target_language().empty()) {
    return UsageError("--source needs --target");
  }
  absl::StatusOr<v1::DecodingOptions> options = DecodingOptionsFromFlags();
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  *header.mutable_options() = *options;
  std::ifstream file(path, std::ios::binary);
  const std::string content((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
  if (!file.is_open() || file.bad()) return UsageError(absl::StrCat("cannot read ", path));

  absl::StatusOr<std::string> translated =
      client.TranslateFile(header, content, timeout, PrintProgress);
  if (!translated.ok()) return Fail(translated.status());
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) {
    std::fwrite(translated->data(), 1, translated->size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(translated->data(), static_cast<std::streamsize>(translated->size()));
  out.close();
  if (!out) {
    std::cerr << "mtclient: cannot write --output=" << output << "\n";
    return 1;
  }
  return 0;
}

int Models(const TranslationClient& client, absl::Duration timeout) {
  absl::StatusOr<v1::ListModelsResponse> response = client.ListModels(timeout);
  if (!response.ok()) return Fail(response.status());
  for (const v1::ModelInfo& m : response->models()) {
    auto language = [](const std::string& code) { return code.empty() ? "?" : code; };
    std::cout << absl::StrFormat(
        "%s%s  languages=%s->%s  compute_type=%s  max_input_tokens=%d  max_output_tokens=%d  "
        "architecture=\"%s\"  path=%s\n",
        m.name(), m.is_default() ? " (default)" : "", language(m.source_language()),
        language(m.target_language()), m.compute_type(), m.max_input_tokens(),
        m.max_output_tokens(), m.architecture(), m.path());
  }
  const v1::RequestLimits& limits = response->limits();
  std::cout << absl::StrFormat(
      "limits: max_texts_per_request=%d  max_text_bytes=%d  max_beam_size=%d  "
      "max_sampling_topk=%d\n",
      limits.max_texts_per_request(), limits.max_text_bytes(), limits.max_beam_size(),
      limits.max_sampling_topk());
  return 0;
}

int Detect(const TranslationClient& client, absl::Duration timeout) {
  v1::DetectRequest request;
  request.set_target(absl::GetFlag(FLAGS_target));
  request.set_all_languages(absl::GetFlag(FLAGS_all_languages));
  request.set_max_results(static_cast<uint32_t>(std::max(1, absl::GetFlag(FLAGS_max_results))));
  const int batch_size = absl::GetFlag(FLAGS_batch_size);
  if (batch_size < 1) return UsageError("--batch_size must be >= 1");
  auto flush = [&]() -> absl::Status {
    if (request.texts_size() == 0) return absl::OkStatus();
    absl::StatusOr<v1::DetectResponse> response = client.Detect(request, timeout);
    if (!response.ok()) return response.status();
    for (const v1::Detection& detection : response->detections()) {
      std::vector<std::string> ranked;
      for (const v1::DetectedLanguage& language : detection.languages()) {
        ranked.push_back(absl::StrFormat("%s %.1f", language.language(), language.confidence()));
      }
      std::cout << (ranked.empty() ? "-" : absl::StrJoin(ranked, "  ")) << "\n";
    }
    request.clear_texts();
    return absl::OkStatus();
  };
  return SendLinesInBatches(batch_size, *request.mutable_texts(), flush);
}

int Health(const TranslationClient& client, absl::Duration timeout) {
  absl::StatusOr<HealthStatus> status = client.Health(absl::GetFlag(FLAGS_service), timeout);
  if (!status.ok()) return Fail(status.status());
  std::cout << HealthStatusName(*status) << "\n";
  return *status == ::grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

int Bench(const TranslationClient& client, absl::Duration timeout) {
  LoadOptions load;
  const std::string input = absl::GetFlag(FLAGS_input);
  if (input.empty()) return UsageError("bench needs --input=FILE");
  std::ifstream file(input);
  if (!file) return UsageError(absl::StrCat("cannot read --input=", input));
  for (std::string line; std::getline(file, line);) {
    if (!line.empty()) load.texts.push_back(std::move(line));
  }
  if (load.texts.empty()) return UsageError(absl::StrCat(input, " has no non-empty line"));
  absl::StatusOr<v1::DecodingOptions> options = DecodingOptionsFromFlags();
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  load.decoding = *options;
  load.model = absl::GetFlag(FLAGS_model);
  load.timeout = timeout;
  load.concurrency = absl::GetFlag(FLAGS_concurrency);
  load.texts_per_request = absl::GetFlag(FLAGS_texts_per_request);
  load.requests = absl::GetFlag(FLAGS_requests);
  const double duration = absl::GetFlag(FLAGS_duration);
  if (!(duration >= 0)) return UsageError("--duration must be >= 0");
  load.duration = absl::Seconds(duration);
  const int64_t warmup = absl::GetFlag(FLAGS_warmup);
  load.warmup_requests = warmup == -1 ? load.concurrency : warmup;
  if (load.concurrency < 1 || load.texts_per_request < 1 || load.warmup_requests < 0) {
    return UsageError("need --concurrency >= 1, --texts_per_request >= 1 and --warmup >= -1");
  }
  if ((load.requests > 0) == (duration > 0) || load.requests < 0) {
    return UsageError("bench needs exactly one of --requests=M and --duration=SECONDS, positive");
  }

  absl::StatusOr<LoadReport> report = RunLoad(client, load);
  if (!report.ok()) return Fail(report.status());
  std::cout << FormatLoadReport(*report);
  return report->requests > report->failed_requests ? 0 : 1;
}

// The bytes of `path`, or an error naming `flag`.
absl::StatusOr<std::string> ReadFlagFile(const char* flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file.good() && !file.eof()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read ", path));
  }
  return text;
}

// The connection's options from the --tls_* and --api_key* flags.
absl::StatusOr<TranslationClient::Options> ClientOptionsFromFlags() {
  TranslationClient::Options options;
  const std::string ca = absl::GetFlag(FLAGS_tls_ca);
  const std::string cert = absl::GetFlag(FLAGS_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_tls_key);
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  options.tls = !ca.empty() || !cert.empty();
  for (auto [flag, path, pem] : {std::tuple{"tls_ca", ca, &options.tls_ca_pem},
                                 {"tls_cert", cert, &options.tls_cert_pem},
                                 {"tls_key", key, &options.tls_key_pem}}) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> text = ReadFlagFile(flag, path);
    if (!text.ok()) return text.status();
    *pem = *std::move(text);
  }
  options.api_key = absl::GetFlag(FLAGS_api_key);
  if (const std::string path = absl::GetFlag(FLAGS_api_key_file); !path.empty()) {
    if (!options.api_key.empty()) {
      return absl::InvalidArgumentError("give --api_key or --api_key_file, not both");
    }
    absl::StatusOr<std::string> text = ReadFlagFile("api_key_file", path);
    if (!text.ok()) return text.status();
    options.api_key = std::string(
        absl::StripAsciiWhitespace(absl::string_view(*text).substr(0, text->find('\n'))));
  }
  return options;
}

// The operator's load (or unload) of model `name`.
int LoadOrUnload(const TranslationClient& client, bool load, const std::string& name,
                 absl::Duration timeout) {
  absl::StatusOr<v1::ModelInfo> model =
      load ? client.LoadModel(name, timeout) : client.UnloadModel(name, timeout);
  if (!model.ok()) return Fail(model.status());
  std::cout << absl::StrFormat("%s  state=%s  resident_bytes=%d%s\n", model->name(),
                               v1::ModelState_Name(model->state()), model->resident_bytes(),
                               model->unload_pending() ? "  unload_pending" : "");
  return 0;
}

int Run(const std::vector<char*>& args) {
  const std::string command = args.size() >= 2 ? args[1] : "";
  const bool admin = command == "load" || command == "unload";
  const bool file = command == "translate-file";
  if (admin && args.size() != 3) return UsageError(absl::StrCat(command, " takes a model's name"));
  if (file && args.size() != 3) return UsageError("translate-file takes one file");
  if (!admin && !file && args.size() != 2) {
    return UsageError(
        "give exactly one subcommand: translate, translate-file FILE, models, detect, load NAME, "
        "unload NAME, health or bench");
  }
  absl::StatusOr<absl::Duration> timeout = TimeoutFromFlag();
  if (!timeout.ok()) return UsageError(std::string(timeout.status().message()));
  absl::StatusOr<TranslationClient::Options> options = ClientOptionsFromFlags();
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  const TranslationClient client(absl::GetFlag(FLAGS_server), *options);
  if (command == "translate") return Translate(client, *timeout);
  if (file) return TranslateFile(client, args[2], *timeout);
  if (command == "models") return Models(client, *timeout);
  if (command == "detect") return Detect(client, *timeout);
  if (admin) return LoadOrUnload(client, command == "load", args[2], *timeout);
  if (command == "health") return Health(client, *timeout);
  if (command == "bench") return Bench(client, *timeout);
  return UsageError(absl::StrCat("unknown subcommand '", command, "'"));
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  // --help lists the flags of every client/ file (absl's default shows only those of a file named
  // after the binary, which would hide the shared decoding flags).
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "client/");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(mtserve::kUsage);
  std::ios::sync_with_stdio(false);
  return mtserve::Run(absl::ParseCommandLine(argc, argv));
}
