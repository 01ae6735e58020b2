// Unicode case folding (ICU's full default folding: "Straße" and "STRASSE" both fold to
// "strasse"), for matching glossary sources whatever their case: the folded text with where each
// of its bytes came from, so that a match in it is found in the original again.
#ifndef MTSERVE_TEXT_CASE_FOLD_H_
#define MTSERVE_TEXT_CASE_FOLD_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace mtserve {

struct FoldedText {
  std::string text;
  // For each byte of `text` and one past its end: the byte of the original where the code point
  // it was folded from begins (the original's size for the end).
  std::vector<size_t> origin;
  // For each byte of `text` and one past its end: whether a code point's folding begins there
  // (a match must begin and end on one).
  std::vector<bool> starts;
};

// `text` (UTF-8) case-folded code point by code point; an ill-formed byte is kept as it is.
FoldedText FoldCase(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_CASE_FOLD_H_
