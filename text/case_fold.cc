#include "text/case_fold.h"

#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <cstdint>

namespace mtserve {

FoldedText FoldCase(absl::string_view text) {
  FoldedText out;
  out.text.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    const int32_t begin = i;
    UChar32 c;
    U8_NEXT(s, i, length, c);
    const size_t before = out.text.size();
    if (c < 0) {
      out.text.append(text.data() + begin, i - begin);
    } else {
      UChar in[2];
      int32_t in_length = 0;
      U16_APPEND_UNSAFE(in, in_length, c);
      UChar folded[8];  // Full case folding maps one code point to at most three.
      UErrorCode status = U_ZERO_ERROR;
      const int32_t folded_length =
          u_strFoldCase(folded, 8, in, in_length, U_FOLD_CASE_DEFAULT, &status);
      if (U_FAILURE(status)) {
        out.text.append(text.data() + begin, i - begin);
      } else {
        for (int32_t j = 0; j < folded_length;) {
          UChar32 f;
          U16_NEXT(folded, j, folded_length, f);
          char bytes[4];
          int32_t n = 0;
          U8_APPEND_UNSAFE(bytes, n, f);
          out.text.append(bytes, n);
        }
      }
    }
    for (size_t b = before; b < out.text.size(); ++b) {
      out.origin.push_back(static_cast<size_t>(begin));
      out.starts.push_back(b == before);
    }
  }
  out.origin.push_back(text.size());
  out.starts.push_back(true);
  return out;
}

}  // namespace mtserve
