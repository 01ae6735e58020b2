#include "model/ops/batched_matmul.h"

#include "model/ops/phase_profile.h"

namespace mtserve {
namespace {

using dnnl::memory;

memory::desc Desc(const StridedView& v) {
  return memory::desc(memory::dims(v.dims.begin(), v.dims.end()), memory::data_type::f32,
                      memory::dims(v.strides.begin(), v.strides.end()));
}

void AppendShape(PrimitiveKey& key, const StridedView& v) {
  key.insert(key.end(), v.dims.begin(), v.dims.end());
  key.insert(key.end(), v.strides.begin(), v.strides.end());
}

}  // namespace

void BatchedMatMul(ComputeContext& ctx, const StridedView& a, const StridedView& b,
                   const StridedView& c, const StridedView* add) {
  if (PhaseProfile* profile = ctx.phase_profile()) {
    profile->AddMacs(a.dims[0] * a.dims[1] * a.dims[2] * a.dims[3] * b.dims[3]);
  }
  PrimitiveKey key{static_cast<int64_t>(OpKind::kBatchedMatMul), add != nullptr};
  AppendShape(key, a);
  AppendShape(key, b);
  AppendShape(key, c);
  if (add != nullptr) AppendShape(key, *add);
  auto make_pd = [&] {
    dnnl::primitive_attr attr = WithUserScratchpad();
    if (add != nullptr) {
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_add, Desc(*add));
      attr.set_post_ops(ops);
    }
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(Desc(a), Desc(b), Desc(c)), attr,
                                        ctx.engine());
  };
  const ComputeContext::Arg args[] = {
      {DNNL_ARG_SRC, Desc(a), a.data},
      {DNNL_ARG_WEIGHTS, Desc(b), b.data},
      {DNNL_ARG_DST, Desc(c), c.data},
      {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
       add != nullptr ? Desc(*add) : memory::desc(), add != nullptr ? add->data : nullptr}};
  ctx.Execute(key, make_pd, absl::MakeConstSpan(args, add != nullptr ? 4 : 3));
}

}  // namespace mtserve
