// y = x · Wᵀ + b as a oneDNN matmul, with the weight reordered once, at construction, into the
// blocked layout oneDNN's kernels prefer (that layout does not depend on the number of rows, so one
// packed copy serves every batch size), and with the activation or the residual add fused in.
//
// The compute type is the op's: the packed weight is float32, bfloat16 or int8, and Forward
// converts its float32 input to match, so layers are the same in every type.
// - bfloat16: weight and input rounded to bfloat16, products summed in float32 by oneDNN, with
//   bias, activation and residual add fused as in float32. A single row is computed as two, so
//   that oneDNN runs the same kernel for every row count (on AMX CPUs it would not).
// - int8: the weight quantised per output channel (row of W) and the input per row, both
//   symmetric (the input stored shifted into unsigned bytes, for VNNI); oneDNN sums the int8
//   products exactly, and one pass then scales each sum by its
//   row's and column's scales and adds the bias, residual and ReLU (oneDNN 2.6 has no per-row
//   scale that its fast kernels fuse: a per-row binary post-op falls back to its reference
//   kernel). Swish and GELU then run as a oneDNN eltwise in place. Per-row scales keep a row's
//   result independent of the rows computed with it, as the server's batching requires.
#ifndef MTSERVE_MODEL_OPS_LINEAR_H_
#define MTSERVE_MODEL_OPS_LINEAR_H_

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "absl/types/span.h"
#include "model/compute_type.h"
#include "model/model_config.h"
#include "model/ops/aligned_buffer.h"
#include "model/ops/compute_context.h"
#include "model/ops/shape_buckets.h"

namespace mtserve {

// What is fused after x · Wᵀ + b.
enum class Epilogue {
  kNone,
  kRelu,
  kSwish,
  kGelu,
  kAddToOutput,  // y += x · Wᵀ + b: y holds the residual on entry.
};

Epilogue ActivationEpilogue(Activation activation);

class Linear {
 public:
  Linear() = default;
  // `weight` is [out_features, in_features] row-major (PyTorch's nn.Linear layout); `bias` has
  // out_features values or is empty. Throws dnnl::error when this CPU has no oneDNN kernel for
  // `type` (Model::Load checks CheckComputeTypeSupported first).
  Linear(const std::vector<float>& weight, const std::vector<float>& bias, int in_features,
         int out_features, ComputeType type = ComputeType::kFloat32);

  int in_features() const { return in_; }
  int out_features() const { return out_; }
  ComputeType compute_type() const { return type_; }

  // x: [rows, in_features] with row stride x_stride (0: in_features); y: [rows, out_features]
  // with row stride y_stride (0: out_features; more: the columns between are left as they are).
  void Forward(ComputeContext& ctx, const float* x, int64_t rows, float* y,
               Epilogue epilogue = Epilogue::kNone, int64_t x_stride = 0,
               int64_t y_stride = 0) const;

  // A Linear computing only `outputs` of this one's outputs, in that order (-1: an output of
  // zeros), from the same packed values: each of its outputs is the one computed here, bit for
  // bit where oneDNN sums a column's products in the same order whatever the width (tested for
  // every compute type). What a lexical shortlist projects onto.
  Linear Outputs(absl::Span<const int> outputs) const;

  // Copies row `out_index` of the weight as given at construction ([out, in]: the embedding of
  // token out_index when the output projection is tied to the embeddings), read from the packed
  // layout, so tied embeddings need no second copy of the table. In bfloat16 and int8, the row as
  // the op computes with it (rounded, or dequantised).
  void CopyWeightRow(int out_index, float* dst) const;

  // Bytes this op owns: the packed weight (with the padding of oneDNN's blocked layout), the bias,
  // int8's scales and column offsets, and the table of packed offsets CopyWeightRow reads, as
  // allocated. Excludes oneDNN's small handle objects (descriptors, memory objects).
  int64_t memory_bytes() const;

  // Forward computes at most this many rows per oneDNN call.
  static constexpr int64_t kMaxRows = kLinearBlockRows;

 private:
  // Packs `plain` (the [in, out] weight of the weight type) into weight_ in oneDNN's preferred
  // layout for this op's shape.
  void Pack(const dnnl::memory& plain);
  void MakeBiasMemory();
  void ForwardBlock(ComputeContext& ctx, const float* x, int64_t rows, float* y, Epilogue epilogue,
                    int64_t x_stride, int64_t y_stride) const;
  void ForwardBFloat16Block(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                            Epilogue epilogue, int64_t x_stride) const;
  void ForwardInt8Block(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                        Epilogue epilogue, int64_t x_stride, int64_t y_stride) const;
  // Runs the matmul of `rows` rows of `x` (laid out as x_md) into y (dense) with `epilogue`
  // fused.
  void MatMul(ComputeContext& ctx, const dnnl::memory::desc& x_md, const void* x, int64_t rows,
              float* y, Epilogue epilogue, bool with_bias) const;

  int in_ = 0;
  int out_ = 0;
  ComputeType type_ = ComputeType::kFloat32;
  // Offset of element [in, out] of the packed [in, out] matrix: a blocked layout's offset is a sum
  // of one term per dimension.
  int64_t PackedOffset(int dim, int64_t index) const;

  dnnl::memory::desc weight_desc_;   // The packed layout.
  std::vector<int64_t> in_offsets_;  // PackedOffset(0, k) for every input index k.
  AlignedBuffer<uint8_t> weight_;
  FloatBuffer weight_scales_;   // int8: one per output channel.
  FloatBuffer column_offsets_;  // int8: 128 x each output channel's sum of int8 weights.
  FloatBuffer bias_;
  // Made once and shared by every call and thread: a memory object made from a handle zero-fills
  // the padding of a blocked layout, which per call would rewrite shared weights.
  dnnl::memory weight_memory_;
  dnnl::memory bias_memory_;
  bool has_bias_ = false;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_LINEAR_H_
