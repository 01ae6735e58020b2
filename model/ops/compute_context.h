// What one worker thread needs to run ops: the oneDNN engine and stream, its OpenMP thread count,
// a cache of the primitives it has created, so that a shape's primitive is made once, and one
// scratchpad that all of them share (with oneDNN's default, every cached primitive would keep its
// own scratch memory alive: hundreds of megabytes over a few hundred shapes).
//
// Primitives are made for exact shapes, each with JIT-compiled code (tens of kilobytes), and a
// server sees ever new shapes: a cache that kept them all grew without end under steady load.
// The cache keeps the kMaxCachedPrimitives most recently used; oneDNN's own process-wide cache
// (whose capacity CpuEngine() sets) makes a shape evicted here cheap to get back while another
// worker still uses it.
//
// Not thread-safe: each thread that computes owns one ComputeContext (its scratchpad serves one
// primitive at a time). Weights, and the primitives themselves, may be shared.
#ifndef MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
#define MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_

#include <cstdint>
#include <list>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "model/ops/aligned_buffer.h"

namespace mtserve {

class PhaseProfile;

// The process-wide CPU engine (engines are thread-safe and cheap to share).
const dnnl::engine& CpuEngine();

// Identifies a primitive: which op kind and every dimension, stride and flag it was built for.
// Held inline (an op's key has at most 8 values): each op call builds one, and a heap allocation
// per call was a per cent of a decoding step.
using PrimitiveKey = absl::InlinedVector<int64_t, 8>;

class ComputeContext {
 public:
  // Profiles its phases when phase profiles are enabled (phase_profile.h) at construction.
  explicit ComputeContext(int num_threads);
  ~ComputeContext();
  ComputeContext(const ComputeContext&) = delete;
  ComputeContext& operator=(const ComputeContext&) = delete;

  int num_threads() const { return num_threads_; }
  const dnnl::engine& engine() const { return CpuEngine(); }
  dnnl::stream& stream() { return stream_; }

  // Makes this context's thread count the calling thread's OpenMP team size. Call at the start of
  // each entry point: the count is per calling thread in OpenMP.
  void BindToCallingThread() const;

  // One argument of a primitive: a buffer laid out as `desc` (its memory object is made on the
  // primitive's first run and only re-pointed afterwards: making memory objects is a large share
  // of a small op's cost), or a memory object its owner made once (weights).
  struct Arg {
    int id;
    dnnl::memory::desc desc;
    const void* data = nullptr;
    const dnnl::memory* memory = nullptr;
  };

  // Runs the primitive cached under `key`, first created from `make_pd()` (a primitive
  // descriptor built with WithUserScratchpad), with `args` plus the shared scratchpad. Every call
  // with the same key passes the same argument ids with the same descriptors.
  template <typename MakePd>
  void Execute(const PrimitiveKey& key, MakePd&& make_pd, absl::Span<const Arg> args) {
    auto it = primitives_.find(key);
    if (it != primitives_.end()) {
      recency_.splice(recency_.begin(), recency_, it->second.recency);
    } else {
      if (primitives_.size() >= kMaxCachedPrimitives) {
        primitives_.erase(recency_.back());
        recency_.pop_back();
      }
      const auto pd = make_pd();
      recency_.push_front(key);
      Cached cached{dnnl::primitive(pd), pd.scratchpad_desc(), {}, recency_.begin()};
      ++primitives_created_;
      for (const Arg& arg : args) {
        cached.args.emplace(arg.id, arg.memory != nullptr
                                        ? *arg.memory
                                        : dnnl::memory(arg.desc, engine(), DNNL_MEMORY_NONE));
      }
      if (cached.scratchpad.get_size() > 0) {
        cached.args.emplace(DNNL_ARG_SCRATCHPAD,
                            dnnl::memory(cached.scratchpad, engine(), DNNL_MEMORY_NONE));
      }
      it = primitives_.emplace(key, std::move(cached)).first;
    }
    Cached& cached = it->second;
    for (const Arg& arg : args) {
      dnnl::memory& memory = cached.args.find(arg.id)->second;
      if (arg.memory != nullptr) {
        memory = *arg.memory;  // Layers of one shape share the primitive, not the weights.
      } else {
        memory.set_data_handle(const_cast<void*>(arg.data));
      }
    }
    if (cached.scratchpad.get_size() > 0) {
      cached.args.find(DNNL_ARG_SCRATCHPAD)
          ->second.set_data_handle(
              scratchpad_.Reserve(cached.scratchpad.get_size() / sizeof(float) + 1));
    }
    cached.primitive.execute(stream_, cached.args);
  }
  size_t num_cached_primitives() const { return primitives_.size(); }
  // Primitives made so far (more than are cached once the cache is full).
  int64_t primitives_created() const { return primitives_created_; }

  // Scratch of ops that convert their input before a primitive runs (Linear in bfloat16 and
  // int8): the converted rows, their scales, and int8 products that must not overwrite the
  // output. Each op uses them only during its call; they grow to the largest call and stay.
  struct ConversionScratch {
    AlignedBuffer<uint8_t> input;
    FloatBuffer row_scales;
    FloatBuffer products;
    FloatBuffer dense_output;  // A Linear's rows before they are copied to a strided output.
  };
  ConversionScratch& conversion_scratch() { return conversion_scratch_; }

  // Null unless this context profiles its phases.
  PhaseProfile* phase_profile() const { return phase_profile_.get(); }

  // More than the shapes a worker uses over and over, few enough that
  // their code stays small.
  static constexpr size_t kMaxCachedPrimitives = 1024;

 private:
  struct Cached {
    dnnl::primitive primitive;
    dnnl::memory::desc scratchpad;
    std::unordered_map<int, dnnl::memory> args;  // Re-pointed at each run.
    std::list<PrimitiveKey>::iterator recency;
  };
  int num_threads_;
  dnnl::stream stream_;
  absl::flat_hash_map<PrimitiveKey, Cached> primitives_;
  std::list<PrimitiveKey> recency_;  // Most recently used first.
  int64_t primitives_created_ = 0;
  FloatBuffer scratchpad_;
  ConversionScratch conversion_scratch_;
  std::unique_ptr<PhaseProfile> phase_profile_;
};

// `attr` with the scratchpad left to the caller: ComputeContext::Execute provides it.
dnnl::primitive_attr WithUserScratchpad(dnnl::primitive_attr attr = {});

// Op identifiers used as the first element of a PrimitiveKey.
enum class OpKind : int64_t {
  kLinear = 1,
  kSoftmax,
  kLogSoftmax,
  kActivation,
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_COMPUTE_CONTEXT_H_
