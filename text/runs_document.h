// A Document (text/document.h) made of runs of text with inline markup (text/inline_spans.h): an
// HTML document's (html_format.cc), a Markdown document's (markdown_format.cc). Each run is split
// into sentences as plain text is; the translation is the document rendered around the runs'
// translations, each run's sentences joined in its text as a plain text's are, its inline markup
// placed by the decoder's alignment where it says (text/inline_placement.h) and by position
// elsewhere (kept where it was when the run's translation is its text unchanged); the runs of
// characters the model cannot spell put back (text/unknown_runs.h), those dropped named by their
// bytes in the document, as is text the format kept untranslated; scores and tokens summed over
// the runs.
#ifndef MTSERVE_TEXT_RUNS_DOCUMENT_H_
#define MTSERVE_TEXT_RUNS_DOCUMENT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "text/document.h"
#include "text/inline_spans.h"

namespace mtserve {

class RunsDocument : public Document {
 public:
  TextTranslation Join(std::vector<TranslationResult> results, int num_hypotheses,
                       const Tokenizer& source_tokenizer,
                       const Tokenizer& tokenizer) const override;

 protected:
  // A run as the format holds it.
  struct RunView {
    absl::string_view text;
    absl::Span<const InlineSpan> inlines;
    // Bytes of `text` kept as written (an HTML element with translate="no" inside the run), in
    // order: spans of its sentences' terms (text/term_matcher.h).
    absl::Span<const Segment> kept = {};
  };

  // Splits each run into sentences by `rules`; called once by the format's maker.
  void Split(const SentenceRules& rules);

  virtual size_t num_runs() const = 0;
  virtual RunView run(size_t r) const = 0;
  // The document's bytes that hold `range` of run `r`'s text.
  virtual Segment SourceBytes(size_t r, Segment range) const = 0;
  // The document with each run replaced by its translation (one per run, in order).
  virtual std::string Render(absl::Span<const TranslatedRun> translations) const = 0;
  // The document's bytes of text the format could not take apart into runs and keeps as written,
  // untranslated (a Markdown block md4c's events do not map back to), in order: reported with the
  // dropped runs (TextTranslation::dropped), never silently.
  virtual absl::Span<const Segment> untranslated() const { return {}; }

  bool ranges_in_text() const override { return false; }
  bool aligns_markup() const override { return true; }

 private:
  std::vector<size_t> first_;  // Where each run's sentences begin among sentences_ (then the end).
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_RUNS_DOCUMENT_H_
