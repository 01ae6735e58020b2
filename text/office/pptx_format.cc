// PPTX files as a Document (text/office/office_document.h): the paragraphs of each slide's text
// (shapes' text bodies, tables' cells) and of its notes, taken apart by the DrawingML run engine
// (text/office/ooxml_runs.h). Parts are found by their names as PowerPoint and every other writer
// name them (ppt/slides/slideN.xml, ppt/notesSlides/notesSlideN.xml). Kept as they are: slide
// masters and layouts (their placeholder prompts are not shown in a slide show), charts, SmartArt,
// comments, and every other entry.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "text/document_formats.h"
#include "text/office/office_document.h"
#include "text/office/ooxml_runs.h"
#include "text/office/ooxml_signatures.h"

namespace mtserve {
namespace {

// <prefix><digits>.xml.
bool IsNumbered(absl::string_view name, absl::string_view prefix) {
  if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, ".xml")) return false;
  const absl::string_view number = name.substr(prefix.size(), name.size() - prefix.size() - 4);
  return !number.empty() &&
         std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

absl::StatusOr<std::vector<OfficePart>> TakeApartPptx(const OfficePackage& package,
                                                      absl::string_view target_language) {
  if (!package.Has("ppt/presentation.xml")) {
    return absl::InvalidArgumentError(
        "part ppt/presentation.xml is missing: the package is not a PowerPoint presentation");
  }
  // Signatures first: a translation would make them invalid (text/office/ooxml_signatures.h).
  absl::StatusOr<std::vector<OfficePart>> removed = RemoveOoxmlSignatures(package);
  if (!removed.ok()) return removed.status();
  std::vector<OfficePart> parts = *std::move(removed);
  for (const std::string& name : package.names()) {
    if (!IsNumbered(name, "ppt/slides/slide") && !IsNumbered(name, "ppt/notesSlides/notesSlide")) {
      continue;
    }
    absl::StatusOr<std::string> bytes = package.Read(name);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::unique_ptr<PartRuns>> runs =
        TakeApartOoxmlPart(name, *std::move(bytes), OoxmlDialect::kDrawing, target_language);
    if (!runs.ok()) return runs.status();
    parts.push_back({name, *std::move(runs)});
  }
  return parts;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PreparePptx(absl::string_view bytes,
                                                      const SentenceRules& rules) {
  return PrepareOffice(bytes, rules, TakeApartPptx);
}

}  // namespace mtserve
