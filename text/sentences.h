// A text as the engine translates it: its sentences (text/sentence_splitter.h), each cut to the
// token limit (text/cut_to_token_limit.h) and tokenised; and the text's translation joined back
// from theirs in the text's own layout (base/segment.h). A plain text's format in
// text/document.h, which the server and mttranslate both use, so a text translates the same
// offline and served.
#ifndef MTSERVE_TEXT_SENTENCES_H_
#define MTSERVE_TEXT_SENTENCES_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "model/tokenizer.h"
#include "model/translator.h"
#include "text/sentence_splitter.h"
#include "text/term_matcher.h"
#include "text/text_translation.h"

namespace mtserve {

// One unit of translation: a sentence, or a piece of one over the token limit.
struct SourceSentence {
  Segment range;         // Its bytes in the text.
  std::vector<int> ids;  // Tokenised, </s> included; at most the limit.
  bool unknown = false;  // Whether `ids` hold the unknown id (text/unknown_runs.h), kept when a
                         // caller moves the ids out.
  // The glossary terms and spans kept as written it holds (text/term_matcher.h): its
  // `constraints` go to the decoder with `ids`; null if none.
  std::shared_ptr<const SentenceTerms> terms = nullptr;
};

// The sentence rules for `language` (a checkpoint's source_lang): ICU's for it, its root rules for
// a language ICU has none for or a code it does not take. Fails only if ICU's data cannot load.
absl::StatusOr<std::unique_ptr<SentenceSplitter>> SplitterForLanguage(absl::string_view language);

// The sentences of UTF-8 `text` in order, each within `max_tokens` (>= 2): with `splitter`, its
// sentences; without (callers who segment their texts themselves), the text as one sentence.
// Whitespace around and between them is not translated (JoinSentences puts it back). A text of
// whitespace only has none. A sentence too long to fit (MayFitTokens) is cut without being
// tokenised whole. `stopped` (optional) is polled between sentences and pieces; once it returns
// true the sentences found so far are returned, covering only the text's start: the caller
// abandons the text.
std::vector<SourceSentence> SplitIntoSentences(absl::string_view text,
                                               const SentenceSplitter* splitter,
                                               const Tokenizer& tokenizer, int max_tokens,
                                               const std::function<bool()>& stopped = nullptr);

// The same with `terms`' occurrences (text/term_matcher.h; null: none) attached to each sentence
// or piece (SourceSentence::terms), `kept` (bytes of `text` kept as written whatever the
// terminology: an HTML element with translate="no") among them. No sentence boundary falls
// inside an occurrence (sentences the splitter found are joined again around one: "Dr. Zorblax"
// in a glossary stays one sentence), and a sentence over the token limit is cut outside them
// where a cut at whitespace can be found. The InvalidArgument of TermMatcher::Match for a sentence
// or piece with too many, naming it by its bytes.
absl::StatusOr<std::vector<SourceSentence>> SplitIntoSentences(
    absl::string_view text, const SentenceSplitter* splitter, const Tokenizer& tokenizer,
    int max_tokens, const TermMatcher* terms, absl::Span<const Segment> kept,
    const std::function<bool()>& stopped = nullptr);

// Adds `part` to `out`, a hypothesis made of parts in order (a text's sentences, an HTML
// document's runs): its ids and token log-probabilities appended, its placed terms (PlacedTerm)
// appended with their token ranges moved past the ids before them, its log-probability, score
// and truncated sentences summed. (The terms' constraint indexes stay the part's own.)
void AppendPart(const Hypothesis& part, Hypothesis& out);

// The translation of `text` from its sentences' (`results[i]` for `sentences[i]`, each with
// `num_hypotheses` hypotheses): hypothesis h joins each sentence's h-th best in the text's layout,
// with every byte between the sentences kept; its ids, token log-probabilities and alignment are
// the sentences' in order (each sentence's </s> included; each sentence's alignment positions
// moved past the source tokens of the sentences before it, as their results count them, so they
// index the text's source tokens over its sentences in order), its log_prob and score their sums,
// and its hypothesis_sentences where each one's translation lies in its text. A text of one
// sentence and no surrounding whitespace gets that sentence's hypotheses unchanged.
TextTranslation JoinSentences(absl::string_view text, absl::Span<const SourceSentence> sentences,
                              std::vector<TranslationResult> results, int num_hypotheses);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_SENTENCES_H_
