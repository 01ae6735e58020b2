#include "text/language_detector.h"

#include <fasttext/fasttext.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mtserve {
namespace {

constexpr absl::string_view kLabelPrefix = "__label__";

// Scripts that only the languages listed write (of those the model knows); the others (Latin,
// Cyrillic, Arabic, Devanagari, ...) are written by many and leave the choice to the model.
const std::map<UScriptCode, std::vector<std::string>>& LanguagesOfScript() {
  static const auto* const table = new std::map<UScriptCode, std::vector<std::string>>{
      {USCRIPT_HANGUL, {"ko"}},
      {USCRIPT_HIRAGANA, {"ja"}},
      {USCRIPT_KATAKANA, {"ja"}},
      {USCRIPT_HAN, {"zh", "yue", "wuu"}},  // Unless kana are there too (Japanese).
      {USCRIPT_THAI, {"th"}},
      {USCRIPT_GREEK, {"el"}},
      {USCRIPT_GEORGIAN, {"ka", "xmf"}},
      {USCRIPT_ARMENIAN, {"hy"}},
      {USCRIPT_HEBREW, {"he", "yi"}},
      {USCRIPT_KHMER, {"km"}},
      {USCRIPT_LAO, {"lo"}},
      {USCRIPT_MYANMAR, {"my"}},
      {USCRIPT_SINHALA, {"si"}},
      {USCRIPT_TAMIL, {"ta"}},
      {USCRIPT_TELUGU, {"te"}},
      {USCRIPT_KANNADA, {"kn"}},
      {USCRIPT_MALAYALAM, {"ml"}},
      {USCRIPT_GUJARATI, {"gu"}},
      {USCRIPT_GURMUKHI, {"pa"}},
      {USCRIPT_ORIYA, {"or"}},
      {USCRIPT_TIBETAN, {"bo"}},
      {USCRIPT_BENGALI, {"bn", "as", "bpy"}},
      {USCRIPT_ETHIOPIC, {"am"}},
      {USCRIPT_THAANA, {"dv"}},
  };
  return *table;
}

// A word that is an address, not language: a URL or an e-mail address.
bool IsAddress(absl::string_view word) {
  return absl::StrContains(word, "://") || absl::StartsWith(word, "www.") ||
         absl::StrContains(word, "@");
}

// What of `text` the model reads: its first kMaxDetectedBytes (cut at a character), addresses
// left out, on one line (fastText reads one line); and the letters of each script in it.
struct Prepared {
  std::string line;
  absl::flat_hash_map<UScriptCode, int> letters;
  int total_letters = 0;
};

Prepared Prepare(absl::string_view text) {
  if (text.size() > LanguageDetector::kMaxDetectedBytes) {
    size_t end = LanguageDetector::kMaxDetectedBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
  }
  Prepared prepared;
  for (absl::string_view word :
       absl::StrSplit(text, absl::ByAnyChar(" \t\r\n\f\v"), absl::SkipEmpty())) {
    if (IsAddress(word)) continue;
    if (!prepared.line.empty()) prepared.line += ' ';
    prepared.line.append(word.data(), word.size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(word.data());
    const int32_t length = static_cast<int32_t>(word.size());
    for (int32_t i = 0; i < length;) {
      UChar32 c;
      U8_NEXT(bytes, i, length, c);
      if (c < 0 || !u_isalpha(c)) continue;
      UErrorCode error = U_ZERO_ERROR;
      const UScriptCode script = uscript_getScript(c, &error);
      if (U_FAILURE(error) || script == USCRIPT_COMMON || script == USCRIPT_INHERITED) continue;
      ++prepared.letters[script];
      ++prepared.total_letters;
    }
  }
  return prepared;
}

// The languages the scripts of `prepared` allow; empty: any.
absl::flat_hash_set<std::string> AllowedByScripts(const Prepared& prepared) {
  auto count = [&](UScriptCode script) {
    auto it = prepared.letters.find(script);
    return it == prepared.letters.end() ? 0 : it->second;
  };
  const int kana = count(USCRIPT_HIRAGANA) + count(USCRIPT_KATAKANA);
  const int han = count(USCRIPT_HAN);
  // Japanese: kana, with or without Han, are most of the letters.
  if (kana > 0 && 2 * (kana + han) >= prepared.total_letters) return {"ja"};
  // Otherwise the script of most letters, if it is one that few languages write and it is
  // at least half of the letters.
  UScriptCode top = USCRIPT_INVALID_CODE;
  int top_count = 0;
  for (const auto& [script, n] : prepared.letters) {
    if (n > top_count || (n == top_count && script < top)) top = script, top_count = n;
  }
  if (2 * top_count < prepared.total_letters) return {};
  auto it = LanguagesOfScript().find(top);
  if (it == LanguagesOfScript().end()) return {};
  return absl::flat_hash_set<std::string>(it->second.begin(), it->second.end());
}

}  // namespace

std::string LanguageCode(absl::string_view tag) {
  const size_t end = tag.find_first_of("_-");
  return absl::AsciiStrToLower(tag.substr(0, end));
}

absl::StatusOr<std::unique_ptr<LanguageDetector>> LanguageDetector::Load(const std::string& path) {
  std::unique_ptr<LanguageDetector> detector(new LanguageDetector());
  detector->model_ = std::make_unique<fasttext::FastText>();
  // fastText reports a file it cannot read by throwing; nothing else of it throws here.
  try {
    detector->model_->loadModel(path);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a fastText language identification model: ", e.what()));
  }
  const std::shared_ptr<const fasttext::Dictionary> dictionary = detector->model_->getDictionary();
  for (int32_t i = 0; i < dictionary->nlabels(); ++i) {
    const std::string label = dictionary->getLabel(i);
    if (!absl::StartsWith(label, kLabelPrefix)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a fastText language identification model: its label ", label,
                       " does not start with ", kLabelPrefix));
    }
    detector->languages_.push_back(label.substr(kLabelPrefix.size()));
  }
  if (detector->languages_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a fastText language identification model: it has no labels"));
  }
  return detector;
}

LanguageDetector::~LanguageDetector() = default;

std::vector<LanguageGuess> LanguageDetector::Detect(absl::string_view text,
                                                    absl::Span<const std::string> candidates,
                                                    int max_results) const {
  const Prepared prepared = Prepare(text);
  if (prepared.total_letters == 0) return {};
  const absl::flat_hash_set<std::string> allowed = AllowedByScripts(prepared);

  // Every language's probability given the words, those the scripts rule out left out and the
  // rest renormalised.
  std::istringstream line(prepared.line + "\n");
  std::vector<std::pair<fasttext::real, std::string>> predictions;
  model_->predictLine(line, predictions, static_cast<int32_t>(languages_.size()), 0.0);
  std::vector<LanguageGuess> ranking;
  double total = 0;
  for (const auto& [probability, label] : predictions) {
    std::string language = label.substr(kLabelPrefix.size());
    if (!allowed.empty() && !allowed.contains(language)) continue;
    total += probability;
    ranking.push_back({std::move(language), probability});
  }
  // The scripts allow only languages the model gave nothing: the scripts decide alone.
  if (ranking.empty() || total <= 0) {
    ranking.clear();
    for (const std::string& language : allowed) {
      ranking.push_back({language, 1.0 / static_cast<double>(allowed.size())});
    }
  } else {
    for (LanguageGuess& guess : ranking) guess.probability /= total;
  }

  if (!candidates.empty()) {
    absl::flat_hash_map<std::string, double> by_language;
    for (const LanguageGuess& guess : ranking) by_language[guess.language] = guess.probability;
    std::vector<LanguageGuess> restricted;
    absl::flat_hash_set<std::string> seen;
    for (const std::string& candidate : candidates) {
      std::string language = LanguageCode(candidate);
      if (!seen.insert(language).second) continue;
      auto it = by_language.find(language);
      restricted.push_back({std::move(language), it == by_language.end() ? 0.0 : it->second});
    }
    ranking = std::move(restricted);
  }
  std::stable_sort(
      ranking.begin(), ranking.end(),
      [](const LanguageGuess& a, const LanguageGuess& b) { return a.probability > b.probability; });
  if (static_cast<int>(ranking.size()) > max_results) ranking.resize(std::max(0, max_results));
  return ranking;
}

}  // namespace mtserve
