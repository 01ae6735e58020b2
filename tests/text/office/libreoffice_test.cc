// LibreOffice (headless), which nobody here wrote, opens the translated fixtures
// (tests/data/office/: tools/make_office_fixtures.py): each DOCX, PPTX, ODT and ODP converts to
// PDF, and the text documents' plain-text exports hold the translation. Some seconds a file (a
// fresh LibreOffice profile each run), so in the slow tier (mt_test SLOW: ctest label soak).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"
#include "text/document.h"
#include "text/office/office_package.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class LibreOfficeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v soffice >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "LibreOffice (soffice) is not installed";
    }
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
    const absl::StatusOr<OfficePackage> package =
        OfficePackage::Open(ReadFile(testing::TestDataDir() + "/office/report.odt"));
    if (absl::IsUnimplemented(package.status())) GTEST_SKIP() << package.status();
  }

  // Fixture `name` translated into dir_/`name`.
  std::string Translated(const std::string& name, DocumentFormat format) {
    absl::StatusOr<TextTranslation> t =
        testing::TranslateDocument(model_, ReadFile(testing::TestDataDir() + "/office/" + name),
                                   format, {splitter_.get(), &model_->tokenizer(), 256, {}, "de"});
    EXPECT_TRUE(t.ok()) << t.status();
    const std::string path = dir_.File(name);
    if (t.ok()) std::ofstream(path, std::ios::binary) << t->hypotheses.at(0).text;
    return path;
  }
  // LibreOffice's exit status converting `path` to `to` in dir_ (its own profile there).
  int Convert(const std::string& path, const std::string& to) {
    return std::system(absl::StrCat("soffice -env:UserInstallation=file://", dir_.File("profile"),
                                    " --headless --convert-to ", to, " --outdir ",
                                    dir_.path().string(), " ", path, " >/dev/null 2>&1")
                           .c_str());
  }
  std::string Plain(const std::string& text) {
    absl::StatusOr<TextTranslation> t =
        testing::TranslateDocument(model_, text, DocumentFormat::kPlainText,
                                   {splitter_.get(), &model_->tokenizer(), 256, {}, "de"});
    return t.ok() ? t->hypotheses.at(0).text : "";
  }

  testing::TempDir dir_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_F(LibreOfficeTest, ConvertsTheTranslatedFiles) {
  const std::string odt = Translated("report.odt", DocumentFormat::kOdt);
  const std::string odp = Translated("slides.odp", DocumentFormat::kOdp);
  ASSERT_EQ(Convert(odt, "pdf"), 0);
  EXPECT_GT(std::filesystem::file_size(dir_.File("report.pdf")), 0u);
  ASSERT_EQ(Convert(odp, "pdf"), 0);
  EXPECT_GT(std::filesystem::file_size(dir_.File("slides.pdf")), 0u);
  ASSERT_EQ(Convert(odt, "txt:Text"), 0);
  const std::string text = ReadFile(dir_.File("report.txt"));
  EXPECT_THAT(text, HasSubstr(Plain("The sun is shining. The birds are singing.")));
  EXPECT_THAT(text, HasSubstr(Plain("A cat is sleeping.")));

  const std::string docx = Translated("formatted.docx", DocumentFormat::kDocx);
  const std::string pptx = Translated("slides.pptx", DocumentFormat::kPptx);
  ASSERT_EQ(Convert(docx, "pdf"), 0);
  EXPECT_GT(std::filesystem::file_size(dir_.File("formatted.pdf")), 0u);
  ASSERT_EQ(Convert(pptx, "pdf"), 0);
  EXPECT_GT(std::filesystem::file_size(dir_.File("slides.pdf")), 0u);
  ASSERT_EQ(Convert(docx, "txt:Text"), 0);
  EXPECT_THAT(ReadFile(dir_.File("formatted.txt")), HasSubstr(Plain("A man is riding a bike.")));
}

// A document as LibreOffice writes it (its own styles, settings.xml, a thumbnail, revision-id
// spans) is translated too: LibreOffice opens the translation and its text export holds it, and
// every entry but the three parts is as it was.
TEST_F(LibreOfficeTest, TranslatesWhatLibreOfficeWrites) {
  std::filesystem::create_directory(dir_.File("saved"));
  ASSERT_EQ(
      std::system(absl::StrCat("soffice -env:UserInstallation=file://", dir_.File("profile"),
                               " --headless --convert-to odt --outdir ", dir_.File("saved"), " ",
                               testing::TestDataDir(), "/office/report.odt", " >/dev/null 2>&1")
                      .c_str()),
      0);
  const std::string saved = ReadFile(dir_.File("saved/report.odt"));
  absl::StatusOr<TextTranslation> t = testing::TranslateDocument(
      model_, saved, DocumentFormat::kOdt, {splitter_.get(), &model_->tokenizer(), 256, {}, "de"});
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string translated = t->hypotheses.at(0).text;
  absl::StatusOr<OfficePackage> before = OfficePackage::Open(saved);
  absl::StatusOr<OfficePackage> after = OfficePackage::Open(translated);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_TRUE(before->Has("settings.xml"));
  EXPECT_EQ(after->names(), before->names());
  for (const std::string& name : before->names()) {
    if (name == "content.xml" || name == "styles.xml" || name == "meta.xml") continue;
    EXPECT_EQ(*after->Read(name), *before->Read(name)) << name;
  }
  std::ofstream(dir_.File("translated.odt"), std::ios::binary) << translated;
  ASSERT_EQ(Convert(dir_.File("translated.odt"), "txt:Text"), 0);
  const std::string text = ReadFile(dir_.File("translated.txt"));
  EXPECT_THAT(text, HasSubstr(Plain("The sun is shining. The birds are singing.")));
  EXPECT_THAT(text, HasSubstr(Plain("A dog is running.")));
}

}  // namespace
}  // namespace mtserve
