// The architecture and generation defaults of a Hugging Face MarianMT checkpoint, read from its
// config.json (and generation_config.json when present).
#ifndef MTSERVE_MODEL_MODEL_CONFIG_H_
#define MTSERVE_MODEL_MODEL_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtserve {

enum class Activation { kRelu, kSwish, kGelu };

struct ModelConfig {
  int d_model = 0;
  int encoder_layers = 0;
  int decoder_layers = 0;
  int encoder_attention_heads = 0;
  int decoder_attention_heads = 0;
  int encoder_ffn_dim = 0;
  int decoder_ffn_dim = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;
  bool scale_embedding = false;  // Embeddings are multiplied by sqrt(d_model).
  Activation activation = Activation::kSwish;

  // Special token ids: from config.json, overridden by generation_config.json where it has them.
  int eos_token_id = 0;
  int pad_token_id = 0;
  int decoder_start_token_id = 0;
  // Tokens that are never generated: the single-token entries of bad_words_ids, plus pad.
  std::vector<int> never_generated_ids;

  // Generation defaults, HF convention: max_length counts the decoder start token.
  int max_length = 0;
  int num_beams = 1;

  // From tokenizer_config.json when present (informational: ListModels reports them).
  std::string source_lang;
  std::string target_lang;

  // The directory holds a lexical shortlist file (model/shortlist.h; LoadModelConfig looks, and
  // Model::Load reads it): decodes with DecodingOptions::shortlist then hold its projection
  // (DecodeMemory counts it).
  bool lexical_shortlist = false;
};

// Reads `dir`/config.json and, if present, `dir`/generation_config.json and tokenizer_config.json,
// and notes whether a lexical shortlist file is there.
// Rejects what the engine does not implement (pre-norm layers, layernorm_embedding, a final layer
// norm, learned positions, a model_type other than "marian") with an error naming the file and key.
absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& dir);

// One of a checkpoint's JSON files: the path its errors name, and its bytes.
struct ConfigFile {
  std::string path;
  std::string text;
};

// What LoadModelConfig runs on the files it read: config.json, and generation_config.json and
// tokenizer_config.json when present (null when absent). Takes bytes so that the parsing can be
// fuzzed without files (tests/fuzz/).
absl::StatusOr<ModelConfig> ParseModelConfig(const ConfigFile& config, const ConfigFile* generation,
                                             const ConfigFile* tokenizer);

const char* ActivationName(Activation activation);

// One line, e.g. "marian transformer: 6+6 layers, d_model 512, 8 heads, ffn 2048, swish,
// vocab 58101".
std::string ArchitectureSummary(const ModelConfig& config);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_MODEL_CONFIG_H_
