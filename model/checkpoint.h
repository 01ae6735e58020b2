// The tensors of a MarianMT checkpoint, by role, checked against the config before use.
#ifndef MTSERVE_MODEL_CHECKPOINT_H_
#define MTSERVE_MODEL_CHECKPOINT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/model_config.h"
#include "model/safetensors.h"

namespace mtserve {

// One tensor a MarianMT checkpoint must hold, by its HF name and shape.
struct MarianTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// Every per-layer tensor the config implies (attention, feed-forward and layer-norm weights and
// biases of each encoder then decoder layer), in HF Marian naming, e.g.
// {"model.encoder.layers.0.fc1.weight", {encoder_ffn_dim, d_model}}. Excludes the embeddings and
// final_logits_bias. Linear weights are [out, in].
std::vector<MarianTensor> MarianLayerTensors(const ModelConfig& config);

class Checkpoint {
 public:
  // Opens `dir`/model.safetensors and checks, before any data is read, that every tensor the
  // config implies is present, floating point and of the right shape. Tied embeddings are found
  // under any of model.shared.weight, model.encoder.embed_tokens.weight,
  // model.decoder.embed_tokens.weight, lm_head.weight. final_logits_bias is optional (zeros).
  // Errors name the file, the tensor and what was expected, e.g.
  //   ".../model.safetensors: tensor 'model.encoder.layers.0.fc1.weight' has shape [1024, 255],
  //    expected [1024, 256]".
  static absl::StatusOr<std::unique_ptr<Checkpoint>> Open(const std::string& dir,
                                                          const ModelConfig& config);

  // HF names, e.g. "model.encoder.layers.0.self_attn.q_proj.weight". Returns the tensor converted
  // to float, row-major in the stored shape ([out, in] for linear weights).
  absl::StatusOr<std::vector<float>> Read(absl::string_view name) const;

  // The stored names that the source embedding, target embedding and output projection resolve
  // to (the same name when tied, as in every OPUS-MT checkpoint).
  const std::string& encoder_embedding_name() const { return encoder_embedding_; }
  const std::string& decoder_embedding_name() const { return decoder_embedding_; }
  const std::string& output_projection_name() const { return output_projection_; }
  // [vocab_size]; zeros when the checkpoint has no final_logits_bias.
  absl::StatusOr<std::vector<float>> ReadFinalLogitsBias() const;

  const SafetensorsFile& file() const { return *file_; }

 private:
  Checkpoint() = default;
  std::unique_ptr<SafetensorsFile> file_;
  int vocab_size_ = 0;
  std::string encoder_embedding_;
  std::string decoder_embedding_;
  std::string output_projection_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_CHECKPOINT_H_
