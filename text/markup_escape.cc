#include "text/markup_escape.h"

namespace mtserve {

void AppendMarkupEscaped(absl::string_view text, bool attribute, std::string& out) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&#39;" : "'";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace mtserve
