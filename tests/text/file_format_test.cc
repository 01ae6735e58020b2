// Which format a file is in (text/file_format.h): claims by name, media type and caller, the
// content's signatures, the content deciding, and an error naming the file and what was claimed
// and found for every contradiction.
#include "text/file_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/test_lib/zip_archive.h"

namespace mtserve {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr absl::string_view kSrt =
    "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello there.\r\n\r\n"
    "2\r\n00:00:03,000 --> 00:00:04,000\r\nHow are you?\r\n";
constexpr absl::string_view kVtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nHello there.\n";
constexpr absl::string_view kHtml = "<!DOCTYPE html>\n<html><body><p>Hello.</p></body></html>\n";
constexpr absl::string_view kMarkdown = "# Title\n\nSome *emphasis* and a [link](https://x.y).\n";
constexpr absl::string_view kPlain = "Hello there.\nHow are you?\n";

std::string Format(FileClaims claims, absl::string_view content) {
  absl::StatusOr<std::string> format = DetectFileFormat(claims, content);
  EXPECT_TRUE(format.ok()) << format.status();
  return format.value_or("");
}

std::string Error(FileClaims claims, absl::string_view content) {
  absl::StatusOr<std::string> format = DetectFileFormat(claims, content);
  EXPECT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument) << format.value_or("");
  return std::string(format.status().message());
}

TEST(FileFormatTest, EachFormatByItsNameTypeAndContent) {
  EXPECT_EQ(Format({.file_name = "notes.txt"}, kPlain), "text");
  EXPECT_EQ(Format({.file_name = "page.html"}, kHtml), "html");
  EXPECT_EQ(Format({.file_name = "PAGE.HTM"}, kHtml), "html");
  EXPECT_EQ(Format({.file_name = "README.md"}, kMarkdown), "markdown");
  EXPECT_EQ(Format({.file_name = "film.srt"}, kSrt), "srt");
  EXPECT_EQ(Format({.file_name = "film.vtt"}, kVtt), "vtt");
  EXPECT_EQ(Format({.media_type = "text/markdown; charset=UTF-8"}, kMarkdown), "markdown");
  EXPECT_EQ(Format({.media_type = "application/x-subrip"}, kSrt), "srt");
  EXPECT_EQ(Format({.media_type = "text/vtt"}, kVtt), "vtt");
  EXPECT_EQ(Format({.format = "markdown"}, kMarkdown), "markdown");
  EXPECT_EQ(Format({.format = "SRT"}, kSrt), "srt");
}

TEST(FileFormatTest, TheContentAloneDecidesWithoutClaims) {
  EXPECT_EQ(Format({}, kSrt), "srt");
  EXPECT_EQ(Format({}, kVtt), "vtt");
  EXPECT_EQ(Format({}, kHtml), "html");
  EXPECT_EQ(Format({}, kPlain), "text");
  EXPECT_EQ(Format({}, kMarkdown), "text");  // Markdown has no signature.
  EXPECT_EQ(Format({}, ""), "text");
  // A name without an extension, and a media type that claims nothing.
  EXPECT_EQ(Format({.file_name = "subtitles", .media_type = "application/octet-stream"}, kSrt),
            "srt");
  EXPECT_EQ(Format({.file_name = ".hidden"}, kPlain), "text");
}

TEST(FileFormatTest, SignaturesAsTheyAppearInFiles) {
  // UTF-8's byte order mark, blank lines before the first cue, '.' for ',', hours of one digit,
  // coordinates after the timing, a header with a title.
  EXPECT_EQ(Format({},
                   "\xEF\xBB\xBF"
                   "1\n00:00:01,000 --> 00:00:02,000\nHi\n"),
            "srt");
  EXPECT_EQ(Format({}, "\n\n  \r\n12\r\n0:00:01.000-->0:00:02.000\r\nHi\r\n"), "srt");
  EXPECT_EQ(Format({}, "1\n00:00:01,000 --> 00:00:02,000 X1:40 X2:600 Y1:20 Y2:50\nHi\n"), "srt");
  EXPECT_EQ(Format({}, "\xEF\xBB\xBFWEBVTT - A title\n\n00:01.000 --> 00:02.000\nHi\n"), "vtt");
  EXPECT_EQ(Format({}, "WEBVTT"), "vtt");
  EXPECT_EQ(Format({}, "  \n<P>Hello</P>"), "html");
  EXPECT_EQ(Format({}, "<div class=\"a\">x</div>"), "html");
  EXPECT_EQ(Format({}, "<!-- a comment -->x"), "html");
  // Near misses.
  EXPECT_EQ(Format({}, "WEBVTTX\n"), "text");
  EXPECT_EQ(Format({}, "1\n00:00:01 --> 00:00:02\nHi\n"), "text");
  EXPECT_EQ(Format({}, "1 2\n00:00:01,000 --> 00:00:02,000\nHi\n"), "text");
  EXPECT_EQ(Format({}, "1\n00:00:01,000 --> 00:00:02,000x\nHi\n"), "text");
  EXPECT_EQ(Format({}, "<pre>x</pre>"), "text");  // Not among the standard's openings.
  EXPECT_EQ(Format({}, "a <p>late</p> tag"), "text");
}

TEST(FileFormatTest, TheContentOverridesAGenericTextClaim) {
  EXPECT_EQ(Format({.file_name = "film.txt", .media_type = "text/plain"}, kSrt), "srt");
  EXPECT_EQ(Format({.file_name = "film.txt"}, kVtt), "vtt");
  EXPECT_EQ(Format({.file_name = "page.txt"}, kHtml), "html");
  EXPECT_EQ(Format({.format = "text"}, kSrt), "srt");
}

TEST(FileFormatTest, HtmlAndMarkdownClaimsTakeContentWithoutASignature) {
  // A Markdown file may start with HTML (a centred logo, say); an HTML fragment with text.
  EXPECT_EQ(Format({.file_name = "README.md"}, "<p align=\"center\">logo</p>\n\n# Title\n"),
            "markdown");
  EXPECT_EQ(Format({.file_name = "README.md", .media_type = "text/plain"}, kMarkdown), "markdown");
  EXPECT_EQ(Format({.file_name = "fragment.html"}, "Hello <b>world</b>"), "html");
  EXPECT_EQ(Format({.media_type = "text/html"}, kPlain), "html");
}

TEST(FileFormatTest, AClaimTheContentContradictsIsAnError) {
  // The brief's example: a .srt that is not SubRip.
  EXPECT_THAT(Error({.file_name = "film.srt"}, kPlain),
              AllOf(HasSubstr("the file \"film.srt\""), HasSubstr("extension .srt says SubRip"),
                    HasSubstr("00:00:01,000 --> 00:00:02,000"),
                    HasSubstr("it starts with \"Hello there.\"")));
  EXPECT_THAT(Error({.file_name = "film.vtt"}, kSrt),
              AllOf(HasSubstr("the file \"film.vtt\""), HasSubstr("says WebVTT"),
                    HasSubstr("its content is SubRip")));
  EXPECT_THAT(Error({.file_name = "film.srt"}, kVtt), HasSubstr("its content is WebVTT"));
  EXPECT_THAT(Error({.media_type = "text/vtt"}, kHtml),
              AllOf(HasSubstr("the file:"), HasSubstr("media type text/vtt says WebVTT"),
                    HasSubstr("does not start with a WEBVTT header")));
  EXPECT_THAT(Error({.file_name = "notes.md"}, kSrt),
              AllOf(HasSubstr("says Markdown"), HasSubstr("content is SubRip")));
  EXPECT_THAT(Error({.format = "html"}, kVtt), HasSubstr("the format given (html) says HTML"));
  EXPECT_THAT(Error({.file_name = "film.srt"}, "\n\n"), HasSubstr("nothing but blank lines"));
}

TEST(FileFormatTest, ClaimsThatDisagreeWithNothingToDecideAreAnError) {
  EXPECT_THAT(
      Error({.file_name = "a.md", .media_type = "text/html"}, kPlain),
      AllOf(HasSubstr("extension .md says Markdown"), HasSubstr("media type text/html says HTML")));
  // The content decides between two subtitle claims, and the one it contradicts is named.
  EXPECT_THAT(Error({.file_name = "a.srt", .media_type = "text/vtt"}, kSrt),
              HasSubstr("media type text/vtt says WebVTT but its content is SubRip"));
}

TEST(FileFormatTest, FilesNotTranslatedHereAreNamed) {
  EXPECT_THAT(Error({.file_name = "report.xlsx"}, "PK\x03\x04rest"),
              AllOf(HasSubstr(".xlsx files are not translated"), HasSubstr(".docx, .pptx")));
  EXPECT_THAT(Error({.file_name = "data.json"}, "{}"),
              AllOf(HasSubstr("the extension .json"), HasSubstr(".srt"), HasSubstr(".epub")));
  EXPECT_THAT(Error({}, "%PDF-1.7\n"), HasSubstr("PDF"));
  EXPECT_THAT(Error({.file_name = "notes.txt"}, "\xFF\xFEH\0i\0"), HasSubstr("UTF-16"));
  EXPECT_THAT(Error({.format = "pdf"}, kPlain),
              HasSubstr("\"pdf\" given for the file is not one of text, html, markdown, srt, vtt, "
                        "docx, pptx, odt, odp, epub"));
  // Directories in the name are not the file's name.
  EXPECT_EQ(Format({.file_name = "C:\\subs.d\\film.srt"}, kSrt), "srt");
  EXPECT_EQ(Format({.file_name = "a.dir/notes"}, kPlain), "text");
}

TEST(FileFormatTest, MediaTypesOfResults) {
  EXPECT_EQ(MediaTypeOfFormat("text"), "text/plain; charset=utf-8");
  EXPECT_EQ(MediaTypeOfFormat("html"), "text/html; charset=utf-8");
  EXPECT_EQ(MediaTypeOfFormat("markdown"), "text/markdown; charset=utf-8");
  EXPECT_EQ(MediaTypeOfFormat("srt"), "application/x-subrip; charset=utf-8");
  EXPECT_EQ(MediaTypeOfFormat("vtt"), "text/vtt; charset=utf-8");
  // Office documents are binary: their registered types, without a charset.
  EXPECT_EQ(MediaTypeOfFormat("docx"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
  EXPECT_EQ(MediaTypeOfFormat("pptx"),
            "application/vnd.openxmlformats-officedocument.presentationml.presentation");
  EXPECT_EQ(MediaTypeOfFormat("odt"), "application/vnd.oasis.opendocument.text");
  EXPECT_EQ(MediaTypeOfFormat("odp"), "application/vnd.oasis.opendocument.presentation");
  EXPECT_EQ(MediaTypeOfFormat("epub"), "application/epub+zip");
}

TEST(FileFormatTest, ExtensionsOfTheFormats) {
  EXPECT_THAT(TranslatedFileExtensions(),
              ::testing::ElementsAre(".txt", ".html", ".md", ".srt", ".vtt", ".docx", ".pptx",
                                     ".odt", ".odp", ".epub"));
  EXPECT_EQ(ExtensionOfFormat("epub"), "epub");
  EXPECT_EQ(ExtensionOfFormat("markdown"), "md");
}

using ::mtserve::testing::ZipArchive;

constexpr absl::string_view kXml = "<?xml version=\"1.0\"?><x/>";

std::string Ooxml(absl::string_view main_part) {
  return ZipArchive({{"[Content_Types].xml", std::string(kXml)},
                     {"_rels/.rels", std::string(kXml)},
                     {std::string(main_part), std::string(kXml)}});
}

std::string Packaged(absl::string_view mimetype) {
  return ZipArchive({{"mimetype", std::string(mimetype)},
                     {"META-INF/container.xml", std::string(kXml)},
                     {"content.xml", std::string(kXml)}});
}

TEST(FileFormatTest, OfficeDocumentsByTheirPackagesEntries) {
  const std::string docx = Ooxml("word/document.xml");
  const std::string pptx = Ooxml("ppt/presentation.xml");
  const std::string odt = Packaged("application/vnd.oasis.opendocument.text");
  const std::string odp = Packaged("application/vnd.oasis.opendocument.presentation");
  const std::string epub = Packaged("application/epub+zip");
  // By the content alone, and with each claim that agrees.
  EXPECT_EQ(Format({}, docx), "docx");
  EXPECT_EQ(Format({}, pptx), "pptx");
  EXPECT_EQ(Format({}, odt), "odt");
  EXPECT_EQ(Format({}, odp), "odp");
  EXPECT_EQ(Format({}, epub), "epub");
  EXPECT_EQ(Format({.file_name = "Report.DOCX"}, docx), "docx");
  EXPECT_EQ(Format({.file_name = "slides.pptx"}, pptx), "pptx");
  EXPECT_EQ(Format({.file_name = "letter.odt"}, odt), "odt");
  EXPECT_EQ(Format({.file_name = "talk.odp"}, odp), "odp");
  EXPECT_EQ(Format({.file_name = "book.epub"}, epub), "epub");
  EXPECT_EQ(Format({.media_type =
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
                   docx),
            "docx");
  EXPECT_EQ(
      Format({.media_type =
                  "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
             pptx),
      "pptx");
  EXPECT_EQ(Format({.media_type = "application/vnd.oasis.opendocument.text"}, odt), "odt");
  EXPECT_EQ(Format({.media_type = "application/vnd.oasis.opendocument.presentation"}, odp), "odp");
  EXPECT_EQ(Format({.media_type = "application/epub+zip"}, epub), "epub");
  EXPECT_EQ(Format({.format = "docx"}, docx), "docx");
  EXPECT_EQ(Format({.file_name = "x.epub", .media_type = "application/octet-stream"}, epub),
            "epub");
  // A mimetype entry written with a line end, and a generic text claim, give way to the content.
  EXPECT_EQ(Format({}, Packaged("application/epub+zip\r\n")), "epub");
  EXPECT_EQ(Format({.file_name = "notes.txt"}, odt), "odt");
}

TEST(FileFormatTest, AnOfficeClaimTheContentContradictsIsAnError) {
  // The brief's examples: a .docx that is an ODT, a .docx that is plain text.
  EXPECT_THAT(
      Error({.file_name = "report.docx"}, Packaged("application/vnd.oasis.opendocument.text")),
      AllOf(HasSubstr("the file \"report.docx\""),
            HasSubstr("extension .docx says a Word document (DOCX)"),
            HasSubstr("its content is an OpenDocument text (ODT)")));
  EXPECT_THAT(Error({.file_name = "report.docx"}, kPlain),
              AllOf(HasSubstr("the file \"report.docx\""), HasSubstr("not a zip archive"),
                    HasSubstr("it starts with \"Hello there.\"")));
  EXPECT_THAT(Error({.media_type = "application/epub+zip"}, Ooxml("ppt/presentation.xml")),
              AllOf(HasSubstr("media type application/epub+zip says an EPUB book"),
                    HasSubstr("content is a PowerPoint presentation (PPTX)")));
  EXPECT_THAT(Error({.format = "odp"}, Ooxml("word/document.xml")),
              HasSubstr("the format given (odp) says an OpenDocument presentation (ODP) but its "
                        "content is a Word document (DOCX)"));
  // A text format's claim on an office document.
  EXPECT_THAT(Error({.file_name = "page.html"}, Packaged("application/epub+zip")),
              HasSubstr("extension .html says HTML but its content is an EPUB book"));
}

TEST(FileFormatTest, OtherArchivesAreRefusedSayingWhatTheyAre) {
  EXPECT_THAT(Error({.file_name = "sheet"}, Ooxml("xl/workbook.xml")),
              AllOf(HasSubstr("the file \"sheet\""), HasSubstr("Excel workbook (XLSX)")));
  EXPECT_THAT(Error({}, Ooxml("visio/document.xml")),
              HasSubstr("neither word/document.xml nor ppt/presentation.xml"));
  EXPECT_THAT(Error({}, Packaged("application/vnd.oasis.opendocument.spreadsheet")),
              AllOf(HasSubstr("application/vnd.oasis.opendocument.spreadsheet"),
                    HasSubstr("only texts (.odt) and presentations (.odp)")));
  EXPECT_THAT(Error({.file_name = "photos.zip"}, ZipArchive({{"a.jpg", "not really"}})),
              HasSubstr(".zip is not of a format translated here"));
  EXPECT_THAT(Error({.file_name = "upload"}, ZipArchive({{"a.txt", "hello"}})),
              AllOf(HasSubstr("the file \"upload\" is a zip archive but not an office document"),
                    HasSubstr(".docx, .pptx, .odt, .odp and .epub")));
  // What is not an archive at all, past its magic: the package's own error, naming the file.
  EXPECT_THAT(Error({.file_name = "report.docx"}, "PK\x03\x04rest"),
              HasSubstr("the file \"report.docx\""));
}

}  // namespace
}  // namespace mtserve
