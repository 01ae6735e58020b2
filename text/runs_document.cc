#include "text/runs_document.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "text/inline_placement.h"
#include "text/sentences.h"
#include "text/unknown_runs.h"

namespace mtserve {
namespace {

// Where a run's inline markup goes in hypothesis `k` of its translation `joined`: where it was if
// the translation is the run's text unchanged; else by the decoder's alignment where it says, and
// by position elsewhere, over each placed form whole or not at all.
std::vector<Segment> PlaceInlines(absl::string_view run_text, absl::Span<const InlineSpan> spans,
                                  absl::Span<const SourceSentence> sentences,
                                  absl::Span<const TranslationResult> results,
                                  const TextTranslation& joined, int k,
                                  const Tokenizer& source_tokenizer, const Tokenizer& tokenizer) {
  const std::string& text = joined.hypotheses[k].text;
  std::vector<Segment> ranges;
  for (const InlineSpan& in : spans) ranges.push_back(in.range);
  if (text == run_text || spans.empty()) return ranges;
  std::vector<Hypothesis> parts;
  for (const TranslationResult& r : results) parts.push_back(r.hypotheses[k]);
  // The placed forms' bytes of `text`.
  std::vector<Segment> forms;
  const std::vector<Segment>& in_text = joined.hypothesis_sentences[k];
  for (size_t j = 0; j < sentences.size() && in_text.size() == sentences.size(); ++j) {
    for (const Segment& form :
         PlacedForms(run_text, sentences[j], parts[j], source_tokenizer, tokenizer)) {
      forms.push_back({in_text[j].begin + form.begin, in_text[j].begin + form.end});
    }
  }
  std::vector<Segment> placed = PlaceSpansByPosition(run_text, spans, text, forms);
  const std::vector<std::optional<Segment>> aligned =
      PlaceByAlignment(run_text, sentences, parts, text, joined.hypothesis_sentences[k],
                       source_tokenizer, tokenizer, ranges);
  for (size_t i = 0; i < placed.size(); ++i) {
    if (aligned[i].has_value()) placed[i] = *aligned[i];
  }
  return placed;
}

}  // namespace

void RunsDocument::Split(const SentenceRules& rules) {
  for (size_t r = 0; r < num_runs(); ++r) {
    first_.push_back(sentences_.size());
    AddSentences(SplitIntoSentences(run(r).text, rules.splitter, *rules.tokenizer, rules.max_tokens,
                                    rules.terms, run(r).kept));
    CountCharacters(run(r).text, absl::MakeConstSpan(sentences_).subspan(first_.back()));
  }
  first_.push_back(sentences_.size());
}

TextTranslation RunsDocument::Join(std::vector<TranslationResult> results, int num_hypotheses,
                                   const Tokenizer& source_tokenizer,
                                   const Tokenizer& tokenizer) const {
  const size_t runs = num_runs();
  const absl::Span<const SourceSentence> sentences = sentences_;
  std::vector<TextTranslation> joined;
  std::vector<std::vector<std::vector<Segment>>> inlines(runs);  // [run][k]
  TextTranslation out;
  out.dropped.resize(num_hypotheses);
  for (size_t r = 0; r < runs; ++r) {
    const RunView view = run(r);
    const size_t first = first_[r], count = first_[r + 1] - first;
    const absl::Span<const SourceSentence> run_sentences = sentences.subspan(first, count);
    std::vector<TranslationResult> run_results(
        std::make_move_iterator(results.begin() + first),
        std::make_move_iterator(results.begin() + first + count));
    std::vector<std::vector<Segment>> dropped;
    RestoreUnknownRuns(view.text, run_sentences, run_results, num_hypotheses, source_tokenizer,
                       tokenizer, dropped);
    for (size_t k = 0; k < dropped.size() && k < out.dropped.size(); ++k) {
      for (const Segment& unknown : dropped[k]) out.dropped[k].push_back(SourceBytes(r, unknown));
    }
    joined.push_back(JoinSentences(view.text, run_sentences, run_results, num_hypotheses));
    for (int k = 0; k < num_hypotheses; ++k) {
      inlines[r].push_back(PlaceInlines(view.text, view.inlines, run_sentences, run_results,
                                        joined.back(), k, source_tokenizer, tokenizer));
    }
  }
  for (const TextTranslation& run : joined) out.source_tokens += run.source_tokens;
  // Text kept untranslated is not in any translation: listed with the dropped runs, in order.
  if (!untranslated().empty()) {
    for (std::vector<Segment>& dropped : out.dropped) {
      dropped.insert(dropped.end(), untranslated().begin(), untranslated().end());
      std::sort(dropped.begin(), dropped.end(),
                [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
    }
  }
  for (int k = 0; k < num_hypotheses; ++k) {
    std::vector<TranslatedRun> translated;
    Hypothesis h;
    for (size_t r = 0; r < runs; ++r) {
      const Hypothesis& part = joined[r].hypotheses[k];
      translated.push_back({part.text, inlines[r][k]});
      AppendPart(part, h);
    }
    h.text = Render(translated);
    out.hypotheses.push_back(std::move(h));
  }
  return out;
}

}  // namespace mtserve
