#include "model/model_size.h"

#include <memory>

#include "base/status_macros.h"
#include "model/checkpoint.h"

namespace mtserve {
namespace {

// AlignedBuffer's alignment: every buffer is allocated in multiples of it.
constexpr int64_t kAlignment = 64;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// A float32 buffer of `count` values, as AlignedBuffer allocates it.
int64_t FloatBufferBytes(int64_t count) { return RoundUp(count * 4, kAlignment); }

int64_t LayerNormBytes(int64_t dim) { return 2 * FloatBufferBytes(dim); }

}  // namespace

int64_t LinearBytes(int64_t in, int64_t out, ComputeType type) {
  // oneDNN's AVX-512 matmul weights: BA16a64b (float32), BA16a64b2a (bfloat16), BA16a64b4a
  // (int8): outputs in blocks of 64, inputs in blocks of 16 times the elements a 32-bit lane
  // holds.
  int64_t element_bytes = 4;
  int64_t in_block = 16;
  int64_t per_output_buffers = 1;  // The bias.
  switch (type) {
    case ComputeType::kFloat32:
      break;
    case ComputeType::kBFloat16:
      element_bytes = 2;
      in_block = 32;
      break;
    case ComputeType::kInt8:
      element_bytes = 1;
      in_block = 64;
      per_output_buffers = 3;  // The bias, the scales and the column offsets.
      break;
  }
  const int64_t weight =
      RoundUp(RoundUp(in, in_block) * RoundUp(out, 64) * element_bytes, kAlignment);
  const int64_t in_offsets = in * 8;  // A std::vector<int64_t>, not aligned.
  return weight + per_output_buffers * FloatBufferBytes(out) + in_offsets;
}

int64_t TokenizerBytes(int64_t vocab_size) { return (int64_t{640} << 10) + 270 * vocab_size; }

ModelBytes EstimateModelMemory(const ModelConfig& config, ComputeType type, bool tied_embeddings) {
  const int64_t d = config.d_model;
  const int64_t vocab = config.vocab_size;
  ModelBytes bytes;
  int64_t& w = bytes.weights;
  w += LinearBytes(d, vocab, type);  // The output projection.
  // One Embeddings object for source and target: the positions, and the table unless tied.
  w += FloatBufferBytes(config.max_position_embeddings * d);
  if (!tied_embeddings) w += FloatBufferBytes(vocab * d);
  w += config.encoder_layers *
       (LinearBytes(d, 3 * d, type) + LinearBytes(d, d, type) +
        LinearBytes(d, config.encoder_ffn_dim, type) +
        LinearBytes(config.encoder_ffn_dim, d, type) + 2 * LayerNormBytes(d));
  w += config.decoder_layers *
       (LinearBytes(d, 3 * d, type) + LinearBytes(d, d, type) +  // Self-attention.
        LinearBytes(d, d, type) + LinearBytes(d, 2 * d, type) +  // Cross-attention.
        LinearBytes(d, d, type) + LinearBytes(d, config.decoder_ffn_dim, type) +
        LinearBytes(config.decoder_ffn_dim, d, type) + 3 * LayerNormBytes(d));
  bytes.tokenizer = TokenizerBytes(vocab);
  return bytes;
}

absl::StatusOr<ModelBytes> EstimateModelMemory(const std::string& dir, ComputeType type) {
  MT_ASSIGN_OR_RETURN(const ModelConfig config, LoadModelConfig(dir));
  // Maps the file and checks its header; no tensor is read.
  MT_ASSIGN_OR_RETURN(const std::unique_ptr<Checkpoint> checkpoint, Checkpoint::Open(dir, config));
  const std::string& projection = checkpoint->output_projection_name();
  ModelBytes bytes = EstimateModelMemory(
      config, type, /*tied_embeddings=*/checkpoint->encoder_embedding_name() == projection);
  // Model::Load gives the decoder its own Embeddings when its table is stored apart from the
  // encoder's: positions again, and a table unless that one is the projection's.
  const std::string& decoder = checkpoint->decoder_embedding_name();
  if (decoder != checkpoint->encoder_embedding_name()) {
    bytes.weights += FloatBufferBytes(int64_t{config.max_position_embeddings} * config.d_model);
    if (decoder != projection) {
      bytes.weights += FloatBufferBytes(int64_t{config.vocab_size} * config.d_model);
    }
  }
  return bytes;
}

absl::StatusOr<int64_t> EstimateModelBytes(const std::string& dir, ComputeType type) {
  MT_ASSIGN_OR_RETURN(const ModelBytes bytes, EstimateModelMemory(dir, type));
  return bytes.total();
}

}  // namespace mtserve
