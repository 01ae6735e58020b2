// An EPUB's package: the container (META-INF/container.xml) that names the package document,
// the package document (OPF) whose manifest and spine list the XHTML documents and the table of
// contents, and the EPUB 2 table of contents (NCX). Each read from its bytes (text/office/
// epub_format.cc reads them from the archive); the OPF's and the NCX's texts taken apart as runs
// of plain text, replaced in place: every other byte kept.
#ifndef MTSERVE_TEXT_OFFICE_EPUB_PACKAGE_H_
#define MTSERVE_TEXT_OFFICE_EPUB_PACKAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/office/office_document.h"

namespace mtserve {

inline constexpr absl::string_view kEpubContainer = "META-INF/container.xml";

// The package document's entry name: the container's first rootfile (of media type
// application/oebps-package+xml) full-path, "." and ".." resolved. INVALID_ARGUMENT naming the
// container for one missing, absolute or outside the archive, and for XML ParseEpubXml refuses.
absl::StatusOr<std::string> PackageDocumentName(absl::string_view container);

// What the package document says, and its own runs.
struct EpubPackageDocument {
  struct Item {
    std::string id;
    std::string name;  // The archive entry its href names.
  };
  // Its dc:title and dc:description texts as runs; dc:language, and lang and xml:lang equal to
  // the source language, set to the target language.
  std::unique_ptr<PartRuns> runs;
  std::string source_language;  // The first dc:language, "" if none.
  std::vector<Item> ncx;        // The NCX (the spine's toc, else the manifest's first), if any.
  // The XHTML documents (application/xhtml+xml): the spine's in reading order, then the
  // manifest's others; each entry once, the package document's own never.
  std::vector<Item> xhtml;
};

// Package document `name`. INVALID_ARGUMENT naming it for XML ParseEpubXml refuses, a root that
// is not <package>, a manifest item whose href is absolute or outside the archive (naming the
// item). Whether the items' entries exist is for the caller to check. Remote resources (an
// absolute URL) are not items here.
absl::StatusOr<EpubPackageDocument> TakeApartPackageDocument(absl::string_view name,
                                                             absl::string_view bytes,
                                                             absl::string_view target_language);

// NCX `name`: its labels (navLabel > text: the navigation points', the page list's) and its
// title (docTitle > text) as runs; its root's xml:lang and any equal to `source_language` set to
// `target_language`. INVALID_ARGUMENT naming it for XML ParseEpubXml refuses.
absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartNcx(absl::string_view name,
                                                       absl::string_view bytes,
                                                       absl::string_view source_language,
                                                       absl::string_view target_language);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_EPUB_PACKAGE_H_
