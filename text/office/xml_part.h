// One XML part of an office package read safely (pugixml) and written back. The one place a
// part's untrusted XML is checked: DOCTYPEs are refused outright, so no entity is ever defined,
// expanded (billion laughs) or fetched (external entities); nesting is bounded (pugixml's parser is
// not recursive; the depth is measured before anything walks the tree).
#ifndef MTSERVE_TEXT_OFFICE_XML_PART_H_
#define MTSERVE_TEXT_OFFICE_XML_PART_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"

namespace mtserve {

struct XmlLimits {
  // Elements nested at most (real documents nest a few dozen deep; the parser, the formats'
  // walks and pugixml's destructor are then bounded on a server thread's stack).
  int max_depth = 256;
  // Markup ("<") at most, counted before parsing: pugixml's tree takes some 64 bytes a node, so
  // a part dense with tiny elements that the package's ratio limit lets through (64 MiB of
  // "<a/>") would otherwise cost over a gigabyte. Real parts hold far fewer (a hundred-page
  // DOCX's document.xml: about 60,000).
  int64_t max_markup = 2'000'000;
};

// Part `name`'s `bytes` parsed, its XML declaration kept (WriteXmlPart writes it back).
// INVALID_ARGUMENT naming the part for: a DOCTYPE ("a DOCTYPE is not accepted: entities are never
// expanded"), an encoding other than UTF-8 declared or a UTF-16 byte order mark, nesting deeper
// than limits.max_depth or more markup than limits.max_markup (naming the limit), malformed XML
// (with the byte offset pugixml gives).
absl::StatusOr<std::unique_ptr<pugi::xml_document>> ParseXmlPart(absl::string_view name,
                                                                 absl::string_view bytes,
                                                                 const XmlLimits& limits = {});

// `document` as bytes: its declaration as it was, no indentation added, UTF-8.
std::string WriteXmlPart(const pugi::xml_document& document);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_XML_PART_H_
