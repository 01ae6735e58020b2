// Cuts a sentence longer than a model's token limit into pieces that fit: the model would
// otherwise truncate it (losing its end) or refuse it.
#ifndef MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_
#define MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"

namespace mtserve {

// No token covers more bytes than this (SentencePiece's pieces are at most 16 characters of at
// most 4 bytes), so a string of more than kMaxBytesPerToken x max_tokens bytes cannot fit
// max_tokens and is never tokenised whole to find out: a sentence of a megabyte without spaces
// costs what its pieces cost, not a tokenisation of the megabyte (seconds, and hundreds of MiB
// for SentencePiece's lattice over one "word"). A string that would fit anyway (long runs of
// whitespace, which SentencePiece folds into one, and runs of characters it cannot spell, which
// it folds into one unknown token at a cost that grows with the square of the run) is cut where
// it need not be; nothing is lost.
inline constexpr size_t kMaxBytesPerToken = 64;

// Whether a string of `bytes` bytes may fit `max_tokens` tokens (else it certainly does not).
inline bool MayFitTokens(size_t bytes, int max_tokens) {
  return bytes <= kMaxBytesPerToken * static_cast<size_t>(max_tokens);
}

// Pieces of one sentence `sentence` (a byte range of text, without surrounding whitespace), each
// with at most `max_tokens` tokens as counted by `count_tokens` (which counts a string's tokens
// INCLUDING the end-of-sentence token the model adds). A sentence within the limit is returned as
// one piece. Otherwise each piece is cut as late as possible within the limit, preferring after
// punctuation followed by whitespace, then at whitespace, then at any UTF-8 character boundary (a
// word longer than the limit); pieces never start or end with whitespace and together with the
// whitespace between them cover the sentence exactly: nothing is dropped. max_tokens >= 2.
//
// Cut points are found by galloping then binary search from the previous piece's cut (pieces of
// one long run are alike), assuming a prefix never has more tokens than a longer prefix: two calls
// of `count_tokens` per piece when the previous piece's length is right, O(log n) at worst, each
// on a string about as long as a piece (the rest of the sentence is tokenised whole only once it
// is short enough to fit). A single character over the limit (a tokenizer that makes
// more than max_tokens - 1 tokens of it) still becomes a piece of its own: pieces must progress.
// A sentence longer than MayFitTokens allows is cut without being tokenised whole.
//
// `stopped` (optional) is polled before each piece; once it returns true the pieces found so far
// are returned, covering only the sentence's start: the caller abandons the text.
//
// `whole` (bytes of `text`, in order) are spans not to be cut (a glossary term, a URL: see
// text/term_matcher.h): no cut at whitespace or punctuation falls inside one; only a span longer
// than the limit is cut, within a word, as any word is.
std::vector<Segment> CutToTokenLimit(absl::string_view text, Segment sentence, int max_tokens,
                                     const std::function<int(absl::string_view)>& count_tokens,
                                     const std::function<bool()>& stopped = nullptr,
                                     absl::Span<const Segment> whole = {});

}  // namespace mtserve

#endif  // MTSERVE_TEXT_CUT_TO_TOKEN_LIMIT_H_
