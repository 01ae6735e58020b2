// A loaded translation model: config, tokenizer, weights packed for oneDNN and the lexical
// shortlist its directory may hold. Immutable once loaded, so one Model serves any number of
// worker threads.
#ifndef MTSERVE_MODEL_MODEL_H_
#define MTSERVE_MODEL_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/compute_type.h"
#include "model/model_config.h"
#include "model/tokenizer.h"

namespace mtserve {

struct ModelWeights;  // model_weights.h: internal to the engine.
class Linear;         // ops/linear.h.
class Shortlist;      // shortlist.h.

class Model {
 public:
  // Reads config, tokenizer and checkpoint from a Hugging Face MarianMT directory, and packs the
  // linear layers' weights for `compute_type` (quantising them for int8, rounding them for
  // bfloat16; the float copy read from the checkpoint is freed layer by layer), and the shortlist
  // the directory holds (Shortlist::FindInModelDirectory: an invalid one fails the load).
  // FailedPrecondition when this CPU cannot run the type (CheckComputeTypeSupported).
  static absl::StatusOr<std::shared_ptr<const Model>> Load(
      const std::string& dir, ComputeType compute_type = ComputeType::kFloat32);

  const std::string& dir() const { return dir_; }
  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The arithmetic the linear layers compute in.
  ComputeType compute_type() const { return compute_type_; }
  // A hash of the files the load read (Files(): config, tokenizer, weights, shortlist), 32 hex
  // digits (base/file_hash.h): the same for identical files under any folder, another one when any
  // of them changed. With compute_type(), what decides the model's translations.
  const std::string& content_fingerprint() const { return content_fingerprint_; }
  // The files of a checkpoint that Load reads (the optional ones may be absent).
  static const std::vector<std::string>& Files();

  // The lexical shortlist of the model's directory (vmap.txt, else lex.s2t), or null without one.
  const Shortlist* shortlist() const { return shortlist_.get(); }

  // The packed weights (for the engine's layers).
  const ModelWeights& weights() const { return *weights_; }
  // The output projection onto the shortlist's always-line alone (Shortlist::always(), the ids
  // every sentence may generate), packed once at load: a decode's projection onto its candidates
  // then packs only the others (Decoder::RestrictOutputs). Null without a shortlist, or with one
  // whose always-line is wider than a restricted projection may be (kMaxShortlistShare).
  const Linear* always_projection() const { return always_projection_.get(); }

  // The memory this model holds: weight_bytes() + tokenizer_bytes() + shortlist_bytes().
  // EstimateModelBytes (model_size.h) gives the same figure from the files before loading, but for
  // the shortlist.
  int64_t resident_bytes() const { return weight_bytes() + tokenizer_bytes() + shortlist_bytes(); }
  // Its packed weights, biases, scales, layer norms and positions, summed from their allocations
  // (ModelWeights::memory_bytes()).
  int64_t weight_bytes() const;
  // Its tokenizer's, by the measured rule TokenizerBytes (model_size.h) for its vocabulary:
  // libsentencepiece does not tell what its models hold.
  int64_t tokenizer_bytes() const;
  // Its shortlist's (Shortlist::memory_bytes()) and always_projection()'s, 0 without one.
  int64_t shortlist_bytes() const;

  ~Model();

 private:
  Model() = default;
  static absl::StatusOr<std::shared_ptr<const Model>> LoadFrom(const std::string& dir,
                                                               ComputeType compute_type);
  std::string dir_;
  std::string content_fingerprint_;
  ComputeType compute_type_ = ComputeType::kFloat32;
  ModelConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ModelWeights> weights_;
  std::shared_ptr<const Shortlist> shortlist_;
  std::unique_ptr<Linear> always_projection_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_MODEL_H_
