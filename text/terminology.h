// What a caller asks to be translated a fixed way: glossary entries (a source term and the target
// forms it must become) and spans kept exactly as written (terms listed, and patterns such as URLs
// and placeholders). Plain values, filled by the request parsers (serving/translation_request.h)
// and by glossary files (text/glossary_file.h); text/term_matcher.h finds them in sentences and
// turns them into the decoder's constraints (model/decoding/term_constraints.h).
#ifndef MTSERVE_TEXT_TERMINOLOGY_H_
#define MTSERVE_TEXT_TERMINOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mtserve {

struct GlossaryEntry {
  std::string source;                // A word or phrase of the source language.
  std::vector<std::string> targets;  // The forms it may become, as written; at least one.
};

// Spans of the source kept as written, found by what they look like.
enum class KeepPattern : int {
  kUrls = 1,              // http(s)://..., www.example.com/...
  kEmails = 2,            // name@example.com
  kNumbersWithUnits = 3,  // 25 kg, 3.5 GHz, 100 %, 12:30
  kPlaceholders = 4,      // {name}, {{var}}, %s, %1$d, <0>...</0>, $VAR
};

struct Terminology {
  std::vector<GlossaryEntry> glossary;
  // Glossary sources match whole words, with their case as written unless this is set.
  bool ignore_case = false;
  std::vector<std::string> keep;  // Terms kept as written wherever they occur (whole words).
  std::vector<KeepPattern> keep_patterns;

  bool empty() const { return glossary.empty() && keep.empty() && keep_patterns.empty(); }
};

// Bounds on a request's terminology (the server's flags).
struct TerminologyLimits {
  int max_entries = 256;      // Glossary entries plus kept terms (--max_request_terms).
  int max_targets = 8;        // Target forms per entry.
  int max_term_bytes = 256;   // Bytes of one source term or target form.
};

// What makes two glossary sources one term: `source` as written, or with `ignore_case`
// (Terminology::ignore_case) its Unicode full case folding (text/case_fold.h: "Straße" and
// "STRASSE" are both "strasse"), as the matcher compares them. The one comparison of sources:
// ValidateTerminology, CompileTerminology (text/term_matcher.h) and a stored glossary joined to a
// request (serving/request_terms.h) all use it.
std::string SourceKey(absl::string_view source, bool ignore_case);

// InvalidArgument naming the field (`field` is how callers know the terminology's fields:
// "options." for the native API) and the entry, its index and the limit, for: too many entries or
// forms, an empty or too long term or form, a term or form that is not valid UTF-8 or holds control
// characters or markup (`<`, `>`), an entry without targets, a source listed twice with
// contradicting cases (the same term twice is merged, not refused), a kept term that is also a
// glossary source (sources and kept terms compared by SourceKey). The one place a terminology is
// checked.
absl::Status ValidateTerminology(const Terminology& terminology, const TerminologyLimits& limits,
                                 absl::string_view field);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_TERMINOLOGY_H_
