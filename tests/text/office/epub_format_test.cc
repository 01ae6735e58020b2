// EPUB files translated (text/office/epub_format.cc): the container and package document read
// (text/office/epub_package.h) on hand-written parts, and whole books made by pandoc
// (tests/data/office/book2.epub and book3.epub, made by tools/make_office_fixtures.py)
// translated by the test model and read back: every rendered part parses as XML, untouched
// entries are identical, plain paragraphs are their text's plain translation, emphasis and links
// are kept on words, language tags are the target's, and pandoc reads the result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tests/test_lib/part_runs.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "text/document.h"
#include "text/office/epub_package.h"
#include "text/office/epub_xhtml.h"
#include "text/office/office_package.h"
#include "text/office/xml_scan.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using ::mtserve::testing::Texts;
using ::mtserve::testing::Upper;

std::vector<std::string> Names(const std::vector<EpubPackageDocument::Item>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.name);
  return out;
}

constexpr char kOpf[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<package version="3.0" xmlns="http://www.idpf.org/2007/opf" unique-identifier="id" xml:lang="en">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:1</dc:identifier>
    <dc:title id="t">A Small &amp; Short Book</dc:title>
    <dc:language>en</dc:language>
    <dc:language>fr</dc:language>
    <dc:description><![CDATA[A book <about> a cat.]]></dc:description>
    <dc:creator>Ann Author</dc:creator>
  </metadata>
  <manifest>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml" />
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav" />
    <item id="css" href="styles/a.css" media-type="text/css" />
    <item id="c2" href="text/ch%202.xhtml#start" media-type="application/xhtml+xml" />
    <item id="c1" href="./text/../text/ch1.xhtml" media-type="application/xhtml+xml" />
    <item id="c1again" href="text/ch1.xhtml" media-type="application/xhtml+xml" />
    <item id="video" href="https://example.com/v.mp4" media-type="video/mp4" />
  </manifest>
  <spine toc="ncx">
    <itemref idref="c1" />
    <itemref idref="c2" />
    <itemref idref="missing" />
  </spine>
</package>
)";

TEST(EpubPackageTest, ContainerNamesThePackageDocument) {
  const std::string container =
      "<?xml version=\"1.0\"?><container version=\"1.0\" "
      "xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\"><rootfiles>"
      "<rootfile full-path=\"OEBPS/./content.opf\" media-type=\"application/oebps-package+xml\"/>"
      "</rootfiles></container>";
  EXPECT_EQ(*PackageDocumentName(container), "OEBPS/content.opf");
  for (const char* path : {"../content.opf", "/content.opf", "a/../../content.opf", ""}) {
    const absl::StatusOr<std::string> name =
        PackageDocumentName(absl::StrReplaceAll(container, {{"OEBPS/./content.opf", path}}));
    ASSERT_FALSE(name.ok()) << path;
    EXPECT_EQ(name.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(name.status().message(), HasSubstr("part META-INF/container.xml: ")) << path;
  }
  EXPECT_FALSE(PackageDocumentName("<container><rootfiles/></container>").ok());
  EXPECT_THAT(
      PackageDocumentName("<!DOCTYPE c [<!ENTITY a \"b\">]><container/>").status().message(),
      HasSubstr("DOCTYPE"));
}

TEST(EpubPackageTest, PackageDocumentGivesItsTextsAndTheXhtmlInReadingOrder) {
  absl::StatusOr<EpubPackageDocument> opf =
      TakeApartPackageDocument("OEBPS/content.opf", kOpf, "de");
  ASSERT_TRUE(opf.ok()) << opf.status();
  EXPECT_EQ(opf->source_language, "en");
  EXPECT_THAT(Texts(*opf->runs), ElementsAre("A Small & Short Book", "A book <about> a cat."));
  EXPECT_THAT(Names(opf->ncx), ElementsAre("OEBPS/toc.ncx"));
  // The spine's in order, then the manifest's others; one entry once.
  EXPECT_THAT(Names(opf->xhtml),
              ElementsAre("OEBPS/text/ch1.xhtml", "OEBPS/text/ch 2.xhtml", "OEBPS/nav.xhtml"));
  const std::string out = opf->runs->Render(Upper(*opf->runs));
  std::string expected = kOpf;
  expected = absl::StrReplaceAll(
      expected, {{"A Small &amp; Short Book", "A SMALL &amp; SHORT BOOK"},
                 {"<![CDATA[A book <about> a cat.]]>", "A BOOK &lt;ABOUT&gt; A CAT."},
                 {"<dc:language>en<", "<dc:language>de<"},
                 {"xml:lang=\"en\"", "xml:lang=\"de\""}});
  EXPECT_EQ(out, expected);
  EXPECT_TRUE(ParseEpubXml("out", out).ok());
  // No target language: the languages stay.
  opf = TakeApartPackageDocument("OEBPS/content.opf", kOpf, "");
  EXPECT_THAT(opf->runs->Render(Upper(*opf->runs)), HasSubstr("<dc:language>en<"));
}

TEST(EpubPackageTest, HostilePackageDocumentsAreRefusedNamingThePartAndItem) {
  for (const char* href : {"../../etc/passwd", "/etc/passwd", "a/%2E%2E/%2E%2E/%2E%2E/x"}) {
    const std::string opf = absl::StrReplaceAll(kOpf, {{"styles/a.css", href}});
    const absl::StatusOr<EpubPackageDocument> parsed =
        TakeApartPackageDocument("OEBPS/content.opf", opf, "de");
    ASSERT_FALSE(parsed.ok()) << href;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("part OEBPS/content.opf: manifest item \"css\""));
    EXPECT_THAT(parsed.status().message(), HasSubstr("outside the archive"));
  }
  EXPECT_THAT(TakeApartPackageDocument("a.opf", "<html/>", "de").status().message(),
              HasSubstr("part a.opf: the root element is <html>"));
  EXPECT_THAT(TakeApartPackageDocument("a.opf", "<package>", "de").status().message(),
              HasSubstr("part a.opf: malformed XML"));
}

TEST(EpubPackageTest, NcxLabelsAndTitleAreRuns) {
  const std::string ncx =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE ncx PUBLIC \"-//NISO//DTD ncx 2005-1//EN\" "
      "\"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd\">\n"
      "<ncx version=\"2005-1\" xml:lang=\"en\" xmlns=\"http://www.daisy.org/z3986/2005/ncx/\">\n"
      "<head><meta name=\"dtb:uid\" content=\"x\"/></head>\n"
      "<docTitle><text>A Small Book</text></docTitle><docAuthor><text>Ann</text></docAuthor>\n"
      "<navMap><navPoint id=\"n1\"><navLabel><text>\n  The First Chapter\n</text></navLabel>"
      "<content src=\"ch1.xhtml\"/><navPoint id=\"n2\"><navLabel><text>Cats &amp; dogs</text>"
      "</navLabel><content src=\"ch1.xhtml#b\"/></navPoint></navPoint></navMap></ncx>\n";
  absl::StatusOr<std::unique_ptr<PartRuns>> part = TakeApartNcx("toc.ncx", ncx, "en", "de");
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_THAT(Texts(**part), ElementsAre("A Small Book", "The First Chapter", "Cats & dogs"));
  const std::string out = (*part)->Render(Upper(**part));
  EXPECT_EQ(out, absl::StrReplaceAll(ncx, {{">A Small Book<", ">A SMALL BOOK<"},
                                           {"\n  The First Chapter\n", "\n  THE FIRST CHAPTER\n"},
                                           {"Cats &amp; dogs", "CATS &amp; DOGS"},
                                           {"xml:lang=\"en\"", "xml:lang=\"de\""}}));
  EXPECT_TRUE(ParseEpubXml("out", out).ok());
}

// The standard output of `command`, and whether it exited 0.
std::pair<std::string, bool> RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", false};
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  return {out, pclose(pipe) == 0};
}

class EpubFormatTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }

  // `text` of `format` translated by the test model into German.
  absl::StatusOr<std::string> Translate(const std::string& text, DocumentFormat format) const {
    return testing::TranslateDocument(model_, *splitter_, text, format, "de");
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_P(EpubFormatTest, BookIsTranslatedWithItsFormattingAndEveryOtherEntryKept) {
  const std::string source = testing::ReadOfficeFixture(GetParam());
  ASSERT_FALSE(source.empty());
  ASSERT_OK_AND_ASSIGN(const std::string translated, Translate(source, DocumentFormat::kEpub));
  ASSERT_OK_AND_ASSIGN(OfficePackage before, OfficePackage::Open(source));
  ASSERT_OK_AND_ASSIGN(OfficePackage after, OfficePackage::Open(translated));
  ASSERT_EQ(after.names(), before.names());
  EXPECT_EQ(after.names().front(), "mimetype");
  const std::vector<std::string> rewritten = {"EPUB/content.opf",      "EPUB/toc.ncx",
                                              "EPUB/nav.xhtml",        "EPUB/text/title_page.xhtml",
                                              "EPUB/text/ch001.xhtml", "EPUB/text/ch002.xhtml"};
  for (const std::string& name : before.names()) {
    ASSERT_OK_AND_ASSIGN(const std::string was, before.Read(name));
    ASSERT_OK_AND_ASSIGN(const std::string is, after.Read(name));
    if (std::find(rewritten.begin(), rewritten.end(), name) == rewritten.end()) {
      EXPECT_EQ(is, was) << name;  // mimetype, container, styles, the image.
    } else {
      EXPECT_NE(is, was) << name;
      EXPECT_TRUE(ParseEpubXml(name, is).ok()) << name << "\n" << is;
    }
  }
  ASSERT_OK_AND_ASSIGN(const std::string opf, after.Read("EPUB/content.opf"));
  EXPECT_THAT(opf, HasSubstr("<dc:language>de</dc:language>"));
  EXPECT_THAT(opf,
              Not(HasSubstr(">A Small Book<")));  // dc:title (the guide's title attribute stays).
  EXPECT_THAT(opf, Not(HasSubstr("A short book")));  // dc:description.
  ASSERT_OK_AND_ASSIGN(const std::string ncx, after.Read("EPUB/toc.ncx"));
  EXPECT_THAT(ncx, Not(HasSubstr("The First Chapter")));
  ASSERT_OK_AND_ASSIGN(const std::string ch1, after.Read("EPUB/text/ch001.xhtml"));
  ASSERT_OK_AND_ASSIGN(const std::string ch2, after.Read("EPUB/text/ch002.xhtml"));
  ASSERT_OK_AND_ASSIGN(const std::string nav, after.Read("EPUB/nav.xhtml"));
  for (const std::string* part : {&ch1, &ch2, &nav}) {
    EXPECT_THAT(*part, HasSubstr("xml:lang=\"de\""));
    EXPECT_THAT(*part, Not(HasSubstr("xml:lang=\"en\"")));
  }
  // A plain paragraph is its text's plain translation.
  ASSERT_OK_AND_ASSIGN(const std::string warm,
                       Translate("The weather was warm.", DocumentFormat::kPlainText));
  EXPECT_THAT(ch2, HasSubstr(absl::StrCat("<p>", warm, "</p>")));
  // Emphasis, strong and the link kept around words of their paragraphs' translations.
  for (const auto& [part, open, close] :
       std::vector<std::tuple<const std::string*, std::string, std::string>>{
           {&ch1, "<em>", "</em>"},
           {&ch1, "<a href=\"https://example.com\">", "</a>"},
           {&ch2, "<strong>", "</strong>"}}) {
    const size_t at = part->find(open);
    ASSERT_NE(at, std::string::npos) << open;
    const size_t end = part->find(close, at);
    ASSERT_NE(end, std::string::npos) << open;
    EXPECT_GT(end, at + open.size()) << "an empty " << open;
    EXPECT_EQ(part->rfind("<p>", at), part->rfind("<p>", end)) << open << " left its paragraph";
  }
  // The table's cells and the image stay.
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(ch1, "<td>")).size(), 5u);
  EXPECT_THAT(ch1, HasSubstr("<img src=\"../media/file0.png\""));

  // pandoc reads it, and its text is the translation's.
  const std::string path = absl::StrCat(::testing::TempDir(), "/translated-", GetParam());
  std::ofstream(path, std::ios::binary) << translated;
  const auto [plain, ok] = RunCommand(absl::StrCat("pandoc -f epub -t plain '", path, "' 2>&1"));
  EXPECT_TRUE(ok) << plain;
  EXPECT_THAT(plain, HasSubstr(warm));
  EXPECT_THAT(plain, Not(HasSubstr("The weather was warm.")));
}

TEST_P(EpubFormatTest, HostileBooksAreRefusedNamingThePart) {
  ASSERT_OK_AND_ASSIGN(OfficePackage book,
                       OfficePackage::Open(testing::ReadOfficeFixture(GetParam())));
  ASSERT_OK_AND_ASSIGN(const std::string container, book.Read("META-INF/container.xml"));
  ASSERT_OK_AND_ASSIGN(const std::string opf, book.Read("EPUB/content.opf"));
  ASSERT_OK_AND_ASSIGN(const std::string chapter, book.Read("EPUB/text/ch001.xhtml"));
  const struct {
    std::string entry, from, to, message;
  } kCases[] = {
      {"mimetype", "application/epub+zip", "application/zip",
       "part mimetype: is not application/epub+zip"},
      {"META-INF/container.xml", "EPUB/content.opf", "../content.opf",
       "part META-INF/container.xml: rootfile full-path \"../content.opf\" is outside the archive"},
      {"META-INF/container.xml", "EPUB/content.opf", "EPUB/other.opf",
       "part META-INF/container.xml: rootfile full-path names EPUB/other.opf, which the archive "
       "does not have"},
      {"EPUB/content.opf", "text/ch001.xhtml", "../../ch001.xhtml",
       "part EPUB/content.opf: manifest item \"ch001_xhtml\" (href \"../../ch001.xhtml\") is "
       "outside the archive"},
      {"EPUB/content.opf", "text/ch001.xhtml", "text/ch009.xhtml",
       "part EPUB/content.opf: manifest item \"ch001_xhtml\" names EPUB/text/ch009.xhtml, which "
       "the archive does not have"},
      {"EPUB/text/ch001.xhtml", "<!DOCTYPE html", "<!DOCTYPE html [<!ENTITY a \"b\">]",
       "part EPUB/text/ch001.xhtml: a DOCTYPE with an internal subset is not accepted"},
      {"EPUB/text/ch001.xhtml", "</table>", "</tabl>", "part EPUB/text/ch001.xhtml: malformed XML"},
  };
  for (const auto& c : kCases) {
    ASSERT_OK_AND_ASSIGN(const std::string was, book.Read(c.entry));
    ASSERT_THAT(was, HasSubstr(c.from)) << c.entry;
    const std::string hostile = book.Write({{c.entry, absl::StrReplaceAll(was, {{c.from, c.to}})}});
    const absl::StatusOr<std::string> translated = Translate(hostile, DocumentFormat::kEpub);
    ASSERT_FALSE(translated.ok()) << c.message;
    EXPECT_EQ(translated.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(translated.status().message(), HasSubstr(c.message));
  }
  // The unchanged book still translates (the cases above are what failed).
  EXPECT_TRUE(Translate(book.Write({}), DocumentFormat::kEpub).ok());
}

INSTANTIATE_TEST_SUITE_P(Pandoc, EpubFormatTest, ::testing::Values("book3.epub", "book2.epub"));

}  // namespace
}  // namespace mtserve
