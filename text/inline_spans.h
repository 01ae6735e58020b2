// Inline markup around parts of a run of text (an HTML <b> or <a>, Markdown's emphasis, links and
// code spans) and how it is written back around the run's translation: placed by relative
// position where the decoder's alignment says nothing (text/inline_placement.h places it where
// it does), clamped so that spans nest as they did, and written as well-formed markup. Shared by
// the formats that translate runs with markup (text/html_document.h, text/markdown_document.h).
#ifndef MTSERVE_TEXT_INLINE_SPANS_H_
#define MTSERVE_TEXT_INLINE_SPANS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"

namespace mtserve {

// Markup around part of a run's text.
struct InlineSpan {
  Segment range;      // In the run's text.
  std::string open;   // Written before the range's translation.
  std::string close;  // Written after it. An empty range: both written together, between words.
  int parent = -1;    // The innermost span that encloses its range and was open when it opened,
                      // or -1 (crossing ones are neither's parent).
  // A span whose text is not translated (a Markdown code span, an autolink): `open` holds its
  // source bytes whole and is written in place of the range's translation, whose words only
  // say where it goes; never split or written twice.
  bool fixed = false;
};

// A run's translation: its text and where each of its spans goes in it (one range per span, in
// the same order).
struct TranslatedRun {
  std::string text;
  std::vector<Segment> inlines;
};

// Where the spans of a run of text `source` go in its translation `text` by their relative
// position, each widened to whole words (a span over the whole run goes over the whole
// translation; an empty one stays empty, at the start of a word), and to whole `forms` (the bytes
// of `text` that placed glossary forms and kept spans hold, in order: text/words.h OutsideForms; a
// fixed span leaves a form out rather than writing its own bytes in place of it).
std::vector<Segment> PlaceSpansByPosition(absl::string_view source,
                                          absl::Span<const InlineSpan> spans,
                                          absl::string_view text,
                                          absl::Span<const Segment> forms = {});

// Appends `t` (the translation of a run with `spans`) to `out` with the spans around their
// ranges, its text written by `write_text` (which escapes it for where it stands). Ranges are
// clamped: inside the enclosing span's range, after the previous sibling's where their source
// ranges were apart, empty where the source's was, within the text and on UTF-8 character
// boundaries. Spans open in the order of their ranges' starts (source order among equal ones)
// and close at their ends (an empty one around the spans inside it); a span that ends while one
// opened inside it is still open closes that one first and opens it again after, so crossing
// spans come out nested. A span with an empty `open` (an HTML element the parser makes again) is
// not split; a fixed one is written once and the text in its range is not written.
// `markup_written`, if given, is called after each `open` or `close` is appended: the span's
// index, whether it was its `open`, and where in `out` it begins (a format whose markers depend
// on the characters beside them checks them there).
using MarkupWritten = std::function<void(size_t span, bool open, size_t at)>;
void WriteSpans(absl::Span<const InlineSpan> spans, const TranslatedRun& t,
                const std::function<void(absl::string_view, std::string&)>& write_text,
                std::string& out, const MarkupWritten& markup_written = nullptr);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_INLINE_SPANS_H_
