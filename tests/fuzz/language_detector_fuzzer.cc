// Any bytes through language detection (text/language_detector.h), as /detect and `auto` read a
// client's text: a ranking of at most the asked number of the model's languages, best first,
// with probabilities from 0 to 1 that sum to at most 1; among candidates, only candidates.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/language_detector.h"

namespace {

void CheckRanking(const std::vector<mtserve::LanguageGuess>& ranking, size_t max_results) {
  FUZZ_CHECK(ranking.size() <= max_results);
  double total = 0;
  for (size_t i = 0; i < ranking.size(); ++i) {
    FUZZ_CHECK(ranking[i].probability >= 0 && ranking[i].probability <= 1 + 1e-6);
    if (i > 0) FUZZ_CHECK(ranking[i].probability <= ranking[i - 1].probability);
    total += ranking[i].probability;
  }
  FUZZ_CHECK(total <= 1 + 1e-4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mtserve::LanguageDetector* const detector =
      mtserve::LanguageDetector::Load(MTSERVE_DEFAULT_LANGID_MODEL).value().release();
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<mtserve::LanguageGuess> all = detector->Detect(text, {}, 176);
  CheckRanking(all, 176);
  const std::vector<std::string> candidates = {"en", "de", "fr"};
  const std::vector<mtserve::LanguageGuess> among = detector->Detect(text, candidates, 5);
  CheckRanking(among, 3);
  // A text has a language among the candidates exactly when it has one at all.
  FUZZ_CHECK(among.empty() == all.empty());
  for (const mtserve::LanguageGuess& guess : among) {
    FUZZ_CHECK(guess.language == "en" || guess.language == "de" || guess.language == "fr");
  }
  return 0;
}
