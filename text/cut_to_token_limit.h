// Cuts a sentence longer than a model's token limit into pieces that fit: the model would
// otherwise truncate it (losing its end) or refuse it.
#ifndef MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_
#define MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_

#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/segment.h"

namespace mtserve {

// Pieces of one sentence `sentence` (a byte range of text, without surrounding whitespace), each
// with at most `max_tokens` tokens as counted by `count_tokens` (which counts a string's tokens
// INCLUDING the end-of-sentence token the model adds). A sentence within the limit is returned as
// one piece. Otherwise each piece is cut as late as possible within the limit, preferring after
// punctuation followed by whitespace, then at whitespace, then at any UTF-8 character boundary (a
// word longer than the limit); pieces never start or end with whitespace and together with the
// whitespace between them cover the sentence exactly: nothing is dropped. max_tokens >= 2.
//
// Cut points are found by exponential then binary search, assuming a prefix never has more tokens
// than a longer prefix: O(log n) calls of `count_tokens` per piece, O(n log n) at worst, each on
// a string about as long as the piece (the rest of the sentence is tokenised whole only once it
// is short enough to fit). A single character over the limit (a tokenizer that makes
// more than max_tokens - 1 tokens of it) still becomes a piece of its own: pieces must progress.
std::vector<Segment> CutToTokenLimit(absl::string_view text, Segment sentence, int max_tokens,
                                     const std::function<int(absl::string_view)>& count_tokens);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_
