// A Markdown document as translation sees it: the runs of text to translate (a paragraph's,
// heading's, tight list item's or table cell's inline content, up to a hard line break), each as
// text with the inline markup that wrapped parts of it (emphasis, strong, strikethrough, links and
// images, code spans, autolinks, raw inline HTML); and the document rebuilt around their
// translations, every other byte (block markup, code blocks, HTML blocks, front matter, link
// reference definitions, table pipes and delimiter rows) kept as it was.
//
// CommonMark with GitHub's tables, strikethrough, autolinks and task lists, parsed by md4c
// (Debian's libmd4c). md4c reports inline content as events: text with pointers into the input
// (most of it), and span starts and ends without positions. Where a span's markers lie is worked
// out here from the bytes between two texts: a span that ends takes its closing marker from the
// left of the gap (one '*' or '_' for emphasis, two for strong, its '~'s, the code span's
// backticks, a link's "](destination "title")" or "][label]" or "]", an autolink's '>'), a span
// that starts takes its opening marker from the right ('[', "![", '<', backticks...), and what is
// left between is kept: backslashes of escapes as text, line breaks as a space in the text (their
// bytes, with the next line's container markers, written back where the run's text comes back
// unchanged), anything else (an empty link, an image with no alt text) as fixed markup between the
// words. Code spans and autolinks are fixed spans: their words are in the text (so that the
// sentence reads whole and the alignment places them) but their bytes are written as they were.
// Each run is checked: rendered around its own text with its spans where they were, it must be its
// bytes; one that is not (md4c's events do not always say what the bytes are: a code span over a
// quote's lines) is kept as written, untranslated, and its bytes listed (untranslated()) so that
// the caller reports it. Entities and escapes are left in the text as written.
//
// A translation is written escaped where its words would be Markdown syntax (a '*', '_', '`',
// '[', ']', '<', '~', '|' or lone '\' anywhere; a '#', '>', '-', '+', '=' or "1." / "1)" starting
// a line; a heading's closing '#'s), without trailing spaces (a hard break), so that it makes no
// markup the source did not have; escapes it kept from the source and the spans kept
// whole (code spans, autolinks, inline HTML, the source's own markers) are written as they are.
// Emphasis and strikethrough go around the words of their range (spaces and ASCII punctuation at
// its edges left outside), and their delimiters get a space on their outer side where the
// characters beside them would not make them only open (or only close) as in the source; one
// inside another with the same delimiters and around the same words takes the other ('_' for
// '*', '*' for '_').
//
// A translation keeps its run's lines: each line break (with the next line's container markers
// as written) goes at the space nearest its relative position between the markup around it in
// the source (a hard one with no space there between the characters there, a soft one left out).
//
// What does not round-trip through a translation (it does through an unchanged one, byte for
// byte): a soft line break where the translation has no space, and link titles inside a run
// (kept, not translated).
#ifndef MTSERVE_TEXT_MARKDOWN_DOCUMENT_H_
#define MTSERVE_TEXT_MARKDOWN_DOCUMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "text/inline_spans.h"

namespace mtserve {

class MarkdownDocument {
 public:
  // A stretch of a run's text that is the document's bytes `source`, from byte `text` on.
  struct TextSource {
    size_t text = 0;
    Segment source;
  };
  // A line break in a run: the space at `text` in its text stands for `source` in the document
  // (the break and the next line's container markers; empty where the break is inside fixed
  // markup beside it). A hard one (inside a span: outside any, a hard break ends the run) is
  // written in a translation too, at a space where its relative position falls.
  struct Break {
    size_t text = 0;
    Segment source;
    bool hard = false;
  };
  // Text to translate.
  struct Run {
    std::string text;                      // Markup removed, line breaks as spaces.
    std::vector<InlineSpan> inlines;       // Outer ones before the ones they enclose.
    Segment source;                        // Its bytes in the document.
    std::vector<TextSource> text_sources;  // In order of `text`.
    std::vector<Break> breaks;             // In order of `text`.
  };

  // How deep blocks (quotes, lists) and inline spans may nest, together.
  static constexpr size_t kMaxDepth = 128;
  // Cells of one table at most.
  static constexpr size_t kMaxTableCells = 100000;
  // Bytes of one line at most.
  static constexpr size_t kMaxLineBytes = 1 << 18;

  // InvalidArgument naming the part and the limit for a line longer than kMaxLineBytes, blocks
  // and spans nested deeper than kMaxDepth, or a table of more than kMaxTableCells cells.
  static absl::StatusOr<MarkdownDocument> Parse(std::string markdown);

  const std::vector<Run>& runs() const { return runs_; }
  // The bytes of inline content that is not a run although it has text: md4c's events for it
  // could not be mapped back to its bytes, so it is kept as written, untranslated. In order.
  const std::vector<Segment>& untranslated() const { return untranslated_; }

  // The document's bytes that hold `range` of `run`'s text: exactly where its text is the
  // document's bytes, else those of the stretches it is in.
  static Segment SourceBytes(const Run& run, Segment range);

  // The document with each run replaced by its translation (one per run, in order), its inline
  // markup around their ranges (text/inline_spans.h), escaped where it would be Markdown syntax
  // (see above). A run whose translation is its text unchanged is written as it was, line breaks
  // included.
  std::string Render(absl::Span<const TranslatedRun> translations) const;

 private:
  friend class MarkdownCollector;
  std::string markdown_;
  std::vector<Run> runs_;
  std::vector<Segment> untranslated_;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_MARKDOWN_DOCUMENT_H_
