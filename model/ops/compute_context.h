// What one worker thread needs to run ops: the oneDNN engine and stream, its OpenMP thread count,
// and a cache of the primitives it has created, so that no primitive is created twice.
//
// Not thread-safe: each thread that computes owns one ComputeContext (primitives created with the
// default scratchpad mode must not run concurrently with themselves). Weights are shared.
#ifndef MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
#define MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "absl/container/flat_hash_map.h"

namespace mtserve {

// The process-wide CPU engine (engines are thread-safe and cheap to share).
const dnnl::engine& CpuEngine();

// Identifies a primitive: which op kind and every dimension, stride and flag it was built for.
using PrimitiveKey = std::vector<int64_t>;

class ComputeContext {
 public:
  explicit ComputeContext(int num_threads);

  int num_threads() const { return num_threads_; }
  const dnnl::engine& engine() const { return CpuEngine(); }
  dnnl::stream& stream() { return stream_; }

  // Makes this context's thread count the calling thread's OpenMP team size. Call at the start of
  // each entry point: the count is per calling thread in OpenMP.
  void BindToCallingThread() const;

  // The primitive cached under `key`, created by `make()` on first use.
  template <typename Make>
  const dnnl::primitive& Primitive(const PrimitiveKey& key, Make&& make) {
    auto it = primitives_.find(key);
    if (it == primitives_.end()) it = primitives_.emplace(key, make()).first;
    return it->second;
  }
  size_t num_cached_primitives() const { return primitives_.size(); }

 private:
  int num_threads_;
  dnnl::stream stream_;
  absl::flat_hash_map<PrimitiveKey, dnnl::primitive> primitives_;
};

// Op identifiers used as the first element of a PrimitiveKey.
enum class OpKind : int64_t { kLinear = 1, kLayerNorm, kSoftmax, kLogSoftmax, kBatchedMatMul };

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
