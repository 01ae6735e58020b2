#include "text/subtitle_document.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace mtserve {
namespace {

constexpr absl::string_view kBom = "\xEF\xBB\xBF";

// One line of the file: its content [begin, end) (less its "\n" or "\r\n") and where the next
// starts.
struct Line {
  size_t begin;
  size_t end;
  size_t next;
};

std::vector<Line> Lines(absl::string_view bytes, size_t start) {
  std::vector<Line> lines;
  size_t i = start;
  while (i < bytes.size()) {
    size_t newline = bytes.find('\n', i);
    if (newline == absl::string_view::npos) {
      lines.push_back({i, bytes.size(), bytes.size()});
      break;
    }
    size_t end = newline;
    if (end > i && bytes[end - 1] == '\r') --end;
    lines.push_back({i, end, newline + 1});
    i = newline + 1;
  }
  return lines;
}

bool IsBlank(absl::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

bool IsDigits(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

size_t CodePoints(absl::string_view s) {
  return std::count_if(s.begin(), s.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// A timestamp, [h...:]mm:ss{,|.}fff (hours optional, fraction 1 to 3 digits), in milliseconds.
std::optional<int64_t> ParseTimestamp(absl::string_view s) {
  int64_t fields[3] = {0, 0, 0};
  int count = 0;
  size_t i = 0;
  while (true) {
    size_t digits = 0;
    int64_t value = 0;
    while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i])) && digits < 10) {
      value = value * 10 + (s[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0 || count == 3) return std::nullopt;
    fields[count++] = value;
    if (i < s.size() && s[i] == ':') {
      ++i;
      continue;
    }
    break;
  }
  if (count < 2 || i >= s.size() || (s[i] != ',' && s[i] != '.')) return std::nullopt;
  ++i;
  int64_t millis = 0;
  size_t digits = 0;
  for (; i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i])); ++i) {
    if (++digits > 3) return std::nullopt;
    millis = millis * 10 + (s[i] - '0');
  }
  if (digits == 0 || digits > 3 || i != s.size()) return std::nullopt;
  while (digits++ < 3) millis *= 10;
  const int64_t hours = count == 3 ? fields[0] : 0;
  const int64_t minutes = fields[count - 2], seconds = fields[count - 1];
  if (minutes > 59 || seconds > 59) return std::nullopt;
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
}

// The start and end of a timing line "START --> END[ settings]".
std::optional<std::pair<int64_t, int64_t>> ParseTiming(absl::string_view line) {
  const size_t arrow = line.find("-->");
  if (arrow == absl::string_view::npos) return std::nullopt;
  const absl::string_view start = absl::StripAsciiWhitespace(line.substr(0, arrow));
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(arrow + 3));
  const size_t space = rest.find_first_of(" \t");
  const absl::string_view end = rest.substr(0, space);
  const std::optional<int64_t> from = ParseTimestamp(start), to = ParseTimestamp(end);
  if (!from.has_value() || !to.has_value()) return std::nullopt;
  return std::make_pair(*from, *to);
}

// Whether a WebVTT block starting with `line` is a NOTE, STYLE or REGION block.
bool IsVttSpecialBlock(absl::string_view line) {
  for (absl::string_view word : {"NOTE", "STYLE", "REGION"}) {
    if (absl::StartsWith(line, word) &&
        (line.size() == word.size() || line[word.size()] == ' ' || line[word.size()] == '\t')) {
      return true;
    }
  }
  return false;
}

std::string FormatTime(int64_t millis) {
  return absl::StrCat(millis / 3600000, ":", (millis / 60000) % 60 < 10 ? "0" : "",
                      (millis / 60000) % 60, ":", (millis / 1000) % 60 < 10 ? "0" : "",
                      (millis / 1000) % 60, ".", millis % 1000 < 100 ? "0" : "",
                      millis % 1000 < 10 ? "0" : "", millis % 1000);
}

// Whether a line of text starts with a dialogue dash (-, en dash, em dash).
// Its bytes (the dash and the spaces after it), or 0.
size_t DialogueDash(absl::string_view line) {
  size_t dash = 0;
  for (absl::string_view d : {"-", "\xE2\x80\x93", "\xE2\x80\x94"}) {
    if (absl::StartsWith(line, d)) dash = d.size();
  }
  if (dash == 0 || dash == line.size() || (line[dash] != ' ' && line[dash] != '\t')) return 0;
  while (dash < line.size() && (line[dash] == ' ' || line[dash] == '\t')) ++dash;
  return dash;
}

// A tag's name: its letters and digits after '<' or "</".
absl::string_view TagName(absl::string_view tag) {
  size_t begin = tag.size() > 1 && tag[1] == '/' ? 2 : 1;
  size_t end = begin;
  while (end < tag.size() && absl::ascii_isalnum(static_cast<unsigned char>(tag[end]))) ++end;
  return tag.substr(begin, end - begin);
}

class Parser {
 public:
  Parser(const std::string& bytes, std::string& stream, std::vector<SubtitleDocument::Cue>& cues,
         int64_t max_sentence_gap_ms)
      : bytes_(bytes), stream_(stream), cues_(cues), max_sentence_gap_ms_(max_sentence_gap_ms) {}

  absl::Status Parse(SubtitleDocument::Kind kind) {
    const size_t start = absl::StartsWith(bytes_, kBom) ? kBom.size() : 0;
    lines_ = Lines(bytes_, start);
    const bool webvtt = !lines_.empty() && IsWebVtt(Text(lines_[0]));
    size_t i = 0;
    if (kind == SubtitleDocument::Kind::kVtt) {
      if (!webvtt) {
        return absl::InvalidArgumentError(
            "line 1: a WebVTT file (format vtt) starts with WEBVTT; this one does not");
      }
      while (i < lines_.size() && !IsBlank(Text(lines_[i]))) ++i;  // The header.
    } else if (webvtt) {
      return absl::InvalidArgumentError(
          "line 1: the file starts with WEBVTT: it is WebVTT (format vtt), not SubRip (format "
          "srt)");
    }
    while (true) {
      while (i < lines_.size() && IsBlank(Text(lines_[i]))) ++i;
      if (i >= lines_.size()) return absl::OkStatus();
      const absl::string_view first = Text(lines_[i]);
      size_t timing;
      if (kind == SubtitleDocument::Kind::kVtt) {
        if (IsVttSpecialBlock(first)) {
          while (i < lines_.size() && !IsBlank(Text(lines_[i]))) ++i;
          continue;
        }
        if (absl::StrContains(first, "-->")) {
          timing = i;
        } else if (i + 1 < lines_.size() && absl::StrContains(Text(lines_[i + 1]), "-->")) {
          timing = i + 1;
        } else {
          return Error(i,
                       "is neither a cue (an identifier or a timing START --> END), nor a "
                       "NOTE, STYLE or REGION block");
        }
      } else if (IsDigits(first) && i + 1 < lines_.size() &&
                 absl::StrContains(Text(lines_[i + 1]), "-->")) {
        timing = i + 1;
      } else if (absl::StrContains(first, "-->")) {
        timing = i;
      } else {
        return Error(i, "should be a cue number or a timing (HH:MM:SS,mmm --> HH:MM:SS,mmm)");
      }
      if (absl::Status added = AddCue(kind, timing); !added.ok()) return added;
      i = next_;
    }
  }

 private:
  static bool IsWebVtt(absl::string_view line) {
    return absl::StartsWith(line, "WEBVTT") &&
           (line.size() == 6 || line[6] == ' ' || line[6] == '\t');
  }

  absl::string_view Text(const Line& line) const {
    return absl::string_view(bytes_).substr(line.begin, line.end - line.begin);
  }

  absl::Status Error(size_t line, absl::string_view what) const {
    // The line quoted up to 80 bytes, not cutting a character (the caller checked the UTF-8).
    absl::string_view quoted = Text(lines_[line]);
    if (quoted.size() > 80) {
      size_t end = 80;
      while (end > 0 && (static_cast<unsigned char>(quoted[end]) & 0xC0) == 0x80) --end;
      quoted = quoted.substr(0, end);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cue ", cues_.size() + 1, " (line ", line + 1, "): \"", quoted, "\" ", what));
  }

  // Whether line `i` starts the next SubRip cue: a number followed by a timing.
  bool StartsSrtCue(size_t i) const {
    return IsDigits(Text(lines_[i])) && i + 1 < lines_.size() &&
           ParseTiming(Text(lines_[i + 1])).has_value();
  }

  absl::Status AddCue(SubtitleDocument::Kind kind, size_t timing) {
    const std::optional<std::pair<int64_t, int64_t>> times = ParseTiming(Text(lines_[timing]));
    const char* expected = kind == SubtitleDocument::Kind::kSrt
                               ? "is not a timing HH:MM:SS,mmm --> HH:MM:SS,mmm"
                               : "is not a timing [HH:]MM:SS.mmm --> [HH:]MM:SS.mmm [settings]";
    if (!times.has_value()) return Error(timing, expected);
    if (times->second < times->first) {
      return Error(timing, absl::StrCat("ends (", FormatTime(times->second), ") before it starts (",
                                        FormatTime(times->first), ")"));
    }
    if (!cues_.empty() && times->first < previous_start_) {
      return Error(
          timing, absl::StrCat("starts (", FormatTime(times->first), ") before the cue before it (",
                               FormatTime(previous_start_), "): timings out of order are refused"));
    }
    if (cues_.size() >= SubtitleDocument::kMaxCues) {
      return Error(timing, absl::StrCat("is one cue more than the ", SubtitleDocument::kMaxCues,
                                        " a file may have"));
    }
    previous_start_ = times->first;
    SubtitleDocument::Cue cue;
    cue.number = static_cast<int>(cues_.size()) + 1;
    cue.line = timing + 1;
    cue.start_ms = times->first;
    cue.end_ms = times->second;
    size_t end = timing + 1;
    while (end < lines_.size() && !IsBlank(Text(lines_[end])) &&
           !(kind == SubtitleDocument::Kind::kSrt && StartsSrtCue(end))) {
      ++end;
    }
    next_ = end;
    const Line& timing_line = lines_[timing];
    cue.line_end = timing_line.next - timing_line.end == 2 ? "\r\n" : "\n";
    if (end == timing + 1) {
      cue.payload = {timing_line.next, timing_line.next};
    } else {
      cue.payload = {lines_[timing + 1].begin, lines_[end - 1].end};
    }
    if (cue.payload.end - cue.payload.begin > SubtitleDocument::kMaxCueTextBytes) {
      return Error(timing, absl::StrCat("has ", cue.payload.end - cue.payload.begin,
                                        " bytes of text, more than the ",
                                        SubtitleDocument::kMaxCueTextBytes, " a cue may have"));
    }
    if (!cues_.empty()) {
      // A sentence runs on into this cue unless the one before ended one, or a silence did.
      const SubtitleDocument::Cue& previous = cues_.back();
      const bool ends = cue.start_ms - previous.end_ms > max_sentence_gap_ms_ ||
                        EndsSentence(absl::string_view(stream_).substr(
                            previous.text.begin, previous.text.end - previous.text.begin));
      stream_ += ends ? '\n' : ' ';
    }
    const size_t text_begin = stream_.size();
    std::vector<int> open;  // Indices of the cue's inlines open, outermost first.
    for (size_t l = timing + 1; l < end; ++l) {
      if (l > timing + 1) {
        cue.line_breaks.push_back(stream_.size());
        stream_ += ' ';
      }
      // A dialogue line ("- Hi."): the break before it ends a sentence (Unicode's rules join a
      // sentence and a dash after it), and its dash is kept, not translated.
      absl::string_view line = Text(lines_[l]);
      if (const size_t dash = DialogueDash(line); dash > 0) {
        if (!stream_.empty()) stream_.back() = '\n';
        const size_t at = stream_.size();
        cue.inlines.push_back(
            {{at, at}, std::string(line.substr(0, dash)), "", open.empty() ? -1 : open.back()});
        line.remove_prefix(dash);
      }
      AddLine(line, cue, open);
    }
    for (int i : open) cue.inlines[i].range.end = stream_.size();
    cue.text = {text_begin, stream_.size()};
    cues_.push_back(std::move(cue));
    return absl::OkStatus();
  }

  // A cue's line: its text appended to the stream, its tags to the cue's inlines.
  void AddLine(absl::string_view line, SubtitleDocument::Cue& cue, std::vector<int>& open) {
    size_t i = 0;
    auto point = [&](absl::string_view tag) {
      const size_t at = stream_.size();
      cue.inlines.push_back({{at, at}, std::string(tag), "", open.empty() ? -1 : open.back()});
    };
    while (i < line.size()) {
      const char c = line[i];
      const char next = i + 1 < line.size() ? line[i + 1] : '\0';
      if (c == '<' && (absl::ascii_isalnum(static_cast<unsigned char>(next)) || next == '/')) {
        const size_t close = line.find('>', i + 1);
        if (close != absl::string_view::npos) {
          const absl::string_view tag = line.substr(i, close + 1 - i);
          i = close + 1;
          if (next == '/') {
            const absl::string_view name = TagName(tag);
            auto it = std::find_if(open.rbegin(), open.rend(),
                                   [&](int k) { return TagName(cue.inlines[k].open) == name; });
            if (it == open.rend() || name.empty()) {
              point(tag);
              continue;
            }
            const size_t depth = open.rend() - it - 1;
            for (size_t d = depth; d < open.size(); ++d) {
              cue.inlines[open[d]].range.end = stream_.size();
            }
            cue.inlines[open[depth]].close = std::string(tag);
            open.resize(depth);
          } else if (absl::ascii_isdigit(static_cast<unsigned char>(next))) {
            point(tag);  // A timestamp.
          } else {
            const size_t at = stream_.size();
            cue.inlines.push_back(
                {{at, at}, std::string(tag), "", open.empty() ? -1 : open.back()});
            open.push_back(static_cast<int>(cue.inlines.size()) - 1);
          }
          continue;
        }
      }
      if (c == '{' && next == '\\') {
        const size_t close = line.find('}', i + 1);
        if (close != absl::string_view::npos) {
          point(line.substr(i, close + 1 - i));
          i = close + 1;
          continue;
        }
      }
      stream_ += c;
      ++i;
    }
  }

  const std::string& bytes_;
  std::string& stream_;
  std::vector<SubtitleDocument::Cue>& cues_;
  std::vector<Line> lines_;
  int64_t max_sentence_gap_ms_;
  size_t next_ = 0;
  int64_t previous_start_ = 0;
};

// The line ends of one paragraph [begin, end) of `text` (no '\n' in it) by `layout`.
void ParagraphLineEnds(absl::string_view text, Segment paragraph, const SubtitleLayout& layout,
                       std::vector<Segment>& out) {
  struct Word {
    Segment bytes;
    size_t chars;
  };
  std::vector<Word> words;
  for (size_t i = paragraph.begin; i < paragraph.end;) {
    if (absl::ascii_isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < paragraph.end && !absl::ascii_isspace(static_cast<unsigned char>(text[j]))) ++j;
    words.push_back({{i, j}, CodePoints(text.substr(i, j - i))});
    i = j;
  }
  if (words.size() < 2) return;
  auto gap = [&](size_t w) { return words[w].bytes.begin - words[w - 1].bytes.end; };
  // The lines of a greedy fill of lines of `width` characters: where each line after the first
  // starts (word indices).
  auto greedy = [&](size_t width) {
    std::vector<size_t> starts;
    size_t length = words[0].chars;
    for (size_t w = 1; w < words.size(); ++w) {
      if (length + gap(w) + words[w].chars <= width) {
        length += gap(w) + words[w].chars;
      } else {
        starts.push_back(w);
        length = words[w].chars;
      }
    }
    return starts;
  };
  const size_t max_chars = static_cast<size_t>(std::max(1, layout.max_line_chars));
  size_t longest_word = 0;
  for (const Word& w : words) longest_word = std::max(longest_word, w.chars);
  const size_t width = std::max(max_chars, longest_word);
  std::vector<size_t> starts = greedy(width);
  if (starts.empty()) return;
  // Balanced: the narrowest width that needs no more lines than the widest.
  size_t low = longest_word, high = width;
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (greedy(mid).size() <= starts.size()) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  for (size_t w : greedy(low)) out.push_back({words[w - 1].bytes.end, words[w].bytes.begin});
}

}  // namespace

bool EndsSentence(absl::string_view text) {
  // Closing quotes and brackets: ASCII, and the UTF-8 of ’ ” » › 」 』 ） ］.
  static constexpr absl::string_view kClosers[] = {"\"",
                                                   "'",
                                                   ")",
                                                   "]",
                                                   "\xE2\x80\x99",
                                                   "\xE2\x80\x9D",
                                                   "\xC2\xBB",
                                                   "\xE2\x80\xBA",
                                                   "\xE3\x80\x8D",
                                                   "\xE3\x80\x8F",
                                                   "\xEF\xBC\x89",
                                                   "\xEF\xBC\xBD"};
  // Sentence ends besides ASCII's: 。 ！ ？ ‼ ⁇ ⁈ ⁉.
  static constexpr absl::string_view kEnds[] = {"\xE3\x80\x82", "\xEF\xBC\x81", "\xEF\xBC\x9F",
                                                "\xE2\x80\xBC", "\xE2\x81\x87", "\xE2\x81\x88",
                                                "\xE2\x81\x89"};
  while (true) {
    text = absl::StripTrailingAsciiWhitespace(text);
    const auto closer = std::find_if(std::begin(kClosers), std::end(kClosers),
                                     [&](absl::string_view c) { return absl::EndsWith(text, c); });
    if (closer == std::end(kClosers)) break;
    text.remove_suffix(closer->size());
  }
  if (text.empty()) return false;
  if (text.back() == '!' || text.back() == '?') return true;
  if (text.back() == '.') return text.size() == 1 || text[text.size() - 2] != '.';
  return std::any_of(std::begin(kEnds), std::end(kEnds),
                     [&](absl::string_view e) { return absl::EndsWith(text, e); });
}

absl::StatusOr<SubtitleDocument> SubtitleDocument::Parse(std::string bytes, Kind kind,
                                                         const SubtitleLayout& layout) {
  SubtitleDocument document;
  document.bytes_ = std::move(bytes);
  Parser parser(document.bytes_, document.stream_, document.cues_, layout.max_sentence_gap_ms);
  if (absl::Status parsed = parser.Parse(kind); !parsed.ok()) return parsed;
  return document;
}

std::string SubtitleDocument::Render(absl::Span<const std::string> cue_texts) const {
  std::string out;
  out.reserve(bytes_.size());
  size_t copied = 0;
  for (size_t i = 0; i < cues_.size() && i < cue_texts.size(); ++i) {
    out.append(bytes_, copied, cues_[i].payload.begin - copied);
    out += cue_texts[i];
    copied = cues_[i].payload.end;
  }
  out.append(bytes_, copied);
  return out;
}

std::vector<Segment> LineEnds(absl::string_view text, const SubtitleLayout& layout) {
  std::vector<Segment> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t newline = text.find('\n', begin);
    if (newline == absl::string_view::npos) newline = text.size();
    ParagraphLineEnds(text, {begin, newline}, layout, out);
    if (newline == text.size()) break;
    // The whitespace around the '\n' (and any more of them) is the line end.
    size_t from = newline, to = newline;
    while (from > begin && absl::ascii_isspace(static_cast<unsigned char>(text[from - 1]))) --from;
    while (to < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[to]))) ++to;
    out.push_back({from, to});
    begin = to;
  }
  return out;
}

std::string SubtitleDocument::CueText(const Cue& cue, absl::string_view text,
                                      absl::Span<const Segment> placed,
                                      const SubtitleLayout& layout) const {
  const absl::string_view source =
      absl::string_view(stream_).substr(cue.text.begin, cue.text.end - cue.text.begin);
  // Its own text: its own bytes, if its lines are within the limits.
  std::string flat(text), own(source);
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(own.begin(), own.end(), '\n', ' ');
  if (flat == own && cue.line_breaks.size() + 1 <= static_cast<size_t>(layout.max_lines)) {
    bool fits = true;
    size_t line_begin = cue.text.begin;
    for (size_t l = 0; l <= cue.line_breaks.size(); ++l) {
      const size_t line_end = l < cue.line_breaks.size() ? cue.line_breaks[l] : cue.text.end;
      fits = fits &&
             CodePoints(absl::string_view(stream_).substr(line_begin, line_end - line_begin)) <=
                 static_cast<size_t>(layout.max_line_chars);
      line_begin = line_end + 1;
    }
    if (fits) return bytes_.substr(cue.payload.begin, cue.payload.end - cue.payload.begin);
  }
  // Leading and trailing whitespace would make blank lines, which end a cue.
  size_t trim_begin = 0, trim_end = text.size();
  while (trim_begin < trim_end &&
         absl::ascii_isspace(static_cast<unsigned char>(text[trim_begin]))) {
    ++trim_begin;
  }
  while (trim_end > trim_begin &&
         absl::ascii_isspace(static_cast<unsigned char>(text[trim_end - 1]))) {
    --trim_end;
  }
  const absl::string_view trimmed = text.substr(trim_begin, trim_end - trim_begin);
  const size_t size = trimmed.size();
  // The inlines' ranges in `trimmed`, clamped.
  std::vector<Segment> ranges(cue.inlines.size());
  std::vector<size_t> sibling_end(cue.inlines.size() + 1, 0);  // [parent + 1]: last child's end.
  for (size_t i = 0; i < cue.inlines.size(); ++i) {
    const Inline& in = cue.inlines[i];
    Segment r = i < placed.size() ? placed[i] : Segment{size, size};
    r.begin = std::min(size, r.begin > trim_begin ? r.begin - trim_begin : 0);
    r.end = std::min(size, r.end > trim_begin ? r.end - trim_begin : 0);
    size_t low = 0, high = size;
    if (in.parent >= 0) {
      low = ranges[in.parent].begin;
      high = ranges[in.parent].end;
    }
    low = std::max(low, std::min(high, sibling_end[in.parent + 1]));
    r.begin = std::clamp(r.begin, low, high);
    r.end = std::clamp(r.end, r.begin, high);
    if (in.range.begin == in.range.end) r.end = r.begin;
    ranges[i] = r;
    if (r.end > r.begin) sibling_end[in.parent + 1] = r.end;
  }
  // Where tags go: opens and closes by position.
  auto tags_at = [&](size_t p, std::string& out) {
    for (size_t i = cue.inlines.size(); i-- > 0;) {
      if (ranges[i].end == p && ranges[i].end > ranges[i].begin) out += cue.inlines[i].close;
    }
    for (size_t i = 0; i < cue.inlines.size(); ++i) {
      if (ranges[i].begin != p) continue;
      out += cue.inlines[i].open;
      // Markup around words placed around none: kept, around nothing.
      const Segment source = cue.inlines[i].range;
      if (source.end > source.begin && ranges[i].end == p) out += cue.inlines[i].close;
    }
  };
  const std::vector<Segment> ends = LineEnds(trimmed, layout);
  std::string out;
  size_t next_end = 0;
  for (size_t p = 0; p <= size;) {
    tags_at(p, out);
    if (p == size) break;
    if (next_end < ends.size() && ends[next_end].begin == p) {
      out += cue.line_end;
      for (size_t q = p + 1; q < ends[next_end].end; ++q) tags_at(q, out);
      p = ends[next_end].end;
      ++next_end;
      continue;
    }
    out += trimmed[p];
    ++p;
  }
  return out;
}

}  // namespace mtserve
