// What the office formats' part tests read off a PartRuns (text/office/office_document.h): its
// runs' texts, and a stand-in translation of them.
#ifndef MTSERVE_TESTS_TEST_LIB_PART_RUNS_H_
#define MTSERVE_TESTS_TEST_LIB_PART_RUNS_H_

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "text/inline_spans.h"
#include "text/office/office_document.h"

namespace mtserve::testing {

// The runs' texts, in order.
inline std::vector<std::string> Texts(const PartRuns& part) {
  std::vector<std::string> out;
  for (const PartRuns::Run& run : part.runs()) out.push_back(run.text);
  return out;
}

// Each run upper-cased (ASCII), its inlines where they were.
inline std::vector<TranslatedRun> Upper(const PartRuns& part) {
  std::vector<TranslatedRun> out;
  for (const PartRuns::Run& run : part.runs()) {
    TranslatedRun t{absl::AsciiStrToUpper(run.text), {}};
    for (const InlineSpan& in : run.inlines) t.inlines.push_back(in.range);
    out.push_back(t);
  }
  return out;
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_PART_RUNS_H_
