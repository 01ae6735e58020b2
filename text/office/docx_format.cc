// DOCX files as a Document (text/office/office_document.h): the paragraphs of the main document
// (body, tables, text boxes), its headers, footers, footnotes and endnotes taken apart by the
// WordprocessingML run engine (text/office/ooxml_runs.h); word/styles.xml rewritten for its
// language tags only. Parts are found by their names as Word and every other writer name them
// (word/document.xml, word/headerN.xml, word/footerN.xml, word/footnotes.xml,
// word/endnotes.xml). Kept as they are: comments (word/comments.xml), the glossary
// (word/glossary/), charts and SmartArt, and every other entry.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/document_formats.h"
#include "text/office/office_document.h"
#include "text/office/ooxml_runs.h"
#include "text/office/ooxml_signatures.h"

namespace mtserve {
namespace {

// word/<stem><digits>.xml.
bool IsNumbered(absl::string_view name, absl::string_view stem) {
  const std::string prefix = absl::StrCat("word/", stem);
  if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, ".xml")) return false;
  const absl::string_view number = name.substr(prefix.size(), name.size() - prefix.size() - 4);
  return std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool HoldsText(absl::string_view name) {
  return name == "word/document.xml" || name == "word/footnotes.xml" ||
         name == "word/endnotes.xml" || IsNumbered(name, "header") || IsNumbered(name, "footer");
}

absl::StatusOr<std::vector<OfficePart>> TakeApartDocx(const OfficePackage& package,
                                                      absl::string_view target_language) {
  if (!package.Has("word/document.xml")) {
    return absl::InvalidArgumentError(
        "part word/document.xml is missing: the package is not a Word document");
  }
  // Signatures first: a translation would make them invalid (text/office/ooxml_signatures.h).
  absl::StatusOr<std::vector<OfficePart>> removed = RemoveOoxmlSignatures(package);
  if (!removed.ok()) return removed.status();
  std::vector<OfficePart> parts = *std::move(removed);
  for (const std::string& name : package.names()) {
    const bool styles = name == "word/styles.xml" && !target_language.empty();
    if (!HoldsText(name) && !styles) continue;
    absl::StatusOr<std::string> bytes = package.Read(name);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::unique_ptr<PartRuns>> runs =
        TakeApartOoxmlPart(name, *std::move(bytes), OoxmlDialect::kWordprocessing, target_language);
    if (!runs.ok()) return runs.status();
    parts.push_back({name, *std::move(runs)});
  }
  return parts;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareDocx(absl::string_view bytes,
                                                      const SentenceRules& rules) {
  return PrepareOffice(bytes, rules, TakeApartDocx);
}

}  // namespace mtserve
