// Pivot translation's one rule, shared by the server's core and mttranslate so that a text
// translates the same offline and served: how a sentence's translation through a chain of models
// (serving/language_routes.h: fr->en->de with fr-en then en-de) is made from its legs. A leg's
// best translation, with the characters its model could not spell put back as in a direct
// call's answer, is the next leg's input, taken as one text (no sentence splitting: cut to the
// next model's token limit only) and joined back by text/document.h as any plain text; the
// sentence's result is the last leg's, its scores the legs' sums and its alignment composed
// through each bridge text, so that markup and unknown characters land on the right target words;
// the sentence's terms are written by the last leg where the legs before translated their source.
#ifndef MTSERVE_SERVING_PIVOT_H_
#define MTSERVE_SERVING_PIVOT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/tokenizer.h"
#include "model/translator.h"
#include "text/document.h"
#include "text/term_matcher.h"
#include "text/text_translation.h"
#include "text/unknown_runs.h"

namespace mtserve {

// What the next leg reads from `result`, the legs so far of one sentence: its best hypothesis's
// text with the runs of characters the chain's first model cannot spell put back where its
// unknown tokens stand (text/unknown_runs.h), as a direct translation's answer has them, so that
// the next model reads what a direct call on that answer would.
struct BridgeText {
  std::string text;
  UnknownRuns runs;  // What was put into the best hypothesis's text to make `text`.
};
// `sentence`: the source sentence's text, as the chain's first model (`source_tokenizer`) read it
// (empty: nothing is put back); `tokenizer`: the model that wrote `result`.
BridgeText MakeBridgeText(const TranslationResult& result, absl::string_view sentence,
                          const Tokenizer& source_tokenizer, const Tokenizer& tokenizer);

// `bridge` taken apart for the next leg, whose model's tokenizer is `tokenizer` and input limit
// `max_tokens`: as a plain text of one sentence (what split_sentences=false gives), cut into
// pieces over the limit; none when it is empty or whitespace. A piece whose only characters the
// next model cannot spell are runs put back from the source is not marked `unknown`: those come
// back from the source sentence once, when the text is joined, through the alignment ComposeLegs
// composes (every leg of such a sentence is decoded with the alignment), rather than twice.
absl::StatusOr<std::unique_ptr<Document>> PrepareBridge(const BridgeText& bridge,
                                                        const Tokenizer& tokenizer, int max_tokens);

// `terms`, the sentence's (their source tokens those of the chain's first model), for the first
// piece of `bridge` (PrepareBridge of `text`, MakeBridgeText of `previous`, the legs so far, whose
// last model's tokenizer is `tokenizer`; `bridge_tokenizer`, the next leg's), which writes them on
// a pivot's last leg: their source tokens in that piece found through `previous`'s best
// alignment, into the sentence's source tokens (composed through the legs before by ComposeLegs):
// text/term_matcher.h's WithTranslatedSourcePositions. Unknown (-1) where the best carries no
// alignment, the bridge is the sentence taken as written or cut into several pieces, or its piece
// does not encode as its ids; null if `terms` is.
std::shared_ptr<const SentenceTerms> BridgeTerms(std::shared_ptr<const SentenceTerms> terms,
                                                 const TranslationResult& previous,
                                                 const Tokenizer& tokenizer, const BridgeText& text,
                                                 const Document& bridge,
                                                 const Tokenizer& bridge_tokenizer);

// The sentence's translation through two legs: `first`, the first leg's result (decoded by the
// model of `first_tokenizer`), and `second`, the next leg's translation of its bridge text `text`
// (MakeBridgeText of `first`; JoinDocument of `bridge`'s results with `second_tokenizer`).
// Hypotheses are `second`'s (the first leg counts with its best only): each one's log_prob, score
// and truncated sentences plus the first leg's best's, and, when both legs carry an alignment, its
// alignment into `first`'s source tokens (a target token -> the bridge token it was aligned to ->
// the first leg's target token that wrote the most of that token's bytes of the bridge text, an
// unknown token the bytes of the run put back for it -> the source token that one was aligned to;
// </s> of the source where a link is missing); source_tokens `first`'s.
TranslationResult ComposeLegs(const TranslationResult& first, const Tokenizer& first_tokenizer,
                              const BridgeText& text, const Document& bridge,
                              TextTranslation second, const Tokenizer& second_tokenizer);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_PIVOT_H_
