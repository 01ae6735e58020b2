// Which format a file is in, for the file API (transport-neutral: the front ends and
// mttranslate ask the same question): from its name's extension, its media type and a format its
// caller gave (each a claim), and from its content (a sniff of its first bytes). The content
// decides when they disagree, and a claim it contradicts is an error, never a silent choice.
//
// Formats are named as text/document.h's ParseDocumentFormat names them ("text", "html",
// "markdown", "srt", "vtt", "docx", "pptx", "odt", "odp", "epub"), so that this file does not
// depend on which DocumentFormat values a build has: the caller turns the name into a
// DocumentFormat with ParseDocumentFormat.
//
// The rules (DetectFileFormat):
// - The content is sniffed: a WebVTT file by its "WEBVTT" header, a SubRip file by its first cue
//   (a number, then a timing line "00:00:01,000 --> 00:00:02,000"), HTML by the markup the HTML
//   standard's sniffing looks for at its start ("<!DOCTYPE html", "<html", "<p ", "<!--", ...).
//   Markdown has no signature: it is told from plain text by its name or type only.
// - A zip archive is opened as an office package (text/office/office_package.h: its central
//   directory, within its limits, whose errors are the file's) and told by its entries: ODT, ODP
//   and EPUB by their "mimetype" entry (application/vnd.oasis.opendocument.text,
//   application/vnd.oasis.opendocument.presentation, application/epub+zip), DOCX and PPTX by
//   [Content_Types].xml with word/document.xml or ppt/presentation.xml. Other archives
//   (spreadsheets, plain zips) are refused, saying what they are. Binary files the server does
//   not translate are refused by their magic: PDF, and UTF-16 text.
// - "text" (a .txt name, text/plain) is a generic claim: any format the content shows overrides
//   it. Every other claim must agree with the content: an office document's claims must name the
//   format its entries show, and a claim of one on content that is not a zip archive is an error;
//   SubRip and WebVTT content make the file SubRip or WebVTT, and a claim of another format is
//   an error; a SubRip or WebVTT claim on content without its signature is an error; HTML and
//   Markdown claims take content that shows HTML or nothing (Markdown may hold HTML; an HTML
//   fragment need not start with markup).
// - Claims that disagree with each other where the content cannot decide (a .md name with
//   text/html) are an error. An extension this server does not translate is an error naming the
//   extensions it does; a media type it does not know (application/octet-stream, say) claims
//   nothing.
// - Without any claim, the content decides, and content that shows nothing is plain text.
#ifndef MTSERVE_TEXT_FILE_FORMAT_H_
#define MTSERVE_TEXT_FILE_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

// What is said about a file besides its content; each may be empty.
struct FileClaims {
  absl::string_view file_name = "";   // As the client named it (a path's directories are ignored).
  absl::string_view media_type = "";  // A Content-Type value; parameters are ignored.
  absl::string_view format = "";      // A format name the caller gave (ParseDocumentFormat's).
};

// The name of the format of a file with `claims` and `content` (a name of the list above), by the
// rules above. INVALID_ARGUMENT naming the file (its name, or "the file") and what was claimed
// and found otherwise (for an archive, OfficePackage::Open's error: the entry and the limit).
absl::StatusOr<std::string> DetectFileFormat(const FileClaims& claims, absl::string_view content);

// The usual extension of a file of format `format` (a name DetectFileFormat returns), without
// its dot: "txt", "html", "md", "srt", "vtt", "docx", "pptx", "odt", "odp", "epub".
absl::string_view ExtensionOfFormat(absl::string_view format);

// The usual extensions of the formats translated here, one per format, each with its dot (as
// LibreTranslate lists the files it takes).
std::vector<std::string> TranslatedFileExtensions();

// The media type of a translated file of format `format` (a name DetectFileFormat returns), with
// its charset for text formats: "text/plain; charset=utf-8", "application/x-subrip;
// charset=utf-8", ...; an office document's without one ("application/epub+zip").
std::string MediaTypeOfFormat(absl::string_view format);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_FILE_FORMAT_H_
