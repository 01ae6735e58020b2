#include "text/file_format.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "base/excerpt.h"

namespace mtserve {
namespace {

constexpr absl::string_view kText = "text";
constexpr absl::string_view kHtml = "html";
constexpr absl::string_view kMarkdown = "markdown";
constexpr absl::string_view kSrt = "srt";
constexpr absl::string_view kVtt = "vtt";

// Only the start of a file is sniffed: the signatures are at its start, after blank lines.
constexpr size_t kSniffBytes = 4096;

struct Known {
  absl::string_view key;
  absl::string_view format;
};

// Extensions (lowercase, without the dot) and the formats they claim; a format's usual one first.
constexpr Known kExtensions[] = {
    {"txt", kText},    {"text", kText},         {"html", kHtml}, {"htm", kHtml}, {"xhtml", kHtml},
    {"md", kMarkdown}, {"markdown", kMarkdown}, {"srt", kSrt},   {"vtt", kVtt},
};
// Extensions of formats this server does not translate yet, said so rather than "unknown".
constexpr absl::string_view kNotYet[] = {"docx", "odt", "pptx", "odp",
                                         "xlsx", "ods", "epub", "pdf"};

// Media types (lowercase, without parameters) and the formats they claim; others claim nothing.
constexpr Known kMediaTypes[] = {
    {"text/plain", kText},
    {"text/html", kHtml},
    {"application/xhtml+xml", kHtml},
    {"text/markdown", kMarkdown},
    {"text/x-markdown", kMarkdown},
    {"application/x-subrip", kSrt},
    {"text/x-subrip", kSrt},
    {"application/srt", kSrt},
    {"text/srt", kSrt},
    {"text/x-srt", kSrt},
    {"text/vtt", kVtt},
};

std::optional<absl::string_view> Lookup(absl::Span<const Known> table, absl::string_view key) {
  for (const Known& known : table) {
    if (known.key == key) return known.format;
  }
  return std::nullopt;
}

absl::string_view Describe(absl::string_view format) {
  if (format == kHtml) return "HTML";
  if (format == kMarkdown) return "Markdown";
  if (format == kSrt) return "SubRip";
  if (format == kVtt) return "WebVTT";
  return "plain text";
}

// What the content shows.
enum class Sniffed { kNothing, kHtml, kSrt, kVtt, kZip, kPdf, kUtf16 };

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

// The next line of `text` from `pos` (without its CR LF, CR or LF); moves `pos` past it.
absl::string_view NextLine(absl::string_view text, size_t& pos) {
  const size_t start = pos;
  while (pos < text.size() && text[pos] != '\r' && text[pos] != '\n') ++pos;
  const absl::string_view line = text.substr(start, pos - start);
  if (pos < text.size() && text[pos] == '\r') ++pos;
  if (pos < text.size() && text[pos] == '\n') ++pos;
  return line;
}

size_t SkipDigits(absl::string_view s, size_t pos, size_t min, size_t max) {
  size_t n = 0;
  while (pos + n < s.size() && n < max &&
         absl::ascii_isdigit(static_cast<unsigned char>(s[pos + n]))) {
    ++n;
  }
  return n >= min ? pos + n : absl::string_view::npos;
}

// A SubRip time "H:MM:SS,mmm" (hours of one digit or more; a '.' taken for the ','), from `pos`;
// where it ends, or npos.
size_t SkipSrtTime(absl::string_view s, size_t pos) {
  pos = SkipDigits(s, pos, 1, 3);
  for (const char separator : {':', ':', ','}) {
    if (pos == absl::string_view::npos || pos >= s.size()) return absl::string_view::npos;
    if (s[pos] != separator && !(separator == ',' && s[pos] == '.')) return absl::string_view::npos;
    pos = SkipDigits(s, pos + 1, separator == ',' ? 1 : 2, separator == ',' ? 3 : 2);
  }
  return pos;
}

bool IsSrtTimingLine(absl::string_view line) {
  size_t pos = SkipSrtTime(line, 0);
  if (pos == absl::string_view::npos) return false;
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  if (line.substr(pos, 3) != "-->") return false;
  pos += 3;
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  pos = SkipSrtTime(line, pos);
  // After the end time: nothing, or coordinates some writers add.
  return pos != absl::string_view::npos &&
         (pos == line.size() || line[pos] == ' ' || line[pos] == '\t');
}

// A SubRip file's first cue: blank lines, a number, then a timing line.
bool LooksLikeSrt(absl::string_view text) {
  size_t pos = 0;
  while (pos < text.size() && IsBlank(text[pos])) ++pos;
  const absl::string_view number = absl::StripTrailingAsciiWhitespace(NextLine(text, pos));
  if (number.empty() || number.size() > 10 ||
      !std::all_of(number.begin(), number.end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  return IsSrtTimingLine(NextLine(text, pos));
}

// The HTML standard's MIME sniffing: after blank bytes, one of these (case-insensitive), then a
// space or '>' (any byte after "<!--").
bool LooksLikeHtml(absl::string_view text) {
  size_t pos = 0;
  while (pos < text.size() && IsBlank(text[pos])) ++pos;
  text.remove_prefix(pos);
  if (absl::StartsWith(text, "<!--")) return true;
  static constexpr absl::string_view kOpenings[] = {
      "<!doctype html", "<html", "<head",  "<script", "<iframe", "<h1",   "<div", "<font",
      "<table",         "<a",    "<style", "<title",  "<b",      "<body", "<br",  "<p"};
  for (const absl::string_view opening : kOpenings) {
    if (text.size() > opening.size() && absl::StartsWithIgnoreCase(text, opening)) {
      const char after = text[opening.size()];
      if (after == ' ' || after == '>' || after == '\t' || after == '\n' || after == '\r') {
        return true;
      }
    }
  }
  return false;
}

Sniffed Sniff(absl::string_view content) {
  if (absl::StartsWith(content, "\xFF\xFE") || absl::StartsWith(content, "\xFE\xFF")) {
    return Sniffed::kUtf16;
  }
  if (absl::StartsWith(content, "PK\x03\x04")) return Sniffed::kZip;
  if (absl::StartsWith(content, "%PDF-")) return Sniffed::kPdf;
  absl::string_view text = content.substr(0, kSniffBytes);
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8's BOM.
  if (absl::StartsWith(text, "WEBVTT") && (text.size() == 6 || text[6] == ' ' || text[6] == '\t' ||
                                           text[6] == '\r' || text[6] == '\n')) {
    return Sniffed::kVtt;
  }
  if (LooksLikeSrt(text)) return Sniffed::kSrt;
  if (LooksLikeHtml(text)) return Sniffed::kHtml;
  return Sniffed::kNothing;
}

// What the content's start is, for errors: its first non-blank line, short.
std::string FirstLine(absl::string_view content) {
  size_t pos = 0;
  content = content.substr(0, kSniffBytes);
  if (absl::StartsWith(content, "\xEF\xBB\xBF")) content.remove_prefix(3);
  while (pos < content.size() && IsBlank(content[pos])) ++pos;
  if (pos == content.size()) return "nothing but blank lines";
  return absl::StrCat("\"", Excerpt(NextLine(content, pos), 40), "\"");
}

struct Claim {
  std::string source;  // "its name's extension .srt", "its media type text/vtt", ...
  absl::string_view format;
};

}  // namespace

absl::StatusOr<std::string> DetectFileFormat(const FileClaims& claims, absl::string_view content) {
  const std::string file = claims.file_name.empty()
                               ? "the file"
                               : absl::StrCat("the file \"", Excerpt(claims.file_name), "\"");
  std::vector<Claim> said;
  if (!claims.format.empty()) {
    const std::string format = absl::AsciiStrToLower(claims.format);
    bool known = false;
    for (const absl::string_view name : {kText, kHtml, kMarkdown, kSrt, kVtt}) {
      if (format == name) {
        said.push_back({absl::StrCat("the format given (", name, ")"), name});
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("the format \"", Excerpt(claims.format),
                                                     "\" given for ", file,
                                                     " is not text, html, markdown, srt or vtt"));
    }
  }
  if (!claims.file_name.empty()) {
    absl::string_view base = claims.file_name;
    const size_t slash = base.find_last_of("/\\");
    if (slash != absl::string_view::npos) base.remove_prefix(slash + 1);
    const size_t dot = base.rfind('.');
    if (dot != absl::string_view::npos && dot > 0) {
      const std::string extension = absl::AsciiStrToLower(base.substr(dot + 1));
      if (const auto format = Lookup(kExtensions, extension); format.has_value()) {
        said.push_back({absl::StrCat("its name's extension .", extension), *format});
      } else if (std::find(std::begin(kNotYet), std::end(kNotYet), extension) !=
                 std::end(kNotYet)) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": .", extension,
                         " files are not translated yet (only .txt, .html, .md, .srt, .vtt)"));
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            file, ": the extension .", Excerpt(extension, 16),
            " is not of a format translated here (.txt, .html, .htm, .xhtml, .md, .markdown, .srt, "
            ".vtt)"));
      }
    }
  }
  if (!claims.media_type.empty()) {
    const std::string type = absl::AsciiStrToLower(
        absl::StripAsciiWhitespace(claims.media_type.substr(0, claims.media_type.find(';'))));
    if (const auto format = Lookup(kMediaTypes, type); format.has_value()) {
      said.push_back({absl::StrCat("its media type ", type), *format});
    }
  }

  const Sniffed sniffed = Sniff(content);
  switch (sniffed) {
    case Sniffed::kUtf16:
      return absl::InvalidArgumentError(
          absl::StrCat(file, " is UTF-16 text (by its byte order mark); only UTF-8 is read"));
    case Sniffed::kPdf:
      return absl::InvalidArgumentError(
          absl::StrCat(file, " is a PDF document; PDF is not translated"));
    case Sniffed::kZip:
      // Office documents (.docx, .odt, .pptx, .odp) and EPUB are zip archives: when they are
      // translated, their format is told here from the archive's entries and the claims.
      return absl::InvalidArgumentError(absl::StrCat(
          file, " is a zip archive (an office document?); those are not translated yet"));
    default:
      break;
  }

  // The one specific claim ("text" claims nothing specific), if they agree.
  const Claim* specific = nullptr;
  for (const Claim& claim : said) {
    if (claim.format == kText) continue;
    if (specific != nullptr && specific->format != claim.format) {
      // The content may settle it: SubRip or WebVTT content decides, and is checked below.
      if (sniffed == Sniffed::kSrt || sniffed == Sniffed::kVtt) continue;
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": ", specific->source, " says ", Describe(specific->format), " but ",
                       claim.source, " says ", Describe(claim.format)));
    }
    if (specific == nullptr) specific = &claim;
  }

  if (sniffed == Sniffed::kSrt || sniffed == Sniffed::kVtt) {
    const absl::string_view found = sniffed == Sniffed::kSrt ? kSrt : kVtt;
    for (const Claim& claim : said) {
      if (claim.format != kText && claim.format != found) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": ", claim.source, " says ", Describe(claim.format),
                         " but its content is ", Describe(found),
                         sniffed == Sniffed::kSrt ? " (a cue number, then a timing line)"
                                                  : " (a WEBVTT header)"));
      }
    }
    return std::string(found);
  }
  if (specific != nullptr && (specific->format == kSrt || specific->format == kVtt)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": ", specific->source, " says ", Describe(specific->format),
        " but its content is not: ",
        specific->format == kSrt ? "it does not start with a cue number then a timing line such as "
                                   "\"00:00:01,000 --> 00:00:02,000\""
                                 : "it does not start with a WEBVTT header",
        "; it starts with ", FirstLine(content)));
  }
  if (specific != nullptr) return std::string(specific->format);  // HTML or Markdown.
  return std::string(sniffed == Sniffed::kHtml ? kHtml : kText);
}

absl::string_view ExtensionOfFormat(absl::string_view format) {
  // The first of a format's extensions in kExtensions is its usual one.
  for (const Known& known : kExtensions) {
    if (known.format == format) return known.key;
  }
  return "txt";
}

std::vector<std::string> TranslatedFileExtensions() {
  std::vector<std::string> extensions;
  for (const absl::string_view format : {kText, kHtml, kMarkdown, kSrt, kVtt}) {
    extensions.push_back(absl::StrCat(".", ExtensionOfFormat(format)));
  }
  return extensions;
}

std::string MediaTypeOfFormat(absl::string_view format) {
  absl::string_view type = "text/plain";
  if (format == kHtml) type = "text/html";
  if (format == kMarkdown) type = "text/markdown";
  if (format == kSrt) type = "application/x-subrip";
  if (format == kVtt) type = "text/vtt";
  return absl::StrCat(type, "; charset=utf-8");
}

}  // namespace mtserve
