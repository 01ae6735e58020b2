// EPUB 2 and 3 files as a Document (text/office/office_document.h). The package document (OPF)
// is found from META-INF/container.xml; its manifest's XHTML documents (the spine's in reading
// order, then the others, the EPUB 3 navigation document among them) are translated through the
// HTML path (text/office/epub_xhtml.h), with HTML's rules for what is not translated
// (HtmlOptionsFor: translate="no", notranslate, ignore_tags; with a terminology such an inline
// element is kept as written inside its sentence); the OPF's dc:title and dc:description and the
// EPUB 2 table of contents' (NCX) labels and title are runs of plain text
// (text/office/epub_package.h). dc:language, the XHTML documents' lang and xml:lang on <html>,
// and those equal to the source language elsewhere become the target language. Every other entry
// (mimetype, styles, images, fonts) is written back as it was.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "text/document_formats.h"
#include "text/office/epub_package.h"
#include "text/office/epub_xhtml.h"
#include "text/office/office_document.h"

namespace mtserve {
namespace {

absl::Status PartError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("part ", name, ": ", what));
}

absl::StatusOr<std::vector<OfficePart>> TakeApartEpub(const OfficePackage& package,
                                                      absl::string_view target_language,
                                                      const HtmlOptions& html) {
  if (!package.Has("mimetype")) return PartError("mimetype", "missing: not an EPUB");
  absl::StatusOr<std::string> mimetype = package.Read("mimetype");
  if (!mimetype.ok()) return mimetype.status();
  if (absl::StripAsciiWhitespace(*mimetype) != "application/epub+zip") {
    return PartError("mimetype", "is not application/epub+zip: not an EPUB");
  }
  if (!package.Has(kEpubContainer)) {
    return PartError(kEpubContainer, "missing: an EPUB names its package document there");
  }
  absl::StatusOr<std::string> container = package.Read(kEpubContainer);
  if (!container.ok()) return container.status();
  absl::StatusOr<std::string> opf_name = PackageDocumentName(*container);
  if (!opf_name.ok()) return opf_name.status();
  if (!package.Has(*opf_name)) {
    return PartError(kEpubContainer, absl::StrCat("rootfile full-path names ", *opf_name,
                                                  ", which the archive does not have"));
  }
  absl::StatusOr<std::string> opf_bytes = package.Read(*opf_name);
  if (!opf_bytes.ok()) return opf_bytes.status();
  absl::StatusOr<EpubPackageDocument> opf =
      TakeApartPackageDocument(*opf_name, *opf_bytes, target_language);
  if (!opf.ok()) return opf.status();

  std::vector<OfficePart> parts;
  parts.push_back({*opf_name, std::move(opf->runs)});
  // Each part it names must be there.
  auto read = [&](const EpubPackageDocument::Item& item) -> absl::StatusOr<std::string> {
    if (!package.Has(item.name)) {
      return PartError(*opf_name, absl::StrCat("manifest item \"", item.id, "\" names ", item.name,
                                               ", which the archive does not have"));
    }
    return package.Read(item.name);
  };
  for (const EpubPackageDocument::Item& item : opf->ncx) {
    absl::StatusOr<std::string> bytes = read(item);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::unique_ptr<PartRuns>> runs =
        TakeApartNcx(item.name, *bytes, opf->source_language, target_language);
    if (!runs.ok()) return runs.status();
    parts.push_back({item.name, *std::move(runs)});
  }
  for (const EpubPackageDocument::Item& item : opf->xhtml) {
    absl::StatusOr<std::string> bytes = read(item);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::unique_ptr<PartRuns>> runs =
        TakeApartXhtml(item.name, *bytes, opf->source_language, target_language, html);
    if (!runs.ok()) return runs.status();
    parts.push_back({item.name, *std::move(runs)});
  }
  return parts;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareEpub(absl::string_view bytes,
                                                      const SentenceRules& rules) {
  const HtmlOptions html = HtmlOptionsFor(rules);
  return PrepareOffice(bytes, rules,
                       [&html](const OfficePackage& package, absl::string_view target_language) {
                         return TakeApartEpub(package, target_language, html);
                       });
}

}  // namespace mtserve
