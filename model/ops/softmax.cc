#include "model/ops/softmax.h"

namespace mtserve {
namespace {

using dnnl::memory;

void Run(ComputeContext& ctx, float* x, int64_t rows, int64_t cols, bool log) {
  if (rows == 0) return;
  memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  const ComputeContext::Arg args[] = {{DNNL_ARG_SRC, md, x}, {DNNL_ARG_DST, md, x}};
  if (log) {
    ctx.Execute(
        {static_cast<int64_t>(OpKind::kLogSoftmax), rows, cols},
        [&] {
          return dnnl::logsoftmax_forward::primitive_desc(
              {dnnl::prop_kind::forward_inference, md, 1}, WithUserScratchpad(), ctx.engine());
        },
        args);
  } else {
    ctx.Execute(
        {static_cast<int64_t>(OpKind::kSoftmax), rows, cols},
        [&] {
          return dnnl::softmax_forward::primitive_desc({dnnl::prop_kind::forward_inference, md, 1},
                                                       WithUserScratchpad(), ctx.engine());
        },
        args);
  }
}

}  // namespace

void Softmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols) {
  Run(ctx, x, rows, cols, /*log=*/false);
}

void LogSoftmax(ComputeContext& ctx, float* x, int64_t rows, int64_t cols) {
  Run(ctx, x, rows, cols, /*log=*/true);
}

}  // namespace mtserve
