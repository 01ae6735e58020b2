#include "model/ops/softmax.h"

namespace mtserve {
namespace {

using dnnl::memory;

void Run(ComputeContext& ctx, float* x, int64_t rows, int64_t cols, bool log) {
  if (rows == 0) return;
  memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  const OpKind kind = log ? OpKind::kLogSoftmax : OpKind::kSoftmax;
  const dnnl::primitive& softmax =
      ctx.Primitive({static_cast<int64_t>(kind), rows, cols}, [&]() -> dnnl::primitive {
        if (log) {
          return dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(
              {dnnl::prop_kind::forward_inference, md, 1}, ctx.engine()));
        }
        return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
            {dnnl::prop_kind::forward_inference, md, 1}, ctx.engine()));
      });
  memory data(md, ctx.engine(), x);
  softmax.execute(ctx.stream(), {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
}

}  // namespace

void Softmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols) {
  Run(ctx, x, rows, cols, /*log=*/false);
}

void LogSoftmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols) {
  Run(ctx, x, rows, cols, /*log=*/true);
}

}  // namespace mtserve
