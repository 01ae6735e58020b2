// The read-only glossary files of --glossary_dir (glossary_files.h).
#include "serving/glossary_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/excerpt.h"
#include "text/terminology.h"

namespace mtserve {
namespace {

bool IsLanguageTag(absl::string_view tag) {
  if (tag.empty() || tag.size() > 35) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

absl::StatusOr<std::optional<GlossaryFileName>> ParseGlossaryFileName(absl::string_view file_name) {
  if (file_name.empty() || file_name.front() == '.') return std::nullopt;
  GlossaryFileName parsed;
  absl::string_view stem = file_name;
  if (absl::ConsumeSuffix(&stem, ".tsv")) {
    parsed.format = GlossaryFileFormat::kTsv;
  } else if (absl::ConsumeSuffix(&stem, ".csv")) {
    parsed.format = GlossaryFileFormat::kCsv;
  } else {
    return std::nullopt;
  }
  const size_t dot = stem.rfind('.');
  const absl::string_view pair = dot == absl::string_view::npos ? "" : stem.substr(dot + 1);
  const size_t dash = pair.find('-');
  const absl::string_view source = pair.substr(0, dash);
  const absl::string_view target =
      dash == absl::string_view::npos ? absl::string_view() : pair.substr(dash + 1);
  if (dot == absl::string_view::npos || dot == 0 || !IsLanguageTag(source) ||
      !IsLanguageTag(target)) {
    return absl::InvalidArgumentError(
        absl::StrCat("glossary file ", Excerpt(file_name),
                     ": its name is not NAME.SRC-TGT.tsv or NAME.SRC-TGT.csv (e.g. "
                     "products.en-de.tsv: SRC and TGT language codes)"));
  }
  parsed.id = std::string(stem);
  parsed.name = std::string(stem.substr(0, dot));
  parsed.source_language = std::string(source);
  parsed.target_language = std::string(target);
  return parsed;
}

absl::StatusOr<std::vector<std::string>> ListGlossaryFiles(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  auto unlisted = [&] {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot list the glossary directory ", dir, ": ", error.message()));
  };
  if (error) return unlisted();
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    absl::StatusOr<std::optional<GlossaryFileName>> parsed = ParseGlossaryFileName(name);
    if (!parsed.ok()) return parsed.status();
    if (parsed->has_value()) paths.push_back(it->path().string());
  }
  if (error) return unlisted();
  std::sort(paths.begin(), paths.end());
  return paths;
}

absl::StatusOr<Glossary> ReadGlossaryFile(const std::string& path, absl::string_view bytes,
                                          absl::Time modified, const GlossaryLimits& limits) {
  absl::StatusOr<std::optional<GlossaryFileName>> name =
      ParseGlossaryFileName(std::filesystem::path(path).filename().string());
  if (!name.ok()) return name.status();
  if (!name->has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a .tsv or .csv glossary file"));
  }
  GlossaryFileOptions options;
  options.format = (*name)->format;
  options.limits = GlossaryFileLimitsFor(limits.max_entries, limits.terms);
  options.source_language = (*name)->source_language;
  options.target_language = (*name)->target_language;
  absl::StatusOr<std::vector<GlossaryEntry>> entries = ParseGlossaryFile(bytes, options, path);
  if (!entries.ok()) return entries.status();
  if (entries->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no entries; a glossary has one at least"));
  }
  Terminology terminology;
  terminology.glossary = *entries;
  TerminologyLimits terms = limits.terms;
  terms.max_entries = limits.max_entries;
  if (absl::Status status = ValidateTerminology(terminology, terms, ""); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", status.message()));
  }
  Glossary glossary;
  glossary.info.id = (*name)->id;
  glossary.info.name = (*name)->name;
  glossary.info.source_language = (*name)->source_language;
  glossary.info.target_language = (*name)->target_language;
  glossary.info.entry_count = static_cast<int64_t>(entries->size());
  glossary.info.created = modified;
  glossary.info.read_only = true;
  glossary.entries = *std::move(entries);
  return glossary;
}

}  // namespace mtserve
