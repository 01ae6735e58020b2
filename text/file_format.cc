#include "text/file_format.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "base/excerpt.h"
#include "text/office/office_package.h"

namespace mtserve {
namespace {

constexpr absl::string_view kText = "text";
constexpr absl::string_view kHtml = "html";
constexpr absl::string_view kMarkdown = "markdown";
constexpr absl::string_view kSrt = "srt";
constexpr absl::string_view kVtt = "vtt";
constexpr absl::string_view kDocx = "docx";
constexpr absl::string_view kPptx = "pptx";
constexpr absl::string_view kOdt = "odt";
constexpr absl::string_view kOdp = "odp";
constexpr absl::string_view kEpub = "epub";

// Only the start of a file is sniffed: the signatures are at its start, after blank lines.
constexpr size_t kSniffBytes = 4096;

// The formats translated here, in the order they are listed: the one table of their names, how
// errors describe them, their translations' media types and whether they are zip packages
// (binary: no charset, and told apart by their entries).
struct FormatInfo {
  absl::string_view name;
  absl::string_view description;
  absl::string_view media_type;
  bool package = false;
};
constexpr FormatInfo kFormats[] = {
    {kText, "plain text", "text/plain"},
    {kHtml, "HTML", "text/html"},
    {kMarkdown, "Markdown", "text/markdown"},
    {kSrt, "SubRip", "application/x-subrip"},
    {kVtt, "WebVTT", "text/vtt"},
    {kDocx, "a Word document (DOCX)",
     "application/vnd.openxmlformats-officedocument.wordprocessingml.document", true},
    {kPptx, "a PowerPoint presentation (PPTX)",
     "application/vnd.openxmlformats-officedocument.presentationml.presentation", true},
    {kOdt, "an OpenDocument text (ODT)", "application/vnd.oasis.opendocument.text", true},
    {kOdp, "an OpenDocument presentation (ODP)", "application/vnd.oasis.opendocument.presentation",
     true},
    {kEpub, "an EPUB book", "application/epub+zip", true},
};

const FormatInfo* Info(absl::string_view format) {
  for (const FormatInfo& info : kFormats) {
    if (info.name == format) return &info;
  }
  return nullptr;
}

struct Known {
  absl::string_view key;
  absl::string_view format;
};

// Extensions (lowercase, without the dot) and the formats they claim; a format's usual one first.
constexpr Known kExtensions[] = {
    {"txt", kText},    {"text", kText},         {"html", kHtml}, {"htm", kHtml},  {"xhtml", kHtml},
    {"md", kMarkdown}, {"markdown", kMarkdown}, {"srt", kSrt},   {"vtt", kVtt},   {"docx", kDocx},
    {"pptx", kPptx},   {"odt", kOdt},           {"odp", kOdp},   {"epub", kEpub},
};
// Extensions of formats this server does not translate, said so rather than "unknown".
constexpr absl::string_view kNotTranslated[] = {"xlsx", "ods", "pdf", "doc", "ppt", "xls"};

// Media types (lowercase, without parameters) and the formats they claim; others claim nothing.
// Each format's own (kFormats) claims it too.
constexpr Known kMediaTypes[] = {
    {"application/xhtml+xml", kHtml},
    {"text/x-markdown", kMarkdown},
    {"text/x-subrip", kSrt},
    {"application/srt", kSrt},
    {"text/srt", kSrt},
    {"text/x-srt", kSrt},
};

// What a package's entries say it is (OfficePackage: ODF and EPUB by their "mimetype" entry,
// Office Open XML by [Content_Types].xml and its main part).
constexpr Known kPackageMimetypes[] = {
    {"application/vnd.oasis.opendocument.text", kOdt},
    {"application/vnd.oasis.opendocument.presentation", kOdp},
    {"application/epub+zip", kEpub},
};

std::optional<absl::string_view> Lookup(absl::Span<const Known> table, absl::string_view key) {
  for (const Known& known : table) {
    if (known.key == key) return known.format;
  }
  return std::nullopt;
}

absl::string_view Describe(absl::string_view format) {
  const FormatInfo* info = Info(format);
  return info != nullptr ? info->description : "plain text";
}

bool IsPackage(absl::string_view format) {
  const FormatInfo* info = Info(format);
  return info != nullptr && info->package;
}

// ".txt, .html, .md, ..." (with `all`, every extension of kExtensions, else each format's usual).
std::string ExtensionList(bool all) {
  std::vector<std::string> extensions;
  if (all) {
    for (const Known& known : kExtensions) extensions.push_back(absl::StrCat(".", known.key));
  } else {
    extensions = TranslatedFileExtensions();
  }
  return absl::StrJoin(extensions, ", ");
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

// The format of a zip archive's content (`file` names it in errors): an office document by its
// package's entries, or an error saying what the archive is. Opening reads the central directory;
// only the small "mimetype" entry is inflated.
absl::StatusOr<absl::string_view> PackageFormat(const std::string& file,
                                                absl::string_view content) {
  auto within = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(file, ": ", status.message()));
  };
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(std::string(content));
  if (!package.ok()) return within(package.status());
  if (package->Has("mimetype")) {
    absl::StatusOr<std::string> mimetype = package->Read("mimetype");
    if (!mimetype.ok()) return within(mimetype.status());
    const absl::string_view type = absl::StripAsciiWhitespace(*mimetype);
    if (const auto format = Lookup(kPackageMimetypes, type); format.has_value()) return *format;
    return absl::InvalidArgumentError(absl::StrCat(
        file, " is a zip archive whose \"mimetype\" entry says ", Excerpt(type, 80),
        absl::StartsWith(type, "application/vnd.oasis.opendocument.")
            ? "; of OpenDocument files only texts (.odt) and presentations (.odp) are translated"
            : "; the archives translated are .docx, .pptx, .odt, .odp and .epub files"));
  }
  if (package->Has("[Content_Types].xml")) {
    if (package->Has("word/document.xml")) return kDocx;
    if (package->Has("ppt/presentation.xml")) return kPptx;
    if (package->Has("xl/workbook.xml")) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, " is an Excel workbook (XLSX); spreadsheets are not translated"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        file,
        " is an Office Open XML package with neither word/document.xml nor ppt/presentation.xml; "
        "of those only Word documents (.docx) and PowerPoint presentations (.pptx) are "
        "translated"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file,
      " is a zip archive but not an office document (no \"mimetype\" entry, no "
      "[Content_Types].xml); the archives translated are .docx, .pptx, .odt, .odp and .epub "
      "files"));
}

}  // namespace

absl::StatusOr<std::string> DetectFileFormat(const FileClaims& claims, absl::string_view content) {
  const std::string file = claims.file_name.empty()
                               ? "the file"
                               : absl::StrCat("the file \"", Excerpt(claims.file_name), "\"");
  std::vector<Claim> said;
  if (!claims.format.empty()) {
    const FormatInfo* info = Info(absl::AsciiStrToLower(claims.format));
    if (info == nullptr) {
      std::vector<absl::string_view> names;
      for (const FormatInfo& known : kFormats) names.push_back(known.name);
      return absl::InvalidArgumentError(absl::StrCat("the format \"", Excerpt(claims.format),
                                                     "\" given for ", file, " is not one of ",
                                                     absl::StrJoin(names, ", ")));
    }
    said.push_back({absl::StrCat("the format given (", info->name, ")"), info->name});
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
      } else if (std::find(std::begin(kNotTranslated), std::end(kNotTranslated), extension) !=
                 std::end(kNotTranslated)) {
        return absl::InvalidArgumentError(absl::StrCat(
            file, ": .", extension, " files are not translated (only ", ExtensionList(false), ")"));
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": the extension .", Excerpt(extension, 16),
                         " is not of a format translated here (", ExtensionList(true), ")"));
      }
    }
  }
  if (!claims.media_type.empty()) {
    const std::string type = absl::AsciiStrToLower(
        absl::StripAsciiWhitespace(claims.media_type.substr(0, claims.media_type.find(';'))));
    std::optional<absl::string_view> format = Lookup(kMediaTypes, type);
    for (const FormatInfo& info : kFormats) {
      if (info.media_type == type) format = info.name;
    }
    if (format.has_value()) said.push_back({absl::StrCat("its media type ", type), *format});
  }

  const Sniffed sniffed = Sniff(content);
  switch (sniffed) {
    case Sniffed::kUtf16:
      return absl::InvalidArgumentError(
          absl::StrCat(file, " is UTF-16 text (by its byte order mark); only UTF-8 is read"));
    case Sniffed::kPdf:
      return absl::InvalidArgumentError(
          absl::StrCat(file, " is a PDF document; PDF is not translated"));
    case Sniffed::kZip: {
      // An office document: its package's entries decide, and every claim but "text" must agree.
      absl::StatusOr<absl::string_view> found = PackageFormat(file, content);
      if (!found.ok()) return found.status();
      for (const Claim& claim : said) {
        if (claim.format != kText && claim.format != *found) {
          return absl::InvalidArgumentError(absl::StrCat(file, ": ", claim.source, " says ",
                                                         Describe(claim.format),
                                                         " but its content is ", Describe(*found)));
        }
      }
      return std::string(*found);
    }
    default:
      break;
  }
  // Not a zip archive: a claim of an office document is contradicted.
  for (const Claim& claim : said) {
    if (IsPackage(claim.format)) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": ", claim.source, " says ", Describe(claim.format),
          " but its content is not a zip archive (as office documents are); it starts with ",
          FirstLine(content)));
    }
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
  for (const FormatInfo& info : kFormats) {
    extensions.push_back(absl::StrCat(".", ExtensionOfFormat(info.name)));
  }
  return extensions;
}

std::string MediaTypeOfFormat(absl::string_view format) {
  const FormatInfo* info = Info(format);
  if (info == nullptr) info = Info(kText);
  // Text formats are UTF-8; office documents are zip packages, with no charset.
  return info->package ? std::string(info->media_type)
                       : absl::StrCat(info->media_type, "; charset=utf-8");
}

}  // namespace mtserve
