// Which language a text is in: fastText's language identification model (lid.176.ftz, 176
// languages; models/langid/README.md) over the text's words, after the text's scripts (ICU) have
// ruled out what they can: letters of one script that only one language writes decide alone
// (Hangul: Korean; Thai; Greek; ...), kana make Han Japanese, and Han without kana or Hangul is
// never Korean or Japanese.
//
// A detection is a ranking, best first, of languages with a probability each: the model's
// probability of the language given the text's words, renormalised over the languages the
// scripts allow. It is the ranking over every language the model knows, or over a caller's
// candidates (the languages it can serve): candidates are never renormalised among themselves, so
// a Czech text ranked over English, German and French says so with three small probabilities. A
// text with no letters (empty, digits, punctuation, a URL, an e-mail address) has no language:
// its ranking is empty.
//
// Thread-safe: one detector serves every request.
#ifndef MTSERVE_TEXT_LANGUAGE_DETECTOR_H_
#define MTSERVE_TEXT_LANGUAGE_DETECTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fasttext {
class FastText;
}

namespace mtserve {

struct LanguageGuess {
  std::string language;    // The model's code: ISO 639-1 where there is one ("en"), else 639-3.
  double probability = 0;  // 0 to 1.
};

class LanguageDetector {
 public:
  // Reads a fastText language identification model (labels "__label__CODE"): InvalidArgument
  // naming `path` if it is not one.
  static absl::StatusOr<std::unique_ptr<LanguageDetector>> Load(const std::string& path);
  ~LanguageDetector();

  // The languages of `text`, best first, at most `max_results` of them: among `candidates` (codes
  // as LanguageCode makes them) when there are some, else among all the model knows. Empty when
  // the text has no letters. Only the first kMaxDetectedBytes of a longer text are read.
  std::vector<LanguageGuess> Detect(absl::string_view text,
                                    absl::Span<const std::string> candidates = {},
                                    int max_results = 5) const;

  // Every language the model knows.
  const std::vector<std::string>& languages() const { return languages_; }

  static constexpr size_t kMaxDetectedBytes = 4096;

 private:
  LanguageDetector() = default;

  std::unique_ptr<fasttext::FastText> model_;
  std::vector<std::string> languages_;
};

// A language tag as the detector names languages: lower case, its first subtag ("pt_BR",
// "pt-BR" and "PT" are "pt").
std::string LanguageCode(absl::string_view tag);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_LANGUAGE_DETECTOR_H_
