// Measures language detection (text/language_detector.h): for each FILE.LANG given, the share of
// its lines detected as LANG, among every language the model knows and among --served, for the
// whole lines and for texts of one, two and three consecutive words drawn from them (a fixed
// seed), and the time per text; then where source "auto" sends the same texts into --target on a
// server of --pairs (serving/language_routes.h RouteDetected, what the server does): to the model
// of the text's language, refused (no model reads the language detected into the target), or to
// another model. Prints two Markdown tables.
//
//   benchmark_language_detection [--model=lid.176.ftz] [--served=en,de,fr] [--target=en]
//       [--pairs=en-de,de-en,fr-en] tests/data/multi30k/test_2016_flickr.{en,de,fr,cs}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "serving/language_routes.h"
#include "text/language_detector.h"

ABSL_FLAG(std::string, model, MTSERVE_DEFAULT_LANGID_MODEL,
          "fastText language identification model");
ABSL_FLAG(std::vector<std::string>, served, std::vector<std::string>({"en", "de", "fr"}),
          "The languages of the restricted ranking (a server's source languages)");

ABSL_FLAG(std::string, target, "en", "The target language source \"auto\" translates into");
ABSL_FLAG(std::vector<std::string>, pairs, std::vector<std::string>({"en-de", "de-en", "fr-en"}),
          "The served models' pairs, SOURCE-TARGET, in the served order");

namespace mtserve {
namespace {

struct Row {
  int texts = 0;
  int right = 0;
  int right_served = 0;
  double seconds = 0;
};

// `words` consecutive words of each line from a random start (every line when words is 0).
std::vector<std::string> Texts(const std::vector<std::string>& lines, int words,
                               std::mt19937& random) {
  if (words == 0) return lines;
  std::vector<std::string> texts;
  for (const std::string& line : lines) {
    std::vector<std::string> all = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (static_cast<int>(all.size()) < words) continue;
    const int start =
        std::uniform_int_distribution<int>(0, static_cast<int>(all.size()) - words)(random);
    texts.push_back(absl::StrJoin(all.begin() + start, all.begin() + start + words, " "));
  }
  return texts;
}

// The texts of each file: its language, and per word count (0: whole lines), the texts.
struct FileTexts {
  std::string name;
  std::string language;
  std::vector<std::vector<std::string>> by_words;
};

constexpr int kWordCounts[] = {0, 1, 2, 3};

std::string WordsLabel(int words) { return words == 0 ? "whole line" : std::to_string(words); }

// Where "auto" sends each text of `files` into --target over --pairs.
void PrintRouting(const LanguageDetector& detector, const std::vector<FileTexts>& files) {
  std::vector<LanguageRoutes::Pair> pairs;
  for (const std::string& pair : absl::GetFlag(FLAGS_pairs)) {
    std::vector<std::string> languages = absl::StrSplit(pair, '-');
    if (languages.size() != 2) continue;
    pairs.push_back({pair, languages[0], languages[1]});
  }
  const LanguageRoutes routes(pairs);
  const std::string target = absl::GetFlag(FLAGS_target);
  const std::vector<std::string> sources = routes.SourcesInto(target);
  if (sources.empty()) return;
  std::printf("\nSource auto into %s over %s:\n\n", target.c_str(),
              absl::StrJoin(absl::GetFlag(FLAGS_pairs), ", ").c_str());
  std::printf("| file | words | to its language's model | refused | to another model |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const FileTexts& file : files) {
    const bool served = std::find(sources.begin(), sources.end(), file.language) != sources.end();
    for (size_t w = 0; w < file.by_words.size(); ++w) {
      const std::vector<std::string>& texts = file.by_words[w];
      int right = 0, refused = 0, other = 0;
      for (const std::string& text : texts) {
        const LanguageRoutes::Detected detected = routes.RouteDetected(text, target, &detector);
        if (detected.chain.empty()) {
          ++refused;
        } else if (detected.language == file.language) {
          ++right;
        } else {
          ++other;
        }
      }
      auto share = [&](int n) { return absl::StrFormat("%.1f %%", 100.0 * n / texts.size()); };
      std::printf("| %s | %s | %s | %s | %s |\n", file.name.c_str(),
                  WordsLabel(kWordCounts[w]).c_str(),
                  served ? share(right).c_str() : "(not served)", share(refused).c_str(),
                  share(other).c_str());
    }
  }
}

int Run(const std::vector<std::string>& files) {
  absl::StatusOr<std::unique_ptr<LanguageDetector>> detector =
      LanguageDetector::Load(absl::GetFlag(FLAGS_model));
  if (!detector.ok()) {
    std::fprintf(stderr, "%s\n", detector.status().ToString().c_str());
    return 1;
  }
  const std::vector<std::string> served = absl::GetFlag(FLAGS_served);
  std::printf(
      "| file | texts | words | right, all %zu languages | right, among %s | us per text |\n",
      (*detector)->languages().size(), absl::StrJoin(served, ", ").c_str());
  std::printf("|---|---|---|---|---|---|\n");
  std::mt19937 random(2026);
  (*detector)->Detect("warm up: the first call pays for what the model loads lazily");
  std::vector<FileTexts> all_texts;
  for (const std::string& file : files) {
    FileTexts& read = all_texts.emplace_back();
    read.name = file.substr(file.rfind('/') + 1);
    read.language = file.substr(file.rfind('.') + 1);
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.empty()) {
      std::fprintf(stderr, "%s: no lines\n", file.c_str());
      return 1;
    }
    for (int words : kWordCounts) read.by_words.push_back(Texts(lines, words, random));
  }
  for (const FileTexts& file : all_texts) {
    const std::string& language = file.language;
    const bool is_served = std::find(served.begin(), served.end(), language) != served.end();
    for (size_t w = 0; w < file.by_words.size(); ++w) {
      const std::vector<std::string>& texts = file.by_words[w];
      Row row;
      const auto start = std::chrono::steady_clock::now();
      for (const std::string& text : texts) {
        const std::vector<LanguageGuess> all = (*detector)->Detect(text, {}, 1);
        row.right += !all.empty() && all[0].language == language;
      }
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (const std::string& text : texts) {
        const std::vector<LanguageGuess> among = (*detector)->Detect(text, served, 1);
        row.right_served += !among.empty() && among[0].language == language;
      }
      row.texts = static_cast<int>(texts.size());
      const double share = 100.0 * row.right / row.texts;
      const double share_served = 100.0 * row.right_served / row.texts;
      std::printf("| %s | %d | %s | %.1f %% | %s | %.1f |\n", file.name.c_str(), row.texts,
                  WordsLabel(kWordCounts[w]).c_str(), share,
                  is_served ? absl::StrFormat("%.1f %%", share_served).c_str() : "(not served)",
                  1e6 * row.seconds / row.texts);
    }
  }
  PrintRouting(**detector, all_texts);
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "benchmark_language_detection [--model=FILE] [--served=en,de,fr] [--target=en] "
      "[--pairs=en-de,de-en,fr-en] FILE.LANG...");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", absl::ProgramUsageMessage().data());
    return 2;
  }
  return mtserve::Run(std::vector<std::string>(args.begin() + 1, args.end()));
}
