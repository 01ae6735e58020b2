// Random-weight MarianMT checkpoints for benchmarks: the tensors a Hugging Face
// MarianMTModel.save_pretrained writes, initialised as HF's _init_weights does, in a directory
// that the engine loads like a real model.
#ifndef MTSERVE_TOOLS_RANDOM_CHECKPOINT_H_
#define MTSERVE_TOOLS_RANDOM_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "model/model_config.h"
#include "model/safetensors.h"

namespace mtserve {

struct RandomCheckpointOptions {
  uint64_t seed = 0;
  DType dtype = DType::kF16;  // kF16 or kF32.
  // Standard deviation of linear weights and embeddings (HF's config.init_std).
  double init_std = 0.02;
};

// IEEE 754 binary16 nearest to `value`, ties to even; overflow gives infinity, NaN stays NaN.
uint16_t FloatToHalf(float value);

// Writes `path` (a safetensors file, through a temporary file renamed into place) with every
// tensor of a MarianMT model of this architecture: model.shared.weight (the tied embeddings,
// normal(0, init_std) with the pad row zero), final_logits_bias (zeros), and per layer the
// attention, feed-forward and layer-norm tensors (linear weights normal(0, init_std), biases 0,
// layer-norm weights 1). Header keys and data are in name order; the header is padded with spaces
// to a multiple of 8 bytes. The same options give a byte-identical file.
absl::Status WriteRandomSafetensors(const ModelConfig& config,
                                    const RandomCheckpointOptions& options,
                                    const std::string& path);

// Reads `tokenizer_dir`/config.json, copies the config and tokenizer files (config.json,
// source.spm, target.spm, vocab.json, and generation_config.json, tokenizer_config.json,
// special_tokens_map.json when present) into `out_dir` (created if needed, and not the same
// directory), then writes `out_dir`/model.safetensors. options.init_std is replaced by the
// config's init_std when it has one.
absl::Status MakeRandomCheckpoint(const std::string& tokenizer_dir, const std::string& out_dir,
                                  RandomCheckpointOptions options);

}  // namespace mtserve

#endif  // MTSERVE_TOOLS_RANDOM_CHECKPOINT_H_
