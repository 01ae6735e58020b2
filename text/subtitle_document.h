// A subtitle file, SubRip (.srt) or WebVTT (.vtt), as translation sees it: its cues' text joined
// into one stream to split into sentences (a cue's line breaks and the boundaries between cues are
// spaces in it, so that a sentence may run over several cues; they are line breaks, which end a
// sentence, before a line that starts with a dialogue dash, "- " (the dash is kept as an empty
// Inline at the line's start), after a cue whose text ends a sentence (EndsSentence), and between
// cues more than SubtitleLayout::max_sentence_gap_ms apart), the styling tags that wrapped parts
// of it, and the file rebuilt around each cue's new text, every other byte (cue numbers and
// identifiers, timings, cue settings, the WebVTT header, NOTE, STYLE and REGION blocks, blank
// lines, CRLF line ends, a byte order mark) kept as it was.
//
// Tags are what opens with '<' and a letter, '/' or digit and closes with '>' on the same line
// (<i>, <b>, <u>, <font color=...>, WebVTT's <c.loud>, <v Bob>, <lang en>, <ruby>, <rt> and
// timestamps <00:01.500>), and SubRip's {\an8}-style overrides. An end tag closes the innermost
// open tag of its name; one that closes nothing, a timestamp and an override are empty Inlines kept
// where they stood between words. A tag left open at the end of its cue is closed there by nothing
// (no end tag is made). Entities (&amp;) are left in the text as written.
//
// Checked while parsing, each error naming the cue (its number as counted from 1) and the line: a
// timing that does not parse, a cue that ends before it starts, a cue that starts before the one
// before it (out of order), more than kMaxCues cues, a cue of more than kMaxCueTextBytes of text;
// and a .vtt that does not start with WEBVTT, or a .srt that does. Linear in the file's size.
#ifndef MTSERVE_TEXT_SUBTITLE_DOCUMENT_H_
#define MTSERVE_TEXT_SUBTITLE_DOCUMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"

namespace mtserve {

// How subtitles are translated: translated cue text is laid out in at most `max_lines` lines of at
// most `max_line_chars` characters (code points) where the text fits (the server's and
// mttranslate's --subtitle_max_line_chars and --subtitle_max_lines); a sentence runs on from one
// cue into the next only if the next starts at most `max_sentence_gap_ms` after the first ends
// (--subtitle_max_sentence_gap_ms). 3 seconds: a sentence that goes on over two cues is usually
// one speaker's, cues a few frames to a second apart; a silence of more than a few seconds is a
// cut or a new speaker, where a sentence without its full stop (a caption, a shout, a trailing
// off) is a sentence of its own.
struct SubtitleLayout {
  int max_line_chars = 42;
  int max_lines = 2;
  int max_sentence_gap_ms = 3000;
};

// Whether a cue whose text (tags removed) is `text` ends a sentence: its last character, after
// any spaces and closing quotes or brackets, is a full stop, question or exclamation mark (ASCII
// or the ideographic and full-width ones), but not an ellipsis ("..", "...", U+2026), which
// subtitles write for a sentence that goes on in the next cue. An abbreviation's full stop
// ("Dr.") ends it too: subtitles do not break a line after one.
bool EndsSentence(absl::string_view text);

class SubtitleDocument {
 public:
  enum class Kind { kSrt, kVtt };

  // A styling tag around part of a cue's text (or, with an empty range, at a point of it).
  struct Inline {
    Segment range;      // In the stream.
    std::string open;   // The start tag (or the empty tag) as written.
    std::string close;  // The end tag as written; empty if the cue left it open, or for an empty
                        // tag.
    int parent = -1;    // The innermost Inline of the same cue open when it opened, or -1.
  };
  struct Cue {
    int number = 0;   // Counted from 1 in file order (not the SubRip number as written).
    size_t line = 0;  // The line of its timing, counted from 1.
    Segment payload;  // Its text's bytes in the file (markup and line ends included).
    Segment text;     // Its text in the stream (tags removed, line ends as spaces).
    std::vector<size_t> line_breaks;  // Stream positions of the separators that were line ends.
    std::vector<Inline> inlines;      // In the order they opened.
    std::string line_end;             // "\n" or "\r\n": the cue's own.
    int64_t start_ms = 0;             // Its timing.
    int64_t end_ms = 0;
  };

  // The most cues a file may have (a two-hour film has about 1,500 to 2,000).
  static constexpr size_t kMaxCues = 100000;
  // The most bytes of text one cue may have (a cue is read in a few seconds: a few lines).
  static constexpr size_t kMaxCueTextBytes = 4096;

  // `bytes` (UTF-8) parsed as a file of `kind`; an InvalidArgument as said above. Of `layout`, only
  // max_sentence_gap_ms counts here.
  static absl::StatusOr<SubtitleDocument> Parse(std::string bytes, Kind kind,
                                                const SubtitleLayout& layout = {});

  // The cues' text: each cue's, separated by one space (a line break before a dialogue line).
  const std::string& stream() const { return stream_; }
  const std::vector<Cue>& cues() const { return cues_; }
  const std::string& bytes() const { return bytes_; }

  // The file with cue i's text replaced by cue_texts[i] (as written: tags and line ends in it).
  std::string Render(absl::Span<const std::string> cue_texts) const;

  // Cue `cue`'s new text from its translation `text` (plain: no tags; '\n' where a line must end)
  // and where its inlines go in it (`placed`, one per Inline, bytes of `text`): laid out by
  // `layout` (see LayOut), the tags written around their ranges properly nested (each clamped into
  // its parent's, after its previous sibling's). A translation that is the cue's own text (line
  // ends aside) gives the cue's bytes back as they were if they are within `layout`'s limits.
  std::string CueText(const Cue& cue, absl::string_view text, absl::Span<const Segment> placed,
                      const SubtitleLayout& layout) const;

 private:
  std::string bytes_;
  std::string stream_;
  std::vector<Cue> cues_;
};

// Where the lines of `text` end: positions of the whitespace characters of `text` that become line
// ends. Each '\n' ends a line; each part between them goes on one line if it has at most
// `layout.max_line_chars` characters, else over the fewest lines of at most that many, balanced
// (the longest line as short as it can be). Text that cannot fit in max_lines lines of
// max_line_chars goes on more lines, never dropped; only a word longer than a line makes its
// line longer. Returns, for each line end, the whitespace run it replaces.
std::vector<Segment> LineEnds(absl::string_view text, const SubtitleLayout& layout);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_SUBTITLE_DOCUMENT_H_
