// The markup of an XML part found by its bytes, so that a part can be changed in place (an
// attribute's value, a text, an empty-element tag written out) and every other byte kept, where a
// parser's tree (text/office/xml_part.h) would write the whole part anew. Meant for bytes a parser
// accepted; on any other bytes it still ends, reads nothing out of bounds and finds something.
#ifndef MTSERVE_TEXT_OFFICE_XML_SCAN_H_
#define MTSERVE_TEXT_OFFICE_XML_SCAN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/segment.h"

namespace mtserve {

// One piece of an XML text: markup or the text between.
struct XmlPiece {
  enum Kind {
    kText,
    kStartTag,               // <a ...>
    kEndTag,                 // </a>
    kEmptyTag,               // <a .../>
    kComment,                // <!-- -->
    kCdata,                  // <![CDATA[ ]]>
    kProcessingInstruction,  // <? ?>, the XML declaration included.
    kDoctype,                // <!DOCTYPE ...>, with its internal subset if any.
  };
  Kind kind = kText;
  Segment bytes;           // All of it, '<' to '>' for markup.
  absl::string_view name;  // A tag's qualified name ("dc:title").
};

// `xml` as pieces, in order, covering every byte.
std::vector<XmlPiece> ScanXml(absl::string_view xml);

// An attribute of a start or empty tag: its qualified name and its value's bytes (inside the
// quotes, as written: entities not decoded).
struct XmlAttribute {
  absl::string_view name;
  Segment value;
};
std::vector<XmlAttribute> TagAttributes(absl::string_view xml, const XmlPiece& tag);

// The part after a qualified name's prefix ("title" for "dc:title").
absl::string_view LocalName(absl::string_view qualified);

// `text` escaped for XML text or a quoted attribute value (&, <, >, " and ').
std::string XmlEscape(absl::string_view text);

// A change to a text: `range` replaced by `text`.
struct XmlEdit {
  Segment range;
  std::string text;
};
// `bytes` with `edits` made (ranges within `bytes` and apart from each other, in any order).
std::string ApplyEdits(absl::string_view bytes, std::vector<XmlEdit> edits);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_XML_SCAN_H_
