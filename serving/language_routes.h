// Which served models translate a text, by languages: the models' language pairs (from each
// checkpoint's tokenizer_config.json), the source languages a detector may choose among for a
// target ("auto" only ever chooses a language some chain of models reads into that target), and
// the chain of a pair: its model when one reads the source into the target, else the shortest
// chain of models through bridge languages (fr->en->de: fr-en then en-de; pivot translation), or
// an error naming the languages and the pairs served. Plain data: no detector, no threads (the
// core detects, then routes).
#ifndef MTSERVE_SERVING_LANGUAGE_ROUTES_H_
#define MTSERVE_SERVING_LANGUAGE_ROUTES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

class LanguageDetector;

class LanguageRoutes {
 public:
  struct Pair {
    std::string name;    // The model's name.
    std::string source;  // Language tags as the checkpoint gives them ("de", "pt_BR"); a model
    std::string target;  // with either empty is served by name only.
  };

  // The languages a chain prefers as its bridges when several chains are shortest (the server's
  // --pivot_language).
  static constexpr char kDefaultPivot[] = "en";

  // `pairs` in the served order: Route answers indices into it. Among the shortest chains of a
  // pair, one whose first bridge is `pivot` is chosen, else the first in the served order.
  explicit LanguageRoutes(std::vector<Pair> pairs, absl::string_view pivot = kDefaultPivot);

  // The languages some chain of models reads into `target`, distinct, other than `target`:
  // those a model reads into it first, in the served order, then those a longer chain does,
  // shortest first (every language a model reads, for an empty target), as LanguageCode makes
  // them.
  std::vector<std::string> SourcesInto(absl::string_view target) const;

  // The models that translate `source` into `target` (tags compared as LanguageCode makes them:
  // "pt_BR" is "pt"), in order, each reading the language the one before writes: the first model
  // that reads `source` into `target` alone, else the shortest chain (ties: through the pivot
  // language first). InvalidArgument naming both and the pairs served when no chain connects
  // them (or they are the same language).
  absl::StatusOr<std::vector<int>> Route(absl::string_view source, absl::string_view target) const;

  // Every language a model reads or writes, with the languages a chain translates it into
  // (sorted; empty for a language only written): LibreTranslate's /languages.
  std::map<std::string, std::vector<std::string>> Targets() const;

  // Where source "auto" sends a text for `target`.
  struct Detected {
    std::vector<int> chain;  // As Route's; empty when no chain reads the text's language.
    std::string language;    // The language chosen ("und": none, the text has no letters).
    double confidence = 0;   // The detector's probability of `language`, in percent.
    absl::Status status;     // Why `chain` is empty.
  };

  // The text's language among those read into `target` (SourcesInto), by `detector`'s ranking
  // over every language it knows: its best language when a chain reads it into `target`; else,
  // when that best language is at least kOtherLanguage likely, an InvalidArgument naming it
  // (a Czech sentence on a server without Czech is not forced into French); else the best of the
  // served languages, with its (low) confidence. A text without letters goes to the first
  // language read into `target`, as "und" with confidence 0. With no `detector`, the only language
  // read into `target` (confidence 0); the caller refuses "auto" when there are several. `target`
  // must have a source (SourcesInto(target) not empty).
  Detected RouteDetected(absl::string_view text, absl::string_view target,
                         const LanguageDetector* detector) const;

  // How likely a language no model reads into the target must be for "auto" to refuse a text
  // rather than choose the best served language.
  static constexpr double kOtherLanguage = 0.5;

  // The pairs served, for messages: "de->en (de-en), fr->en (fr-en)".
  std::string Describe() const;

 private:
  // The shortest chain from `from` into `to` (codes), empty if none.
  std::vector<int> Chain(const std::string& from, const std::string& to) const;

  std::vector<Pair> pairs_;  // Languages as LanguageCode makes them.
  std::string pivot_;
};

// A model's language as its checkpoint gives it (Pair's source or target: "de", "pt_BR") as a
// BCP 47 tag ("de", "pt-BR"): what documents' language tags say of a translation
// (SentenceRules::target_language), served and offline. Empty for an empty language.
std::string LanguageTag(absl::string_view language);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_LANGUAGE_ROUTES_H_
