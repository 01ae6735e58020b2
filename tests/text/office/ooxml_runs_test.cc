// Office Open XML paragraphs taken apart into runs of text with spans and rendered around
// hand-written translations (text/office/ooxml_runs.h), on part XML written here the way Word
// and PowerPoint write it. The renderings are read back with pugixml's XPath.
#include "text/office/ooxml_runs.h"

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

constexpr absl::string_view kWordRoot =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" "
    "xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" "
    "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" "
    "xmlns:wps=\"http://schemas.microsoft.com/office/word/2010/wordprocessingShape\">"
    "<w:body>";

std::string Word(absl::string_view body) {
  return absl::StrCat(kWordRoot, body, "<w:sectPr/></w:body></w:document>");
}

std::unique_ptr<PartRuns> TakeApart(const std::string& xml,
                                    OoxmlDialect dialect = OoxmlDialect::kWordprocessing,
                                    absl::string_view language = "de") {
  absl::StatusOr<std::unique_ptr<PartRuns>> runs =
      TakeApartOoxmlPart("word/document.xml", xml, dialect, language);
  EXPECT_TRUE(runs.ok()) << runs.status();
  return runs.ok() ? *std::move(runs) : nullptr;
}

// Each run translated as itself, its spans where they were.
std::vector<TranslatedRun> Identity(const PartRuns& runs) {
  std::vector<TranslatedRun> out;
  for (const PartRuns::Run& run : runs.runs()) {
    TranslatedRun& t = out.emplace_back();
    t.text = run.text;
    for (const InlineSpan& span : run.inlines) t.inlines.push_back(span.range);
  }
  return out;
}

std::vector<Segment> Ranges(const PartRuns::Run& run) {
  std::vector<Segment> out;
  for (const InlineSpan& span : run.inlines) out.push_back(span.range);
  return out;
}

pugi::xml_document Parse(const std::string& xml) {
  pugi::xml_document document;
  const pugi::xml_parse_result result = document.load_string(xml.c_str());
  EXPECT_TRUE(result) << result.description() << "\n" << xml;
  return document;
}

// The text of the nodes `xpath` selects, each.
std::vector<std::string> Texts(const pugi::xml_document& document, const char* xpath) {
  std::vector<std::string> out;
  for (const pugi::xpath_node& n : document.select_nodes(xpath)) {
    out.push_back(n.node().child_value());
  }
  return out;
}

// Every w:t's text of each paragraph, joined.
std::vector<std::string> ParagraphTexts(const pugi::xml_document& document) {
  std::vector<std::string> out;
  for (const pugi::xpath_node& p : document.select_nodes("//w:body/w:p")) {
    std::string text;
    for (const pugi::xpath_node& t : p.node().select_nodes(".//w:t"))
      text += t.node().child_value();
    out.push_back(text);
  }
  return out;
}

TEST(OoxmlRunsTest, RunsSplitForRevisionsAndProofingAreOne) {
  // As Word saves a sentence typed over several sessions and spell-checked: one formatting,
  // several runs with their revision ids, proofing marks between them.
  const std::string xml = Word(
      "<w:p w:rsidR=\"00A1\"><w:pPr><w:jc w:val=\"center\"/></w:pPr>"
      "<w:r w:rsidR=\"00A1\"><w:rPr><w:color w:val=\"FF0000\"/><w:lang w:val=\"en-US\"/></w:rPr>"
      "<w:t xml:space=\"preserve\">The do</w:t></w:r>"
      "<w:proofErr w:type=\"spellStart\"/>"
      "<w:r w:rsidR=\"00B2\"><w:rPr><w:color w:val=\"FF0000\"/><w:lang w:val=\"en-GB\"/></w:rPr>"
      "<w:t>g runs</w:t></w:r><w:proofErr w:type=\"spellEnd\"/>"
      "<w:r w:rsidRPr=\"00C3\"><w:rPr><w:color w:val=\"FF0000\"/></w:rPr><w:t>.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "The dog runs.");
  EXPECT_THAT(runs->runs()[0].inlines, IsEmpty());
  EXPECT_THAT(runs->kept(), IsEmpty());

  const pugi::xml_document out = Parse(runs->Render({{"Der Hund rennt.", {}}}));
  EXPECT_THAT(Texts(out, "//w:p/w:r/w:t"), ElementsAre("Der Hund rennt."));
  // The base formatting on the run, its language now the target's; the paragraph's own
  // properties kept; the proofing marks gone.
  EXPECT_STREQ(out.select_node("//w:p/w:r/w:rPr/w:color").node().attribute("w:val").value(),
               "FF0000");
  EXPECT_STREQ(out.select_node("//w:p/w:r/w:rPr/w:lang").node().attribute("w:val").value(), "de");
  EXPECT_STREQ(out.select_node("//w:p/w:pPr/w:jc").node().attribute("w:val").value(), "center");
  EXPECT_FALSE(out.select_node("//w:proofErr"));
  EXPECT_TRUE(out.select_node("//w:body/w:sectPr"));
}

TEST(OoxmlRunsTest, EmptyPropertiesAreNoneAndDistinctPropertiesAreNot) {
  // LibreOffice writes an empty w:rPr on some runs and none on others: the same formatting.
  // <w:b/> and <w:i/> are not.
  const std::string xml = Word(
      "<w:p><w:r><w:rPr></w:rPr><w:t xml:space=\"preserve\">One </w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\">two </w:t></w:r>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t>three</w:t></w:r>"
      "<w:r><w:rPr><w:i/></w:rPr><w:t>four</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{8, 13}, Segment{13, 17}));
}

TEST(OoxmlRunsTest, SpaceAfterABreakIsKept) {
  const std::string xml =
      Word("<w:p><w:r><w:t>a</w:t><w:tab/><w:t xml:space=\"preserve\"> b</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "a  b");
  const pugi::xml_document out = Parse(runs->Render(Identity(*runs)));
  EXPECT_THAT(Texts(out, "//w:r/w:t"), ElementsAre("a", " b"));
}

TEST(OoxmlRunsTest, BoldWordIsASpanCarriedToItsTranslation) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">The </w:t></w:r>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t>dog</w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\"> runs &amp; jumps.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "The dog runs & jumps.");
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{4, 7}));

  // "Der Hund" with "Hund" [4, 8) where the bold goes.
  const pugi::xml_document out =
      Parse(runs->Render({{"Der Hund rennt & springt.", {Segment{4, 8}}}}));
  EXPECT_THAT(Texts(out, "//w:r[w:rPr/w:b]/w:t"), ElementsAre("Hund"));
  EXPECT_THAT(Texts(out, "//w:r[not(w:rPr/w:b)]/w:t"), ElementsAre("Der ", " rennt & springt."));
  for (const pugi::xpath_node& t : out.select_nodes("//w:t")) {
    EXPECT_STREQ(t.node().attribute("xml:space").value(), "preserve");
  }
}

TEST(OoxmlRunsTest, TheBaseIsTheFormattingOfMostCharacters) {
  // All italic but one plain word: the plain word is the span, over the italic base.
  const std::string xml = Word(
      "<w:p><w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\">A long italic </w:t></w:r>"
      "<w:r><w:t>plain</w:t></w:r>"
      "<w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\"> sentence.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{14, 19}));
  const pugi::xml_document out = Parse(runs->Render(Identity(*runs)));
  EXPECT_THAT(Texts(out, "//w:r[w:rPr/w:i]/w:t"), ElementsAre("A long italic ", " sentence."));
  EXPECT_THAT(Texts(out, "//w:r[not(w:rPr)]/w:t"), ElementsAre("plain"));
}

TEST(OoxmlRunsTest, HyperlinkIsASpanAroundItsRunsFormatting) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">See </w:t></w:r>"
      "<w:hyperlink r:id=\"rId9\" w:history=\"1\"><w:r><w:rPr><w:rStyle w:val=\"Hyperlink\"/>"
      "</w:rPr><w:t>our site</w:t></w:r></w:hyperlink>"
      "<w:r><w:t xml:space=\"preserve\"> today.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  const PartRuns::Run& run = runs->runs()[0];
  EXPECT_EQ(run.text, "See our site today.");
  ASSERT_THAT(Ranges(run), ElementsAre(Segment{4, 12}, Segment{4, 12}));
  EXPECT_EQ(run.inlines[0].parent, -1);
  EXPECT_EQ(run.inlines[1].parent, 0);  // The link's run formatting, inside it.

  const pugi::xml_document out = Parse(
      runs->Render({{"Besuchen Sie heute unsere Seite.", {Segment{19, 31}, Segment{19, 31}}}}));
  EXPECT_THAT(Texts(out, "//w:hyperlink[@r:id='rId9']/w:r[w:rPr/w:rStyle]/w:t"),
              ElementsAre("unsere Seite"));
  EXPECT_STREQ(out.select_node("//w:hyperlink").node().attribute("w:history").value(), "1");
  EXPECT_THAT(ParagraphTexts(out), ElementsAre("Besuchen Sie heute unsere Seite."));
}

TEST(OoxmlRunsTest, SmartTagsAndBidiEmbeddingsAreWrappersLikeLinks) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">Meet </w:t></w:r>"
      "<w:smartTag w:uri=\"urn:x\" w:element=\"place\"><w:smartTagPr><w:attr w:name=\"a\" "
      "w:val=\"b\"/></w:smartTagPr><w:r><w:t>Paris</w:t></w:r></w:smartTag>"
      "<w:dir w:val=\"rtl\"><w:r><w:t xml:space=\"preserve\"> now</w:t></w:r></w:dir>"
      "<w:r><w:t>.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "Meet Paris now.");
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{5, 10}, Segment{10, 14}));
  EXPECT_FALSE(runs->runs()[0].inlines[0].fixed);
  const pugi::xml_document out =
      Parse(runs->Render({{"Treffen Paris jetzt.", {Segment{8, 13}, Segment{13, 19}}}}));
  EXPECT_THAT(Texts(out, "//w:smartTag[@w:element='place']/w:r/w:t"), ElementsAre("Paris"));
  EXPECT_TRUE(out.select_node("//w:smartTag/*[1][self::w:smartTagPr]/w:attr[@w:name='a']"));
  EXPECT_THAT(Texts(out, "//w:dir[@w:val='rtl']/w:r/w:t"), ElementsAre(" jetzt"));
  EXPECT_THAT(ParagraphTexts(out), ElementsAre("Treffen Paris jetzt."));
}

TEST(OoxmlRunsTest, TabsAndBreaksAreSpacesInTheTextAndObjectsInTheRendering) {
  const std::string xml = Word(
      "<w:p><w:r><w:t>Name:</w:t><w:tab/><w:t>value</w:t><w:br/><w:t>Next line</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "Name: value Next line");
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{6, 6}, Segment{12, 12}));

  const pugi::xml_document out =
      Parse(runs->Render({{"Name: Wert Neue Zeile", {Segment{6, 6}, Segment{11, 11}}}}));
  // In order: text, tab, text, break, text, with the spaces beside the objects taken out.
  std::vector<std::string> sequence;
  for (const pugi::xpath_node& n : out.select_nodes("//w:r/*[not(self::w:rPr)]")) {
    sequence.push_back(absl::StrCat(n.node().name(), ":", n.node().child_value()));
  }
  EXPECT_THAT(sequence, ElementsAre("w:t:Name:", "w:tab:", "w:t:Wert", "w:br:", "w:t:Neue Zeile"));
}

TEST(OoxmlRunsTest, TheSpaceBeforeABreakIsTakenOutAfterAFormattedWord) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">It </w:t></w:r><w:r><w:rPr><w:b/></w:rPr>"
      "<w:t>runs</w:t><w:br/></w:r><w:r><w:t>far.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "It runs far.");
  const pugi::xml_document out = Parse(runs->Render(Identity(*runs)));
  std::vector<std::string> sequence;
  for (const pugi::xpath_node& n : out.select_nodes("//w:r/*[not(self::w:rPr)]")) {
    sequence.push_back(absl::StrCat(n.node().name(), ":", n.node().child_value()));
  }
  EXPECT_THAT(sequence, ElementsAre("w:t:It ", "w:t:runs", "w:br:", "w:t:far."));
}

TEST(OoxmlRunsTest, FieldsBookmarksAndFootnoteReferencesAreKeptAsWritten) {
  const std::string xml = Word(
      "<w:p><w:bookmarkStart w:id=\"0\" w:name=\"here\"/>"
      "<w:r><w:t xml:space=\"preserve\">See page </w:t></w:r>"
      "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r>"
      "<w:r><w:instrText xml:space=\"preserve\"> PAGEREF here </w:instrText></w:r>"
      "<w:r><w:fldChar w:fldCharType=\"separate\"/></w:r>"
      "<w:r><w:t>3</w:t></w:r>"
      "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>"
      "<w:bookmarkEnd w:id=\"0\"/>"
      "<w:r><w:t xml:space=\"preserve\"> now.</w:t></w:r>"
      "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr>"
      "<w:footnoteReference w:id=\"1\"/></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  const PartRuns::Run& run = runs->runs()[0];
  EXPECT_EQ(run.text, "See page 3 now.");
  // The bookmark's start, the field (its result's text fixed), the bookmark's end, the note's
  // reference.
  ASSERT_THAT(Ranges(run),
              ElementsAre(Segment{0, 0}, Segment{9, 10}, Segment{10, 10}, Segment{15, 15}));
  EXPECT_TRUE(run.inlines[1].fixed);

  const pugi::xml_document out =
      Parse(runs->Render({{"Siehe jetzt Seite 9.",
                           {Segment{0, 0}, Segment{18, 19}, Segment{19, 19}, Segment{20, 20}}}}));
  // The field as written, result included; the text around it translated.
  EXPECT_THAT(Texts(out, "//w:instrText"), ElementsAre(" PAGEREF here "));
  EXPECT_THAT(ParagraphTexts(out), ElementsAre("Siehe jetzt Seite 3."));
  EXPECT_EQ(out.select_nodes("//w:fldChar").size(), 3u);
  EXPECT_TRUE(out.select_node("//w:bookmarkStart[@w:name='here']"));
  EXPECT_TRUE(out.select_node("//w:bookmarkEnd"));
  EXPECT_TRUE(out.select_node("//w:r[w:rPr/w:rStyle]/w:footnoteReference[@w:id='1']"));
}

TEST(OoxmlRunsTest, ParagraphOfAFieldAloneIsLeftAsItWas) {
  const std::string xml = Word(
      "<w:p><w:fldSimple w:instr=\" PAGE \"><w:r><w:t>4</w:t></w:r></w:fldSimple></w:p>"
      "<w:p/><w:p><w:r><w:t xml:space=\"preserve\">  </w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  EXPECT_THAT(runs->runs(), IsEmpty());
  EXPECT_THAT(runs->kept(), IsEmpty());
  EXPECT_EQ(runs->Render({}), xml);
}

TEST(OoxmlRunsTest, TrackedChangesAreTranslatedAsAccepted) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">The </w:t></w:r>"
      "<w:del w:id=\"1\" w:author=\"A\"><w:r><w:delText>old </w:delText></w:r></w:del>"
      "<w:ins w:id=\"2\" w:author=\"A\"><w:r><w:rPr><w:b/></w:rPr>"
      "<w:t xml:space=\"preserve\">new </w:t></w:r></w:ins>"
      "<w:moveFromRangeStart w:id=\"3\" w:name=\"m\"/><w:moveFrom w:id=\"4\"><w:r>"
      "<w:t>moved</w:t></w:r></w:moveFrom><w:moveFromRangeEnd w:id=\"3\"/>"
      "<w:r><w:t>text</w:t></w:r><w:moveTo w:id=\"5\"><w:r><w:t xml:space=\"preserve\"> here"
      "</w:t></w:r></w:moveTo><w:r><w:t>.</w:t></w:r>"
      // A deleted text box: not a paragraph to translate.
      "<w:del w:id=\"6\"><w:r><w:drawing><w:txbxContent><w:p><w:r><w:t>Gone.</w:t></w:r></w:p>"
      "</w:txbxContent></w:drawing></w:r></w:del></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);
  EXPECT_EQ(runs->runs()[0].text, "The new text here.");
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{4, 8}));
  EXPECT_THAT(runs->kept(), IsEmpty());
  const pugi::xml_document out = Parse(runs->Render({{"Der neue Text hier.", {Segment{4, 8}}}}));
  EXPECT_THAT(ParagraphTexts(out), ElementsAre("Der neue Text hier."));
  EXPECT_THAT(Texts(out, "//w:r[w:rPr/w:b]/w:t"), ElementsAre("neue"));
  for (const char* mark : {"//w:ins", "//w:del", "//w:delText", "//w:moveFrom", "//w:moveTo",
                           "//w:moveFromRangeStart", "//w:moveFromRangeEnd"}) {
    EXPECT_FALSE(out.select_node(mark)) << mark;
  }
}

TEST(OoxmlRunsTest, TextBoxParagraphsAreRunsOfTheirOwn) {
  const std::string xml = Word(
      "<w:p><w:r><w:t xml:space=\"preserve\">Outer text </w:t></w:r>"
      "<w:r><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>"
      "<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Inner box.</w:t></w:r></w:p>"
      "</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing>"
      "</w:r><w:r><w:t>here.</w:t></w:r></w:p>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 2u);
  EXPECT_EQ(runs->runs()[0].text, "Outer text here.");
  EXPECT_THAT(Ranges(runs->runs()[0]), ElementsAre(Segment{11, 11}));
  EXPECT_EQ(runs->runs()[1].text, "Inner box.");

  const pugi::xml_document out =
      Parse(runs->Render({{"Äußerer Text hier.", {Segment{15, 15}}}, {"Innere Box.", {}}}));
  EXPECT_THAT(Texts(out, "//w:txbxContent/w:p/w:r[w:rPr/w:b]/w:t"), ElementsAre("Innere Box."));
  EXPECT_THAT(Texts(out, "//w:body/w:p/w:r/w:t"), ElementsAre("Äußerer Text ", "hier."));
  EXPECT_EQ(out.select_nodes("//w:drawing").size(), 1u);
}

TEST(OoxmlRunsTest, IdentityRenderingKeepsEveryWordAndFormatting) {
  const std::string xml = Word(
      "<w:p><w:r><w:rPr><w:i/></w:rPr><w:t>One</w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\"> two </w:t></w:r>"
      "<w:r><w:rPr><w:u w:val=\"single\"/></w:rPr><w:t>three</w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\"> four.</w:t></w:r></w:p>"
      "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell.</w:t></w:r></w:p></w:tc></w:tr></w:tbl>");
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 2u);
  const pugi::xml_document out = Parse(runs->Render(Identity(*runs)));
  EXPECT_THAT(Texts(out, "//w:r[w:rPr/w:i]/w:t"), ElementsAre("One"));
  EXPECT_THAT(Texts(out, "//w:r[w:rPr/w:u]/w:t"), ElementsAre("three"));
  EXPECT_THAT(Texts(out, "//w:tbl/w:tr/w:tc/w:p/w:r/w:t"), ElementsAre("Cell."));
  EXPECT_THAT(ParagraphTexts(out), ElementsAre("One two three four."));
}

TEST(OoxmlRunsTest, NoTargetLanguageLeavesLanguageTags) {
  const std::string xml = Word(
      "<w:p><w:r><w:rPr><w:lang w:val=\"en-US\" w:eastAsia=\"ja-JP\"/></w:rPr><w:t>Hi.</w:t>"
      "</w:r></w:p>");
  std::unique_ptr<PartRuns> kept = TakeApart(xml, OoxmlDialect::kWordprocessing, "");
  ASSERT_NE(kept, nullptr);
  EXPECT_STREQ(Parse(kept->Render({{"Hallo.", {}}}))
                   .select_node("//w:lang")
                   .node()
                   .attribute("w:val")
                   .value(),
               "en-US");
  std::unique_ptr<PartRuns> set = TakeApart(xml, OoxmlDialect::kWordprocessing, "de");
  ASSERT_NE(set, nullptr);
  const pugi::xml_document out = Parse(set->Render({{"Hallo.", {}}}));
  EXPECT_STREQ(out.select_node("//w:lang").node().attribute("w:val").value(), "de");
  EXPECT_STREQ(out.select_node("//w:lang").node().attribute("w:eastAsia").value(), "ja-JP");
  // Japanese is Word's East Asian language: w:eastAsia, the others left; Arabic its right to left
  // one: w:bidi, added where it was missing.
  std::unique_ptr<PartRuns> japanese = TakeApart(xml, OoxmlDialect::kWordprocessing, "ja");
  ASSERT_NE(japanese, nullptr);
  const pugi::xml_document ja = Parse(japanese->Render({{"こんにちは。", {}}}));
  EXPECT_STREQ(ja.select_node("//w:lang").node().attribute("w:eastAsia").value(), "ja");
  EXPECT_STREQ(ja.select_node("//w:lang").node().attribute("w:val").value(), "en-US");
  std::unique_ptr<PartRuns> arabic = TakeApart(xml, OoxmlDialect::kWordprocessing, "ar-EG");
  ASSERT_NE(arabic, nullptr);
  const pugi::xml_document ar = Parse(arabic->Render({{"مرحبا.", {}}}));
  EXPECT_STREQ(ar.select_node("//w:lang").node().attribute("w:bidi").value(), "ar-EG");
  EXPECT_STREQ(ar.select_node("//w:lang").node().attribute("w:val").value(), "en-US");
}

TEST(OoxmlRunsTest, StylesPartHasNoRunsAndGetsItsLanguage) {
  const std::string xml =
      "<w:styles xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val=\"en-US\"/></w:rPr></w:rPrDefault>"
      "</w:docDefaults></w:styles>";
  std::unique_ptr<PartRuns> runs = TakeApart(xml);
  ASSERT_NE(runs, nullptr);
  EXPECT_THAT(runs->runs(), IsEmpty());
  EXPECT_STREQ(Parse(runs->Render({}))
                   .select_node("//w:docDefaults//w:lang")
                   .node()
                   .attribute("w:val")
                   .value(),
               "de");
}

TEST(OoxmlRunsTest, MalformedOrHostileXmlIsRefusedNamingThePart) {
  for (const std::string& xml :
       {std::string("<w:document"), std::string("<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>"),
        Word("<w:p><w:r><w:t>caf\xE9</w:t></w:r></w:p>")}) {
    absl::StatusOr<std::unique_ptr<PartRuns>> runs =
        TakeApartOoxmlPart("word/document.xml", xml, OoxmlDialect::kWordprocessing, "de");
    ASSERT_FALSE(runs.ok());
    EXPECT_EQ(runs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(runs.status().message(), HasSubstr("word/document.xml"));
  }
}

constexpr absl::string_view kSlide =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<p:sld xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" "
    "xmlns:p=\"http://schemas.openxmlformats.org/presentationml/2006/main\"><p:cSld><p:spTree>"
    "<p:sp><p:txBody><a:bodyPr/><a:lstStyle/>"
    "<a:p><a:pPr algn=\"ctr\"/><a:r><a:rPr lang=\"en-US\" dirty=\"0\"/><a:t>The </a:t></a:r>"
    "<a:r><a:rPr lang=\"en-US\" b=\"1\" dirty=\"0\"/><a:t>dog</a:t></a:r>"
    "<a:r><a:rPr lang=\"en-GB\" err=\"1\"/><a:t> runs</a:t></a:r><a:br><a:rPr lang=\"en-US\"/>"
    "</a:br><a:r><a:rPr lang=\"en-US\"><a:hlinkClick r:id=\"rId2\"/></a:rPr><a:t>home</a:t>"
    "</a:r><a:endParaRPr lang=\"en-US\" dirty=\"0\"/></a:p>"
    "<a:p><a:fld id=\"{1}\" type=\"slidenum\"><a:rPr lang=\"en-US\"/><a:t>7</a:t></a:fld>"
    "<a:endParaRPr lang=\"en-US\"/></a:p>"
    "</p:txBody></p:sp></p:spTree></p:cSld></p:sld>";

TEST(OoxmlRunsTest, DrawingMLParagraphs) {
  std::unique_ptr<PartRuns> runs = TakeApart(std::string(kSlide), OoxmlDialect::kDrawing, "de");
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->runs().size(), 1u);  // The slide number's paragraph is a field alone.
  const PartRuns::Run& run = runs->runs()[0];
  EXPECT_EQ(run.text, "The dog runs home");
  // The bold word, the break, the link (formatting in a:rPr).
  EXPECT_THAT(Ranges(run), ElementsAre(Segment{4, 7}, Segment{13, 13}, Segment{13, 17}));

  pugi::xml_document out = Parse(
      runs->Render({{"Der Hund rennt heim", {Segment{4, 8}, Segment{15, 15}, Segment{15, 19}}}}));
  out.select_node("//p:sld");  // Prefixes resolved as written.
  EXPECT_THAT(Texts(out, "//a:r[a:rPr/@b='1']/a:t"), ElementsAre("Hund"));
  EXPECT_THAT(Texts(out, "//a:r[a:rPr/a:hlinkClick]/a:t"), ElementsAre("heim"));
  EXPECT_THAT(Texts(out, "//a:p[1]/a:r/a:t"), ElementsAre("Der ", "Hund", " rennt", "heim"));
  EXPECT_TRUE(out.select_node("//a:p[1]/a:br/following-sibling::a:r[a:rPr/a:hlinkClick]"));
  EXPECT_TRUE(out.select_node("//a:p[1]/*[last()][self::a:endParaRPr]"));
  EXPECT_STREQ(out.select_node("//a:p[1]/a:pPr").node().attribute("algn").value(), "ctr");
  for (const pugi::xpath_node& n : out.select_nodes("//*[@lang]")) {
    EXPECT_STREQ(n.node().attribute("lang").value(), "de") << n.node().name();
  }
  EXPECT_THAT(Texts(out, "//a:fld/a:t"), ElementsAre("7"));
}

}  // namespace
}  // namespace mtserve
