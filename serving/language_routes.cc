#include "serving/language_routes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

LanguageRoutes::Detected LanguageRoutes::RouteDetected(absl::string_view text,
                                                       absl::string_view target,
                                                       const LanguageDetector* detector) const {
  const std::vector<std::string> candidates = SourcesInto(target);
  Detected detected;
  auto choose = [&](const std::string& language, double probability) {
    detected.language = language;
    detected.confidence = 100 * probability;
    detected.model = *Route(language, target);  // A candidate: it has a route.
    return detected;
  };
  if (detector == nullptr) return choose(candidates.front(), 0);
  const std::vector<LanguageGuess> best = detector->Detect(text, {}, 1);
  if (best.empty()) {
    Detected none = choose(candidates.front(), 0);
    none.language = "und";
    return none;
  }
  const LanguageGuess& first = best.front();
  if (std::find(candidates.begin(), candidates.end(), first.language) != candidates.end()) {
    return choose(first.language, first.probability);
  }
  const std::vector<LanguageGuess> served = first.probability >= kOtherLanguage
                                                ? std::vector<LanguageGuess>()
                                                : detector->Detect(text, candidates, 1);
  // Empty too when the text's script rules every served language out.
  if (served.empty()) {
    detected.language = first.language;
    detected.confidence = 100 * first.probability;
    detected.status = absl::InvalidArgumentError(absl::StrFormat(
        "detected as %s (%.0f %% sure), and no model here translates %s into %s; the pairs "
        "served: %s. Give the source language if the detection is wrong",
        first.language, detected.confidence, first.language, LanguageCode(target), Describe()));
    return detected;
  }
  return choose(served.front().language, served.front().probability);
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
