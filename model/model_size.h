// The memory a model will hold once loaded, from its files alone (config.json and the header of
// model.safetensors; no weight is read): what loading models on demand within a memory budget
// needs before it loads one. Model::resident_bytes() (model.h) is what a loaded model holds,
// counted from its allocations; for a given compute type the two are equal on CPUs with AVX-512
// (tests/model/model_size_test.cc).
//
// What is counted, as Model::Load stores it (model.cc, ops/linear.h):
// - each linear layer's weight packed in oneDNN's blocked layout for AVX-512: [in, out] padded to
//   a multiple of 64 outputs and of 16 (float32), 32 (bfloat16) or 64 (int8) inputs, in 4, 2 or
//   1 bytes an element; its float32 bias; for int8 a float32 scale and column offset per output;
//   and a table of 8 bytes per input (where each input's row lies in the packed layout). The
//   query, key and value projections are one layer (d → 3d), as are the cross-attention's key
//   and value (d → 2d). On CPUs without AVX-512, oneDNN picks other blocks: the padding, a few
//   rows and columns of each layer, differs.
// - the output projection with final_logits_bias as its bias; embeddings tied to it (every
//   OPUS-MT checkpoint) read their rows from its packed weight and hold no table of their own;
//   untied ones hold a float32 table;
// - the sinusoidal positions (max_position_embeddings × d_model float32), and each layer norm's
//   float32 gamma and beta;
// - the tokenizer: TokenizerBytes below.
// Every buffer is counted rounded up to 64 bytes, as AlignedBuffer allocates it. Not counted: the
// allocator's own overhead, oneDNN's handle objects (some hundred bytes a layer), the config, and
// a lexical shortlist in the directory (shortlist.h), which resident_bytes() counts once loaded:
// the estimate equals resident_bytes() for a directory without one.
#ifndef MTSERVE_MODEL_MODEL_SIZE_H_
#define MTSERVE_MODEL_MODEL_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "model/compute_type.h"
#include "model/model_config.h"

namespace mtserve {

// A model's memory in two parts.
struct ModelBytes {
  int64_t weights = 0;    // Packed weights, biases, scales, norms, positions (see above).
  int64_t tokenizer = 0;  // TokenizerBytes(vocab_size).
  int64_t total() const { return weights + tokenizer; }
};

// The memory the model in `dir` will hold once loaded in `type`, from `dir`/config.json and the
// header of `dir`/model.safetensors (checked as Model::Load checks them: every tensor present,
// floating point and of its shape; the errors are the loader's and name the file). The tokenizer
// files are not read.
absl::StatusOr<ModelBytes> EstimateModelMemory(const std::string& dir, ComputeType type);
// EstimateModelMemory(dir, type).total().
absl::StatusOr<int64_t> EstimateModelBytes(const std::string& dir, ComputeType type);

// The same from a config alone, for a checkpoint whose embeddings are tied to the output
// projection (every OPUS-MT checkpoint) or not.
ModelBytes EstimateModelMemory(const ModelConfig& config, ComputeType type, bool tied_embeddings);

// What a linear layer of `in` inputs and `out` outputs with a bias holds in `type` (see above).
int64_t LinearBytes(int64_t in, int64_t out, ComputeType type);

// The tokenizer's memory for a vocabulary of `vocab_size` pieces: the two SentencePiece models
// and vocab.json's table. libsentencepiece's structures are not visible from outside, so this is
// a rule measured rather than counted: 640 KiB (the models' normalisation tables and fixed parts)
// plus 270 bytes a piece, fitted to the heap that Tokenizer::Load allocates (glibc's malloc,
// Debian 12's libsentencepiece) for the three trained models and two OPUS-MT tokenizers, each
// within 2 % (checked in tests/model/model_size_test.cc). About 2.7 MB for the embedded model,
// 15 MB for an OPUS-MT vocabulary of 55,000 pieces.
int64_t TokenizerBytes(int64_t vocab_size);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_MODEL_SIZE_H_
