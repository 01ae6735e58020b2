// How a sentence's translation through a chain of models is made from its legs (pivot.h).
#include "serving/pivot.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "base/segment.h"
#include "text/inline_placement.h"

namespace mtserve {
namespace {

// Where each of `runs`' insertions lies in the text they were put into, in their order.
std::vector<Segment> InsertedRanges(const UnknownRuns& runs) {
  std::vector<Segment> ranges;
  size_t added = 0;
  for (const UnknownRuns::Insertion& insertion : runs.insertions) {
    const size_t begin = insertion.at + added;
    ranges.push_back({begin, begin + insertion.bytes.size()});
    added += insertion.bytes.size();
  }
  return ranges;
}

// `written` (each generated token's bytes of its decoded text, TargetTokenRanges) once `runs` are
// put into that text: an unknown token put back spans its run's bytes, the others move past the
// runs put in before them.
std::vector<Segment> WithRunsPutIn(std::vector<Segment> written, const UnknownRuns& runs) {
  const std::vector<Segment> inserted = InsertedRanges(runs);
  for (size_t k = 0; k < written.size(); ++k) {
    size_t added = 0;
    for (const UnknownRuns::Insertion& insertion : runs.insertions) {
      if (insertion.at < written[k].begin ||
          (insertion.at == written[k].begin && insertion.token < k)) {
        added += insertion.bytes.size();
      }
    }
    written[k].begin += added;
    written[k].end += added;
  }
  for (size_t i = 0; i < runs.insertions.size(); ++i) {
    if (runs.insertions[i].token < written.size()) written[runs.insertions[i].token] = inserted[i];
  }
  return written;
}

// `span` less the ASCII whitespace around it, in `text`.
Segment Trimmed(absl::string_view text, Segment span) {
  while (span.begin < span.end && absl::ascii_isspace(static_cast<unsigned char>(text[span.begin])))
    ++span.begin;
  while (span.end > span.begin &&
         absl::ascii_isspace(static_cast<unsigned char>(text[span.end - 1])))
    --span.end;
  return span;
}

// The bytes of `text` each token of `previous`'s best wrote (its decoded text's, with the runs put
// in), when its alignment links them to the sentence's source tokens; empty otherwise (a sentence
// taken as its own translation, nothing in it the model could spell, has no such link).
std::vector<Segment> WrittenInBridge(const TranslationResult& previous, const Tokenizer& tokenizer,
                                     const BridgeText& text) {
  if (previous.hypotheses.empty()) return {};
  const Hypothesis& best = previous.hypotheses.front();
  if (best.alignment.empty() || best.alignment.size() != best.ids.size() || text.runs.verbatim) {
    return {};
  }
  return WithRunsPutIn(TargetTokenRanges(best.ids, best.text, tokenizer), text.runs);
}

}  // namespace

BridgeText MakeBridgeText(const TranslationResult& result, absl::string_view sentence,
                          const Tokenizer& source_tokenizer, const Tokenizer& tokenizer) {
  BridgeText bridge;
  if (result.hypotheses.empty()) return bridge;
  const Hypothesis& best = result.hypotheses.front();
  bridge.text = best.text;
  if (sentence.empty()) return bridge;
  bridge.runs = FindUnknownRuns(sentence, best.ids, best.alignment, source_tokenizer, tokenizer);
  bridge.text = WithUnknownRuns(best.text, sentence, bridge.runs);
  return bridge;
}

absl::StatusOr<std::unique_ptr<Document>> PrepareBridge(const BridgeText& bridge,
                                                        const Tokenizer& tokenizer,
                                                        int max_tokens) {
  SentenceRules rules;
  rules.tokenizer = &tokenizer;
  rules.max_tokens = max_tokens;
  absl::StatusOr<std::unique_ptr<Document>> document =
      PrepareDocument(bridge.text, DocumentFormat::kPlainText, rules);
  if (!document.ok() || bridge.runs.insertions.empty()) return document;
  const std::vector<Segment> carried = InsertedRanges(bridge.runs);
  for (SourceSentence& piece : (*document)->sentences()) {
    if (!piece.unknown) continue;
    const absl::string_view text =
        absl::string_view(bridge.text)
            .substr(piece.range.begin, piece.range.end - piece.range.begin);
    std::vector<Segment> spans;
    const std::vector<int> ids = tokenizer.EncodeSourceWithSpans(text, spans);
    bool only_carried = true;
    for (size_t i = 0; i < spans.size() && i < ids.size() && only_carried; ++i) {
      if (ids[i] != tokenizer.unk_id()) continue;
      const Segment run = Trimmed(text, spans[i]);
      if (run.begin == run.end) continue;
      const size_t begin = piece.range.begin + run.begin, end = piece.range.begin + run.end;
      only_carried = std::any_of(carried.begin(), carried.end(), [&](const Segment& c) {
        return c.begin <= begin && end <= c.end;
      });
    }
    if (only_carried) piece.unknown = false;
  }
  return document;
}

std::shared_ptr<const SentenceTerms> BridgeTerms(std::shared_ptr<const SentenceTerms> terms,
                                                 const TranslationResult& previous,
                                                 const Tokenizer& tokenizer, const BridgeText& text,
                                                 const Document& bridge,
                                                 const Tokenizer& bridge_tokenizer) {
  if (terms == nullptr) return nullptr;
  // (A run put back counts without the space it brought, as the sentence's own pieces do.)
  std::vector<Segment> written = WrittenInBridge(previous, tokenizer, text);
  for (Segment& span : written) span = Trimmed(text.text, span);
  if (written.empty() || bridge.sentences().size() != 1) return WithoutSourcePositions(terms);
  const SourceSentence& piece = bridge.sentences().front();
  std::vector<Segment> pieces;
  const std::vector<int> ids = bridge_tokenizer.EncodeSourceWithSpans(
      absl::string_view(text.text).substr(piece.range.begin, piece.range.end - piece.range.begin),
      pieces);
  if (ids != piece.ids) return WithoutSourcePositions(terms);
  for (Segment& span : pieces) {
    span.begin += piece.range.begin;
    span.end += piece.range.begin;
  }
  return WithTranslatedSourcePositions(std::move(terms), previous.hypotheses.front().alignment,
                                       written, pieces);
}

TranslationResult ComposeLegs(const TranslationResult& first, const Tokenizer& first_tokenizer,
                              const BridgeText& bridge_text, const Document& bridge,
                              TextTranslation second, const Tokenizer& second_tokenizer) {
  TranslationResult composed;
  composed.source_tokens = first.source_tokens;
  composed.hypotheses = std::move(second.hypotheses);
  if (first.hypotheses.empty()) return composed;
  const Hypothesis& best = first.hypotheses.front();
  const std::string& text = bridge_text.text;
  // Where each bridge token lies in the bridge text, in the order the second leg's alignment
  // counts them: each piece's tokens, then its </s> (empty).
  std::vector<Segment> bridge_tokens;
  for (const SourceSentence& piece : bridge.sentences()) {
    const absl::string_view piece_text =
        absl::string_view(text).substr(piece.range.begin, piece.range.end - piece.range.begin);
    for (const Segment& span : second_tokenizer.SourcePieceSpans(piece_text)) {
      bridge_tokens.push_back({piece.range.begin + span.begin, piece.range.begin + span.end});
    }
    bridge_tokens.push_back({piece.range.end, piece.range.end});
  }
  const std::vector<Segment> written = WrittenInBridge(first, first_tokenizer, bridge_text);
  const bool first_aligned = !written.empty();
  const int source_end = std::max(0, first.source_tokens - 1);  // The source's </s>.
  auto through_bridge = [&](int b) {
    if (b < 0 || static_cast<size_t>(b) >= bridge_tokens.size()) return source_end;
    const Segment span = bridge_tokens[b];
    size_t most = 0;
    int source = source_end;
    for (size_t k = 0; k < written.size(); ++k) {
      const size_t begin = std::max(span.begin, written[k].begin);
      const size_t end = std::min(span.end, written[k].end);
      if (end > begin && end - begin > most) {
        most = end - begin;
        source = best.alignment[k];
      }
    }
    return source;
  };
  for (Hypothesis& h : composed.hypotheses) {
    h.log_prob += best.log_prob;
    h.score += best.score;
    h.truncated += best.truncated;
    if (!first_aligned || h.alignment.size() != h.ids.size()) {
      h.alignment.clear();
      continue;
    }
    for (int& position : h.alignment) position = through_bridge(position);
  }
  return composed;
}

}  // namespace mtserve
