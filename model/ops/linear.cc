#include "model/ops/linear.h"

#include <algorithm>
#include <cstring>

namespace mtserve {
namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

// Rows used only to ask oneDNN for its preferred weight layout. The answer is the same for every
// row count; were it not, creating a primitive for the packed layout would fail loudly.
constexpr int64_t kLayoutProbeRows = 64;

dnnl::primitive_attr MakeAttr(Epilogue epilogue) {
  dnnl::post_ops ops;
  switch (epilogue) {
    case Epilogue::kNone:
      break;
    case Epilogue::kRelu:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      break;
    case Epilogue::kSwish:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
      break;
    case Epilogue::kGelu:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
      break;
    case Epilogue::kAddToOutput:
      ops.append_sum(1.f);
      break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return WithUserScratchpad(attr);
}

dnnl::matmul::primitive_desc MakeMatMul(int64_t rows, int64_t in, int64_t out, int64_t x_stride,
                                        const memory::desc& weight_desc, bool has_bias,
                                        Epilogue epilogue) {
  memory::desc x_md({rows, in}, dt::f32, memory::dims{x_stride, 1});
  memory::desc y_md({rows, out}, dt::f32, tag::ab);
  memory::desc b_md = has_bias ? memory::desc({1, out}, dt::f32, tag::ab) : memory::desc();
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_md, weight_desc, b_md, y_md),
                                      MakeAttr(epilogue), CpuEngine());
}

}  // namespace

Epilogue ActivationEpilogue(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return Epilogue::kRelu;
    case Activation::kSwish:
      return Epilogue::kSwish;
    case Activation::kGelu:
      return Epilogue::kGelu;
  }
  return Epilogue::kNone;
}

Linear::Linear(const std::vector<float>& weight, const std::vector<float>& bias, int in_features,
               int out_features)
    : in_(in_features), out_(out_features), has_bias_(!bias.empty()) {
  const dnnl::engine& engine = CpuEngine();
  memory::desc any_md({in_, out_}, dt::f32, tag::any);
  weight_desc_ = MakeMatMul(kLayoutProbeRows, in_, out_, in_, any_md, has_bias_, Epilogue::kNone)
                     .weights_desc();
  // PyTorch's [out, in] row-major is the [in, out] matrix in "ba" order.
  memory::desc plain_md({in_, out_}, dt::f32, tag::ba);
  memory plain(plain_md, engine, const_cast<float*>(weight.data()));
  weight_memory_ =
      memory(weight_desc_, engine, weight_.Reserve(weight_desc_.get_size() / sizeof(float)));
  dnnl::stream stream(engine);
  dnnl::reorder(plain, weight_memory_).execute(stream, plain, weight_memory_);
  stream.wait();
  if (has_bias_) {
    std::memcpy(bias_.Reserve(out_), bias.data(), out_ * sizeof(float));
    bias_memory_ = memory(memory::desc({1, out_}, dt::f32, tag::ab), engine, bias_.data());
  }
  in_offsets_.resize(in_);
  for (int k = 0; k < in_; ++k) in_offsets_[k] = PackedOffset(0, k);
}

int64_t Linear::PackedOffset(int dim, int64_t index) const {
  const dnnl_blocking_desc_t& blocking = weight_desc_.data.format_desc.blocking;
  // Inner blocks are listed outermost first; a dimension may be blocked more than once.
  int64_t block_size = 1;
  for (int j = 0; j < blocking.inner_nblks; ++j) {
    if (blocking.inner_idxs[j] == dim) block_size *= blocking.inner_blks[j];
  }
  int64_t offset =
      (dim == 0 ? weight_desc_.data.offset0 : 0) + index / block_size * blocking.strides[dim];
  int64_t remainder = index % block_size;
  int64_t inner_stride = 1;
  for (int j = blocking.inner_nblks - 1; j >= 0; --j) {
    if (blocking.inner_idxs[j] == dim) {
      offset += remainder % blocking.inner_blks[j] * inner_stride;
      remainder /= blocking.inner_blks[j];
    }
    inner_stride *= blocking.inner_blks[j];
  }
  return offset;
}

void Linear::CopyWeightRow(int out_index, float* dst) const {
  const float* column = weight_.data() + PackedOffset(1, out_index);
  for (int k = 0; k < in_; ++k) dst[k] = column[in_offsets_[k]];
}

void Linear::Forward(ComputeContext& ctx, const float* x, int64_t rows, float* y, Epilogue epilogue,
                     int64_t x_stride) const {
  if (x_stride == 0) x_stride = in_;
  // Large inputs go in blocks of kMaxRows: as fast, and the encoder's ever-changing
  // batch x length row counts then need primitives for a few remainders, not one per batch.
  for (int64_t first = 0; first < rows; first += kMaxRows) {
    ForwardBlock(ctx, x + first * x_stride, std::min(kMaxRows, rows - first), y + first * out_,
                 epilogue, x_stride);
  }
}

void Linear::ForwardBlock(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                          Epilogue epilogue, int64_t x_stride) const {
  const int64_t fused = static_cast<int64_t>(epilogue);
  const PrimitiveKey key{
      static_cast<int64_t>(OpKind::kLinear), in_, out_, rows, x_stride, fused, has_bias_};
  const ComputeContext::Arg args[] = {
      {DNNL_ARG_SRC, memory::desc({rows, in_}, dt::f32, memory::dims{x_stride, 1}), x},
      {DNNL_ARG_DST, memory::desc({rows, out_}, dt::f32, tag::ab), y},
      {DNNL_ARG_WEIGHTS, {}, nullptr, &weight_memory_},
      {DNNL_ARG_BIAS, {}, nullptr, &bias_memory_}};
  ctx.Execute(
      key, [&] { return MakeMatMul(rows, in_, out_, x_stride, weight_desc_, has_bias_, epilogue); },
      absl::MakeConstSpan(args, has_bias_ ? 4 : 3));
}

}  // namespace mtserve
