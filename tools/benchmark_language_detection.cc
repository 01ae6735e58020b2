// Measures language detection (text/language_detector.h): for each FILE.LANG given, the share of
// its lines detected as LANG, among every language the model knows and among --served, for the
// whole lines and for texts of one, two and three consecutive words drawn from them (a fixed
// seed), and the time per text. Prints a Markdown table.
//
//   benchmark_language_detection [--model=lid.176.ftz] [--served=en,de,fr]
//       tests/data/multi30k/test_2016_flickr.{en,de,fr,cs}
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
#include "text/language_detector.h"

ABSL_FLAG(std::string, model, MTSERVE_DEFAULT_LANGID_MODEL,
          "fastText language identification model");
ABSL_FLAG(std::vector<std::string>, served, std::vector<std::string>({"en", "de", "fr"}),
          "The languages of the restricted ranking (a server's source languages)");

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
  for (const std::string& file : files) {
    const std::string language = file.substr(file.rfind('.') + 1);
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.empty()) {
      std::fprintf(stderr, "%s: no lines\n", file.c_str());
      return 1;
    }
    const bool is_served = std::find(served.begin(), served.end(), language) != served.end();
    for (int words : {0, 1, 2, 3}) {
      const std::vector<std::string> texts = Texts(lines, words, random);
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
      std::printf("| %s | %d | %s | %.1f %% | %s | %.1f |\n",
                  file.substr(file.rfind('/') + 1).c_str(), row.texts,
                  words == 0 ? "whole line" : std::to_string(words).c_str(), share,
                  is_served ? absl::StrFormat("%.1f %%", share_served).c_str() : "(not served)",
                  1e6 * row.seconds / row.texts);
    }
  }
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "benchmark_language_detection [--model=FILE] [--served=en,de,fr] FILE.LANG...");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", absl::ProgramUsageMessage().data());
    return 2;
  }
  return mtserve::Run(std::vector<std::string>(args.begin() + 1, args.end()));
}
