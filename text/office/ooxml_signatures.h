// A DOCX's or PPTX's digital signatures (Office Open XML's package signatures, under
// _xmlsignatures/), which a translation makes invalid: they are left out of the translated file
// rather than written back to show as broken (docs/api.md says so).
#ifndef MTSERVE_TEXT_OFFICE_OOXML_SIGNATURES_H_
#define MTSERVE_TEXT_OFFICE_OOXML_SIGNATURES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "text/office/office_document.h"
#include "text/office/office_package.h"

namespace mtserve {

// The parts that take `package`'s signatures out (none if it has none): every entry under
// _xmlsignatures/ removed, _rels/.rels rewritten without its relationship to the signature
// origin, and [Content_Types].xml without the signatures' overrides and the origin's default.
// INVALID_ARGUMENT naming the part for a relationships or content types part ParseXmlPart refuses.
absl::StatusOr<std::vector<OfficePart>> RemoveOoxmlSignatures(const OfficePackage& package);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_OOXML_SIGNATURES_H_
