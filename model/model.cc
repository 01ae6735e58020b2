#include "model/model.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/file_hash.h"
#include "base/status_macros.h"
#include "model/checkpoint.h"
#include "model/kernels/parallel_for.h"
#include "model/model_size.h"
#include "model/model_weights.h"
#include "model/ops/linear.h"
#include "model/ops/shape_buckets.h"
#include "model/shortlist.h"

namespace mtserve {
namespace {

// Hugging Face's nn.LayerNorm default, which Marian uses.
constexpr float kLayerNormEpsilon = 1e-5f;

class WeightReader {
 public:
  WeightReader(const Checkpoint& checkpoint, ComputeType compute_type)
      : checkpoint_(checkpoint), compute_type_(compute_type) {}

  absl::StatusOr<std::vector<float>> Read(const std::string& name) {
    return checkpoint_.Read(name);
  }

  // Concatenates the [out, in] weights and biases of several projections along `out`, scaling
  // the first one (the query: folding 1/sqrt(head_dim) into it saves a pass over the scores).
  absl::StatusOr<Linear> Projections(const std::string& prefix,
                                     const std::vector<std::string>& names, float first_scale,
                                     int in) {
    std::vector<float> weight, bias;
    for (size_t i = 0; i < names.size(); ++i) {
      MT_ASSIGN_OR_RETURN(std::vector<float> w, Read(absl::StrCat(prefix, names[i], ".weight")));
      MT_ASSIGN_OR_RETURN(std::vector<float> b, Read(absl::StrCat(prefix, names[i], ".bias")));
      const float scale = i == 0 ? first_scale : 1.f;
      for (float& v : w) v *= scale;
      for (float& v : b) v *= scale;
      weight.insert(weight.end(), w.begin(), w.end());
      bias.insert(bias.end(), b.begin(), b.end());
    }
    return Linear(weight, bias, in, static_cast<int>(bias.size()), compute_type_);
  }

  absl::StatusOr<Linear> Dense(const std::string& name, int in) {
    return Projections(name, {""}, 1.f, in);
  }

  absl::StatusOr<LayerNorm> Norm(const std::string& name) {
    MT_ASSIGN_OR_RETURN(std::vector<float> gamma, Read(name + ".weight"));
    MT_ASSIGN_OR_RETURN(std::vector<float> beta, Read(name + ".bias"));
    return LayerNorm(gamma, beta, kLayerNormEpsilon);
  }

 private:
  const Checkpoint& checkpoint_;
  const ComputeType compute_type_;
};

}  // namespace

Model::~Model() = default;

const std::vector<std::string>& Model::Files() {
  // The last two are the shortlists a directory may hold (shortlist.h).
  static_assert(Shortlist::kVocabularyMapFile == "vmap.txt" &&
                Shortlist::kLexicalFile == "lex.s2t");
  static const std::vector<std::string>* const files =
      new std::vector<std::string>{"config.json",
                                   "generation_config.json",
                                   "tokenizer_config.json",
                                   "source.spm",
                                   "target.spm",
                                   "vocab.json",
                                   "model.safetensors",
                                   "vmap.txt",
                                   "lex.s2t"};
  return *files;
}

int64_t Model::weight_bytes() const { return weights_->memory_bytes(); }

int64_t Model::tokenizer_bytes() const { return TokenizerBytes(tokenizer_->vocab().size()); }

int64_t Model::shortlist_bytes() const {
  return (shortlist_ == nullptr ? 0 : shortlist_->memory_bytes()) +
         (always_projection_ == nullptr ? 0 : always_projection_->memory_bytes());
}

absl::StatusOr<std::shared_ptr<const Model>> Model::Load(const std::string& dir,
                                                         ComputeType compute_type) {
  MT_RETURN_IF_ERROR(CheckComputeTypeSupported(compute_type));
  // On the calling thread alone: it is rarely a worker, and a team it made would slow the workers'.
  const ScopedSerialOpenMp serial;
  // What a checkpoint asks for is bounded (model_config.cc) and checked against the file, but the
  // machine may still not have the memory: that is an error for the caller, not an abort.
  try {
    return LoadFrom(dir, compute_type);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(dir, ": not enough memory to load the model"));
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError(absl::StrCat(dir, ": not enough memory to load the model"));
  }
}

absl::StatusOr<std::shared_ptr<const Model>> Model::LoadFrom(const std::string& dir,
                                                             ComputeType compute_type) {
  std::shared_ptr<Model> model(new Model());
  model->dir_ = dir;
  model->compute_type_ = compute_type;
  model->weights_ = std::make_unique<ModelWeights>();
  ModelWeights& weights = *model->weights_;
  MT_ASSIGN_OR_RETURN(model->config_, LoadModelConfig(dir));
  const ModelConfig& config = model->config_;
  MT_ASSIGN_OR_RETURN(model->tokenizer_, Tokenizer::Load(dir, config));
  MT_ASSIGN_OR_RETURN(model->shortlist_,
                      Shortlist::FindInModelDirectory(dir, model->tokenizer_->vocab()));
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> checkpoint, Checkpoint::Open(dir, config));
  WeightReader reader(*checkpoint, compute_type);
  const int d = config.d_model;

  {
    MT_ASSIGN_OR_RETURN(std::vector<float> weight,
                        reader.Read(checkpoint->output_projection_name()));
    MT_ASSIGN_OR_RETURN(std::vector<float> bias, checkpoint->ReadFinalLogitsBias());
    weights.output_projection = Linear(weight, bias, d, config.vocab_size, compute_type);
  }
  if (model->shortlist_ != nullptr) {
    const std::vector<int>& always = model->shortlist_->always();
    if (!always.empty() && always.size() <= kMaxShortlistShare * config.vocab_size) {
      model->always_projection_ =
          std::make_unique<Linear>(weights.output_projection.Outputs(always));
    }
  }
  // Embeddings tied to the output projection (every OPUS-MT checkpoint) read their rows from it.
  const float embedding_scale = config.scale_embedding ? std::sqrt(static_cast<float>(d)) : 1.f;
  auto embeddings = [&](const std::string& name) -> absl::StatusOr<std::shared_ptr<Embeddings>> {
    if (name == checkpoint->output_projection_name()) {
      return std::make_shared<Embeddings>(&weights.output_projection, embedding_scale,
                                          config.max_position_embeddings);
    }
    MT_ASSIGN_OR_RETURN(std::vector<float> table, reader.Read(name));
    return std::make_shared<Embeddings>(table, config.vocab_size, d, embedding_scale,
                                        config.max_position_embeddings);
  };
  MT_ASSIGN_OR_RETURN(weights.source_embeddings, embeddings(checkpoint->encoder_embedding_name()));
  if (checkpoint->decoder_embedding_name() == checkpoint->encoder_embedding_name()) {
    weights.target_embeddings = weights.source_embeddings;
  } else {
    MT_ASSIGN_OR_RETURN(weights.target_embeddings,
                        embeddings(checkpoint->decoder_embedding_name()));
  }

  const float encoder_query_scale =
      1.f / std::sqrt(static_cast<float>(d / config.encoder_attention_heads));
  for (int i = 0; i < config.encoder_layers; ++i) {
    const std::string p = absl::StrCat("model.encoder.layers.", i, ".");
    EncoderLayerWeights& layer = weights.encoder_layers.emplace_back();
    MT_ASSIGN_OR_RETURN(layer.qkv,
                        reader.Projections(p + "self_attn.", {"q_proj", "k_proj", "v_proj"},
                                           encoder_query_scale, d));
    MT_ASSIGN_OR_RETURN(layer.out_proj, reader.Dense(p + "self_attn.out_proj", d));
    MT_ASSIGN_OR_RETURN(layer.attention_norm, reader.Norm(p + "self_attn_layer_norm"));
    MT_ASSIGN_OR_RETURN(layer.fc1, reader.Dense(p + "fc1", d));
    MT_ASSIGN_OR_RETURN(layer.fc2, reader.Dense(p + "fc2", config.encoder_ffn_dim));
    MT_ASSIGN_OR_RETURN(layer.ffn_norm, reader.Norm(p + "final_layer_norm"));
  }
  const float decoder_query_scale =
      1.f / std::sqrt(static_cast<float>(d / config.decoder_attention_heads));
  for (int i = 0; i < config.decoder_layers; ++i) {
    const std::string p = absl::StrCat("model.decoder.layers.", i, ".");
    DecoderLayerWeights& layer = weights.decoder_layers.emplace_back();
    MT_ASSIGN_OR_RETURN(layer.self_qkv,
                        reader.Projections(p + "self_attn.", {"q_proj", "k_proj", "v_proj"},
                                           decoder_query_scale, d));
    MT_ASSIGN_OR_RETURN(layer.self_out_proj, reader.Dense(p + "self_attn.out_proj", d));
    MT_ASSIGN_OR_RETURN(layer.self_attention_norm, reader.Norm(p + "self_attn_layer_norm"));
    MT_ASSIGN_OR_RETURN(layer.cross_query, reader.Projections(p + "encoder_attn.", {"q_proj"},
                                                              decoder_query_scale, d));
    MT_ASSIGN_OR_RETURN(layer.cross_key_value,
                        reader.Projections(p + "encoder_attn.", {"k_proj", "v_proj"}, 1.f, d));
    MT_ASSIGN_OR_RETURN(layer.cross_out_proj, reader.Dense(p + "encoder_attn.out_proj", d));
    MT_ASSIGN_OR_RETURN(layer.cross_attention_norm, reader.Norm(p + "encoder_attn_layer_norm"));
    MT_ASSIGN_OR_RETURN(layer.fc1, reader.Dense(p + "fc1", d));
    MT_ASSIGN_OR_RETURN(layer.fc2, reader.Dense(p + "fc2", config.decoder_ffn_dim));
    MT_ASSIGN_OR_RETURN(layer.ffn_norm, reader.Norm(p + "final_layer_norm"));
  }
  weights.activation = ActivationEpilogue(config.activation);
  // Hashed after reading (the files are in the page cache then): a file that changed while the
  // load read it may give a hash of its new bytes, but the folder's change is seen by whoever
  // watches it, and the model replaced.
  MT_ASSIGN_OR_RETURN(model->content_fingerprint_, HashFiles(dir, Files()));
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace mtserve
