#include "model/compute_type.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

// oneDNN's ISA values are bit sets: an ISA includes another when it has all of its bits.
bool HasIsa(dnnl::cpu_isa isa) {
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto wanted = static_cast<unsigned>(isa);
  return (effective & wanted) == wanted;
}

}  // namespace

absl::string_view ComputeTypeName(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32:
      return "float32";
    case ComputeType::kBFloat16:
      return "bfloat16";
    case ComputeType::kInt8:
      return "int8";
  }
  return "float32";
}

absl::StatusOr<ComputeType> ParseComputeType(absl::string_view name) {
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8}) {
    if (name == ComputeTypeName(type)) return type;
  }
  if (name == "auto") return AutoComputeType();
  return absl::InvalidArgumentError(
      absl::StrCat("compute type \"", name, "\" is not one of float32, bfloat16, int8, auto"));
}

ComputeType AutoComputeType() {
  return HasIsa(dnnl::cpu_isa::avx512_core_vnni) || HasIsa(dnnl::cpu_isa::avx2_vnni)
             ? ComputeType::kInt8
             : ComputeType::kFloat32;
}

absl::Status CheckComputeTypeSupported(ComputeType type) {
  if (type == ComputeType::kBFloat16 && !HasIsa(dnnl::cpu_isa::avx512_core)) {
    return absl::FailedPreconditionError(
        "compute type bfloat16 needs AVX-512 (avx512_core), which this CPU lacks (or "
        "ONEDNN_MAX_CPU_ISA hides); use float32 or int8");
  }
  return absl::OkStatus();
}

}  // namespace mtserve
