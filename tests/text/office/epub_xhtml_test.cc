// An EPUB's XHTML documents taken apart through the HTML path and rendered as well-formed XML
// (text/office/epub_xhtml.h), and the XML scanning beneath (text/office/xml_scan.h), on
// hand-written parts and pandoc's. Every rendering is parsed again as XML.
#include "text/office/epub_xhtml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/test_lib/part_runs.h"
#include "text/office/xml_scan.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ::mtserve::testing::Texts;
using ::mtserve::testing::Upper;

std::unique_ptr<PartRuns> TakeApart(const std::string& xhtml, absl::string_view source = "en",
                                    absl::string_view target = "de") {
  absl::StatusOr<std::unique_ptr<PartRuns>> part =
      TakeApartXhtml("ch.xhtml", xhtml, source, target);
  EXPECT_TRUE(part.ok()) << part.status();
  return part.ok() ? *std::move(part) : nullptr;
}

// `xml` parses as XML (a plain DOCTYPE allowed, as in the source).
void ExpectXml(const std::string& xml) {
  const auto parsed = ParseEpubXml("rendered", xml);
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << xml;
}

std::string Xhtml(absl::string_view body, absl::string_view head = "<title>A book</title>") {
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
      "<html xmlns=\"http://www.w3.org/1999/xhtml\" xmlns:epub=\"http://www.idpf.org/2007/ops\" "
      "xml:lang=\"en\" lang=\"en\">\n<head>",
      head, "</head>\n<body>", body, "</body>\n</html>\n");
}

TEST(XmlScanTest, PiecesCoverTheBytesAndTagsHaveTheirAttributes) {
  const std::string xml =
      "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"]>\">]><x a='1>2' b = \"3\">t<!-- c -->"
      "<![CDATA[<y>]]><y/></x>";
  const std::vector<XmlPiece> pieces = ScanXml(xml);
  std::vector<XmlPiece::Kind> kinds;
  size_t end = 0;
  for (const XmlPiece& p : pieces) {
    kinds.push_back(p.kind);
    EXPECT_EQ(p.bytes.begin, end);
    end = p.bytes.end;
  }
  EXPECT_EQ(end, xml.size());
  EXPECT_THAT(kinds, ElementsAre(XmlPiece::kProcessingInstruction, XmlPiece::kDoctype,
                                 XmlPiece::kStartTag, XmlPiece::kText, XmlPiece::kComment,
                                 XmlPiece::kCdata, XmlPiece::kEmptyTag, XmlPiece::kEndTag));
  const std::vector<XmlAttribute> attributes = TagAttributes(xml, pieces[2]);
  ASSERT_EQ(attributes.size(), 2u);
  EXPECT_EQ(attributes[0].name, "a");
  EXPECT_EQ(xml.substr(attributes[0].value.begin, 3), "1>2");
  EXPECT_EQ(attributes[1].name, "b");
  EXPECT_EQ(pieces[6].name, "y");
  EXPECT_EQ(ApplyEdits(xml, {{pieces[3].bytes, "T"}, {attributes[1].value, "4"}}),
            "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"]>\">]><x a='1>2' b = \"4\">T<!-- c "
            "-->"
            "<![CDATA[<y>]]><y/></x>");
}

TEST(EpubXhtmlTest, PandocsChapterIsRunsWithItsMarkupAndComesBackAsXml) {
  const std::string xhtml = Xhtml(
      "\n<section id=\"c1\" class=\"level1\">\n<h1>The First Chapter</h1>\n"
      "<p>The cat sat on the mat. It was a <em>very</em> happy cat.</p>\n"
      "<p>Read more on <a href=\"https://example.com\">the website</a> today.</p>\n"
      "<figure>\n<img src=\"../media/file0.png\" alt=\"A red square\" />\n"
      "<figcaption aria-hidden=\"true\">A red square</figcaption>\n</figure>\n"
      "<table>\n<tr class=\"odd\">\n<td>Apple</td>\n<td>Red</td>\n</tr>\n</table>\n</section>\n",
      "\n  <meta charset=\"utf-8\" />\n  <title>ch001.xhtml</title>\n"
      "  <style>\n    code{white-space: pre-wrap;}\n  </style>\n"
      "  <link rel=\"stylesheet\" type=\"text/css\" href=\"../styles/stylesheet1.css\" />\n");
  const auto part = TakeApart(xhtml);
  ASSERT_NE(part, nullptr);
  EXPECT_THAT(Texts(*part), ElementsAre("ch001.xhtml", "The First Chapter",
                                        "The cat sat on the mat. It was a very happy cat.",
                                        "Read more on the website today.", "A red square",
                                        "A red square", "Apple", "Red"));
  EXPECT_THAT(part->kept(), IsEmpty());
  const std::string out = part->Render(Upper(*part));
  ExpectXml(out);
  EXPECT_EQ(
      out,
      Xhtml("\n<section id=\"c1\" class=\"level1\">\n<h1>THE FIRST CHAPTER</h1>\n"
            "<p>THE CAT SAT ON THE MAT. IT WAS A <em>VERY</em> HAPPY CAT.</p>\n"
            "<p>READ MORE ON <a href=\"https://example.com\">THE WEBSITE</a> TODAY.</p>\n"
            "<figure>\n<img src=\"../media/file0.png\" alt=\"A RED SQUARE\" />\n"
            "<figcaption aria-hidden=\"true\">A RED SQUARE</figcaption>\n</figure>\n"
            "<table>\n<tr class=\"odd\">\n<td>APPLE</td>\n<td>RED</td>\n</tr>\n"
            "</table>\n</section>\n",
            "\n  <meta charset=\"utf-8\" />\n  <title>CH001.XHTML</title>\n"
            "  <style>\n    code{white-space: pre-wrap;}\n  </style>\n"
            "  <link rel=\"stylesheet\" type=\"text/css\" "
            "href=\"../styles/stylesheet1.css\" />\n")
          // The language attributes are the target's.
          .replace(xhtml.find("xml:lang=\"en\" lang=\"en\""), 23, "xml:lang=\"de\" lang=\"de\""));
}

TEST(EpubXhtmlTest, LanguagesEqualToTheSourceBecomeTheTarget) {
  const auto part = TakeApart(
      Xhtml("<p lang=\"EN\">One.</p><p xml:lang=\"fr\">Deux.</p><p lang=\"en-GB\">Three.</p>"),
      "en", "de-CH");
  ASSERT_NE(part, nullptr);
  const std::string out = part->Render(Upper(*part));
  EXPECT_THAT(out, HasSubstr("xml:lang=\"de-CH\" lang=\"de-CH\">"));
  EXPECT_THAT(out, HasSubstr("<p lang=\"de-CH\">ONE.</p><p xml:lang=\"fr\">DEUX.</p>"
                             "<p lang=\"en-GB\">THREE.</p>"));
  // No target: left as they are.
  const auto kept = TakeApart(Xhtml("<p lang=\"en\">One.</p>"), "en", "");
  EXPECT_THAT(kept->Render(Upper(*kept)), HasSubstr("lang=\"en\">\n<head><title>A BOOK</title>"
                                                    "</head>\n<body><p lang=\"en\">ONE.</p>"));
}

TEST(EpubXhtmlTest, EmptyElementTagsAreReadAsXmlReadsThem) {
  // HTML would read <title/> and <script/> as start tags and the rest of the document as their
  // text, <span/> and <a/> as start tags around the words after them.
  const std::string xhtml = Xhtml(
      "<p>One <span id=\"s\"/>two<br/>three <a id=\"x\"/>four <img src=\"i.png\" alt=\"\"/>five."
      "</p><div/><p>Six.</p>",
      "<title/><script src=\"a.js\"/><link rel=\"stylesheet\" href=\"a.css\"/>");
  const auto part = TakeApart(xhtml);
  ASSERT_NE(part, nullptr);
  EXPECT_THAT(Texts(*part), ElementsAre("One two", "three four ", "five.", "Six."));
  EXPECT_THAT(part->kept(), IsEmpty());
  const std::string out = part->Render(Upper(*part));
  ExpectXml(out);
  EXPECT_THAT(out, HasSubstr("<head><title></title><script src=\"a.js\"></script>"
                             "<link rel=\"stylesheet\" href=\"a.css\"/></head>"));
  EXPECT_THAT(out, HasSubstr("<p>ONE <span id=\"s\"></span>TWO<br/>THREE <a id=\"x\"></a>FOUR "
                             "<img src=\"i.png\" alt=\"\"/>FIVE.</p><div></div><p>SIX.</p>"));
}

TEST(EpubXhtmlTest, CdataIsTextOutsideScriptsAndStyles) {
  const std::string xhtml = Xhtml(
      "<p>Fish <![CDATA[& chips > <b>]]> today.</p>"
      "<script><![CDATA[ if (a < b) { x = \"</p>\"; } ]]></script>",
      "<title>T</title><style><![CDATA[ p > b { color: red } ]]></style>");
  const auto part = TakeApart(xhtml);
  ASSERT_NE(part, nullptr);
  EXPECT_THAT(Texts(*part), ElementsAre("T", "Fish & chips > <b> today."));
  const std::string out = part->Render(Upper(*part));
  ExpectXml(out);
  EXPECT_THAT(out, HasSubstr("<p>FISH &amp; CHIPS &gt; &lt;B&gt; TODAY.</p>"
                             "<script><![CDATA[ if (a < b) { x = \"</p>\"; } ]]></script>"));
  EXPECT_THAT(out, HasSubstr("<style><![CDATA[ p > b { color: red } ]]></style>"));
}

TEST(EpubXhtmlTest, EntitiesAreDecodedAndTranslationsEscaped) {
  const auto part = TakeApart(Xhtml("<p>A&#160;dog &amp; a &lt;cat&gt; &#x263A;</p>"));
  ASSERT_NE(part, nullptr);
  EXPECT_THAT(Texts(*part), ElementsAre("A book", "A\u00a0dog & a <cat> \u263a"));
  const std::string out = part->Render({{"Ein Buch", {}}, {"Ein Hund & <Katze> \"x\" 'y'", {}}});
  ExpectXml(out);
  EXPECT_THAT(out, HasSubstr("<p>Ein Hund &amp; &lt;Katze&gt; \"x\" 'y'</p>"));
}

TEST(EpubXhtmlTest, RunsHtmlReadsOtherwiseAreLeftAsWrittenAndReported) {
  // A block in a <span> (HTML closes the paragraph and the span), a link in a link (HTML closes
  // the first), markup in <title> (HTML reads text).
  const std::string xhtml = Xhtml(
      "<div><span>Left <div>inner</div> after</span></div>"
      "<p><a href=\"1\">outer <a href=\"2\">inner link</a> tail</a></p><p>Fine <b>bold</b>.</p>",
      "<title>A <b>bold</b> title</title>");
  const auto part = TakeApart(xhtml);
  ASSERT_NE(part, nullptr);
  const std::string out = part->Render(Upper(*part));
  ExpectXml(out);
  EXPECT_THAT(out, HasSubstr("<title>A <b>bold</b> title</title>"));
  EXPECT_THAT(out, HasSubstr("<p>FINE <b>BOLD</b>.</p>"));
  EXPECT_THAT(part->kept(), ::testing::Not(IsEmpty()));
  EXPECT_THAT(part->kept(), ::testing::Contains("A <b>bold</b> title"));
  // Every source word is either translated (upper-cased) or reported as kept.
  for (const char* word : {"Left", "inner", "after", "outer", "link", "tail"}) {
    bool reported = false;
    for (const std::string& kept : part->kept()) reported |= kept.find(word) != std::string::npos;
    EXPECT_TRUE(reported || out.find(absl::AsciiStrToUpper(word)) != std::string::npos) << word;
  }
}

TEST(EpubXhtmlTest, AnInlineOverAllTheWordsOfItsRunStaysOverAllOfTheTranslation) {
  // EPUB's navigation document allows no text in an entry outside its link.
  const auto part =
      TakeApart(Xhtml("<nav><ol><li>\n  <a href=\"t.xhtml\">Title Page</a>\n</li>"
                      "<li>See <a href=\"u.xhtml\">this</a></li></ol></nav>"));
  ASSERT_NE(part, nullptr);
  ASSERT_THAT(Texts(*part), ElementsAre("A book", "   Title Page ", "See this"));
  // The alignment put each link on one word only.
  const std::string out = part->Render(
      {{"Ein Buch", {}}, {"   Die Titelseite ", {{7, 17}}}, {"Siehe dies", {{6, 10}}}});
  ExpectXml(out);
  EXPECT_THAT(out, HasSubstr("<li>   <a href=\"t.xhtml\">Die Titelseite</a> </li>"));
  EXPECT_THAT(out, HasSubstr("<li>Siehe <a href=\"u.xhtml\">dies</a></li>"));
}

TEST(EpubXhtmlTest, HostileOrMalformedXhtmlIsRefusedNamingThePart) {
  for (const std::string& bad :
       {std::string(
            "<?xml version=\"1.0\"?><!DOCTYPE html [<!ENTITY a \"aaaa\">]><html>&a;</html>"),
        std::string("<html><p>unclosed</html>"), std::string("<html><p>a</b></html>"),
        // pugixml would read up to the NUL only, and the declaration's quotes past its "?>".
        std::string("<html><p>a</p></html>\0<p>", 26),
        std::string("<?xml version=\"1.0?><html><p>\"?><p>b</p>")}) {
    const auto part = TakeApartXhtml("OEBPS/ch1.xhtml", bad, "en", "de");
    ASSERT_FALSE(part.ok()) << bad;
    EXPECT_EQ(part.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(part.status().message(), HasSubstr("part OEBPS/ch1.xhtml: ")) << bad;
  }
}

// A declaration whose quotes do not close before its ?> is refused: pugixml would read it on to a
// later quote, over what the HTML parser reads as the part's words (found by fuzzing).
TEST(EpubXhtmlTest, AMalformedXmlDeclarationIsRefused) {
  const auto refused = ParseEpubXml("ch.xhtml", "<?xml version=\"2.0?><p>a \" b</p>");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("part ch.xhtml: malformed XML declaration"));
  EXPECT_TRUE(ParseEpubXml("ch.xhtml", "<?xml version='1.0' encoding=\"utf-8\"?><p>a</p>").ok());
}

// A byte order mark is no run (the HTML parser reads it as text): the rendering starts with the
// declaration, as XML wants, and nothing but the words is translated (found by fuzzing).
TEST(EpubXhtmlTest, AByteOrderMarkIsNoRunAndTheDeclarationStaysFirst) {
  const std::string xhtml =
      "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">"
      "<body><p>A dog.</p></body></html>";
  const auto part = TakeApartXhtml("OEBPS/ch1.xhtml", xhtml, "en", "de");
  ASSERT_TRUE(part.ok()) << part.status();
  ASSERT_EQ((*part)->runs().size(), 1u);
  EXPECT_EQ((*part)->runs()[0].text, "A dog.");
  const std::string rendered = (*part)->Render({{"Ein Hund.", {}}});
  EXPECT_TRUE(absl::StartsWith(rendered, "<?xml version=\"1.0\"?>")) << rendered;
  EXPECT_THAT(rendered, HasSubstr("<p>Ein Hund.</p>"));
  EXPECT_TRUE(ParseEpubXml("rendered", rendered).ok());
}

// A declaration anywhere but first is refused, naming its byte: pugixml takes one at the top level
// (in any case), quotes and all, where the HTML parser ends `<?` at the first `>` and reads on as
// text and tags; a translation then broke the declaration's ?> (found by fuzzing). Other
// processing instructions, and names that only begin with "xml", are taken.
TEST(EpubXhtmlTest, AnXmlDeclarationAfterTheStartIsRefused) {
  for (const std::string& bad :
       {std::string("<p>a</p><?xml version=\"'x><em>b\"?><p>c</p>"),
        std::string("<?xml version=\"1.0\"?>\n<p>a</p><?XML version=\"1.0\"?>"),
        std::string("\xEF\xBB\xBF<p>a</p>\n<?xml version=\"1.0\"?>")}) {
    const auto refused = ParseEpubXml("ch.xhtml", bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.status().message(), HasSubstr("part ch.xhtml: an XML declaration at byte "))
        << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("after the part's start")) << bad;
  }
  EXPECT_THAT(ParseEpubXml("ch.xhtml", "<p>a</p><?xml version=\"1.0\"?>").status().message(),
              HasSubstr("at byte 8,"));
  for (const std::string& good :
       {std::string("\xEF\xBB\xBF<?xml version=\"1.0\"?><p>a</p>"),
        std::string("<?xml version=\"1.0\"?><?xml-stylesheet href=\"a.css\"?><p>a</p>"),
        std::string("<p>a</p><?xmlfoo b?>")}) {
    const auto taken = ParseEpubXml("ch.xhtml", good);
    EXPECT_TRUE(taken.ok()) << good << ": " << taken.status();
  }
}

}  // namespace
}  // namespace mtserve
