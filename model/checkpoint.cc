#include "model/checkpoint.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/excerpt.h"
#include "base/status_macros.h"

namespace mtserve {
namespace {

// Candidate names of the embedding tables, in order of preference for each role. A checkpoint
// may store one shared table under any of them, or separate ones.
constexpr absl::string_view kEncoderEmbeddingNames[] = {
    "model.encoder.embed_tokens.weight", "model.shared.weight", "model.decoder.embed_tokens.weight",
    "lm_head.weight"};
constexpr absl::string_view kDecoderEmbeddingNames[] = {
    "model.decoder.embed_tokens.weight", "model.shared.weight", "model.encoder.embed_tokens.weight",
    "lm_head.weight"};
constexpr absl::string_view kLmHeadName = "lm_head.weight";
constexpr absl::string_view kFinalLogitsBiasName = "final_logits_bias";

std::string ShapeString(const std::vector<int64_t>& shape) {
  // A file can give a tensor any number of dimensions.
  return Excerpt(absl::StrCat("[", absl::StrJoin(shape, ", "), "]"), 80);
}

bool IsFloating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

void AddLinear(std::vector<MarianTensor>& out, const std::string& prefix, int64_t out_dim,
               int64_t in_dim) {
  out.push_back({absl::StrCat(prefix, ".weight"), {out_dim, in_dim}});
  out.push_back({absl::StrCat(prefix, ".bias"), {out_dim}});
}

void AddLayerNorm(std::vector<MarianTensor>& out, const std::string& prefix, int64_t dim) {
  out.push_back({absl::StrCat(prefix, ".weight"), {dim}});
  out.push_back({absl::StrCat(prefix, ".bias"), {dim}});
}

void AddAttention(std::vector<MarianTensor>& out, const std::string& prefix, int64_t d) {
  for (absl::string_view proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
    AddLinear(out, absl::StrCat(prefix, ".", proj), d, d);
  }
}

// Checks a tensor's dtype and shape against every accepted shape; the message lists the first.
std::string CheckTensor(const SafetensorsFile& file, absl::string_view name,
                        std::initializer_list<std::vector<int64_t>> accepted_shapes) {
  const TensorInfo* tensor = file.Find(name);
  if (tensor == nullptr) return absl::StrCat(file.path(), ": missing tensor '", name, "'");
  if (!IsFloating(tensor->dtype)) {
    return absl::StrCat(file.path(), ": tensor '", name, "' has dtype ", DTypeName(tensor->dtype),
                        ", expected F32, F16 or BF16");
  }
  for (const std::vector<int64_t>& shape : accepted_shapes) {
    if (tensor->shape == shape) return "";
  }
  std::vector<std::string> expected;
  for (const std::vector<int64_t>& shape : accepted_shapes) expected.push_back(ShapeString(shape));
  return absl::StrCat(file.path(), ": tensor '", name, "' has shape ", ShapeString(tensor->shape),
                      ", expected ", absl::StrJoin(expected, " or "));
}

// The first of `names` that the file holds, or an error listing them all.
absl::StatusOr<std::string> ResolveEmbedding(const SafetensorsFile& file, absl::string_view role,
                                             const absl::string_view (&names)[4]) {
  for (absl::string_view name : names) {
    if (file.Find(name) != nullptr) return std::string(name);
  }
  return absl::InvalidArgumentError(absl::StrCat(file.path(), ": missing the ", role,
                                                 " embedding: expected a tensor named '",
                                                 absl::StrJoin(names, "', '"), "'"));
}

// The index of the first NaN or infinity in x[0..n), or n. One pass of exponent tests that
// vectorises, then a search only when there is one.
size_t FirstNonFinite(const float* x, size_t n) {
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(x);
  constexpr uint32_t kExponent = 0x7F800000;  // All ones: infinity or NaN.
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= (bits[i] & kExponent) == kExponent;
  if (any == 0) return n;
  for (size_t i = 0; i < n; ++i) {
    if ((bits[i] & kExponent) == kExponent) return i;
  }
  return n;
}

}  // namespace

std::vector<MarianTensor> MarianLayerTensors(const ModelConfig& config) {
  const int64_t d = config.d_model;
  std::vector<MarianTensor> out;
  for (int i = 0; i < config.encoder_layers; ++i) {
    const std::string layer = absl::StrCat("model.encoder.layers.", i);
    AddAttention(out, absl::StrCat(layer, ".self_attn"), d);
    AddLayerNorm(out, absl::StrCat(layer, ".self_attn_layer_norm"), d);
    AddLinear(out, absl::StrCat(layer, ".fc1"), config.encoder_ffn_dim, d);
    AddLinear(out, absl::StrCat(layer, ".fc2"), d, config.encoder_ffn_dim);
    AddLayerNorm(out, absl::StrCat(layer, ".final_layer_norm"), d);
  }
  for (int i = 0; i < config.decoder_layers; ++i) {
    const std::string layer = absl::StrCat("model.decoder.layers.", i);
    AddAttention(out, absl::StrCat(layer, ".self_attn"), d);
    AddLayerNorm(out, absl::StrCat(layer, ".self_attn_layer_norm"), d);
    AddAttention(out, absl::StrCat(layer, ".encoder_attn"), d);
    AddLayerNorm(out, absl::StrCat(layer, ".encoder_attn_layer_norm"), d);
    AddLinear(out, absl::StrCat(layer, ".fc1"), config.decoder_ffn_dim, d);
    AddLinear(out, absl::StrCat(layer, ".fc2"), d, config.decoder_ffn_dim);
    AddLayerNorm(out, absl::StrCat(layer, ".final_layer_norm"), d);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& dir,
                                                             const ModelConfig& config) {
  const std::string path = (!dir.empty() && dir.back() == '/')
                               ? absl::StrCat(dir, "model.safetensors")
                               : absl::StrCat(dir, "/model.safetensors");
  std::unique_ptr<Checkpoint> checkpoint(new Checkpoint());
  MT_ASSIGN_OR_RETURN(checkpoint->file_, SafetensorsFile::Open(path));
  const SafetensorsFile& file = *checkpoint->file_;
  checkpoint->vocab_size_ = config.vocab_size;

  MT_ASSIGN_OR_RETURN(checkpoint->encoder_embedding_,
                      ResolveEmbedding(file, "encoder", kEncoderEmbeddingNames));
  MT_ASSIGN_OR_RETURN(checkpoint->decoder_embedding_,
                      ResolveEmbedding(file, "decoder", kDecoderEmbeddingNames));
  checkpoint->output_projection_ =
      file.Find(kLmHeadName) != nullptr ? std::string(kLmHeadName) : checkpoint->decoder_embedding_;

  // Collect every problem so that one look at the error shows how far off the checkpoint is.
  std::vector<std::string> problems;
  auto check = [&](absl::string_view name, std::initializer_list<std::vector<int64_t>> shapes) {
    std::string problem = CheckTensor(file, name, shapes);
    if (!problem.empty()) problems.push_back(std::move(problem));
  };
  const std::vector<int64_t> embedding_shape = {config.vocab_size, config.d_model};
  check(checkpoint->encoder_embedding_, {embedding_shape});
  if (checkpoint->decoder_embedding_ != checkpoint->encoder_embedding_) {
    check(checkpoint->decoder_embedding_, {embedding_shape});
  }
  if (checkpoint->output_projection_ != checkpoint->encoder_embedding_ &&
      checkpoint->output_projection_ != checkpoint->decoder_embedding_) {
    check(checkpoint->output_projection_, {embedding_shape});
  }
  if (file.Find(kFinalLogitsBiasName) != nullptr) {
    check(kFinalLogitsBiasName, {{1, config.vocab_size}, {config.vocab_size}});
  }
  for (const MarianTensor& expected : MarianLayerTensors(config)) {
    check(expected.name, {expected.shape});
  }
  if (!problems.empty()) {
    std::string message = problems.front();
    if (problems.size() > 1) absl::StrAppend(&message, " (and ", problems.size() - 1, " more)");
    return absl::InvalidArgumentError(message);
  }
  return checkpoint;
}

absl::StatusOr<std::vector<float>> Checkpoint::Read(absl::string_view name) const {
  const TensorInfo* tensor = file_->Find(name);
  if (tensor == nullptr) {
    return absl::NotFoundError(absl::StrCat(file_->path(), ": missing tensor '", name, "'"));
  }
  std::vector<float> values(static_cast<size_t>(tensor->NumElements()));
  MT_RETURN_IF_ERROR(file_->ReadAsFloat(*tensor, values.data()));
  // A NaN or infinite weight makes every output NaN: translations would come out empty, with no
  // error. Checked once, here, as each tensor is read.
  if (const size_t bad = FirstNonFinite(values.data(), values.size()); bad < values.size()) {
    return absl::InvalidArgumentError(absl::StrCat(file_->path(), ": tensor '", name, "' holds ",
                                                   values[bad], " at index ", bad,
                                                   " (weights must be finite)"));
  }
  return values;
}

absl::StatusOr<std::vector<float>> Checkpoint::ReadFinalLogitsBias() const {
  if (file_->Find(kFinalLogitsBiasName) == nullptr) {
    return std::vector<float>(static_cast<size_t>(vocab_size_), 0.0f);
  }
  return Read(kFinalLogitsBiasName);
}

}  // namespace mtserve
