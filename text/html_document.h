// An HTML document as translation sees it: the runs of text to translate (a block element's
// inline content, and the alt and title attributes), each as plain text with the inline markup
// that wrapped parts of it; and the document rebuilt around their translations, every other byte
// (structure, attributes, entities, comments, scripts, untranslatable parts) kept as it was.
//
// Parsed with gumbo, the HTML5 parsing algorithm browsers use, never with patterns. Runs are
// replaced in the source text by their byte ranges, so what is not translated is not re-serialised
// (and so not changed). Left untranslated: script, style, code, pre, textarea, template, svg,
// math, kbd, samp, var, noscript, elements with translate="no" or class "notranslate" (or a tag
// HtmlOptions::ignore_tags lists), and comments (which also end a run, as do <br> and any element
// that is not inline markup); with HtmlOptions::keep_inline, an inline element marked not to be
// translated stays in its run, as text kept as written (Run::kept). Line breaks inside a run are
// spaces in its text: in HTML they are the source's wrapping, not a boundary. An alt or title on an
// inline element inside a run is left as written.
//
// Misnested inline markup ("<b>a <i>b</b> c</i>", <font> across <b>) is one run, translated as the
// sentence it is: the parser repairs it by closing the formatting element at the other's end tag
// and opening a clone of it after (the standard's adoption agency algorithm), and the element and
// its clones are one Inline over all their text, which may cross another's. The output nests
// them again as the parser built them: a span that ends while one opened inside it is open closes
// that one and opens it again after ("<b>a <i>b</i></b><i> c</i>"), so the output is the repaired
// markup, properly nested, each start tag as written. An element the source left unclosed is
// closed explicitly (a link in a link ends where the second starts); a clone of an element outside
// the run (reopened after a block) is not written again: the parser remakes it from the start tag
// left where it was. Tags the parser ignored (a stray end tag, which gumbo folds into the text
// around it) and elements around no text (<a name=x></a>) are empty Inlines: they stay where they
// stood between words, as written, never around a word. A run is contiguous source: bytes the
// parser moved elsewhere (foster parenting out of a table) end it, so no byte is lost by
// replacing it.
#ifndef MTSERVE_TEXT_HTML_DOCUMENT_H_
#define MTSERVE_TEXT_HTML_DOCUMENT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "text/inline_spans.h"

namespace mtserve {

// How a document is taken apart beyond HTML's own rules.
struct HtmlOptions {
  // Whether an inline element marked not to be translated (translate="no", class "notranslate",
  // or a tag of `ignore_tags`) inside a run stays part of it, its text listed in Run::kept (a
  // caller with a terminology keeps it as written: text/term_matcher.h), rather than ending the
  // run and being left as written.
  bool keep_inline = false;
  // Tag names (lower case) treated as translate="no" (DeepL's ignore_tags).
  std::vector<std::string> ignore_tags;
};

class HtmlDocument {
 public:
  // Markup around part of a run's text (text/inline_spans.h): <b>, <a href=...>, <span
  // class=...>, ...: `open` the start tag as written; `close` the end tag as written, or made
  // (</b>) if the source left it implied. Empty range: an element around no text, or a tag the
  // parser ignored (then `open` is its bytes and `close` empty). `open` empty: a clone the parser
  // remakes (see above), whose end tag alone is written. Never fixed.
  using Inline = InlineSpan;
  // Where a stretch of a run's text came from: text from byte `text` on (to the next's) is the
  // decoded bytes of `source` in the document; `exact` if those are the same bytes.
  struct TextSource {
    size_t text = 0;
    Segment source;
    bool exact = false;
  };
  // Text to translate.
  struct Run {
    std::string text;             // Entities decoded, markup removed, line breaks as spaces.
    std::vector<Inline> inlines;  // Outer ones before the ones they enclose.
    bool attribute = false;       // An alt or title value (no inlines).
    Segment source;               // Its bytes in the document.
    std::vector<TextSource> text_sources;  // In order of `text` (none for an attribute).
    // Ranges of `text` kept as written (HtmlOptions::keep_inline), in order.
    std::vector<Segment> kept;
  };
  // A run's translation: its text and where each of its inlines goes in it.
  using Translated = TranslatedRun;

  // Where `run`'s inlines go in its translation `text` by their relative position, each widened to
  // whole words (an inline over the whole run goes over the whole translation; an empty one stays
  // empty, at the start of a word): for where the decoder's alignment says nothing
  // (text/inline_placement.h).
  static std::vector<Segment> PlaceByPosition(const Run& run, absl::string_view text);

  // The document's bytes that hold `range` of `run`'s text: exactly where its text is the
  // document's bytes (no entity, no line break rewritten), else those of the text nodes it is in.
  static Segment SourceBytes(const Run& run, Segment range);

  // How deep elements may nest, as counted before parsing (see EstimateShape in the .cc):
  // Chromium's HTML parser stops nesting at 512 too.
  static constexpr size_t kMaxDepth = 512;
  // Attributes of one element at most (gumbo's time grows with their square; real pages have a
  // few, generated ones some dozens).
  static constexpr size_t kMaxAttributes = 256;

  // InvalidArgument for elements nested deeper than kMaxDepth or with more than kMaxAttributes
  // attributes, or for input gumbo cannot parse at all (never seen: HTML5 parsing accepts
  // anything).
  static absl::StatusOr<HtmlDocument> Parse(std::string html, const HtmlOptions& options = {});

  const std::vector<Run>& runs() const { return runs_; }

  // Leaves the runs `leave` picks as written: runs() no longer lists them and Render copies their
  // bytes. Returns them, in order. For a caller whose rules are stricter than HTML's (an EPUB's
  // XHTML, which must stay well-formed XML where the HTML parser reads it otherwise).
  std::vector<Run> LeaveAsWritten(const std::function<bool(const Run&)>& leave);

  // The document with each run replaced by its translation (one per run, in order), its text
  // escaped for where it stands and its inlines placed around their ranges. Ranges are clamped:
  // inside the enclosing inline's range, after the previous sibling's where their source ranges
  // were apart, empty where the source's was, and within the text; the tags are written properly
  // nested whatever the ranges (crossing spans split, as above).
  std::string Render(absl::Span<const Translated> translations) const;

 private:
  std::string html_;
  std::vector<Run> runs_;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_HTML_DOCUMENT_H_
