// Whether a text is UTF-8, checked before anything else is done with it: every later step
// (sentence splitting, HTML parsing, tokenising) takes text to be well-formed.
#ifndef MTSERVE_TEXT_UTF8_H_
#define MTSERVE_TEXT_UTF8_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/utf8.h"  // IsValidUtf8.

namespace mtserve {

// An InvalidArgument naming `field` if `text` is not valid UTF-8.
absl::Status CheckUtf8(absl::string_view text, absl::string_view field);

// The first control character of valid UTF-8 `text` (C0, DEL, C1, U+2028, U+2029, and U+FEFF,
// the byte order mark, invisible in a term and taken for a file's BOM at a line's start: what a
// term of a glossary may not hold), or nullopt.
std::optional<uint32_t> FirstControlCharacter(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_UTF8_H_
