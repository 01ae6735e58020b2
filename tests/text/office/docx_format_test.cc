// DOCX and PPTX files (tests/data/office/, made by python3-docx and LibreOffice:
// tools/make_office_fixtures.py) translated by the test model through PrepareDocument and
// JoinDocument, as the file jobs translate them, and the results read back with the package
// reader and pugixml, and with readers nobody here wrote: pandoc and python3-docx.
//
// Expectations are independent of the code under test: a paragraph without inline formatting
// translates as its text does as plain text (the same model, PrepareDocument kPlainText); a bold
// or linked word is bold or linked on its translation (the German word the model gives for it,
// checked by hand); every entry not rewritten is byte for byte the source's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "model/translator.h"
#include "pugixml.hpp"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "tests/test_lib/zip_archive.h"
#include "text/document.h"
#include "text/office/office_package.h"

namespace mtserve {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class OfficeFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  // `text` of `format` translated by the test model as the server does it.
  TextTranslation Translate(const std::string& text, DocumentFormat format) const {
    absl::StatusOr<TextTranslation> t = testing::TranslateDocument(
        model_, text, format, {splitter_.get(), &tokenizer(), 256, {}, "de"});
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : TextTranslation{};
  }

  std::string Plain(const std::string& text) const {
    TextTranslation t = Translate(text, DocumentFormat::kPlainText);
    return t.hypotheses.empty() ? "" : t.hypotheses[0].text;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

pugi::xml_document Part(const OfficePackage& package, const std::string& name) {
  pugi::xml_document document;
  absl::StatusOr<std::string> bytes = package.Read(name);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (bytes.ok()) {
    EXPECT_TRUE(document.load_buffer(bytes->data(), bytes->size()));
  }
  return document;
}

// Each w:p's text (its w:t), in document order, with w:tab as a tab.
std::vector<std::string> WordParagraphs(const pugi::xml_node& root) {
  std::vector<std::string> out;
  for (const pugi::xpath_node& p : root.select_nodes("//w:p")) {
    std::string text;
    pugi::xpath_node_set nodes = p.node().select_nodes(".//w:t|.//w:tab");
    nodes.sort();  // Document order.
    for (const pugi::xpath_node& n : nodes) {
      text += absl::string_view(n.node().name()) == "w:tab" ? "\t" : n.node().child_value();
    }
    out.push_back(text);
  }
  return out;
}

// The translated file, opened as a package.
class DocxFormatTest : public OfficeFormatTest {
 protected:
  void SetUp() override {
    OfficeFormatTest::SetUp();
    if (HasFatalFailure()) return;
    source_ = testing::ReadOfficeFixture("formatted.docx");
    ASSERT_FALSE(source_.empty());
    TextTranslation t = Translate(source_, DocumentFormat::kDocx);
    ASSERT_EQ(t.hypotheses.size(), 1u);
    translated_ = t.hypotheses[0].text;
    dropped_ = t.dropped.empty() ? std::vector<Segment>{} : t.dropped[0];
    ASSERT_OK_AND_ASSIGN(OfficePackage in, OfficePackage::Open(source_));
    ASSERT_OK_AND_ASSIGN(OfficePackage out, OfficePackage::Open(translated_));
    in_ = std::make_unique<OfficePackage>(std::move(in));
    out_ = std::make_unique<OfficePackage>(std::move(out));
  }

  std::string source_, translated_;
  std::vector<Segment> dropped_;
  std::unique_ptr<OfficePackage> in_, out_;
};

TEST_F(DocxFormatTest, PlainParagraphsTranslateAsTheirTextDoes) {
  const pugi::xml_document document = Part(*out_, "word/document.xml");
  const std::vector<std::string> paragraphs = WordParagraphs(document);
  // The heading, a plain paragraph, the last one, the table's cells, and the paragraph Word
  // split into runs of one formatting with proofing marks between: one text.
  // Paragraphs with formatted and linked words too: their text is the same sentences.
  for (const char* text :
       {"A day in the park", "A man is riding a bike.", "A woman is walking on the beach.",
        "A woman is reading.", "The sun is shining.", "Two dogs are playing in the snow.",
        "The dog runs in the park.", "A small cat sleeps on the red sofa.",
        "Two children play with a ball.", "A boy is playing near the big house."}) {
    EXPECT_THAT(paragraphs, Contains(Plain(text))) << text;
  }
  EXPECT_TRUE(document.select_node("//w:tbl/w:tr/w:tc/w:p"));
  EXPECT_FALSE(document.select_node("//w:proofErr"));
  EXPECT_THAT(dropped_, IsEmpty());
}

TEST_F(DocxFormatTest, BoldItalicUnderlinedColouredAndLinkedWordsKeepTheirFormatting) {
  const pugi::xml_document document = Part(*out_, "word/document.xml");
  auto texts = [&](const char* xpath) {
    std::vector<std::string> out;
    for (const pugi::xpath_node& n : document.select_nodes(xpath)) {
      out.push_back(n.node().child_value());
    }
    return out;
  };
  // The German words for "dog", "small", "red", "ball" and "big house", as the model gives them
  // in these sentences (the alignment takes the article with "red" and "big house").
  EXPECT_THAT(texts("//w:r[w:rPr/w:b]/w:t"), ElementsAre("Hund"));
  EXPECT_THAT(texts("//w:r[w:rPr/w:i]/w:t"), ElementsAre("kleine"));
  EXPECT_THAT(texts("//w:r[w:rPr/w:u and not(ancestor::w:hyperlink)]/w:t"),
              ElementsAre(HasSubstr("roten")));
  EXPECT_THAT(texts("//w:r[w:rPr/w:color/@w:val='C00000']/w:t"), ElementsAre("Ball"));
  EXPECT_STREQ(document.select_node("//w:r[w:rPr/w:color/@w:val='C00000']/w:rPr/w:sz")
                   .node()
                   .attribute("w:val")
                   .value(),
               "28");
  const pugi::xpath_node link = document.select_node("//w:hyperlink");
  ASSERT_TRUE(link);
  const std::string link_id = link.node().attribute("r:id").value();
  EXPECT_THAT(texts("//w:hyperlink/w:r[w:rPr/w:u]/w:t"), ElementsAre(HasSubstr("großen Haus")));
  // The link still points where it did.
  const pugi::xml_document source = Part(*in_, "word/document.xml");
  EXPECT_EQ(link_id, source.select_node("//w:hyperlink").node().attribute("r:id").value());
}

TEST_F(DocxFormatTest, HeaderFooterImageAndStylesKeptLanguageSet) {
  EXPECT_THAT(WordParagraphs(Part(*out_, "word/header1.xml")),
              ElementsAre(Plain("The annual report of the club.")));
  EXPECT_THAT(WordParagraphs(Part(*out_, "word/footer1.xml")),
              ElementsAre(Plain("A footer under every page.")));
  const pugi::xml_document document = Part(*out_, "word/document.xml");
  EXPECT_EQ(document.select_nodes("//w:drawing//a:blip").size(), 1u);
  EXPECT_EQ(document.select_nodes("//w:tbl//w:tc").size(), 4u);
  const pugi::xml_document styles = Part(*out_, "word/styles.xml");
  EXPECT_STREQ(styles.select_node("//w:docDefaults//w:lang").node().attribute("w:val").value(),
               "de");
  // Styles are otherwise as they were: the same ones, in the same order.
  const pugi::xml_document source_styles = Part(*in_, "word/styles.xml");
  std::vector<std::string> ids, source_ids;
  for (const pugi::xpath_node& s : styles.select_nodes("//w:style/@w:styleId")) {
    ids.push_back(s.attribute().value());
  }
  for (const pugi::xpath_node& s : source_styles.select_nodes("//w:style/@w:styleId")) {
    source_ids.push_back(s.attribute().value());
  }
  EXPECT_EQ(ids, source_ids);
}

TEST_F(DocxFormatTest, EntriesNotRewrittenAreTheSourcesByteForByte) {
  ASSERT_EQ(out_->names(), in_->names());
  const std::vector<std::string> rewritten = {"word/document.xml", "word/header1.xml",
                                              "word/footer1.xml", "word/styles.xml"};
  for (const std::string& name : in_->names()) {
    if (std::find(rewritten.begin(), rewritten.end(), name) != rewritten.end()) continue;
    absl::StatusOr<std::string> before = in_->Read(name);
    absl::StatusOr<std::string> after = out_->Read(name);
    ASSERT_TRUE(before.ok() && after.ok()) << name;
    EXPECT_EQ(*before, *after) << name;
  }
}

// The translated file written out and read by a program.
std::string RunOn(const std::string& bytes, const std::string& command) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / absl::StrCat("docx_format_test_", getpid(), ".docx");
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  std::string output;
  FILE* pipe = popen(absl::StrCat(command, " ", path.string(), " 2>&1").c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << command << ":\n" << output;
  }
  std::filesystem::remove(path);
  return output;
}

TEST_F(DocxFormatTest, PandocAndPythonDocxReadTheTranslation) {
  const std::string riding = Plain("A man is riding a bike.");
  const std::string pandoc = RunOn(translated_, "pandoc -f docx -t plain --wrap=none");
  EXPECT_THAT(pandoc, HasSubstr(riding));
  EXPECT_THAT(pandoc, HasSubstr(Plain("A boy is swimming.")));
  const std::string python =
      RunOn(translated_,
            "/usr/bin/python3 -c 'import docx, sys; d = docx.Document(sys.argv[1]); "
            "print(\"\\n\".join(p.text for p in d.paragraphs)); "
            "print(d.sections[0].header.paragraphs[0].text)'");
  EXPECT_THAT(python, HasSubstr(riding));
  EXPECT_THAT(python, HasSubstr(Plain("The annual report of the club.")));
}

// A signed document (Office Open XML's package signature parts, as Word writes them, added to
// the fixture): the translation would break the signature, so its parts, its relationship and its
// content types are left out; everything else is kept and the file still reads.
TEST_F(DocxFormatTest, ASignatureIsLeftOutOfTheTranslation) {
  const std::string origin_type =
      "http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin";
  std::vector<std::pair<std::string, std::string>> entries;
  for (const std::string& name : in_->names()) {
    std::string bytes = *in_->Read(name);
    if (name == "_rels/.rels") {
      bytes.insert(bytes.rfind("</Relationships>"),
                   absl::StrCat("<Relationship Id=\"rId9\" Type=\"", origin_type,
                                "\" Target=\"_xmlsignatures/origin.sigs\"/>"));
    } else if (name == "[Content_Types].xml") {
      bytes.insert(bytes.rfind("</Types>"),
                   "<Default Extension=\"sigs\" ContentType=\"application/"
                   "vnd.openxmlformats-package.digital-signature-origin\"/><Override "
                   "PartName=\"/_xmlsignatures/sig1.xml\" ContentType=\"application/"
                   "vnd.openxmlformats-package.digital-signature-xmlsignature+xml\"/>");
    }
    entries.push_back({name, bytes});
  }
  entries.push_back({"_xmlsignatures/origin.sigs", ""});
  entries.push_back({"_xmlsignatures/sig1.xml", "<Signature/>"});
  entries.push_back({"_xmlsignatures/_rels/origin.sigs.rels", "<Relationships/>"});
  const std::string signed_docx = testing::ZipArchive(entries);

  TextTranslation t = Translate(signed_docx, DocumentFormat::kDocx);
  ASSERT_EQ(t.hypotheses.size(), 1u);
  ASSERT_OK_AND_ASSIGN(OfficePackage out, OfficePackage::Open(t.hypotheses[0].text));
  EXPECT_EQ(out.names(), in_->names());  // The three signature parts gone, nothing else.
  const std::string rels = *out.Read("_rels/.rels");
  EXPECT_THAT(rels, Not(HasSubstr("digital-signature")));
  EXPECT_THAT(rels, HasSubstr("word/document.xml"));
  const std::string types = *out.Read("[Content_Types].xml");
  EXPECT_THAT(types, Not(HasSubstr("digital-signature")));
  EXPECT_THAT(types, HasSubstr("/word/document.xml"));
  EXPECT_EQ(WordParagraphs(Part(out, "word/document.xml").document_element()),
            WordParagraphs(Part(*out_, "word/document.xml").document_element()));
  EXPECT_THAT(RunOn(t.hypotheses[0].text, "pandoc -f docx -t plain --wrap=none"),
              HasSubstr(Plain("A man is riding a bike.")));
}

TEST_F(OfficeFormatTest, FootnotesAreTranslatedAndTheirReferencesKept) {
  const std::string source = testing::ReadOfficeFixture("footnote.docx");
  TextTranslation t = Translate(source, DocumentFormat::kDocx);
  ASSERT_EQ(t.hypotheses.size(), 1u);
  ASSERT_OK_AND_ASSIGN(OfficePackage out, OfficePackage::Open(t.hypotheses[0].text));
  const pugi::xml_document notes = Part(out, "word/footnotes.xml");
  // The note's mark, a tab, its text.
  EXPECT_TRUE(notes.select_node("//w:footnote[@w:id='2']//w:footnoteRef"));
  EXPECT_THAT(WordParagraphs(notes), Contains(absl::StrCat("\t", Plain("The bike is red."))));
  const pugi::xml_document document = Part(out, "word/document.xml");
  EXPECT_TRUE(document.select_node("//w:p/w:r/w:footnoteReference[@w:id='2']"));
  EXPECT_THAT(WordParagraphs(document), Contains(Plain("Two dogs are playing in the snow.")));
}

TEST_F(OfficeFormatTest, PptxSlidesNotesAndTablesAreTranslated) {
  const std::string source = testing::ReadOfficeFixture("slides.pptx");
  TextTranslation t = Translate(source, DocumentFormat::kPptx);
  ASSERT_EQ(t.hypotheses.size(), 1u);
  ASSERT_OK_AND_ASSIGN(OfficePackage out, OfficePackage::Open(t.hypotheses[0].text));
  ASSERT_OK_AND_ASSIGN(OfficePackage in, OfficePackage::Open(source));
  auto paragraphs = [](const pugi::xml_document& d) {
    std::vector<std::string> out;
    for (const pugi::xpath_node& p : d.select_nodes("//a:p")) {
      std::string text;
      for (const pugi::xpath_node& n : p.node().select_nodes("./a:r/a:t")) {
        text += n.node().child_value();
      }
      out.push_back(text);
    }
    return out;
  };
  const pugi::xml_document one = Part(out, "ppt/slides/slide1.xml");
  EXPECT_THAT(paragraphs(one), Contains(Plain("A man is riding a bike.")));
  EXPECT_THAT(paragraphs(one), Contains(Plain("A day in the park")));
  std::vector<std::string> bold;
  for (const pugi::xpath_node& n : one.select_nodes("//a:r[a:rPr/@b='1']/a:t")) {
    bold.push_back(n.node().child_value());
  }
  EXPECT_THAT(bold, ElementsAre("Hund"));
  for (const pugi::xpath_node& n : one.select_nodes("//a:rPr[@lang]|//a:endParaRPr[@lang]")) {
    EXPECT_STREQ(n.node().attribute("lang").value(), "de");
  }
  EXPECT_THAT(paragraphs(Part(out, "ppt/slides/slide2.xml")),
              Contains(Plain("A woman is reading.")));
  EXPECT_THAT(paragraphs(Part(out, "ppt/notesSlides/notesSlide1.xml")),
              Contains(Plain("Two dogs are playing in the snow.")));
  // Masters and layouts as they were.
  for (const std::string& name : in.names()) {
    if (name.rfind("ppt/slideLayouts/", 0) == 0 || name.rfind("ppt/slideMasters/", 0) == 0) {
      EXPECT_EQ(*in.Read(name), *out.Read(name)) << name;
    }
  }
}

TEST_F(OfficeFormatTest, APresentationIsNotAWordDocument) {
  SentenceRules rules{splitter_.get(), &tokenizer(), 256, {}, "de"};
  absl::StatusOr<std::unique_ptr<Document>> document =
      PrepareDocument(testing::ReadOfficeFixture("slides.pptx"), DocumentFormat::kDocx, rules);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(document.status().message(), HasSubstr("word/document.xml"));
  document =
      PrepareDocument(testing::ReadOfficeFixture("formatted.docx"), DocumentFormat::kPptx, rules);
  ASSERT_FALSE(document.ok());
  EXPECT_THAT(document.status().message(), HasSubstr("ppt/presentation.xml"));
}

}  // namespace
}  // namespace mtserve
