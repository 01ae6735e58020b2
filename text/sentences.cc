#include "text/sentences.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "text/cut_to_token_limit.h"
#include "text/unknown_runs.h"

namespace mtserve {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// `text` less its leading and trailing ASCII whitespace, as a range.
Segment Trimmed(absl::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  return {begin, end};
}

// Attaches `terms`' occurrences in `piece` of `text` to `sentence`, with the source tokens of
// each (`tokenizer` encoded the sentence's ids).
absl::Status AttachTerms(absl::string_view text, const TermMatcher* terms,
                         absl::Span<const Segment> kept, const Tokenizer& tokenizer,
                         SourceSentence& sentence) {
  if (terms == nullptr) return absl::OkStatus();
  absl::StatusOr<std::shared_ptr<const SentenceTerms>> found =
      terms->Match(text, sentence.range, kept);
  if (!found.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the sentence at bytes ", sentence.range.begin,
                                                   "-", sentence.range.end, " ",
                                                   found.status().message()));
  }
  sentence.terms = *std::move(found);
  if (sentence.terms != nullptr) {
    std::vector<Segment> pieces;
    const std::vector<int> ids = tokenizer.EncodeSourceWithSpans(
        text.substr(sentence.range.begin, sentence.range.end - sentence.range.begin), pieces);
    // (The same encoding as the sentence's ids: otherwise the positions stay unknown.)
    if (ids == sentence.ids) sentence.terms = WithSourcePositions(sentence.terms, pieces);
  }
  return absl::OkStatus();
}

void AppendPieces(absl::string_view text, Segment sentence, const Tokenizer& tokenizer,
                  int max_tokens, absl::Span<const Segment> whole,
                  const std::function<bool()>& stopped, std::vector<SourceSentence>& out) {
  auto count = [&](absl::string_view piece) {
    return static_cast<int>(tokenizer.EncodeSource(piece).size());
  };
  for (const Segment& piece : CutToTokenLimit(text, sentence, max_tokens, count, stopped, whole)) {
    std::vector<int> ids =
        tokenizer.EncodeSource(text.substr(piece.begin, piece.end - piece.begin));
    const bool unknown = HasUnknown(ids, tokenizer);
    out.push_back({piece, std::move(ids), unknown});
  }
}

// `ranges` (in order) with those an occurrence of `whole` (in order) crosses joined into one.
std::vector<Segment> JoinAround(std::vector<Segment> ranges, absl::Span<const Segment> whole) {
  if (whole.empty() || ranges.size() < 2) return ranges;
  std::vector<bool> join_next(ranges.size(), false);
  for (const Segment& o : whole) {
    // The ranges it overlaps: from the first that ends after its start to the last that begins
    // before its end.
    const size_t first = std::partition_point(ranges.begin(), ranges.end(),
                                              [&](const Segment& r) { return r.end <= o.begin; }) -
                         ranges.begin();
    const size_t past = std::partition_point(ranges.begin(), ranges.end(),
                                             [&](const Segment& r) { return r.begin < o.end; }) -
                        ranges.begin();
    for (size_t i = first; i + 1 < past; ++i) join_next[i] = true;
  }
  std::vector<Segment> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0 && join_next[i - 1]) {
      out.back().end = ranges[i].end;
    } else {
      out.push_back(ranges[i]);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SentenceSplitter>> SplitterForLanguage(absl::string_view language) {
  absl::StatusOr<std::unique_ptr<SentenceSplitter>> splitter = SentenceSplitter::Create(language);
  return splitter.ok() ? std::move(splitter) : SentenceSplitter::Create("");
}

std::vector<SourceSentence> SplitIntoSentences(absl::string_view text,
                                               const SentenceSplitter* splitter,
                                               const Tokenizer& tokenizer, int max_tokens,
                                               const std::function<bool()>& stopped) {
  // Without terms nothing can fail.
  return *SplitIntoSentences(text, splitter, tokenizer, max_tokens, nullptr, {}, stopped);
}

absl::StatusOr<std::vector<SourceSentence>> SplitIntoSentences(
    absl::string_view text, const SentenceSplitter* splitter, const Tokenizer& tokenizer,
    int max_tokens, const TermMatcher* terms, absl::Span<const Segment> kept,
    const std::function<bool()>& stopped) {
  std::vector<Segment> ranges;
  if (splitter != nullptr) {
    ranges = splitter->Split(text);
  } else if (const Segment whole = Trimmed(text); whole.begin < whole.end) {
    ranges.push_back(whole);
  }
  // Where a term or kept span occurs: never split or cut inside.
  std::vector<Segment> whole;
  if (terms != nullptr && !ranges.empty()) {
    whole = terms->Find(text, {ranges.front().begin, ranges.back().end}, kept);
    ranges = JoinAround(std::move(ranges), whole);
  }
  std::vector<SourceSentence> sentences;
  for (const Segment& range : ranges) {
    if (stopped && stopped()) break;
    const size_t first = sentences.size();
    bool fits = false;
    if (MayFitTokens(range.end - range.begin, max_tokens)) {
      std::vector<int> ids =
          tokenizer.EncodeSource(text.substr(range.begin, range.end - range.begin));
      if (ids.size() <= static_cast<size_t>(max_tokens)) {
        const bool unknown = HasUnknown(ids, tokenizer);
        sentences.push_back({range, std::move(ids), unknown});
        fits = true;
      }
    }
    if (!fits) AppendPieces(text, range, tokenizer, max_tokens, whole, stopped, sentences);
    for (size_t j = first; j < sentences.size(); ++j) {
      if (absl::Status s = AttachTerms(text, terms, kept, tokenizer, sentences[j]); !s.ok())
        return s;
    }
  }
  return sentences;
}

void AppendPart(const Hypothesis& part, Hypothesis& out) {
  const int offset = static_cast<int>(out.ids.size());
  for (PlacedTerm term : part.terms) {
    term.begin += offset;
    term.end += offset;
    out.terms.push_back(term);
  }
  out.ids.insert(out.ids.end(), part.ids.begin(), part.ids.end());
  out.token_log_probs.insert(out.token_log_probs.end(), part.token_log_probs.begin(),
                             part.token_log_probs.end());
  out.log_prob += part.log_prob;
  out.score += part.score;
  out.truncated += part.truncated;
}

TextTranslation JoinSentences(absl::string_view text, absl::Span<const SourceSentence> sentences,
                              std::vector<TranslationResult> results, int num_hypotheses) {
  TextTranslation joined;
  for (const TranslationResult& r : results) joined.source_tokens += r.source_tokens;
  for (const SourceSentence& s : sentences) joined.sentences.push_back(s.range);
  if (sentences.size() == 1 && sentences[0].range.begin == 0 &&
      sentences[0].range.end == text.size()) {
    joined.hypotheses = std::move(results[0].hypotheses);
    for (const Hypothesis& h : joined.hypotheses) {
      joined.hypothesis_sentences.push_back({{0, h.text.size()}});
    }
    return joined;
  }
  joined.hypotheses.resize(num_hypotheses);
  joined.hypothesis_sentences.resize(num_hypotheses);
  for (int h = 0; h < num_hypotheses; ++h) {
    Hypothesis& out = joined.hypotheses[h];
    size_t copied = 0;      // Bytes of `text` up to which the layout has been copied.
    int source_offset = 0;  // Source tokens of the sentences before this one.
    for (size_t i = 0; i < sentences.size(); ++i) {
      // A sentence has num_hypotheses hypotheses (the engine's contract); one with fewer (never
      // seen) gives its last again rather than reading past them.
      if (results[i].hypotheses.empty()) continue;
      const Hypothesis& part =
          results[i].hypotheses[std::min<size_t>(h, results[i].hypotheses.size() - 1)];
      absl::StrAppend(&out.text, text.substr(copied, sentences[i].range.begin - copied));
      joined.hypothesis_sentences[h].push_back(
          {out.text.size(), out.text.size() + part.text.size()});
      out.text += part.text;
      copied = sentences[i].range.end;
      AppendPart(part, out);
      // Each sentence's alignment indexes its own source ids: moved past those before it.
      for (int position : part.alignment) out.alignment.push_back(source_offset + position);
      source_offset += results[i].source_tokens;
    }
    absl::StrAppend(&out.text, text.substr(copied));
  }
  return joined;
}

}  // namespace mtserve
