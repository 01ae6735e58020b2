#include "tools/random_checkpoint.h"

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/checkpoint.h"
#include "model/decoding/decoding_options.h"
#include "model/float16.h"
#include "model/model.h"
#include "model/model_config.h"
#include "model/safetensors.h"
#include "model/translator.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/safetensors_writer.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

const std::string kDefaultModelDir = MTSERVE_DEFAULT_MODEL_DIR;

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every tensor MarianMTModel.save_pretrained writes for `config`, with its shape.
std::map<std::string, std::vector<int64_t>> ExpectedShapes(const ModelConfig& config) {
  const int64_t d = config.d_model;
  std::map<std::string, std::vector<int64_t>> shapes;
  shapes["model.shared.weight"] = {config.vocab_size, d};
  shapes["final_logits_bias"] = {1, config.vocab_size};
  auto linear = [&](const std::string& prefix, int64_t out, int64_t in) {
    shapes[prefix + ".weight"] = {out, in};
    shapes[prefix + ".bias"] = {out};
  };
  auto norm = [&](const std::string& prefix) {
    shapes[prefix + ".weight"] = {d};
    shapes[prefix + ".bias"] = {d};
  };
  auto attention = [&](const std::string& prefix) {
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      linear(absl::StrCat(prefix, ".", proj), d, d);
    }
  };
  for (int i = 0; i < config.encoder_layers; ++i) {
    const std::string layer = absl::StrCat("model.encoder.layers.", i);
    attention(layer + ".self_attn");
    norm(layer + ".self_attn_layer_norm");
    linear(layer + ".fc1", config.encoder_ffn_dim, d);
    linear(layer + ".fc2", d, config.encoder_ffn_dim);
    norm(layer + ".final_layer_norm");
  }
  for (int i = 0; i < config.decoder_layers; ++i) {
    const std::string layer = absl::StrCat("model.decoder.layers.", i);
    attention(layer + ".self_attn");
    norm(layer + ".self_attn_layer_norm");
    attention(layer + ".encoder_attn");
    norm(layer + ".encoder_attn_layer_norm");
    linear(layer + ".fc1", config.decoder_ffn_dim, d);
    linear(layer + ".fc2", d, config.decoder_ffn_dim);
    norm(layer + ".final_layer_norm");
  }
  return shapes;
}

// A fresh temp dir unique to this process: ctest runs each test of this file as its own process,
// possibly in parallel.
std::string FreshTempDir(const std::string& name) {
  return ::mtserve::testing::FreshTempDir(absl::StrCat(name, "_", getpid()));
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Moments {
  double mean = 0;
  double stddev = 0;
};

Moments ComputeMoments(const std::vector<float>& values) {
  double sum = 0, sum_sq = 0;
  for (float v : values) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(values.size());
  Moments m;
  m.mean = sum / n;
  m.stddev = std::sqrt(sum_sq / n - m.mean * m.mean);
  return m;
}

TEST(FloatToHalfTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float value = HalfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(value)))) << bits;
    } else {
      EXPECT_EQ(FloatToHalf(value), half) << bits;
    }
  }
}

TEST(FloatToHalfTest, TiesRoundToEven) {
  // Halfway between every pair of consecutive positive finite halves (exact in float).
  for (uint32_t bits = 0; bits < 0x7bffu; ++bits) {
    const double low = HalfToFloat(static_cast<uint16_t>(bits));
    const double high = HalfToFloat(static_cast<uint16_t>(bits + 1));
    const float middle = static_cast<float>((low + high) / 2);
    const uint16_t even = (bits & 1u) ? static_cast<uint16_t>(bits + 1) : bits;
    ASSERT_EQ(FloatToHalf(middle), even) << bits;
    ASSERT_EQ(FloatToHalf(-middle), even | 0x8000u) << bits;
    // Just off the middle rounds to the nearer neighbour.
    ASSERT_EQ(FloatToHalf(std::nextafter(middle, 0.0f)), bits) << bits;
    ASSERT_EQ(FloatToHalf(std::nextafter(middle, 1e9f)), bits + 1) << bits;
  }
}

TEST(FloatToHalfTest, SpecialValues) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000u);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000u);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bffu);
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7bffu);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00u);  // The tie goes to the even infinity.
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000u);  // Ties to even zero.
  EXPECT_EQ(FloatToHalf(std::nextafter(0x1p-25f, 1.0f)), 0x0001u);
  EXPECT_EQ(FloatToHalf(0x1p-24f), 0x0001u);
  EXPECT_EQ(FloatToHalf(1e-30f), 0x0000u);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(FloatToHalf(0x1p-14f), 0x0400u);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00u);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000u);
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x3ffu, 0u);
}

#if defined(__FLT16_MAX__)
// Against the compiler's own float -> _Float16 conversion over a spread of float bit patterns.
TEST(FloatToHalfTest, MatchesCompilerConversion) {
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 9973) {
    const float value = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(value)) continue;
    const uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(value));
    ASSERT_EQ(FloatToHalf(value), expected) << std::hex << bits;
  }
}
#endif

class RandomCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(FreshTempDir("random_checkpoint"));
    RandomCheckpointOptions options;
    options.seed = 7;
    status_ = new absl::Status(MakeRandomCheckpoint(kDefaultModelDir, *dir_, options));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete status_;
  }
  void SetUp() override { ASSERT_TRUE(status_->ok()) << *status_; }

  static std::string* dir_;
  static absl::Status* status_;
};
std::string* RandomCheckpointTest::dir_ = nullptr;
absl::Status* RandomCheckpointTest::status_ = nullptr;

TEST_F(RandomCheckpointTest, CopiesConfigAndTokenizerFiles) {
  for (const char* file :
       {"config.json", "source.spm", "target.spm", "vocab.json", "generation_config.json",
        "tokenizer_config.json", "special_tokens_map.json"}) {
    EXPECT_EQ(ReadFileBytes(absl::StrCat(*dir_, "/", file)),
              ReadFileBytes(absl::StrCat(kDefaultModelDir, "/", file)))
        << file;
  }
  EXPECT_FALSE(std::filesystem::exists(absl::StrCat(*dir_, "/MODEL_CARD.md")));
}

TEST_F(RandomCheckpointTest, LoadsAndTranslates) {
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(*dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  Translator translator(*model, 2);
  DecodingOptions options;
  options.max_length = 16;  // Random weights never produce </s>; keep the test fast.
  absl::StatusOr<std::vector<TranslationResult>> results =
      translator.Translate({"A man is walking."}, options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].hypotheses.size(), 1u);
}

TEST_F(RandomCheckpointTest, HeaderIsSortedPaddedAndContiguous) {
  const std::string bytes = ReadFileBytes(*dir_ + "/model.safetensors");
  ASSERT_GE(bytes.size(), 8u);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ(header_size % 8, 0u);
  const std::string header_text = bytes.substr(8, header_size);
  // The JSON, then fewer than 8 spaces of padding.
  const size_t json_end = header_text.find_last_not_of(' ');
  ASSERT_NE(json_end, std::string::npos);
  EXPECT_EQ(header_text[json_end], '}');
  EXPECT_LT(header_text.size() - json_end - 1, 8u);
  const nlohmann::ordered_json header = nlohmann::ordered_json::parse(header_text);
  EXPECT_EQ(header.at("__metadata__"), nlohmann::json({{"format", "pt"}}));
  std::string previous;
  uint64_t offset = 0;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    EXPECT_LT(previous, name);
    previous = name;
    EXPECT_EQ(entry.at("data_offsets")[0].get<uint64_t>(), offset) << name;
    offset = entry.at("data_offsets")[1].get<uint64_t>();
  }
  EXPECT_EQ(8 + header_size + offset, bytes.size());
}

TEST_F(RandomCheckpointTest, EveryTensorIsF16WithTheExpectedShape) {
  absl::StatusOr<ModelConfig> config = LoadModelConfig(*dir_);
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(*dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  std::map<std::string, std::vector<int64_t>> expected = ExpectedShapes(*config);
  ASSERT_EQ((*file)->tensors().size(), expected.size());
  for (const TensorInfo& tensor : (*file)->tensors()) {
    EXPECT_EQ(tensor.dtype, DType::kF16) << tensor.name;
    ASSERT_TRUE(expected.count(tensor.name)) << tensor.name;
    EXPECT_EQ(tensor.shape, expected[tensor.name]) << tensor.name;
  }
  // Same tensor set as the shipped model.
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> shipped =
      SafetensorsFile::Open(kDefaultModelDir + "/model.safetensors");
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  for (const TensorInfo& tensor : (*shipped)->tensors()) {
    const TensorInfo* ours = (*file)->Find(tensor.name);
    ASSERT_NE(ours, nullptr) << tensor.name;
    EXPECT_EQ(ours->shape, tensor.shape) << tensor.name;
  }
}

TEST_F(RandomCheckpointTest, ValuesFollowHuggingFaceInit) {
  absl::StatusOr<ModelConfig> config = LoadModelConfig(*dir_);
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<Checkpoint>> checkpoint = Checkpoint::Open(*dir_, *config);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  for (const TensorInfo& tensor : (*checkpoint)->file().tensors()) {
    absl::StatusOr<std::vector<float>> values = (*checkpoint)->Read(tensor.name);
    ASSERT_TRUE(values.ok()) << values.status();
    const bool layer_norm = tensor.name.find("layer_norm") != std::string::npos;
    if (tensor.name == "final_logits_bias" || EndsWith(tensor.name, ".bias")) {
      EXPECT_THAT(*values, ::testing::Each(0.0f)) << tensor.name;
    } else if (layer_norm) {
      EXPECT_THAT(*values, ::testing::Each(1.0f)) << tensor.name;
    } else {
      const Moments m = ComputeMoments(*values);
      EXPECT_NEAR(m.stddev, 0.02, 0.002) << tensor.name;
      EXPECT_NEAR(m.mean, 0.0, 0.002) << tensor.name;
    }
  }
  // The embedding's pad row is zero, as nn.Embedding(padding_idx=pad) initialises it.
  absl::StatusOr<std::vector<float>> shared = (*checkpoint)->Read("model.shared.weight");
  ASSERT_TRUE(shared.ok()) << shared.status();
  const int d = config->d_model;
  for (int i = 0; i < d; ++i) {
    EXPECT_EQ((*shared)[static_cast<size_t>(config->pad_token_id) * d + i], 0.0f);
  }
  EXPECT_NE((*shared)[0], 0.0f);
}

TEST_F(RandomCheckpointTest, SameSeedIsByteIdenticalAndOtherSeedsDiffer) {
  const std::string same = FreshTempDir("random_checkpoint_same");
  const std::string other = FreshTempDir("random_checkpoint_other");
  RandomCheckpointOptions options;
  options.seed = 7;
  ASSERT_TRUE(MakeRandomCheckpoint(kDefaultModelDir, same, options).ok());
  options.seed = 8;
  ASSERT_TRUE(MakeRandomCheckpoint(kDefaultModelDir, other, options).ok());
  const std::string original = ReadFileBytes(*dir_ + "/model.safetensors");
  const std::string again = ReadFileBytes(same + "/model.safetensors");
  const std::string different = ReadFileBytes(other + "/model.safetensors");
  EXPECT_TRUE(original == again);
  ASSERT_EQ(original.size(), different.size());
  EXPECT_FALSE(original == different);
  std::filesystem::remove_all(same);
  std::filesystem::remove_all(other);
}

TEST(RandomCheckpointF32Test, WritesF32ThatLoads) {
  const std::string dir = FreshTempDir("random_checkpoint_f32");
  RandomCheckpointOptions options;
  options.dtype = DType::kF32;
  ASSERT_TRUE(MakeRandomCheckpoint(kDefaultModelDir, dir, options).ok());
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(dir + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  for (const TensorInfo& tensor : (*file)->tensors()) {
    EXPECT_EQ(tensor.dtype, DType::kF32) << tensor.name;
  }
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(dir);
  EXPECT_TRUE(model.ok()) << model.status();
  std::filesystem::remove_all(dir);
}

// Each error test works in its own directory, removed afterwards.
class RandomCheckpointErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTempDir(absl::StrCat(
        "random_checkpoint_", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string root_;
};

TEST_F(RandomCheckpointErrorsTest, MissingTokenizerDir) {
  const absl::Status status = MakeRandomCheckpoint("/nonexistent/model", root_ + "/out", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/model"));
}

TEST_F(RandomCheckpointErrorsTest, MissingConfig) {
  std::filesystem::create_directories(root_ + "/empty");
  const absl::Status status = MakeRandomCheckpoint(root_ + "/empty", root_ + "/out", {});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("config.json"));
}

TEST_F(RandomCheckpointErrorsTest, MissingTokenizerFile) {
  std::filesystem::create_directories(root_ + "/partial");
  std::filesystem::copy_file(kDefaultModelDir + "/config.json", root_ + "/partial/config.json");
  const absl::Status status = MakeRandomCheckpoint(root_ + "/partial", root_ + "/out", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("source.spm"));
}

TEST_F(RandomCheckpointErrorsTest, UnwritableOutDir) {
  // A directory cannot be created under a regular file, even as root.
  const std::string blocker = root_ + "/file";
  std::ofstream(blocker) << "x";
  const absl::Status status = MakeRandomCheckpoint(kDefaultModelDir, blocker + "/out", {});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(blocker + "/out"));
}

TEST_F(RandomCheckpointErrorsTest, RefusesToWriteIntoTheTokenizerDir) {
  const absl::Status status = MakeRandomCheckpoint(kDefaultModelDir, kDefaultModelDir + "/", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tokenizer directory"));
}

}  // namespace
}  // namespace mtserve
