// What one worker thread needs to run ops: the oneDNN engine and stream, its OpenMP thread count,
// a cache of the primitives it has created, so that no primitive is created twice, and one
// scratchpad that all of them share (with oneDNN's default, every cached primitive would keep its
// own scratch memory alive: hundreds of megabytes over a few hundred shapes).
//
// Not thread-safe: each thread that computes owns one ComputeContext (its scratchpad serves one
// primitive at a time). Weights, and the primitives themselves, may be shared.
#ifndef MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
#define MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/ops/aligned_buffer.h"

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

  // Runs the primitive cached under `key`, first created from `make_pd()` (a primitive
  // descriptor built with WithUserScratchpad), with `args` plus the shared scratchpad.
  template <typename MakePd>
  void Execute(const PrimitiveKey& key, MakePd&& make_pd,
               std::unordered_map<int, dnnl::memory>&& args) {
    auto it = primitives_.find(key);
    if (it == primitives_.end()) {
      const auto pd = make_pd();
      it = primitives_.emplace(key, Cached{dnnl::primitive(pd), pd.scratchpad_desc()}).first;
    }
    const Cached& cached = it->second;
    if (cached.scratchpad.get_size() > 0) {
      args.emplace(
          DNNL_ARG_SCRATCHPAD,
          dnnl::memory(cached.scratchpad, engine(),
                       scratchpad_.Reserve(cached.scratchpad.get_size() / sizeof(float) + 1)));
    }
    cached.primitive.execute(stream_, args);
  }
  size_t num_cached_primitives() const { return primitives_.size(); }

 private:
  struct Cached {
    dnnl::primitive primitive;
    dnnl::memory::desc scratchpad;
  };
  int num_threads_;
  dnnl::stream stream_;
  absl::flat_hash_map<PrimitiveKey, Cached> primitives_;
  FloatBuffer scratchpad_;
};

// `attr` with the scratchpad left to the caller: ComputeContext::Execute provides it.
dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr = {});

// Op identifiers used as the first element of a PrimitiveKey.
enum class OpKind : int64_t { kLinear = 1, kLayerNorm, kSoftmax, kLogSoftmax, kBatchedMatMul };

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
