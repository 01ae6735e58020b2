#include "text/office/xml_scan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/markup_escape.h"

namespace mtserve {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Where the markup that starts at `i` ends: one past `terminator`, or the text's end.
size_t Past(absl::string_view xml, size_t i, absl::string_view terminator) {
  const size_t at = xml.find(terminator, i);
  return at == absl::string_view::npos ? xml.size() : at + terminator.size();
}

// One past the '>' that ends the tag whose name ends at `i`, quoted values skipped.
size_t TagEnd(absl::string_view xml, size_t i) {
  while (i < xml.size() && xml[i] != '>') {
    if (xml[i] == '"' || xml[i] == '\'') {
      const size_t close = xml.find(xml[i], i + 1);
      if (close == absl::string_view::npos) return xml.size();
      i = close + 1;
    } else {
      ++i;
    }
  }
  return i < xml.size() ? i + 1 : xml.size();
}

// One past the '>' that ends a DOCTYPE starting at `i`: quoted literals and the internal subset
// (in brackets) skipped.
size_t DoctypeEnd(absl::string_view xml, size_t i) {
  int depth = 0;
  while (i < xml.size()) {
    const char c = xml[i];
    if (c == '"' || c == '\'') {
      const size_t close = xml.find(c, i + 1);
      if (close == absl::string_view::npos) return xml.size();
      i = close + 1;
      continue;
    }
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == '>' && depth == 0) return i + 1;
    ++i;
  }
  return xml.size();
}

size_t NameEnd(absl::string_view xml, size_t i) {
  while (i < xml.size() && !IsSpace(xml[i]) && xml[i] != '>' && xml[i] != '/' && xml[i] != '=') {
    ++i;
  }
  return i;
}

}  // namespace

std::vector<XmlPiece> ScanXml(absl::string_view xml) {
  std::vector<XmlPiece> pieces;
  size_t i = 0;
  while (i < xml.size()) {
    XmlPiece piece;
    piece.bytes.begin = i;
    if (xml[i] != '<') {
      const size_t next = xml.find('<', i);
      i = next == absl::string_view::npos ? xml.size() : next;
      piece.kind = XmlPiece::kText;
    } else {
      const absl::string_view rest = xml.substr(i);
      if (absl::StartsWith(rest, "<!--")) {
        piece.kind = XmlPiece::kComment;
        i = Past(xml, i + 4, "-->");
      } else if (absl::StartsWith(rest, "<![CDATA[")) {
        piece.kind = XmlPiece::kCdata;
        i = Past(xml, i + 9, "]]>");
      } else if (absl::StartsWith(rest, "<?")) {
        piece.kind = XmlPiece::kProcessingInstruction;
        i = Past(xml, i + 2, "?>");
      } else if (absl::StartsWith(rest, "<!")) {
        piece.kind = XmlPiece::kDoctype;
        i = DoctypeEnd(xml, i + 2);
      } else if (absl::StartsWith(rest, "</")) {
        piece.kind = XmlPiece::kEndTag;
        const size_t name_end = NameEnd(xml, i + 2);
        piece.name = xml.substr(i + 2, name_end - (i + 2));
        i = TagEnd(xml, name_end);
      } else {
        const size_t name_end = NameEnd(xml, i + 1);
        piece.name = xml.substr(i + 1, name_end - (i + 1));
        i = TagEnd(xml, name_end);
        piece.kind = i >= 2 && xml[i - 1] == '>' && xml[i - 2] == '/' && i - 2 >= name_end
                         ? XmlPiece::kEmptyTag
                         : XmlPiece::kStartTag;
      }
    }
    piece.bytes.end = i;
    pieces.push_back(piece);
  }
  return pieces;
}

std::vector<XmlAttribute> TagAttributes(absl::string_view xml, const XmlPiece& tag) {
  std::vector<XmlAttribute> attributes;
  if (tag.kind != XmlPiece::kStartTag && tag.kind != XmlPiece::kEmptyTag) return attributes;
  const size_t end = std::min(tag.bytes.end, xml.size());
  size_t i = tag.bytes.begin + 1 + tag.name.size();
  while (i < end) {
    while (i < end && (IsSpace(xml[i]) || xml[i] == '/')) ++i;
    if (i >= end || xml[i] == '>') break;
    const size_t name_start = i;
    i = std::min(NameEnd(xml, i), end);
    if (i == name_start) ++i;  // A stray '=': never in well-formed XML.
    const absl::string_view name = xml.substr(name_start, i - name_start);
    while (i < end && IsSpace(xml[i])) ++i;
    if (i >= end || xml[i] != '=') continue;
    ++i;
    while (i < end && IsSpace(xml[i])) ++i;
    if (i >= end || (xml[i] != '"' && xml[i] != '\'')) continue;
    const size_t close = xml.find(xml[i], i + 1);
    if (close == absl::string_view::npos || close >= end) break;
    attributes.push_back({name, {i + 1, close}});
    i = close + 1;
  }
  return attributes;
}

absl::string_view LocalName(absl::string_view qualified) {
  const size_t colon = qualified.find(':');
  return colon == absl::string_view::npos ? qualified : qualified.substr(colon + 1);
}

std::string XmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendMarkupEscaped(text, /*attribute=*/true, out);
  return out;
}

std::string ApplyEdits(absl::string_view bytes, std::vector<XmlEdit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const XmlEdit& a, const XmlEdit& b) { return a.range.begin < b.range.begin; });
  std::string out;
  out.reserve(bytes.size());
  size_t copied = 0;
  for (XmlEdit& edit : edits) {
    if (edit.range.begin < copied || edit.range.end > bytes.size()) continue;  // Never made.
    absl::StrAppend(&out, bytes.substr(copied, edit.range.begin - copied));
    out += edit.text;
    copied = edit.range.end;
  }
  absl::StrAppend(&out, bytes.substr(copied));
  return out;
}

}  // namespace mtserve
