#include "model/model_config.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/safetensors_writer.h"

namespace mtserve {
namespace {

using ::mtserve::testing::FreshTempDir;
using ::mtserve::testing::WriteBytes;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kDefaultModelDir = MTSERVE_DEFAULT_MODEL_DIR;
const std::string kOpusDir = std::string(MTSERVE_TEST_DATA_DIR) + "/opus-mt";

// Each test gets a fresh directory and a minimal valid config, which the file tests then break.
class ModelConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = FreshTempDir(std::string("model_config_") + info->name());
    config_ = {{"model_type", "marian"},
               {"d_model", 8},
               {"encoder_layers", 1},
               {"decoder_layers", 2},
               {"encoder_attention_heads", 2},
               {"decoder_attention_heads", 4},
               {"encoder_ffn_dim", 16},
               {"decoder_ffn_dim", 32},
               {"vocab_size", 10},
               {"max_position_embeddings", 64},
               {"eos_token_id", 0},
               {"pad_token_id", 9},
               {"decoder_start_token_id", 9}};
  }

  void Write(const std::string& file, const nlohmann::json& json) {
    WriteBytes(dir_ + "/" + file, json.dump());
  }

  absl::StatusOr<ModelConfig> Load() {
    Write("config.json", config_);
    return LoadModelConfig(dir_);
  }

  // Loads and expects InvalidArgument naming `file` (in `dir_`) and every one of `needles`.
  void ExpectError(const std::string& file, const std::vector<std::string>& needles) {
    auto config = Load();
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << config.status();
    EXPECT_THAT(config.status().message(), HasSubstr(dir_ + "/" + file));
    for (const std::string& needle : needles) {
      EXPECT_THAT(config.status().message(), HasSubstr(needle));
    }
  }

  std::string dir_;
  nlohmann::json config_;
};

TEST_F(ModelConfigTest, ParsesDefaultModel) {
  auto config = LoadModelConfig(kDefaultModelDir);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->d_model, 256);
  EXPECT_EQ(config->encoder_attention_heads, 4);
  EXPECT_EQ(config->decoder_attention_heads, 4);
  EXPECT_EQ(config->encoder_ffn_dim, 1024);
  EXPECT_EQ(config->decoder_ffn_dim, 1024);
  EXPECT_EQ(config->encoder_layers, 3);
  EXPECT_EQ(config->decoder_layers, 3);
  EXPECT_EQ(config->vocab_size, 7708);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_EQ(config->eos_token_id, 0);
  EXPECT_EQ(config->pad_token_id, 7707);
  EXPECT_EQ(config->decoder_start_token_id, 7707);
  EXPECT_EQ(config->activation, Activation::kSwish);
  EXPECT_STREQ(ActivationName(config->activation), "swish");
  EXPECT_TRUE(config->scale_embedding);
  EXPECT_EQ(config->max_length, 256);
  EXPECT_EQ(config->num_beams, 4);
  EXPECT_THAT(config->never_generated_ids, ElementsAre(7707));
  EXPECT_EQ(config->source_lang, "en");
  EXPECT_EQ(config->target_lang, "de");
}

TEST_F(ModelConfigTest, ParsesOpusMtEnMgWithoutGenerationConfig) {
  auto config = LoadModelConfig(kOpusDir + "/en-mg");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->d_model, 512);
  EXPECT_EQ(config->encoder_attention_heads, 8);
  EXPECT_EQ(config->decoder_attention_heads, 8);
  EXPECT_EQ(config->encoder_ffn_dim, 2048);
  EXPECT_EQ(config->decoder_ffn_dim, 2048);
  EXPECT_EQ(config->encoder_layers, 6);
  EXPECT_EQ(config->decoder_layers, 6);
  EXPECT_EQ(config->vocab_size, 54688);
  EXPECT_EQ(config->eos_token_id, 0);
  EXPECT_EQ(config->pad_token_id, 54687);
  EXPECT_EQ(config->decoder_start_token_id, 54687);
  EXPECT_EQ(config->activation, Activation::kSwish);
  EXPECT_EQ(config->max_length, 512);
  EXPECT_EQ(config->num_beams, 4);
  EXPECT_THAT(config->never_generated_ids, ElementsAre(54687));
  EXPECT_EQ(config->target_lang, "mg");
}

TEST_F(ModelConfigTest, ParsesOpusMtTcBigWithNonZeroEos) {
  auto config = LoadModelConfig(kOpusDir + "/en-pt-tc-big");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->eos_token_id, 44670);
  EXPECT_EQ(config->activation, Activation::kRelu);
  EXPECT_STREQ(ActivationName(config->activation), "relu");
  EXPECT_EQ(config->d_model, 1024);
  EXPECT_EQ(config->encoder_attention_heads, 16);
  EXPECT_EQ(config->decoder_attention_heads, 16);
  EXPECT_EQ(config->encoder_ffn_dim, 4096);
  EXPECT_EQ(config->decoder_ffn_dim, 4096);
  EXPECT_EQ(config->vocab_size, 54776);
  EXPECT_EQ(config->pad_token_id, 54775);
  EXPECT_EQ(config->decoder_start_token_id, 54775);
  EXPECT_EQ(config->max_position_embeddings, 1024);
  EXPECT_THAT(config->never_generated_ids, ElementsAre(54775));
  EXPECT_EQ(config->source_lang, "en");
  EXPECT_EQ(config->target_lang, "pt");
}

TEST_F(ModelConfigTest, MinimalConfigUsesDefaults) {
  auto config = Load();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->decoder_layers, 2);
  EXPECT_EQ(config->decoder_ffn_dim, 32);
  EXPECT_FALSE(config->scale_embedding);
  EXPECT_EQ(config->activation, Activation::kSwish);
  EXPECT_EQ(config->max_length, 512);
  EXPECT_EQ(config->num_beams, 1);
  EXPECT_THAT(config->never_generated_ids, ElementsAre(9));
  EXPECT_EQ(config->source_lang, "");
  EXPECT_EQ(config->target_lang, "");
}

TEST_F(ModelConfigTest, DecoderStartDefaultsToPad) {
  config_.erase("decoder_start_token_id");
  config_["pad_token_id"] = 7;
  auto config = Load();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->decoder_start_token_id, 7);
}

TEST_F(ModelConfigTest, ActivationNames) {
  const std::pair<const char*, Activation> cases[] = {{"swish", Activation::kSwish},
                                                      {"silu", Activation::kSwish},
                                                      {"relu", Activation::kRelu},
                                                      {"gelu", Activation::kGelu}};
  for (const auto& [name, activation] : cases) {
    config_["activation_function"] = name;
    auto config = Load();
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->activation, activation) << name;
  }
  EXPECT_STREQ(ActivationName(Activation::kGelu), "gelu");
  EXPECT_STREQ(ActivationName(Activation::kSwish), "swish");
}

TEST_F(ModelConfigTest, GenerationConfigOverrides) {
  config_["bad_words_ids"] = {{3}};
  config_["max_length"] = 100;
  Write("generation_config.json", {{"eos_token_id", 1},
                                   {"pad_token_id", 8},
                                   {"decoder_start_token_id", 2},
                                   {"max_length", 40},
                                   {"num_beams", 6},
                                   {"bad_words_ids", {{5}, {8}, {4, 6}, {5}}}});
  Write("tokenizer_config.json", {{"source_lang", "fr"}, {"target_lang", "it"}});
  auto config = Load();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->eos_token_id, 1);
  EXPECT_EQ(config->pad_token_id, 8);
  EXPECT_EQ(config->decoder_start_token_id, 2);
  EXPECT_EQ(config->max_length, 40);
  EXPECT_EQ(config->num_beams, 6);
  // Single-token entries of the overriding list plus pad, deduplicated; not 3 from config.json,
  // not the two-token sequence.
  EXPECT_THAT(config->never_generated_ids, ::testing::UnorderedElementsAre(5, 8));
  EXPECT_EQ(config->source_lang, "fr");
  EXPECT_EQ(config->target_lang, "it");
}

TEST_F(ModelConfigTest, BadWordsFromConfigJsonWhenNoGenerationConfig) {
  config_["bad_words_ids"] = {{3}, {9}};
  auto config = Load();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->never_generated_ids, ::testing::UnorderedElementsAre(3, 9));
  EXPECT_THAT(config->never_generated_ids, Contains(config->pad_token_id));
}

TEST_F(ModelConfigTest, MissingConfigIsNotFound) {
  auto config = LoadModelConfig(dir_);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr(dir_ + "/config.json"));
}

TEST_F(ModelConfigTest, RejectsInvalidJson) {
  WriteBytes(dir_ + "/config.json", "{\"d_model\": 8,");
  auto config = LoadModelConfig(dir_);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr(dir_ + "/config.json"), HasSubstr("JSON")));
}

TEST_F(ModelConfigTest, RejectsInvalidGenerationConfigJson) {
  WriteBytes(dir_ + "/generation_config.json", "[1, 2");
  ExpectError("generation_config.json", {"JSON"});
}

TEST_F(ModelConfigTest, RejectsMissingKey) {
  for (const char* key : {"d_model", "vocab_size", "encoder_ffn_dim", "decoder_attention_heads",
                          "max_position_embeddings", "eos_token_id", "pad_token_id"}) {
    SCOPED_TRACE(key);
    const nlohmann::json saved = config_;
    config_.erase(key);
    ExpectError("config.json", {key, "missing"});
    config_ = saved;
  }
}

TEST_F(ModelConfigTest, RejectsUnsupportedActivation) {
  config_["activation_function"] = "tanh";
  ExpectError("config.json", {"activation_function", "tanh"});
}

TEST_F(ModelConfigTest, RejectsNormalizeBefore) {
  config_["normalize_before"] = true;
  ExpectError("config.json", {"normalize_before"});
}

TEST_F(ModelConfigTest, RejectsUnsupportedArchitectureFlags) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, bool>>{{"normalize_embedding", true},
                                                 {"add_final_layer_norm", true},
                                                 {"static_position_embeddings", false}}) {
    SCOPED_TRACE(key);
    const nlohmann::json saved = config_;
    config_[key] = value;
    ExpectError("config.json", {key});
    config_ = saved;
  }
  config_["model_type"] = "bart";
  ExpectError("config.json", {"model_type", "bart"});
}

TEST_F(ModelConfigTest, RejectsDModelNotDivisibleByHeads) {
  config_["decoder_attention_heads"] = 3;
  ExpectError("config.json", {"decoder_attention_heads", "d_model"});
}

TEST_F(ModelConfigTest, RejectsNonPositiveSizes) {
  config_["encoder_layers"] = 0;
  ExpectError("config.json", {"encoder_layers"});
  config_["encoder_layers"] = 1;
  config_["vocab_size"] = -5;
  ExpectError("config.json", {"vocab_size"});
}

TEST_F(ModelConfigTest, RejectsIdsOutsideVocab) {
  config_["eos_token_id"] = 10;
  ExpectError("config.json", {"eos_token_id", "10"});
  config_["eos_token_id"] = 0;
  config_["bad_words_ids"] = {{-1}};
  ExpectError("config.json", {"bad_words_ids"});
  config_.erase("bad_words_ids");
  Write("generation_config.json", {{"decoder_start_token_id", 12}});
  ExpectError("generation_config.json", {"decoder_start_token_id"});
}

TEST_F(ModelConfigTest, RejectsWrongJsonTypes) {
  config_["d_model"] = "8";
  ExpectError("config.json", {"d_model"});
  config_["d_model"] = 8.5;
  ExpectError("config.json", {"d_model"});
  config_["d_model"] = 8;
  config_["scale_embedding"] = 1;
  ExpectError("config.json", {"scale_embedding"});
  config_["scale_embedding"] = true;
  config_["bad_words_ids"] = {1, 2};
  ExpectError("config.json", {"bad_words_ids"});
  config_.erase("bad_words_ids");
  Write("tokenizer_config.json", {{"target_lang", 3}});
  ExpectError("tokenizer_config.json", {"target_lang"});
}

// Nesting of any depth is refused before a value is built or printed: at 100,000 levels,
// printing the offending value into the message overflowed the stack.
TEST_F(ModelConfigTest, RejectsDeeplyNestedJsonInEveryFile) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string file :
       {"config.json", "generation_config.json", "tokenizer_config.json"}) {
    SCOPED_TRACE(file);
    const std::string text = "{\"d_model\": " + deep + "}";
    if (file == "config.json") {
      WriteBytes(dir_ + "/config.json", text);
      auto config = LoadModelConfig(dir_);
      ASSERT_FALSE(config.ok());
      EXPECT_THAT(config.status().message(), HasSubstr("nested deeper than 64 levels"));
    } else {
      WriteBytes(dir_ + "/" + file, text);
      ExpectError(file, {"nested deeper than 64 levels"});
      std::filesystem::remove(dir_ + "/" + file);
    }
  }
  // 64 levels are fine (then refused for what the value is, briefly).
  config_["d_model"] = nlohmann::json::parse(std::string(63, '[') + std::string(63, ']'));
  ExpectError("config.json", {"'d_model' must be an integer, got an array of 1 element"});
}

// A value of any size is described, never printed whole.
TEST_F(ModelConfigTest, LongValuesAreDescribedNotPrinted) {
  config_["d_model"] = std::string(1 << 20, 'x');
  config_["activation_function"] = "swish";
  auto config = Load();
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("must be an integer, got the string \"xxx"));
  EXPECT_LT(config.status().message().size(), 400u) << config.status().message().substr(0, 400);
  SetUp();
  config_["activation_function"] = std::string(1 << 20, 'y');
  config = Load();
  ASSERT_FALSE(config.ok());
  EXPECT_LT(config.status().message().size(), 400u);
  config_["activation_function"] = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) config_["activation_function"].push_back(i);
  config = Load();
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("an array of 100000 elements"));
  EXPECT_LT(config.status().message().size(), 400u);
}

// Every size-like value is bounded before anything is allocated from it (2147483647 positions
// aborted the load with std::bad_alloc; 1,000,000 held a gigabyte).
TEST_F(ModelConfigTest, SizesAreBounded) {
  const std::vector<std::pair<std::string, int>> too_large = {
      {"d_model", 8193 * 4},
      {"encoder_layers", 65},
      {"decoder_layers", 1000},
      {"encoder_attention_heads", 512},
      {"decoder_attention_heads", 512},
      {"encoder_ffn_dim", 65537},
      {"decoder_ffn_dim", 1 << 30},
      {"vocab_size", (1 << 20) + 1},
      {"max_position_embeddings", 2147483647},
      {"max_position_embeddings", 1000000},
  };
  for (const auto& [key, value] : too_large) {
    SCOPED_TRACE(key);
    SetUp();
    config_[key] = value;
    ExpectError("config.json", {"'" + key + "' is " + std::to_string(value), "the limit is"});
  }
  // Positions and width together: the position table is their product.
  SetUp();
  config_["d_model"] = 8192;
  config_["encoder_attention_heads"] = config_["decoder_attention_heads"] = 8;
  config_["max_position_embeddings"] = 8192;
  EXPECT_TRUE(Load().ok());
  config_["d_model"] = 8192;
  config_["max_position_embeddings"] = 8192;
  config_["encoder_ffn_dim"] = 16;
  EXPECT_TRUE(Load().ok());
}

// A FIFO (or a directory) where a file should be is refused at once: reading a FIFO waits for a
// writer, so the load hung forever.
TEST_F(ModelConfigTest, NonRegularFilesAreRefused) {
  for (const std::string file :
       {"config.json", "generation_config.json", "tokenizer_config.json"}) {
    SCOPED_TRACE(file);
    SetUp();
    Write("config.json", config_);
    const std::string path = dir_ + "/" + file;
    std::filesystem::remove(path);
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    auto config = LoadModelConfig(dir_);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << config.status();
    EXPECT_THAT(config.status().message(), HasSubstr(path + ": not a regular file"));
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    config = LoadModelConfig(dir_);
    ASSERT_FALSE(config.ok());
    EXPECT_THAT(config.status().message(), HasSubstr(path + ": not a regular file"));
    std::filesystem::remove(path);
  }
}
}  // namespace
}  // namespace mtserve
