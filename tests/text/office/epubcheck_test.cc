// pandoc's EPUB 2 and 3 books (tests/data/office/) translated by the test model are valid EPUBs:
// epubcheck (the W3C's checker, Debian's package) finds no error or warning in them, as it finds
// none in the books themselves. epubcheck starts a Java VM and takes 10-20 s a book: this test is
// out of the quick tier (ctest label `soak`, tests/CMakeLists.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/translate_document.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

// epubcheck's report on the EPUB at `path`, and whether it exited 0.
std::pair<std::string, bool> Epubcheck(const std::string& path) {
  std::string out;
  FILE* pipe = popen(absl::StrCat("java -jar /usr/bin/epubcheck '", path, "' 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"", false};
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  return {out, pclose(pipe) == 0};
}

class EpubcheckTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

TEST_P(EpubcheckTest, TranslatedBookIsValid) {
  const std::string source_path = absl::StrCat(testing::TestDataDir(), "/office/", GetParam());
  std::ifstream in(source_path, std::ios::binary);
  std::stringstream source;
  source << in.rdbuf();
  ASSERT_FALSE(source.str().empty());
  // The book itself passes: what fails below is the translation's.
  const auto [before, before_ok] = Epubcheck(source_path);
  ASSERT_TRUE(before_ok) << before;
  ASSERT_OK_AND_ASSIGN(
      const std::string translated,
      testing::TranslateDocument(model_, *splitter_, source.str(), DocumentFormat::kEpub, "de"));
  const std::string path = absl::StrCat(::testing::TempDir(), "/epubcheck-", GetParam());
  std::ofstream(path, std::ios::binary) << translated;
  const auto [report, ok] = Epubcheck(path);
  EXPECT_TRUE(ok) << report;
  EXPECT_THAT(report, HasSubstr("No errors or warnings detected")) << report;
}

INSTANTIATE_TEST_SUITE_P(Pandoc, EpubcheckTest, ::testing::Values("book3.epub", "book2.epub"));

}  // namespace
}  // namespace mtserve
