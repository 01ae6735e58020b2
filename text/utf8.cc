#include "text/utf8.h"

#include <cstddef>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace mtserve {

absl::Status CheckUtf8(absl::string_view text, absl::string_view field) {
  if (IsValidUtf8(text)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " is not valid UTF-8"));
}

std::optional<uint32_t> FirstControlCharacter(absl::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size(); ++i) {
    if (bytes[i] < 0x20 || bytes[i] == 0x7F) return bytes[i];
    if (bytes[i] == 0xC2 && i + 1 < text.size() && bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9F) {
      return bytes[i + 1];
    }
    if (bytes[i] == 0xE2 && i + 2 < text.size() && bytes[i + 1] == 0x80 &&
        (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)) {
      return 0x2000u + bytes[i + 2] - 0x80u;
    }
    if (bytes[i] == 0xEF && i + 2 < text.size() && bytes[i + 1] == 0xBB && bytes[i + 2] == 0xBF) {
      return 0xFEFFu;
    }
  }
  return std::nullopt;
}

}  // namespace mtserve
