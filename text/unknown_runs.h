// Runs of source characters the model's vocabulary cannot spell (CJK in an English model, emoji):
// SentencePiece folds each run into one piece that becomes the unknown id, the decoder cannot
// write them, and detokenising drops the unknown ids it generates. Here, where a text's
// translation is joined, they come back: each unknown token the decoder generated becomes the
// source run its alignment ties it to (the source piece its cross-attention weighed most, as
// CTranslate2's replace_unknowns does), in the original bytes of the text. A run no generated
// unknown token is tied to is reported as dropped (Hypothesis.dropped in the API). A sentence with
// nothing the model can translate (its other pieces hold no letter or digit: "你好世界。",
// "🙂!") is its own translation. The engine stays as it is: this uses only the ids and the
// alignment it returns (asked for on the sentences that hold an unknown piece).
//
// The same machinery puts in a sentence's terms (text/term_matcher.h): the bytes the ids of each
// form a hypothesis placed (Hypothesis::terms) decode to are replaced by the form's exact bytes,
// unknown ids and all, and a source run inside a placed term is not dropped.
#ifndef MTSERVE_TEXT_UNKNOWN_RUNS_H_
#define MTSERVE_TEXT_UNKNOWN_RUNS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "model/tokenizer.h"
#include "model/translator.h"
#include "text/sentences.h"

namespace mtserve {

// What one hypothesis of one sentence gets back of the sentence's unknown runs.
struct UnknownRuns {
  // Source bytes put into the translation (its text as DecodeTarget gives it, without them):
  // `bytes` before byte `at`, in place of the `erase` bytes from there, for generated tokens
  // [token, token_end). In order of `at`; none overlaps another's erased bytes.
  struct Insertion {
    size_t at = 0;
    std::string bytes;  // The run, with a space before or after where the source had one; or a
                        // placed term's form.
    size_t token = 0;
    size_t token_end = 0;
    size_t erase = 0;   // A placed term: what its ids decode to, less the space around it.
    bool term = false;  // A placed term's form, not a run.
  };
  std::vector<Insertion> insertions;
  std::vector<Segment> dropped;  // Runs not put back: bytes of the sentence, in order.
  bool verbatim = false;         // The sentence is its own translation.
};

// Whether `ids` (a sentence's source ids) hold the unknown id.
bool HasUnknown(absl::Span<const int> ids, const Tokenizer& tokenizer);

// The unknown runs of `sentence` for the hypothesis with generated `ids` and `alignment` (one per
// id; without it no generated unknown can be tied to a run, and all are dropped): `sentence` read
// by `source_tokenizer`, `ids` written by `tokenizer` (the same model's, or a chain's first and
// last models' for a pivoted sentence: serving/pivot.h). With the sentence's `terms` and the
// hypothesis's `placed` terms, the placed forms too (their unknown ids not tied to runs).
UnknownRuns FindUnknownRuns(absl::string_view sentence, absl::Span<const int> ids,
                            absl::Span<const int> alignment, const Tokenizer& source_tokenizer,
                            const Tokenizer& tokenizer, const SentenceTerms* terms = nullptr,
                            absl::Span<const PlacedTerm> placed = {});

// `decoded` (DecodeTarget of the hypothesis's ids) with `runs` put in; `sentence` if verbatim.
// `placed_terms` (optional) is set to where the placed terms' forms lie in it (bytes of it, in
// order).
std::string WithUnknownRuns(absl::string_view decoded, absl::string_view sentence,
                            const UnknownRuns& runs, std::vector<Segment>* placed_terms = nullptr);

// Where `part` (a hypothesis of `sentence`, bytes of `text`, its text as RestoreUnknownRuns made
// it; tokenizers as FindUnknownRuns's) holds the forms of the terms it placed: bytes of its text,
// in order; none if it placed none or its text is not that.
std::vector<Segment> PlacedForms(absl::string_view text, const SourceSentence& sentence,
                                 const Hypothesis& part, const Tokenizer& source_tokenizer,
                                 const Tokenizer& tokenizer);

// Where byte `position` of the decoded text is once `runs` are put in: after the insertions before
// it, and after one at it too if `after_insertion_at` (a token that starts there); a position
// inside bytes a term replaced stays inside its form.
size_t ShiftedByUnknownRuns(const UnknownRuns& runs, size_t position, bool after_insertion_at);

// For each of `sentences` of `text` with an unknown piece or terms: every hypothesis's text (see
// FindUnknownRuns) with its runs and placed terms put in. dropped[k] gets hypothesis k's dropped
// runs, as bytes of `text` (it has num_hypotheses entries, or is resized to). Tokenizers as
// FindUnknownRuns's.
void RestoreUnknownRuns(absl::string_view text, absl::Span<const SourceSentence> sentences,
                        std::vector<TranslationResult>& results, int num_hypotheses,
                        const Tokenizer& source_tokenizer, const Tokenizer& tokenizer,
                        std::vector<std::vector<Segment>>& dropped);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_UNKNOWN_RUNS_H_
