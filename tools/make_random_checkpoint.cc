// make_random_checkpoint: a random-weight MarianMT checkpoint for benchmarks, in the Hugging Face
// layout, with the architecture and tokenizer of an existing model directory.
//
//   make_random_checkpoint --tokenizer_dir=DIR --out=DIR [--seed=N] [--dtype=f16|f32]
//
// Copies config.json, source.spm, target.spm, vocab.json (and generation_config.json,
// tokenizer_config.json, special_tokens_map.json when present) from --tokenizer_dir into --out and
// writes --out/model.safetensors with every tensor MarianMTModel.save_pretrained writes,
// initialised like HF: normal(0, init_std) linear weights and embeddings, zero biases, unit layer
// norms. The same seed gives a byte-identical file.
#include <cstdint>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "model/safetensors.h"
#include "tools/random_checkpoint.h"

ABSL_FLAG(std::string, tokenizer_dir, "",
          "Model directory whose config.json (architecture) and tokenizer files (source.spm, "
          "target.spm, vocab.json) are used. Required.");
ABSL_FLAG(std::string, out, "",
          "Output directory, created if needed; must differ from --tokenizer_dir. Required.");
ABSL_FLAG(uint64_t, seed, 0, "Random seed: the same seed gives a byte-identical checkpoint.");
ABSL_FLAG(std::string, dtype, "f16", "Stored dtype of every tensor: f16 or f32.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes a random-weight MarianMT checkpoint (Hugging Face layout) for benchmarks.\n"
      "Usage: make_random_checkpoint --tokenizer_dir=DIR --out=DIR [--seed=N] "
      "[--dtype=f16|f32]");
  absl::ParseCommandLine(argc, argv);

  const std::string tokenizer_dir = absl::GetFlag(FLAGS_tokenizer_dir);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (tokenizer_dir.empty() || out.empty()) {
    std::cerr << "make_random_checkpoint: --tokenizer_dir and --out are required (see --help)\n";
    return 2;
  }
  mtserve::RandomCheckpointOptions options;
  options.seed = absl::GetFlag(FLAGS_seed);
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype == "f16") {
    options.dtype = mtserve::DType::kF16;
  } else if (dtype == "f32") {
    options.dtype = mtserve::DType::kF32;
  } else {
    std::cerr << "make_random_checkpoint: --dtype must be f16 or f32, got '" << dtype << "'\n";
    return 2;
  }

  const absl::Status status = mtserve::MakeRandomCheckpoint(tokenizer_dir, out, options);
  if (!status.ok()) {
    std::cerr << "make_random_checkpoint: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
