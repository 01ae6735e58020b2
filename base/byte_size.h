// A size in bytes as flags take it: "512MiB", "1GiB", "64KiB", "1000000" (bytes), or "0".
#ifndef MTSERVE_BASE_BYTE_SIZE_H_
#define MTSERVE_BASE_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace mtserve {

struct ByteSize {
  int64_t bytes = 0;
};

// Absl flag support: whole numbers with an optional binary suffix (KiB, MiB, GiB, TiB).
bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error);
std::string AbslUnparseFlag(ByteSize size);

// For messages: "412 MiB", "1.5 GiB", "900 bytes".
std::string FormatBytes(int64_t bytes);

}  // namespace mtserve

#endif  // MTSERVE_BASE_BYTE_SIZE_H_
