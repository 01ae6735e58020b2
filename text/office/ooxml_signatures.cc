#include "text/office/ooxml_signatures.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "text/office/xml_part.h"

namespace mtserve {
namespace {

constexpr absl::string_view kSignatures = "_xmlsignatures/";  // Part names are case-insensitive.
constexpr absl::string_view kOriginType =
    "http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin";
constexpr absl::string_view kOriginContentType =
    "application/vnd.openxmlformats-package.digital-signature-origin";

bool IsSignature(absl::string_view name) {
  return absl::StartsWithIgnoreCase(absl::StripPrefix(name, "/"), kSignatures);
}

// `name` (if the package has it) without the children of its root that `drop` says.
template <typename Drop>
absl::Status Rewrite(const OfficePackage& package, const std::string& name, Drop drop,
                     std::vector<OfficePart>& parts) {
  if (!package.Has(name)) return absl::OkStatus();
  absl::StatusOr<std::string> bytes = package.Read(name);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> xml = ParseXmlPart(name, *bytes);
  if (!xml.ok()) return xml.status();
  pugi::xml_node root = (*xml)->document_element();
  bool changed = false;
  for (pugi::xml_node child = root.first_child(); child;) {
    const pugi::xml_node next = child.next_sibling();
    if (child.type() == pugi::node_element && drop(child)) {
      root.remove_child(child);
      changed = true;
    }
    child = next;
  }
  if (changed) parts.push_back({name, RewrittenPart(WriteXmlPart(**xml))});
  return absl::OkStatus();
}

// An element's local name ("Relationship" for "r:Relationship").
absl::string_view Local(const pugi::xml_node& node) {
  const absl::string_view name = node.name();
  const size_t colon = name.find(':');
  return colon == absl::string_view::npos ? name : name.substr(colon + 1);
}

}  // namespace

absl::StatusOr<std::vector<OfficePart>> RemoveOoxmlSignatures(const OfficePackage& package) {
  std::vector<OfficePart> parts;
  for (const std::string& name : package.names()) {
    if (IsSignature(name)) parts.push_back({name, nullptr, /*remove=*/true});
  }
  if (parts.empty()) return parts;
  absl::Status rels = Rewrite(
      package, "_rels/.rels",
      [](const pugi::xml_node& e) {
        return Local(e) == "Relationship" && e.attribute("Type").value() == kOriginType;
      },
      parts);
  if (!rels.ok()) return rels;
  absl::Status types = Rewrite(
      package, "[Content_Types].xml",
      [](const pugi::xml_node& e) {
        if (Local(e) == "Override") return IsSignature(e.attribute("PartName").value());
        return Local(e) == "Default" &&
               absl::EqualsIgnoreCase(e.attribute("ContentType").value(), kOriginContentType);
      },
      parts);
  if (!types.ok()) return types;
  return parts;
}

}  // namespace mtserve
