// OpenDocument text (ODT) and presentations (ODP) as a Document (text/office/office_document.h):
// the package's "mimetype" entry says which; both keep their text in the same text:* vocabulary,
// so content.xml, styles.xml and meta.xml are taken apart by text/office/odf_part.h alike. Every
// other entry (mimetype first and stored, the manifest, pictures, settings, thumbnails, embedded
// objects) is written back byte for byte. A signed document's signatures
// (META-INF/documentsignatures.xml) are written back too and no longer match: readers show the
// document as signed with an invalid signature.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/document_formats.h"
#include "text/office/odf_part.h"
#include "text/office/office_document.h"

namespace mtserve {
namespace {

constexpr absl::string_view kMimeTypes[] = {
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.text-template",
    "application/vnd.oasis.opendocument.presentation",
    "application/vnd.oasis.opendocument.presentation-template",
};

class OdfPartRuns : public PartRuns {
 public:
  explicit OdfPartRuns(OdfPart part) : part_(std::move(part)) {
    for (const XmlInlineRuns::Run& run : part_.runs()) runs_.push_back({run.text, run.inlines});
    kept_ = part_.kept();
  }
  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    return part_.Render(translations);
  }

 private:
  OdfPart part_;
};

constexpr char kSignatures[] = "META-INF/documentsignatures.xml";

absl::StatusOr<std::vector<OfficePart>> TakeApartOdf(const OfficePackage& package,
                                                     absl::string_view target_language) {
  if (!package.Has("mimetype")) {
    return absl::InvalidArgumentError(
        "no \"mimetype\" entry: not an OpenDocument file (text or presentation)");
  }
  absl::StatusOr<std::string> mimetype = package.Read("mimetype");
  if (!mimetype.ok()) return mimetype.status();
  const absl::string_view type = absl::StripAsciiWhitespace(*mimetype);
  bool known = false;
  for (absl::string_view t : kMimeTypes) known = known || type == t;
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry mimetype: \"", type.substr(0, 100),
        "\" is not an OpenDocument text or presentation (application/vnd.oasis.opendocument.text "
        "or .presentation)"));
  }
  if (!package.Has("content.xml")) {
    return absl::InvalidArgumentError("no \"content.xml\" entry: an OpenDocument file needs one");
  }
  std::vector<OfficePart> parts;
  // The document's signature would no longer match its content: left out (docs/api.md). A macro
  // signature (macrosignatures.xml) signs the macros, which are kept as they are.
  if (package.Has(kSignatures)) parts.push_back({kSignatures, nullptr, /*remove=*/true});
  const std::pair<const char*, OdfPart::Kind> names[] = {{"content.xml", OdfPart::Kind::kContent},
                                                         {"styles.xml", OdfPart::Kind::kStyles},
                                                         {"meta.xml", OdfPart::Kind::kMeta}};
  for (const auto& [name, kind] : names) {
    if (!package.Has(name)) continue;
    absl::StatusOr<std::string> bytes = package.Read(name);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<OdfPart> part =
        OdfPart::TakeApart(name, *std::move(bytes), kind, std::string(target_language));
    if (!part.ok()) {
      // A password-protected document's parts are encrypted bytes, not XML: say so.
      if (package.Has("META-INF/manifest.xml")) {
        absl::StatusOr<std::string> manifest = package.Read("META-INF/manifest.xml");
        if (manifest.ok() && absl::StrContains(*manifest, "encryption-data")) {
          return absl::InvalidArgumentError(absl::StrCat(
              "part ", name, " is encrypted: password-protected documents are not translated"));
        }
      }
      return part.status();
    }
    parts.push_back({name, std::make_unique<OdfPartRuns>(*std::move(part))});
  }
  return parts;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareOdf(absl::string_view bytes,
                                                     const SentenceRules& rules) {
  return PrepareOffice(bytes, rules, TakeApartOdf);
}

}  // namespace mtserve
