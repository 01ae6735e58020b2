// The arithmetic a model's linear layers compute in. A property of each Linear op and its packed
// weights (ops/linear.h), chosen when a model loads; everything else (embeddings' positions,
// layer norm, softmax, attention) stays float32 in every type.
#ifndef MTSERVE_MODEL_COMPUTE_TYPE_H_
#define MTSERVE_MODEL_COMPUTE_TYPE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

enum class ComputeType {
  kFloat32,
  // Weights and activations rounded to bfloat16, products accumulated in float32.
  kBFloat16,
  // Weights quantised per output channel and activations per row to int8, products accumulated
  // exactly in int32.
  kInt8,
};

// "float32", "bfloat16" or "int8".
absl::string_view ComputeTypeName(ComputeType type);

// Parses a name above, or "auto": the fastest type this CPU runs well (AutoComputeType()).
// InvalidArgument naming the accepted values otherwise.
absl::StatusOr<ComputeType> ParseComputeType(absl::string_view name);

// int8 where the CPU multiplies int8 in one instruction (AVX-512 VNNI or AVX-VNNI: about four
// times float32's rate), float32 otherwise. Never bfloat16: where the CPU has BF16 it has VNNI,
// and int8 is faster still.
ComputeType AutoComputeType();

// OK when this CPU can run `type`. bfloat16 needs AVX-512 (oneDNN emulates the bf16 products on
// AVX-512 without BF16, slowly, and has no bf16 kernels below AVX-512): FailedPrecondition naming
// the type and the missing feature. float32 and int8 run on any x86-64 oneDNN supports.
absl::Status CheckComputeTypeSupported(ComputeType type);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_COMPUTE_TYPE_H_
