// Cuts a sentence that has more tokens than a model accepts into pieces that fit, so that
// nothing is ever refused for its length or dropped.
#ifndef MTSERVE_MODEL_TEXT_CUT_TO_TOKEN_LIMIT_H_
#define MTSERVE_MODEL_TEXT_CUT_TO_TOKEN_LIMIT_H_

#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/text/segment.h"

namespace mtserve {

// Pieces of `sentence` (a range of UTF-8 `text` that neither starts nor ends with whitespace),
// each of at most `max_tokens` (>= 2) tokens as `count_tokens` counts them (the end-of-sentence
// token included). A sentence within the limit is one piece. Otherwise each piece ends as late
// as the limit allows: after punctuation that a space follows if there is such a place in the
// second half of what fits, else at the last space that fits, else (a word longer than the
// limit) at the last character that fits. Pieces neither start nor end with whitespace, and only
// whitespace lies between them. Costs O(log n) counts of at most 64 x max_tokens bytes a piece.
std::vector<Segment> CutToTokenLimit(absl::string_view text, Segment sentence, int max_tokens,
                                     const std::function<int(absl::string_view)>& count_tokens);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TEXT_CUT_TO_TOKEN_LIMIT_H_
