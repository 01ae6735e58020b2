#include "model/ops/linear.h"

#include <algorithm>
#include <cstring>

#include "model/float16.h"
#include "model/kernels/quantize.h"
#include "model/ops/phase_profile.h"

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

dnnl::matmul::primitive_desc MakeMatMul(const memory::desc& x_md, int64_t out,
                                        const memory::desc& weight_desc, bool has_bias,
                                        Epilogue epilogue) {
  memory::desc y_md({x_md.dims()[0], out}, dt::f32, tag::ab);
  memory::desc b_md = has_bias ? memory::desc({1, out}, dt::f32, tag::ab) : memory::desc();
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_md, weight_desc, b_md, y_md),
                                      MakeAttr(epilogue), CpuEngine());
}

// The data types of the input and of the weight the matmul reads.
dt InputType(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32:
      return dt::f32;
    case ComputeType::kBFloat16:
      return dt::bf16;
    case ComputeType::kInt8:
      return dt::u8;  // Shifted by 128: see QuantizeRowsShifted.
  }
  return dt::f32;
}

dt WeightType(ComputeType type) { return type == ComputeType::kInt8 ? dt::s8 : InputType(type); }

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
               int out_features, ComputeType type)
    : in_(in_features), out_(out_features), type_(type), has_bias_(!bias.empty()) {
  const dnnl::engine& engine = CpuEngine();
  // PyTorch's [out, in] row-major is the [in, out] matrix in "ba" order. The reorder packs it,
  // rounding to bfloat16 on the way.
  std::vector<int8_t> quantized;
  if (type_ == ComputeType::kInt8) {
    quantized.resize(weight.size());
    QuantizeRows(weight.data(), out_, in_, in_, quantized.data(), weight_scales_.Reserve(out_));
    float* offsets = column_offsets_.Reserve(out_);
    for (int n = 0; n < out_; ++n) {
      int64_t sum = 0;
      for (int k = 0; k < in_; ++k) sum += quantized[static_cast<size_t>(n) * in_ + k];
      // Exact: |sum| <= 127 * in is below 2^24, and 128 only moves the exponent.
      offsets[n] = 128.f * static_cast<float>(sum);
    }
    Pack(memory(memory::desc({in_, out_}, dt::s8, tag::ba), engine, quantized.data()));
  } else {
    Pack(memory(memory::desc({in_, out_}, dt::f32, tag::ba), engine,
                const_cast<float*>(weight.data())));
  }
  if (has_bias_) std::memcpy(bias_.Reserve(out_), bias.data(), out_ * sizeof(float));
  MakeBiasMemory();
}

void Linear::Pack(const dnnl::memory& plain) {
  const dnnl::engine& engine = CpuEngine();
  // int8 adds the bias itself, after scaling the products.
  const bool matmul_bias = has_bias_ && type_ != ComputeType::kInt8;
  weight_desc_ = MakeMatMul(memory::desc({kLayoutProbeRows, in_}, InputType(type_), tag::ab), out_,
                            memory::desc({in_, out_}, WeightType(type_), tag::any), matmul_bias,
                            Epilogue::kNone)
                     .weights_desc();
  weight_memory_ = memory(weight_desc_, engine, weight_.Reserve(weight_desc_.get_size()));
  dnnl::stream stream(engine);
  dnnl::reorder(plain, weight_memory_).execute(stream, const_cast<memory&>(plain), weight_memory_);
  stream.wait();
  in_offsets_.resize(in_);
  for (int k = 0; k < in_; ++k) in_offsets_[k] = PackedOffset(0, k);
}

void Linear::MakeBiasMemory() {
  if (!has_bias_) return;
  bias_memory_ = memory(memory::desc({1, out_}, dt::f32, tag::ab), CpuEngine(), bias_.data());
}

Linear Linear::Outputs(absl::Span<const int> outputs) const {
  Linear selected;
  selected.in_ = in_;
  selected.out_ = static_cast<int>(outputs.size());
  selected.type_ = type_;
  selected.has_bias_ = has_bias_;
  const int n_out = selected.out_;
  // The packed values, copied as they are (no rounding again, no requantising) into a plain
  // [out, in] matrix, then packed for the new width.
  const size_t element = memory::data_type_size(WeightType(type_));
  std::vector<uint8_t> plain(static_cast<size_t>(n_out) * in_ * element, 0);
  // An element's copy of a size known when compiled: of a size known only when running, memcpy is
  // a library call per element (a projection of a few thousand columns took milliseconds).
  auto gather_columns = [&](auto element_type) {
    using Element = decltype(element_type);
    const auto* packed = reinterpret_cast<const Element*>(weight_.data());
    auto* dst = reinterpret_cast<Element*>(plain.data());
    for (int j = 0; j < n_out; ++j, dst += in_) {
      if (outputs[j] < 0) continue;
      const int64_t column = PackedOffset(1, outputs[j]);
      for (int k = 0; k < in_; ++k) dst[k] = packed[column + in_offsets_[k]];
    }
  };
  switch (element) {
    case 4:
      gather_columns(uint32_t{});
      break;
    case 2:
      gather_columns(uint16_t{});
      break;
    default:
      gather_columns(uint8_t{});
  }
  auto gather = [&](const FloatBuffer& from, FloatBuffer& to) {
    float* values = to.Reserve(n_out);
    for (int j = 0; j < n_out; ++j) values[j] = outputs[j] < 0 ? 0.f : from.data()[outputs[j]];
  };
  if (type_ == ComputeType::kInt8) {
    gather(weight_scales_, selected.weight_scales_);
    gather(column_offsets_, selected.column_offsets_);
  }
  if (has_bias_) gather(bias_, selected.bias_);
  selected.Pack(
      memory(memory::desc({in_, n_out}, WeightType(type_), tag::ba), CpuEngine(), plain.data()));
  selected.MakeBiasMemory();
  return selected;
}

int64_t Linear::memory_bytes() const {
  return static_cast<int64_t>(weight_.allocated_bytes() + weight_scales_.allocated_bytes() +
                              column_offsets_.allocated_bytes() + bias_.allocated_bytes() +
                              in_offsets_.capacity() * sizeof(int64_t));
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
  const int64_t column = PackedOffset(1, out_index);
  switch (type_) {
    case ComputeType::kFloat32: {
      const float* w = reinterpret_cast<const float*>(weight_.data()) + column;
      for (int k = 0; k < in_; ++k) dst[k] = w[in_offsets_[k]];
      break;
    }
    case ComputeType::kBFloat16: {
      const uint16_t* w = reinterpret_cast<const uint16_t*>(weight_.data()) + column;
      for (int k = 0; k < in_; ++k) dst[k] = BFloat16ToFloat(w[in_offsets_[k]]);
      break;
    }
    case ComputeType::kInt8: {
      const int8_t* w = reinterpret_cast<const int8_t*>(weight_.data()) + column;
      const float scale = weight_scales_.data()[out_index];
      for (int k = 0; k < in_; ++k) dst[k] = w[in_offsets_[k]] * scale;
      break;
    }
  }
}

void Linear::Forward(ComputeContext& ctx, const float* x, int64_t rows, float* y, Epilogue epilogue,
                     int64_t x_stride, int64_t y_stride) const {
  if (x_stride == 0) x_stride = in_;
  if (y_stride == 0) y_stride = out_;
  if (PhaseProfile* profile = ctx.phase_profile()) profile->AddMacs(rows * in_ * out_);
  // Large inputs go in blocks of kMaxRows: as fast, and the encoder's ever-changing
  // batch x length row counts then need primitives for a few remainders, not one per batch.
  for (int64_t first = 0; first < rows; first += kMaxRows) {
    ForwardBlock(ctx, x + first * x_stride, std::min(kMaxRows, rows - first), y + first * y_stride,
                 epilogue, x_stride, y_stride);
  }
}

void Linear::ForwardBlock(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                          Epilogue epilogue, int64_t x_stride, int64_t y_stride) const {
  // oneDNN's fast matmul kernels write dense rows only (given a row stride, oneDNN 2.6 falls back
  // to its reference kernel, slower and summing in another order): strided rows are computed
  // dense, then copied, but by int8 without swish or GELU, whose pass that scales the products
  // writes them where they go.
  const bool int8_writes_strided =
      type_ == ComputeType::kInt8 && epilogue != Epilogue::kSwish && epilogue != Epilogue::kGelu;
  if (y_stride != out_ && !int8_writes_strided) {
    float* dense = ctx.conversion_scratch().dense_output.Reserve(rows * out_);
    if (epilogue == Epilogue::kAddToOutput) {
      for (int64_t r = 0; r < rows; ++r) std::copy_n(y + r * y_stride, out_, dense + r * out_);
    }
    ForwardBlock(ctx, x, rows, dense, epilogue, x_stride, out_);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(dense + r * out_, out_, y + r * y_stride);
    return;
  }
  switch (type_) {
    case ComputeType::kFloat32:
      MatMul(ctx, memory::desc({rows, in_}, dt::f32, memory::dims{x_stride, 1}), x, rows, y,
             epilogue, has_bias_);
      break;
    case ComputeType::kBFloat16:
      ForwardBFloat16Block(ctx, x, rows, y, epilogue, x_stride);
      break;
    case ComputeType::kInt8:
      ForwardInt8Block(ctx, x, rows, y, epilogue, x_stride, y_stride);
      break;
  }
}

void Linear::ForwardBFloat16Block(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                                  Epilogue epilogue, int64_t x_stride) const {
  // One row goes as two (itself twice). Where the CPU has AMX, oneDNN computes one row with an
  // AVX-512 kernel and more with AMX tiles, and the two sum the products in different orders: a
  // row would not come out the same alone as with others, which batching requires, and the
  // difference, rounded to bfloat16 by the next op, can change the words. Two rows cost no more
  // than one: reading the weight is the work.
  ComputeContext::ConversionScratch& scratch = ctx.conversion_scratch();
  const int64_t padded_rows = std::max<int64_t>(rows, 2);
  auto* converted =
      reinterpret_cast<uint16_t*>(scratch.input.Reserve(padded_rows * in_ * sizeof(uint16_t)));
  ToBFloat16(x, rows, in_, x_stride, converted);
  const memory::desc x_md({padded_rows, in_}, dt::bf16, tag::ab);
  if (padded_rows == rows) {
    MatMul(ctx, x_md, converted, rows, y, epilogue, has_bias_);
    return;
  }
  std::copy_n(converted, in_, converted + in_);
  float* padded_y = scratch.products.Reserve(2 * out_);
  if (epilogue == Epilogue::kAddToOutput) {  // The residual, in both rows.
    std::copy_n(y, out_, padded_y);
    std::copy_n(y, out_, padded_y + out_);
  }
  MatMul(ctx, x_md, converted, padded_rows, padded_y, epilogue, has_bias_);
  std::copy_n(padded_y, out_, y);
}

void Linear::ForwardInt8Block(ComputeContext& ctx, const float* x, int64_t rows, float* y,
                              Epilogue epilogue, int64_t x_stride, int64_t y_stride) const {
  ComputeContext::ConversionScratch& scratch = ctx.conversion_scratch();
  uint8_t* quantized = scratch.input.Reserve(rows * in_);
  float* row_scales = scratch.row_scales.Reserve(rows);
  QuantizeRowsShifted(x, rows, in_, x_stride, quantized, row_scales);
  // The products go to y, dense, unless y holds the residual to add to or is strided.
  const bool accumulate = epilogue == Epilogue::kAddToOutput;
  float* products = accumulate || y_stride != out_ ? scratch.products.Reserve(rows * out_) : y;
  MatMul(ctx, memory::desc({rows, in_}, dt::u8, tag::ab), quantized, rows, products,
         Epilogue::kNone, /*with_bias=*/false);
  DequantizeRows(products, out_, rows, out_, row_scales, column_offsets_.data(),
                 weight_scales_.data(), has_bias_ ? bias_.data() : nullptr, accumulate,
                 epilogue == Epilogue::kRelu, y, y_stride);
  if (epilogue != Epilogue::kSwish && epilogue != Epilogue::kGelu) return;
  const auto algorithm = epilogue == Epilogue::kSwish ? dnnl::algorithm::eltwise_swish
                                                      : dnnl::algorithm::eltwise_gelu_erf;
  const float alpha = epilogue == Epilogue::kSwish ? 1.f : 0.f;
  const memory::desc y_md({rows, out_}, dt::f32, tag::ab);
  const ComputeContext::Arg args[] = {{DNNL_ARG_SRC, y_md, y}, {DNNL_ARG_DST, y_md, y}};
  ctx.Execute(
      {static_cast<int64_t>(OpKind::kActivation), rows, out_, static_cast<int64_t>(epilogue)},
      [&] {
        return dnnl::eltwise_forward::primitive_desc(
            {dnnl::prop_kind::forward_inference, algorithm, y_md, alpha, 0.f}, WithUserScratchpad(),
            ctx.engine());
      },
      args);
}

void Linear::MatMul(ComputeContext& ctx, const memory::desc& x_md, const void* x, int64_t rows,
                    float* y, Epilogue epilogue, bool with_bias) const {
  const int64_t x_stride = x_md.data.format_desc.blocking.strides[0];
  const PrimitiveKey key{static_cast<int64_t>(OpKind::kLinear),
                         static_cast<int64_t>(type_),
                         in_,
                         out_,
                         rows,
                         x_stride,
                         static_cast<int64_t>(epilogue),
                         with_bias};
  const ComputeContext::Arg args[] = {
      {DNNL_ARG_SRC, x_md, x},
      {DNNL_ARG_DST, memory::desc({rows, out_}, dt::f32, tag::ab), y},
      {DNNL_ARG_WEIGHTS, {}, nullptr, &weight_memory_},
      {DNNL_ARG_BIAS, {}, nullptr, &bias_memory_}};
  ctx.Execute(
      key, [&] { return MakeMatMul(x_md, out_, weight_desc_, with_bias, epilogue); },
      absl::MakeConstSpan(args, with_bias ? 4 : 3));
}

}  // namespace mtserve
