#include "text/unknown_runs.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

bool IsSpace(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }

// Whether `text` (UTF-8) holds a letter or a digit.
bool HasLetterOrDigit(absl::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    if (c >= 0 && u_isalnum(c)) return true;
  }
  return false;
}

// `span` of `sentence` less the ASCII whitespace around it.
Segment Trimmed(absl::string_view sentence, Segment span) {
  while (span.begin < span.end && IsSpace(sentence[span.begin])) ++span.begin;
  while (span.end > span.begin && IsSpace(sentence[span.end - 1])) --span.end;
  return span;
}

}  // namespace

bool HasUnknown(absl::Span<const int> ids, const Tokenizer& tokenizer) {
  return std::find(ids.begin(), ids.end(), tokenizer.unk_id()) != ids.end();
}

UnknownRuns FindUnknownRuns(absl::string_view sentence, absl::Span<const int> ids,
                            absl::Span<const int> alignment, const Tokenizer& source_tokenizer,
                            const Tokenizer& tokenizer, const SentenceTerms* terms,
                            absl::Span<const PlacedTerm> placed) {
  UnknownRuns runs;
  std::vector<Segment> spans;
  const std::vector<int> source = source_tokenizer.EncodeSourceWithSpans(sentence, spans);
  if (source.size() != spans.size() + 1) return runs;  // Never seen: pieces and ids in step.
  if (terms == nullptr) placed = {};
  std::vector<size_t> unknown;  // Source pieces that are runs of unknown characters.
  bool translatable = false;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Segment span = Trimmed(sentence, spans[i]);
    const absl::string_view bytes = sentence.substr(span.begin, span.end - span.begin);
    if (source[i] != source_tokenizer.unk_id()) {
      translatable = translatable || HasLetterOrDigit(bytes);
    } else if (span.begin < span.end) {
      unknown.push_back(i);
    }
  }
  if (unknown.empty() && placed.empty()) return runs;
  if (!translatable && !unknown.empty()) {
    runs.verbatim = true;
    return runs;
  }
  const std::string decoded = tokenizer.DecodeTarget(ids);
  // Where the ids before token `k` end in `decoded`: what they decode to (a prefix of the whole;
  // the common part if not).
  auto position = [&](size_t k) {
    const std::string before = tokenizer.DecodeTarget(ids.subspan(0, k));
    size_t at = 0;
    while (at < before.size() && at < decoded.size() && before[at] == decoded[at]) ++at;
    return at;
  };
  std::vector<bool> used(spans.size(), false);
  std::vector<bool> in_term(ids.size(), false);
  for (const PlacedTerm& p : placed) {
    const TermForm* form = terms->Placed(p);
    if (form == nullptr || p.begin < 0 || p.end > static_cast<int>(ids.size()) ||
        p.begin >= p.end) {
      continue;
    }
    size_t at = position(p.begin), end = std::max(at, position(p.end));
    while (at < end && IsSpace(decoded[at])) ++at;
    while (end > at && IsSpace(decoded[end - 1])) --end;
    UnknownRuns::Insertion& insertion = runs.insertions.emplace_back();
    insertion.at = at;
    insertion.erase = end - at;
    insertion.bytes = form->text;
    insertion.term = true;
    insertion.token = p.begin;
    insertion.token_end = p.end;
    for (int k = p.begin; k < p.end; ++k) in_term[k] = true;
    // The source's unknown runs the term covers are in the translation through it.
    const Segment covered = terms->terms[p.term].source;
    for (size_t i : unknown) {
      const Segment span = Trimmed(sentence, spans[i]);
      if (span.begin >= covered.begin && span.end <= covered.end) used[i] = true;
    }
  }
  if (alignment.size() == ids.size()) {
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] != tokenizer.unk_id() || in_term[k]) continue;
      const int s = alignment[k];
      if (s < 0 || static_cast<size_t>(s) >= spans.size()) continue;
      const Segment span = Trimmed(sentence, spans[s]);
      if (span.begin >= span.end) continue;
      const size_t at = position(k);
      UnknownRuns::Insertion& insertion = runs.insertions.emplace_back();
      insertion.at = at;
      insertion.token = k;
      insertion.token_end = k + 1;
      // The spaces the source had around the run, where the translation has none.
      const bool space_before = span.begin > 0 && IsSpace(sentence[span.begin - 1]) && at > 0 &&
                                !IsSpace(decoded[at - 1]);
      const bool space_after = span.end < sentence.size() && IsSpace(sentence[span.end]) &&
                               at < decoded.size() && !IsSpace(decoded[at]);
      insertion.bytes =
          absl::StrCat(space_before ? " " : "", sentence.substr(span.begin, span.end - span.begin),
                       space_after ? " " : "");
      used[s] = true;
    }
  }
  std::stable_sort(
      runs.insertions.begin(), runs.insertions.end(),
      [](const auto& a, const auto& b) { return a.at != b.at ? a.at < b.at : a.token < b.token; });
  for (size_t i : unknown) {
    if (!used[i]) runs.dropped.push_back(Trimmed(sentence, spans[i]));
  }
  return runs;
}

std::string WithUnknownRuns(absl::string_view decoded, absl::string_view sentence,
                            const UnknownRuns& runs, std::vector<Segment>* placed_terms) {
  if (placed_terms != nullptr) placed_terms->clear();
  if (runs.verbatim) return std::string(sentence);
  std::string out;
  size_t copied = 0;
  for (const UnknownRuns::Insertion& insertion : runs.insertions) {
    const size_t at = std::max(copied, std::min(insertion.at, decoded.size()));
    absl::StrAppend(&out, decoded.substr(copied, at - copied));
    if (insertion.term && placed_terms != nullptr) {
      placed_terms->push_back({out.size(), out.size() + insertion.bytes.size()});
    }
    out += insertion.bytes;
    copied = std::min(at + insertion.erase, decoded.size());
  }
  absl::StrAppend(&out, decoded.substr(copied));
  return out;
}

std::vector<Segment> PlacedForms(absl::string_view text, const SourceSentence& sentence,
                                 const Hypothesis& part, const Tokenizer& source_tokenizer,
                                 const Tokenizer& tokenizer) {
  std::vector<Segment> placed;
  const SentenceTerms* terms = sentence.terms.get();
  if (terms == nullptr || part.terms.empty()) return placed;
  const absl::string_view source =
      text.substr(sentence.range.begin, sentence.range.end - sentence.range.begin);
  const UnknownRuns runs = FindUnknownRuns(source, part.ids, part.alignment, source_tokenizer,
                                           tokenizer, terms, part.terms);
  if (WithUnknownRuns(tokenizer.DecodeTarget(part.ids), source, runs, &placed) != part.text) {
    placed.clear();
  }
  return placed;
}

size_t ShiftedByUnknownRuns(const UnknownRuns& runs, size_t position, bool after_insertion_at) {
  int64_t shifted = static_cast<int64_t>(position);
  for (const UnknownRuns::Insertion& insertion : runs.insertions) {
    const size_t end = insertion.at + insertion.erase;
    const int64_t grown =
        static_cast<int64_t>(insertion.bytes.size()) - static_cast<int64_t>(insertion.erase);
    if (insertion.erase == 0) {
      if (insertion.at < position || (insertion.at == position && after_insertion_at)) {
        shifted += grown;
      }
    } else if (position >= end) {
      shifted += grown;
    } else if (position > insertion.at) {
      // Inside replaced bytes: as far into the form, within it.
      const size_t into = std::min(position - insertion.at, insertion.bytes.size());
      shifted += static_cast<int64_t>(into) - static_cast<int64_t>(position - insertion.at);
    }
  }
  return static_cast<size_t>(std::max<int64_t>(shifted, 0));
}

void RestoreUnknownRuns(absl::string_view text, absl::Span<const SourceSentence> sentences,
                        std::vector<TranslationResult>& results, int num_hypotheses,
                        const Tokenizer& source_tokenizer, const Tokenizer& tokenizer,
                        std::vector<std::vector<Segment>>& dropped) {
  dropped.resize(std::max<size_t>(dropped.size(), num_hypotheses));
  for (size_t j = 0; j < sentences.size() && j < results.size(); ++j) {
    if (!sentences[j].unknown && sentences[j].terms == nullptr) continue;
    const Segment range = sentences[j].range;
    const absl::string_view sentence = text.substr(range.begin, range.end - range.begin);
    std::vector<Hypothesis>& hypotheses = results[j].hypotheses;
    for (size_t k = 0; k < hypotheses.size(); ++k) {
      Hypothesis& h = hypotheses[k];
      const UnknownRuns runs = FindUnknownRuns(sentence, h.ids, h.alignment, source_tokenizer,
                                               tokenizer, sentences[j].terms.get(), h.terms);
      h.text = WithUnknownRuns(h.text, sentence, runs);
      if (k >= dropped.size()) continue;
      for (const Segment& run : runs.dropped) {
        dropped[k].push_back({range.begin + run.begin, range.begin + run.end});
      }
    }
  }
}

}  // namespace mtserve
