// Spans of a text kept as written because of what they look like (text/terminology.h KeepPattern):
// URLs, e-mail addresses, numbers with units and the placeholders of message formats. Found by
// hand-written scanners, each linear in the text (no backtracking), so any bytes cost what their
// length costs.
#ifndef MTSERVE_TEXT_KEEP_PATTERNS_H_
#define MTSERVE_TEXT_KEEP_PATTERNS_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "text/terminology.h"

namespace mtserve {

struct PatternSpan {
  Segment range;  // Bytes of the text.
  KeepPattern pattern;
};

// The spans of `text` within `within` that match any of `patterns`, sorted by start (longest
// first at one start); spans of different patterns may overlap (the caller chooses). What each
// pattern takes:
// - kUrls: "http://", "https://" or "ftp://" (any case) and "www." followed by a host, up to the
//   next whitespace, quote or angle bracket, less trailing punctuation (a closing parenthesis
//   stays when the URL opened one);
// - kEmails: local@domain.tld (ASCII letters, digits and ._%+- before the @, a dotted host
//   after), starting at a word boundary;
// - kNumbersWithUnits: a number (digits, with "." or "," between groups) followed by a unit from
//   a fixed list (kg, km/h, GHz, %, °C, MB, ...), directly or after one space or no-break space,
//   and times of day (12:30, 08:15:00); a number alone is not kept;
// - kPlaceholders: {name}, {0}, {{var}}, {{ var }}, ${var}, printf's conversions (%s, %d, %1$d,
//   %-5.2f, %@, %%), numbered tags <0>, </0>, <1/>, and $VAR (a letter or _ after the $). ":name"
//   is not a placeholder (it is too often ordinary text), nor is "100 %" or "$5".
// Invalid UTF-8 is skipped as it stands; nothing is read outside `within`.
std::vector<PatternSpan> FindKeepPatterns(absl::string_view text, Segment within,
                                          absl::Span<const KeepPattern> patterns);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_KEEP_PATTERNS_H_
