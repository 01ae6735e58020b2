// Whole OpenDocument files (tests/data/office/report.odt and slides.odp, made by python3-odf:
// tools/make_office_fixtures.py) translated by the test model as the server does it
// (PrepareDocument, each sentence decoded with the alignment, JoinDocument), then read back with
// pugixml, pandoc and odfpy. What a paragraph should say is the model's translation of its text
// as a plain text, found independently through the plain-text format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pugixml.hpp"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "tests/test_lib/zip_archive.h"
#include "text/document.h"
#include "text/office/office_package.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

// What ODF readers show of a paragraph: its text with text:s as spaces, text:tab as a tab,
// text:line-break as a line feed; notes, frames and comments left out.
std::string VisibleText(const pugi::xml_node& node) {
  std::string out;
  for (const pugi::xml_node& child : node.children()) {
    const std::string name = child.name();
    if (child.type() == pugi::node_pcdata) {
      out += child.value();
    } else if (name == "text:s") {
      out += std::string(child.attribute("text:c").as_int(1), ' ');
    } else if (name == "text:tab") {
      out += '\t';
    } else if (name == "text:line-break") {
      out += '\n';
    } else if (name != "text:note" && name != "draw:frame" && name != "office:annotation") {
      out += VisibleText(child);
    }
  }
  return out;
}

std::unique_ptr<pugi::xml_document> ParseXml(const std::string& bytes) {
  auto document = std::make_unique<pugi::xml_document>();
  const pugi::xml_parse_result result = document->load_buffer(
      bytes.data(), bytes.size(), pugi::parse_default | pugi::parse_ws_pcdata);
  EXPECT_TRUE(result) << result.description();
  return document;
}

std::vector<pugi::xml_node> Nodes(const pugi::xml_document& document, const char* xpath) {
  std::vector<pugi::xml_node> out;
  for (const pugi::xpath_node& n : document.select_nodes(xpath)) out.push_back(n.node());
  return out;
}

// The output of `command` run on a file holding `bytes` (empty if it failed).
std::string RunOn(const std::string& bytes, const std::string& suffix, const std::string& command) {
  char path[] = "/tmp/odf_format_test_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  const std::string file = absl::StrCat(path, suffix);
  rename(path, file.c_str());
  std::ofstream(file, std::ios::binary) << bytes;
  std::string out;
  if (FILE* pipe = popen(absl::StrCat(command, " ", file, " 2>/dev/null").c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
    if (pclose(pipe) != 0) out.clear();
  }
  unlink(file.c_str());
  return out;
}

class OdfFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
    // Until the package is implemented, whole files cannot be read.
    const absl::StatusOr<OfficePackage> package =
        OfficePackage::Open(testing::ReadOfficeFixture("report.odt"));
    if (absl::IsUnimplemented(package.status())) GTEST_SKIP() << package.status();
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  // `text` of `format` translated by the test model, as the server does it.
  TextTranslation Translate(const std::string& text, DocumentFormat format) const {
    absl::StatusOr<TextTranslation> translation = testing::TranslateDocument(
        model_, text, format, {splitter_.get(), &tokenizer(), 256, {}, "de"});
    EXPECT_TRUE(translation.ok()) << translation.status();
    return translation.ok() ? *std::move(translation) : TextTranslation{};
  }
  std::string Plain(const std::string& text) const {
    return Translate(text, DocumentFormat::kPlainText).hypotheses.at(0).text;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

std::string Entry(const std::string& package_bytes, const std::string& name) {
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(package_bytes);
  EXPECT_TRUE(package.ok()) << package.status();
  if (!package.ok()) return "";
  absl::StatusOr<std::string> bytes = package->Read(name);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

TEST_F(OdfFormatTest, ATextDocumentsParagraphsAreTheirPlainTranslations) {
  const std::string source = testing::ReadOfficeFixture("report.odt");
  const TextTranslation translation = Translate(source, DocumentFormat::kOdt);
  ASSERT_EQ(translation.hypotheses.size(), 1u);
  const std::string out = translation.hypotheses[0].text;

  const auto before = ParseXml(Entry(source, "content.xml"));
  const auto after = ParseXml(Entry(out, "content.xml"));
  const char* kParagraphs = "//text:p | //text:h";
  const std::vector<pugi::xml_node> from = Nodes(*before, kParagraphs);
  const std::vector<pugi::xml_node> to = Nodes(*after, kParagraphs);
  ASSERT_EQ(from.size(), to.size());
  size_t compared = 0;
  for (size_t i = 0; i < from.size(); ++i) {
    const std::string text = VisibleText(from[i]);
    if (absl::StrContains(text, "\t")) continue;  // The tab's paragraph: below.
    if (pugi::xml_node(from[i]).parent().name() == std::string("office:annotation")) {
      EXPECT_EQ(VisibleText(to[i]), text);  // A comment is kept.
      continue;
    }
    // Spans, links, frames and notes do not change the text: every paragraph reads as its text
    // translated as a plain text.
    EXPECT_EQ(VisibleText(to[i]), Plain(text)) << "paragraph " << i << ": " << text;
    EXPECT_NE(VisibleText(to[i]), text);
    ++compared;
  }
  EXPECT_EQ(compared, 14u);

  // The bold and italic words and the link are on their translations.
  const pugi::xml_node bold = after->select_node("//text:span[@text:style-name='Bold']").node();
  EXPECT_THAT(VisibleText(bold), HasSubstr("rot"));
  const pugi::xml_node italic = after->select_node("//text:span[@text:style-name='Italic']").node();
  EXPECT_THAT(VisibleText(italic), HasSubstr("Park"));
  const pugi::xml_node link = after->select_node("//text:a").node();
  EXPECT_STREQ(link.attribute("xlink:href").value(), "https://example.org/news");
  EXPECT_THAT(VisibleText(link), HasSubstr("Nachricht"));
  // The tab stays between the label and its value, which are translated.
  const pugi::xml_node tab = after->select_node("//text:p[text:tab]").node();
  const std::string tabbed = VisibleText(tab);
  ASSERT_THAT(tabbed, HasSubstr("\t"));
  EXPECT_EQ(tabbed.find('\t'), tabbed.rfind('\t'));
  EXPECT_NE(tabbed.substr(tabbed.find('\t') + 1), "sunny and warm");

  // The structure is kept: tables, lists, the image frame, the note, the comment, the styles.
  for (const char* xpath :
       {"//table:table", "//table:table-cell", "//text:list-item", "//text:note",
        "//draw:frame/draw:image[@xlink:href='Pictures/red.png']", "//office:annotation",
        "//text:h[@text:outline-level='1']", "//style:style"}) {
    EXPECT_EQ(Nodes(*after, xpath).size(), Nodes(*before, xpath).size()) << xpath;
    EXPECT_GT(Nodes(*after, xpath).size(), 0u) << xpath;
  }

  // The comment is kept untranslated and said so: its text is the one dropped range.
  ASSERT_EQ(translation.dropped.size(), 1u);
  ASSERT_EQ(translation.dropped[0].size(), 1u);
  EXPECT_EQ(translation.dropped[0][0].end - translation.dropped[0][0].begin,
            std::string("Check this sentence.").size());
}

TEST_F(OdfFormatTest, ATextDocumentsHeadersTitleLanguageAndOtherEntries) {
  const std::string source = testing::ReadOfficeFixture("report.odt");
  const std::string out = Translate(source, DocumentFormat::kOdt).hypotheses.at(0).text;

  const auto styles = ParseXml(Entry(out, "styles.xml"));
  EXPECT_EQ(VisibleText(styles->select_node("//style:header/text:p").node()),
            Plain("The header of the report."));
  // The footer's page number is a field: kept as written, its paragraph translated around it.
  const pugi::xml_node footer = styles->select_node("//style:footer/text:p").node();
  EXPECT_EQ(Nodes(*styles, "//style:footer/text:p/text:page-number").size(), 1u);
  EXPECT_STREQ(footer.child("text:page-number").child_value(), "1");
  EXPECT_EQ(VisibleText(footer), Plain("The footer of the report, page 1."));
  const pugi::xml_node properties =
      styles->select_node("//style:default-style[@style:family='paragraph']/style:text-properties")
          .node();
  EXPECT_STREQ(properties.attribute("fo:language").value(), "de");
  EXPECT_STREQ(properties.attribute("fo:country").value(), "none");

  const auto meta = ParseXml(Entry(out, "meta.xml"));
  EXPECT_EQ(std::string(meta->select_node("//dc:title").node().child_value()),
            Plain("A short report"));
  EXPECT_STREQ(meta->select_node("//dc:language").node().child_value(), "de");

  // Every other entry as it was, in the same order; mimetype first and stored (its bytes right
  // after the first local header and its name, as ODF requires).
  absl::StatusOr<OfficePackage> in = OfficePackage::Open(source);
  absl::StatusOr<OfficePackage> translated = OfficePackage::Open(out);
  ASSERT_TRUE(in.ok() && translated.ok());
  EXPECT_EQ(translated->names(), in->names());
  for (const std::string& name : in->names()) {
    if (name == "content.xml" || name == "styles.xml" || name == "meta.xml") continue;
    EXPECT_EQ(*translated->Read(name), *in->Read(name)) << name;
  }
  EXPECT_EQ(out.substr(30, 8), "mimetype");
  EXPECT_EQ(out.substr(38, 39), "application/vnd.oasis.opendocument.text");
}

TEST_F(OdfFormatTest, APresentationsSlidesAndNotesAreTranslated) {
  const std::string source = testing::ReadOfficeFixture("slides.odp");
  const std::string out = Translate(source, DocumentFormat::kOdp).hypotheses.at(0).text;
  const auto before = ParseXml(Entry(source, "content.xml"));
  const auto after = ParseXml(Entry(out, "content.xml"));
  const std::vector<pugi::xml_node> from = Nodes(*before, "//text:p");
  const std::vector<pugi::xml_node> to = Nodes(*after, "//text:p");
  ASSERT_EQ(from.size(), to.size());
  ASSERT_EQ(from.size(), 7u);  // Per slide: a title, one or two lines, a note.
  for (size_t i = 0; i < from.size(); ++i) {
    EXPECT_EQ(VisibleText(to[i]), Plain(VisibleText(from[i]))) << VisibleText(from[i]);
  }
  EXPECT_EQ(VisibleText(after->select_node("//presentation:notes//text:p").node()),
            Plain("Say this slowly."));
  const pugi::xml_node bold = after->select_node("//text:span[@text:style-name='Bold']").node();
  EXPECT_THAT(VisibleText(bold), HasSubstr("Frau"));
  for (const char* xpath : {"//draw:page", "//draw:frame[@presentation:class='title']",
                            "//presentation:notes", "//draw:text-box"}) {
    EXPECT_EQ(Nodes(*after, xpath).size(), Nodes(*before, xpath).size()) << xpath;
  }
  const pugi::xml_node box =
      after->select_node("//style:style[@style:name='Box']/style:text-properties").node();
  EXPECT_STREQ(box.attribute("fo:language").value(), "de");
  EXPECT_STREQ(box.attribute("fo:country").value(), "none");
  EXPECT_EQ(out.substr(38, 47), "application/vnd.oasis.opendocument.presentation");
}

// pandoc and odfpy, which nobody here wrote, read the translated files and find the translation.
TEST_F(OdfFormatTest, OtherReadersReadTheTranslation) {
  const std::string out = Translate(testing::ReadOfficeFixture("report.odt"), DocumentFormat::kOdt)
                              .hypotheses.at(0)
                              .text;
  const std::string expected = Plain("A dog is running.");
  const std::string odfpy = RunOn(out, ".odt",
                                  "/usr/bin/python3 -c 'import sys\n"
                                  "from odf.opendocument import load\n"
                                  "from odf import text, teletype\n"
                                  "d = load(sys.argv[1])\n"
                                  "for p in d.getElementsByType(text.P): "
                                  "print(teletype.extractText(p))'");
  EXPECT_THAT(odfpy, HasSubstr(expected));
  const std::string slides =
      RunOn(Translate(testing::ReadOfficeFixture("slides.odp"), DocumentFormat::kOdp)
                .hypotheses.at(0)
                .text,
            ".odp",
            "/usr/bin/python3 -c 'import sys\n"
            "from odf.opendocument import load\n"
            "from odf import text, teletype\n"
            "d = load(sys.argv[1])\n"
            "for p in d.getElementsByType(text.P): print(teletype.extractText(p))'");
  EXPECT_THAT(slides, HasSubstr(Plain("Say this slowly.")));
  const std::string pandoc = RunOn(out, ".odt", "pandoc -f odt -t plain --wrap=none");
  if (pandoc.empty() && RunOn("", ".txt", "pandoc --version").empty()) {
    GTEST_SKIP() << "pandoc is not installed";
  }
  EXPECT_THAT(pandoc, HasSubstr(expected));
  EXPECT_THAT(pandoc, HasSubstr(Plain("The sun is shining. The birds are singing.")));
}

// A signed document (its signature in META-INF/documentsignatures.xml, added to the fixture): the
// translation would break the signature, so it is left out; every other entry is kept, in order.
TEST_F(OdfFormatTest, ASignatureIsLeftOutOfTheTranslation) {
  ASSERT_OK_AND_ASSIGN(OfficePackage source,
                       OfficePackage::Open(testing::ReadOfficeFixture("report.odt")));
  std::vector<std::pair<std::string, std::string>> entries;
  for (const std::string& name : source.names()) entries.push_back({name, *source.Read(name)});
  entries.push_back({"META-INF/documentsignatures.xml", "<dsig:document-signatures/>"});
  const TextTranslation t = Translate(testing::ZipArchive(entries), DocumentFormat::kOdt);
  ASSERT_EQ(t.hypotheses.size(), 1u);
  ASSERT_OK_AND_ASSIGN(OfficePackage out, OfficePackage::Open(t.hypotheses[0].text));
  EXPECT_EQ(out.names(), source.names());
  EXPECT_EQ(*out.Read("META-INF/manifest.xml"), *source.Read("META-INF/manifest.xml"));
  EXPECT_THAT(Entry(t.hypotheses[0].text, "content.xml"), HasSubstr(Plain("A cat is sleeping.")));
}

TEST_F(OdfFormatTest, RefusesWhatIsNotAnOdtOrOdp) {
  const SentenceRules rules{splitter_.get(), &tokenizer(), 256, {}, "de"};
  absl::StatusOr<OfficePackage> package =
      OfficePackage::Open(testing::ReadOfficeFixture("report.odt"));
  ASSERT_TRUE(package.ok()) << package.status();
  const std::string spreadsheet =
      package->Write({{"mimetype", "application/vnd.oasis.opendocument.spreadsheet"}});
  const absl::Status wrong_type =
      PrepareDocument(spreadsheet, DocumentFormat::kOdt, rules).status();
  EXPECT_EQ(wrong_type.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_type.message(), HasSubstr("mimetype"));
  EXPECT_THAT(wrong_type.message(), HasSubstr("spreadsheet"));

  const std::string doctype = package->Write(
      {{"content.xml", "<!DOCTYPE x [<!ENTITY a \"b\">]><office:document-content/>"}});
  const absl::Status refused = PrepareDocument(doctype, DocumentFormat::kOdt, rules).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("content.xml"));
  EXPECT_THAT(refused.message(), HasSubstr("DOCTYPE"));
}

}  // namespace
}  // namespace mtserve
