// HTML as a Document (text/document_formats.h): the document's runs of text (text/html_document.h)
// split into sentences as plain text is, run by run; and the document rendered around the runs'
// translations, each run's sentences joined in its text as a plain text's are, its inline markup
// placed by the decoder's alignment where it says (text/inline_placement.h) and by position
// elsewhere; the runs of characters the model cannot spell put back (text/unknown_runs.h), those
// dropped named by their bytes in the document; scores and tokens summed over the runs.
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "text/document_formats.h"
#include "text/html_document.h"
#include "text/inline_placement.h"
#include "text/sentences.h"
#include "text/unknown_runs.h"

namespace mtserve {
namespace {

// Where a run's inline markup goes in hypothesis `k` of its translation `joined`: by the
// decoder's alignment where it says, else by position.
std::vector<Segment> PlaceInlines(const HtmlDocument::Run& run,
                                  absl::Span<const SourceSentence> sentences,
                                  absl::Span<const TranslationResult> results,
                                  const TextTranslation& joined, int k,
                                  const Tokenizer& source_tokenizer, const Tokenizer& tokenizer) {
  const std::string& text = joined.hypotheses[k].text;
  std::vector<Segment> placed = HtmlDocument::PlaceByPosition(run, text);
  if (run.inlines.empty()) return placed;
  std::vector<Hypothesis> parts;
  for (const TranslationResult& r : results) parts.push_back(r.hypotheses[k]);
  std::vector<Segment> ranges;
  for (const HtmlDocument::Inline& in : run.inlines) ranges.push_back(in.range);
  const std::vector<std::optional<Segment>> aligned =
      PlaceByAlignment(run.text, sentences, parts, text, joined.hypothesis_sentences[k],
                       source_tokenizer, tokenizer, ranges);
  for (size_t i = 0; i < placed.size(); ++i) {
    if (aligned[i].has_value()) placed[i] = *aligned[i];
  }
  return placed;
}

class HtmlTextDocument : public Document {
 public:
  explicit HtmlTextDocument(HtmlDocument document) : document_(std::move(document)) {}

  // Splits each run into sentences by `rules`, run r's from first_[r] on.
  void Split(const SentenceRules& rules) {
    for (const HtmlDocument::Run& run : document_.runs()) {
      first_.push_back(sentences_.size());
      for (SourceSentence& s :
           SplitIntoSentences(run.text, rules.splitter, *rules.tokenizer, rules.max_tokens)) {
        sentences_.push_back(std::move(s));
      }
    }
    first_.push_back(sentences_.size());
  }

  TextTranslation Join(std::vector<TranslationResult> results, int num_hypotheses,
                       const Tokenizer& source_tokenizer,
                       const Tokenizer& tokenizer) const override {
    const std::vector<HtmlDocument::Run>& runs = document_.runs();
    const absl::Span<const SourceSentence> sentences = sentences_;
    std::vector<TextTranslation> joined;
    std::vector<std::vector<std::vector<Segment>>> inlines(runs.size());  // [run][k]
    TextTranslation out;
    out.dropped.resize(num_hypotheses);
    for (size_t r = 0; r < runs.size(); ++r) {
      const size_t first = first_[r], count = first_[r + 1] - first;
      const absl::Span<const SourceSentence> run_sentences = sentences.subspan(first, count);
      std::vector<TranslationResult> run_results(
          std::make_move_iterator(results.begin() + first),
          std::make_move_iterator(results.begin() + first + count));
      std::vector<std::vector<Segment>> dropped;
      RestoreUnknownRuns(runs[r].text, run_sentences, run_results, num_hypotheses, source_tokenizer,
                         tokenizer, dropped);
      for (size_t k = 0; k < dropped.size() && k < out.dropped.size(); ++k) {
        for (const Segment& run : dropped[k]) {
          out.dropped[k].push_back(HtmlDocument::SourceBytes(runs[r], run));
        }
      }
      joined.push_back(JoinSentences(runs[r].text, run_sentences, run_results, num_hypotheses));
      for (int k = 0; k < num_hypotheses; ++k) {
        inlines[r].push_back(PlaceInlines(runs[r], run_sentences, run_results, joined.back(), k,
                                          source_tokenizer, tokenizer));
      }
    }
    for (const TextTranslation& run : joined) out.source_tokens += run.source_tokens;
    for (int k = 0; k < num_hypotheses; ++k) {
      std::vector<HtmlDocument::Translated> translated;
      Hypothesis h;
      for (size_t r = 0; r < runs.size(); ++r) {
        const Hypothesis& part = joined[r].hypotheses[k];
        translated.push_back({part.text, inlines[r][k]});
        AppendPart(part, h);
      }
      h.text = document_.Render(translated);
      out.hypotheses.push_back(std::move(h));
    }
    return out;
  }

 protected:
  bool ranges_in_text() const override { return false; }
  bool aligns_markup() const override { return true; }

 private:
  HtmlDocument document_;
  std::vector<size_t> first_;  // Where each run's sentences begin among sentences_ (then the end).
};

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareHtml(absl::string_view text,
                                                      const SentenceRules& rules) {
  absl::StatusOr<HtmlDocument> document = HtmlDocument::Parse(std::string(text));
  if (!document.ok()) return document.status();
  auto html = std::make_unique<HtmlTextDocument>(*std::move(document));
  html->Split(rules);
  return html;
}

}  // namespace mtserve
