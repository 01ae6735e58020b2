// application/x-www-form-urlencoded pairs (url_form.h).
#include "base/url_form.h"

#include "absl/strings/str_split.h"

namespace mtserve {

std::string FormDecode(absl::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
               hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseUrlForm(absl::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (absl::string_view pair : absl::StrSplit(text, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> name_value =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    pairs.emplace_back(FormDecode(name_value.first), FormDecode(name_value.second));
  }
  return pairs;
}

}  // namespace mtserve
