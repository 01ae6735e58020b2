// Markdown as a Document (text/document_formats.h): the document's runs of text
// (text/markdown_document.h) translated as text/runs_document.h translates runs, the document
// rendered around their translations.
#include <memory>
#include <utility>

#include "text/document_formats.h"
#include "text/markdown_document.h"
#include "text/runs_document.h"

namespace mtserve {
namespace {

class MarkdownTextDocument : public RunsDocument {
 public:
  MarkdownTextDocument(MarkdownDocument document, const SentenceRules& rules)
      : document_(std::move(document)) {
    Split(rules);
  }

 protected:
  size_t num_runs() const override { return document_.runs().size(); }
  RunView run(size_t r) const override {
    return {document_.runs()[r].text, document_.runs()[r].inlines};
  }
  Segment SourceBytes(size_t r, Segment range) const override {
    return MarkdownDocument::SourceBytes(document_.runs()[r], range);
  }
  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    return document_.Render(translations);
  }
  absl::Span<const Segment> untranslated() const override { return document_.untranslated(); }

 private:
  MarkdownDocument document_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareMarkdown(absl::string_view text,
                                                          const SentenceRules& rules) {
  absl::StatusOr<MarkdownDocument> document = MarkdownDocument::Parse(std::string(text));
  if (!document.ok()) return document.status();
  return std::make_unique<MarkdownTextDocument>(*std::move(document), rules);
}

}  // namespace mtserve
