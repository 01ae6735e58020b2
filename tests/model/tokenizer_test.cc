// Vocab and Tokenizer against Hugging Face MarianTokenizer output (golden files) and on broken
// tokenizer directories.
#include "model/tokenizer.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/model_config.h"
#include "model/vocab.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

namespace fs = std::filesystem;
using ::mtserve::testing::ReadJsonLines;
using ::mtserve::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kDataDir = MTSERVE_TEST_DATA_DIR;
const std::string kDefaultModelDir = MTSERVE_DEFAULT_MODEL_DIR;

// Built by hand: these tests must not depend on LoadModelConfig.
ModelConfig Config(int eos, int pad) {
  ModelConfig config;
  config.eos_token_id = eos;
  config.pad_token_id = pad;
  config.vocab_size = pad + 1;  // Pad is the last id in every vocabulary here.
  return config;
}

std::string OpusMtDir(const std::string& model) { return kDataDir + "/opus-mt/" + model; }

ModelConfig OpusMtConfig(const std::string& model) {
  if (model == "en-mg") return Config(/*eos=*/0, /*pad=*/54687);
  if (model == "en-pt-tc-big") return Config(/*eos=*/44670, /*pad=*/54775);
  ADD_FAILURE() << "unknown model " << model;
  return ModelConfig();
}

std::unique_ptr<Tokenizer> LoadOrDie(const std::string& dir, const ModelConfig& config) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load(dir, config);
  if (!tokenizer.ok()) {
    ADD_FAILURE() << tokenizer.status();
    return nullptr;
  }
  return std::move(tokenizer).value();
}

// ---------------------------------------------------------------------------------------------
// Vocab

TEST(VocabTest, LoadsRealVocab) {
  const std::string path = OpusMtDir("en-pt-tc-big") + "/vocab.json";
  absl::StatusOr<Vocab> vocab = Vocab::Load(path);
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->size(), 54776);
  EXPECT_EQ(vocab->Find("</s>"), 44670);
  EXPECT_EQ(vocab->Find("<unk>"), 52024);
  EXPECT_EQ(vocab->Find("<pad>"), 54775);
  EXPECT_EQ(vocab->Find("no such piece"), std::nullopt);
  EXPECT_EQ(vocab->Piece(44670), "</s>");
  EXPECT_EQ(vocab->Piece(-1), "");
  EXPECT_EQ(vocab->Piece(vocab->size()), "");
}

TEST(VocabTest, SizeIsLargestIdPlusOneAndGapsHaveNoPiece) {
  TempDir dir;
  dir.Write("vocab.json", R"({"a": 0, "b": 5, "▁c": 2})");
  absl::StatusOr<Vocab> vocab = Vocab::Load(dir.File("vocab.json"));
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->size(), 6);
  EXPECT_EQ(vocab->Piece(5), "b");
  EXPECT_EQ(vocab->Piece(2), "▁c");
  EXPECT_EQ(vocab->Piece(3), "");
  EXPECT_EQ(vocab->Find("▁c"), 2);
}

TEST(VocabTest, EmptyObjectIsEmptyVocab) {
  TempDir dir;
  dir.Write("vocab.json", "{}");
  absl::StatusOr<Vocab> vocab = Vocab::Load(dir.File("vocab.json"));
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->size(), 0);
  EXPECT_EQ(vocab->Piece(0), "");
}

TEST(VocabTest, MissingFileIsNotFound) {
  TempDir dir;
  absl::StatusOr<Vocab> vocab = Vocab::Load(dir.File("vocab.json"));
  EXPECT_EQ(vocab.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(vocab.status().message(), HasSubstr(dir.File("vocab.json")));
}

TEST(VocabTest, RejectsMalformedFiles) {
  const std::map<std::string, std::string> cases = {
      {"invalid json", R"({"a": 0,)"},
      {"not an object", "[0, 1, 2]"},
      {"string id", R"({"a": "0"})"},
      {"float id", R"({"a": 1.5})"},
      {"null id", R"({"a": null})"},
      {"negative id", R"({"a": 0, "b": -1})"},
      {"huge id", R"({"a": 0, "b": 99999999999})"},
      {"duplicate id", R"({"a": 0, "b": 1, "c": 1})"},
  };
  for (const auto& [name, contents] : cases) {
    SCOPED_TRACE(name);
    TempDir dir;
    dir.Write("vocab.json", contents);
    absl::StatusOr<Vocab> vocab = Vocab::Load(dir.File("vocab.json"));
    EXPECT_EQ(vocab.status().code(), absl::StatusCode::kInvalidArgument) << vocab.status();
    EXPECT_THAT(vocab.status().message(), HasSubstr(dir.File("vocab.json")));
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer on real OPUS-MT tokenizer files

TEST(TokenizerTest, MatchesHuggingFaceOnOpusMtGolden) {
  std::map<std::string, std::unique_ptr<Tokenizer>> tokenizers;
  const std::vector<nlohmann::json> lines =
      ReadJsonLines(kDataDir + "/golden/opus-mt-tokenization.jsonl");
  ASSERT_EQ(lines.size(), 112u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& line = lines[i];
    const std::string model = line.at("model");
    const std::string text = line.at("text");
    SCOPED_TRACE(::testing::Message()
                 << "line " << i << " model " << model << " text '" << text << "'");
    std::unique_ptr<Tokenizer>& tokenizer = tokenizers[model];
    if (tokenizer == nullptr) tokenizer = LoadOrDie(OpusMtDir(model), OpusMtConfig(model));
    ASSERT_NE(tokenizer, nullptr);

    EXPECT_EQ(tokenizer->SourcePieces(text),
              line.at("source_pieces").get<std::vector<std::string>>());
    EXPECT_EQ(tokenizer->EncodeSource(text), line.at("source_ids").get<std::vector<int>>());
    const std::vector<int> target_ids = line.at("target_ids").get<std::vector<int>>();
    EXPECT_EQ(tokenizer->EncodeTarget(text), target_ids);
    EXPECT_EQ(tokenizer->DecodeTarget(target_ids), line.at("target_decoded").get<std::string>());
  }
  EXPECT_EQ(tokenizers.size(), 2u);
}

TEST(TokenizerTest, SpecialIdsComeFromConfigAndVocab) {
  std::unique_ptr<Tokenizer> tokenizer =
      LoadOrDie(OpusMtDir("en-pt-tc-big"), OpusMtConfig("en-pt-tc-big"));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->eos_id(), 44670);
  EXPECT_EQ(tokenizer->pad_id(), 54775);
  EXPECT_EQ(tokenizer->unk_id(), 52024);
}

TEST(TokenizerTest, EmptyTextIsJustEos) {
  for (const std::string model : {"en-mg", "en-pt-tc-big"}) {
    SCOPED_TRACE(model);
    std::unique_ptr<Tokenizer> tokenizer = LoadOrDie(OpusMtDir(model), OpusMtConfig(model));
    ASSERT_NE(tokenizer, nullptr);
    const int eos = OpusMtConfig(model).eos_token_id;
    EXPECT_THAT(tokenizer->EncodeSource(""), ElementsAre(eos));
    EXPECT_THAT(tokenizer->EncodeTarget(""), ElementsAre(eos));
    EXPECT_THAT(tokenizer->SourcePieces(""), IsEmpty());
    EXPECT_EQ(tokenizer->DecodeTarget({eos}), "");
  }
}

TEST(TokenizerTest, KeepsSupportedLanguageCodeAsOneToken) {
  std::unique_ptr<Tokenizer> tokenizer =
      LoadOrDie(OpusMtDir("en-pt-tc-big"), OpusMtConfig("en-pt-tc-big"));
  ASSERT_NE(tokenizer, nullptr);
  const std::optional<int> por = tokenizer->vocab().Find(">>por<<");
  ASSERT_TRUE(por.has_value());
  // As HF: the code is cut off before SentencePiece sees the rest of the text.
  EXPECT_EQ(tokenizer->SourcePieces(">>por<< Hello there"),
            (std::vector<std::string>{">>por<<", "▁Hello", "▁there"}));
  const std::vector<int> ids = tokenizer->EncodeSource(">>por<< Hello there");
  std::vector<int> expected = {*por};
  for (const int id : tokenizer->EncodeSource("Hello there")) expected.push_back(id);
  EXPECT_EQ(ids, expected);
  // Only a leading code is special.
  EXPECT_NE(tokenizer->SourcePieces("Hello >>por<<")[1], ">>por<<");
}

TEST(TokenizerTest, DecodeDropsSpecialAndUnknownIds) {
  std::unique_ptr<Tokenizer> tokenizer =
      LoadOrDie(OpusMtDir("en-pt-tc-big"), OpusMtConfig("en-pt-tc-big"));
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int> hello = tokenizer->EncodeTarget("Hello there");
  hello.pop_back();  // eos
  std::vector<int> noisy = {tokenizer->pad_id(), tokenizer->unk_id()};
  noisy.insert(noisy.end(), hello.begin(), hello.end());
  noisy.insert(noisy.end(),
               {-3, tokenizer->vocab().size(), 1 << 30, tokenizer->eos_id(), tokenizer->pad_id()});
  EXPECT_EQ(tokenizer->DecodeTarget(noisy), "Hello there");
  EXPECT_EQ(tokenizer->DecodeTarget({}), "");
}

// ---------------------------------------------------------------------------------------------
// Tokenizer of the embedded model against the engine's golden files

std::unique_ptr<Tokenizer> LoadEmbedded() {
  return LoadOrDie(kDefaultModelDir, Config(/*eos=*/0, /*pad=*/7707));
}

TEST(TokenizerTest, EmbeddedModelMatchesGreedyGolden) {
  std::unique_ptr<Tokenizer> tokenizer = LoadEmbedded();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<nlohmann::json> lines =
      ReadJsonLines(kDataDir + "/golden/greedy.test_2016_flickr.jsonl");
  ASSERT_EQ(lines.size(), 1000u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& line = lines[i];
    SCOPED_TRACE(::testing::Message() << "line " << i);
    EXPECT_EQ(tokenizer->EncodeSource(line.at("src").get<std::string>()),
              line.at("src_ids").get<std::vector<int>>());
    EXPECT_EQ(tokenizer->DecodeTarget(line.at("greedy_ids").get<std::vector<int>>()),
              line.at("greedy_text").get<std::string>());
  }
}

TEST(TokenizerTest, EmbeddedModelMatchesForcedGolden) {
  std::unique_ptr<Tokenizer> tokenizer = LoadEmbedded();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<nlohmann::json> lines = ReadJsonLines(kDataDir + "/golden/forced.val.jsonl");
  ASSERT_EQ(lines.size(), 300u);
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "line " << i);
    EXPECT_EQ(tokenizer->EncodeTarget(lines[i].at("tgt").get<std::string>()),
              lines[i].at("tgt_ids").get<std::vector<int>>());
    EXPECT_EQ(tokenizer->EncodeSource(lines[i].at("src").get<std::string>()),
              lines[i].at("src_ids").get<std::vector<int>>());
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer directories built in a temp dir: load errors and pieces SentencePiece does not know

// Copies en-mg's tokenizer files into `dir`, for a test to break.
void CopyEnMg(const TempDir& dir) {
  for (const char* name : {"source.spm", "target.spm", "vocab.json"}) {
    fs::copy_file(OpusMtDir("en-mg") + "/" + name, dir.path() / name);
  }
}

absl::Status LoadStatus(const TempDir& dir) {
  return Tokenizer::Load(dir.path().string(), OpusMtConfig("en-mg")).status();
}

TEST(TokenizerTest, DecodeTurnsMarkersOfUnknownPiecesIntoSpaces) {
  TempDir dir;
  CopyEnMg(dir);
  // A piece target.spm does not know comes out of SentencePiece verbatim, "▁" and all.
  dir.Write("vocab.json", R"({"</s>": 0, "<unk>": 1, "▁A": 2, "▁xyzzyqq": 3, "<pad>": 54687})");
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
      Tokenizer::Load(dir.path().string(), OpusMtConfig("en-mg"));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->DecodeTarget({2, 3, 0}), "A xyzzyqq");
  // Pieces missing from vocab.json become <unk>.
  EXPECT_EQ((*tokenizer)->EncodeSource("A world"), (std::vector<int>{2, 1, 0}));
}

TEST(TokenizerTest, CopiedFilesLoad) {
  TempDir dir;
  CopyEnMg(dir);
  const absl::Status status = LoadStatus(dir);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(TokenizerTest, LoadFailsMissingSourceSpm) {
  TempDir dir;
  CopyEnMg(dir);
  fs::remove(dir.path() / "source.spm");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("source.spm"));
}

TEST(TokenizerTest, LoadFailsCorruptTargetSpm) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("target.spm", std::string("\x01\xff garbage \x00\x13 bytes", 19));
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("target.spm"));
}

TEST(TokenizerTest, LoadFailsMissingVocab) {
  TempDir dir;
  CopyEnMg(dir);
  fs::remove(dir.path() / "vocab.json");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("vocab.json"));
}

TEST(TokenizerTest, LoadFailsVocabInvalidJson) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("vocab.json", R"({"<unk>": 1, "</s>": )");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("vocab.json"));
}

TEST(TokenizerTest, LoadFailsVocabDuplicateIds) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("vocab.json", R"({"</s>": 0, "<unk>": 1, "a": 2, "b": 2})");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("vocab.json"));
  EXPECT_THAT(status.message(), HasSubstr("id 2"));
}

TEST(TokenizerTest, LoadFailsVocabWithoutUnk) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("vocab.json", R"({"</s>": 0, "a": 1, "<pad>": 2})");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("vocab.json"));
  EXPECT_THAT(status.message(), HasSubstr("<unk>"));
}

TEST(TokenizerTest, LoadFailsEosOutsideVocab) {
  TempDir dir;
  CopyEnMg(dir);
  const absl::Status status =
      Tokenizer::Load(dir.path().string(), Config(/*eos=*/54688, /*pad=*/54687)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("eos_token_id"));
}

TEST(TokenizerTest, LoadFailsVocabNestedTooDeep) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("vocab.json", "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("nested deeper than 64 levels"));
}

TEST(TokenizerTest, LoadFailsVocabWithLongPiecesBriefly) {
  TempDir dir;
  CopyEnMg(dir);
  const std::string piece(1 << 20, 'p');
  dir.Write("vocab.json", "{\"" + piece + "\": \"" + std::string(1 << 20, 'v') + "\"}");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("is not an integer"));
  EXPECT_LT(status.message().size(), 500u);
}

// Every id indexes the embedding table: one past vocab_size broke every request that used the
// piece, and the texts batched with them.
TEST(TokenizerTest, LoadFailsIdAtOrAboveVocabSize) {
  TempDir dir;
  CopyEnMg(dir);
  dir.Write("vocab.json", R"({"</s>": 0, "<unk>": 1, "▁A": 54688, "<pad>": 54687})");
  const absl::Status status = LoadStatus(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("piece '▁A' has id 54688, outside the model's vocabulary (config.json "
                        "vocab_size 54688)"));
}

TEST(TokenizerTest, LoadFailsOnFifos) {
  for (const char* name : {"source.spm", "target.spm", "vocab.json"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    CopyEnMg(dir);
    const std::string path = dir.File(name);
    fs::remove(path);
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    const absl::Status status = LoadStatus(dir);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr(path + ": not a regular file"));
  }
}
}  // namespace
}  // namespace mtserve
