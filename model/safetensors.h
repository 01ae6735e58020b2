// A read-only, memory-mapped safetensors file (https://github.com/huggingface/safetensors format):
// an 8-byte little-endian header length, a JSON header, then the tensor bytes.
#ifndef MTSERVE_MODEL_SAFETENSORS_H_
#define MTSERVE_MODEL_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mtserve {

// Every dtype of the safetensors format; only the floating ones can be converted to float.
enum class DType { kBool, kU8, kI8, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

const char* DTypeName(DType dtype);
size_t DTypeSize(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // Inside the mapping, valid while the file is open.
  size_t num_bytes = 0;

  int64_t NumElements() const;
};

// The tensors of a whole safetensors file held in `bytes`, validated as SafetensorsFile::Open
// describes (their `data` point into `bytes`); errors name `path`. Open runs it on the mapped file;
// it takes bytes so that the header's parsing can be fuzzed without files (tests/fuzz/).
absl::StatusOr<std::vector<TensorInfo>> ParseSafetensors(const std::string& path,
                                                         absl::Span<const uint8_t> bytes);

class SafetensorsFile {
 public:
  // Maps the file and validates the whole header before any tensor byte is read: header length
  // inside the file, valid JSON object, known dtypes, non-negative shapes whose size matches the
  // byte range, ranges inside the data area and not overlapping. Errors name the file and tensor.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // nullptr when absent.
  const TensorInfo* Find(absl::string_view name) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  // Converts a F32, F16 or BF16 tensor to float into dst[0 .. NumElements()), then tells the
  // kernel the mapped pages are no longer needed (so they do not stay in the resident set).
  // Other dtypes give InvalidArgument naming the file and tensor.
  absl::Status ReadAsFloat(const TensorInfo& tensor, float* dst) const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::vector<TensorInfo> tensors_;  // Sorted by name.
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_SAFETENSORS_H_
