// A model.safetensors file's bytes through ParseSafetensors, what SafetensorsFile::Open runs on
// the mapped file: any bytes give tensors the loader can read safely, or an error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "model/safetensors.h"
#include "tests/test_lib/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<std::vector<mtserve::TensorInfo>> tensors =
      mtserve::ParseSafetensors("model.safetensors", absl::MakeConstSpan(data, size));
  if (!tensors.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(tensors.status()));
    return 0;
  }
  // What the loader relies on: each tensor's bytes inside the file (copied here, so that ASan
  // sees any read outside it), exactly as many as its shape and dtype make, and no two overlapping.
  const uint8_t* previous_end = nullptr;
  const mtserve::TensorInfo* previous = nullptr;
  for (const mtserve::TensorInfo& tensor : *tensors) {
    FUZZ_CHECK(tensor.data >= data && tensor.num_bytes <= size);
    FUZZ_CHECK(static_cast<size_t>(tensor.data - data) <= size - tensor.num_bytes);
    FUZZ_CHECK(static_cast<uint64_t>(tensor.NumElements()) * mtserve::DTypeSize(tensor.dtype) ==
               tensor.num_bytes);
    const std::vector<uint8_t> copy(tensor.data, tensor.data + tensor.num_bytes);
    if (previous != nullptr) FUZZ_CHECK(previous->name < tensor.name);  // Sorted, unique.
    previous = &tensor;
  }
  std::vector<const mtserve::TensorInfo*> by_offset;
  for (const mtserve::TensorInfo& tensor : *tensors) {
    if (tensor.num_bytes > 0) by_offset.push_back(&tensor);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->data < b->data; });
  for (const mtserve::TensorInfo* tensor : by_offset) {
    FUZZ_CHECK(previous_end == nullptr || tensor->data >= previous_end);
    previous_end = tensor->data + tensor->num_bytes;
  }
  return 0;
}
