// A terminology and a text through the keep patterns' scanners (text/keep_patterns.h) and the
// term matcher compiled for the embedded model's tokenizer (text/term_matcher.h): any bytes give
// spans within the text, in order; occurrences that do not overlap, each a glossary source, a kept
// term or a pattern's span; and Match agreeing with Find or refusing past the limit.
//
// Input: a first line of '|'-separated terms (a term starting with '=' is kept as written, any
// other is a glossary source whose target is itself upper-cased; a first byte '~' ignores case),
// then the text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "model/model_config.h"
#include "model/tokenizer.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/keep_patterns.h"
#include "text/term_matcher.h"
#include "text/terminology.h"

namespace {

using mtserve::KeepPattern;
using mtserve::Segment;

const mtserve::Tokenizer& EmbeddedTokenizer() {
  static const mtserve::Tokenizer* const tokenizer = [] {
    absl::StatusOr<mtserve::ModelConfig> config =
        mtserve::LoadModelConfig(MTSERVE_DEFAULT_MODEL_DIR);
    FUZZ_CHECK(config.ok());
    absl::StatusOr<std::unique_ptr<mtserve::Tokenizer>> loaded =
        mtserve::Tokenizer::Load(MTSERVE_DEFAULT_MODEL_DIR, *config);
    FUZZ_CHECK(loaded.ok());
    return loaded->release();
  }();
  return *tokenizer;
}

constexpr KeepPattern kAll[] = {KeepPattern::kUrls, KeepPattern::kEmails,
                                KeepPattern::kNumbersWithUnits, KeepPattern::kPlaceholders};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  absl::string_view header = newline == absl::string_view::npos ? "" : input.substr(0, newline);
  const absl::string_view text =
      newline == absl::string_view::npos ? input : input.substr(newline + 1);

  // The patterns alone: spans within the text, non-empty, sorted by start.
  const std::vector<mtserve::PatternSpan> patterns =
      mtserve::FindKeepPatterns(text, {0, text.size()}, kAll);
  for (size_t i = 0; i < patterns.size(); ++i) {
    FUZZ_CHECK(patterns[i].range.begin < patterns[i].range.end);
    FUZZ_CHECK(patterns[i].range.end <= text.size());
    if (i > 0) FUZZ_CHECK(patterns[i - 1].range.begin <= patterns[i].range.begin);
  }

  mtserve::Terminology terminology;
  terminology.keep_patterns.assign(std::begin(kAll), std::end(kAll));
  if (!header.empty() && header[0] == '~') {
    terminology.ignore_case = true;
    header.remove_prefix(1);
  }
  for (absl::string_view term : absl::StrSplit(header, '|', absl::SkipEmpty())) {
    if (term[0] == '=') {
      terminology.keep.emplace_back(term.substr(1));
    } else {
      terminology.glossary.push_back({std::string(term), {absl::AsciiStrToUpper(term)}});
    }
  }
  if (!mtserve::ValidateTerminology(terminology, {}, "").ok()) return 0;
  absl::StatusOr<std::shared_ptr<const mtserve::TermMatcher>> matcher =
      mtserve::CompileTerminology(terminology, EmbeddedTokenizer(), "");
  if (!matcher.ok()) return 0;  // A form that does not read back.

  const std::vector<Segment> found = (*matcher)->Find(text, {0, text.size()});
  for (size_t i = 0; i < found.size(); ++i) {
    FUZZ_CHECK(found[i].begin < found[i].end && found[i].end <= text.size());
    if (i > 0) FUZZ_CHECK(found[i - 1].end <= found[i].begin);
  }
  const absl::StatusOr<std::shared_ptr<const mtserve::SentenceTerms>> terms =
      (*matcher)->Match(text, {0, text.size()});
  if (found.size() > static_cast<size_t>(mtserve::kMaxTermConstraints)) {
    FUZZ_CHECK(!terms.ok());
    return 0;
  }
  FUZZ_CHECK(terms.ok());
  if (found.empty()) {
    FUZZ_CHECK(*terms == nullptr);
    return 0;
  }
  FUZZ_CHECK(*terms != nullptr);
  const mtserve::SentenceTerms& t = **terms;
  FUZZ_CHECK(t.terms.size() == found.size());
  FUZZ_CHECK(t.constraints.terms.size() == found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    FUZZ_CHECK(t.terms[i].source.begin == found[i].begin);
    FUZZ_CHECK(t.terms[i].source.end == found[i].end);
    FUZZ_CHECK(t.terms[i].forms.size() == t.constraints.terms[i].forms.size());
    FUZZ_CHECK(!t.terms[i].forms.empty());
    for (const std::vector<int>& form : t.constraints.terms[i].forms) FUZZ_CHECK(!form.empty());
    // A kept span's form is its text.
    if (t.terms[i].kept) {
      FUZZ_CHECK(t.terms[i].forms[0].text ==
                 text.substr(found[i].begin, found[i].end - found[i].begin));
    }
  }
  return 0;
}
