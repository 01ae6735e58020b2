// Glossary files' bytes through ParseGlossaryFile (text/glossary_file.h), what --glossary_dir's
// files and DeepL's glossary entries go through: the first byte chooses TSV or CSV, the rest is the
// file. Any bytes give entries within the limits (distinct non-empty sources, each with distinct
// non-empty targets, UTF-8, no tab or line break, no spaces around) or an InvalidArgument that
// names the file; written back as TSV, entries read back the same.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/glossary_file.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  mtserve::GlossaryFileOptions options;
  options.format =
      data[0] % 2 == 0 ? mtserve::GlossaryFileFormat::kTsv : mtserve::GlossaryFileFormat::kCsv;
  options.limits.max_entries = 50;
  options.limits.max_targets = 3;
  options.limits.max_term_bytes = 40;
  options.source_language = data[0] % 4 < 2 ? "" : "en";
  options.target_language = data[0] % 4 < 2 ? "" : "de";
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto entries = mtserve::ParseGlossaryFile(bytes, options, "the file");
  if (!entries.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(entries.status()));
    FUZZ_CHECK(absl::StartsWith(entries.status().message(), "the file"));
    return 0;
  }
  FUZZ_CHECK(entries->size() <= 50);
  std::set<std::string> sources;
  auto check_term = [](const std::string& term) {
    FUZZ_CHECK(!term.empty() && term.size() <= 40);
    FUZZ_CHECK(mtserve::IsValidUtf8(term));
    FUZZ_CHECK(term.find_first_of("\t\r\n") == std::string::npos);
    FUZZ_CHECK(term.front() != ' ' && term.back() != ' ');
  };
  for (const mtserve::GlossaryEntry& entry : *entries) {
    check_term(entry.source);
    FUZZ_CHECK(sources.insert(entry.source).second);
    FUZZ_CHECK(!entry.targets.empty() && entry.targets.size() <= 3);
    std::set<std::string> targets;
    for (const std::string& target : entry.targets) {
      check_term(target);
      FUZZ_CHECK(targets.insert(target).second);
    }
  }
  mtserve::GlossaryFileOptions tsv = options;
  tsv.format = mtserve::GlossaryFileFormat::kTsv;
  tsv.limits.max_bytes = 1 << 30;
  const auto again =
      mtserve::ParseGlossaryFile(mtserve::WriteGlossaryTsv(*entries), tsv, "the file");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->size() == entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    FUZZ_CHECK((*again)[i].source == (*entries)[i].source);
    FUZZ_CHECK((*again)[i].targets == (*entries)[i].targets);
  }
  return 0;
}
