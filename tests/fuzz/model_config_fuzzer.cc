// A checkpoint's JSON file through ParseModelConfig, what LoadModelConfig runs on the files it
// read, in each of its three roles: as config.json, and as generation_config.json and
// tokenizer_config.json beside the embedded model's config.json. Any bytes give a config the
// engine can be built from, or an InvalidArgument.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/json_file.h"
#include "model/model_config.h"
#include "tests/test_lib/fuzz_check.h"

namespace {

using mtserve::ConfigFile;
using mtserve::ModelConfig;

const ConfigFile& EmbeddedConfigJson() {
  static const ConfigFile* const file = [] {
    const std::string path = MTSERVE_DEFAULT_MODEL_DIR "/config.json";
    absl::StatusOr<std::string> text = mtserve::ReadRegularFile(path, 1 << 20);
    FUZZ_CHECK(text.ok());
    return new ConfigFile{path, *std::move(text)};
  }();
  return *file;
}

// What the engine builds on: sizes within the loader's bounds, heads that divide d_model, special
// ids inside the vocabulary.
void CheckConfig(const absl::StatusOr<ModelConfig>& config) {
  if (!config.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(config.status()));
    return;
  }
  const ModelConfig& c = *config;
  for (int size : {c.d_model, c.encoder_layers, c.decoder_layers, c.encoder_attention_heads,
                   c.decoder_attention_heads, c.encoder_ffn_dim, c.decoder_ffn_dim, c.vocab_size,
                   c.max_position_embeddings, c.max_length, c.num_beams}) {
    FUZZ_CHECK(size > 0);
  }
  FUZZ_CHECK(c.d_model <= 8192 && c.vocab_size <= (1 << 20) && c.max_position_embeddings <= 8192);
  FUZZ_CHECK(c.d_model % c.encoder_attention_heads == 0);
  FUZZ_CHECK(c.d_model % c.decoder_attention_heads == 0);
  for (int id : {c.eos_token_id, c.pad_token_id, c.decoder_start_token_id}) {
    FUZZ_CHECK(id >= 0 && id < c.vocab_size);
  }
  for (size_t i = 0; i < c.never_generated_ids.size(); ++i) {
    FUZZ_CHECK(c.never_generated_ids[i] >= 0 && c.never_generated_ids[i] < c.vocab_size);
    if (i > 0) FUZZ_CHECK(c.never_generated_ids[i - 1] < c.never_generated_ids[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckConfig(mtserve::ParseModelConfig({"config.json", text}, nullptr, nullptr));
  const ConfigFile generation{"generation_config.json", text};
  CheckConfig(mtserve::ParseModelConfig(EmbeddedConfigJson(), &generation, nullptr));
  const ConfigFile tokenizer{"tokenizer_config.json", text};
  CheckConfig(mtserve::ParseModelConfig(EmbeddedConfigJson(), nullptr, &tokenizer));
  return 0;
}
