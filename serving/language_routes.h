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

  // The pairs served, for messages: "de->en (de-en), fr->en (fr-en)".
  std::string Describe() const;

 private:
  std::vector<Pair> pairs_;  // Languages as LanguageCode makes them.
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_LANGUAGE_ROUTES_H_
