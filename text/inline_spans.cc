#include "text/inline_spans.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "text/words.h"

namespace mtserve {
namespace {

// The spans' target ranges clamped: each inside its parent, within the text, on UTF-8 character
// boundaries, and after the sibling before it if their source ranges were apart (spans that
// crossed in the source may cross in the translation); an empty source range stays empty.
std::vector<Segment> Clamped(absl::Span<const InlineSpan> spans, const TranslatedRun& t) {
  const size_t size = t.text.size();
  auto boundary = [&](size_t i) {
    while (i > 0 && i < size && (static_cast<unsigned char>(t.text[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  const size_t n = spans.size();
  std::vector<Segment> ranges(n);
  std::vector<size_t> low(n);              // The lower bound each one got.
  std::vector<int> last_child(n + 1, -1);  // Per parent (+1: the run).
  for (size_t i = 0; i < n; ++i) {
    const InlineSpan& in = spans[i];
    Segment r = i < t.inlines.size() ? t.inlines[i] : Segment{size, size};
    const Segment outer = in.parent >= 0 ? ranges[in.parent] : Segment{0, size};
    size_t lo = outer.begin;
    if (const int last = last_child[in.parent + 1]; last >= 0) {
      lo = std::max(lo, spans[last].range.end <= in.range.begin ? ranges[last].end : low[last]);
    }
    r.begin = boundary(std::clamp(r.begin, lo, std::max(lo, outer.end)));
    r.begin = std::max(r.begin, lo);
    r.end = in.range.begin == in.range.end
                ? r.begin
                : boundary(std::clamp(r.end, r.begin, std::max(r.begin, outer.end)));
    r.end = std::max(r.end, r.begin);
    ranges[i] = r;
    low[i] = lo;
    last_child[in.parent + 1] = static_cast<int>(i);
  }
  return ranges;
}

}  // namespace

std::vector<Segment> PlaceSpansByPosition(absl::string_view source_text,
                                          absl::Span<const InlineSpan> spans,
                                          absl::string_view text, absl::Span<const Segment> forms) {
  const size_t source = source_text.size(), target = text.size();
  std::vector<Segment> out;
  for (const InlineSpan& in : spans) {
    if (source == 0) {
      out.push_back({0, target});
      continue;
    }
    if (in.range.begin == in.range.end) {
      // Markup around no text stays around none, between words: at the start of the word its
      // relative position falls in (or of the next word, at a space).
      size_t at = in.range.begin == source ? target : in.range.begin * target / source;
      if (at < target && absl::ascii_isspace(static_cast<unsigned char>(text[at]))) {
        while (at < target && absl::ascii_isspace(static_cast<unsigned char>(text[at]))) ++at;
      } else {
        while (at > 0 && !absl::ascii_isspace(static_cast<unsigned char>(text[at - 1]))) --at;
      }
      out.push_back({at, at});
      continue;
    }
    out.push_back(WidenToWords(
        text, {in.range.begin * target / source, (in.range.end * target + source - 1) / source}));
  }
  for (size_t i = 0; i < out.size() && !forms.empty(); ++i) {
    out[i] = OutsideForms(text, out[i], forms, spans[i].fixed);
  }
  return out;
}

void WriteSpans(absl::Span<const InlineSpan> spans, const TranslatedRun& t,
                const std::function<void(absl::string_view, std::string&)>& write_text,
                std::string& out, const MarkupWritten& markup_written) {
  const std::vector<Segment> ranges = Clamped(spans, t);
  const size_t n = spans.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a].begin < ranges[b].begin; });
  const absl::string_view text = t.text;
  auto markup = [&](size_t span, bool open) {
    const size_t at = out.size();
    out += open ? spans[span].open : spans[span].close;
    if (markup_written) markup_written(span, open, at);
  };
  size_t written = 0;
  std::vector<size_t> open;  // Open spans, outermost first.
  auto text_to = [&](size_t position) {
    if (position <= written) return;
    // The text in a fixed span's range is not written: the span's own bytes stand for it.
    if (std::none_of(open.begin(), open.end(), [&](size_t i) { return spans[i].fixed; })) {
      write_text(text.substr(written, position - written), out);
    }
    written = position;
  };
  std::vector<char> ancestor(n, 0);  // Of the span about to be written.
  std::vector<char> has_child(n, 0);
  for (const InlineSpan& span : spans) {
    if (span.parent >= 0) has_child[span.parent] = 1;
  }
  // Closes the open spans that end before `position`, or at it unless they enclose the next span
  // (`keep`: its ancestors stay open), each at its end.
  auto close_to = [&](size_t position) {
    while (true) {
      auto must_close = [&](size_t i) {
        return ranges[i].end < position || (ranges[i].end == position && !ancestor[i]);
      };
      size_t first = open.size(), at = 0;
      for (size_t d = 0; d < open.size(); ++d) {
        if (!must_close(open[d])) continue;
        if (first == open.size() || ranges[open[d]].end < at) at = ranges[open[d]].end;
        first = std::min(first, d);
      }
      if (first == open.size()) return;
      // Those ending at `at` close there; the spans above them close and open again.
      size_t lowest = open.size();
      for (size_t d = 0; d < open.size(); ++d) {
        if (must_close(open[d]) && ranges[open[d]].end == at) {
          lowest = d;
          break;
        }
      }
      text_to(at);
      std::vector<size_t> reopen;
      for (size_t d = open.size(); d-- > lowest;) {
        const InlineSpan& in = spans[open[d]];
        if (must_close(open[d]) && ranges[open[d]].end == at) {
          markup(open[d], false);
        } else {
          // A span with no start tag to write (one the parser makes again), or a fixed one, is
          // not split.
          if (!in.open.empty() && !in.fixed) markup(open[d], false);
          reopen.push_back(open[d]);
        }
      }
      open.resize(lowest);
      for (size_t k = reopen.size(); k-- > 0;) {
        if (!spans[reopen[k]].fixed) markup(reopen[k], true);
        open.push_back(reopen[k]);
      }
    }
  };
  for (size_t i : order) {
    for (int a = spans[i].parent; a >= 0; a = spans[a].parent) ancestor[a] = 1;
    close_to(ranges[i].begin);
    for (int a = spans[i].parent; a >= 0; a = spans[a].parent) ancestor[a] = 0;
    text_to(ranges[i].begin);
    markup(i, true);
    if (ranges[i].begin == ranges[i].end && !has_child[i]) {
      markup(i, false);
    } else {
      open.push_back(i);  // An empty one with spans inside stays open while they are written.
    }
  }
  close_to(std::numeric_limits<size_t>::max());
  text_to(text.size());
}

}  // namespace mtserve
