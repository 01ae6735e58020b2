// PPTX files as a Document (text/office/office_document.h). Not translated yet.
#include "absl/status/status.h"
#include "text/document_formats.h"

namespace mtserve {

absl::StatusOr<std::unique_ptr<Document>> PreparePptx(absl::string_view, const SentenceRules&) {
  return absl::UnimplementedError("PPTX files are not translated yet");
}

}  // namespace mtserve
