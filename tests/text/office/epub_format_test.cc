// EPUB files translated (text/office/epub_format.cc): the container and package document read
// (text/office/epub_package.h) on hand-written parts, and whole books made by pandoc
// (tests/data/office/book2.epub and book3.epub, made by tools/make_office_fixtures.py)
// translated by the test model and read back: every rendered part parses as XML, untouched
// entries are identical, plain paragraphs are their text's plain translation, emphasis and links
// are kept on words, language tags are the target's, and pandoc reads the result. A book of
// hand-written parts with translate="no" and ignore_tags elements, translated with a terminology,
// read back by python3's zipfile and xml.etree: those elements' text as written, as HTML's.
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
#include "tests/test_lib/zip_archive.h"
#include "text/document.h"
#include "text/office/epub_package.h"
#include "text/office/epub_xhtml.h"
#include "text/office/office_package.h"
#include "text/office/xml_scan.h"
#include "text/term_matcher.h"

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

// A chapter with a sentence holding an inline <span translate="no">, a paragraph marked
// translate="no" and an element of a tag the request's ignore_tags lists, in a book of its
// own parts (tests/test_lib/zip_archive.h).
constexpr char kKeptParagraph[] =
    "<p>A man in a red shirt is riding a <span translate=\"no\">Zorblax 3000</span> bike.</p>";
constexpr char kKeptBlock[] = "<p translate=\"no\">The dog runs in the park.</p>";
constexpr char kIgnoredTag[] = "<p>A woman is holding a <product>Quux Omega</product> camera.</p>";

std::string BookWithKeptSpans() {
  const std::string opf =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<package version=\"3.0\" xmlns=\"http://www.idpf.org/2007/opf\" unique-identifier=\"id\">"
      "<metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:identifier id=\"id\">urn:x"
      "</dc:identifier><dc:title>Kept</dc:title><dc:language>en</dc:language></metadata>"
      "<manifest><item id=\"c1\" href=\"ch1.xhtml\" media-type=\"application/xhtml+xml\"/>"
      "</manifest><spine><itemref idref=\"c1\"/></spine></package>\n";
  const std::string chapter = absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
      "<html xmlns=\"http://www.w3.org/1999/xhtml\" xml:lang=\"en\" lang=\"en\">\n"
      "<head><title>Kept</title></head>\n<body>\n",
      kKeptParagraph, "\n", kKeptBlock, "\n", kIgnoredTag, "\n</body>\n</html>\n");
  return testing::ZipArchive(
      {{"mimetype", "application/epub+zip"},
       {"META-INF/container.xml",
        "<?xml version=\"1.0\"?><container version=\"1.0\" "
        "xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\"><rootfiles><rootfile "
        "full-path=\"OEBPS/content.opf\" media-type=\"application/oebps-package+xml\"/>"
        "</rootfiles></container>"},
       {"OEBPS/content.opf", opf},
       {"OEBPS/ch1.xhtml", chapter}});
}

// An EPUB's XHTML gets HTML's handling of what is not to be translated (HtmlOptionsFor): with a
// terminology, an inline translate="no" element and one of an ignore_tags tag are kept as
// written inside their sentences; a paragraph marked translate="no" is kept whole.
class EpubKeptSpansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
    ASSERT_OK_AND_ASSIGN(matcher_,
                         CompileTerminology(Terminology(), model_->tokenizer(), "options."));
  }

  SentenceRules Rules() const {
    SentenceRules rules{splitter_.get(), &model_->tokenizer(), 256, {}, "de"};
    rules.terms = matcher_.get();
    rules.ignore_tags = {"product"};
    return rules;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
  std::shared_ptr<const TermMatcher> matcher_;
};

TEST_F(EpubKeptSpansTest, InlineSpansAreKeptTermsOfTheirSentences) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(BookWithKeptSpans(), DocumentFormat::kEpub, Rules()));
  // The title twice (dc:title, <title>) and the two paragraphs translated, each one sentence.
  std::vector<std::string> kept;
  for (const SourceSentence& s : document->sentences()) {
    if (s.terms == nullptr) continue;
    for (const SentenceTerms::Term& t : s.terms->terms) {
      EXPECT_TRUE(t.kept);
      kept.push_back(t.forms[0].text);
    }
  }
  EXPECT_THAT(kept, ElementsAre("Zorblax 3000", "Quux Omega"));
  EXPECT_EQ(document->sentences().size(), 4u);
}

TEST_F(EpubKeptSpansTest, TranslatedBookHoldsTheSpansAsWrittenAsHtmlDoes) {
  const std::string source = BookWithKeptSpans();
  ASSERT_OK_AND_ASSIGN(const TextTranslation translation,
                       testing::TranslateDocument(model_, source, DocumentFormat::kEpub, Rules()));
  const std::string& translated = translation.hypotheses[0].text;
  // Read back by python3's zipfile and xml.etree: each paragraph's translate attribute, its text,
  // and each element's in it with its tag and text.
  const std::string path = absl::StrCat(::testing::TempDir(), "/kept-spans.epub");
  std::ofstream(path, std::ios::binary) << translated;
  const std::string script = absl::StrCat(::testing::TempDir(), "/kept_spans.py");
  std::ofstream(script) << R"(import sys, zipfile, xml.etree.ElementTree as ET
X = '{http://www.w3.org/1999/xhtml}'
root = ET.fromstring(zipfile.ZipFile(sys.argv[1]).read('OEBPS/ch1.xhtml'))
for p in root.iter(X + 'p'):
    print('p|%s|%s' % (p.get('translate', ''), ''.join(p.itertext())))
    for e in p:
        print('%s|%s|%s' % (e.tag[len(X):], e.get('translate', ''), e.text))
)";
  const auto [out, ok] = RunCommand(absl::StrCat("python3 '", script, "' '", path, "' 2>&1"));
  ASSERT_TRUE(ok) << out;
  const std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << out;
  // The sentence with the span is translated around it; the span is as written.
  EXPECT_THAT(lines[0], ::testing::StartsWith("p||"));
  EXPECT_THAT(lines[0], Not(HasSubstr("riding")));
  EXPECT_THAT(lines[0], HasSubstr("Zorblax 3000"));
  EXPECT_EQ(lines[1], "span|no|Zorblax 3000");
  // The paragraph marked translate="no" is as written.
  EXPECT_EQ(lines[2], "p|no|The dog runs in the park.");
  // The ignore_tags element is as written, its sentence translated around it.
  EXPECT_THAT(lines[3], Not(HasSubstr("holding")));
  EXPECT_EQ(lines[4], "product||Quux Omega");

  // Each paragraph is what the HTML path makes of it with the same rules.
  ASSERT_OK_AND_ASSIGN(OfficePackage package, OfficePackage::Open(translated));
  ASSERT_OK_AND_ASSIGN(const std::string chapter, package.Read("OEBPS/ch1.xhtml"));
  for (const char* paragraph : {kKeptParagraph, kKeptBlock, kIgnoredTag}) {
    ASSERT_OK_AND_ASSIGN(
        const TextTranslation html,
        testing::TranslateDocument(model_, paragraph, DocumentFormat::kHtml, Rules()));
    EXPECT_THAT(chapter, HasSubstr(html.hypotheses[0].text)) << paragraph;
  }
  EXPECT_THAT(chapter, HasSubstr(kKeptBlock));
}

}  // namespace
}  // namespace mtserve
