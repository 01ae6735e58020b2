#include "model/safetensors.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/float16.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/safetensors_writer.h"

namespace mtserve {
namespace {

using ::mtserve::testing::BuildHeader;
using ::mtserve::testing::ConcatBytes;
using ::mtserve::testing::F32Bytes;
using ::mtserve::testing::FileBytes;
using ::mtserve::testing::FreshTempDir;
using ::mtserve::testing::ReferenceHalf;
using ::mtserve::testing::TestTensor;
using ::mtserve::testing::U16Bytes;
using ::mtserve::testing::WriteBytes;
using ::mtserve::testing::WriteSafetensors;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// Equal bit for bit, except that any NaN matches any NaN of the same sign.
void ExpectSameFloat(float actual, float expected, uint32_t input_bits) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "input 0x" << std::hex << input_bits;
    EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << "input 0x" << std::hex << input_bits;
  } else {
    EXPECT_EQ(Bits(actual), Bits(expected))
        << "input 0x" << std::hex << input_bits << ": got " << actual << ", want " << expected;
  }
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = FreshTempDir(std::string("safetensors_") + info->name());
    path_ = dir_ + "/model.safetensors";
  }

  // Writes a file whose header is `header_text` verbatim, and expects Open to fail with
  // InvalidArgument mentioning the path and every one of `needles`.
  void ExpectOpenError(const std::string& bytes, const std::vector<std::string>& needles) {
    WriteBytes(path_, bytes);
    auto file = SafetensorsFile::Open(path_);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument) << file.status();
    EXPECT_THAT(file.status().message(), HasSubstr(path_));
    for (const std::string& needle : needles) {
      EXPECT_THAT(file.status().message(), HasSubstr(needle));
    }
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SafetensorsTest, ReadsF32) {
  WriteSafetensors(path_, {{"b", "F32", {2, 3}, F32Bytes({1, -2, 3.5f, 0, 1e-30f, -7})},
                           {"a", "F32", {1}, F32Bytes({42})}});
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->path(), path_);
  ASSERT_EQ((*file)->tensors().size(), 2u);
  EXPECT_EQ((*file)->tensors()[0].name, "a");  // Sorted by name.
  EXPECT_EQ((*file)->Find("c"), nullptr);

  const TensorInfo* b = (*file)->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, DType::kF32);
  EXPECT_THAT(b->shape, ElementsAre(2, 3));
  EXPECT_EQ(b->NumElements(), 6);
  EXPECT_EQ(b->num_bytes, 24u);
  std::vector<float> values(6);
  ASSERT_TRUE((*file)->ReadAsFloat(*b, values.data()).ok());
  EXPECT_THAT(values, ElementsAre(1, -2, 3.5f, 0, 1e-30f, -7));
  // The pages were released; a second read must fault them back in from the file.
  std::vector<float> again(6);
  ASSERT_TRUE((*file)->ReadAsFloat(*b, again.data()).ok());
  EXPECT_EQ(values, again);
}

TEST_F(SafetensorsTest, ReadsF16HandPickedBitPatterns) {
  // 12 values, so that both the 8-wide fast path and the scalar tail see some of them.
  const std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x7C00, 0xFC00,
                                      0x0000, 0x8000, 0x03FF, 0x0400, 0x3555, 0x7E00};
  WriteSafetensors(path_, {{"h", "F16", {12}, U16Bytes(bits)}});
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  const TensorInfo* h = (*file)->Find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->dtype, DType::kF16);
  std::vector<float> v(12);
  ASSERT_TRUE((*file)->ReadAsFloat(*h, v.data()).ok());
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 65504.0f);
  EXPECT_EQ(v[3], 5.960464477539063e-08f);  // 2^-24, the smallest subnormal.
  EXPECT_EQ(v[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[5], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(Bits(v[6]), Bits(0.0f));
  EXPECT_EQ(Bits(v[7]), Bits(-0.0f));
  EXPECT_EQ(v[8], 6.097555160522461e-05f);  // 1023 * 2^-24, the largest subnormal.
  EXPECT_EQ(v[9], 6.103515625e-05f);        // 2^-14, the smallest normal.
  EXPECT_EQ(v[10], 0.333251953125f);        // 1.0101010101b * 2^-2.
  EXPECT_TRUE(std::isnan(v[11]));
}

TEST_F(SafetensorsTest, F16AllBitPatternsMatchDefinition) {
  // Every half value, plus a 5-element tail for the scalar remainder of the fast path.
  std::vector<uint16_t> bits(65536 + 5);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i * 40503u);
  for (uint32_t i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
  WriteSafetensors(path_, {{"pad", "U8", {3}, "xyz"},  // Misaligns the F16 data.
                           {"all", "F16", {static_cast<int64_t>(bits.size())}, U16Bytes(bits)}});
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<float> v(bits.size());
  ASSERT_TRUE((*file)->ReadAsFloat(*(*file)->Find("all"), v.data()).ok());
  for (size_t i = 0; i < bits.size(); ++i) {
    ExpectSameFloat(v[i], ReferenceHalf(bits[i]), bits[i]);
    if (::testing::Test::HasFailure()) break;
  }
  // The portable scalar conversion, whatever path ReadAsFloat took on this CPU.
  for (uint32_t b = 0; b < 65536; ++b) {
    ExpectSameFloat(HalfToFloat(static_cast<uint16_t>(b)), ReferenceHalf(static_cast<uint16_t>(b)),
                    b);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST_F(SafetensorsTest, ReadsBF16) {
  WriteSafetensors(path_, {{"bf", "BF16", {2, 2}, U16Bytes({0x3F80, 0xC040, 0x7F80, 0x0001})}});
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<float> v(4);
  ASSERT_TRUE((*file)->ReadAsFloat(*(*file)->Find("bf"), v.data()).ok());
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -3.0f);
  EXPECT_EQ(v[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[3], std::ldexp(1.0f, -133));  // Smallest float subnormal with a nonzero top half.
}

TEST_F(SafetensorsTest, AcceptsMetadataEmptyTensorsAndAllDtypes) {
  std::vector<TestTensor> tensors = {
      {"empty", "F32", {0, 5}, ""},
      {"huge_empty", "F32", {int64_t{1} << 62, 0, int64_t{1} << 62}, ""},
      {"scalar", "F32", {}, F32Bytes({9})}};
  const std::vector<std::pair<std::string, int>> dtypes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"I16", 2}, {"U16", 2}, {"F16", 2}, {"BF16", 2},
      {"I32", 4},  {"U32", 4}, {"F32", 4}, {"F64", 8}, {"I64", 8}, {"U64", 8}};
  for (const auto& [dtype, size] : dtypes) {
    tensors.push_back({"t_" + dtype, dtype, {3}, std::string(3 * size, '\1')});
  }
  nlohmann::json header = BuildHeader(tensors);
  header["__metadata__"] = {{"format", "pt"}};
  WriteBytes(path_, FileBytes(header.dump(), ConcatBytes(tensors)));
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->tensors().size(), tensors.size());
  EXPECT_EQ((*file)->Find("__metadata__"), nullptr);
  for (const auto& [dtype, size] : dtypes) {
    const TensorInfo* t = (*file)->Find("t_" + dtype);
    ASSERT_NE(t, nullptr) << dtype;
    EXPECT_STREQ(DTypeName(t->dtype), dtype.c_str());
    EXPECT_EQ(DTypeSize(t->dtype), static_cast<size_t>(size)) << dtype;
  }
  EXPECT_EQ((*file)->Find("empty")->NumElements(), 0);
  EXPECT_EQ((*file)->Find("huge_empty")->NumElements(), 0);
  EXPECT_EQ((*file)->Find("scalar")->NumElements(), 1);
  float scalar = 0;
  ASSERT_TRUE((*file)->ReadAsFloat(*(*file)->Find("scalar"), &scalar).ok());
  EXPECT_EQ(scalar, 9.0f);
}

TEST_F(SafetensorsTest, MissingFileIsNotFound) {
  auto file = SafetensorsFile::Open(path_);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(file.status().message(), HasSubstr(path_));
}

TEST_F(SafetensorsTest, RejectsFileShorterThanEightBytes) {
  ExpectOpenError("", {"8"});
  ExpectOpenError(std::string("\x02\0\0\0", 4), {"8"});
}

TEST_F(SafetensorsTest, RejectsHeaderLengthPastEndOfFile) {
  std::string bytes = FileBytes("{}", "");
  bytes[0] = 3;  // Claims a 3-byte header; only 2 follow.
  ExpectOpenError(bytes, {"header length 3"});
  bytes = FileBytes("{}", "");
  bytes[7] = '\x80';  // Huge: must not overflow the bounds check.
  ExpectOpenError(bytes, {"header length"});
}

TEST_F(SafetensorsTest, RejectsInvalidJsonHeader) {
  ExpectOpenError(FileBytes("{\"a\": {\"dtype\": ", "xxxx"), {"JSON"});
  ExpectOpenError(FileBytes("[1, 2]", ""), {"not a JSON object"});
}

TEST_F(SafetensorsTest, RejectsUnknownDtype) {
  const std::string header =
      R"({"weights.w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}})";
  ExpectOpenError(FileBytes(header, "ab"), {"'weights.w'", "F8_E4M3"});
}

TEST_F(SafetensorsTest, RejectsMalformedEntries) {
  ExpectOpenError(FileBytes(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", "abcd"),
                  {"'w'", "dtype"});
  ExpectOpenError(FileBytes(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", "abcd"),
                  {"'w'", "shape"});
  ExpectOpenError(
      FileBytes(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", "abcd"),
      {"'w'", "shape"});
  ExpectOpenError(
      FileBytes(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", "abcd"),
      {"'w'", "shape"});
  ExpectOpenError(FileBytes(R"({"w": {"dtype": "F32", "shape": [1]}})", "abcd"),
                  {"'w'", "data_offsets"});
  ExpectOpenError(
      FileBytes(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})", "abcd"),
      {"'w'", "data_offsets"});
  ExpectOpenError(
      FileBytes(R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}})", "abcd"),
      {"'w'", "data_offsets"});
  ExpectOpenError(FileBytes(R"({"w": [1, 2]})", "abcd"), {"'w'"});
  ExpectOpenError(FileBytes(R"({"__metadata__": {"format": 1}})", ""), {"__metadata__"});
}

TEST_F(SafetensorsTest, RejectsShapeOffsetSizeMismatch) {
  const std::string header =
      R"({"enc.fc1": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})";
  ExpectOpenError(FileBytes(header, std::string(24, '\0')), {"'enc.fc1'", "24", "20"});
}

TEST_F(SafetensorsTest, RejectsShapeWhoseSizeOverflows) {
  const std::string header =
      R"({"big": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})";
  ExpectOpenError(FileBytes(header, ""), {"'big'"});
}

TEST_F(SafetensorsTest, RejectsOffsetsPastEndOfData) {
  std::vector<TestTensor> tensors = {{"a", "F32", {2}, F32Bytes({1, 2})},
                                     {"tail", "F32", {4}, F32Bytes({1, 2, 3, 4})}};
  std::string data = ConcatBytes(tensors);
  data.resize(data.size() - 1);  // Truncated file.
  ExpectOpenError(FileBytes(BuildHeader(tensors).dump(), data), {"'tail'", "past the end"});
}

TEST_F(SafetensorsTest, RejectsOverlappingRanges) {
  const std::string header =
      R"({"first": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
      R"( "second": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})";
  ExpectOpenError(FileBytes(header, std::string(20, '\0')), {"'first'", "'second'", "overlap"});
  // Fully contained, and listed in the other order.
  const std::string contained =
      R"({"a_inner": {"dtype": "U8", "shape": [2], "data_offsets": [4, 6]},)"
      R"( "b_outer": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]}})";
  ExpectOpenError(FileBytes(contained, std::string(8, '\0')), {"'a_inner'", "'b_outer'"});
}

TEST_F(SafetensorsTest, ReadAsFloatRejectsNonFloatDtype) {
  WriteSafetensors(path_, {{"position_ids", "I64", {2}, std::string(16, '\0')}});
  auto file = SafetensorsFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<float> v(2);
  const absl::Status status = (*file)->ReadAsFloat(*(*file)->Find("position_ids"), v.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr(path_), HasSubstr("'position_ids'"), HasSubstr("I64")));
}

TEST_F(SafetensorsTest, RejectsDeeplyNestedHeader) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ExpectOpenError(FileBytes("{\"a\": " + deep + "}", ""), {"nested deeper than 64 levels"});
}

TEST_F(SafetensorsTest, LongNamesAndValuesAreCutInMessages) {
  const std::string long_name(1 << 20, 'n');
  WriteBytes(path_, FileBytes("{\"" + long_name + "\": {\"dtype\": \"" + std::string(1 << 20, 'd') +
                                  "\", \"shape\": [1], "
                                  "\"data_offsets\": [0, 4]}}",
                              "abcd"));
  auto file = SafetensorsFile::Open(path_);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("unknown dtype"));
  EXPECT_LT(file.status().message().size(), 500u);
}

TEST_F(SafetensorsTest, RejectsFifo) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0);
  auto file = SafetensorsFile::Open(path_);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr(path_ + ": not a regular file"));
}
}  // namespace
}  // namespace mtserve
