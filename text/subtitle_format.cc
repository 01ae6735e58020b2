// Subtitles (SubRip, WebVTT) as a Document (text/document_formats.h): the file's cue stream
// (text/subtitle_document.h) split into sentences as plain text is, so that a sentence running
// over several cues is translated as one; and the file rebuilt with each cue's share of the
// translations. A sentence over one cue gives it its whole translation. A sentence over several
// divides its translation's words among them, in order, each cue at least one word (one character
// where the translation has fewer words than cues; a cue left without one, where it has fewer
// characters, keeps its own text): the division is the one whose words lie
// closest to the cues their source words are in, by the decoder's alignment (a word counts the
// cues of the source pieces its tokens were aligned to; a word aligned to nothing, or every word
// of a translation without an alignment, counts, at half the weight, the cue at its relative
// position in the sentence). A placed glossary form or kept span (text/term_matcher.h) counts as
// one word, never divided between two cues: the cut goes before or after it, so that the cue it is
// in shows the form whole (and a cue left without a word keeps its own text). Cue text is then
// wrapped (SubtitleDocument::CueText) and its styling tags placed on the aligned words, by position
// where the alignment says nothing (over a placed form whole or not at all, and a point such as a
// timestamp never between its words: text/words.h OutsideForms).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/types/span.h"
#include "text/document_formats.h"
#include "text/inline_placement.h"
#include "text/sentences.h"
#include "text/subtitle_document.h"
#include "text/unknown_runs.h"
#include "text/words.h"

namespace mtserve {
namespace {

// Part of a sentence's translation given to a cue.
struct Share {
  size_t sentence;
  Segment target;  // Bytes of the joined translation.
};

// `units` (bytes of a text, in order) with those over one of `terms` (in order, none overlapping
// another) merged into one: a cut between two of them would split the term.
std::vector<Segment> MergedOverTerms(const std::vector<Segment>& units,
                                     absl::Span<const Segment> terms) {
  std::vector<Segment> merged;
  size_t t = 0;
  for (const Segment& unit : units) {
    while (t < terms.size() && terms[t].end <= unit.begin) ++t;
    // terms[t], the first to end after the unit begins, is the only one that can reach back over
    // the unit before it.
    if (!merged.empty() && t < terms.size() && terms[t].begin < merged.back().end) {
      merged.back().end = unit.end;
    } else {
      merged.push_back(unit);
    }
  }
  return merged;
}

// The units a translation `text` is divided by: its words, or its characters if it has fewer
// words than `cues`; those over one of `terms` (the placed terms' bytes of it) merged, so that no
// cue ends inside a term and the next starts with the rest of it.
std::vector<Segment> Units(absl::string_view text, size_t cues, absl::Span<const Segment> terms) {
  std::vector<Segment> words;
  for (size_t i = 0; i < text.size();) {
    if (absl::ascii_isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && !absl::ascii_isspace(static_cast<unsigned char>(text[j]))) ++j;
    words.push_back({i, j});
    i = j;
  }
  words = MergedOverTerms(words, terms);
  if (words.size() >= cues) return words;
  std::vector<Segment> chars;
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
    if (!absl::ascii_isspace(static_cast<unsigned char>(text[i]))) chars.push_back({i, j});
    i = j;
  }
  return MergedOverTerms(chars, terms);
}

// The division of `units` among `cues` cues (in order, each at least one unit while they last)
// closest to `anchors` (per unit: the cue it belongs near, and how much that counts): the first
// unit of each cue.
std::vector<size_t> Divide(const std::vector<std::pair<double, double>>& anchors, size_t cues) {
  const size_t units = anchors.size();
  std::vector<size_t> first(cues, units);
  if (units < cues) {
    for (size_t c = 0; c < units; ++c) first[c] = c;
    return first;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // cost[u * cues + c]: the least cost of units 0..u with unit u in cue c; from[...]: whether
  // unit u - 1 was in cue c - 1.
  std::vector<double> cost(units * cues, kInf);
  std::vector<char> from(units * cues, 0);
  auto unit_cost = [&](size_t u, size_t c) {
    return anchors[u].second * std::abs(anchors[u].first - static_cast<double>(c));
  };
  cost[0] = unit_cost(0, 0);
  for (size_t u = 1; u < units; ++u) {
    const size_t low = cues - std::min(cues, units - u);  // Later cues need a unit each.
    for (size_t c = low; c <= std::min(u, cues - 1); ++c) {
      const double stay = cost[(u - 1) * cues + c];
      const double step = c > 0 ? cost[(u - 1) * cues + c - 1] : kInf;
      const bool stepped = step < stay;
      cost[u * cues + c] = (stepped ? step : stay) + unit_cost(u, c);
      from[u * cues + c] = stepped;
    }
  }
  size_t c = cues - 1;
  for (size_t u = units; u-- > 0;) {
    first[c] = u;
    if (u > 0 && from[u * cues + c]) --c;
  }
  return first;
}

class SubtitleTextDocument : public Document {
 public:
  SubtitleTextDocument(SubtitleDocument document, const SubtitleLayout& layout)
      : document_(std::move(document)), layout_(layout) {}

  void Split(const SentenceRules& rules, const std::function<bool()>& stopped) {
    AddSentences(SplitIntoSentences(document_.stream(), rules.splitter, *rules.tokenizer,
                                    rules.max_tokens, rules.terms, {}, stopped));
    CountCharacters(document_.stream(), sentences_);
  }

  TextTranslation Join(std::vector<TranslationResult> results, int num_hypotheses,
                       const Tokenizer& source_tokenizer,
                       const Tokenizer& tokenizer) const override {
    const std::string& stream = document_.stream();
    const std::vector<SubtitleDocument::Cue>& cues = document_.cues();
    std::vector<std::vector<Segment>> dropped;
    RestoreUnknownRuns(stream, sentences_, results, num_hypotheses, source_tokenizer, tokenizer,
                       dropped);
    // parts[j][k]: sentence j's hypothesis k (JoinSentences takes the results).
    std::vector<std::vector<Hypothesis>> parts;
    for (const TranslationResult& r : results) parts.push_back(r.hypotheses);
    TextTranslation joined = JoinSentences(stream, sentences_, std::move(results), num_hypotheses);
    TextTranslation out;
    out.source_tokens = joined.source_tokens;
    out.dropped.resize(dropped.size());
    for (size_t k = 0; k < dropped.size(); ++k) {
      for (const Segment& run : dropped[k]) out.dropped[k].push_back(PayloadHolding(run));
    }
    // The cues each sentence is over: [spans[j].begin, spans[j].end).
    std::vector<Segment> spans;
    size_t c = 0;
    for (const SourceSentence& s : sentences_) {
      while (c < cues.size() && cues[c].text.end <= s.range.begin) ++c;
      size_t last = c;
      while (last < cues.size() && cues[last].text.begin < s.range.end) ++last;
      spans.push_back({c, last});
    }
    for (int k = 0; k < num_hypotheses; ++k) {
      Hypothesis h = std::move(joined.hypotheses[k]);
      const std::string translated = std::move(h.text);
      h.alignment.clear();
      std::vector<std::vector<Share>> shares(cues.size());
      for (size_t j = 0; j < sentences_.size(); ++j) {
        DivideSentence(j, spans[j], parts[j][k], translated, joined.hypothesis_sentences[k][j],
                       source_tokenizer, tokenizer, shares);
      }
      std::vector<std::string> texts;
      for (size_t i = 0; i < cues.size(); ++i) {
        texts.push_back(CueText(i, shares[i], parts, k, translated, joined.hypothesis_sentences[k],
                                source_tokenizer, tokenizer));
      }
      h.text = document_.Render(texts);
      out.hypotheses.push_back(std::move(h));
    }
    return out;
  }

 protected:
  bool ranges_in_text() const override { return false; }
  bool aligns_markup() const override { return true; }

 private:
  // The file's bytes of the cue whose text holds stream bytes `run`.
  Segment PayloadHolding(Segment run) const {
    const std::vector<SubtitleDocument::Cue>& cues = document_.cues();
    for (const SubtitleDocument::Cue& cue : cues) {
      if (run.begin < cue.text.end) return cue.payload;
    }
    return cues.empty() ? Segment{0, 0} : cues.back().payload;
  }

  // Sentence j's translation `part` (at `target` in the joined `translated`) divided among its
  // cues `span`: a Share added to each.
  void DivideSentence(size_t j, Segment span, const Hypothesis& part, const std::string& translated,
                      Segment target, const Tokenizer& source_tokenizer, const Tokenizer& tokenizer,
                      std::vector<std::vector<Share>>& shares) const {
    const std::vector<SubtitleDocument::Cue>& cues = document_.cues();
    // Cues of the span with text (a sentence cannot be in an empty one).
    std::vector<size_t> over;
    for (size_t c = span.begin; c < span.end; ++c) {
      if (cues[c].text.begin < cues[c].text.end) over.push_back(c);
    }
    if (over.empty()) return;
    if (over.size() == 1) {
      shares[over[0]].push_back({j, target});
      return;
    }
    const absl::string_view text =
        absl::string_view(translated).substr(target.begin, target.end - target.begin);
    const Segment sentence = sentences_[j].range;
    const std::vector<Segment> units =
        Units(text, over.size(),
              PlacedForms(document_.stream(), sentences_[j], part, source_tokenizer, tokenizer));
    const std::vector<AlignedToken> tokens =
        AlignedTokens(document_.stream(), sentence, part, source_tokenizer, tokenizer);
    // The cue index (in `over`) of a stream byte.
    auto index_of = [&](size_t at) {
      return static_cast<double>(
          std::upper_bound(over.begin(), over.end(), at,
                           [&](size_t a, size_t cue) { return a < cues[cue].text.begin; }) -
          over.begin() - 1);
    };
    std::vector<std::pair<double, double>> anchors;
    size_t t = 0;
    for (const Segment& unit : units) {
      double sum = 0;
      int count = 0;
      while (t < tokens.size() && tokens[t].target.end <= unit.begin) ++t;
      for (size_t u = t; u < tokens.size() && tokens[u].target.begin < unit.end; ++u) {
        if (tokens[u].source.has_value() && tokens[u].target.begin < tokens[u].target.end) {
          sum += std::max(0.0, index_of(tokens[u].source->begin));
          ++count;
        }
      }
      if (count > 0) {
        anchors.push_back({sum / count, 1.0});
      } else {
        // By position: the cue at the same relative place in the sentence's source.
        const double middle = (unit.begin + unit.end) / 2.0 / std::max<size_t>(1, text.size());
        const size_t at = sentence.begin +
                          static_cast<size_t>(std::floor(middle * (sentence.end - sentence.begin)));
        anchors.push_back({std::max(0.0, index_of(at)), 0.5});
      }
    }
    const std::vector<size_t> first = Divide(anchors, over.size());
    for (size_t i = 0; i < over.size(); ++i) {
      if (first[i] >= units.size()) continue;
      const size_t last =
          i + 1 < over.size() && first[i + 1] < units.size() ? first[i + 1] - 1 : units.size() - 1;
      shares[over[i]].push_back(
          {j, {target.begin + units[first[i]].begin, target.begin + units[last].end}});
    }
  }

  // Cue i's text from its shares (joined by a space; by a line end where its source had one
  // between their sentences), its tags placed, wrapped.
  std::string CueText(size_t i, const std::vector<Share>& shares,
                      const std::vector<std::vector<Hypothesis>>& parts, int k,
                      const std::string& translated, const std::vector<Segment>& joined_sentences,
                      const Tokenizer& source_tokenizer, const Tokenizer& tokenizer) const {
    const SubtitleDocument::Cue& cue = document_.cues()[i];
    if (shares.empty()) {
      // Nothing translated in it (no text, or only spaces): as it was.
      const std::string& bytes = document_.bytes();
      return bytes.substr(cue.payload.begin, cue.payload.end - cue.payload.begin);
    }
    std::string text;
    std::vector<size_t> at;  // Where each share starts in `text`.
    for (size_t s = 0; s < shares.size(); ++s) {
      if (s > 0) {
        const size_t previous_end = sentences_[shares[s - 1].sentence].range.end;
        const size_t next_begin = sentences_[shares[s].sentence].range.begin;
        const bool line_end =
            std::any_of(cue.line_breaks.begin(), cue.line_breaks.end(),
                        [&](size_t p) { return p >= previous_end && p < next_begin; });
        text += line_end ? '\n' : ' ';
      }
      at.push_back(text.size());
      text.append(translated, shares[s].target.begin,
                  shares[s].target.end - shares[s].target.begin);
    }
    // A range of the joined translation as bytes of `text` (nullopt: outside every share).
    auto in_text = [&](Segment range) -> std::optional<Segment> {
      std::optional<Segment> found;
      for (size_t s = 0; s < shares.size(); ++s) {
        const Segment share = shares[s].target;
        const size_t begin = std::max(range.begin, share.begin);
        const size_t end = std::min(range.end, share.end);
        if (begin >= end) continue;
        const Segment mapped{at[s] + begin - share.begin, at[s] + end - share.begin};
        found = found.has_value() ? Segment{std::min(found->begin, mapped.begin),
                                            std::max(found->end, mapped.end)}
                                  : mapped;
      }
      return found;
    };
    // The placed forms in `text`: a share holds a form whole or none of it (DivideSentence).
    std::vector<Segment> forms;
    for (size_t s = 0; s < shares.size() && !cue.inlines.empty(); ++s) {
      const size_t j = shares[s].sentence;
      const Segment share = shares[s].target;
      for (const Segment& form : PlacedForms(document_.stream(), sentences_[j], parts[j][k],
                                             source_tokenizer, tokenizer)) {
        const size_t begin = joined_sentences[j].begin + form.begin;
        const size_t end = joined_sentences[j].begin + form.end;
        if (begin >= share.begin && end <= share.end) {
          forms.push_back({at[s] + begin - share.begin, at[s] + end - share.begin});
        }
      }
    }
    // By the alignment: over the sentences the cue's shares are of.
    std::vector<std::optional<Segment>> aligned(cue.inlines.size());
    std::vector<Segment> ranges;
    for (const SubtitleDocument::Inline& in : cue.inlines) ranges.push_back(in.range);
    if (!ranges.empty()) {
      const size_t first = shares.front().sentence, count = shares.back().sentence + 1 - first;
      std::vector<Hypothesis> cue_parts;
      for (size_t j = first; j < first + count; ++j) cue_parts.push_back(parts[j][k]);
      aligned = PlaceByAlignment(
          document_.stream(), absl::MakeConstSpan(sentences_).subspan(first, count), cue_parts,
          translated, absl::MakeConstSpan(joined_sentences).subspan(first, count), source_tokenizer,
          tokenizer, ranges);
    }
    const double source_size = std::max<size_t>(1, cue.text.end - cue.text.begin);
    auto by_position = [&](size_t source) {
      const double fraction = (source - cue.text.begin) / source_size;
      return std::min(text.size(), static_cast<size_t>(std::lround(fraction * text.size())));
    };
    std::vector<Segment> placed;
    for (size_t n = 0; n < cue.inlines.size(); ++n) {
      const Segment source = cue.inlines[n].range;
      if (source.begin == source.end) {
        // A point (a dialogue dash, a timestamp, an override, a stray end tag): at the start of
        // the share of the sentence it starts, or at the start of the word at its position.
        const std::string& stream = document_.stream();
        const auto starts = std::find_if(shares.begin(), shares.end(), [&](const Share& share) {
          const size_t begin = sentences_[share.sentence].range.begin;
          return begin >= source.begin &&
                 share.target.begin == joined_sentences[share.sentence].begin &&
                 std::all_of(stream.begin() + source.begin, stream.begin() + begin, [](char c) {
                   return absl::ascii_isspace(static_cast<unsigned char>(c));
                 });
        });
        if (starts != shares.end()) {
          placed.push_back({at[starts - shares.begin()], at[starts - shares.begin()]});
          continue;
        }
        size_t p = by_position(source.begin);
        while (p > 0 && p < text.size() &&
               !absl::ascii_isspace(static_cast<unsigned char>(text[p - 1]))) {
          --p;
        }
        placed.push_back(OutsideForms(text, {p, p}, forms));
        continue;
      }
      std::optional<Segment> range;
      if (aligned[n].has_value()) range = in_text(*aligned[n]);
      if (!range.has_value()) {
        range = OutsideForms(
            text, WidenToWords(text, {by_position(source.begin), by_position(source.end)}), forms);
      }
      placed.push_back(*range);
    }
    return document_.CueText(cue, text, placed, layout_);
  }

  SubtitleDocument document_;
  SubtitleLayout layout_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PrepareSubtitles(absl::string_view text,
                                                           SubtitleDocument::Kind kind,
                                                           const SentenceRules& rules,
                                                           const std::function<bool()>& stopped) {
  absl::StatusOr<SubtitleDocument> document =
      SubtitleDocument::Parse(std::string(text), kind, rules.subtitle_layout);
  if (!document.ok()) return document.status();
  auto subtitles =
      std::make_unique<SubtitleTextDocument>(*std::move(document), rules.subtitle_layout);
  subtitles->Split(rules, stopped);
  return subtitles;
}

}  // namespace mtserve
