#include "text/document.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "text/document_formats.h"

namespace mtserve {

absl::StatusOr<DocumentFormat> ParseDocumentFormat(absl::string_view name) {
  if (name == "text") return DocumentFormat::kPlainText;
  if (name == "html") return DocumentFormat::kHtml;
  if (name == "markdown") return DocumentFormat::kMarkdown;
  if (name == "srt") return DocumentFormat::kSrt;
  if (name == "vtt") return DocumentFormat::kVtt;
  if (name == "docx") return DocumentFormat::kDocx;
  if (name == "pptx") return DocumentFormat::kPptx;
  if (name == "odt") return DocumentFormat::kOdt;
  if (name == "odp") return DocumentFormat::kOdp;
  if (name == "epub") return DocumentFormat::kEpub;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown format \"", name,
      "\"; the formats are text, html, markdown, srt, vtt, docx, pptx, odt, odp, epub"));
}

bool NeedsAlignment(DocumentFormat format) { return format != DocumentFormat::kPlainText; }

bool IsBinaryFormat(DocumentFormat format) {
  return format == DocumentFormat::kDocx || format == DocumentFormat::kPptx ||
         format == DocumentFormat::kOdt || format == DocumentFormat::kOdp ||
         format == DocumentFormat::kEpub;
}

std::string Document::SentenceName(absl::string_view field, size_t j) const {
  if (sentences_.size() == 1) return std::string(field);
  std::string name = absl::StrCat(field, " sentence ", j + 1, " of ", sentences_.size());
  if (ranges_in_text()) {
    absl::StrAppend(&name, " (bytes ", sentences_[j].range.begin, "-", sentences_[j].range.end,
                    ")");
  }
  return name;
}

void Document::CountCharacters(absl::string_view text, absl::Span<const SourceSentence> sentences) {
  for (const SourceSentence& sentence : sentences) {
    for (size_t i = sentence.range.begin; i < sentence.range.end; ++i) {
      // Every byte of UTF-8 but continuation bytes starts a code point.
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++characters_;
    }
  }
}

void Document::AddSentences(absl::StatusOr<std::vector<SourceSentence>> sentences) {
  if (!sentences.ok()) {
    if (split_status_.ok()) split_status_ = sentences.status();
    return;
  }
  for (SourceSentence& s : *sentences) sentences_.push_back(std::move(s));
}

absl::StatusOr<std::unique_ptr<Document>> PrepareDocument(absl::string_view text,
                                                          DocumentFormat format,
                                                          const SentenceRules& rules,
                                                          const std::function<bool()>& stopped) {
  auto gone = [&] { return stopped && stopped(); };
  const absl::Status cancelled =
      absl::CancelledError("the text's caller went away while it was taken apart");
  if (gone()) return cancelled;
  absl::StatusOr<std::unique_ptr<Document>> document;
  switch (format) {
    case DocumentFormat::kPlainText:
      document = PreparePlainText(text, rules, stopped);
      break;
    case DocumentFormat::kHtml:
      document = PrepareHtml(text, rules);
      break;
    case DocumentFormat::kMarkdown:
      document = PrepareMarkdown(text, rules);
      break;
    case DocumentFormat::kSrt:
      document = PrepareSubtitles(text, SubtitleDocument::Kind::kSrt, rules, stopped);
      break;
    case DocumentFormat::kVtt:
      document = PrepareSubtitles(text, SubtitleDocument::Kind::kVtt, rules, stopped);
      break;
    case DocumentFormat::kDocx:
      document = PrepareDocx(text, rules);
      break;
    case DocumentFormat::kPptx:
      document = PreparePptx(text, rules);
      break;
    case DocumentFormat::kOdt:
    case DocumentFormat::kOdp:
      document = PrepareOdf(text, rules);
      break;
    case DocumentFormat::kEpub:
      document = PrepareEpub(text, rules);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown format ", static_cast<int>(format)));
  }
  // A format may have stopped part way: what it found is not the whole text.
  if (gone()) return cancelled;
  if (document.ok() && !(*document)->split_status().ok()) return (*document)->split_status();
  return document;
}

TextTranslation JoinDocument(const Document& document, std::vector<TranslationResult> results,
                             int num_hypotheses, const Tokenizer& tokenizer) {
  return document.Join(std::move(results), num_hypotheses, tokenizer, tokenizer);
}

TextTranslation JoinDocument(const Document& document, std::vector<TranslationResult> results,
                             int num_hypotheses, const Tokenizer& source_tokenizer,
                             const Tokenizer& tokenizer) {
  return document.Join(std::move(results), num_hypotheses, source_tokenizer, tokenizer);
}

}  // namespace mtserve
