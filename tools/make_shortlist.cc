// make_shortlist: derives a lexical shortlist for a model (CTranslate2's vocabulary map,
// vmap.txt) from the model's own translations of a source-language text, a sentence a line.
//
//   make_shortlist --model=DIR --input=FILE --output=FILE [--frequent=800] [--per_source=10]
//                  [--min_count=1] [--counting=neighbours|aligned|sentence]
//                  [--compute_type=float32] [--beam_size=4] [--num_hypotheses=1] [--threads=2]
//                  [--evaluate=FILE]
//
// Each line is translated with the decoder's alignment (tools/shortlist_derivation.h), its
// --num_hypotheses best translations counted alike; the output holds the --frequent most generated
// target tokens and </s> on a line with an empty source, then for each source piece the
// --per_source targets most often generated for it. A summary goes to stderr; with
// --evaluate=FILE, also how the list covers the model's (best) translations of FILE.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "model/compute_type.h"
#include "model/model.h"
#include "tools/shortlist_derivation.h"

ABSL_FLAG(std::string, model, "", "Model directory (Hugging Face MarianMT layout). Required.");
ABSL_FLAG(std::string, input, "",
          "Source-language text, a sentence a line (a training corpus' source side, never a test "
          "set). Required.");
ABSL_FLAG(std::string, output, "", "The vocabulary map written (vmap.txt). Required.");
ABSL_FLAG(int, frequent, mtserve::ShortlistOptions().frequent,
          "Most generated target tokens every sentence may generate.");
ABSL_FLAG(int, per_source, mtserve::ShortlistOptions().per_source,
          "Targets a source piece brings at most, beyond the frequent ones.");
ABSL_FLAG(int, min_count, mtserve::ShortlistOptions().min_count,
          "Times a target must have been generated for a piece to be listed.");
ABSL_FLAG(std::string, counting, "neighbours",
          "What links a generated token to source pieces: aligned (the piece the decoder's "
          "alignment gives it), neighbours (that piece and its neighbours) or sentence (every "
          "piece of the sentence).");
ABSL_FLAG(std::string, compute_type, "float32",
          "Arithmetic of the linear layers: float32, bfloat16, int8, or auto.");
ABSL_FLAG(int, beam_size, 4, "Beam size of the translations; 1 is greedy search.");
ABSL_FLAG(int, num_hypotheses, 1,
          "Translations of each line counted (the beam's best ones, each alike), at most "
          "--beam_size.");
ABSL_FLAG(int, threads, 2, "Worker threads, each translating its own batches of 32 sentences.");
ABSL_FLAG(std::string, evaluate, "",
          "A text to translate (full vocabulary, the same options) after writing the list: prints "
          "the sentences whose every generated token the list offers them, and the mean "
          "candidates a sentence gets.");

namespace mtserve {
namespace {

constexpr int kBatchSize = 32;

// The lines of a text file (without their line breaks).
absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines = absl::StrSplit(text.str(), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (std::string& line : lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  return lines;
}

int Run() {
  const std::string dir = absl::GetFlag(FLAGS_model);
  const std::string input = absl::GetFlag(FLAGS_input);
  const std::string output = absl::GetFlag(FLAGS_output);
  if (dir.empty() || input.empty() || output.empty()) {
    std::cerr << "make_shortlist: --model, --input and --output are required (see --help)\n";
    return 2;
  }
  ShortlistOptions options;
  options.frequent = absl::GetFlag(FLAGS_frequent);
  options.per_source = absl::GetFlag(FLAGS_per_source);
  options.min_count = absl::GetFlag(FLAGS_min_count);
  const absl::StatusOr<ShortlistCounting> counting =
      ParseShortlistCounting(absl::GetFlag(FLAGS_counting));
  if (!counting.ok()) {
    std::cerr << "make_shortlist: " << counting.status().message() << "\n";
    return 2;
  }
  options.counting = *counting;
  if (absl::Status valid = ValidateShortlistOptions(options); !valid.ok()) {
    std::cerr << "make_shortlist: " << valid.message() << "\n";
    return 2;
  }
  const absl::StatusOr<ComputeType> compute_type =
      ParseComputeType(absl::GetFlag(FLAGS_compute_type));
  if (!compute_type.ok()) {
    std::cerr << "make_shortlist: --compute_type: " << compute_type.status().message() << "\n";
    return 2;
  }

  absl::StatusOr<std::vector<std::string>> read = ReadLines(input);
  if (!read.ok()) {
    std::cerr << "make_shortlist: --input: " << read.status().message() << "\n";
    return 1;
  }
  const std::vector<std::string>& lines = *read;

  const absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(dir, *compute_type);
  if (!model.ok()) {
    std::cerr << "make_shortlist: " << model.status().message() << "\n";
    return 1;
  }
  DecodingOptions decoding;
  decoding.beam_size = absl::GetFlag(FLAGS_beam_size);
  decoding.num_hypotheses = absl::GetFlag(FLAGS_num_hypotheses);
  ShortlistCounts counts(options.counting);
  std::vector<std::string> skipped;
  if (absl::Status counted = CountTranslations(
          *model, lines, decoding, absl::GetFlag(FLAGS_threads), kBatchSize, counts, skipped);
      !counted.ok()) {
    std::cerr << "make_shortlist: " << counted.message() << "\n";
    return absl::IsInvalidArgument(counted) ? 2 : 1;
  }
  for (const std::string& line : skipped) {
    std::cerr << "make_shortlist: skipped " << line << "\n";
  }
  const Tokenizer& tokenizer = (*model)->tokenizer();
  const ShortlistCounts::Written written =
      counts.VocabularyMap(options, tokenizer.vocab(), tokenizer.eos_id(), tokenizer.pad_id());
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << written.text;
  out.close();
  if (!out) {
    std::cerr << "make_shortlist: --output: cannot write " << output << "\n";
    return 1;
  }
  std::cerr << absl::StrFormat(
      "make_shortlist: %zu lines read, %d translated, %d empty, %zu skipped (too long); %d "
      "target tokens generated; %d targets always, %d rules written, %.2f targets per rule on "
      "average; %s\n",
      lines.size(), counts.translations(),
      static_cast<int64_t>(lines.size() - skipped.size()) - counts.translations(), skipped.size(),
      counts.target_tokens(), written.always, written.rules,
      written.rules == 0 ? 0.0 : static_cast<double>(written.rule_targets) / written.rules, output);
  if (const std::string path = absl::GetFlag(FLAGS_evaluate); !path.empty()) {
    absl::StatusOr<std::vector<std::string>> evaluated = ReadLines(path);
    if (!evaluated.ok()) {
      std::cerr << "make_shortlist: --evaluate: " << evaluated.status().message() << "\n";
      return 1;
    }
    skipped.clear();
    absl::StatusOr<std::vector<SentenceTranslation>> translations = TranslateLines(
        *model, *evaluated, decoding, absl::GetFlag(FLAGS_threads), kBatchSize, skipped);
    if (!translations.ok()) {
      std::cerr << "make_shortlist: --evaluate: " << translations.status().message() << "\n";
      return 1;
    }
    const ShortlistCoverage coverage = Coverage(written, *translations);
    std::cerr << absl::StrFormat(
        "make_shortlist: %s: %d of %d sentences (%.1f %%) have every token of their translation "
        "among their candidates; %.1f candidates a sentence on average (%zu skipped)\n",
        path, coverage.covered, coverage.sentences,
        coverage.sentences == 0 ? 0.0 : 100.0 * coverage.covered / coverage.sentences,
        coverage.mean_candidates, skipped.size());
  }
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Derives a vocabulary map (vmap.txt) for a model from its own translations of a "
      "source-language text.\n"
      "Usage: make_shortlist --model=DIR --input=FILE --output=FILE [--frequent=800] "
      "[--per_source=10] [--min_count=1] [--counting=neighbours|aligned|sentence] "
      "[--compute_type=float32] [--beam_size=4] [--num_hypotheses=1] [--threads=2] "
      "[--evaluate=FILE]");
  absl::ParseCommandLine(argc, argv);
  return mtserve::Run();
}
