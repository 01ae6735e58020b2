// The formats text/document.h knows, each a Document made by its own file: the one list
// PrepareDocument chooses from. A new format adds its maker here, its file, and its enum value.
#ifndef MTSERVE_TEXT_DOCUMENT_FORMATS_H_
#define MTSERVE_TEXT_DOCUMENT_FORMATS_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/document.h"
#include "text/html_document.h"
#include "text/subtitle_document.h"

namespace mtserve {

// Plain text (plain_text_format.cc): the text's sentences, joined in its layout. Never fails;
// stops part way once `stopped` (optional) returns true (PrepareDocument then fails).
absl::StatusOr<std::unique_ptr<Document>> PreparePlainText(
    absl::string_view text, const SentenceRules& rules,
    const std::function<bool()>& stopped = nullptr);

// HTML (html_format.cc): the document's runs (text/html_document.h), each split into sentences;
// joined by rendering the document around the runs' translations, inline markup placed by the
// decoder's alignment where it says and by position elsewhere.
absl::StatusOr<std::unique_ptr<Document>> PrepareHtml(absl::string_view text,
                                                      const SentenceRules& rules);
// How HTML is taken apart for `rules` (html_format.cc), HTML's and an EPUB's XHTML's alike:
// rules.ignore_tags not translated, and with rules.terms an inline element not to be translated
// kept as written inside its sentence (HtmlOptions::keep_inline).
HtmlOptions HtmlOptionsFor(const SentenceRules& rules);

// Markdown (markdown_format.cc): the document's runs (text/markdown_document.h), translated and
// joined as HTML's are.
absl::StatusOr<std::unique_ptr<Document>> PrepareMarkdown(absl::string_view text,
                                                          const SentenceRules& rules);
// Subtitles (subtitle_format.cc): the file's cue stream (text/subtitle_document.h) split into
// sentences, a sentence over several cues divided among them by the decoder's alignment; joined
// by rebuilding the file with each cue's share wrapped by rules.subtitle_layout. An
// InvalidArgument for a file SubtitleDocument::Parse refuses. Stops part way once `stopped`
// (optional) returns true, as plain text does.
absl::StatusOr<std::unique_ptr<Document>> PrepareSubtitles(
    absl::string_view text, SubtitleDocument::Kind kind, const SentenceRules& rules,
    const std::function<bool()>& stopped = nullptr);

// Office documents (text/office/, each over text/office/office_document.h): the package's parts
// that hold text, their paragraphs translated as HTML's runs are, formatting carried as spans,
// language tags set to rules.target_language, every other entry written back byte for byte.
// Word (docx_format.cc), PowerPoint (pptx_format.cc), OpenDocument text and presentations
// (odf_format.cc: the package's mimetype says which), EPUB (epub_format.cc).
absl::StatusOr<std::unique_ptr<Document>> PrepareDocx(absl::string_view bytes,
                                                      const SentenceRules& rules);
absl::StatusOr<std::unique_ptr<Document>> PreparePptx(absl::string_view bytes,
                                                      const SentenceRules& rules);
absl::StatusOr<std::unique_ptr<Document>> PrepareOdf(absl::string_view bytes,
                                                     const SentenceRules& rules);
absl::StatusOr<std::unique_ptr<Document>> PrepareEpub(absl::string_view bytes,
                                                      const SentenceRules& rules);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_DOCUMENT_FORMATS_H_
