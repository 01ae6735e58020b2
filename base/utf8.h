// Whether bytes are well-formed UTF-8: the one check, for every layer that reads text (text/utf8.h
// adds what the text formats need on top of it).
#ifndef MTSERVE_BASE_UTF8_H_
#define MTSERVE_BASE_UTF8_H_

#include "absl/strings/string_view.h"

namespace mtserve {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_BASE_UTF8_H_
