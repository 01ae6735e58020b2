// Emphasis and strikethrough delimiters written around a Markdown translation's words
// (text/markdown_document.h), kept opening and closing as in the source whatever characters the
// translation puts beside them: CommonMark's flanking rules decide whether a run of '*', '_' or
// '~' opens or closes from the characters on either side, and its "rule of three" from the
// lengths of the runs; a translation changes both.
#ifndef MTSERVE_TEXT_MARKDOWN_DELIMITERS_H_
#define MTSERVE_TEXT_MARKDOWN_DELIMITERS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "text/inline_spans.h"

namespace mtserve {

// The character of an emphasis or strikethrough span's delimiters ('*', '_', '~'), or 0.
char DelimiterOf(const InlineSpan& span);

// A delimiter run written for a span: where in the output, its length, its character, whether it
// opens, and the span (its index) it was written for.
struct Delimiters {
  size_t at = 0;
  size_t size = 0;
  char c = 0;
  bool open = false;
  int span = -1;
};

// Emphasis inside a span with the same delimiter character, their markers side by side at both
// ends, reads as other markup ("**x**" is strong, not emphasis twice; "***x***" is emphasis
// around strong, not strong around emphasis): the inner one's '*'s become '_'s (or '_'s '*'s)
// in `out`, and in `marks` (written for `spans`, in order).
void SwitchInnerDelimiters(absl::Span<const InlineSpan> spans, std::vector<Delimiters>& marks,
                           std::string& out);

// Makes every run of `marks` (the emphasis and strikethrough delimiters written for a translated
// run from `run_begin` on, in order) open or close as in the source, whatever the translation's
// characters beside it: whitespace inside the markers goes outside them (or, at the run's edges,
// away), a closer directly followed by an opener of the same character gets a space between
// them, and a run that would not only open (or only close) gets a space on its outer side
// (unless that space would come between two openers or two closers, or after nothing but
// markers on its line). `rest` is what follows the run in the document.
void KeepFlanking(const std::vector<Delimiters>& marks, size_t run_begin, absl::string_view rest,
                  std::string& out);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_MARKDOWN_DELIMITERS_H_
