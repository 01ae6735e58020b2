// The one check of a terminology's bounds and form, and the one comparison of its sources
// (terminology.h).
#include "text/terminology.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "text/case_fold.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

// `term`, named `name` ("options.glossary[2].source"), as a term may be.
absl::Status CheckTerm(absl::string_view term, const std::string& name,
                       const TerminologyLimits& limits) {
  if (term.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": empty"));
  if (term.size() > static_cast<size_t>(limits.max_term_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", term.size(),
                                                   " bytes, over the limit of ",
                                                   limits.max_term_bytes, " bytes a term"));
  }
  if (!IsValidUtf8(term)) return absl::InvalidArgumentError(absl::StrCat(name, ": not UTF-8"));
  if (const std::optional<uint32_t> control = FirstControlCharacter(term); control.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: holds a control character (U+%04X)", name, *control));
  }
  if (term.find_first_of("<>") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": holds markup (< or >), which a term cannot"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string SourceKey(absl::string_view source, bool ignore_case) {
  return ignore_case ? FoldCase(source).text : std::string(source);
}

absl::Status ValidateTerminology(const Terminology& terminology, const TerminologyLimits& limits,
                                 absl::string_view field) {
  const size_t entries = terminology.glossary.size() + terminology.keep.size();
  if (entries > static_cast<size_t>(limits.max_entries)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, "glossary and ", field, "keep: ", terminology.glossary.size(),
                     " entries and ", terminology.keep.size(), " kept terms, over the limit of ",
                     limits.max_entries, " together"));
  }
  // Each source by its SourceKey, as the matcher tells sources apart.
  absl::flat_hash_map<std::string, size_t> sources;
  for (size_t i = 0; i < terminology.glossary.size(); ++i) {
    const GlossaryEntry& entry = terminology.glossary[i];
    const std::string name = absl::StrCat(field, "glossary[", i, "]");
    if (absl::Status status = CheckTerm(entry.source, absl::StrCat(name, ".source"), limits);
        !status.ok()) {
      return status;
    }
    if (entry.targets.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name,
                                                     ".targets: empty; an entry has one "
                                                     "target at least"));
    }
    if (entry.targets.size() > static_cast<size_t>(limits.max_targets)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ".targets: ", entry.targets.size(),
                                                     " forms, over the limit of ",
                                                     limits.max_targets, " an entry"));
    }
    for (size_t t = 0; t < entry.targets.size(); ++t) {
      if (absl::Status status =
              CheckTerm(entry.targets[t], absl::StrCat(name, ".targets[", t, "]"), limits);
          !status.ok()) {
        return status;
      }
    }
    // The same source again is merged by its users; another that folds alike contradicts it.
    auto [it, added] = sources.emplace(SourceKey(entry.source, terminology.ignore_case), i);
    if (!added && terminology.glossary[it->second].source != entry.source) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ".source: \"", entry.source, "\" is ", field, "glossary[", it->second,
                       "]'s source \"", terminology.glossary[it->second].source,
                       "\" in another case; matching ignores case, so they cannot differ"));
    }
  }
  for (size_t i = 0; i < terminology.keep.size(); ++i) {
    const std::string name = absl::StrCat(field, "keep[", i, "]");
    if (absl::Status status = CheckTerm(terminology.keep[i], name, limits); !status.ok()) {
      return status;
    }
    if (auto it = sources.find(SourceKey(terminology.keep[i], terminology.ignore_case));
        it != sources.end()) {
      const std::string& source = terminology.glossary[it->second].source;
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": \"", terminology.keep[i], "\" is also ", field, "glossary[", it->second,
          "]'s source",
          source == terminology.keep[i]
              ? ""
              : absl::StrCat(" \"", source, "\" in another case; matching ignores case")));
    }
  }
  for (size_t i = 0; i < terminology.keep_patterns.size(); ++i) {
    const int value = static_cast<int>(terminology.keep_patterns[i]);
    if (value < static_cast<int>(KeepPattern::kUrls) ||
        value > static_cast<int>(KeepPattern::kPlaceholders)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "keep_patterns[", i, "] is ", value,
                       "; it is one of URLS (1), EMAILS (2), NUMBERS_WITH_UNITS (3) and "
                       "PLACEHOLDERS (4)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mtserve
