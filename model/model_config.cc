#include "model/model_config.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "model/shortlist.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

using Json = nlohmann::json;

std::string JoinPath(const std::string& dir, absl::string_view file) {
  if (dir.empty()) return std::string(file);
  if (dir.back() == '/') return absl::StrCat(dir, file);
  return absl::StrCat(dir, "/", file);
}

// config.json and its siblings are a few kilobytes; this leaves room for any real one.
constexpr size_t kMaxConfigBytes = 16 << 20;

// Parses a JSON file whose top level must be an object.
absl::StatusOr<Json> ParseJsonObject(const ConfigFile& file) {
  MT_ASSIGN_OR_RETURN(Json json, ParseJson(file.text, file.path));
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": top level is ", DescribeJson(json), ", not a JSON object"));
  }
  return json;
}

// The file at `path`, or nullopt when there is none.
absl::StatusOr<std::optional<ConfigFile>> ReadOptionalFile(const std::string& path) {
  if (!PathExists(path)) return std::nullopt;
  MT_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  return ConfigFile{path, std::move(text)};
}

// Accessors for one file's object. Absent keys and explicit nulls are treated alike, because HF
// writes `null` for unset optional fields (e.g. "decoder_start_token_id": null).
class JsonFields {
 public:
  JsonFields(const std::string& path, const Json& json) : path_(path), json_(json) {}

  const std::string& path() const { return path_; }

  bool Has(absl::string_view key) const {
    auto it = json_.find(key);
    return it != json_.end() && !it->is_null();
  }

  const Json* Get(absl::string_view key) const {
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  absl::Status Error(absl::string_view key, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": key '", key, "' ", what));
  }

  absl::StatusOr<std::optional<int>> OptionalInt(absl::string_view key) const {
    const Json* value = Get(key);
    if (value == nullptr) return std::nullopt;
    return ToInt(key, *value);
  }

  absl::StatusOr<int> RequiredInt(absl::string_view key) const {
    if (!Has(key)) return Error(key, "is missing");
    return ToInt(key, *Get(key));
  }

  absl::StatusOr<std::optional<bool>> OptionalBool(absl::string_view key) const {
    const Json* value = Get(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean())
      return Error(key, absl::StrCat("must be a boolean, got ", DescribeJson(*value)));
    return value->get<bool>();
  }

  // nullptr when absent. (Returns a pointer rather than std::optional<std::string>, which trips
  // a GCC 12 -Wmaybe-uninitialized false positive.)
  absl::StatusOr<const std::string*> OptionalString(absl::string_view key) const {
    const Json* value = Get(key);
    if (value == nullptr) return nullptr;
    if (!value->is_string()) {
      return Error(key, absl::StrCat("must be a string, got ", DescribeJson(*value)));
    }
    return &value->get_ref<const std::string&>();
  }

  absl::StatusOr<int> ToInt(absl::string_view key, const Json& value) const {
    if (!value.is_number_integer()) {
      return Error(key, absl::StrCat("must be an integer, got ", DescribeJson(value)));
    }
    if (value.is_number_unsigned()) {
      const auto v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
        return Error(key, absl::StrCat("is out of range: ", v));
      }
      return static_cast<int>(v);
    }
    const auto v = value.get<int64_t>();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return Error(key, absl::StrCat("is out of range: ", v));
    }
    return static_cast<int>(v);
  }

 private:
  const std::string& path_;
  const Json& json_;
};

absl::Status CheckPositive(const JsonFields& fields, absl::string_view key, int value) {
  if (value <= 0) return fields.Error(key, absl::StrCat("must be positive, got ", value));
  return absl::OkStatus();
}

absl::Status CheckTokenId(const JsonFields& fields, absl::string_view key, int id, int vocab_size) {
  if (id < 0 || id >= vocab_size) {
    return fields.Error(key, absl::StrCat("is ", id, ", outside [0, vocab_size=", vocab_size, ")"));
  }
  return absl::OkStatus();
}

// Rejects a boolean architecture flag when it has the value this engine does not implement.
absl::Status RejectFlag(const JsonFields& fields, absl::string_view key, bool unsupported_value,
                        absl::string_view why) {
  MT_ASSIGN_OR_RETURN(std::optional<bool> value, fields.OptionalBool(key));
  if (value.has_value() && *value == unsupported_value) {
    return fields.Error(key, absl::StrCat("is ", unsupported_value ? "true" : "false",
                                          ", which is not supported (", why, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Activation> ParseActivation(const JsonFields& fields) {
  constexpr absl::string_view kKey = "activation_function";
  MT_ASSIGN_OR_RETURN(const std::string* name, fields.OptionalString(kKey));
  // MarianConfig's default activation is swish.
  if (name == nullptr) return Activation::kSwish;
  if (*name == "swish" || *name == "silu") return Activation::kSwish;
  if (*name == "relu") return Activation::kRelu;
  if (*name == "gelu") return Activation::kGelu;
  return fields.Error(kKey, absl::StrCat("is \"", Excerpt(*name),
                                         "\", which is not supported (expected swish, silu, "
                                         "relu or gelu)"));
}

// The single-token entries of bad_words_ids; longer sequences are a generation-time constraint
// this engine does not implement, so they are skipped after type checking.
absl::StatusOr<std::optional<std::vector<int>>> ParseBadWordsIds(const JsonFields& fields,
                                                                 int vocab_size) {
  constexpr absl::string_view kKey = "bad_words_ids";
  const Json* value = fields.Get(kKey);
  if (value == nullptr) return std::nullopt;
  if (!value->is_array()) {
    return fields.Error(
        kKey, absl::StrCat("must be a list of lists of token ids, got ", DescribeJson(*value)));
  }
  std::vector<int> single_tokens;
  for (const Json& sequence : *value) {
    if (!sequence.is_array()) {
      return fields.Error(kKey, absl::StrCat("must be a list of lists of token ids, has element ",
                                             DescribeJson(sequence)));
    }
    for (const Json& id_json : sequence) {
      MT_ASSIGN_OR_RETURN(int id, fields.ToInt(kKey, id_json));
      MT_RETURN_IF_ERROR(CheckTokenId(fields, kKey, id, vocab_size));
    }
    if (sequence.size() == 1) single_tokens.push_back(sequence[0].get<int>());
  }
  return single_tokens;
}

// Settings that generation_config.json may override.
absl::Status ApplyGenerationFields(const JsonFields& fields, ModelConfig& config,
                                   std::optional<int>& decoder_start,
                                   std::optional<std::vector<int>>& bad_words) {
  MT_ASSIGN_OR_RETURN(std::optional<int> eos, fields.OptionalInt("eos_token_id"));
  if (eos.has_value()) {
    MT_RETURN_IF_ERROR(CheckTokenId(fields, "eos_token_id", *eos, config.vocab_size));
    config.eos_token_id = *eos;
  }
  MT_ASSIGN_OR_RETURN(std::optional<int> pad, fields.OptionalInt("pad_token_id"));
  if (pad.has_value()) {
    MT_RETURN_IF_ERROR(CheckTokenId(fields, "pad_token_id", *pad, config.vocab_size));
    config.pad_token_id = *pad;
  }
  MT_ASSIGN_OR_RETURN(std::optional<int> start, fields.OptionalInt("decoder_start_token_id"));
  if (start.has_value()) {
    MT_RETURN_IF_ERROR(CheckTokenId(fields, "decoder_start_token_id", *start, config.vocab_size));
    decoder_start = *start;
  }
  MT_ASSIGN_OR_RETURN(std::optional<int> max_length, fields.OptionalInt("max_length"));
  if (max_length.has_value()) {
    MT_RETURN_IF_ERROR(CheckPositive(fields, "max_length", *max_length));
    config.max_length = *max_length;
  }
  MT_ASSIGN_OR_RETURN(std::optional<int> num_beams, fields.OptionalInt("num_beams"));
  if (num_beams.has_value()) {
    MT_RETURN_IF_ERROR(CheckPositive(fields, "num_beams", *num_beams));
    config.num_beams = *num_beams;
  }
  MT_ASSIGN_OR_RETURN(std::optional<std::vector<int>> bad,
                      ParseBadWordsIds(fields, config.vocab_size));
  if (bad.has_value()) bad_words = std::move(bad);
  return absl::OkStatus();
}

absl::Status ParseConfigJson(const JsonFields& fields, ModelConfig& config,
                             std::optional<int>& decoder_start,
                             std::optional<std::vector<int>>& bad_words) {
  MT_ASSIGN_OR_RETURN(const std::string* model_type, fields.OptionalString("model_type"));
  if (model_type != nullptr && *model_type != "marian") {
    return fields.Error("model_type", absl::StrCat("is \"", Excerpt(*model_type),
                                                   "\", only \"marian\" is supported"));
  }
  MT_RETURN_IF_ERROR(RejectFlag(fields, "normalize_before", true, "pre-norm layers"));
  MT_RETURN_IF_ERROR(RejectFlag(fields, "normalize_embedding", true, "embedding layer norm"));
  MT_RETURN_IF_ERROR(RejectFlag(fields, "add_final_layer_norm", true, "final layer norm"));
  MT_RETURN_IF_ERROR(
      RejectFlag(fields, "static_position_embeddings", false, "learned position embeddings"));

  struct SizeField {
    absl::string_view key;
    int* value;
    int max = std::numeric_limits<int>::max();
  };
  // Sizes are bounded before anything is allocated from them (sinusoidal positions, for one, are
  // computed from max_position_embeddings at load). The bounds are far above every public
  // Marian and OPUS-MT checkpoint (the largest, "transformer-big" and tc-big models, have
  // d_model 1024, 6 to 12 layers of 16 heads, feed-forward 4096, vocabularies up to about 250k
  // and 1,024 positions), and low enough that a config alone cannot make a load allocate more
  // than a few hundred megabytes before the weights are checked.
  const SizeField sizes[] = {
      {"d_model", &config.d_model, 8192},
      {"encoder_layers", &config.encoder_layers, 64},
      {"decoder_layers", &config.decoder_layers, 64},
      {"encoder_attention_heads", &config.encoder_attention_heads, 256},
      {"decoder_attention_heads", &config.decoder_attention_heads, 256},
      {"encoder_ffn_dim", &config.encoder_ffn_dim, 65536},
      {"decoder_ffn_dim", &config.decoder_ffn_dim, 65536},
      {"vocab_size", &config.vocab_size, 1 << 20},
      {"max_position_embeddings", &config.max_position_embeddings, 8192},
  };
  for (const SizeField& size : sizes) {
    MT_ASSIGN_OR_RETURN(*size.value, fields.RequiredInt(size.key));
    MT_RETURN_IF_ERROR(CheckPositive(fields, size.key, *size.value));
    if (*size.value > size.max) {
      return fields.Error(size.key, absl::StrCat("is ", *size.value, "; the limit is ", size.max));
    }
  }
  // The sinusoidal position table is max_position_embeddings x d_model floats.
  constexpr int64_t kMaxPositionTableFloats = int64_t{64} << 20;  // 256 MiB.
  if (int64_t{config.max_position_embeddings} * config.d_model > kMaxPositionTableFloats) {
    return fields.Error("max_position_embeddings",
                        absl::StrCat("is ", config.max_position_embeddings, ", which with d_model ",
                                     config.d_model, " makes a position table over the limit of ",
                                     kMaxPositionTableFloats, " values"));
  }
  const SizeField heads_fields[] = {
      {"encoder_attention_heads", &config.encoder_attention_heads},
      {"decoder_attention_heads", &config.decoder_attention_heads},
  };
  for (const SizeField& heads : heads_fields) {
    if (config.d_model % *heads.value != 0) {
      return fields.Error(
          heads.key,
          absl::StrCat("is ", *heads.value, ", which does not divide d_model=", config.d_model));
    }
  }

  MT_ASSIGN_OR_RETURN(std::optional<bool> scale, fields.OptionalBool("scale_embedding"));
  config.scale_embedding = scale.value_or(false);
  MT_ASSIGN_OR_RETURN(config.activation, ParseActivation(fields));

  // eos and pad are required in config.json itself (generation_config.json is optional).
  for (absl::string_view key : {"eos_token_id", "pad_token_id"}) {
    if (!fields.Has(key)) return fields.Error(key, "is missing");
  }
  config.max_length = 512;
  config.num_beams = 1;
  return ApplyGenerationFields(fields, config, decoder_start, bad_words);
}

}  // namespace

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& dir) {
  const std::string config_path = JoinPath(dir, "config.json");
  MT_ASSIGN_OR_RETURN(std::string config_text, ReadRegularFile(config_path, kMaxConfigBytes));
  MT_ASSIGN_OR_RETURN(const std::optional<ConfigFile> generation,
                      ReadOptionalFile(JoinPath(dir, "generation_config.json")));
  MT_ASSIGN_OR_RETURN(const std::optional<ConfigFile> tokenizer,
                      ReadOptionalFile(JoinPath(dir, "tokenizer_config.json")));
  MT_ASSIGN_OR_RETURN(ModelConfig config,
                      ParseModelConfig({config_path, std::move(config_text)},
                                       generation.has_value() ? &*generation : nullptr,
                                       tokenizer.has_value() ? &*tokenizer : nullptr));
  for (const absl::string_view name : {Shortlist::kVocabularyMapFile, Shortlist::kLexicalFile}) {
    std::error_code error;
    if (std::filesystem::exists(JoinPath(dir, std::string(name)), error)) {
      config.lexical_shortlist = true;
    }
  }
  return config;
}

absl::StatusOr<ModelConfig> ParseModelConfig(const ConfigFile& config_file,
                                             const ConfigFile* generation,
                                             const ConfigFile* tokenizer) {
  ModelConfig config;
  std::optional<int> decoder_start;
  std::optional<std::vector<int>> bad_words;

  MT_ASSIGN_OR_RETURN(const Json config_json, ParseJsonObject(config_file));
  MT_RETURN_IF_ERROR(
      ParseConfigJson(JsonFields(config_file.path, config_json), config, decoder_start, bad_words));

  if (generation != nullptr) {
    MT_ASSIGN_OR_RETURN(const Json generation_json, ParseJsonObject(*generation));
    MT_RETURN_IF_ERROR(ApplyGenerationFields(JsonFields(generation->path, generation_json), config,
                                             decoder_start, bad_words));
  }

  // HF Marian falls back to pad as the decoder start token.
  config.decoder_start_token_id = decoder_start.value_or(config.pad_token_id);

  std::vector<int>& never = config.never_generated_ids;
  if (bad_words.has_value()) never = *bad_words;
  never.push_back(config.pad_token_id);
  std::sort(never.begin(), never.end());
  never.erase(std::unique(never.begin(), never.end()), never.end());

  if (tokenizer != nullptr) {
    MT_ASSIGN_OR_RETURN(const Json tokenizer_json, ParseJsonObject(*tokenizer));
    const JsonFields fields(tokenizer->path, tokenizer_json);
    MT_ASSIGN_OR_RETURN(const std::string* source, fields.OptionalString("source_lang"));
    MT_ASSIGN_OR_RETURN(const std::string* target, fields.OptionalString("target_lang"));
    if (source != nullptr) config.source_lang = *source;
    if (target != nullptr) config.target_lang = *target;
  }
  return config;
}

const char* ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return "relu";
    case Activation::kSwish:
      return "swish";
    case Activation::kGelu:
      return "gelu";
  }
  return "unknown";
}

std::string ArchitectureSummary(const ModelConfig& c) {
  return absl::StrCat("marian transformer: ", c.encoder_layers, "+", c.decoder_layers,
                      " layers, d_model ", c.d_model, ", ", c.encoder_attention_heads,
                      " heads, ffn ", c.encoder_ffn_dim, ", ", ActivationName(c.activation),
                      ", vocab ", c.vocab_size);
}

}  // namespace mtserve
