// OpenDocument parts taken apart into runs and rendered around translations
// (text/office/odf_part.h over text/office/xml_inline_runs.h), on hand-written XML: what each
// element of a paragraph becomes, and what the rendered XML holds, read back with pugixml.
// Expected runs and XML are written from ODF's rules (whitespace, spans, objects, fields).
#include "text/office/odf_part.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pugixml.hpp"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kRoot[] =
    "<office:document-content xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
    "xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" "
    "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "
    "xmlns:draw=\"urn:oasis:names:tc:opendocument:xmlns:drawing:1.0\" "
    "xmlns:fo=\"urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0\" "
    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">";

std::string Content(const std::string& body, const std::string& styles = "") {
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", kRoot,
                      "<office:automatic-styles>", styles,
                      "</office:automatic-styles><office:body><office:text>", body,
                      "</office:text></office:body></office:document-content>");
}

OdfPart TakeApart(const std::string& xml, const std::string& language = "de",
                  OdfPart::Kind kind = OdfPart::Kind::kContent) {
  absl::StatusOr<OdfPart> part = OdfPart::TakeApart("content.xml", xml, kind, language);
  EXPECT_TRUE(part.ok()) << part.status();
  if (!part.ok()) std::abort();
  return *std::move(part);
}

std::vector<std::string> Texts(const OdfPart& part) {
  std::vector<std::string> out;
  for (const XmlInlineRuns::Run& run : part.runs()) out.push_back(run.text);
  return out;
}

// The rendered part parsed (whitespace-only text kept, as ODF readers keep it).
pugi::xml_document Parse(const std::string& xml) {
  pugi::xml_document document;
  const pugi::xml_parse_result result =
      document.load_string(xml.c_str(), pugi::parse_default | pugi::parse_ws_pcdata);
  EXPECT_TRUE(result) << result.description() << " in " << xml;
  return document;
}

// The XML of `node`'s children, as pugixml writes them.
std::string Inner(const pugi::xml_node& node) {
  struct Writer : pugi::xml_writer {
    std::string out;
    void write(const void* data, size_t size) override {
      out.append(static_cast<const char*>(data), size);
    }
  } writer;
  for (const pugi::xml_node& child : node.children()) child.print(writer, "", pugi::format_raw);
  return writer.out;
}

std::string WriteBack(const pugi::xml_document& document) {
  struct Writer : pugi::xml_writer {
    std::string out;
    void write(const void* data, size_t size) override {
      out.append(static_cast<const char*>(data), size);
    }
  } writer;
  document.save(writer, "", pugi::format_raw);
  return writer.out;
}

pugi::xml_node Paragraph(const pugi::xml_document& document, const char* path) {
  return document.select_node(path).node();
}

TEST(OdfPartTest, ParagraphsAndHeadingsAreRunsWithWhitespaceAsOdfReadsIt) {
  const OdfPart part = TakeApart(
      Content("<text:h text:outline-level=\"1\">A  title</text:h>"
              "<text:p>\n  Two   words\tand<text:s text:c=\"3\"/>spaces<text:line-break/>next line "
              "</text:p>"
              "<text:p>   </text:p><text:p/>"
              "<text:list><text:list-item><text:p>An item.</text:p></text:list-item></text:list>"
              "<table:table xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\">"
              "<table:table-row><table:table-cell><text:p>A cell.</text:p></table:table-cell>"
              "</table:table-row></table:table>"));
  // Runs of XML whitespace are one space, none at a paragraph's start; text:s gives real spaces,
  // text:line-break a line feed; paragraphs of whitespace only are no runs.
  EXPECT_THAT(Texts(part),
              ElementsAre("A title", "Two words and   spaces\nnext line ", "An item.", "A cell."));
  EXPECT_THAT(part.runs()[0].inlines, IsEmpty());
  EXPECT_THAT(part.kept(), IsEmpty());
}

// A presentation's footer text is declared once and shown on the slides; its slides' text boxes
// and notes are paragraphs like any other.
TEST(OdfPartTest, PresentationFootersAndSlidesAreRuns) {
  const OdfPart part = TakeApart(absl::StrCat(
      kRoot,
      "<office:body><office:presentation><presentation:footer-decl presentation:name=\"ftr1\">"
      "A footer.</presentation:footer-decl><draw:page draw:name=\"p1\"><draw:frame "
      "presentation:class=\"title\"><draw:text-box><text:p>A title.</text:p></draw:text-box>"
      "</draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>A note.</text:p>"
      "</draw:text-box></draw:frame></presentation:notes></draw:page></office:presentation>"
      "</office:body></office:document-content>"));
  EXPECT_THAT(Texts(part), ElementsAre("A footer.", "A title.", "A note."));
}

TEST(OdfPartTest, SpansObjectsAndFieldsInARun) {
  const OdfPart part = TakeApart(
      Content("<text:p text:style-name=\"P1\">A <text:span text:style-name=\"T1\">bold</text:span> "
              "<text:a xlink:type=\"simple\" xlink:href=\"http://x.org/?a&amp;b\">link</text:a>"
              "<text:tab/>page <text:page-number text:select-page=\"current\">3</text:page-number>."
              "<text:bookmark text:name=\"b\"/></text:p>"));
  ASSERT_THAT(Texts(part), ElementsAre("A bold link page 3."));
  const std::vector<InlineSpan>& in = part.runs()[0].inlines;
  ASSERT_EQ(in.size(), 5u);
  EXPECT_EQ(in[0].range, (Segment{2, 6}));
  EXPECT_EQ(in[0].open, "<text:span text:style-name=\"T1\">");
  EXPECT_EQ(in[0].close, "</text:span>");
  EXPECT_EQ(in[1].range, (Segment{7, 11}));
  EXPECT_EQ(in[1].open, "<text:a xlink:type=\"simple\" xlink:href=\"http://x.org/?a&amp;b\">");
  EXPECT_FALSE(in[1].fixed);
  // The tab: read as the space between "link" and "page", kept before "page".
  EXPECT_EQ(in[2].range, (Segment{12, 12}));
  EXPECT_FALSE(in[2].fixed);
  // The field: its text read with the sentence, kept as written.
  EXPECT_EQ(in[3].range, (Segment{17, 18}));
  EXPECT_TRUE(in[3].fixed);
  EXPECT_EQ(in[4].range, (Segment{19, 19}));
  for (const InlineSpan& span : in) EXPECT_EQ(span.parent, -1);
}

TEST(OdfPartTest, ParagraphsInFramesAndNotesAreRunsOfTheirOwnAfterTheirParagraph) {
  const OdfPart part = TakeApart(Content(
      "<text:p>Before <text:span text:style-name=\"T1\">the<text:note text:id=\"n1\" "
      "text:note-class=\"footnote\"><text:note-citation>1</text:note-citation><text:note-body>"
      "<text:p>A note.</text:p></text:note-body></text:note></text:span> frame"
      "<draw:frame draw:name=\"f\"><draw:text-box><text:p>A caption.</text:p></draw:text-box>"
      "</draw:frame>.</text:p><text:p>After.</text:p>"
      "<text:p><office:annotation><text:p>A comment.</text:p></office:annotation>Commented."
      "</text:p>"
      "<text:tracked-changes><text:changed-region text:id=\"c\"><text:deletion>"
      "<text:p>Deleted.</text:p></text:deletion></text:changed-region></text:tracked-changes>"));
  EXPECT_THAT(Texts(part),
              ElementsAre("Before the frame.", "A note.", "A caption.", "After.", "Commented."));
  const std::vector<InlineSpan>& in = part.runs()[0].inlines;
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[1].range, (Segment{10, 10}));  // The note, inside the span.
  EXPECT_EQ(in[1].parent, 0);
  EXPECT_EQ(in[2].range, (Segment{16, 16}));  // The frame.
  // Comments and tracked deletions are kept, their text reported.
  EXPECT_THAT(part.kept(), ElementsAre("A comment.", "Deleted."));
}

TEST(OdfPartTest, RendersTranslationsWithSpansObjectsAndFieldsInPlace) {
  const OdfPart part = TakeApart(
      Content("<text:p text:style-name=\"P1\">A <text:span text:style-name=\"T1\">bold</text:span> "
              "<text:a xlink:href=\"http://x.org/\">link</text:a><text:tab/>page "
              "<text:page-number>3</text:page-number>.</text:p>"
              "<text:p>Frame<draw:frame draw:name=\"f\"><draw:text-box><text:p>A caption.</text:p>"
              "</draw:text-box></draw:frame> here.</text:p>"));
  ASSERT_THAT(Texts(part), ElementsAre("A bold link page 3.", "Frame here.", "A caption."));
  // "Ein fetter Link Seite 3.": the bold span on "fetter", the link on "Link", the tab before
  // "Seite", the field on "3".
  const std::vector<TranslatedRun> translations = {
      {"Ein fetter Link Seite 3.", {{4, 10}, {11, 15}, {16, 16}, {22, 23}}},
      {"Rahmen hier.", {{6, 6}}},
      {"Eine Bildunterschrift.", {}},
  };
  const pugi::xml_document out = Parse(part.Render(translations));
  EXPECT_EQ(Inner(Paragraph(out, "//office:text/text:p[1]")),
            "Ein <text:span text:style-name=\"T1\">fetter</text:span> "
            "<text:a xlink:href=\"http://x.org/\">Link</text:a><text:tab/>Seite "
            "<text:page-number>3</text:page-number>.");
  EXPECT_EQ(
      std::string(Paragraph(out, "//office:text/text:p[1]").attribute("text:style-name").value()),
      "P1");
  EXPECT_EQ(Inner(Paragraph(out, "//office:text/text:p[2]")),
            "Rahmen<draw:frame draw:name=\"f\"><draw:text-box><text:p>Eine Bildunterschrift."
            "</text:p></draw:text-box></draw:frame> hier.");
}

// A field placed on more than its text (its "3" on "3." by whole words) stands for its text only:
// the period is written after it, not lost.
TEST(OdfPartTest, AFieldPlacedOnMoreThanItsTextKeepsTheRest) {
  const OdfPart part =
      TakeApart(Content("<text:p>Page <text:page-number>3</text:page-number>."
                        "</text:p>"));
  ASSERT_THAT(Texts(part), ElementsAre("Page 3."));
  const pugi::xml_document out = Parse(part.Render({{"Seite 3.", {{6, 8}}}}));
  EXPECT_EQ(Inner(Paragraph(out, "//office:text/text:p")),
            "Seite <text:page-number>3</text:page-number>.");
}

TEST(OdfPartTest, SpacesTabsAndLineBreaksOfATranslationAreWrittenAsOdfElements) {
  const OdfPart part = TakeApart(Content("<text:p>x</text:p>"));
  const pugi::xml_document out =
      Parse(part.Render({{" Zwei  Leer   zeichen\tTab\nZeile & <ende>", {}}}));
  EXPECT_EQ(Inner(Paragraph(out, "//office:text/text:p")),
            "<text:s/>Zwei <text:s/>Leer <text:s text:c=\"2\"/>zeichen<text:tab/>Tab"
            "<text:line-break/>Zeile &amp; &lt;ende&gt;");
}

TEST(OdfPartTest, TheSourceAsItsOwnTranslationKeepsTheText) {
  const std::string xml = Content(
      "<text:p>A <text:span text:style-name=\"T1\">b<text:span text:style-name=\"T2\">c"
      "</text:span></text:span> d<text:s text:c=\"2\"/>e<text:line-break/>f</text:p>");
  const OdfPart part = TakeApart(xml);
  ASSERT_THAT(Texts(part), ElementsAre("A bc d  e\nf"));
  std::vector<TranslatedRun> same;
  for (const XmlInlineRuns::Run& run : part.runs()) {
    TranslatedRun& t = same.emplace_back();
    t.text = run.text;
    for (const InlineSpan& in : run.inlines) t.inlines.push_back(in.range);
  }
  const OdfPart again = TakeApart(part.Render(same));
  EXPECT_EQ(Texts(again), Texts(part));
  ASSERT_EQ(again.runs()[0].inlines.size(), 2u);
  EXPECT_EQ(again.runs()[0].inlines[1].parent, 0);
  EXPECT_EQ(again.runs()[0].inlines[1].range, (Segment{3, 4}));
}

TEST(OdfPartTest, CrossingSpansComeOutNested) {
  const OdfPart part =
      TakeApart(Content("<text:p><text:span text:style-name=\"B\">one two</text:span> "
                        "<text:span text:style-name=\"I\">three</text:span></text:p>"));
  // A translation where the two ranges cross: written nested, the second split.
  const pugi::xml_document out = Parse(part.Render({{"eins zwei drei", {{0, 9}, {5, 14}}}}));
  const std::string inner = Inner(Paragraph(out, "//office:text/text:p"));
  EXPECT_THAT(inner, HasSubstr("text:style-name=\"B\""));
  EXPECT_THAT(inner, HasSubstr("text:style-name=\"I\""));
  const OdfPart again = TakeApart(WriteBack(out));
  EXPECT_THAT(Texts(again), ElementsAre("eins zwei drei"));
}

TEST(OdfPartTest, LanguageTagsAreTheTarget) {
  const std::string styles =
      "<style:style style:name=\"T1\"><style:text-properties fo:language=\"en\" "
      "fo:country=\"US\" style:language-asian=\"zh\" style:country-asian=\"CN\"/></style:style>"
      "<style:style style:name=\"T2\"><style:text-properties fo:language=\"none\" "
      "fo:country=\"none\"/></style:style>"
      "<style:style style:name=\"T3\"><style:text-properties fo:font-weight=\"bold\"/>"
      "</style:style>";
  {
    const pugi::xml_document out =
        Parse(TakeApart(Content("<text:p>x</text:p>", styles), "pt-BR").Render({{"y", {}}}));
    const pugi::xml_node t1 = out.select_node("//style:style[@style:name='T1']/*").node();
    EXPECT_STREQ(t1.attribute("fo:language").value(), "pt");
    EXPECT_STREQ(t1.attribute("fo:country").value(), "BR");
    EXPECT_STREQ(t1.attribute("style:language-asian").value(), "zh");
    // No language stays none; no tag added where there was none.
    const pugi::xml_node t2 = out.select_node("//style:style[@style:name='T2']/*").node();
    EXPECT_STREQ(t2.attribute("fo:language").value(), "none");
    const pugi::xml_node t3 = out.select_node("//style:style[@style:name='T3']/*").node();
    EXPECT_FALSE(t3.attribute("fo:language"));
  }
  {
    const pugi::xml_document out =
        Parse(TakeApart(Content("<text:p>x</text:p>", styles), "de").Render({{"y", {}}}));
    const pugi::xml_node t1 = out.select_node("//style:style[@style:name='T1']/*").node();
    EXPECT_STREQ(t1.attribute("fo:language").value(), "de");
    EXPECT_STREQ(t1.attribute("fo:country").value(), "none");
  }
  {  // No target language: the tags left.
    const pugi::xml_document out =
        Parse(TakeApart(Content("<text:p>x</text:p>", styles), "").Render({{"y", {}}}));
    const pugi::xml_node t1 = out.select_node("//style:style[@style:name='T1']/*").node();
    EXPECT_STREQ(t1.attribute("fo:language").value(), "en");
  }
}

TEST(OdfPartTest, StylesDefaultParagraphStyleGetsTheLanguage) {
  const std::string xml =
      "<office:document-styles xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
      "xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" "
      "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"><office:styles>"
      "<style:default-style style:family=\"paragraph\"/></office:styles><office:master-styles>"
      "<style:master-page style:name=\"Standard\"><style:header><text:p>A header.</text:p>"
      "</style:header></style:master-page></office:master-styles></office:document-styles>";
  const OdfPart part = TakeApart(xml, "fr", OdfPart::Kind::kStyles);
  EXPECT_THAT(Texts(part), ElementsAre("A header."));
  const pugi::xml_document out = Parse(part.Render({{"Un en-tête.", {}}}));
  const pugi::xml_node properties =
      out.select_node("//style:default-style/style:text-properties").node();
  EXPECT_STREQ(properties.attribute("fo:language").value(), "fr");
  EXPECT_STREQ(out.first_child().attribute("xmlns:fo").value(),
               "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0");
  EXPECT_STREQ(out.select_node("//style:header/text:p").node().text().get(), "Un en-tête.");
}

TEST(OdfPartTest, MetaTitleIsARunAndItsLanguageIsSet) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><office:document-meta "
      "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
      "xmlns:meta=\"urn:oasis:names:tc:opendocument:xmlns:meta:1.0\" office:version=\"1.3\">"
      "<office:meta><meta:generator>x</meta:generator><dc:title "
      "xmlns:dc=\"http://purl.org/dc/elements/1.1/\">A &amp; B</dc:title></office:meta>"
      "</office:document-meta>";
  const OdfPart part = TakeApart(xml, "de", OdfPart::Kind::kMeta);
  EXPECT_THAT(Texts(part), ElementsAre("A & B"));
  const std::string rendered = part.Render({{"A & B auf Deutsch", {}}});
  const pugi::xml_document out = Parse(rendered);
  EXPECT_STREQ(out.select_node("//dc:title").node().text().get(), "A & B auf Deutsch");
  EXPECT_STREQ(out.select_node("//dc:language").node().text().get(), "de");
  EXPECT_THAT(rendered, HasSubstr("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
}

TEST(OdfPartTest, RefusesWhatItCannotRead) {
  // ODF's text namespace under another prefix: its paragraphs would go unseen.
  const absl::StatusOr<OdfPart> prefix = OdfPart::TakeApart(
      "content.xml",
      "<o:document-content xmlns:o=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
      "xmlns:t=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"><t:p>x</t:p>"
      "</o:document-content>",
      OdfPart::Kind::kContent, "de");
  EXPECT_EQ(prefix.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prefix.status().message(), HasSubstr("content.xml"));
  EXPECT_THAT(prefix.status().message(), HasSubstr("\"o\""));
  const absl::StatusOr<OdfPart> spaces =
      OdfPart::TakeApart("content.xml", Content("<text:p>a<text:s text:c=\"99999999\"/></text:p>"),
                         OdfPart::Kind::kContent, "de");
  EXPECT_EQ(spaces.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spaces.status().message(), HasSubstr("10000"));
  const absl::StatusOr<OdfPart> utf8 = OdfPart::TakeApart(
      "content.xml", Content("<text:p>caf\xE9</text:p>"), OdfPart::Kind::kContent, "de");
  EXPECT_EQ(utf8.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(utf8.status().message(), HasSubstr("content.xml: not valid UTF-8"));
  const absl::StatusOr<OdfPart> doctype = OdfPart::TakeApart(
      "content.xml", "<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>", OdfPart::Kind::kContent, "de");
  EXPECT_EQ(doctype.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doctype.status().message(), HasSubstr("DOCTYPE"));
}

TEST(OdfPartTest, SplitsLanguageTags) {
  auto split = [](absl::string_view tag) {
    const OdfLanguage l = SplitLanguageTag(tag);
    return absl::StrCat(l.language, "|", l.script, "|", l.country);
  };
  EXPECT_EQ(split("de"), "de||");
  EXPECT_EQ(split("pt-BR"), "pt||BR");
  EXPECT_EQ(split("zh-hans-cn"), "zh|Hans|CN");
  EXPECT_EQ(split("es-419"), "es||419");
  EXPECT_EQ(split("sr_Latn"), "sr|Latn|");
  EXPECT_EQ(split(""), "||");
  EXPECT_EQ(split("1x"), "||");
}

}  // namespace
}  // namespace mtserve
