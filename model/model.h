// A loaded translation model: config, tokenizer and weights packed for oneDNN. Immutable once
// loaded, so one Model serves any number of worker threads.
#ifndef MTSERVE_MODEL_MODEL_H_
#define MTSERVE_MODEL_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/layers/embeddings.h"
#include "model/model_config.h"
#include "model/ops/layer_norm.h"
#include "model/ops/linear.h"
#include "model/tokenizer.h"

namespace mtserve {

struct EncoderLayerWeights {
  Linear qkv;  // d → 3d: query (pre-scaled by 1/sqrt(head_dim)), key, value.
  Linear out_proj;
  LayerNorm attention_norm;
  Linear fc1;
  Linear fc2;
  LayerNorm ffn_norm;
};

struct DecoderLayerWeights {
  Linear self_qkv;  // d → 3d, query pre-scaled.
  Linear self_out_proj;
  LayerNorm self_attention_norm;
  Linear cross_query;      // d → d, pre-scaled.
  Linear cross_key_value;  // d → 2d, applied once to the encoder output.
  Linear cross_out_proj;
  LayerNorm cross_attention_norm;
  Linear fc1;
  Linear fc2;
  LayerNorm ffn_norm;
};

class Model {
 public:
  // Reads config, tokenizer and checkpoint from a Hugging Face MarianMT directory.
  static absl::StatusOr<std::shared_ptr<const Model>> Load(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The arithmetic the engine computes in.
  const char* compute_type() const { return "float32"; }

  const Embeddings& source_embeddings() const { return *source_embeddings_; }
  const Embeddings& target_embeddings() const { return *target_embeddings_; }
  const std::vector<EncoderLayerWeights>& encoder_layers() const { return encoder_layers_; }
  const std::vector<DecoderLayerWeights>& decoder_layers() const { return decoder_layers_; }
  // d → vocab, with final_logits_bias as its bias.
  const Linear& output_projection() const { return output_projection_; }
  Epilogue activation() const { return ActivationEpilogue(config_.activation); }

 private:
  Model() = default;
  std::string dir_;
  ModelConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::shared_ptr<Embeddings> source_embeddings_;
  std::shared_ptr<Embeddings> target_embeddings_;  // The same object when tied.
  std::vector<EncoderLayerWeights> encoder_layers_;
  std::vector<DecoderLayerWeights> decoder_layers_;
  Linear output_projection_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_MODEL_H_
