// Corpus BLEU as sacreBLEU computes it by default (13a tokenisation, 4-grams, uniform weights,
// brevity penalty, no smoothing): enough to compare translation quality in tests.
#ifndef MTSERVE_TESTS_TEST_LIB_BLEU_H_
#define MTSERVE_TESTS_TEST_LIB_BLEU_H_

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace mtserve {

// sacreBLEU's "13a" tokeniser (mteval-v13a) on plain text (no markup or entities to undo):
// punctuation and symbols split off, except periods
// and commas between digits, and dashes after digits.
inline std::vector<std::string> Tokenize13a(const std::string& text) {
  static const std::regex kSymbols(R"(([\{-\~\[-\` -\&\(-\+\:-\@\/]))");
  static const std::regex kPeriodCommaAfterNonDigit(R"(([^0-9])([\.,]))");
  static const std::regex kPeriodCommaBeforeNonDigit(R"(([\.,])([^0-9]))");
  static const std::regex kDashAfterDigit(R"(([0-9])(-))");
  std::string s = " " + text + " ";
  s = std::regex_replace(s, kSymbols, " $1 ");
  s = std::regex_replace(s, kPeriodCommaAfterNonDigit, "$1 $2 ");
  s = std::regex_replace(s, kPeriodCommaBeforeNonDigit, " $1 $2");
  s = std::regex_replace(s, kDashAfterDigit, "$1 $2 ");
  std::istringstream in(s);
  std::vector<std::string> tokens;
  for (std::string token; in >> token;) tokens.push_back(token);
  return tokens;
}

inline double CorpusBleu(const std::vector<std::string>& hypotheses,
                         const std::vector<std::string>& references) {
  double matches[4] = {0, 0, 0, 0}, totals[4] = {0, 0, 0, 0};
  double hypothesis_length = 0, reference_length = 0;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const std::vector<std::string> h = Tokenize13a(hypotheses[i]);
    const std::vector<std::string> r = Tokenize13a(references[i]);
    hypothesis_length += h.size();
    reference_length += r.size();
    for (size_t n = 1; n <= 4; ++n) {
      std::map<std::vector<std::string>, int> reference_counts;
      for (size_t j = 0; j + n <= r.size(); ++j)
        ++reference_counts[{r.begin() + j, r.begin() + j + n}];
      for (size_t j = 0; j + n <= h.size(); ++j) {
        int& available = reference_counts[{h.begin() + j, h.begin() + j + n}];
        if (available > 0) {
          --available;
          ++matches[n - 1];
        }
      }
      totals[n - 1] += h.size() >= n ? h.size() - n + 1 : 0;
    }
  }
  double log_precision = 0;
  for (int n = 0; n < 4; ++n) {
    if (matches[n] == 0) return 0;
    log_precision += std::log(matches[n] / totals[n]) / 4;
  }
  const double brevity = std::min(0.0, 1 - reference_length / hypothesis_length);
  return 100 * std::exp(log_precision + brevity);
}

}  // namespace mtserve

#endif  // MTSERVE_TESTS_TEST_LIB_BLEU_H_
