// Glossary entries as DeepL's API takes them (and as the server's --glossary_dir holds them):
//
//   TSV: one entry a line, `source<TAB>target`.
//   CSV (RFC 4180): one entry a record, `source,target` or `source,target,source_lang,target_lang`;
//        a field may be quoted ("a, b"), with "" for a quote inside it and line breaks allowed
//        between the quotes (then refused as control characters in a term).
//
// Both: UTF-8, with or without a byte order mark; lines end with LF or CRLF; blank lines (empty
// or only spaces) are skipped; spaces and tabs around a term are removed (inside CSV's quotes too).
// A source given again with another target adds that target to the first entry (several forms,
// any one of which satisfies it: DeepL's API refuses such duplicates, and its front end here
// refuses them itself before calling this); given again with the same target, it is merged.
// Entries keep the order of their first lines.
//
// Every refusal is an InvalidArgument naming `what` (the file, or the request field), the line
// and the limit: a file over max_bytes, a line that is not two fields (or four in CSV), an empty
// term, a term over max_term_bytes, one that is not UTF-8 or holds a control character, more than
// max_entries sources or max_targets forms for a source, CSV language columns that are not the
// glossary's languages, a CSV quote left open or followed by something other than a comma.
// The rest of an entry's rules (markup, contradicting cases) are ValidateTerminology's
// (text/terminology.h), which the caller runs on the result.
#ifndef MTSERVE_TEXT_GLOSSARY_FILE_H_
#define MTSERVE_TEXT_GLOSSARY_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/terminology.h"

namespace mtserve {

enum class GlossaryFileFormat { kTsv, kCsv };

struct GlossaryFileLimits {
  int max_entries = 10000;   // Distinct sources.
  int max_targets = 8;       // Forms of one source.
  int max_term_bytes = 256;  // Bytes of one source or target, as written (spaces around removed).
  int64_t max_bytes = 0;     // Of the whole file; 0: GlossaryFileLimitsFor's.
};

// The limits of a glossary of at most `max_entries` entries, each within `terms` (its
// max_entries ignored): max_bytes is room for that many lines of a source and a target at
// max_term_bytes each, quoted, with their separators and language columns.
GlossaryFileLimits GlossaryFileLimitsFor(int max_entries, const TerminologyLimits& terms);

struct GlossaryFileOptions {
  GlossaryFileFormat format = GlossaryFileFormat::kTsv;
  GlossaryFileLimits limits;
  // The glossary's languages: CSV lines that name their languages must name these (compared
  // ignoring ASCII case); "" takes any.
  std::string source_language;
  std::string target_language;
};

// The entries of `bytes`; errors name `what` and the line (the line a CSV record starts on).
absl::StatusOr<std::vector<GlossaryEntry>> ParseGlossaryFile(absl::string_view bytes,
                                                             const GlossaryFileOptions& options,
                                                             absl::string_view what);

// The entries as TSV, one `source<TAB>target` line per form (for DeepL's entries call): what
// ParseGlossaryFile reads back as the same entries. Terms hold no tab or line break (both are
// control characters, refused when parsed).
std::string WriteGlossaryTsv(const std::vector<GlossaryEntry>& entries);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_GLOSSARY_FILE_H_
