#include "base/utf8.h"

#include <cstddef>
#include <cstdint>

namespace mtserve {

bool IsValidUtf8(absl::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int length;
    uint32_t code_point;
    if ((c & 0xE0) == 0xC0) {
      length = 2;
      code_point = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code_point = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      code_point = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (int k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (s[i + k] & 0x3F);
    }
    static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinimum[length] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

}  // namespace mtserve
