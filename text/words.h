// Word boundaries for placing markup in a translation: markup goes around whole words, and around
// a placed glossary form or kept span (text/term_matcher.h) whole or not at all.
#ifndef MTSERVE_TEXT_WORDS_H_
#define MTSERVE_TEXT_WORDS_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"

namespace mtserve {

// `range` of `text` widened to whole words (words are what lies between ASCII whitespace): from
// the start of the word it begins in (or of the next word, if it begins at a space) to the end of
// the word it ends in, less punctuation that follows the word. Within the text, never starting or
// ending with a space unless empty.
Segment WidenToWords(absl::string_view text, Segment range);

// `range` of `text` (markup placed by relative position) with no edge strictly inside one of
// `forms` (the placed forms' bytes of `text`, in order, none overlapping another), so that it
// covers each form whole or not at all: an edge inside a form goes to the form's edge outside the
// range (widening it over the whole form), or with `shrink` (a span whose text is not written, a
// fixed one) to its edge inside (leaving the form out); an empty range (markup between words)
// inside a form goes to its nearer edge, past the spaces after its end (the start of the next
// word), its start where both are as near.
Segment OutsideForms(absl::string_view text, Segment range, absl::Span<const Segment> forms,
                     bool shrink = false);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_WORDS_H_
