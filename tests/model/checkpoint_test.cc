#include "model/checkpoint.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/model_config.h"
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
using ::mtserve::testing::WriteBytes;
using ::mtserve::testing::WriteSafetensors;
using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;

const std::string kDefaultModelDir = MTSERVE_DEFAULT_MODEL_DIR;

// Decodes tensor `name` of a F16 safetensors file straight from its bytes, for comparison.
std::vector<float> DecodeF16FromFile(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | static_cast<uint8_t>(bytes[i]);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_size));
  const nlohmann::json& entry = header.at(name);
  EXPECT_EQ(entry.at("dtype"), "F16");
  const uint64_t begin = entry.at("data_offsets")[0];
  const uint64_t end = entry.at("data_offsets")[1];
  std::vector<float> values;
  for (uint64_t offset = 8 + header_size + begin; offset < 8 + header_size + end; offset += 2) {
    const uint16_t bits = static_cast<uint16_t>(static_cast<uint8_t>(bytes[offset]) |
                                                static_cast<uint8_t>(bytes[offset + 1]) << 8);
    values.push_back(ReferenceHalf(bits));
  }
  return values;
}

TestTensor Zeros(const std::string& name, std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return {name, "F32", std::move(shape), std::string(count * 4, '\0')};
}

// Every tensor of the tiny config, written out by hand from the HF Marian naming.
std::vector<TestTensor> TinyTensors() {
  std::vector<TestTensor> t;
  t.push_back(Zeros("model.shared.weight", {10, 8}));
  auto attention = [&](const std::string& prefix) {
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      t.push_back(Zeros(prefix + "." + proj + ".weight", {8, 8}));
      t.push_back(Zeros(prefix + "." + proj + ".bias", {8}));
    }
    t.push_back(Zeros(prefix + "_layer_norm.weight", {8}));
    t.push_back(Zeros(prefix + "_layer_norm.bias", {8}));
  };
  auto ffn = [&](const std::string& prefix, int64_t ffn_dim) {
    t.push_back(Zeros(prefix + ".fc1.weight", {ffn_dim, 8}));
    t.push_back(Zeros(prefix + ".fc1.bias", {ffn_dim}));
    t.push_back(Zeros(prefix + ".fc2.weight", {8, ffn_dim}));
    t.push_back(Zeros(prefix + ".fc2.bias", {8}));
    t.push_back(Zeros(prefix + ".final_layer_norm.weight", {8}));
    t.push_back(Zeros(prefix + ".final_layer_norm.bias", {8}));
  };
  attention("model.encoder.layers.0.self_attn");
  ffn("model.encoder.layers.0", 16);
  attention("model.decoder.layers.0.self_attn");
  attention("model.decoder.layers.0.encoder_attn");
  ffn("model.decoder.layers.0", 12);
  return t;
}

TestTensor* FindTensor(std::vector<TestTensor>& tensors, const std::string& name) {
  for (TestTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "test bug: no tensor " << name;
  return nullptr;
}

void RemoveTensor(std::vector<TestTensor>& tensors, const std::string& name) {
  std::erase_if(tensors, [&](const TestTensor& t) { return t.name == name; });
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = FreshTempDir(std::string("checkpoint_") + info->name());
    path_ = dir_ + "/model.safetensors";
    tensors_ = TinyTensors();
  }

  absl::StatusOr<std::unique_ptr<Checkpoint>> Open() {
    WriteSafetensors(path_, tensors_);
    return Checkpoint::Open(dir_, testing::TinyConfig());
  }

  // Expects InvalidArgument whose message names the file and contains `needles`.
  void ExpectError(const std::vector<std::string>& needles) {
    auto checkpoint = Open();
    ASSERT_FALSE(checkpoint.ok());
    EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument)
        << checkpoint.status();
    EXPECT_THAT(checkpoint.status().message(), HasSubstr(path_));
    for (const std::string& needle : needles) {
      EXPECT_THAT(checkpoint.status().message(), HasSubstr(needle));
    }
  }

  std::string dir_;
  std::string path_;
  std::vector<TestTensor> tensors_;
};

TEST_F(CheckpointTest, OpensDefaultModel) {
  auto config = LoadModelConfig(kDefaultModelDir);
  ASSERT_TRUE(config.ok()) << config.status();
  auto checkpoint = Checkpoint::Open(kDefaultModelDir, *config);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ((*checkpoint)->encoder_embedding_name(), "model.shared.weight");
  EXPECT_EQ((*checkpoint)->decoder_embedding_name(), "model.shared.weight");
  EXPECT_EQ((*checkpoint)->output_projection_name(), "model.shared.weight");

  const std::string path = kDefaultModelDir + "/model.safetensors";
  auto embedding = (*checkpoint)->Read("model.shared.weight");
  ASSERT_TRUE(embedding.ok()) << embedding.status();
  ASSERT_EQ(embedding->size(), 7708u * 256u);
  const std::vector<float> expected = DecodeF16FromFile(path, "model.shared.weight");
  ASSERT_EQ(expected.size(), embedding->size());
  EXPECT_TRUE(*embedding == expected);  // No NaN in real weights, so == is exact.

  auto fc1 = (*checkpoint)->Read("model.decoder.layers.2.fc1.weight");
  ASSERT_TRUE(fc1.ok()) << fc1.status();
  EXPECT_EQ(fc1->size(), 1024u * 256u);
  EXPECT_EQ(*fc1, DecodeF16FromFile(path, "model.decoder.layers.2.fc1.weight"));

  auto bias = (*checkpoint)->ReadFinalLogitsBias();
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(bias->size(), 7708u);
  EXPECT_EQ(*bias, DecodeF16FromFile(path, "final_logits_bias"));

  auto missing = (*checkpoint)->Read("model.encoder.layers.3.fc1.weight");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              AllOf(HasSubstr(path), HasSubstr("'model.encoder.layers.3.fc1.weight'")));
}

TEST_F(CheckpointTest, OpensCompleteTinyCheckpoint) {
  // Extra tensors that some exports include are ignored.
  tensors_.push_back(Zeros("model.encoder.embed_positions.weight", {32, 8}));
  FindTensor(tensors_, "model.encoder.layers.0.fc1.bias")->bytes =
      F32Bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  auto checkpoint = Open();
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ((*checkpoint)->encoder_embedding_name(), "model.shared.weight");
  EXPECT_EQ((*checkpoint)->decoder_embedding_name(), "model.shared.weight");
  EXPECT_EQ((*checkpoint)->output_projection_name(), "model.shared.weight");
  auto fc1_bias = (*checkpoint)->Read("model.encoder.layers.0.fc1.bias");
  ASSERT_TRUE(fc1_bias.ok()) << fc1_bias.status();
  EXPECT_THAT(*fc1_bias,
              ::testing::ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  // No final_logits_bias in the file: zeros.
  auto bias = (*checkpoint)->ReadFinalLogitsBias();
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(bias->size(), 10u);
  EXPECT_THAT(*bias, Each(0.0f));
}

TEST_F(CheckpointTest, ResolvesSeparateEmbeddingsAndLmHead) {
  RemoveTensor(tensors_, "model.shared.weight");
  tensors_.push_back(Zeros("model.encoder.embed_tokens.weight", {10, 8}));
  tensors_.push_back(Zeros("model.decoder.embed_tokens.weight", {10, 8}));
  tensors_.push_back(Zeros("lm_head.weight", {10, 8}));
  tensors_.push_back({"final_logits_bias", "BF16", {10}, std::string(20, '\0')});
  FindTensor(tensors_, "final_logits_bias")->bytes[19] = '\x3f';  // Last value 0x3F00 = 0.5.
  auto checkpoint = Open();
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ((*checkpoint)->encoder_embedding_name(), "model.encoder.embed_tokens.weight");
  EXPECT_EQ((*checkpoint)->decoder_embedding_name(), "model.decoder.embed_tokens.weight");
  EXPECT_EQ((*checkpoint)->output_projection_name(), "lm_head.weight");
  auto bias = (*checkpoint)->ReadFinalLogitsBias();
  ASSERT_TRUE(bias.ok()) << bias.status();
  ASSERT_EQ(bias->size(), 10u);
  EXPECT_EQ((*bias)[9], 0.5f);
  EXPECT_EQ((*bias)[0], 0.0f);
}

TEST_F(CheckpointTest, LmHeadAloneServesAllRoles) {
  RemoveTensor(tensors_, "model.shared.weight");
  tensors_.push_back(Zeros("lm_head.weight", {10, 8}));
  auto checkpoint = Open();
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ((*checkpoint)->encoder_embedding_name(), "lm_head.weight");
  EXPECT_EQ((*checkpoint)->decoder_embedding_name(), "lm_head.weight");
  EXPECT_EQ((*checkpoint)->output_projection_name(), "lm_head.weight");
}

TEST_F(CheckpointTest, MissingSafetensorsIsNotFound) {
  auto checkpoint = Checkpoint::Open(dir_, testing::TinyConfig());
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(checkpoint.status().message(), HasSubstr(path_));
}

TEST_F(CheckpointTest, RejectsMissingTensor) {
  RemoveTensor(tensors_, "model.decoder.layers.0.encoder_attn.v_proj.bias");
  ExpectError({"missing tensor 'model.decoder.layers.0.encoder_attn.v_proj.bias'"});
}

TEST_F(CheckpointTest, RejectsMissingEmbedding) {
  RemoveTensor(tensors_, "model.shared.weight");
  ExpectError({"model.shared.weight", "model.encoder.embed_tokens.weight",
               "model.decoder.embed_tokens.weight", "lm_head.weight"});
}

TEST_F(CheckpointTest, RejectsWrongShape) {
  *FindTensor(tensors_, "model.encoder.layers.0.fc1.weight") =
      Zeros("model.encoder.layers.0.fc1.weight", {16, 7});
  ExpectError({"tensor 'model.encoder.layers.0.fc1.weight' has shape [16, 7], expected [16, 8]"});
}

TEST_F(CheckpointTest, RejectsWrongDecoderFfnShape) {
  // The decoder uses its own ffn dim (12), not the encoder's (16).
  *FindTensor(tensors_, "model.decoder.layers.0.fc2.weight") =
      Zeros("model.decoder.layers.0.fc2.weight", {8, 16});
  ExpectError({"tensor 'model.decoder.layers.0.fc2.weight' has shape [8, 16], expected [8, 12]"});
}

TEST_F(CheckpointTest, RejectsWrongEmbeddingShape) {
  *FindTensor(tensors_, "model.shared.weight") = Zeros("model.shared.weight", {11, 8});
  ExpectError({"tensor 'model.shared.weight' has shape [11, 8], expected [10, 8]"});
}

TEST_F(CheckpointTest, RejectsWrongFinalLogitsBiasShape) {
  tensors_.push_back(Zeros("final_logits_bias", {2, 10}));
  ExpectError({"tensor 'final_logits_bias' has shape [2, 10], expected [1, 10]"});
}

TEST_F(CheckpointTest, RejectsIntegerDtype) {
  TestTensor* t = FindTensor(tensors_, "model.encoder.layers.0.self_attn.k_proj.bias");
  t->dtype = "I64";
  t->bytes = std::string(8 * 8, '\0');
  ExpectError(
      {"tensor 'model.encoder.layers.0.self_attn.k_proj.bias' has dtype I64, expected "
       "F32, F16 or BF16"});
}

TEST_F(CheckpointTest, RejectsTruncatedFile) {
  const std::string bytes = FileBytes(BuildHeader(tensors_).dump(), ConcatBytes(tensors_));
  WriteBytes(path_, bytes.substr(0, bytes.size() - 4));
  auto checkpoint = Checkpoint::Open(dir_, testing::TinyConfig());
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  // The last tensor in the layout is the one cut short.
  EXPECT_THAT(checkpoint.status().message(),
              AllOf(HasSubstr(path_), HasSubstr("'" + tensors_.back().name + "'")));
}

TEST_F(CheckpointTest, ReadRejectsUnknownName) {
  auto checkpoint = Open();
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  auto missing = (*checkpoint)->Read("model.encoder.layers.1.fc1.weight");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              AllOf(HasSubstr(path_), HasSubstr("'model.encoder.layers.1.fc1.weight'")));
}

// A NaN or infinite weight made every translation empty, answered OK.
TEST_F(CheckpointTest, ReadRejectsNonFiniteWeights) {
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity()}) {
    SCOPED_TRACE(bad);
    SetUp();
    const std::string name = "model.decoder.layers.0.fc2.bias";
    TestTensor* tensor = FindTensor(tensors_, name);
    ASSERT_NE(tensor, nullptr);
    std::vector<float> values(tensor->bytes.size() / 4, 0.5f);
    values[3] = bad;
    tensor->bytes = F32Bytes(values);
    auto checkpoint = Open();
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    auto read = (*checkpoint)->Read(name);
    ASSERT_FALSE(read.ok());
    EXPECT_THAT(read.status().message(),
                AllOf(HasSubstr(path_), HasSubstr("'" + name + "'"), HasSubstr("at index 3"),
                      HasSubstr("weights must be finite")));
    values[3] = std::numeric_limits<float>::max();  // Large but finite is a weight.
    tensor->bytes = F32Bytes(values);
    checkpoint = Open();
    ASSERT_TRUE(checkpoint.ok());
    EXPECT_TRUE((*checkpoint)->Read(name).ok());
  }
}
}  // namespace
}  // namespace mtserve
