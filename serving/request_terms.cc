#include "serving/request_terms.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace mtserve {

absl::StatusOr<Terminology> RequestTerminology(
    const TranslationRequest& request, const TerminologyLimits& limits,
    const Glossaries* glossaries, const std::vector<std::pair<std::string, std::string>>& pairs) {
  const RequestedOptions& options = request.options;
  MT_RETURN_IF_ERROR(ValidateTerminology(options.terms, limits, request.terms_field));
  Terminology terms = options.terms;
  if (options.glossary_id.empty()) return terms;
  const std::string field = absl::StrCat(request.terms_field, "glossary_id");
  if (glossaries == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(field, " \"", options.glossary_id, "\" names no glossary of this server"));
  }
  absl::StatusOr<Glossary> glossary = glossaries->Get(request.api_key, options.glossary_id);
  if (absl::IsNotFound(glossary.status())) {
    return absl::NotFoundError(absl::StrCat(field, " \"", options.glossary_id,
                                            "\" names no glossary of this caller"));
  }
  if (!glossary.ok()) {
    return absl::Status(glossary.status().code(),
                        absl::StrCat(field, ": ", glossary.status().message()));
  }
  for (const auto& [source, target] : pairs) {
    if (source != glossary->info.source_language || target != glossary->info.target_language) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " \"", options.glossary_id, "\" is a glossary from ",
                       glossary->info.source_language, " into ", glossary->info.target_language,
                       "; the request translates from ", source, " into ", target));
    }
  }
  // Sources compared as the matcher compares them (SourceKey: case-folded with
  // glossary_ignore_case): the request's own entry wins over the glossary's; two of the
  // glossary's that are one source ignoring case contradict each other, as a request's would.
  std::set<std::string> listed;
  for (const GlossaryEntry& entry : terms.glossary) {
    listed.insert(SourceKey(entry.source, terms.ignore_case));
  }
  std::map<std::string, std::string> stored;  // Key → the glossary's source.
  for (GlossaryEntry& entry : glossary->entries) {
    std::string key = SourceKey(entry.source, terms.ignore_case);
    if (listed.count(key) != 0) continue;
    auto [it, added] = stored.emplace(std::move(key), entry.source);
    if (!added) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " \"", options.glossary_id, "\": its sources \"", it->second,
                       "\" and \"", entry.source, "\" differ only in case; ", request.terms_field,
                       "glossary_ignore_case matches them alike, so they cannot both be used"));
    }
    terms.glossary.push_back(std::move(entry));
  }
  return terms;
}

}  // namespace mtserve
