#include "base/excerpt.h"

#include "absl/strings/str_cat.h"

namespace mtserve {

std::string Excerpt(absl::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so that no character is cut in two.
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(value.substr(0, end), "... (", value.size(), " bytes)");
}

}  // namespace mtserve
