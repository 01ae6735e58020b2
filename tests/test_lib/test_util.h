// Helpers shared by the engine's and the server's unit tests: where the test data and the model
// are, reading data files, temporary directories, and the model loaded once per process.
#ifndef MTSERVE_TESTS_TEST_LIB_TEST_UTIL_H_
#define MTSERVE_TESTS_TEST_LIB_TEST_UTIL_H_

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "model/compute_type.h"
#include "model/model.h"
#include "model/model_config.h"
#include "nlohmann/json.hpp"

// `lhs = value of expr`, or fails the test (ASSERT) with its status.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(MT_STATUS_CONCAT_(assert_statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();      \
  lhs = std::move(statusor).value()

// Skips the test, saying why, when this CPU cannot run `type` (only bfloat16 can be missing:
// CheckComputeTypeSupported). Call it first in a test or in SetUp().
#define MT_SKIP_IF_UNSUPPORTED(type)                                                   \
  do {                                                                                 \
    if (const absl::Status mt_supported_ = ::mtserve::CheckComputeTypeSupported(type); \
        !mt_supported_.ok()) {                                                         \
      GTEST_SKIP() << mt_supported_;                                                   \
    }                                                                                  \
  } while (false)

namespace mtserve {

// How GoogleTest prints a ComputeType parameter (found by argument-dependent lookup in the
// enum's namespace): its name, not "4-byte object <01-00 00-00>".
inline void PrintTo(ComputeType type, std::ostream* os) { *os << ComputeTypeName(type); }

}  // namespace mtserve

namespace mtserve::testing {

// tests/data in the source tree.
std::string TestDataDir();
// The bytes of tests/data/office/`name` (an office document fixture), empty if it cannot be read.
std::string ReadOfficeFixture(const std::string& name);
// models/ in the source tree: the embedded model and the other trained ones (multi30k-de-en,
// multi30k-fr-en).
std::string ModelsDir();
// The language identification model (models/langid/README.md).
std::string LangidModelPath();
// The model the tests translate with: $MTSERVE_TEST_MODEL_DIR if set (tests/e2e/scripts/
// broken_model_test.py points it at a broken model), else the embedded one.
std::string TestModelDir();

// That model, loaded on the first call and kept for the process.
//
// Call it from SetUp() or a test, and ASSERT that it is OK there: never ASSERT in
// SetUpTestSuite(). A fatal failure there makes googletest skip the suite's tests, and ctest
// counts a test whose output says "[  SKIPPED ]" as not run rather than failed, so a model that
// cannot load would leave the suite green.
const absl::StatusOr<std::shared_ptr<const Model>>& TestModel();

// The test model loaded in `type`, each type on its first call and kept for the process (the same
// object as TestModel() for float32). The same rules as TestModel() for where to ASSERT.
const absl::StatusOr<std::shared_ptr<const Model>>& TestModel(ComputeType type);

// Every compute type, for INSTANTIATE_TEST_SUITE_P(..., ::testing::ValuesIn(kAllComputeTypes),
// ComputeTypeTestName).
inline constexpr ComputeType kAllComputeTypes[] = {ComputeType::kFloat32, ComputeType::kBFloat16,
                                                   ComputeType::kInt8};
// "float32", "bfloat16", "int8": test names that say the type.
std::string ComputeTypeTestName(const ::testing::TestParamInfo<ComputeType>& info);

// A model shape small enough to reason about by hand: d_model 8, 2 heads, ffn 16 (encoder) / 12
// (decoder), 1 + 1 layers, vocab 10, 32 positions.
ModelConfig TinyConfig();

// Writes to `dir` a tiny random-weight model (1+1 layers, d_model 16, 2 heads) with the embedded
// model's SentencePiece files and the vocabulary `pieces` (piece i has id i; "</s>" must be first
// and "<pad>" last, and "<unk>" among them). For decoding edge cases a real model cannot reach,
// such as a vocabulary smaller than a beam's candidates.
absl::Status WriteTinyModel(const std::string& dir, const std::vector<std::string>& pieces);

// Symlinks into `dir` every file of the model directory `model_dir`, so that a test can add a file
// of its own beside them (a lexical shortlist) without copying the weights.
void LinkModelFiles(const std::string& model_dir, const std::filesystem::path& dir);

// The lines of a text file (fails the test if it cannot be read).
std::vector<std::string> ReadLines(const std::string& path);
// The non-empty lines of a JSON-lines file, parsed.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);

// A fresh empty directory `name` under the test temp dir.
std::string FreshTempDir(const std::string& name);

// A fresh directory named after the running test (and the process: ctest runs tests in
// parallel), removed when it goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  void Write(const std::string& name, const std::string& contents) const;

 private:
  std::filesystem::path path_;
};

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_TEST_UTIL_H_
