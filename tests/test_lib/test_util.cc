#include "tests/test_lib/test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "model/model_config.h"
#include "tools/random_checkpoint.h"

namespace mtserve::testing {

std::string TestDataDir() { return MTSERVE_TEST_DATA_DIR; }

std::string ReadOfficeFixture(const std::string& name) {
  std::ifstream in(std::string(MTSERVE_TEST_DATA_DIR) + "/office/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string ModelsDir() { return MTSERVE_MODELS_DIR; }

std::string LangidModelPath() { return MTSERVE_DEFAULT_LANGID_MODEL; }

std::string TestModelDir() {
  const char* dir = std::getenv("MTSERVE_TEST_MODEL_DIR");
  return dir != nullptr && *dir != '\0' ? dir : MTSERVE_DEFAULT_MODEL_DIR;
}

const absl::StatusOr<std::shared_ptr<const Model>>& TestModel() {
  static const auto* const model =
      new absl::StatusOr<std::shared_ptr<const Model>>(Model::Load(TestModelDir()));
  return *model;
}

const absl::StatusOr<std::shared_ptr<const Model>>& TestModel(ComputeType type) {
  using LoadedModel = absl::StatusOr<std::shared_ptr<const Model>>;
  switch (type) {
    case ComputeType::kFloat32:
      return TestModel();
    case ComputeType::kBFloat16: {
      // Each loaded on first use: a suite that needs only one type does not pay for the others.
      static const auto* const model = new LoadedModel(Model::Load(TestModelDir(), type));
      return *model;
    }
    case ComputeType::kInt8: {
      static const auto* const model = new LoadedModel(Model::Load(TestModelDir(), type));
      return *model;
    }
  }
  return TestModel();
}

std::string ComputeTypeTestName(const ::testing::TestParamInfo<ComputeType>& info) {
  return std::string(ComputeTypeName(info.param));
}

absl::Status WriteTinyModel(const std::string& dir, const std::vector<std::string>& pieces) {
  const int vocab = static_cast<int>(pieces.size());
  const int pad = vocab - 1;
  const nlohmann::json config = {{"model_type", "marian"},       {"d_model", 16},
                                 {"encoder_layers", 1},          {"decoder_layers", 1},
                                 {"encoder_attention_heads", 2}, {"decoder_attention_heads", 2},
                                 {"encoder_ffn_dim", 32},        {"decoder_ffn_dim", 32},
                                 {"vocab_size", vocab},          {"max_position_embeddings", 64},
                                 {"scale_embedding", true},      {"eos_token_id", 0},
                                 {"pad_token_id", pad},          {"decoder_start_token_id", pad},
                                 {"bad_words_ids", {{pad}}},     {"max_length", 20}};
  nlohmann::json vocab_json = nlohmann::json::object();
  for (int id = 0; id < vocab; ++id) vocab_json[pieces[id]] = id;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump(2);
  std::ofstream(dir + "/vocab.json") << vocab_json.dump(2);
  for (const char* spm : {"source.spm", "target.spm"}) {
    std::filesystem::copy_file(std::string(MTSERVE_DEFAULT_MODEL_DIR) + "/" + spm, dir + "/" + spm,
                               std::filesystem::copy_options::overwrite_existing);
  }
  MT_ASSIGN_OR_RETURN(const ModelConfig model_config, LoadModelConfig(dir));
  RandomCheckpointOptions options;
  options.seed = 1;
  options.init_std = 1.0;  // Large weights: a peaked distribution, not a uniform one.
  return WriteRandomSafetensors(model_config, options, dir + "/model.safetensors");
}

void LinkModelFiles(const std::string& model_dir, const std::filesystem::path& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(model_dir)) {
    std::filesystem::create_symlink(std::filesystem::absolute(entry.path()),
                                    dir / entry.path().filename());
  }
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
  path_ = FreshTempDir(
      absl::StrCat("mtserve_", info->test_suite_name(), "_", info->name(), "_", getpid()));
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::Write(const std::string& name, const std::string& contents) const {
  std::ofstream(path_ / name, std::ios::binary) << contents;
}

ModelConfig TinyConfig() {
  ModelConfig config;
  config.d_model = 8;
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.encoder_attention_heads = 2;
  config.decoder_attention_heads = 2;
  config.encoder_ffn_dim = 16;
  config.decoder_ffn_dim = 12;
  config.vocab_size = 10;
  config.max_position_embeddings = 32;
  config.eos_token_id = 0;
  config.pad_token_id = 9;
  config.decoder_start_token_id = 9;
  config.never_generated_ids = {9};
  config.max_length = 20;
  return config;
}

}  // namespace mtserve::testing
