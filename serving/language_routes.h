// Which served model translates a text, by languages: the models' language pairs (from each
// checkpoint's tokenizer_config.json), the source languages a detector may choose among for a
// target ("auto" only ever chooses a language some model reads into that target), and the model
// of a pair, or an error naming the languages and the pairs served. Plain data: no detector, no
// threads (the core detects, then routes).
#ifndef MTSERVE_SERVING_LANGUAGE_ROUTES_H_
#define MTSERVE_SERVING_LANGUAGE_ROUTES_H_

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

  // `pairs` in the served order: Route answers an index into it.
  explicit LanguageRoutes(std::vector<Pair> pairs);

  // The languages models read into `target` (every language a model reads, for an empty
  // target), distinct, in the served order, as LanguageCode makes them.
  std::vector<std::string> SourcesInto(absl::string_view target) const;

  // The first model that reads `source` into `target` (tags compared as LanguageCode makes
  // them: "pt_BR" is "pt"): InvalidArgument naming both and the pairs served when none does.
  absl::StatusOr<int> Route(absl::string_view source, absl::string_view target) const;

  // Where source "auto" sends a text for `target`.
  struct Detected {
    int model = -1;         // Index as Route's; -1 when no model reads the text's language.
    std::string language;   // The language chosen ("und": none, the text has no letters).
    double confidence = 0;  // The detector's probability of `language`, in percent.
    absl::Status status;    // Why `model` is -1.
  };

  // The text's language among those read into `target` (SourcesInto), by `detector`'s ranking
  // over every language it knows: its best language when a model reads it into `target`; else,
  // when that best language is at least kOtherLanguage likely, an InvalidArgument naming it
  // (a Czech sentence on a server without Czech is not forced into French); else the best of the
  // served languages, with its (low) confidence. A text without letters goes to the first model
  // into `target`, as "und" with confidence 0. With no `detector`, the only language read into
  // `target` (confidence 0); the caller refuses "auto" when there are several. `target` must have
  // a source (SourcesInto(target) not empty).
  Detected RouteDetected(absl::string_view text, absl::string_view target,
                         const LanguageDetector* detector) const;

  // How likely a language no model reads into the target must be for "auto" to refuse a text
  // rather than choose the best served language.
  static constexpr double kOtherLanguage = 0.5;

  // The pairs served, for messages: "de->en (de-en), fr->en (fr-en)".
  std::string Describe() const;

 private:
  std::vector<Pair> pairs_;  // Languages as LanguageCode makes them.
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_LANGUAGE_ROUTES_H_
