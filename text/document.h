// One home for a request's text, whatever its format: PrepareDocument takes a text apart into the
// sentences the engine translates (split, cut to the token limit, tokenised) and JoinDocument puts
// their translations back into a text of the same format. The server's core and mttranslate call
// only these, so a text translates the same served and offline.
//
// Each format is one value of DocumentFormat and one file that implements it as a Document
// (text/document_formats.h): plain text (plain_text_format.cc, over text/sentences.h), HTML
// (html_format.cc, over text/html_document.h), Markdown (markdown_format.cc, over
// text/markdown_document.h), both through text/runs_document.h, and subtitles
// (subtitle_format.cc, over text/subtitle_document.h), and office documents (text/office/: DOCX,
// PPTX, ODT, ODP, EPUB, each over text/office/office_document.h).
#ifndef MTSERVE_TEXT_DOCUMENT_H_
#define MTSERVE_TEXT_DOCUMENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/tokenizer.h"
#include "model/translator.h"
#include "text/sentence_splitter.h"
#include "text/sentences.h"
#include "text/subtitle_document.h"
#include "text/text_translation.h"

namespace mtserve {

// What a text is. The values are the API's TextFormat's.
enum class DocumentFormat {
  kPlainText = 0,
  kHtml = 1,
  kMarkdown = 2,
  kSrt = 3,  // SubRip subtitles (text/subtitle_document.h).
  kVtt = 4,  // WebVTT subtitles.
  // Office documents (text/office/): zip packages of XML, files only (not a JSON string's text).
  kDocx = 5,  // Word (Office Open XML).
  kPptx = 6,  // PowerPoint (Office Open XML).
  kOdt = 7,   // OpenDocument text.
  kOdp = 8,   // OpenDocument presentation.
  kEpub = 9,  // EPUB 2 or 3.
};

// The format named `name` as mttranslate's --format takes it ("text", "html", "markdown", "srt",
// "vtt", "docx", "pptx", "odt", "odp", "epub"); an InvalidArgument naming the accepted names
// otherwise.
absl::StatusOr<DocumentFormat> ParseDocumentFormat(absl::string_view name);

// Whether a text of `format` needs all its sentences decoded with the decoder's alignment
// (DecodingOptions::return_alignment): HTML and Markdown place their inline markup by it,
// subtitles their tags and the division of a sentence over cues. (Any format's sentences with
// unknown characters need it too: Document::NeedsAlignment.)
bool NeedsAlignment(DocumentFormat format);

// Whether `format`'s texts are binary files (the office documents), not UTF-8 text: the file API
// takes them; a JSON or protobuf string field does not.
bool IsBinaryFormat(DocumentFormat format);

// How a text's sentences are found: `splitter`'s sentence rules (null: each text, or each run of an
// HTML document, is one sentence), each cut to `max_tokens` (>= 2) tokens of `tokenizer`.
struct SentenceRules {
  const SentenceSplitter* splitter = nullptr;
  const Tokenizer* tokenizer = nullptr;
  int max_tokens = 0;
  // How subtitles' cue text is wrapped (the subtitle formats only).
  SubtitleLayout subtitle_layout;
  // The translation's language (a BCP 47 tag, "" if unknown), written into the language tags of
  // formats that carry them (office documents: text/office/office_document.h).
  std::string target_language;
  // The terminology, compiled for the target model (text/term_matcher.h; null: none): its
  // occurrences are attached to the sentences (SourceSentence::terms), which are never split
  // inside one, and Join puts each placed form's exact bytes in. With it, HTML's inline elements
  // with translate="no" (or class="notranslate", or one of `ignore_tags`) inside a sentence are
  // spans of it kept as written rather than ends of it.
  const TermMatcher* terms = nullptr;
  // Names of HTML elements (lower case) whose content is kept as written, as with
  // translate="no" (DeepL's ignore_tags).
  std::vector<std::string> ignore_tags = {};
};

// A text taken apart by PrepareDocument: its sentences to translate, and what its format needs to
// put their translations back (JoinDocument). A plain text's Document refers to the text it was
// made from, which must outlive it.
class Document {
 public:
  virtual ~Document() = default;

  // The units of translation in order (an HTML document's: its runs' sentences, run by run). A
  // caller may move their ids out (to a decode): joining needs only their ranges.
  std::vector<SourceSentence>& sentences() { return sentences_; }
  const std::vector<SourceSentence>& sentences() const { return sentences_; }

  // How errors name sentence `j` of the text named `field`: the text alone if it is its only
  // sentence, else "FIELD sentence J of N", with its bytes where they are the text's own (plain
  // text: " (bytes B-E)"; an HTML document's sentences are in its runs' text, not its bytes).
  std::string SentenceName(absl::string_view field, size_t j) const;

  // The characters (code points) of the text its sentences translate: a format's markup, cue
  // numbers and timings, and the whitespace between sentences not counted. What a caller of a
  // marked-up text is charged for (API keys' characters_per_day).
  int64_t characters() const { return characters_; }

  // Whether sentence `j` must be decoded with the decoder's alignment
  // (DecodingOptions::return_alignment) for Join: its format places inline markup by it (HTML),
  // or it holds a run of characters the model cannot spell (text/unknown_runs.h). A caller that did
  // not ask for alignments itself drops them from the joined hypotheses. (Terms need none: each
  // hypothesis says where it placed them, Hypothesis::terms.)
  bool NeedsAlignment(size_t j) const { return aligns_markup() || sentences_[j].unknown; }

  // What taking the text apart found wrong after its format's maker accepted it (a sentence with
  // more terms than kMaxTermConstraints): PrepareDocument returns it instead of the document.
  const absl::Status& split_status() const { return split_status_; }

  // The text's translation from its sentences' (`results[i]` for sentences()[i], each with
  // `num_hypotheses` hypotheses); see JoinDocument.
  virtual TextTranslation Join(std::vector<TranslationResult> results, int num_hypotheses,
                               const Tokenizer& source_tokenizer,
                               const Tokenizer& tokenizer) const = 0;

 protected:
  // Whether sentences' ranges are bytes of the text itself (for SentenceName).
  virtual bool ranges_in_text() const = 0;
  // Whether the format places markup by the alignment (NeedsAlignment(DocumentFormat)).
  virtual bool aligns_markup() const = 0;

  // Adds the characters of `sentences` (ranges of `text`) to characters().
  void CountCharacters(absl::string_view text, absl::Span<const SourceSentence> sentences);

  // Appends `sentences` (SplitIntoSentences's) to sentences_, or keeps its error for
  // split_status() (the first one).
  void AddSentences(absl::StatusOr<std::vector<SourceSentence>> sentences);

  std::vector<SourceSentence> sentences_;
  absl::Status split_status_;

 private:
  int64_t characters_ = 0;
};

// `text` (valid UTF-8: the caller checks it, naming its field) taken apart as a text of `format`
// by `rules`. An InvalidArgument for a text its format refuses (an HTML document nested too deep,
// say); the message does not name the text: the caller does.
//
// `stopped` (optional) says whether the text's caller went away (cancelled, or past its
// deadline); once true it must stay true. It is polled before and after taking the text apart
// and between a plain text's sentences and pieces, so that a long text stops costing soon after:
// PrepareDocument then fails with CANCELLED.
absl::StatusOr<std::unique_ptr<Document>> PrepareDocument(
    absl::string_view text, DocumentFormat format, const SentenceRules& rules,
    const std::function<bool()>& stopped = nullptr);

// The translation of `document`'s text from its sentences' (`results[i]` for
// document.sentences()[i], each with `num_hypotheses` hypotheses, the decoder's alignment
// included where Document::NeedsAlignment says): hypothesis k joins each sentence's k-th
// best in the text's layout (text/sentences.h JoinSentences for plain text; for HTML, the
// document rendered around its runs' translations, see text/html_document.h).
TextTranslation JoinDocument(const Document& document, std::vector<TranslationResult> results,
                             int num_hypotheses, const Tokenizer& tokenizer);
// The same for a text read by one model (`source_tokenizer`'s, which took it apart) and
// translated by another (`tokenizer`'s): a chain's first and last (pivot translation,
// serving/pivot.h); the results' alignments index the first model's source tokens.
TextTranslation JoinDocument(const Document& document, std::vector<TranslationResult> results,
                             int num_hypotheses, const Tokenizer& source_tokenizer,
                             const Tokenizer& tokenizer);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_DOCUMENT_H_
