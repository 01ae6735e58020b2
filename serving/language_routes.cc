#include "serving/language_routes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "text/language_detector.h"

namespace mtserve {

LanguageRoutes::LanguageRoutes(std::vector<Pair> pairs) : pairs_(std::move(pairs)) {
  for (Pair& pair : pairs_) {
    pair.source = LanguageCode(pair.source);
    pair.target = LanguageCode(pair.target);
  }
}

std::vector<std::string> LanguageRoutes::SourcesInto(absl::string_view target) const {
  const std::string code = LanguageCode(target);
  std::vector<std::string> sources;
  for (const Pair& pair : pairs_) {
    if (pair.source.empty() || pair.target.empty()) continue;
    if (!code.empty() && pair.target != code) continue;
    if (std::find(sources.begin(), sources.end(), pair.source) == sources.end()) {
      sources.push_back(pair.source);
    }
  }
  return sources;
}

absl::StatusOr<int> LanguageRoutes::Route(absl::string_view source,
                                          absl::string_view target) const {
  const std::string from = LanguageCode(source), to = LanguageCode(target);
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (!from.empty() && pairs_[i].source == from && pairs_[i].target == to) {
      return static_cast<int>(i);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("no model here translates ", source, " into ",
                                                 target, "; the pairs served: ", Describe()));
}

std::string LanguageRoutes::Describe() const {
  std::vector<std::string> described;
  for (const Pair& pair : pairs_) {
    described.push_back(pair.source.empty() || pair.target.empty()
                            ? absl::StrCat(pair.name, " (no languages in its config)")
                            : absl::StrCat(pair.source, "->", pair.target, " (", pair.name, ")"));
  }
  return described.empty() ? "none" : absl::StrJoin(described, ", ");
}

}  // namespace mtserve
