// A request's terminology (text/terminology.h) made ready for one target model: every glossary
// target form and kept term spelled in the target vocabulary (checked to read back exactly), and
// the occurrences of glossary sources, kept terms and keep patterns found in a sentence and turned
// into the decoder's constraints (model/decoding/term_constraints.h), with the exact bytes each
// constraint's forms must come out as when the translation is joined (text/unknown_runs.h puts
// them in, over what the form's ids decode to).
#ifndef MTSERVE_TEXT_TERM_MATCHER_H_
#define MTSERVE_TEXT_TERM_MATCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "model/decoding/term_constraints.h"
#include "model/tokenizer.h"
#include "text/terminology.h"

namespace mtserve {

// One form of a constraint as the translation must show it.
struct TermForm {
  std::string text;  // Its exact bytes.
  // What the unknown ids of its spelling stand for, in order (bytes of `text`, whitespace
  // trimmed): characters the target vocabulary lacks ("{" and "}" in "{name}" for a vocabulary
  // without braces).
  std::vector<Segment> unknown;
};

// The constraints one sentence's source holds.
struct SentenceTerms {
  TermConstraints constraints;
  // One per constraints.terms, in order.
  struct Term {
    Segment source;     // The occurrence: bytes of the sentence (from its start).
    bool kept = false;  // A span kept as written (a kept term, a pattern, a format's), not a
                        // glossary entry's.
    std::vector<TermForm> forms;          // One per constraints.terms[i].forms.
    std::vector<TermForm> initial_forms;  // One per constraints.terms[i].initial_forms.
  };
  std::vector<Term> terms;

  // The form a hypothesis placed for constraint `placed.term` (null if out of range).
  const TermForm* Placed(const PlacedTerm& placed) const;
};

// `terms` with each constraint's source tokens (TermConstraint::source_begin, source_end) set:
// the pieces of `pieces` (the sentence's source pieces, bytes from the sentence's start, one per
// id of its source but </s>: Tokenizer::EncodeSourceWithSpans) that overlap its occurrence
// (SentenceTerms::Term::source); null if `terms` is.
std::shared_ptr<const SentenceTerms> WithSourcePositions(std::shared_ptr<const SentenceTerms> terms,
                                                         absl::Span<const Segment> pieces);
// `terms` (their source tokens those of the sentence they were found in: WithSourcePositions) for
// a decode whose source is a translation of that sentence (a pivot's bridge text): `written`, the
// bytes of that text each token of the translation wrote, and `alignment`, the sentence's source
// token each was aligned to, one per token; `pieces`, the decode's source pieces (bytes of the
// same text, as for WithSourcePositions). A constraint's source tokens are the pieces that
// overlap the bytes written by the tokens aligned into its own (from the first's start to the
// last's end); unknown (-1) where it had none, no token that wrote bytes is aligned into them,
// `alignment` and `written` differ in size, or they overlap another constraint's (the alignment
// could not tell the two apart). Null if `terms` is.
std::shared_ptr<const SentenceTerms> WithTranslatedSourcePositions(
    std::shared_ptr<const SentenceTerms> terms, absl::Span<const int> alignment,
    absl::Span<const Segment> written, absl::Span<const Segment> pieces);
// `terms` with every constraint's source tokens unknown (-1): for a decode whose source is not
// the text the terms were found in, where no alignment links the two; null if `terms` is.
std::shared_ptr<const SentenceTerms> WithoutSourcePositions(
    std::shared_ptr<const SentenceTerms> terms);
// The constraints the decoder is given for `terms` (sharing their ownership); null if `terms` is.
inline std::shared_ptr<const TermConstraints> ConstraintsOf(
    const std::shared_ptr<const SentenceTerms>& terms) {
  if (terms == nullptr) return nullptr;
  return std::shared_ptr<const TermConstraints>(terms, &terms->constraints);
}

class TermMatcher {
 public:
  // The occurrences in `sentence` (bytes of `text`, valid UTF-8) of the glossary's sources
  // (whole words; ignoring case by Unicode's full case folding if the terminology says so, so
  // "straße" matches "STRASSE"), the kept terms (as written, whole words), the keep patterns'
  // spans (text/keep_patterns.h), and `kept` (bytes of `text` a format keeps as written: an HTML
  // element with translate="no"; always taken), left to right, the longest at each position, none
  // overlapping another (a format's kept span first, then at one length a glossary source before
  // a kept term before a pattern); null if none. Whole words: a term that begins (ends) with a
  // letter or digit does not begin (end) next to one, except in scripts written without spaces
  // (Han, Kana, Thai, ...), nor end before a combining mark. An InvalidArgument naming the limit
  // if there are more than kMaxTermConstraints (the message does not name the text: the caller
  // does).
  absl::StatusOr<std::shared_ptr<const SentenceTerms>> Match(
      absl::string_view text, Segment sentence, absl::Span<const Segment> kept = {}) const;

  // Where Match would find occurrences in `range` of `text` (bytes of `text`), however many:
  // for the sentence splitter, which never splits inside one.
  std::vector<Segment> Find(absl::string_view text, Segment range,
                            absl::Span<const Segment> kept = {}) const;

  // The tokenizer whose target side spells the forms.
  const Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  friend absl::StatusOr<std::shared_ptr<const TermMatcher>> CompileTerminology(const Terminology&,
                                                                               const Tokenizer&,
                                                                               absl::string_view);
  struct Trie;
  struct Occurrence;
  struct CompiledTerm {
    TermConstraint constraint;
    std::vector<TermForm> forms;
    std::vector<TermForm> initial_forms;
    bool kept = false;
  };

  TermMatcher();
  std::vector<Occurrence> Occurrences(absl::string_view text, Segment range,
                                      absl::Span<const Segment> kept) const;

  const Tokenizer* tokenizer_ = nullptr;
  std::vector<CompiledTerm> terms_;         // Glossary entries (merged by source), then kept terms.
  std::shared_ptr<const Trie> as_written_;  // Kept terms, and glossary sources if case counts.
  std::shared_ptr<const Trie> folded_;      // Glossary sources, folded, if case is ignored.
  std::vector<KeepPattern> patterns_;

 public:
  ~TermMatcher();
};

// `terminology` (ValidateTerminology passed) for `target_tokenizer` (which must outlive the
// matcher): each glossary target form and kept term spelled in its target ids (EncodeTarget
// without </s>), and for a glossary form starting with a lower-case letter an initial form with
// it in title case (a sentence may start with the term); duplicate sources' forms merged. Each
// form must read back: DecodeTarget of its ids, with the bytes its unknown ids stand for put back,
// is the form; an InvalidArgument naming `field`'s entry, its index and the form otherwise (the
// target model's normalisation changes it: full-width letters, ligatures, runs of spaces). An
// initial form that does not read back is left out.
absl::StatusOr<std::shared_ptr<const TermMatcher>> CompileTerminology(
    const Terminology& terminology, const Tokenizer& target_tokenizer, absl::string_view field);

// `form` spelled in `tokenizer`'s target ids, and what its unknown ids stand for; whether it
// reads back (see CompileTerminology).
bool SpellTargetForm(absl::string_view form, const Tokenizer& tokenizer, std::vector<int>& ids,
                     TermForm& spelled);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_TERM_MATCHER_H_
