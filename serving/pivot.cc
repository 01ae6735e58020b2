#include "serving/pivot.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/segment.h"
#include "text/inline_placement.h"

namespace mtserve {
namespace {

const std::string& Empty() {
  static const std::string* const empty = new std::string();
  return *empty;
}

}  // namespace

const std::string& BridgeText(const TranslationResult& result) {
  return result.hypotheses.empty() ? Empty() : result.hypotheses.front().text;
}

absl::StatusOr<std::unique_ptr<Document>> PrepareBridge(const std::string& bridge,
                                                        const Tokenizer& tokenizer,
                                                        int max_tokens) {
  SentenceRules rules;
  rules.tokenizer = &tokenizer;
  rules.max_tokens = max_tokens;
  return PrepareDocument(bridge, DocumentFormat::kPlainText, rules);
}

TranslationResult ComposeLegs(const TranslationResult& first, const Tokenizer& first_tokenizer,
                              const Document& bridge, TextTranslation second,
                              const Tokenizer& second_tokenizer) {
  TranslationResult composed;
  composed.source_tokens = first.source_tokens;
  composed.hypotheses = std::move(second.hypotheses);
  if (first.hypotheses.empty()) return composed;
  const Hypothesis& best = first.hypotheses.front();
  const std::string& text = best.text;
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
  const bool first_aligned = !best.alignment.empty() && best.alignment.size() == best.ids.size();
  const std::vector<Segment> written =
      first_aligned ? TargetTokenRanges(best.ids, text, first_tokenizer) : std::vector<Segment>();
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
