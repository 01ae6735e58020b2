// A model's memory: EstimateModelMemory (model_size.h, from the files) against
// Model::resident_bytes() (counted from the loaded model's allocations), both against a count of
// the Transformer's parameters from config.json, the tokenizer's rule against the heap a
// tokenizer's load allocates, and a large model's resident bytes against the process's growth.
// For the three trained models and a random checkpoint of OPUS-MT base's shape, in every type.
#include "model/model_size.h"

#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>

#include "base/process_memory.h"
#include "gtest/gtest.h"
#include "model/model.h"
#include "model/model_config.h"
#include "model/tokenizer.h"
#include "tests/test_lib/test_util.h"
#include "tools/random_checkpoint.h"

namespace mtserve {
namespace {

using ::mtserve::testing::ModelsDir;
using ::mtserve::testing::TempDir;
using ::mtserve::testing::TestDataDir;

// The layouts model_size.h encodes are oneDNN's for AVX-512 CPUs without AMX (whose bfloat16 and
// int8 kernels may block weights otherwise): there the estimate is exact; elsewhere it may differ
// by the padding, a few rows and columns of each layer.
bool EstimateIsExactHere() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         !__builtin_cpu_supports("amx-tile");
}

void ExpectEstimateMatches(const ModelBytes& estimate, const Model& model) {
  EXPECT_EQ(estimate.tokenizer, model.tokenizer_bytes());
  if (EstimateIsExactHere()) {
    EXPECT_EQ(estimate.weights, model.weight_bytes());
    EXPECT_EQ(estimate.total(), model.resident_bytes());
  } else {
    EXPECT_NEAR(estimate.weights, model.weight_bytes(), 0.02 * model.weight_bytes());
  }
}

// The weights' bytes by the Transformer's arithmetic, from the config: every linear layer's weight
// in the type's element size, float32 biases (and for int8 a float32 scale and column offset per
// output), float32 layer norms and sinusoidal positions; embeddings tied to the output
// projection, stored once. Padding and bookkeeping (a few rows of padding, tables of offsets)
// are not in it: the engine may hold a little more.
double ParameterBytes(const ModelConfig& c, ComputeType type) {
  const double d = c.d_model, v = c.vocab_size;
  const double fe = c.encoder_ffn_dim, fd = c.decoder_ffn_dim;
  // Encoder layer: q, k, v, out (d x d each), fc1 (d x f), fc2 (f x d); decoder layer: the same
  // with a second attention block (cross-attention); then the output projection (d x vocab).
  const double weights = c.encoder_layers * (4 * d * d + 2 * d * fe) +
                         c.decoder_layers * (8 * d * d + 2 * d * fd) + d * v;
  const double outputs =
      c.encoder_layers * (4 * d + fe + d) + c.decoder_layers * (8 * d + fd + d) + v;
  const double norms = c.encoder_layers * 2 * 2 * d + c.decoder_layers * 3 * 2 * d;
  const double positions = static_cast<double>(c.max_position_embeddings) * d;
  double weight_element = 4, per_output = 4;
  if (type == ComputeType::kBFloat16) weight_element = 2;
  if (type == ComputeType::kInt8) weight_element = 1, per_output = 3 * 4;
  return weights * weight_element + outputs * per_output + (norms + positions) * 4;
}

void ExpectParameterCount(const Model& model, ComputeType type) {
  const double expected = ParameterBytes(model.config(), type);
  EXPECT_GE(model.weight_bytes(), expected);
  EXPECT_LE(model.weight_bytes(), 1.02 * expected);
}

class TrainedModelSizeTest : public ::testing::TestWithParam<std::tuple<const char*, ComputeType>> {
 protected:
  void SetUp() override { MT_SKIP_IF_UNSUPPORTED(std::get<1>(GetParam())); }
  std::string dir() const { return ModelsDir() + "/" + std::get<0>(GetParam()); }
  ComputeType type() const { return std::get<1>(GetParam()); }
};

TEST_P(TrainedModelSizeTest, EstimateEqualsResidentBytes) {
  ASSERT_OK_AND_ASSIGN(const ModelBytes estimate, EstimateModelMemory(dir(), type()));
  ASSERT_OK_AND_ASSIGN(const int64_t total, EstimateModelBytes(dir(), type()));
  EXPECT_EQ(total, estimate.total());
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> model, Model::Load(dir(), type()));
  ExpectEstimateMatches(estimate, *model);
}

TEST_P(TrainedModelSizeTest, ResidentBytesMatchParameterCount) {
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> model, Model::Load(dir(), type()));
  ExpectParameterCount(*model, type());
}

INSTANTIATE_TEST_SUITE_P(Models, TrainedModelSizeTest,
                         ::testing::Combine(::testing::Values("multi30k-en-de", "multi30k-de-en",
                                                              "multi30k-fr-en"),
                                            ::testing::ValuesIn(testing::kAllComputeTypes)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name + "_" +
                                  std::string(ComputeTypeName(std::get<1>(info.param)));
                         });

// Halving every linear layer's element size halves most of the model: the types' estimates are
// ordered, and their differences are the linear weights' bytes (a property of the arithmetic,
// not of a file).
TEST(ModelSizeTest, TypesOrderedByElementSize) {
  const std::string dir = ModelsDir() + "/multi30k-en-de";
  ASSERT_OK_AND_ASSIGN(const int64_t f32, EstimateModelBytes(dir, ComputeType::kFloat32));
  ASSERT_OK_AND_ASSIGN(const int64_t bf16, EstimateModelBytes(dir, ComputeType::kBFloat16));
  ASSERT_OK_AND_ASSIGN(const int64_t i8, EstimateModelBytes(dir, ComputeType::kInt8));
  EXPECT_GT(f32, bf16);
  EXPECT_GT(bf16, i8);
  // 256 x 7744 (the vocabulary padded to 64) output projection plus 3 + 3 layers' weights.
  const int64_t linear_weights =
      256 * 7744 + 3 * (4 * 256 * 256 + 2 * 256 * 1024) + 3 * (8 * 256 * 256 + 2 * 256 * 1024);
  if (EstimateIsExactHere()) {
    EXPECT_EQ(f32 - bf16, 2 * linear_weights);
  }
}

// The tokenizer's rule against the heap Tokenizer::Load allocates (glibc's own count), for the
// trained models and two OPUS-MT tokenizers.
TEST(ModelSizeTest, TokenizerRuleMatchesItsHeap) {
  const std::string warm_up = ModelsDir() + "/multi30k-en-de";
  ASSERT_OK_AND_ASSIGN(const ModelConfig warm_config, LoadModelConfig(warm_up));
  // The first load also loads the SentencePiece module.
  ASSERT_TRUE(Tokenizer::Load(warm_up, warm_config).ok());
  for (const std::string& dir : {ModelsDir() + "/multi30k-en-de", ModelsDir() + "/multi30k-de-en",
                                 ModelsDir() + "/multi30k-fr-en", TestDataDir() + "/opus-mt/en-mg",
                                 TestDataDir() + "/opus-mt/en-pt-tc-big"}) {
    SCOPED_TRACE(dir);
    ASSERT_OK_AND_ASSIGN(const ModelConfig config, LoadModelConfig(dir));
    const struct mallinfo2 before = mallinfo2();
    ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(dir, config));
    const struct mallinfo2 after = mallinfo2();
    const double heap =
        static_cast<double>(after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
    EXPECT_NEAR(TokenizerBytes(tokenizer->vocab().size()), heap, 0.05 * heap);
  }
}

// A random checkpoint of OPUS-MT base's shape (6 + 6 layers, d_model 512, ffn 2048, a vocabulary
// of 54,688), written per test: about 150 MB.
class OpusBaseSizeTest : public ::testing::TestWithParam<ComputeType> {
 protected:
  void SetUp() override {
    MT_SKIP_IF_UNSUPPORTED(GetParam());
    dir_ = std::make_unique<TempDir>();
    RandomCheckpointOptions options;
    options.seed = 1;
    const absl::Status made =
        MakeRandomCheckpoint(TestDataDir() + "/opus-mt/en-mg", dir_->path().string(), options);
    ASSERT_TRUE(made.ok()) << made;
  }
  std::string dir() const { return dir_->path().string(); }

  std::unique_ptr<TempDir> dir_;
};

TEST_P(OpusBaseSizeTest, EstimateEqualsResidentAndParameterCount) {
  ASSERT_OK_AND_ASSIGN(const ModelBytes estimate, EstimateModelMemory(dir(), GetParam()));
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> model, Model::Load(dir(), GetParam()));
  ASSERT_EQ(model->config().d_model, 512);
  ASSERT_EQ(model->config().vocab_size, 54688);
  ExpectEstimateMatches(estimate, *model);
  ExpectParameterCount(*model, GetParam());
}

// What the process gains by loading the model is what resident_bytes() says, within 3 % (the
// allocator's overhead). A small model is loaded first, so that what a process pays once (the
// SentencePiece module, oneDNN's engine and threads) is not counted. The allocator is asked to give
// back what is free (malloc_trim) before and after the load: before, so that the load cannot reuse
// memory earlier tests of this process freed, unseen; after, because glibc keeps some of what the
// load's temporary float copies took (up to 11 % more for float32 on this shape: see
// docs/operations.md#memory), which is free for later allocations, not held by the model.
TEST_P(OpusBaseSizeTest, ResidentBytesMatchProcessGrowth) {
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> warm_up,
                       Model::Load(ModelsDir() + "/multi30k-en-de", GetParam()));
  malloc_trim(0);
  const int64_t before = ResidentAnonymousBytes();
  ASSERT_GT(before, 0);
  ASSERT_OK_AND_ASSIGN(const std::shared_ptr<const Model> model, Model::Load(dir(), GetParam()));
  malloc_trim(0);
  const double growth = static_cast<double>(ResidentAnonymousBytes() - before);
  EXPECT_NEAR(growth, model->resident_bytes(), 0.03 * model->resident_bytes());
  std::printf("resident %lld bytes, process growth %.0f bytes (%.3f)\n",
              static_cast<long long>(model->resident_bytes()), growth,
              growth / model->resident_bytes());
}

INSTANTIATE_TEST_SUITE_P(Types, OpusBaseSizeTest, ::testing::ValuesIn(testing::kAllComputeTypes),
                         testing::ComputeTypeTestName);

// Errors are the loader's, naming the file.
TEST(ModelSizeTest, MissingCheckpointIsTheLoadersError) {
  TempDir dir;
  for (const char* file : {"config.json", "source.spm", "target.spm", "vocab.json"}) {
    std::filesystem::copy_file(ModelsDir() + "/multi30k-en-de/" + file, dir.File(file));
  }
  const absl::StatusOr<int64_t> estimate = EstimateModelBytes(dir.path(), ComputeType::kInt8);
  ASSERT_FALSE(estimate.ok());
  EXPECT_NE(estimate.status().message().find(dir.File("model.safetensors")), std::string::npos)
      << estimate.status();
  EXPECT_EQ(estimate.status(), Model::Load(dir.path(), ComputeType::kInt8).status());
}

TEST(ModelSizeTest, CheckpointOfAnotherShapeIsTheLoadersError) {
  TempDir dir;
  ASSERT_TRUE(testing::WriteTinyModel(dir.path(), {"</s>", "<unk>", "a", "b", "<pad>"}).ok());
  // The config now says d_model 32; the checkpoint holds 16.
  std::ifstream in(dir.File("config.json"));
  std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"d_model\": 16";
  ASSERT_NE(config.find(from), std::string::npos);
  config.replace(config.find(from), from.size(), "\"d_model\": 32");
  dir.Write("config.json", config);
  const absl::StatusOr<int64_t> estimate = EstimateModelBytes(dir.path(), ComputeType::kFloat32);
  ASSERT_FALSE(estimate.ok());
  EXPECT_NE(estimate.status().message().find(dir.File("model.safetensors") + ": tensor '"),
            std::string::npos)
      << estimate.status();
  EXPECT_EQ(estimate.status(), Model::Load(dir.path()).status());
}

TEST(ModelSizeTest, MissingConfigNamesIt) {
  TempDir dir;
  const absl::StatusOr<int64_t> estimate = EstimateModelBytes(dir.path(), ComputeType::kFloat32);
  ASSERT_FALSE(estimate.ok());
  EXPECT_NE(estimate.status().message().find(dir.File("config.json")), std::string::npos)
      << estimate.status();
}

}  // namespace
}  // namespace mtserve
