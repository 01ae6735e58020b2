#include "serving/language_routes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "text/language_detector.h"

namespace mtserve {

LanguageRoutes::LanguageRoutes(std::vector<Pair> pairs, absl::string_view pivot)
    : pairs_(std::move(pairs)), pivot_(LanguageCode(pivot)) {
  for (Pair& pair : pairs_) {
    pair.source = LanguageCode(pair.source);
    pair.target = LanguageCode(pair.target);
  }
}

std::vector<int> LanguageRoutes::Chain(const std::string& from, const std::string& to) const {
  if (from.empty() || to.empty() || from == to) return {};
  // Breadth first over languages from `from`: each language reached keeps the model that reached
  // it first. The models into the pivot language are tried first at each language, so that of
  // the shortest chains one through the pivot is found first; the others in the served order.
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < pairs_.size(); ++i) {
      if ((pairs_[i].target == pivot_) == (pass == 0)) order.push_back(static_cast<int>(i));
    }
  }
  std::map<std::string, int> reached_by = {{from, -1}};
  std::vector<std::string> frontier = {from};
  while (!frontier.empty() && !reached_by.contains(to)) {
    std::vector<std::string> next;
    for (const std::string& language : frontier) {
      for (const int i : order) {
        const Pair& pair = pairs_[i];
        if (pair.source != language || pair.target.empty()) continue;
        // The direct model of a pair is the first in the served order, not the pivot's.
        if (pair.target == to && language == from) {
          for (size_t d = 0; d < pairs_.size(); ++d) {
            if (pairs_[d].source == from && pairs_[d].target == to) return {static_cast<int>(d)};
          }
        }
        if (reached_by.emplace(pair.target, i).second) next.push_back(pair.target);
      }
    }
    frontier = std::move(next);
  }
  if (!reached_by.contains(to)) return {};
  std::vector<int> chain;
  for (std::string language = to; language != from; language = pairs_[chain.back()].source) {
    chain.push_back(reached_by.at(language));
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::vector<std::string> LanguageRoutes::SourcesInto(absl::string_view target) const {
  const std::string code = LanguageCode(target);
  std::vector<std::string> sources;
  auto add = [&](const std::string& language) {
    if (std::find(sources.begin(), sources.end(), language) == sources.end()) {
      sources.push_back(language);
    }
  };
  for (const Pair& pair : pairs_) {
    if (pair.source.empty() || pair.target.empty()) continue;
    if (!code.empty() && pair.target != code) continue;
    if (pair.source != code) add(pair.source);
  }
  if (code.empty()) return sources;
  // Then the languages only a chain reads into `target`, shortest first.
  std::vector<std::pair<size_t, std::string>> chained;
  for (const Pair& pair : pairs_) {
    if (pair.source.empty() || pair.source == code ||
        std::find(sources.begin(), sources.end(), pair.source) != sources.end()) {
      continue;
    }
    const std::vector<int> chain = Chain(pair.source, code);
    if (!chain.empty()) chained.push_back({chain.size(), pair.source});
  }
  std::stable_sort(chained.begin(), chained.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [length, language] : chained) add(language);
  return sources;
}

std::map<std::string, std::vector<std::string>> LanguageRoutes::Targets() const {
  std::map<std::string, std::vector<std::string>> targets;
  for (const Pair& pair : pairs_) {
    if (pair.source.empty() || pair.target.empty()) continue;
    targets[pair.source];
    targets[pair.target];
  }
  for (auto& [source, into] : targets) {
    for (const auto& [target, unused] : targets) {
      if (!Chain(source, target).empty()) into.push_back(target);
    }
  }
  return targets;
}

absl::StatusOr<std::vector<int>> LanguageRoutes::Route(absl::string_view source,
                                                       absl::string_view target) const {
  std::vector<int> chain = Chain(LanguageCode(source), LanguageCode(target));
  if (!chain.empty()) return chain;
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
    detected.chain = *Route(language, target);  // A candidate: it has a route.
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

std::string LanguageTag(absl::string_view language) {
  std::string tag(language);
  std::replace(tag.begin(), tag.end(), '_', '-');
  return tag;
}

}  // namespace mtserve
