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

Segment OutsideForms(absl::string_view text, Segment range, absl::Span<const Segment> forms,
                     bool shrink) {
  // The form `position` is strictly inside, if any: the first to end after it.
  auto inside = [&](size_t position) -> const Segment* {
    const auto form = std::upper_bound(forms.begin(), forms.end(), position,
                                       [](size_t p, const Segment& f) { return p < f.end; });
    return form != forms.end() && form->begin < position ? &*form : nullptr;
  };
  if (range.begin == range.end) {
    const Segment* form = inside(range.begin);
    if (form == nullptr) return range;
    if (range.begin - form->begin <= form->end - range.begin) return {form->begin, form->begin};
    size_t at = std::min(form->end, text.size());
    while (at < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[at]))) ++at;
    return {at, at};
  }
  if (const Segment* form = inside(range.begin)) range.begin = shrink ? form->end : form->begin;
  if (const Segment* form = inside(range.end)) range.end = shrink ? form->begin : form->end;
  range.end = std::max(range.end, range.begin);
  return range;
}

}  // namespace mtserve
