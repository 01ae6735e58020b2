// HTML as a Document (text/document_formats.h): the document's runs of text
// (text/html_document.h) translated as text/runs_document.h translates runs, the document
// rendered around their translations; and what is not translated for a request's rules, for
// HTML and an EPUB's XHTML alike (HtmlOptionsFor).
#include <memory>
#include <utility>

#include "text/document_formats.h"
#include "text/html_document.h"
#include "text/runs_document.h"

namespace mtserve {
namespace {

class HtmlTextDocument : public RunsDocument {
 public:
  HtmlTextDocument(HtmlDocument document, const SentenceRules& rules)
      : document_(std::move(document)) {
    Split(rules);
  }

 protected:
  size_t num_runs() const override { return document_.runs().size(); }
  RunView run(size_t r) const override {
    return {document_.runs()[r].text, document_.runs()[r].inlines, document_.runs()[r].kept};
  }
  Segment SourceBytes(size_t r, Segment range) const override {
    return HtmlDocument::SourceBytes(document_.runs()[r], range);
  }
  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    return document_.Render(translations);
  }

 private:
  HtmlDocument document_;
};

}  // namespace

HtmlOptions HtmlOptionsFor(const SentenceRules& rules) {
  // With a terminology, an inline element not to be translated is a span of its sentence kept as
  // written (its text a constraint), not the end of the sentence.
  HtmlOptions options;
  options.keep_inline = rules.terms != nullptr;
  options.ignore_tags = rules.ignore_tags;
  return options;
}

absl::StatusOr<std::unique_ptr<Document>> PrepareHtml(absl::string_view text,
                                                      const SentenceRules& rules) {
  absl::StatusOr<HtmlDocument> document =
      HtmlDocument::Parse(std::string(text), HtmlOptionsFor(rules));
  if (!document.ok()) return document.status();
  return std::make_unique<HtmlTextDocument>(*std::move(document), rules);
}

}  // namespace mtserve
