// An HTML document as translation sees it: the runs of text to translate (a block element's
// inline content, and the alt and title attributes), each as plain text with the inline markup
// that wrapped parts of it; and the document rebuilt around their translations, every other byte
// (structure, attributes, entities, comments, scripts, untranslatable parts) kept as it was.
//
// Parsed with gumbo, the HTML5 parsing algorithm browsers use, never with patterns. Runs are
// replaced in the source text by their byte ranges, so what is not translated is not re-serialised
// (and so not changed). Left untranslated: script, style, code, pre, textarea, template, svg,
// math, kbd, samp, var, noscript, elements with translate="no", and comments (which also end a
// run, as do <br> and any element that is not inline markup). A run is contiguous source: markup
// the parser ignored or moved (a stray end tag) ends it, so no byte is lost by replacing it. Line
// breaks inside a run are spaces in its text: in HTML they are the source's wrapping, not a
// boundary. An alt or title on an inline element inside a run is left as written.
#ifndef MTSERVE_TEXT_HTML_DOCUMENT_H_
#define MTSERVE_TEXT_HTML_DOCUMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"

namespace mtserve {

class HtmlDocument {
 public:
  // Markup around part of a run's text: <b>, <a href=...>, <span class=...>, ...
  struct Inline {
    Segment range;      // In the run's text.
    std::string open;   // The start tag as written.
    std::string close;  // The end tag as written (empty if the source left it implied).
    int parent = -1;    // The enclosing Inline's index in the run, or -1.
  };
  // Text to translate.
  struct Run {
    std::string text;             // Entities decoded, markup removed, line breaks as spaces.
    std::vector<Inline> inlines;  // Outer ones before the ones they enclose.
    bool attribute = false;       // An alt or title value (no inlines).
    Segment source;               // Its bytes in the document.
  };
  // A run's translation: its text and where each of its inlines goes in it (one range per
  // Inline, in the same order).
  struct Translated {
    std::string text;
    std::vector<Segment> inlines;
  };

  // Where `run`'s inlines go in its translation `text` by their relative position, each widened to
  // whole words (an inline over the whole run goes over the whole translation): for where the
  // decoder's alignment says nothing (text/inline_placement.h).
  static std::vector<Segment> PlaceByPosition(const Run& run, absl::string_view text);

  // How deep elements may nest, as counted before parsing (see EstimateShape in the .cc):
  // Chromium's HTML parser stops nesting at 512 too.
  static constexpr size_t kMaxDepth = 512;
  // Attributes of one element at most (gumbo's time grows with their square; real pages have a
  // few, generated ones some dozens).
  static constexpr size_t kMaxAttributes = 256;

  // InvalidArgument for elements nested deeper than kMaxDepth or with more than kMaxAttributes
  // attributes, or for input gumbo cannot parse at all (never seen: HTML5 parsing accepts
  // anything).
  static absl::StatusOr<HtmlDocument> Parse(std::string html);

  const std::vector<Run>& runs() const { return runs_; }

  // The document with each run replaced by its translation (one per run, in order), its text
  // escaped for where it stands and its inlines placed around their ranges. Ranges are clamped so
  // that the output is always well-formed: inside the enclosing inline's range, not overlapping
  // the previous sibling's, and within the text.
  std::string Render(absl::Span<const Translated> translations) const;

 private:
  std::string html_;
  std::vector<Run> runs_;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_HTML_DOCUMENT_H_
