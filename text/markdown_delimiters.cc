#include "text/markdown_delimiters.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstddef>

#include "absl/strings/ascii.h"

namespace mtserve {
namespace {

// What a character beside a delimiter run is for CommonMark's flanking rules (the line's start
// and end count as space).
enum class Beside { kSpace, kPunctuation, kOther };

Beside Classify(UChar32 c) {
  if (c < 0) return Beside::kOther;
  if (c < 0x80) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      return Beside::kSpace;
    }
    return absl::ascii_ispunct(static_cast<unsigned char>(c)) ? Beside::kPunctuation
                                                              : Beside::kOther;
  }
  const uint32_t mask = U_GET_GC_MASK(c);
  if (mask & U_GC_ZS_MASK) return Beside::kSpace;
  if (mask & U_GC_P_MASK) return Beside::kPunctuation;
  return Beside::kOther;
}

// The character before `at` in `out`.
Beside Before(const std::string& out, size_t at) {
  if (at == 0) return Beside::kSpace;
  int32_t i = static_cast<int32_t>(at);
  UChar32 c;
  U8_PREV(reinterpret_cast<const uint8_t*>(out.data()), 0, i, c);
  return Classify(c);
}

// The character at `at` in `out`, or the first of `rest` (what follows in the document) past its
// end.
Beside After(const std::string& out, size_t at, absl::string_view rest) {
  absl::string_view s = at < out.size() ? absl::string_view(out).substr(at) : rest;
  if (s.empty()) return Beside::kSpace;
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
  return Classify(c);
}

// Whether a run of delimiters with `before` and `after` beside it opens and cannot close
// (left-flanking, not right-flanking: then '_' opens too, and CommonMark's rule of three, which
// depends on the lengths of runs, never applies), or closes and cannot open.
bool OnlyOpens(Beside before, Beside after) {
  return after != Beside::kSpace &&
         (before == Beside::kSpace || (before == Beside::kPunctuation && after == Beside::kOther));
}
bool OnlyCloses(Beside before, Beside after) {
  return before != Beside::kSpace &&
         (after == Beside::kSpace || (after == Beside::kPunctuation && before == Beside::kOther));
}

}  // namespace

char DelimiterOf(const InlineSpan& span) {
  if (span.fixed || span.open.empty()) return 0;
  const char c = span.open[0];
  if (c != '*' && c != '_' && c != '~') return 0;
  for (const std::string* marker : {&span.open, &span.close}) {
    if (marker->find_first_not_of(c) != std::string::npos) return 0;
  }
  return c;
}

void SwitchInnerDelimiters(absl::Span<const InlineSpan> spans, std::vector<Delimiters>& marks,
                           std::string& out) {
  auto adjacent = [&](size_t a, size_t b) {
    return marks[a].at + marks[a].size == marks[b].at && marks[a].c == marks[b].c;
  };
  for (size_t i = 0; i + 1 < marks.size(); ++i) {
    const Delimiters& outer = marks[i];
    const Delimiters& inner = marks[i + 1];
    if (!outer.open || !inner.open || !adjacent(i, i + 1) ||
        spans[inner.span].parent != outer.span) {
      continue;
    }
    size_t close = i + 2;
    while (close < marks.size() && (marks[close].span != inner.span || marks[close].open)) ++close;
    if (close + 1 >= marks.size() || marks[close + 1].span != outer.span || marks[close + 1].open ||
        !adjacent(close, close + 1)) {
      continue;
    }
    // Strong inside the same reads as written ("****x****"), and so does strong inside emphasis.
    const char other = inner.c == '*' ? '_' : inner.c == '_' ? '*' : 0;
    if (other == 0 || inner.size != 1) continue;
    for (const size_t m : {i + 1, close}) {
      std::fill_n(out.begin() + marks[m].at, marks[m].size, other);
      marks[m].c = other;
    }
  }
}

void KeepFlanking(const std::vector<Delimiters>& marks, size_t run_begin, absl::string_view rest,
                  std::string& out) {
  auto is_space = [&](size_t i) { return out[i] == ' ' || out[i] == '\t'; };
  // A space at `at` after nothing but markers on its line ("*" then " _x_*") would make them a
  // block marker (a list item's, a thematic break's...): not written there.
  auto may_space = [&](size_t at) {
    const size_t line = out.find_last_of("\r\n", at == 0 ? 0 : at - 1);
    size_t from = line == std::string::npos || line < run_begin ? run_begin : line + 1;
    while (from < at && (out[from] == ' ' || out[from] == '\t' || out[from] == '>')) ++from;
    return from == at || out.find_first_not_of("*_~-+#=", from) < at;
  };
  ptrdiff_t shift = 0;     // Bytes inserted (or removed) before the marks not yet seen.
  bool last_open = false;  // The run before: whether it opens, and where it ends.
  size_t last_end = std::string::npos;
  auto at = [&](size_t k) {
    return static_cast<size_t>(static_cast<ptrdiff_t>(marks[k].at) + shift);
  };
  for (size_t i = 0; i < marks.size();) {
    // [begin, end): a delimiter run, the adjacent marks of one character and one role.
    size_t begin = at(i), end = begin + marks[i].size;
    size_t j = i + 1;
    while (j < marks.size() && at(j) == end && marks[j].c == marks[i].c &&
           marks[j].open == marks[i].open) {
      end += marks[j].size;
      ++j;
    }
    if (!marks[i].open && j < marks.size() && at(j) == end && marks[j].c == marks[i].c) {
      out.insert(end, 1, ' ');  // A closer, then an opener: two runs.
      ++shift;
    }
    if (marks[i].open) {
      size_t space = end;
      while (space < out.size() && is_space(space)) ++space;
      if (space > end && begin == run_begin) {
        out.erase(end, space - end);  // Spaces starting the line.
        shift -= static_cast<ptrdiff_t>(space - end);
      } else if (space > end) {
        std::rotate(out.begin() + begin, out.begin() + end, out.begin() + space);
        begin += space - end;
        end = space;
      }
      // A space between two openers would keep the outer one from opening.
      const bool after_opener = last_open && last_end == begin;
      if (!OnlyOpens(Before(out, begin), After(out, end, rest)) && may_space(begin) &&
          !after_opener) {
        out.insert(begin, 1, ' ');
        ++shift;
        ++end;
      }
    } else {
      size_t space = begin;
      while (space > run_begin && is_space(space - 1)) --space;
      if (space < begin && end == out.size()) {
        out.erase(space, begin - space);  // Spaces ending the line: a hard break.
        shift -= static_cast<ptrdiff_t>(begin - space);
        end -= begin - space;
        begin = space;
      } else if (space < begin) {
        std::rotate(out.begin() + space, out.begin() + begin, out.begin() + end);
        end -= begin - space;
        begin = space;
      }
      // A space between two closers would keep the outer one from closing.
      const bool before_closer = j < marks.size() && !marks[j].open && at(j) == end;
      if (!OnlyCloses(Before(out, begin), After(out, end, rest)) && may_space(end) &&
          !before_closer) {
        out.insert(end, 1, ' ');
        ++shift;
      }
    }
    last_open = marks[i].open;
    last_end = end;
    i = j;
  }
}

}  // namespace mtserve
