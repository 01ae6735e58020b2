#include "text/words.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace mtserve {

Segment WidenToWords(absl::string_view text, Segment range) {
  const size_t size = text.size();
  auto is_space = [&](size_t i) {
    return absl::ascii_isspace(static_cast<unsigned char>(text[i]));
  };
  size_t begin = std::min(range.begin, size);
  size_t end = std::min(std::max(range.end, begin), size);
  if (begin < size && is_space(begin)) {
    while (begin < end && is_space(begin)) ++begin;
  } else {
    while (begin > 0 && !is_space(begin - 1)) --begin;
  }
  const size_t given_end = end;
  while (end > 0 && end < size && !is_space(end - 1) && !is_space(end)) ++end;
  // Punctuation after the word stays outside: "<b>Schnee</b>." rather than "<b>Schnee.</b>".
  while (end > given_end && absl::ascii_ispunct(static_cast<unsigned char>(text[end - 1]))) --end;
  while (end > begin && is_space(end - 1)) --end;
  return {begin, std::max(begin, end)};
}

}  // namespace mtserve
