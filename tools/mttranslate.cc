// mttranslate: translates stdin to stdout offline, a text a line, with any MarianMT model.
//
//   mttranslate [--model=DIR[,DIR...]] [--source=LANG|auto --target=LANG]
//               [--format=text|html|markdown|srt|vtt|docx|pptx|odt|odp|epub]
//               [--beam_size=1] [--batch_size=32] [--threads=2] < in.txt > out.txt
//
// Each line is a text of --format, taken apart into sentences and put back together by
// text/document.h as the server does it, so a line translates offline exactly as it does served
// (an HTML line as the API's format HTML translates it). With --format=markdown, srt or vtt the
// whole input is one document (a Markdown document, a SubRip or WebVTT file), written to stdout
// translated as the server translates it (--subtitle_max_line_chars and --subtitle_max_lines as
// the server's); with docx, pptx, odt, odp or epub the whole input is an office document's bytes,
// and the translated document's bytes are written to stdout as the file API's result is (its
// language tags set to the language the model writes). With several models, --target (and --source,
// or "auto" to detect each line's language) sends each line to the model that reads its language
// into the target, by the server's own routing (serving/language_routes.h), or through the shortest
// chain of them when none does (fr->en->de with fr-en then en-de: each sentence's translation by
// one model is the next one's input, as the server pivots, serving/pivot.h); a line no chain reads
// into the target is reported on stderr with its number and gives empty output. The sentences of
// each model's lines are sorted by length and cut into batches (less padding), translated by
// --workers worker threads that share one copy of each model, and joined back into their lines in
// input order.
// --benchmark adds throughput, wall time and peak memory on stderr; --profile (or
// MTSERVE_PROFILE=1) a table of where the engine's time went, phase by phase
// (model/ops/phase_profile.h).
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/json_file.h"
#include "base/repeated_flag_values.h"
#include "base/status_macros.h"
#include "model/model.h"
#include "model/ops/phase_profile.h"
#include "model/translator.h"
#include "serving/language_routes.h"
#include "serving/pivot.h"
#include "text/document.h"
#include "text/glossary_file.h"
#include "text/language_detector.h"
#include "text/sentences.h"
#include "text/term_matcher.h"
#include "text/terminology.h"

ABSL_FLAG(std::vector<std::string>, model, std::vector<std::string>({MTSERVE_DEFAULT_MODEL_DIR}),
          "Model directories in the Hugging Face MarianMT layout (config.json, model.safetensors, "
          "source.spm, target.spm, vocab.json): comma-separated or the flag repeated; several "
          "need --target to choose among them. Default: the embedded model.");
ABSL_FLAG(std::string, target, "",
          "Route each line by language, as the server routes a request's target_language: to the "
          "model (of --model) that reads the line's language (--source) into this one.");
ABSL_FLAG(std::string, source, "",
          "With --target: the language of every line, or auto (the default) to detect each "
          "line's language among those the models read into --target (--language_model).");
ABSL_FLAG(std::string, pivot_language, "en",
          "With --target: of the shortest chains of models that translate a pair no model does, "
          "those through this language first (the server's --pivot_language).");
ABSL_FLAG(std::string, language_model, MTSERVE_DEFAULT_LANGID_MODEL,
          "fastText language identification model for --source=auto, the server's default; "
          "empty: no detection (then auto needs a single language read into --target).");
ABSL_FLAG(int, beam_size, 1, "Beam size; 1 is greedy search (or sampling).");
ABSL_FLAG(int, num_hypotheses, 1, "Translations written per input line, best first.");
ABSL_FLAG(double, length_penalty, 1.0, "Beam scores are log-prob / length^length_penalty.");
ABSL_FLAG(int, sampling_topk, 1, "Sample among the k most likely tokens (beam_size 1 only).");
ABSL_FLAG(double, sampling_temperature, 1.0, "Sampling temperature.");
ABSL_FLAG(int64_t, seed, -1, "Sampling seed: the same seed gives the same output. -1: random.");
ABSL_FLAG(int, max_length, 0, "Maximum generated tokens; 0: the model's generation default.");
ABSL_FLAG(int, min_length, 0, "Minimum generated tokens before </s> may end a translation.");
ABSL_FLAG(std::string, format, "text",
          "What each line is: text (plain text) or html (an HTML document or fragment: its text "
          "translated, its markup kept, inline markup placed as the server places it); or, for "
          "markdown, srt (SubRip) and vtt (WebVTT), what the whole of stdin is: one document, "
          "written back translated with its markup, timings and tags kept; for docx, pptx, odt, "
          "odp and epub, stdin is an office document's bytes, and stdout the translated "
          "document's.");
ABSL_FLAG(int, subtitle_max_line_chars, 42,
          "Characters per line of a translated subtitle cue (as the server's flag)");
ABSL_FLAG(int, subtitle_max_lines, 2,
          "Lines per translated subtitle cue where the text fits (as the server's flag)");
ABSL_FLAG(int, subtitle_max_sentence_gap_ms, 3000,
          "Longest silence a subtitle sentence runs on over, from one cue into the next (as the "
          "server's flag)");
ABSL_FLAG(std::string, glossary, "",
          "A glossary file (DeepL's entries: FILE.tsv, source<TAB>target a line, or FILE.csv): "
          "where a source term occurs, one of its targets is written as given, as the API's "
          "options.glossary does");
ABSL_FLAG(bool, glossary_ignore_case, false, "Glossary sources match ignoring case.");
ABSL_FLAG(std::vector<std::string>, keep, {},
          "Terms kept exactly as written (the flag may be given several times; commas separate "
          "terms), as the API's options.keep");
ABSL_FLAG(std::vector<std::string>, keep_patterns, {},
          "Spans kept as written, found by their look: any of urls, emails, numbers_with_units, "
          "placeholders (the API's options.keep_patterns)");
ABSL_FLAG(int, batch_size, 32, "Sentences per batch.");
ABSL_FLAG(bool, split_sentences, true,
          "Split each line into sentences (false: each line is one sentence, as the server's "
          "split_sentences option).");
ABSL_FLAG(int, max_input_tokens, 512,
          "Source tokens per sentence (</s> included; the model's positions also bound it): a "
          "longer sentence is translated in pieces, as by mtserve's flag of the same name.");
ABSL_FLAG(int, threads, 2, "Compute threads in all.");
ABSL_FLAG(int, workers, 0,
          "Worker threads, each translating its own batches with threads/workers compute "
          "threads; 0: one worker per thread.");
ABSL_FLAG(bool, shortlist, true,
          "Decode with the model's lexical shortlist when its directory has one (vmap.txt or "
          "lex.s2t); false: the whole vocabulary.");
ABSL_FLAG(bool, with_scores, false, "Prefix each translation with its score and a tab.");
ABSL_FLAG(bool, with_alignment, false,
          "Follow each translation with a tab and its alignment as space-separated source-target "
          "pairs of 0-based token positions, like Marian's: one per generated token (each "
          "sentence's </s> included), from the last decoder layer's cross-attention.");
ABSL_FLAG(std::string, compute_type, "float32",
          "Arithmetic of the linear layers: float32, bfloat16, int8, or auto (int8 where the CPU "
          "has VNNI, float32 otherwise).");
ABSL_FLAG(bool, benchmark, false,
          "Print sentences/s, target tokens/s, wall time and peak RSS to stderr.");
ABSL_FLAG(bool, profile, false,
          "Time the engine's phases (encoder, self-attention, cross-attention, feed-forward, "
          "vocabulary projection, logits, top-k, search) and print a table of them to stderr at "
          "the end: milliseconds summed over the workers, share of the decode time, calls, and "
          "the multiply-adds per second of their matrix products. Also MTSERVE_PROFILE=1.");

namespace mtserve {
namespace {

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// The phase profile (--profile) on stderr: a line of totals, then a row per phase. Times are
// summed over the workers, so GMAC/s is per worker (of threads_per_worker threads).
void PrintPhaseProfile(int workers, int threads_per_worker) {
  const PhaseTable table = CollectedPhaseProfiles();
  int64_t total_ns = 0;
  int64_t total_macs = 0;
  for (const PhaseStats& stats : table) {
    total_ns += stats.nanoseconds;
    total_macs += stats.macs;
  }
  auto gmacs = [](int64_t macs, int64_t ns) {
    return ns > 0 ? static_cast<double>(macs) / ns : 0.0;
  };
  std::string out = absl::StrFormat(
      "mttranslate profile: decode time %.1f ms summed over %d worker(s) x %d thread(s); %.3f "
      "GMAC, %.2f GMAC/s per worker\n%-18s %10s %6s %10s %10s %8s\n",
      total_ns / 1e6, workers, threads_per_worker, total_macs / 1e9, gmacs(total_macs, total_ns),
      "phase", "ms", "%", "calls", "GMAC", "GMAC/s");
  for (int p = 0; p < kNumPhases; ++p) {
    const PhaseStats& stats = table[p];
    absl::StrAppendFormat(&out, "%-18s %10.1f %6.1f %10d %10.3f %8.2f\n",
                          PhaseName(static_cast<Phase>(p)), stats.nanoseconds / 1e6,
                          total_ns > 0 ? 100.0 * stats.nanoseconds / total_ns : 0.0, stats.calls,
                          stats.macs / 1e9, gmacs(stats.macs, stats.nanoseconds));
  }
  std::cerr << out;
}

// A model of --model, and what its lines are taken apart with.
struct LoadedModel {
  std::string name;  // Its directory's name, as the server names a model given as DIR.
  std::shared_ptr<const Model> model;
  std::unique_ptr<SentenceSplitter> splitter;  // None without --split_sentences.
  int max_tokens = 0;
  DecodingOptions options;  // With the alignment when a sentence of its lines needs it.
};

// The name the server gives a model given as DIR: the directory's last component.
std::string ModelName(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.filename().string();
}

// How the lines are routed: the models of each line, in order (one, or a chain; none: no chain
// reads it into the target, and `errors` says why), or a command-line mistake.
struct Routing {
  std::vector<std::vector<int>> line_chain;
  std::vector<std::string> errors;  // Per line: empty, or why it is not translated.
};

// Each line's model: the only one without --target; by --source and --target otherwise, as
// TranslationCore routes a request's texts (LanguageRoutes: Route for a given source,
// RouteDetected per line for auto; an office document (`binary`) is not detected). InvalidArgument
// for flags that route nothing; a line that "auto" cannot send anywhere is an error of its own,
// not the run's.
absl::StatusOr<Routing> RouteLines(const std::vector<LoadedModel>& models,
                                   const std::vector<std::string>& lines, bool binary) {
  const std::string source = absl::GetFlag(FLAGS_source);
  const std::string target = absl::GetFlag(FLAGS_target);
  Routing routing;
  routing.errors.resize(lines.size());
  if (target.empty()) {
    if (!source.empty()) {
      return absl::InvalidArgumentError("--source needs --target (or name one --model alone)");
    }
    if (models.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model names ", models.size(),
                       " models: give --target (and --source) to choose each line's"));
    }
    routing.line_chain.assign(lines.size(), {0});
    return routing;
  }
  std::vector<LanguageRoutes::Pair> pairs;
  for (const LoadedModel& m : models) {
    pairs.push_back({m.name, m.model->config().source_lang, m.model->config().target_lang});
  }
  const LanguageRoutes routes(std::move(pairs), absl::GetFlag(FLAGS_pivot_language));
  const std::vector<std::string> sources = routes.SourcesInto(target);
  if (sources.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--target: no model here translates into ",
                                                   target,
                                                   "; the pairs served: ", routes.Describe()));
  }
  if (!source.empty() && source != "auto") {
    absl::StatusOr<std::vector<int>> chain = routes.Route(source, target);
    if (!chain.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--source: ", chain.status().message()));
    }
    routing.line_chain.assign(lines.size(), *chain);
    return routing;
  }
  std::unique_ptr<LanguageDetector> detector;
  if (binary) {
    // An office document's bytes are a zip archive: its language is not detected from them (as
    // the server does not).
    if (sources.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--source=auto: an office document's language is not detected (its text is inside a "
          "zip archive) and several languages are read into ",
          target, " (", absl::StrJoin(sources, ", "), "); give --source"));
    }
  } else if (const std::string path = absl::GetFlag(FLAGS_language_model); !path.empty()) {
    absl::StatusOr<std::unique_ptr<LanguageDetector>> loaded = LanguageDetector::Load(path);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--language_model: ", loaded.status().message()));
    }
    detector = *std::move(loaded);
  } else if (sources.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--source=auto: --language_model is empty (no detection) and several languages are read "
        "into ",
        target, " (", absl::StrJoin(sources, ", "), "); give --source"));
  }
  routing.line_chain.resize(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const LanguageRoutes::Detected detected =
        routes.RouteDetected(lines[i], target, detector.get());
    routing.line_chain[i] = detected.chain;
    if (detected.chain.empty()) routing.errors[i] = std::string(detected.status.message());
  }
  return routing;
}

// The terminology of --glossary, --glossary_ignore_case, --keep and --keep_patterns, checked as
// the server checks a request's (with its default limits, but a file's entries as many as a stored
// glossary's).
absl::StatusOr<Terminology> ReadTerminology(int argc, char** argv) {
  Terminology terms;
  terms.ignore_case = absl::GetFlag(FLAGS_glossary_ignore_case);
  if (const std::string path = absl::GetFlag(FLAGS_glossary); !path.empty()) {
    GlossaryFileOptions file;
    if (absl::EndsWith(path, ".csv")) {
      file.format = GlossaryFileFormat::kCsv;
    } else if (!absl::EndsWith(path, ".tsv")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--glossary: ", path, " is neither FILE.tsv nor FILE.csv"));
    }
    const TerminologyLimits limits;
    file.limits = GlossaryFileLimitsFor(GlossaryFileLimits().max_entries, limits);
    absl::StatusOr<std::string> bytes = ReadRegularFile(path, file.limits.max_bytes);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat("--glossary: ", bytes.status().message()));
    }
    MT_ASSIGN_OR_RETURN(terms.glossary,
                        ParseGlossaryFile(*bytes, file, absl::StrCat("--glossary ", path)));
  }
  for (const std::string& value : RepeatedFlagValues(argc, argv, "keep")) {
    for (absl::string_view term : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      terms.keep.emplace_back(term);
    }
  }
  for (const std::string& name : absl::GetFlag(FLAGS_keep_patterns)) {
    static constexpr std::pair<const char*, KeepPattern> kNames[] = {
        {"urls", KeepPattern::kUrls},
        {"emails", KeepPattern::kEmails},
        {"numbers_with_units", KeepPattern::kNumbersWithUnits},
        {"placeholders", KeepPattern::kPlaceholders}};
    const auto* found = std::find_if(std::begin(kNames), std::end(kNames),
                                     [&](const auto& known) { return name == known.first; });
    if (found == std::end(kNames)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--keep_patterns: ", name, " is none of urls, emails, numbers_with_units, placeholders"));
    }
    terms.keep_patterns.push_back(found->second);
  }
  // A file's entries are bounded by the file's limits, the rest by a request's.
  TerminologyLimits limits;
  limits.max_entries = static_cast<int>(terms.glossary.size()) + limits.max_entries;
  MT_RETURN_IF_ERROR(ValidateTerminology(terms, limits, "--"));
  return terms;
}

int Run(int argc, char** argv) {
  DecodingOptions options;
  options.beam_size = absl::GetFlag(FLAGS_beam_size);
  options.num_hypotheses = absl::GetFlag(FLAGS_num_hypotheses);
  options.length_penalty = static_cast<float>(absl::GetFlag(FLAGS_length_penalty));
  options.sampling_topk = absl::GetFlag(FLAGS_sampling_topk);
  options.sampling_temperature = static_cast<float>(absl::GetFlag(FLAGS_sampling_temperature));
  if (absl::GetFlag(FLAGS_seed) >= 0) options.seed = absl::GetFlag(FLAGS_seed);
  options.max_length = absl::GetFlag(FLAGS_max_length);
  options.min_length = absl::GetFlag(FLAGS_min_length);
  const bool with_alignment = absl::GetFlag(FLAGS_with_alignment);
  options.return_alignment = with_alignment;
  options.shortlist = absl::GetFlag(FLAGS_shortlist);
  const int batch_size = absl::GetFlag(FLAGS_batch_size);
  const int threads = absl::GetFlag(FLAGS_threads);
  int workers = absl::GetFlag(FLAGS_workers);
  if (workers == 0) workers = threads;
  if (batch_size < 1 || threads < 1 || workers < 1 || workers > threads) {
    std::cerr << "mttranslate: need batch_size >= 1 and 1 <= workers <= threads\n";
    return 2;
  }
  const bool profile = absl::GetFlag(FLAGS_profile) || PhaseProfilesEnabled();
  if (profile) EnablePhaseProfiles();
  if (absl::GetFlag(FLAGS_max_input_tokens) < 2) {
    std::cerr << "mttranslate: need max_input_tokens >= 2\n";
    return 2;
  }

  const absl::StatusOr<DocumentFormat> format = ParseDocumentFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) {
    std::cerr << "mttranslate: --format: " << format.status().message() << "\n";
    return 2;
  }
  if (with_alignment && *format != DocumentFormat::kPlainText) {
    std::cerr << "mttranslate: --with_alignment needs --format=text\n";
    return 2;
  }
  // A Markdown document, a subtitle file or an office document (bytes, not text) is all of the
  // input, not a line: written back once, with no line added.
  const bool binary = IsBinaryFormat(*format);
  const bool whole_input = *format == DocumentFormat::kMarkdown ||
                           *format == DocumentFormat::kSrt || *format == DocumentFormat::kVtt ||
                           binary;
  if (whole_input && (options.num_hypotheses > 1 || absl::GetFlag(FLAGS_with_scores))) {
    std::cerr << "mttranslate: --format=" << absl::GetFlag(FLAGS_format)
              << " translates the whole input as one document: it takes neither "
                 "--num_hypotheses above 1 nor --with_scores\n";
    return 2;
  }
  const SubtitleLayout subtitle_layout{absl::GetFlag(FLAGS_subtitle_max_line_chars),
                                       absl::GetFlag(FLAGS_subtitle_max_lines),
                                       absl::GetFlag(FLAGS_subtitle_max_sentence_gap_ms)};
  if (subtitle_layout.max_line_chars < 1 || subtitle_layout.max_lines < 1 ||
      subtitle_layout.max_sentence_gap_ms < 0) {
    std::cerr << "mttranslate: need subtitle_max_line_chars >= 1, subtitle_max_lines >= 1 and "
                 "subtitle_max_sentence_gap_ms >= 0\n";
    return 2;
  }

  const absl::StatusOr<ComputeType> compute_type =
      ParseComputeType(absl::GetFlag(FLAGS_compute_type));
  if (!compute_type.ok()) {
    std::cerr << "mttranslate: --compute_type: " << compute_type.status().message() << "\n";
    return 2;
  }
  // --model as many times as given (absl flags keep the last), each value possibly a list.
  std::vector<std::string> dirs = RepeatedFlagValues(argc, argv, "model");
  if (dirs.empty()) dirs = absl::GetFlag(FLAGS_model);
  if (dirs.empty()) {
    std::cerr << "mttranslate: --model: no model directory\n";
    return 2;
  }
  const auto load_start = std::chrono::steady_clock::now();
  std::vector<LoadedModel> models(dirs.size());
  for (size_t m = 0; m < dirs.size(); ++m) {
    LoadedModel& loaded = models[m];
    loaded.name = ModelName(dirs[m]);
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(dirs[m], *compute_type);
    if (!model.ok()) {
      std::cerr << "mttranslate: " << model.status().message() << "\n";
      return 1;
    }
    loaded.model = *std::move(model);
    const ModelConfig& config = loaded.model->config();
    if (absl::Status status = ValidateDecodingOptions(options, config, "--"); !status.ok()) {
      std::cerr << "mttranslate: " << status.message() << "\n";
      return 2;
    }
    loaded.options = options;
    loaded.max_tokens =
        std::min(absl::GetFlag(FLAGS_max_input_tokens), config.max_position_embeddings);
    if (loaded.max_tokens < 2) {
      std::cerr << "mttranslate: need max_input_tokens >= 2\n";
      return 2;
    }
    if (absl::GetFlag(FLAGS_split_sentences)) {
      absl::StatusOr<std::unique_ptr<SentenceSplitter>> made =
          SplitterForLanguage(config.source_lang);
      if (!made.ok()) {
        std::cerr << "mttranslate: " << made.status().message() << "\n";
        return 1;
      }
      loaded.splitter = *std::move(made);
    }
  }
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

  absl::StatusOr<Terminology> terms = ReadTerminology(argc, argv);
  if (!terms.ok()) {
    std::cerr << "mttranslate: " << terms.status().message() << "\n";
    return 2;
  }

  std::vector<std::string> lines;
  if (whole_input) {
    lines.emplace_back(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    for (std::string line; std::getline(std::cin, line);) lines.push_back(std::move(line));
  }

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Routing> routing = RouteLines(models, lines, binary);
  if (!routing.ok()) {
    std::cerr << "mttranslate: " << routing.status().message() << "\n";
    return 2;
  }
  const std::vector<std::vector<int>>& line_chain = routing->line_chain;
  std::vector<int> line_model;  // Each line's first model (-1: none).
  for (const std::vector<int>& chain : line_chain) {
    line_model.push_back(chain.empty() ? -1 : chain.front());
  }
  // The terms, spelled for each model a line's translation is written by (its chain's last).
  std::vector<std::shared_ptr<const TermMatcher>> matchers(models.size());
  for (const std::vector<int>& chain : line_chain) {
    if (terms->empty() || chain.empty() || matchers[chain.back()] != nullptr) continue;
    const LoadedModel& model = models[chain.back()];
    absl::StatusOr<std::shared_ptr<const TermMatcher>> matcher =
        CompileTerminology(*terms, model.model->tokenizer(), "--");
    if (!matcher.ok()) {
      std::cerr << "mttranslate: " << model.name << ": " << matcher.status().message() << "\n";
      return 2;
    }
    matchers[chain.back()] = *std::move(matcher);
  }
  // Every routed line taken apart with its model's rules, and the sentences of all lines in
  // order (a line that no model reads has none).
  std::vector<std::unique_ptr<Document>> documents(lines.size());
  std::vector<const std::vector<int>*> sources;
  std::vector<int> sentence_model;
  // Each sentence's terms, written by its line's last model (null: none, or a pivot's first leg).
  std::vector<std::shared_ptr<const TermConstraints>> sentence_terms;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int m = line_model[i];
    if (m < 0) continue;
    LoadedModel& model = models[m];
    // Office documents' language tags say the language the line's last model writes.
    const SentenceRules rules{model.splitter.get(),
                              &model.model->tokenizer(),
                              model.max_tokens,
                              subtitle_layout,
                              LanguageTag(models[line_chain[i].back()].model->config().target_lang),
                              matchers[line_chain[i].back()].get()};
    absl::StatusOr<std::unique_ptr<Document>> document = PrepareDocument(lines[i], *format, rules);
    if (!document.ok()) {
      std::cerr << "mttranslate: " << (whole_input ? "stdin" : absl::StrCat("line ", i + 1)) << ": "
                << document.status().message() << "\n";
      return 1;
    }
    documents[i] = *std::move(document);
    for (size_t j = 0; j < documents[i]->sentences().size(); ++j) {
      const SourceSentence& sentence = documents[i]->sentences()[j];
      sources.push_back(&sentence.ids);
      sentence_model.push_back(m);
      sentence_terms.push_back(line_chain[i].size() == 1 ? ConstraintsOf(sentence.terms) : nullptr);
      // HTML's inline markup and runs of characters the model cannot spell are placed by the
      // alignment (text/document.h), which changes no token: all of the model's sentences are
      // decoded with it, as the server decodes those sentences.
      // Through a chain, every leg is (serving/pivot.h composes the last's through them), and
      // the legs before the last for a sentence with terms (the last writes each where they
      // translated its source).
      if (documents[i]->NeedsAlignment(j) ||
          (line_chain[i].size() > 1 && sentence.terms != nullptr)) {
        for (const int c : line_chain[i]) models[c].options.return_alignment = true;
      }
    }
  }
  if (with_alignment) {
    for (LoadedModel& model : models) model.options.return_alignment = true;
  }
  // Translates `sources` (sentence k by model sentence_model[k], writing the terms
  // `constraints[k]`) into `results`: each model's sentences by decreasing length, cut into
  // batches (batches of similar lengths waste little on padding, and a batch is of one model, and
  // of sentences with terms or without: those are decoded with ConstrainedOptions, as the server
  // decodes them), by --workers threads.
  auto translate = [&](const std::vector<const std::vector<int>*>& sources,
                       const std::vector<int>& sentence_model,
                       const std::vector<std::shared_ptr<const TermConstraints>>& constraints,
                       std::vector<TranslationResult>& results) -> absl::Status {
    struct Batch {
      int model;
      bool constrained;
      size_t first, last;  // [first, last) of `order`.
    };
    std::vector<size_t> order;
    std::vector<Batch> batches;
    for (size_t m = 0; m < models.size(); ++m) {
      for (const bool constrained : {false, true}) {
        const size_t begin = order.size();
        for (size_t k = 0; k < sources.size(); ++k) {
          if (sentence_model[k] == static_cast<int>(m) &&
              (constraints[k] != nullptr) == constrained) {
            order.push_back(k);
          }
        }
        std::stable_sort(order.begin() + begin, order.end(), [&](size_t a, size_t b) {
          return sources[a]->size() > sources[b]->size();
        });
        for (size_t first = begin; first < order.size(); first += batch_size) {
          batches.push_back({static_cast<int>(m), constrained, first,
                             std::min(order.size(), first + batch_size)});
        }
      }
    }

    results.assign(sources.size(), {});
    std::atomic<size_t> next_batch{0};
    std::atomic<size_t> done{0};
    absl::Mutex error_mutex;
    absl::Status error;
    const size_t num_batches = batches.size();
    auto work = [&](int threads_per_worker) {
      // This worker's translator of each model, made when it first has a batch of that model.
      std::vector<std::unique_ptr<Translator>> translators(models.size());
      for (size_t b; (b = next_batch.fetch_add(1)) < num_batches;) {
        const Batch& run = batches[b];
        const LoadedModel& model = models[run.model];
        if (translators[run.model] == nullptr) {
          translators[run.model] = std::make_unique<Translator>(model.model, threads_per_worker);
        }
        std::vector<std::vector<int>> batch;
        std::vector<std::shared_ptr<const TermConstraints>> batch_terms;
        for (size_t i = run.first; i < run.last; ++i) {
          batch.push_back(*sources[order[i]]);
          if (run.constrained) batch_terms.push_back(constraints[order[i]]);
        }
        absl::StatusOr<std::vector<std::vector<Hypothesis>>> out =
            translators[run.model]->TranslateIds(
                batch, run.constrained ? ConstrainedOptions(model.options) : model.options, nullptr,
                batch_terms);
        if (!out.ok()) {
          absl::MutexLock lock(&error_mutex);
          error = out.status();
          return;
        }
        const Tokenizer& tokenizer = model.model->tokenizer();
        for (size_t i = run.first; i < run.last; ++i) {
          for (Hypothesis& h : (*out)[i - run.first]) h.text = tokenizer.DecodeTarget(h.ids);
          results[order[i]].hypotheses = std::move((*out)[i - run.first]);
          results[order[i]].source_tokens = static_cast<int>(sources[order[i]]->size());
        }
        done += run.last - run.first;
      }
    };
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back(work, threads / workers + (w < threads % workers ? 1 : 0));
    }
    // Progress for long inputs, when someone is watching.
    const bool show_progress = isatty(STDERR_FILENO) && order.size() > 1000;
    while (show_progress && done < order.size() && next_batch < num_batches + workers) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::cerr << absl::StrFormat("\rmttranslate: %zu/%zu sentences", done.load(), order.size());
    }
    for (std::thread& t : pool) t.join();
    if (show_progress) std::cerr << "\n";
    return error;
  };
  std::vector<TranslationResult> results;
  if (absl::Status translated = translate(sources, sentence_model, sentence_terms, results);
      !translated.ok()) {
    std::cerr << "mttranslate: " << translated.message() << "\n";
    return 1;
  }
  // The first sentence of each line in `results`.
  std::vector<size_t> line_first(lines.size() + 1, 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    line_first[i + 1] =
        line_first[i] + (documents[i] == nullptr ? 0 : documents[i]->sentences().size());
  }
  // Pivoted lines, leg by leg: each sentence's translation so far is the next model's input (one
  // text, cut to its token limit), all the sentences of a leg translated together, then joined and
  // composed with the legs before (serving/pivot.h), as the server does it.
  for (size_t leg = 1;; ++leg) {
    struct Step {
      size_t sentence;                   // In `results`.
      int from, to;                      // The models of the leg before and of this one.
      std::unique_ptr<BridgeText> text;  // What this leg reads (`bridge`'s text).
      std::unique_ptr<Document> bridge;
      size_t first;  // Its pieces' first in the round.
    };
    std::vector<Step> steps;
    std::vector<const std::vector<int>*> round;
    std::vector<int> round_model;
    std::vector<std::shared_ptr<const TermConstraints>> round_terms;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (line_chain[i].size() <= leg) continue;
      const int to = line_chain[i][leg];
      for (size_t s = line_first[i]; s < line_first[i + 1]; ++s) {
        const int from = line_chain[i][leg - 1];
        // The first model's unknown runs go into the bridge from a plain text's bytes (as the
        // server does it: a marked-up line's sentences are in its document's runs).
        absl::string_view sentence;
        if (*format == DocumentFormat::kPlainText) {
          const Segment range = documents[i]->sentences()[s - line_first[i]].range;
          sentence = absl::string_view(lines[i]).substr(range.begin, range.end - range.begin);
        }
        auto text = std::make_unique<BridgeText>(
            MakeBridgeText(results[s], sentence, models[line_chain[i].front()].model->tokenizer(),
                           models[from].model->tokenizer()));
        absl::StatusOr<std::unique_ptr<Document>> bridge =
            PrepareBridge(*text, models[to].model->tokenizer(), models[to].max_tokens);
        if (!bridge.ok()) {
          std::cerr << "mttranslate: line " << i + 1 << ": " << bridge.status().message() << "\n";
          return 1;
        }
        Step& step = steps.emplace_back(
            Step{s, from, to, std::move(text), *std::move(bridge), round.size()});
        // The sentence's terms are written on the last leg by the bridge's first piece, each
        // where the legs before translated its source, as the server does it.
        std::vector<SourceSentence>& pieces = step.bridge->sentences();
        if (leg + 1 == line_chain[i].size() && !pieces.empty()) {
          pieces.front().terms =
              BridgeTerms(documents[i]->sentences()[s - line_first[i]].terms, results[s],
                          models[from].model->tokenizer(), *step.text, *step.bridge,
                          models[to].model->tokenizer());
        }
        for (const SourceSentence& piece : pieces) {
          round.push_back(&piece.ids);
          round_model.push_back(to);
          round_terms.push_back(ConstraintsOf(piece.terms));
        }
      }
    }
    if (steps.empty()) break;
    std::vector<TranslationResult> round_results;
    if (absl::Status translated = translate(round, round_model, round_terms, round_results);
        !translated.ok()) {
      std::cerr << "mttranslate: " << translated.message() << "\n";
      return 1;
    }
    for (Step& step : steps) {
      const size_t count = step.bridge->sentences().size();
      std::vector<TranslationResult> pieces(
          std::make_move_iterator(round_results.begin() + step.first),
          std::make_move_iterator(round_results.begin() + step.first + count));
      const Tokenizer& tokenizer = models[step.to].model->tokenizer();
      results[step.sentence] = ComposeLegs(
          results[step.sentence], models[step.from].model->tokenizer(), *step.text, *step.bridge,
          JoinDocument(*step.bridge, std::move(pieces), options.num_hypotheses, tokenizer),
          tokenizer);
    }
  }

  size_t target_tokens = 0;
  size_t failed_lines = 0;
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (line_model[i] < 0) {
      // Not translated: said on stderr, and empty lines keep the output in step with the input.
      std::cerr << "mttranslate: line " << i + 1 << ": " << routing->errors[i] << "\n";
      ++failed_lines;
      out.append(std::max(1, options.num_hypotheses), '\n');
      continue;
    }
    // Read by its first model, written by its last.
    const Tokenizer& tokenizer = models[line_chain[i].back()].model->tokenizer();
    std::vector<TranslationResult> line_results(
        std::make_move_iterator(results.begin() + line_first[i]),
        std::make_move_iterator(results.begin() + line_first[i + 1]));
    // A line of whitespace only gives it back: num_hypotheses times, like any other line.
    const TextTranslation line =
        JoinDocument(*documents[i], std::move(line_results), options.num_hypotheses,
                     models[line_model[i]].model->tokenizer(), tokenizer);
    for (size_t k = 0; k < line.hypotheses.size(); ++k) {
      const Hypothesis& h = line.hypotheses[k];
      // What the answer's Hypothesis.dropped lists, said where it does not change the output.
      for (const Segment& run :
           k < line.dropped.size() ? line.dropped[k] : std::vector<Segment>()) {
        // An office document's ranges index its extracted text (text/office/office_document.h).
        std::cerr << absl::StrFormat(
            "mttranslate: line %zu: bytes %zu-%zu%s are not translated in translation %zu (%s)\n",
            i + 1, run.begin, run.end, binary ? " of the document's extracted text" : "", k + 1,
            binary ? "text the format keeps as written, or characters the model cannot spell"
                   : "characters the model cannot spell, or Markdown whose markup could not be "
                     "mapped");
      }
      if (absl::GetFlag(FLAGS_with_scores)) absl::StrAppendFormat(&out, "%.6f\t", h.score);
      out += h.text;
      if (with_alignment) {
        out += '\t';
        for (size_t t = 0; t < h.alignment.size(); ++t) {
          absl::StrAppendFormat(&out, "%s%d-%d", t == 0 ? "" : " ", h.alignment[t], t);
        }
      }
      if (!whole_input) out += '\n';
    }
    target_tokens += TargetTokens(line.hypotheses[0], tokenizer.eos_id());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fwrite(out.data(), 1, out.size(), stdout);

  if (absl::GetFlag(FLAGS_benchmark)) {
    const size_t sentences = line_first.back();  // A document's (one line's) included.
    std::cerr << absl::StrFormat(
        "mttranslate benchmark: %zu lines, %zu sentences, %zu target tokens in %.3f s: %.1f "
        "sentences/s, %.1f target tokens/s; model load %.3f s; peak RSS %.1f MiB; beam %d, "
        "batch %d, %d worker(s) x %d thread(s), %s\n",
        lines.size(), sentences, target_tokens, seconds, sentences / seconds,
        target_tokens / seconds, load_seconds, PeakRssMiB(), options.beam_size, batch_size, workers,
        threads / workers, ComputeTypeName(models.front().model->compute_type()));
  }
  // The workers, and with them their translators' profiles, are gone: all are collected.
  if (profile) PrintPhaseProfile(workers, threads / workers);
  if (failed_lines > 0) {
    std::cerr << "mttranslate: " << failed_lines << " of " << lines.size()
              << " lines not translated\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  // A fixed threshold: buffers of 128 KiB or more are mapped on their own and returned to the
  // system when freed, instead of growing glibc's per-thread arenas (which then never shrink).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  absl::SetProgramUsageMessage(
      "Translates stdin to stdout, one text a line.\n"
      "  mttranslate [--model=DIR[,DIR...]] [--source=LANG|auto --target=LANG] "
      "[--format=text|html|markdown|srt|vtt|docx|pptx|odt|odp|epub] [--beam_size=N] "
      "[--batch_size=N] [--threads=N] < in > out");
  absl::ParseCommandLine(argc, argv);
  return mtserve::Run(argc, argv);
}
