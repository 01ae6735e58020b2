// Where marked-up parts of a text (the words an HTML <b> or <a> wrapped) go in its translation:
// to the target words the decoder aligned to their source words. Source words are found from the
// source pieces, target words by decoding the translation's ids one more at a time.
#ifndef MTSERVE_TEXT_INLINE_PLACEMENT_H_
#define MTSERVE_TEXT_INLINE_PLACEMENT_H_

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "model/decoding/hypothesis.h"
#include "model/tokenizer.h"
#include "text/sentences.h"

namespace mtserve {

// For each of `ranges` (bytes of `text`), the bytes of `joined` (the text's translation, as
// JoinSentences joined `parts`, the same hypothesis of each sentence of `sentences`, with
// `joined_sentences` where each part lies in it) that the decoder aligned to it, widened to whole
// words; nullopt where no alignment says (the parts carry none, a range covers no source piece,
// or its pieces were aligned to nothing). `text` was read by `source_tokenizer`, the parts written
// by `tokenizer` (the same model's, or a chain's first and last models': serving/pivot.h). A
// sentence's placed terms (SourceSentence::terms, Hypothesis::terms) say it without the
// alignment: a term's tokens stand for its occurrence, and no other token for it.
std::vector<std::optional<Segment>> PlaceByAlignment(
    absl::string_view text, absl::Span<const SourceSentence> sentences,
    absl::Span<const Hypothesis> parts, absl::string_view joined,
    absl::Span<const Segment> joined_sentences, const Tokenizer& source_tokenizer,
    const Tokenizer& tokenizer, absl::Span<const Segment> ranges);

// One target token of a sentence's translation: its bytes in the translation, and the bytes of
// the source text of the source piece the decoder aligned it to (nullopt where none).
struct AlignedToken {
  Segment target;
  std::optional<Segment> source;
};

// The tokens of `part` (a translation of `sentence`, bytes of `text` read by `source_tokenizer`,
// written by `tokenizer`) with the source pieces the decoder aligned them to; empty where the
// part carries no alignment, its text is not its ids decoded (unknown runs put back), or the
// source pieces cannot be found in the sentence.
std::vector<AlignedToken> AlignedTokens(absl::string_view text, Segment sentence,
                                        const Hypothesis& part, const Tokenizer& source_tokenizer,
                                        const Tokenizer& tokenizer);

// The bytes of `text` (`ids` decoded by `tokenizer`'s target side) each id brought: the growth
// of the text decoded one id more at a time, less the space before a word (empty for an id that
// brought nothing, </s>).
std::vector<Segment> TargetTokenRanges(const std::vector<int>& ids, absl::string_view text,
                                       const Tokenizer& tokenizer);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_INLINE_PLACEMENT_H_
