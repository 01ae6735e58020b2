#include "model/ops/compute_context.h"

#include <omp.h>

#include "model/ops/phase_profile.h"

namespace mtserve {

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* engine = [] {
    // oneDNN's process-wide cache of primitives (and their JIT code), shared by the workers.
    // Its default (1,024) would hold on to that many shapes beside each worker's own cache.
    dnnl::set_primitive_cache_capacity(512);
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *engine;
}

ComputeContext::ComputeContext(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : 1),
      stream_(CpuEngine()),
      phase_profile_(PhaseProfilesEnabled() ? std::make_unique<PhaseProfile>() : nullptr) {}

ComputeContext::~ComputeContext() = default;

dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void ComputeContext::BindToCallingThread() const { omp_set_num_threads(num_threads_); }

}  // namespace mtserve
