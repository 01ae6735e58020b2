#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "model/float16.h"
#include "nlohmann/json.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define MTSERVE_HAVE_F16C_PATH 1
#endif

namespace mtserve {
namespace {

using Json = nlohmann::json;

// The format is little-endian and the tensor bytes are used in place.
static_assert(std::endian::native == std::endian::little, "safetensors needs a little-endian host");

struct DTypeEntry {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "BOOL", 1}, {DType::kU8, "U8", 1},   {DType::kI8, "I8", 1},
    {DType::kI16, "I16", 2},   {DType::kU16, "U16", 2}, {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2}, {DType::kI32, "I32", 4}, {DType::kU32, "U32", 4},
    {DType::kF32, "F32", 4},   {DType::kF64, "F64", 8}, {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
};

std::optional<DType> ParseDType(absl::string_view name) {
  for (const DTypeEntry& entry : kDTypes) {
    if (name == entry.name) return entry.dtype;
  }
  return std::nullopt;
}

// A non-negative JSON integer, or nullopt.
std::optional<uint64_t> AsUnsigned(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v >= 0) return static_cast<uint64_t>(v);
  }
  return std::nullopt;
}

void ConvertF16Scalar(const uint8_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t half;
    std::memcpy(&half, src + 2 * i, sizeof(half));
    dst[i] = HalfToFloat(half);
  }
}

#ifdef MTSERVE_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) void ConvertF16F16c(const uint8_t* src, float* dst,
                                                        size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(half));
  }
  ConvertF16Scalar(src + 2 * i, dst + i, count - i);
}

bool CpuHasF16c() {
  // F16C from CPUID leaf 1 itself: clang's __builtin_cpu_supports does not know "f16c".
  static const bool has = [] {
    unsigned int eax, ebx, ecx, edx;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return has;
}
#endif

void ConvertF16(const uint8_t* src, float* dst, size_t count) {
#ifdef MTSERVE_HAVE_F16C_PATH
  if (CpuHasF16c()) {
    ConvertF16F16c(src, dst, count);
    return;
  }
#endif
  ConvertF16Scalar(src, dst, count);
}

void ConvertBF16(const uint8_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t bf16;
    std::memcpy(&bf16, src + 2 * i, sizeof(bf16));
    dst[i] = BFloat16ToFloat(bf16);
  }
}

// Lets the kernel drop the pages lying entirely inside [begin, begin + size): the caller has its
// own float copy, and pages shared with a neighbouring tensor may still be needed.
void ReleasePages(const uint8_t* begin, size_t size) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + size) / page * page;
  if (start < end) {
    // Advisory only: failure just leaves the pages resident.
    madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
  }
}

// Parses and validates one header entry (everything except overlap with other entries).
absl::StatusOr<TensorInfo> ParseEntry(const std::string& path, const std::string& name,
                                      const Json& entry, const uint8_t* data, uint64_t data_size) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", Excerpt(name), "': ", what));
  };
  if (!entry.is_object()) {
    return error(absl::StrCat("header entry is not an object: ", DescribeJson(entry)));
  }

  TensorInfo info;
  info.name = name;

  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) return error("missing \"dtype\"");
  if (!dtype_it->is_string())
    return error(absl::StrCat("dtype is not a string: ", DescribeJson(*dtype_it)));
  const std::string dtype_name = dtype_it->get<std::string>();
  const std::optional<DType> dtype = ParseDType(dtype_name);
  if (!dtype.has_value()) return error(absl::StrCat("unknown dtype '", Excerpt(dtype_name), "'"));
  info.dtype = *dtype;

  auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) return error("missing \"shape\"");
  if (!shape_it->is_array())
    return error(absl::StrCat("shape is not an array: ", DescribeJson(*shape_it)));
  uint64_t num_elements = 1;
  bool overflow = false;
  bool has_zero_dim = false;
  for (const Json& dim_json : *shape_it) {
    const std::optional<uint64_t> dim = AsUnsigned(dim_json);
    if (!dim.has_value() || *dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return error(absl::StrCat("shape ", DescribeJson(*shape_it),
                                " is not a list of non-negative integers"));
    }
    info.shape.push_back(static_cast<int64_t>(*dim));
    // A zero dimension makes the tensor empty whatever the other dimensions are.
    has_zero_dim |= *dim == 0;
    overflow |= __builtin_mul_overflow(num_elements, *dim, &num_elements);
  }
  uint64_t expected_bytes = 0;
  overflow |= __builtin_mul_overflow(num_elements, DTypeSize(info.dtype), &expected_bytes);
  overflow |= num_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (has_zero_dim) {
    expected_bytes = 0;
  } else if (overflow) {
    return error(absl::StrCat("shape ", DescribeJson(*shape_it), " is too large"));
  }

  auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end()) return error("missing \"data_offsets\"");
  const Json& offsets = *offsets_it;
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = AsUnsigned(offsets[0]);
    end = AsUnsigned(offsets[1]);
  }
  if (!begin.has_value() || !end.has_value()) {
    return error(absl::StrCat("data_offsets ", DescribeJson(offsets),
                              " is not a pair of non-negative integers"));
  }
  if (*begin > *end) {
    return error(absl::StrCat("data_offsets [", *begin, ", ", *end, "] has begin after end"));
  }
  if (*end > data_size) {
    return error(absl::StrCat("data_offsets [", *begin, ", ", *end, "] go past the end of the ",
                              data_size, "-byte data area (file truncated?)"));
  }
  if (*end - *begin != expected_bytes) {
    return error(absl::StrCat("data_offsets [", *begin, ", ", *end, "] hold ", *end - *begin,
                              " bytes, but shape ", DescribeJson(*shape_it), " of ", dtype_name,
                              " needs ", expected_bytes));
  }
  info.data = data + *begin;
  info.num_bytes = static_cast<size_t>(expected_bytes);
  return info;
}

absl::Status ValidateMetadata(const std::string& path, const Json& metadata) {
  const auto error = absl::InvalidArgumentError(
      absl::StrCat(path, ": \"__metadata__\" is not an object of strings"));
  if (!metadata.is_object()) return error;
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) return error;
  }
  return absl::OkStatus();
}

}  // namespace

const char* DTypeName(DType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry.name;
  }
  return "UNKNOWN";
}

size_t DTypeSize(DType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry.size;
  }
  return 0;
}

int64_t TensorInfo::NumElements() const {
  // Open checked that the product fits unless a dimension is zero.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

absl::StatusOr<std::vector<TensorInfo>> ParseSafetensors(const std::string& path,
                                                         absl::Span<const uint8_t> bytes) {
  const uint64_t file_size = bytes.size();
  if (file_size < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": file is ", file_size, " bytes, shorter than the 8-byte header length"));
  }
  uint64_t header_size;
  std::memcpy(&header_size, bytes.data(), sizeof(header_size));
  if (header_size > file_size - 8) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header length ", header_size,
                                                   " goes past the end of the ", file_size,
                                                   "-byte file"));
  }
  // The format's own limit (safetensors refuses larger headers).
  constexpr uint64_t kMaxHeaderBytes = 100'000'000;
  if (header_size > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header length ", header_size,
                                                   " is over the format's limit of ",
                                                   kMaxHeaderBytes, " bytes"));
  }
  const char* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  MT_ASSIGN_OR_RETURN(const Json header, ParseJson(absl::string_view(header_begin, header_size),
                                                   absl::StrCat(path, " (header)")));
  if (!header.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header is ", DescribeJson(header), ", not a JSON object"));
  }

  const uint8_t* data = bytes.data() + 8 + header_size;
  const uint64_t data_size = file_size - 8 - header_size;
  std::vector<TensorInfo> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      MT_RETURN_IF_ERROR(ValidateMetadata(path, entry));
      continue;
    }
    MT_ASSIGN_OR_RETURN(TensorInfo info, ParseEntry(path, name, entry, data, data_size));
    tensors.push_back(std::move(info));
  }

  // Overlap check: sort the non-empty ranges by start; each must begin at or after the furthest
  // end seen so far. Empty tensors occupy no bytes and cannot overlap anything.
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& tensor : tensors) {
    if (tensor.num_bytes > 0) by_offset.push_back(&tensor);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->data != b->data ? a->data < b->data : a->num_bytes < b->num_bytes;
  });
  const TensorInfo* furthest = nullptr;
  for (const TensorInfo* tensor : by_offset) {
    if (furthest != nullptr && tensor->data < furthest->data + furthest->num_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor '", Excerpt(tensor->name), "' (data_offsets [", tensor->data - data, ", ",
          tensor->data - data + tensor->num_bytes, "]) overlaps tensor '", Excerpt(furthest->name),
          "' (data_offsets [", furthest->data - data, ", ",
          furthest->data - data + furthest->num_bytes, "])"));
    }
    if (furthest == nullptr ||
        tensor->data + tensor->num_bytes > furthest->data + furthest->num_bytes) {
      furthest = tensor;
    }
  }

  // nlohmann::json objects iterate in key order, but do not rely on it for Find's binary search.
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  return tensors;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": file not found"));
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open: ", std::strerror(err)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot stat: ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  const size_t file_size = static_cast<size_t>(st.st_size);

  // The destructor unmaps from here on.
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  // An empty file cannot be mapped; ParseSafetensors refuses it as too short.
  if (file_size > 0) {
    void* map = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int mmap_errno = errno;
    if (map == MAP_FAILED) {
      close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": cannot mmap: ", std::strerror(mmap_errno)));
    }
    file->map_ = map;
    file->map_size_ = file_size;
  }
  close(fd);  // The mapping keeps the file referenced.
  MT_ASSIGN_OR_RETURN(
      file->tensors_,
      ParseSafetensors(path,
                       absl::MakeConstSpan(static_cast<const uint8_t*>(file->map_), file_size)));
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) munmap(map_, map_size_);
}

const TensorInfo* SafetensorsFile::Find(absl::string_view name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const TensorInfo& tensor, absl::string_view key) { return tensor.name < key; });
  if (it == tensors_.end() || it->name != name) return nullptr;
  return &*it;
}

absl::Status SafetensorsFile::ReadAsFloat(const TensorInfo& tensor, float* dst) const {
  const size_t count = static_cast<size_t>(tensor.NumElements());
  switch (tensor.dtype) {
    case DType::kF32:
      std::memcpy(dst, tensor.data, count * sizeof(float));
      break;
    case DType::kF16:
      ConvertF16(tensor.data, dst, count);
      break;
    case DType::kBF16:
      ConvertBF16(tensor.data, dst, count);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor '", tensor.name,
                                                     "' has dtype ", DTypeName(tensor.dtype),
                                                     ", which cannot be read as float"));
  }

  ReleasePages(tensor.data, tensor.num_bytes);
  return absl::OkStatus();
}

}  // namespace mtserve
