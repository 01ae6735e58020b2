#include "text/inline_placement.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "text/unknown_runs.h"
#include "text/words.h"

namespace mtserve {
namespace {

constexpr absl::string_view kWordStart = "\xE2\x96\x81";  // SentencePiece's "▁".

// The bytes of `sentence` each of its source pieces stands for (its </s> last, with none), or
// empty if the pieces cannot be found in it in order (normalisation changed the characters).
std::optional<std::vector<Segment>> SourcePieceRanges(absl::string_view sentence,
                                                      const Tokenizer& tokenizer) {
  std::vector<Segment> ranges;
  size_t position = 0;
  for (std::string piece : tokenizer.SourcePieces(sentence)) {
    bool word_start = false;
    while (absl::StartsWith(piece, kWordStart)) {
      piece.erase(0, kWordStart.size());
      word_start = true;
    }
    if (word_start) {
      while (position < sentence.size() &&
             absl::ascii_isspace(static_cast<unsigned char>(sentence[position]))) {
        ++position;
      }
    }
    if (sentence.substr(position, piece.size()) != piece) return std::nullopt;
    ranges.push_back({position, position + piece.size()});
    position += piece.size();
  }
  ranges.push_back({position, position});  // </s>
  return ranges;
}

}  // namespace

std::vector<Segment> TargetTokenRanges(const std::vector<int>& ids, absl::string_view text,
                                       const Tokenizer& tokenizer) {
  std::vector<Segment> ranges;
  size_t previous = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    const std::string prefix = tokenizer.DecodeTarget(absl::MakeConstSpan(ids.data(), k + 1));
    size_t end = std::min(prefix.size(), text.size());
    if (text.substr(0, end) != absl::string_view(prefix).substr(0, end)) end = previous;
    size_t begin = previous;
    while (begin < end && absl::ascii_isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    ranges.push_back({begin, std::max(begin, end)});
    previous = std::max(previous, end);
  }
  return ranges;
}

std::vector<AlignedToken> AlignedTokens(absl::string_view text, Segment sentence,
                                        const Hypothesis& part, const Tokenizer& source_tokenizer,
                                        const Tokenizer& tokenizer) {
  std::vector<AlignedToken> out;
  if (part.alignment.size() != part.ids.size()) return out;
  const std::optional<std::vector<Segment>> source = SourcePieceRanges(
      text.substr(sentence.begin, sentence.end - sentence.begin), source_tokenizer);
  if (!source.has_value() || tokenizer.DecodeTarget(part.ids) != part.text) return out;
  const std::vector<Segment> target = TargetTokenRanges(part.ids, part.text, tokenizer);
  for (size_t k = 0; k < part.ids.size(); ++k) {
    AlignedToken& token = out.emplace_back();
    token.target = target[k];
    const int s = part.alignment[k];
    if (s < 0 || static_cast<size_t>(s) >= source->size()) continue;
    const Segment piece = (*source)[s];
    if (piece.begin < piece.end) {
      token.source = Segment{sentence.begin + piece.begin, sentence.begin + piece.end};
    }
  }
  return out;
}

std::vector<std::optional<Segment>> PlaceByAlignment(
    absl::string_view text, absl::Span<const SourceSentence> sentences,
    absl::Span<const Hypothesis> parts, absl::string_view joined,
    absl::Span<const Segment> joined_sentences, const Tokenizer& source_tokenizer,
    const Tokenizer& tokenizer, absl::Span<const Segment> ranges) {
  std::vector<std::optional<Segment>> out(ranges.size());
  if (parts.size() != sentences.size() || joined_sentences.size() != sentences.size()) return out;
  // Per range: the target bytes found so far.
  std::vector<Segment> found(ranges.size(), Segment{text.size() + joined.size(), 0});
  for (size_t j = 0; j < sentences.size(); ++j) {
    const Hypothesis& part = parts[j];
    // Without the alignment only placed terms say where their source went.
    const bool aligned = part.alignment.size() == part.ids.size();
    if (!aligned && (sentences[j].terms == nullptr || part.terms.empty())) continue;
    const Segment sentence = sentences[j].range;
    const absl::string_view sentence_text =
        text.substr(sentence.begin, sentence.end - sentence.begin);
    const std::optional<std::vector<Segment>> source =
        SourcePieceRanges(sentence_text, source_tokenizer);
    if (!source.has_value() && part.terms.empty()) continue;
    // A text with runs of unknown characters put back (text/unknown_runs.h): tokens are found in
    // the decoded text, then moved past the runs put in before them.
    const std::string decoded = tokenizer.DecodeTarget(part.ids);
    std::vector<Segment> target = TargetTokenRanges(part.ids, decoded, tokenizer);
    if (decoded != part.text || (sentences[j].terms != nullptr && !part.terms.empty())) {
      const UnknownRuns runs =
          FindUnknownRuns(sentence_text, part.ids, part.alignment, source_tokenizer, tokenizer,
                          sentences[j].terms.get(), part.terms);
      if (runs.verbatim) continue;
      for (Segment& t : target) {
        t = {ShiftedByUnknownRuns(runs, t.begin, true), ShiftedByUnknownRuns(runs, t.end, false)};
        t.end = std::max(t.end, t.begin);
      }
      // The tokens of a run or a placed term stand for all of its bytes.
      int64_t shift = 0;
      for (const UnknownRuns::Insertion& insertion : runs.insertions) {
        const size_t at = static_cast<size_t>(static_cast<int64_t>(insertion.at) + shift);
        for (size_t k = insertion.token; k < insertion.token_end && k < target.size(); ++k) {
          target[k] = {at, at + insertion.bytes.size()};
        }
        shift +=
            static_cast<int64_t>(insertion.bytes.size()) - static_cast<int64_t>(insertion.erase);
      }
    }
    // The source bytes (of the sentence) each token stands for: a placed term's tokens its
    // occurrence, whatever the alignment says; other tokens the piece they are aligned to, unless
    // that piece is in a placed term's occurrence (the term's own tokens stand for it).
    std::vector<std::optional<Segment>> stands_for(part.ids.size());
    std::vector<Segment> occurrences;
    const SentenceTerms* terms = sentences[j].terms.get();
    if (terms != nullptr) {
      for (const PlacedTerm& p : part.terms) {
        if (terms->Placed(p) == nullptr || p.begin < 0 || p.end > static_cast<int>(part.ids.size()))
          continue;
        const Segment occurrence = terms->terms[p.term].source;
        occurrences.push_back(occurrence);
        for (int k = p.begin; k < p.end; ++k) stands_for[k] = occurrence;
      }
    }
    for (size_t k = 0; k < part.ids.size() && aligned && source.has_value(); ++k) {
      if (stands_for[k].has_value()) continue;
      const int s = part.alignment[k];
      if (s < 0 || static_cast<size_t>(s) >= source->size()) continue;
      const Segment piece = (*source)[s];
      if (std::none_of(occurrences.begin(), occurrences.end(), [&](const Segment& o) {
            return piece.begin < o.end && o.begin < piece.end;
          })) {
        stands_for[k] = piece;
      }
    }
    const size_t target_offset = joined_sentences[j].begin;
    for (size_t r = 0; r < ranges.size(); ++r) {
      for (size_t k = 0; k < part.ids.size(); ++k) {
        if (!stands_for[k].has_value()) continue;
        const size_t piece_begin = sentence.begin + stands_for[k]->begin;
        const size_t piece_end = sentence.begin + stands_for[k]->end;
        if (piece_begin >= piece_end || piece_end <= ranges[r].begin ||
            piece_begin >= ranges[r].end || target[k].begin >= target[k].end) {
          continue;
        }
        found[r].begin = std::min(found[r].begin, target_offset + target[k].begin);
        found[r].end = std::max(found[r].end, target_offset + target[k].end);
      }
    }
  }
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (found[r].begin < found[r].end) out[r] = WidenToWords(joined, found[r]);
  }
  return out;
}

}  // namespace mtserve
