// An office document (a zip package of XML parts: text/office/office_package.h) as a Document
// (text/document.h): each format says which parts hold text and takes each apart into runs of
// text with inline spans (its paragraphs, their formatting as spans); the runs of all parts are
// translated as text/runs_document.h translates runs, each part rendered around its runs'
// translations and the package written back with only those parts replaced.
//
// The formats (docx_format.cc, pptx_format.cc, odf_format.cc, epub_format.cc) differ only in
// their OfficeTakeApart.
//
// TextTranslation::dropped of an office document indexes its extracted text: every run's text
// (in part order, then run order), each followed by a line feed, then each text a format kept
// untranslated (PartRuns::kept), each followed by a line feed. A compressed archive's bytes
// cannot name a word; this text can.
#ifndef MTSERVE_TEXT_OFFICE_OFFICE_DOCUMENT_H_
#define MTSERVE_TEXT_OFFICE_OFFICE_DOCUMENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "text/document.h"
#include "text/inline_spans.h"
#include "text/office/office_package.h"

namespace mtserve {

// One part's text taken apart: its runs (paragraphs, cells, titles: each a unit of text with its
// inline formatting as spans, text/inline_spans.h) and its bytes rendered around their
// translations.
class PartRuns {
 public:
  struct Run {
    std::string text;
    std::vector<InlineSpan> inlines;
    // Ranges of `text` kept as written, in order (an XHTML element with translate="no" inside
    // the run, with a terminology: text/html_document.h's Run::kept).
    std::vector<Segment> kept = {};
  };

  virtual ~PartRuns() = default;

  const std::vector<Run>& runs() const { return runs_; }
  // Text the format found and keeps as written, untranslated (a paragraph with tracked changes,
  // say): reported in TextTranslation::dropped, never silently.
  const std::vector<std::string>& kept() const { return kept_; }

  // The part's new bytes: runs()[r] replaced by translations[r] (one per run, in order), and its
  // language tags set to the target language the part was taken apart for.
  virtual std::string Render(absl::Span<const TranslatedRun> translations) const = 0;

 protected:
  std::vector<Run> runs_;
  std::vector<std::string> kept_;
};

// A part a format rewrites: its entry name and its runs; or an entry it leaves out of the
// translated package (`remove`, with no runs): a digital signature, which the translation would
// make invalid.
struct OfficePart {
  std::string name;
  std::unique_ptr<PartRuns> runs;
  bool remove = false;
};

// A part a format rewrites to `bytes` whatever the translation (no runs): a package's
// relationships or content types without a removed part's.
std::unique_ptr<PartRuns> RewrittenPart(std::string bytes);

// A format's reading of a package: the parts it rewrites (a part may have no runs and be rewritten
// for its language tags only, to `target_language`, a BCP 47 tag, "" to leave them), in any
// order. INVALID_ARGUMENT naming the part for one the format refuses; the message does not name
// the file: the caller does.
using OfficeTakeApart = std::function<absl::StatusOr<std::vector<OfficePart>>(
    const OfficePackage& package, absl::string_view target_language)>;

// `bytes` opened as a package (OfficePackage::Open's limits and errors) and taken apart by
// `take_apart` for rules.target_language, its runs split into sentences by `rules`.
absl::StatusOr<std::unique_ptr<Document>> PrepareOffice(absl::string_view bytes,
                                                        const SentenceRules& rules,
                                                        const OfficeTakeApart& take_apart);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_OFFICE_DOCUMENT_H_
