#include "text/markdown_document.h"

#include <md4c.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/markdown_delimiters.h"

namespace mtserve {
namespace {

// Where YAML front matter ends: a "---" line at the very start, up to the next "---" or "..."
// line; 0 if the document has none (or leaves it unclosed).
size_t FrontMatterEnd(absl::string_view s) {
  if (!absl::StartsWith(s, "---\n") && !absl::StartsWith(s, "---\r\n")) return 0;
  size_t position = s.find('\n') + 1;
  while (position < s.size()) {
    const size_t eol = s.find('\n', position);
    absl::string_view line =
        s.substr(position, (eol == absl::string_view::npos ? s.size() : eol) - position);
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    if (line == "---" || line == "...") return eol == absl::string_view::npos ? s.size() : eol + 1;
    if (eol == absl::string_view::npos) break;
    position = eol + 1;
  }
  return 0;
}

// Whether text written at the end of `out` starts a line's content: nothing of the run written yet
// (a run starts its block's inline content, after its block markers, or a line after a hard
// break), or only a blockquote's markers and spaces since a line break the run wrote (one inside
// markup it keeps).
bool AtLineStart(const std::string& out, size_t run_begin) {
  if (out.size() == run_begin) return true;
  const size_t line = out.find_last_of("\r\n");  // A CR alone ends a line too.
  if (line == std::string::npos || line < run_begin) return false;
  return out.find_first_not_of(" \t>", line + 1) == std::string::npos;
}

// Appends `piece` of a translation (the rest of the translation after it is `rest`) escaped so
// that the model's words make no Markdown syntax where they stand (CommonMark's backslash escape
// of ASCII punctuation renders the character itself, so escaping more than needed is safe):
// - anywhere: the characters that open or close inline syntax ('*', '_', '[', ']', '<', '~', '|',
//   a lone '\'; a '`', escaped or not, as "&#96;", since a backslash does not stop a backtick
//   from closing a code span that a backtick the source left unmatched opened); a backslash
//   before other ASCII punctuation is an escape the model kept from the source, written as it
//   is; the model's line break is written as a space (the run's own are placed apart);
// - at the start of a line: its leading spaces and tabs are dropped (four would be code) and a
//   block marker escaped ('#', '>', '-', '+', '=', the '.' or ')' after digits);
// - a '#' followed by nothing but '#'s and spaces to the translation's end (a heading's closing
//   sequence).
// '&' is not escaped: entities are left in the run's text as written, so a translation holds the
// source's own.
void AppendEscaped(absl::string_view piece, absl::string_view rest, size_t run_begin,
                   std::string& out) {
  size_t k = 0;
  if (AtLineStart(out, run_begin)) {
    while (k < piece.size() &&
           (piece[k] == ' ' || piece[k] == '\t' || piece[k] == '\n' || piece[k] == '\r')) {
      ++k;
    }
    if (k < piece.size()) {
      const char c = piece[k];
      if (c == '#' || c == '>' || c == '-' || c == '+' || c == '=') {
        out += '\\';
        out += c;
        ++k;
      } else if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        size_t d = k;
        while (d < piece.size() && absl::ascii_isdigit(static_cast<unsigned char>(piece[d]))) ++d;
        if (d < piece.size() && (piece[d] == '.' || piece[d] == ')')) {
          out.append(piece.data() + k, d - k);
          out += '\\';
          out += piece[d];
          k = d + 1;
        }
      }
    }
  }
  for (; k < piece.size(); ++k) {
    const char c = piece[k];
    switch (c) {
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '\\':
        if (k + 1 < piece.size() && piece[k + 1] == '`') {
          out += "&#96;";  // See above.
          ++k;
        } else if (k + 1 < piece.size() &&
                   absl::ascii_ispunct(static_cast<unsigned char>(piece[k + 1]))) {
          out.append(piece.data() + k, 2);  // An escape as the source wrote it.
          ++k;
        } else {
          out += "\\\\";
        }
        break;
      case '#': {
        constexpr absl::string_view kClosing = "# \t\r\n";
        if (piece.find_first_not_of(kClosing, k + 1) == absl::string_view::npos &&
            rest.find_first_not_of(kClosing) == absl::string_view::npos) {
          out += '\\';
        }
        out += c;
        break;
      }
      case '`':
        out += "&#96;";
        break;
      case '*':
      case '_':
      case '[':
      case ']':
      case '<':
      case '~':
      case '|':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
}

// A line break placed in a translation: its bytes (with the next line's container markers) are
// written at `at`, in place of the space there if `on_space`.
struct PlacedBreak {
  size_t at = 0;
  bool on_space = false;
  Segment source;
  bool hard = false;
};

// Where `run`'s line breaks go in its translation `t`, so that it keeps the source's lines (a
// paragraph's lines decide some of what it is: one line, then a delimiter row, is a table's
// header): each between the markup of the spans before it and after it in the source, inside
// those around it, at the first of the spaces there nearest its relative position (a hard break
// with no space there between the characters there; a soft one is left out), in order; never at
// the translation's start or end (a hard break ends no paragraph).
std::vector<PlacedBreak> PlaceBreaks(absl::string_view md, const MarkdownDocument::Run& run,
                                     const TranslatedRun& t) {
  std::vector<PlacedBreak> placed;
  const absl::string_view text = t.text;
  const size_t source = run.text.size(), target = text.size();
  // The bounds of each break in the translation, and the source positions that correspond.
  size_t lowest = 1, source_lowest = 1;
  for (const MarkdownDocument::Break& b : run.breaks) {
    if (b.source.begin == b.source.end || source == 0 || target < 2) continue;
    size_t lo = lowest, hi = target - 1, source_lo = source_lowest, source_hi = source - 1;
    for (size_t k = 0; k < run.inlines.size() && k < t.inlines.size(); ++k) {
      const Segment s = run.inlines[k].range;
      const size_t begin = std::min(t.inlines[k].begin, target);
      const size_t end = std::clamp(t.inlines[k].end, begin, target);
      auto at_least = [&](size_t bound, size_t source_bound) {
        if (bound >= lo) std::tie(lo, source_lo) = std::pair(bound, source_bound);
      };
      auto at_most = [&](size_t bound, size_t source_bound) {
        if (bound <= hi) std::tie(hi, source_hi) = std::pair(bound, source_bound);
      };
      if (s.end <= b.text) {
        at_least(end, s.end);
      } else if (s.begin > b.text) {
        at_most(begin == 0 ? 0 : begin - 1, s.begin - 1);
      } else {
        at_least(begin, s.begin);
        at_most(end == 0 ? 0 : end - 1, s.end - 1);
      }
    }
    if (lo > hi) continue;
    // Where its place between those bounds in the source falls between them in the translation.
    const size_t offset = b.text > source_lo ? b.text - source_lo : 0;
    const size_t p = std::clamp(
        lo + (source_hi > source_lo ? offset * (hi - lo) / (source_hi - source_lo) : 0), lo, hi);
    std::optional<size_t> space;
    for (size_t d = 0; !space.has_value() && (p >= lo + d || p + d <= hi); ++d) {
      if (p + d <= hi && text[p + d] == ' ') {
        space = p + d;
      } else if (p >= lo + d && text[p - d] == ' ') {
        space = p - d;
      }
    }
    size_t at = space.value_or(p);
    if (space.has_value()) {
      // The first of several spaces: those before a line break would be a hard break.
      while (at > lo && text[at - 1] == ' ') --at;
    } else {
      // A soft break between characters would show as a space.
      if (!b.hard) continue;
      while (at > lo && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
      if ((static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) continue;
    }
    placed.push_back({at, space.has_value(), b.source, b.hard});
    // The next one after a character that is not a space (a line of spaces is a blank line),
    // unless the line this one starts holds more than container markers (NULs).
    const absl::string_view bytes = md.substr(b.source.begin, b.source.end - b.source.begin);
    const size_t line = bytes.find_last_of("\r\n");
    lowest = at + (space.has_value() ? 1 : 0);
    if (line == absl::string_view::npos ||
        bytes.find_first_not_of(" \t>", line + 1) == absl::string_view::npos) {
      while (lowest < target && text[lowest] == ' ') ++lowest;
      ++lowest;
    }
    source_lowest = b.text + 1;
  }
  return placed;
}

// Appends `run`'s translation `t` with its spans (text/inline_spans.h): its line breaks as written
// if its text is unchanged, else escaped (AppendEscaped), its emphasis and strikethrough around
// words with no whitespace or ASCII punctuation at their edges, and their delimiters made to open
// and close as in the source (KeepFlanking).
void RenderRun(const std::string& md, const MarkdownDocument::Run& run, const TranslatedRun& t,
               std::string& out) {
  using Break = MarkdownDocument::Break;
  const bool unchanged = t.text == run.text;
  const size_t run_begin = out.size();
  // A translation's trailing spaces would be a hard break before the line break that follows.
  const size_t kept = unchanged ? t.text.size() : t.text.find_last_not_of(" \t\r\n") + 1;
  TranslatedRun written =
      kept == t.text.size() ? t : TranslatedRun{t.text.substr(0, kept), t.inlines};
  std::vector<Delimiters> marks;
  // Its line breaks, placed among its spans as the translation has them.
  const std::vector<PlacedBreak> breaks_placed =
      unchanged ? std::vector<PlacedBreak>() : PlaceBreaks(md, run, written);
  if (!unchanged) {
    // Emphasis around the words, not the spaces or quotes beside them (nor past the spans inside
    // it, which keep their words, or its hard line breaks, which stay inside).
    const size_t n = std::min(run.inlines.size(), written.inlines.size());
    for (size_t i = 0; i < n; ++i) {
      if (DelimiterOf(run.inlines[i]) == 0) continue;
      Segment& range = written.inlines[i];
      size_t b = range.begin, e = std::min(range.end, written.text.size());
      size_t lowest = e, highest = b;  // Of the ranges of the spans inside it.
      for (size_t c = i + 1; c < n; ++c) {
        if (run.inlines[c].parent != static_cast<int>(i)) continue;
        lowest = std::min(lowest, written.inlines[c].begin);
        highest = std::max(highest, written.inlines[c].end);
      }
      for (const PlacedBreak& placed : breaks_placed) {
        if (!placed.hard || placed.at < b || placed.at >= e) continue;
        // With a character of the range that is not a space on each side: a marker beside the
        // break would have a line's end (a space) beside it.
        size_t before = placed.at, after = placed.at + 1;
        while (before > b && written.text[before - 1] == ' ') --before;
        while (after < e && written.text[after] == ' ') ++after;
        lowest = std::min(lowest, before == 0 ? 0 : before - 1);
        highest = std::max(highest, std::min(after + 1, e));
      }
      auto edge = [&](size_t k) {
        const unsigned char c = written.text[k];
        return absl::ascii_isspace(c) || absl::ascii_ispunct(c);
      };
      while (b < e && b < lowest && edge(b)) ++b;
      while (e > b && e > highest && edge(e - 1)) --e;
      if (b < e) range = {b, e};
    }
  }
  auto write_text = [&](absl::string_view piece, std::string& out) {
    if (unchanged) {
      // Its line breaks as written.
      size_t position = piece.data() - t.text.data();
      const size_t end = position + piece.size();
      auto b = std::lower_bound(run.breaks.begin(), run.breaks.end(), position,
                                [](const Break& b, size_t p) { return b.text < p; });
      for (; b != run.breaks.end() && b->text < end; ++b) {
        out.append(t.text, position, b->text - position);
        out.append(md, b->source.begin, b->source.end - b->source.begin);
        position = b->text + 1;
      }
      if (position < end) out.append(t.text, position, end - position);
      return;
    }
    // Its line breaks where they were placed.
    const absl::string_view text = written.text;
    size_t position = piece.data() - text.data();
    const size_t end = position + piece.size();
    for (const PlacedBreak& b : breaks_placed) {
      if (b.at < position || b.at >= end) continue;
      AppendEscaped(text.substr(position, b.at - position), text.substr(b.at), run_begin, out);
      out.append(md, b.source.begin, b.source.end - b.source.begin);
      position = b.at + (b.on_space ? 1 : 0);
    }
    AppendEscaped(text.substr(position, end - position), text.substr(end), run_begin, out);
  };
  const MarkupWritten delimiters = [&](size_t span, bool open, size_t at) {
    const InlineSpan& in = run.inlines[span];
    if (const char c = DelimiterOf(in); c != 0) {
      marks.push_back({at, (open ? in.open : in.close).size(), c, open, static_cast<int>(span)});
    }
  };
  WriteSpans(run.inlines, unchanged ? t : written, write_text, out,
             unchanged ? MarkupWritten() : delimiters);
  if (!unchanged) {
    SwitchInnerDelimiters(run.inlines, marks, out);
    KeepFlanking(marks, run_begin, absl::string_view(md).substr(run.source.end), out);
  }
}

}  // namespace

// Turns md4c's events into runs (see the header for how markers are found).
class MarkdownCollector {
 public:
  MarkdownCollector(const std::string& markdown, std::vector<MarkdownDocument::Run>& runs,
                    std::vector<Segment>& untranslated)
      : md_(markdown), runs_(runs), untranslated_(untranslated) {}

  absl::Status status() const { return status_; }

  int EnterBlock(MD_BLOCKTYPE type) {
    EndRun();
    if (Deeper()) return 1;
    blocks_.push_back(type);
    if (type == MD_BLOCK_TABLE) cells_ = 0;
    if ((type == MD_BLOCK_TH || type == MD_BLOCK_TD) &&
        ++cells_ > MarkdownDocument::kMaxTableCells) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("the Markdown has a table of more than ", MarkdownDocument::kMaxTableCells,
                       " cells; the limit is ", MarkdownDocument::kMaxTableCells));
      return 1;
    }
    return 0;
  }

  int LeaveBlock() {
    EndRun();
    if (!blocks_.empty()) blocks_.pop_back();
    --depth_;
    return 0;
  }

  int EnterSpan(MD_SPANTYPE type) {
    if (Deeper()) return 1;
    if (!InLeaf()) return 0;
    NewRun();
    Run& run = *run_;
    InlineSpan span;
    span.range = {run.text.size(), run.text.size()};
    span.parent = open_.empty() ? -1 : open_.back();
    run.inlines.push_back(std::move(span));
    info_.push_back({type});
    const int index = static_cast<int>(run.inlines.size()) - 1;
    open_.push_back(index);
    pending_.push_back({Event::kEnter, index});
    return 0;
  }

  int LeaveSpan() {
    --depth_;
    if (!InLeaf() || !run_.has_value() || open_.empty()) return 0;
    const int index = open_.back();
    open_.pop_back();
    run_->inlines[index].range.end = run_->text.size();
    pending_.push_back({Event::kLeave, index});
    return 0;
  }

  int Text(MD_TEXTTYPE type, const char* text, size_t size) {
    const char* base = md_.data();
    const bool in_input = text >= base && text + size <= base + md_.size();
    if (!InLeaf()) {
      if (in_input) cursor_ = std::max(cursor_, static_cast<size_t>(text - base) + size);
      return 0;
    }
    if (type == MD_TEXT_NULLCHAR) return 0;  // Its byte stays in the gap: kept as text.
    if (type == MD_TEXT_BR || type == MD_TEXT_SOFTBR) {
      if (!run_.has_value()) return 0;
      // A hard break outside any span ends the run: the lines are translated apart, and the
      // break is kept as written.
      if (type == MD_TEXT_BR && open_.empty()) {
        EndRun();
        return 0;
      }
      pending_.push_back({Event::kBreak, -1, type == MD_TEXT_BR});
      return 0;
    }
    NewRun();
    Run& run = *run_;
    if (!in_input) {
      // A line break inside a code span, which md4c reports as a space of its own: a break.
      if (type == MD_TEXT_CODE) {
        pending_.push_back({Event::kBreak, -1});
      } else {
        failed_ = true;
      }
      return 0;
    }
    const size_t begin = text - base;
    seen_.begin = std::min(seen_.begin, begin);
    seen_.end = std::max(seen_.end, begin + size);
    if (started_ ? begin < run_cursor_ : begin < cursor_) {
      failed_ = true;
      return 0;
    }
    if (!started_) {
      Start(begin);
    } else {
      Middle(begin);
    }
    pending_.clear();
    if (type == MD_TEXT_HTML) {
      // Raw inline HTML: kept as written, between the words where it stands.
      InlineSpan tag;
      tag.range = {run.text.size(), run.text.size()};
      tag.open = md_.substr(begin, size);
      tag.parent = open_.empty() ? -1 : open_.back();
      tag.fixed = true;
      run.inlines.push_back(std::move(tag));
      info_.push_back({MD_SPAN_CODE});
    } else {
      run.text_sources.push_back({run.text.size(), {begin, begin + size}});
      run.text.append(text, size);
    }
    run_cursor_ = begin + size;
    cursor_ = std::max(cursor_, run_cursor_);
    return 0;
  }

  // Ends the run being collected (at a block's start or end, or a hard break).
  void EndRun() {
    if (!run_.has_value()) return;
    Segment kept = seen_;  // Where a run that cannot be translated is.
    if (started_) kept.begin = std::min(kept.begin, run_->source.begin);
    bool translated = !failed_;
    if (started_ && !failed_) {
      size_t position = run_cursor_;
      Forward(0, pending_.size(), position, md_.size());
      run_->source.end = position;
      // Checked: the run rendered around its own text is its bytes. A run whose markers were
      // not all found (md4c's events are not always what the source's bytes say) is kept as
      // written, untranslated.
      TranslatedRun same{run_->text, {}};
      for (const InlineSpan& span : run_->inlines) same.inlines.push_back(span.range);
      std::string rendered;
      RenderRun(md_, *run_, same, rendered);
      // And every span's markers were found (a code span md4c gave texts that are not its bytes
      // has no closing marker): the text inside a span whose markers were not is not known to be
      // text, and a translation would be escaped around it.
      const bool markers_found = std::all_of(
          run_->inlines.begin(), run_->inlines.end(),
          [](const InlineSpan& s) { return s.fixed || (!s.open.empty() && !s.close.empty()); });
      if (!run_->text.empty() && open_.empty() && markers_found &&
          rendered ==
              absl::string_view(md_).substr(run_->source.begin, position - run_->source.begin)) {
        cursor_ = std::max(cursor_, position);
        runs_.push_back(*std::move(run_));
      } else if (!run_->text.empty()) {  // Not one with nothing to translate (inline HTML).
        translated = false;
        kept.end = std::max(kept.end, position);
      }
    }
    // Reported (never silently left untranslated): the bytes of its texts, and of the markers
    // found around them.
    // (Not before the last run: md4c may point a text back into bytes already accounted for.)
    if (!runs_.empty()) kept.begin = std::max(kept.begin, runs_.back().source.end);
    if (!translated && kept.begin < kept.end) untranslated_.push_back(kept);
    seen_ = {std::string::npos, 0};
    run_.reset();
    info_.clear();
    open_.clear();
    pending_.clear();
    started_ = failed_ = false;
  }

 private:
  using Run = MarkdownDocument::Run;
  struct Event {
    enum Kind { kEnter, kLeave, kBreak } kind;
    int span;
    bool hard = false;  // A break: a hard one.
  };
  // What the markers of an inline span turned out to be.
  struct SpanInfo {
    MD_SPANTYPE type;
    char mark = 0;          // A link's '[' or an autolink's '<' (0: an autolink without).
    size_t count = 0;       // A code span's backticks, a strikethrough's tildes.
    size_t open_begin = 0;  // Where its opening marker starts.
    bool opened = false;    // Whether its opening marker was found.
  };

  bool Deeper() {
    if (++depth_ <= MarkdownDocument::kMaxDepth) return false;
    status_ = absl::InvalidArgumentError(absl::StrCat(
        "the Markdown nests blocks and inline spans more than ", MarkdownDocument::kMaxDepth,
        " deep; the limit is ", MarkdownDocument::kMaxDepth));
    return true;
  }

  void NewRun() {
    if (run_.has_value()) return;
    run_.emplace();
  }

  bool InLeaf() const {
    if (blocks_.empty()) return false;
    const MD_BLOCKTYPE top = blocks_.back();
    return top == MD_BLOCK_P || top == MD_BLOCK_H || top == MD_BLOCK_TH || top == MD_BLOCK_TD ||
           top == MD_BLOCK_LI;
  }

  char At(size_t i) const { return i < md_.size() ? md_[i] : '\0'; }

  // The width of span `s`'s opening marker ending at `end`, no lower than `lower`.
  std::optional<size_t> OpenBefore(int s, size_t end, size_t lower) {
    SpanInfo& info = info_[s];
    const size_t room = end - lower;
    auto ends_with = [&](absl::string_view marker) {
      return room >= marker.size() &&
             absl::string_view(md_).substr(end - marker.size(), marker.size()) == marker;
    };
    switch (info.type) {
      case MD_SPAN_EM:
        if (ends_with("*") || ends_with("_")) return 1;
        return std::nullopt;
      case MD_SPAN_STRONG:
        if (ends_with("**") || ends_with("__")) return 2;
        return std::nullopt;
      case MD_SPAN_DEL: {
        size_t n = 0;
        while (n < 2 && n < room && md_[end - n - 1] == '~') ++n;
        if (n == 0) return std::nullopt;
        info.count = n;
        return n;
      }
      case MD_SPAN_A:
        if (ends_with("[") || ends_with("<")) {
          info.mark = md_[end - 1];
          return 1;
        }
        info.mark = 0;
        return 0;
      case MD_SPAN_IMG:
        if (ends_with("![")) {
          info.mark = '[';
          return 2;
        }
        return std::nullopt;
      case MD_SPAN_CODE: {
        size_t k = end;
        if (k > lower && (md_[k - 1] == ' ' || md_[k - 1] == '\n')) {
          size_t j = k - 1;
          if (md_[j] == '\n' && j > lower && md_[j - 1] == '\r') --j;
          if (j > lower && md_[j - 1] == '`') k = j;
        }
        size_t n = 0;
        while (k - n > lower && md_[k - n - 1] == '`') ++n;
        if (n == 0) return std::nullopt;
        info.count = n;
        return end - (k - n);
      }
      default:
        return std::nullopt;
    }
  }

  // The width of span `s`'s opening marker starting at `begin`, below `limit` (an empty span's).
  std::optional<size_t> OpenAfter(int s, size_t begin, size_t limit) {
    SpanInfo& info = info_[s];
    auto starts_with = [&](absl::string_view marker) {
      return limit - begin >= marker.size() &&
             absl::string_view(md_).substr(begin, marker.size()) == marker;
    };
    switch (info.type) {
      case MD_SPAN_A:
        if (starts_with("[") || starts_with("<")) {
          info.mark = md_[begin];
          return 1;
        }
        return std::nullopt;
      case MD_SPAN_IMG:
        if (starts_with("![")) {
          info.mark = '[';
          return 2;
        }
        return std::nullopt;
      default:
        return std::nullopt;  // Only links and images may be empty.
    }
  }

  // The end of a link's inline destination and title "(...)" starting at `p`, or nullopt.
  std::optional<size_t> InlineTail(size_t p, size_t limit) const {
    auto skip_space = [&](size_t q) {
      while (q < limit && (md_[q] == ' ' || md_[q] == '\t' || md_[q] == '\n' || md_[q] == '\r')) {
        ++q;
      }
      return q;
    };
    size_t q = skip_space(p + 1);
    if (q < limit && md_[q] == '<') {
      for (++q; q < limit && md_[q] != '>' && md_[q] != '\n'; ++q) {
        if (md_[q] == '\\') ++q;
      }
      if (q >= limit || md_[q] != '>') return std::nullopt;
      ++q;
    } else {
      int depth = 0;
      while (q < limit) {
        const unsigned char c = md_[q];
        if (c == '\\') {
          q += 2;
          continue;
        }
        if (c <= ' ') break;
        if (c == '(') ++depth;
        if (c == ')' && depth-- == 0) break;
        ++q;
      }
      q = std::min(q, limit);
    }
    q = skip_space(q);
    if (q < limit && (md_[q] == '"' || md_[q] == '\'' || md_[q] == '(')) {
      const char close = md_[q] == '(' ? ')' : md_[q];
      for (++q; q < limit && md_[q] != close; ++q) {
        if (md_[q] == '\\') ++q;
      }
      if (q >= limit) return std::nullopt;
      q = skip_space(q + 1);
    }
    if (q < limit && md_[q] == ')') return q + 1;
    return std::nullopt;
  }

  // The width of span `s`'s closing marker starting at `begin`, below `limit`.
  std::optional<size_t> CloseAfter(int s, size_t begin, size_t limit) {
    const SpanInfo& info = info_[s];
    auto starts_with = [&](absl::string_view marker) {
      return limit - begin >= marker.size() &&
             absl::string_view(md_).substr(begin, marker.size()) == marker;
    };
    switch (info.type) {
      case MD_SPAN_EM:
        if (starts_with("*") || starts_with("_")) return 1;
        return std::nullopt;
      case MD_SPAN_STRONG:
        if (starts_with("**") || starts_with("__")) return 2;
        return std::nullopt;
      case MD_SPAN_DEL: {
        size_t n = 0;
        while (n < info.count && begin + n < limit && md_[begin + n] == '~') ++n;
        if (n == 0 || n != info.count) return std::nullopt;
        return n;
      }
      case MD_SPAN_CODE: {
        size_t k = begin;
        if (k < limit && (md_[k] == ' ' || md_[k] == '\r' || md_[k] == '\n')) {
          size_t j = k + (md_[k] == '\r' && At(k + 1) == '\n' ? 2 : 1);
          if (j < limit && md_[j] == '`') k = j;
        }
        size_t n = 0;
        while (k + n < limit && md_[k + n] == '`') ++n;
        if (n != info.count) return std::nullopt;
        return k + n - begin;
      }
      case MD_SPAN_A:
      case MD_SPAN_IMG: {
        if (info.mark == 0) return 0;
        if (info.mark == '<') return starts_with(">") ? std::optional<size_t>(1) : std::nullopt;
        if (!starts_with("]")) return std::nullopt;
        const size_t p = begin + 1;
        if (p < limit && md_[p] == '(') {
          if (std::optional<size_t> end = InlineTail(p, limit)) return *end - begin;
        }
        if (p < limit && md_[p] == '[') {
          size_t q = p + 1;
          while (q < limit && md_[q] != ']' && md_[q] != '[') q += md_[q] == '\\' ? 2 : 1;
          if (q < limit && md_[q] == ']') return q + 1 - begin;
        }
        return 1;
      }
      default:
        return std::nullopt;
    }
  }

  // Takes the markers of pending_[first, last) from `position` on (not past `limit`), moving it
  // past them; stops at the first it cannot take (or a line break). Returns where it stopped.
  size_t Forward(size_t first, size_t last, size_t& position, size_t limit) {
    Run& run = *run_;
    for (size_t e = first; e < last; ++e) {
      const Event& event = pending_[e];
      if (event.kind == Event::kBreak) return e;
      InlineSpan& span = run.inlines[event.span];
      SpanInfo& info = info_[event.span];
      if (event.kind == Event::kEnter) {
        const std::optional<size_t> width = OpenAfter(event.span, position, limit);
        if (!width.has_value()) return e;
        Opened(event.span, position, *width);
        position += *width;
      } else {
        if (!info.opened) return e;
        const std::optional<size_t> width = CloseAfter(event.span, position, limit);
        if (!width.has_value()) return e;
        if (info.type == MD_SPAN_CODE || (info.type == MD_SPAN_A && info.mark != '[')) {
          // Its bytes whole, from its opening marker to its closing one.
          span.fixed = true;
          span.open = md_.substr(info.open_begin, position + *width - info.open_begin);
        } else {
          span.close = md_.substr(position, *width);
        }
        position += *width;
      }
    }
    return last;
  }

  void Opened(int s, size_t begin, size_t width) {
    InlineSpan& span = run_->inlines[s];
    SpanInfo& info = info_[s];
    info.opened = true;
    info.open_begin = begin;
    span.open = md_.substr(begin, width);
  }

  // The first text of the run starts at `begin`: its opening markers are taken from before it,
  // back to the end of what came before; what they leave stays before the run, kept.
  void Start(size_t begin) {
    size_t position = begin;
    for (size_t e = pending_.size(); e-- > 0;) {
      const Event& event = pending_[e];
      if (event.kind != Event::kEnter) break;
      const std::optional<size_t> width = OpenBefore(event.span, position, cursor_);
      if (!width.has_value()) break;
      Opened(event.span, position - *width, *width);
      position -= *width;
    }
    run_->source.begin = position;
    started_ = true;
  }

  // The bytes from the last text to the next one's `end`: closing markers from the left,
  // opening ones from the right, the rest kept between them (see the header).
  void Middle(size_t end) {
    Run& run = *run_;
    size_t left = run_cursor_;
    size_t suffix = pending_.size();  // The enters that open spans around the next text.
    while (suffix > 0 && pending_[suffix - 1].kind == Event::kEnter) --suffix;
    const size_t stopped = Forward(0, suffix, left, end);
    size_t right = end, opened = pending_.size();
    for (size_t e = pending_.size(); e-- > suffix;) {
      const std::optional<size_t> width = OpenBefore(pending_[e].span, right, left);
      if (!width.has_value()) break;
      Opened(pending_[e].span, right - *width, *width);
      right -= *width;
      opened = e;
    }
    bool has_break = false, hard = false, other = false;
    for (size_t e = stopped; e < opened; ++e) {
      (pending_[e].kind == Event::kBreak ? has_break : other) = true;
      hard = hard || (pending_[e].kind == Event::kBreak && pending_[e].hard);
    }
    if (left == right) return;
    // Bytes md4c left out of its texts are text only if they are escapes' backslashes (or NULs):
    // anything else (markers it did not report where we look for them) is markup, kept as
    // written, so that a translation's escaping never touches it.
    if (!has_break &&
        absl::string_view(md_)
                .substr(left, right - left)
                .find_first_not_of(absl::string_view("\\\0", 2)) != absl::string_view::npos) {
      other = true;
    }
    // What is kept goes before the spans whose markers were not taken from the left.
    const size_t before = run.text.size();
    int at = static_cast<int>(run.inlines.size());
    for (size_t e = stopped; e < pending_.size(); ++e) {
      if (pending_[e].kind == Event::kEnter) at = std::min(at, pending_[e].span);
    }
    if (!other && !has_break) {
      // Escapes' backslashes and whatever else md4c left out of its texts: text as written.
      run.text_sources.push_back({run.text.size(), {left, right}});
      run.text.append(md_, left, right - left);
    } else if (!other) {
      run.breaks.push_back({run.text.size(), {left, right}, hard});
      run.text += ' ';
    } else if (has_break) {
      run.breaks.push_back({run.text.size(), {left, left}});
      run.text += ' ';
    }
    const size_t shift = run.text.size() - before;
    for (size_t e = stopped; e < pending_.size(); ++e) {
      if (pending_[e].kind != Event::kEnter) continue;
      run.inlines[pending_[e].span].range.begin += shift;
      run.inlines[pending_[e].span].range.end += shift;
    }
    if (!other) return;
    // Kept as fixed markup where it stands.
    InlineSpan kept;
    kept.range = {run.text.size(), run.text.size()};
    kept.open = md_.substr(left, right - left);
    kept.fixed = true;
    for (int s : open_) {
      if (s < at) kept.parent = s;
    }
    // Only spans after `at` can have a parent at or after it (a parent comes first).
    for (size_t s = at; s < run.inlines.size(); ++s) {
      if (run.inlines[s].parent >= at) ++run.inlines[s].parent;
    }
    for (int& s : open_) {
      if (s >= at) ++s;
    }
    run.inlines.insert(run.inlines.begin() + at, std::move(kept));
    info_.insert(info_.begin() + at, SpanInfo{MD_SPAN_CODE});
  }

  const std::string& md_;
  std::vector<Run>& runs_;
  std::vector<Segment>& untranslated_;
  absl::Status status_;
  size_t depth_ = 0;
  size_t cells_ = 0;
  std::vector<MD_BLOCKTYPE> blocks_;
  size_t cursor_ = 0;  // Bytes before it are accounted for (in a run or kept).
  // The run being collected.
  std::optional<Run> run_;
  std::vector<SpanInfo> info_;  // Per inline of run_.
  std::vector<int> open_;       // Inlines of run_ open now, outermost first.
  std::vector<Event> pending_;  // Since the last text.
  bool started_ = false;        // Whether run_ has a text (and so its start).
  bool failed_ = false;         // Whether its markup could not be mapped: kept, not translated.
  size_t run_cursor_ = 0;       // The end of run_'s last text.
  Segment seen_{std::string::npos, 0};  // The bytes of run_'s texts in the input.
};

absl::StatusOr<MarkdownDocument> MarkdownDocument::Parse(std::string markdown) {
  for (size_t line = 1, begin = 0; begin < markdown.size(); ++line) {
    size_t end = markdown.find('\n', begin);
    if (end == std::string::npos) end = markdown.size();
    if (end - begin > kMaxLineBytes) {
      return absl::InvalidArgumentError(absl::StrCat("the Markdown's line ", line, " has ",
                                                     end - begin, " bytes; the limit is ",
                                                     kMaxLineBytes));
    }
    begin = end + 1;
  }
  MarkdownDocument document;
  document.markdown_ = std::move(markdown);
  const std::string& md = document.markdown_;
  const size_t front_matter = FrontMatterEnd(md);
  MarkdownCollector collector(md, document.runs_, document.untranslated_);
  MD_PARSER parser = {};
  parser.flags = MD_DIALECT_GITHUB;
  parser.enter_block = [](MD_BLOCKTYPE type, void*, void* c) {
    return static_cast<MarkdownCollector*>(c)->EnterBlock(type);
  };
  parser.leave_block = [](MD_BLOCKTYPE, void*, void* c) {
    return static_cast<MarkdownCollector*>(c)->LeaveBlock();
  };
  parser.enter_span = [](MD_SPANTYPE type, void*, void* c) {
    return static_cast<MarkdownCollector*>(c)->EnterSpan(type);
  };
  parser.leave_span = [](MD_SPANTYPE, void*, void* c) {
    return static_cast<MarkdownCollector*>(c)->LeaveSpan();
  };
  parser.text = [](MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* c) {
    return static_cast<MarkdownCollector*>(c)->Text(type, text, size);
  };
  const int result = md_parse(md.data() + front_matter,
                              static_cast<MD_SIZE>(md.size() - front_matter), &parser, &collector);
  if (!collector.status().ok()) return collector.status();
  if (result != 0) return absl::InvalidArgumentError("the Markdown could not be parsed");
  collector.EndRun();
  return document;
}

Segment MarkdownDocument::SourceBytes(const Run& run, Segment range) {
  Segment hull{run.source.end, run.source.begin};
  size_t touched = 0;
  const TextSource* only = nullptr;
  for (size_t i = 0; i < run.text_sources.size(); ++i) {
    const TextSource& piece = run.text_sources[i];
    const size_t end = piece.text + (piece.source.end - piece.source.begin);
    if (end <= range.begin || piece.text >= range.end) continue;
    hull.begin = std::min(hull.begin, piece.source.begin);
    hull.end = std::max(hull.end, piece.source.end);
    ++touched;
    only = &piece;
  }
  if (touched == 0) return run.source;
  if (touched == 1 && only->text <= range.begin &&
      range.end <= only->text + (only->source.end - only->source.begin)) {
    return {only->source.begin + (range.begin - only->text),
            only->source.begin + (range.end - only->text)};
  }
  return hull;
}

std::string MarkdownDocument::Render(absl::Span<const TranslatedRun> translations) const {
  std::string out;
  out.reserve(markdown_.size());
  size_t copied = 0;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Run& run = runs_[i];
    out.append(markdown_, copied, run.source.begin - copied);
    copied = run.source.end;
    if (i >= translations.size()) {
      out.append(markdown_, run.source.begin, run.source.end - run.source.begin);
      continue;
    }
    RenderRun(markdown_, run, translations[i], out);
  }
  out.append(markdown_, copied, std::string::npos);
  return out;
}

}  // namespace mtserve
