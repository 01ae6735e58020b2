// Text written into HTML or XML markup: the one escaper of the formats that write markup around
// translations (HTML documents, EPUB's XHTML and package documents, OpenDocument's paragraphs).
#ifndef MTSERVE_TEXT_MARKUP_ESCAPE_H_
#define MTSERVE_TEXT_MARKUP_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace mtserve {

// Appends `text` to `out` with "&", "<" and ">" escaped, and in an attribute's value (quoted
// either way) '"' and "'" too: "&amp;", "&lt;", "&gt;", "&quot;", "&#39;", which HTML and XML
// both read.
void AppendMarkupEscaped(absl::string_view text, bool attribute, std::string& out);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_MARKUP_ESCAPE_H_
