// Word boundaries for placing markup in a translation: markup goes around whole words.
#ifndef MTSERVE_TEXT_WORDS_H_
#define MTSERVE_TEXT_WORDS_H_

#include "absl/strings/string_view.h"
#include "base/segment.h"

namespace mtserve {

// `range` of `text` widened to whole words (words are what lies between ASCII whitespace): from
// the start of the word it begins in (or of the next word, if it begins at a space) to the end of
// the word it ends in, less punctuation that follows the word. Within the text, never starting or
// ending with a space unless empty.
Segment WidenToWords(absl::string_view text, Segment range);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_WORDS_H_
