#include "tests/test_lib/test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace mtserve::testing {

std::string TestDataDir() { return MTSERVE_TEST_DATA_DIR; }

std::string TestModelDir() {
  const char* dir = std::getenv("MTSERVE_TEST_MODEL_DIR");
  return dir != nullptr && *dir != '\0' ? dir : MTSERVE_DEFAULT_MODEL_DIR;
}

const absl::StatusOr<std::shared_ptr<const Model>>& TestModel() {
  static const auto* const model =
      new absl::StatusOr<std::shared_ptr<const Model>>(Model::Load(TestModelDir()));
  return *model;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  for (const std::string& line : ReadLines(path)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

std::string FreshTempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TempDir::TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  path_ = FreshTempDir(absl::StrCat("mtserve_", info->test_suite_name(), "_", info->name(), "_",
                                    getpid()));
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::Write(const std::string& name, const std::string& contents) const {
  std::ofstream(path_ / name, std::ios::binary) << contents;
}

}  // namespace mtserve::testing
