#include "model/ops/layer_norm.h"

#include <cstring>

namespace mtserve {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

LayerNorm::LayerNorm(const std::vector<float>& gamma, const std::vector<float>& beta, float epsilon)
    : dim_(static_cast<int>(gamma.size())), epsilon_(epsilon) {
  std::memcpy(gamma_.Reserve(dim_), gamma.data(), dim_ * sizeof(float));
  std::memcpy(beta_.Reserve(dim_), beta.data(), dim_ * sizeof(float));
  const memory::desc md({dim_}, dt::f32, tag::a);
  gamma_memory_ = memory(md, CpuEngine(), gamma_.data());
  beta_memory_ = memory(md, CpuEngine(), beta_.data());
}

void LayerNorm::Forward(ComputeContext& ctx, float* x, int64_t rows) const {
  if (rows == 0) return;
  memory::desc x_md({rows, dim_}, dt::f32, tag::ab);
  const PrimitiveKey key{static_cast<int64_t>(OpKind::kLayerNorm), rows, dim_,
                         static_cast<int64_t>(epsilon_ * 1e12)};
  auto make_pd = [&] {
    // Inference with scale and shift: mean and variance are computed, not given.
    dnnl::layer_normalization_forward::desc desc(
        dnnl::prop_kind::forward_inference, x_md, epsilon_,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    return dnnl::layer_normalization_forward::primitive_desc(desc, WithUserScratchpad(),
                                                             ctx.engine());
  };
  ctx.Execute(key, make_pd,
              {{DNNL_ARG_SRC, x_md, x},
               {DNNL_ARG_DST, x_md, x},
               {DNNL_ARG_SCALE, {}, nullptr, &gamma_memory_},
               {DNNL_ARG_SHIFT, {}, nullptr, &beta_memory_}});
}

}  // namespace mtserve
